r"""Shared machinery of :mod:`lib.maxaffine` and :mod:`lib.lookup` (private): input guards of
points, centres and affine pieces, scores computed relative to a reference far from the origin, and
evaluation in chunks of bounded memory.

Scores far from the origin. For centres far from the origin, :math:`2c_i^\top x - \|c_i\|^2`
cancels catastrophically in float64 (centres ``1e7 + 0.025`` and ``1e7 + 0.075`` and the point
``1e7 + 0.035`` would go to the far cell). Arg-max and softmax do not change when a per-point
constant is subtracted, so no function here needs the scores themselves, only their differences,
and each computes those without cancellation, point by point, wherever the points and the other
centres or pieces lie (a translation by one reference for the whole input would fail as soon as
one centre lies elsewhere):

* the Voronoi closed forms work from squared distances :math:`\|x - c_i\|^2` computed from
  explicit differences (:func:`sq_distances`);
* the functions taking pieces ``(A, b)`` score each point relative to its own top piece
  :math:`k`, :math:`(a_i - a_k)^\top x + (b_i - b_k)`, with the differences of the pieces formed
  first (:func:`scores_from_top`);
* the literal layers of :mod:`lib.lookup` compute what a layer computes, translated by the
  midpoint of the centres' box when that lies far away (:func:`far_reference`), and refuse points
  whose float64 output their own rounding bound cannot vouch for.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import torch
from numpy.typing import ArrayLike

from ._validate import as_float_array, finite_real, positive_int

#: Points scored at once (fewer when a chunk's ``(points, N)`` scores would exceed
#: :data:`MAX_MATRIX_ENTRIES`).
CHUNK = 2048


#: Entries of the largest score matrix one chunk of :func:`chunked` builds (``2**22``, 32 MiB of
#: float64): with a lookup's few temporaries of that size, a chunk's working memory stays near
#: 200 MB, so that every page runs within the 1 GB Binder guarantees (``make bench`` measures
#: each page's peak). Smaller chunks give the same numbers: each point's row is computed alone.
CHUNK_ENTRIES = 2**22


#: Largest float64 matrix one evaluation step holds (``2**27`` entries, 1 GiB), e.g. the scores of a
#: chunk, the permutations of :func:`trend_test`.
MAX_MATRIX_ENTRIES = 2**27


#: The literal layers translate by the centres' midpoint, and :func:`scores_from_top` takes its
#: first guess relative to the pieces' midpoint, when the inputs lie more than this many times
#: their own spread from the origin (see the module docstring).
FAR_FACTOR = 16.0


def midpoints(m: int, low: float, high: float) -> tuple[np.ndarray, float]:
    """The midpoints of the ``m`` equal cells of ``[low, high]``, float64 ``(m,)``, and the cell
    width.

    The one computation of grid midpoints in ``lib``: :func:`lib.quantize.cell_representatives`
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


def as_affine(A: ArrayLike, b: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    A = as_float_array("A", A, min_ndim=2)
    if A.ndim != 2:
        raise ValueError(f"A must have shape (N, D), got {A.shape}")
    b = as_float_array("b", b)
    if b.shape != (A.shape[0],):
        raise ValueError(f"b must have shape ({A.shape[0]},) to match A {A.shape}, got {b.shape}")
    return A, b


def as_points(x: ArrayLike, D: int) -> np.ndarray:
    x = as_float_array("x", x)
    if x.shape[-1] != D:
        raise ValueError(f"x must have shape (..., {D}) to match A, got {x.shape}")
    return x


def as_centres(centres: ArrayLike) -> np.ndarray:
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


#: Distances outside ``[DISTANCE_TINY, DISTANCE_HUGE]`` are recomputed by scaling in
#: :func:`distances`: their squares, which ``torch.cdist`` forms, would come within a factor
#: 1e28 of float64's underflow (2.2e-308) or overflow (1.8e308).
DISTANCE_TINY, DISTANCE_HUGE = 1e-140, 1e140


def distances(p: np.ndarray, c: np.ndarray) -> torch.Tensor:
    r"""Euclidean distances :math:`\|p_j - c_i\|`, float64 torch ``(P, N)``, for points ``p``
    ``(P, D)`` and centres ``c`` ``(N, D)``, both finite float64.

    From explicit differences (``torch.cdist`` without its matrix-product expansion, which
    cancels far from the origin). Where a distance lies outside ``[DISTANCE_TINY,
    DISTANCE_HUGE]`` its point's row is recomputed with each difference divided by the pair's
    largest one before squaring (as ``hypot`` does; the differences of halves where a difference
    would overflow): each entry within a few ulp of the exact distance of the float64 inputs,
    wherever they lie, from 1e-300 to 1e300 and beyond. Only a distance above float64's largest
    number is ``inf``.
    """
    tp, tc = torch.from_numpy(p), torch.from_numpy(c)
    d = torch.cdist(tp, tc, compute_mode="donot_use_mm_for_euclid_dist")
    bad = ~((d >= DISTANCE_TINY) & (d <= DISTANCE_HUGE)).all(dim=1)
    if bool(bad.any()):
        rows = torch.nonzero(bad).flatten()
        q = tp[rows]
        diff = q[:, None, :] - tc[None, :, :]
        half = ~torch.isfinite(diff).all()
        if half:  # a difference overflows: work with the differences of halves
            diff = q[:, None, :] / 2 - tc[None, :, :] / 2
        scale = diff.abs().amax(dim=2, keepdim=True)
        safe = torch.where(scale > 0, scale, torch.ones_like(scale))
        norm = scale[..., 0] * torch.linalg.vector_norm(diff / safe, dim=2)
        d[rows] = norm * 2 if half else norm
    return d


def scaled_distances(p: np.ndarray, c: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
    r"""Distances that never overflow: ``(e, s)`` with :math:`\|p_j - c_i\| = e_{ji} 2^{s_j}`,
    ``e`` float64 ``(P, N)`` finite and ``s`` float64 ``(P, 1)`` (0 where :func:`distances`
    is finite, otherwise the power of two that brings the point's row back into range).

    A row in which some distance exceeds float64's largest number (points and centres of
    opposite signs near 1e308) is recomputed from the inputs divided by :math:`2^k`, :math:`2^k
    \ge 2\sqrt D`: every scaled distance is then finite and the order of a row is the order of
    the true distances, so an ``argmin`` over ``e`` is the nearest centre wherever it lies, and
    :math:`\beta (e_i^2 - e_{min}^2) 4^{s}` is :math:`\beta(\|p - c_i\|^2 - \|p - c_{min}\|^2)`.
    """
    d = distances(p, c)
    s = torch.zeros((len(p), 1), dtype=torch.float64)
    over = ~torch.isfinite(d).all(dim=1)
    if bool(over.any()):
        rows = torch.nonzero(over).flatten().numpy()
        k = math.ceil(math.log2(2 * math.sqrt(p.shape[1]))) + 1
        d[rows] = distances(np.ldexp(p[rows], -k), np.ldexp(c, -k))
        s[rows] = float(k)
    return d, s


def voronoi_scores(p: np.ndarray, c: np.ndarray, beta: float) -> torch.Tensor:
    r""":math:`\beta(\|p_j - c_i\|^2 - \min_k \|p_j - c_k\|^2)`, float64 ``(P, N)``, 0 at each
    point's nearest centre (the lowest index among ties) and never NaN: from
    :func:`scaled_distances`, as a product of two factors of the distances' own
    size (no square underflows or overflows on the way; a score beyond float64's range is
    ``inf``, a softmax weight of exactly 0)."""
    d, s = scaled_distances(p, c)
    near = d.min(dim=1, keepdim=True).values
    root = math.sqrt(beta)
    rel = torch.where(d > near, (root * (d - near)) * (root * (d + near)), 0.0)
    with np.errstate(over="ignore"):
        return rel * torch.exp2(2 * s)


def sq_distances(p: np.ndarray, c: np.ndarray) -> torch.Tensor:
    r"""Squared distances :math:`\|p_j - c_i\|^2`, float64 torch ``(P, N)``: the squares of
    :func:`distances`, each within a few ulp of the exact squared distance of the float64
    inputs wherever it is a normal float64 number (it underflows to 0 below about 1e-154 and
    overflows to inf above about 1e154; a caller that must compare such distances uses
    :func:`distances`).
    """
    return distances(p, c) ** 2


#: Rounds of re-referencing in :func:`scores_from_top` (each moves a point to a piece that scores
#: strictly higher, or equally with a lower index; one round suffices unless the first guess was
#: spoiled by cancellation).
TOP_ROUNDS = 4


def scores_from_top(p: np.ndarray, A: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r"""Each point's scores relative to its top piece, without cancellation.

    For points ``p`` ``(P, D)`` and pieces ``A`` ``(N, D)``, ``b`` ``(N,)``: ``(r, k)`` with
    ``k`` int64 ``(P,)`` the arg-max piece of each point (ties: the lowest index) and ``r``
    float64 ``(P, N)``, :math:`r_{ji} = (a_i - a_k)^	op p_j + (b_i - b_k)` with the differences
    of the pieces formed before the product (so :math:`r_{jk} = 0` exactly and every other entry
    carries a rounding of its own terms' size, :math:`\gamma_{D+1}(|a_i - a_k|^	op |p_j| +
    |b_i - b_k|)`, not the scores' size). A first guess of ``k`` comes from the scores relative to
    the pieces' midpoint (:func:`relative_pieces`); a point whose relative scores show a better
    piece is re-referenced to it (at most :data:`TOP_ROUNDS` times). Points sharing a top piece
    are scored together by one matrix product.
    """
    A0, b0 = relative_pieces(p, A, b)
    k = (p @ A0.T + b0).argmax(axis=1)
    r = np.empty((len(p), len(A)))
    todo = np.arange(len(p))
    for _ in range(TOP_ROUNDS):
        order = todo[np.argsort(k[todo], kind="stable")]
        ks = k[order]
        starts = np.flatnonzero(np.r_[True, ks[1:] != ks[:-1]]) if len(ks) else ks
        for s, e in zip(starts, np.r_[starts[1:], len(ks)], strict=True):
            top, rows = ks[s], order[s:e]
            r[rows] = p[rows] @ (A - A[top]).T + (b - b[top])
        best = r[todo].argmax(axis=1) if len(todo) else todo
        moved = best != k[todo]
        if not moved.any():
            break
        todo = todo[moved]
        k[todo] = best[moved]
    return r, k


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
    :data:`CHUNK_ENTRIES`. Raises ValueError when a result is not finite (scores or
    ``beta`` times scores overflowing float64).
    """
    flat = x.reshape(-1, x.shape[-1])
    rows = max(1, min(CHUNK, CHUNK_ENTRIES // max(1, width)))
    with np.errstate(over="ignore", invalid="ignore"):
        out = np.concatenate([fn(flat[i : i + rows]) for i in range(0, len(flat), rows)])
    if not np.isfinite(out).all():
        raise ValueError(
            "the scores overflow float64 (NaN or inf); rescale x, the affine pieces, beta or the "
            "bandwidth"
        )
    return out.reshape(x.shape[:-1] + out.shape[1:])


def as_beta(beta: float) -> float:
    return finite_real("beta", beta, minimum=0.0, strict=True)


def as_values(name: str, values: ArrayLike, n: int) -> np.ndarray:
    v = as_float_array(name, values)
    if v.shape[0] != n:
        raise ValueError(f"{name} must have one row per centre ({n}), got shape {v.shape}")
    return v
