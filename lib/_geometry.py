r"""Shared machinery of :mod:`lib.maxaffine` and :mod:`lib.lookup` (private): input checks of
points, centres and affine pieces, scores computed relative to a reference far from the origin, and
evaluation in chunks of bounded memory.

Scores far from the origin. For centres far from the origin, :math:`2c_i^\top x - \|c_i\|^2`
cancels catastrophically in float64 (centres ``1e7 + 0.025`` and ``1e7 + 0.075`` and the point
``1e7 + 0.035`` would go to the far cell). Arg-max and softmax do not change when a per-point
constant is subtracted, so every score and distance is computed relative to a reference: the
Voronoi functions and layers translate points and centres by the midpoint of the centres' box
(:func:`far_reference`, :func:`translate`) when that midpoint lies more than :data:`FAR_FACTOR`
box sides from the origin; the functions taking pieces ``(A, b)`` subtract the scores of the
pieces' midpoint (:func:`relative_pieces`) when the scores' size exceeds :data:`FAR_FACTOR` times
their spread. Inputs nearer the origin (all of the book's) are scored exactly as written.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ._validate import as_float_array, finite_real, positive_int

#: Points scored at once (fewer when a chunk's ``(points, N)`` scores would exceed
#: :data:`MAX_MATRIX_ENTRIES`).
CHUNK = 2048


#: Largest float64 matrix one evaluation step holds (``2**27`` entries, 1 GiB): the scores of a
#: chunk, the permutations of :func:`trend_test`.
MAX_MATRIX_ENTRIES = 2**27


#: Scores are computed relative to a reference when the inputs lie more than this many times
#: their own spread from the origin (see the module docstring).
FAR_FACTOR = 16.0


def midpoints(m: int, low: float, high: float) -> tuple[np.ndarray, float]:
    """The midpoints of the ``m`` equal cells of ``[low, high]``, float64 ``(m,)``, and the cell
    width.

    The one computation of grid midpoints in ``lib``: :func:`lib.approximation.cell_representatives`
    (K&S's quantizer, Chapter 4) and :func:`lib.maxaffine.grid_centres` (LHSL's grid, Chapters 5
    and 6) both use it.

    Raises:
        ValueError: as :func:`grid_step`.
    """
    m, low, high, h = grid_step(m, low, high)
    return low + (np.arange(m) + 0.5) * h, h


def grid_step(m: int, low: float, high: float) -> tuple[int, float, float, float]:
    """``(m, low, high, h)`` checked, with the cell width ``h = (high - low) / m``.

    The one check of a grid's arguments: :func:`midpoints` and the quantizer of
    :mod:`lib.approximation` use it.

    Raises:
        ValueError: for ``m < 1`` or ``m`` above :data:`MAX_MATRIX_ENTRIES` (a grid line or a
            midpoint per cell would not fit one step's memory), non-finite bounds, or
            ``high <= low`` (or a width that overflows).
    """
    m = positive_int("m", m, maximum=MAX_MATRIX_ENTRIES)
    low, high = finite_real("low", low), finite_real("high", high)
    if not high > low or not math.isfinite(high - low):
        raise ValueError(f"high must exceed low by a finite amount, got low={low}, high={high}")
    return m, low, high, (high - low) / m


def check_affine(A, b) -> tuple[np.ndarray, np.ndarray]:
    A = as_float_array("A", A, min_ndim=2)
    if A.ndim != 2:
        raise ValueError(f"A must have shape (N, D), got {A.shape}")
    b = as_float_array("b", b)
    if b.shape != (A.shape[0],):
        raise ValueError(f"b must have shape ({A.shape[0]},) to match A {A.shape}, got {b.shape}")
    return A, b


def check_points(x, D: int) -> np.ndarray:
    x = as_float_array("x", x)
    if x.shape[-1] != D:
        raise ValueError(f"x must have shape (..., {D}) to match A, got {x.shape}")
    return x


def check_centres(centres) -> np.ndarray:
    c = as_float_array("centres", centres, min_ndim=2)
    if c.ndim != 2:
        raise ValueError(f"centres must have shape (N, D), got {c.shape}")
    return c


def bounding_box(M: np.ndarray) -> tuple[np.ndarray, float]:
    """Midpoint of the bounding box of the rows of ``M`` (halved first: no overflow) and its largest
    side."""
    lo, hi = M.min(axis=0), M.max(axis=0)
    with np.errstate(over="ignore", invalid="ignore"):
        return lo / 2 + hi / 2, float(np.max(hi - lo))


def far_reference(c: np.ndarray) -> np.ndarray | None:
    """The translation for Voronoi scores of centres ``c`` ``(N, D)``, or None.

    The midpoint of the centres' box when it lies more than :data:`FAR_FACTOR` times the box's
    largest side from the origin (in the max norm), else None: centres near the origin are
    scored as written.
    """
    mid, extent = bounding_box(c)
    far = float(np.abs(mid).max())
    return mid if math.isfinite(far) and far > FAR_FACTOR * extent else None


def translate(
    x: np.ndarray, c: np.ndarray, ref: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    return (x, c) if ref is None else (x - ref, c - ref)


def relative_pieces(x: np.ndarray, A: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pieces whose scores differ from ``(A, b)``'s by a per-point constant, and do not cancel.

    With ``(a_ref, b_ref)`` the midpoints of the boxes of the rows of ``A`` and of ``b``, the
    scores' size is about ``|a_ref|_1 max|x| + |b_ref|`` and their spread about
    ``D side(A) max|x| + side(b)``; when the size exceeds :data:`FAR_FACTOR` times the spread,
    ``(A - a_ref, b - b_ref)`` is returned (their scores are ``y_i(x) - a_ref^T x - b_ref``),
    otherwise ``(A, b)`` unchanged.
    """
    a_ref, a_side = bounding_box(A)
    b_ref, b_side = bounding_box(b[:, None])
    xmax = float(np.abs(x).max()) if x.size else 0.0
    with np.errstate(over="ignore", invalid="ignore"):
        size = float(np.abs(a_ref).sum()) * xmax + abs(float(b_ref[0]))
        spread = a_side * A.shape[1] * xmax + b_side
    if math.isfinite(size) and math.isfinite(spread) and size > FAR_FACTOR * spread:
        return A - a_ref, b - b_ref
    return A, b


def chunked(x: np.ndarray, fn: Callable[[np.ndarray], np.ndarray], width: int = 1) -> np.ndarray:
    """Apply ``fn`` to ``x`` flattened to ``(P, D)`` in chunks; restore the leading shape.

    A chunk holds :data:`CHUNK` points, fewer when its ``(points, width)`` scores would exceed
    :data:`MAX_MATRIX_ENTRIES`. Raises ValueError when a result is not finite (scores or
    ``beta`` times scores overflowing float64).
    """
    flat = x.reshape(-1, x.shape[-1])
    rows = max(1, min(CHUNK, MAX_MATRIX_ENTRIES // max(1, width)))
    with np.errstate(over="ignore", invalid="ignore"):
        out = np.concatenate([fn(flat[i : i + rows]) for i in range(0, len(flat), rows)])
    if not np.isfinite(out).all():
        raise ValueError(
            "the scores overflow float64 (NaN or inf); rescale x, the affine pieces, beta or the "
            "bandwidth"
        )
    return out.reshape(x.shape[:-1] + out.shape[1:])


def check_beta(beta) -> float:
    return finite_real("beta", beta, minimum=0.0, strict=True)


def check_values(name: str, values, n: int) -> np.ndarray:
    v = as_float_array(name, values)
    if v.shape[0] != n:
        raise ValueError(f"{name} must have one row per centre ({n}), got shape {v.shape}")
    return v
