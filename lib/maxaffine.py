r"""Attention as a max-affine partition: LHSL's partition-and-lookup picture made executable (Chapter 5).

Liu, Hu, Song & Liu (NeurIPS 2025; "LHSL") show that one single-head softmax attention layer,
preceded only by a linear "sum-of-linear" map, approximates any continuous map in
:math:`L_\infty` (and any :math:`L_p` map in :math:`L_p`). The mechanism:

1. a **max-affine function** :math:`\mathrm{MaxAff}(x) = \max_i (a_i^\top x + b_i)` cuts the domain
   into convex cells :math:`U_i = \{x : a_i^\top x + b_i \text{ is the max}\}` (the **max-affine
   partition**); its **partition indicator** :math:`E(x)` is the one-hot vector of the cell;
2. softmax of the scaled scores, :math:`\sigma(\beta y(x))`, approximates :math:`E(x)`: with
   :math:`\Delta(x)` the top-two gap (:func:`margin`),
   :math:`\|\sigma(\beta y(x)) - E(x)\|_1 \le 2(N-1)e^{-\beta\Delta(x)}` (:func:`indicator_bound`);
3. the linear map copies :math:`\mathrm{vec}(X)` into a query token and appends one constant key
   token per cell carrying :math:`(a_i, b_i)` and a value :math:`v_i = f(c_i)`; the attention
   layer then returns (approximately) the value of the cell the input lies in
   (:func:`attention_approximator`).

With the Voronoi partition of a grid (:func:`voronoi_affine`: :math:`a_i = 2c_i`,
:math:`b_i = -\|c_i\|^2`) the scores differ from :math:`-\|x - c_i\|^2` by a constant, so the
layer is a Gaussian-kernel Nadaraya–Watson estimator (:func:`nadaraya_watson`).

What is quoted and what is ours: the definitions and the two universality theorems are LHSL's
(their informal statements quoted; see the Sources and certainty page); the quantitative indicator
bound, the token layout of the sum-of-linear map and the seq2seq position bonus are reconstructed
by the book.

Conventions: points are rows ``(..., D)`` of float64; ``A`` is ``(N, D)`` (row ``i`` is
:math:`a_i`), ``b`` is ``(N,)``.

Scores far from the origin. For centres far from the origin, :math:`2c_i^\top x - \|c_i\|^2`
cancels catastrophically in float64 (centres ``1e7 + 0.025`` and ``1e7 + 0.075`` and the point
``1e7 + 0.035`` would go to the far cell). Arg-max and softmax do not change when a per-point
constant is subtracted, so every score and distance is computed relative to a reference: the
Voronoi functions and layers translate points and centres by the midpoint of the centres' box
when that midpoint lies more than :data:`FAR_FACTOR` box sides from the origin; the functions
taking pieces ``(A, b)`` subtract the scores of the pieces' midpoint ``(a_ref, b_ref)`` when the
scores' size exceeds :data:`FAR_FACTOR` times their spread. Inputs nearer the origin (all of the
book's) are scored exactly as written, bit for bit.

Memory: evaluations run in chunks of at most :data:`CHUNK` points and :data:`MAX_MATRIX_ENTRIES`
scores; the layers count their parameters against :data:`lib.attention.MAX_PARAMETERS` before
allocating any.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pandas as pd
import torch
from torch import nn

from . import attention as _attention
from ._validate import as_float_array, check_size, finite_real, positive_int, real_array, short_repr
from .attention import SelfAttention

__all__ = [
    "affine_scores",
    "max_affine",
    "cell_index",
    "partition_indicator",
    "margin",
    "soft_indicator",
    "indicator_error",
    "indicator_bound",
    "voronoi_affine",
    "grid_centres",
    "grid_margin",
    "hard_lookup",
    "soft_lookup",
    "nadaraya_watson",
    "SumOfLinear",
    "PartitionLookup",
    "attention_approximator",
    "seq2seq_approximator",
    "error_row",
    "context_tokens",
    "CrossLookup",
    "cross_attention_approximator",
    "context_length",
    "product_lookup",
    "product_context_length",
    "RATE_POINTS",
    "RATE_SEED",
    "rate_points",
    "NOISE_SETTINGS",
    "NOISE_DATASETS",
    "noise_datasets",
    "noise_experiment",
    "noise_runs",
    "trend_test",
    "CHUNK",
    "MAX_CELLS",
    "MAX_MATRIX_ENTRIES",
    "FAR_FACTOR",
]

#: Points scored at once (fewer when a chunk's ``(points, N)`` scores would exceed
#: :data:`MAX_MATRIX_ENTRIES`).
CHUNK = 2048
#: Largest number of grid cells :func:`grid_centres` builds.
MAX_CELLS = 2**20
#: Largest float64 matrix one evaluation step holds (``2**27`` entries, 1 GiB): the scores of a
#: chunk, the permutations of :func:`trend_test`.
MAX_MATRIX_ENTRIES = 2**27
#: Scores are computed relative to a reference when the inputs lie more than this many times
#: their own spread from the origin (see the module docstring).
FAR_FACTOR = 16.0


def _affine(A, b) -> tuple[np.ndarray, np.ndarray]:
    A = as_float_array("A", A, min_ndim=2)
    if A.ndim != 2:
        raise ValueError(f"A must have shape (N, D), got {A.shape}")
    b = as_float_array("b", b)
    if b.shape != (A.shape[0],):
        raise ValueError(f"b must have shape ({A.shape[0]},) to match A {A.shape}, got {b.shape}")
    return A, b


def _points(x, D: int) -> np.ndarray:
    x = as_float_array("x", x)
    if x.shape[-1] != D:
        raise ValueError(f"x must have shape (..., {D}) to match A, got {x.shape}")
    return x


def _centres(centres) -> np.ndarray:
    c = as_float_array("centres", centres, min_ndim=2)
    if c.ndim != 2:
        raise ValueError(f"centres must have shape (N, D), got {c.shape}")
    return c


def _box(M: np.ndarray) -> tuple[np.ndarray, float]:
    """Midpoint of the bounding box of the rows of ``M`` (halved first: no overflow) and its largest side."""
    lo, hi = M.min(axis=0), M.max(axis=0)
    with np.errstate(over="ignore", invalid="ignore"):
        return lo / 2 + hi / 2, float(np.max(hi - lo))


def _reference(c: np.ndarray) -> np.ndarray | None:
    """The translation for Voronoi scores of centres ``c`` ``(N, D)``, or None.

    The midpoint of the centres' box when it lies more than :data:`FAR_FACTOR` times the box's
    largest side from the origin (in the max norm), else None: centres near the origin are
    scored as written.
    """
    mid, extent = _box(c)
    far = float(np.abs(mid).max())
    return mid if math.isfinite(far) and far > FAR_FACTOR * extent else None


def _translate(x: np.ndarray, c: np.ndarray, ref: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    return (x, c) if ref is None else (x - ref, c - ref)


def _relative(x: np.ndarray, A: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pieces whose scores differ from ``(A, b)``'s by a per-point constant, and do not cancel.

    With ``(a_ref, b_ref)`` the midpoints of the boxes of the rows of ``A`` and of ``b``, the
    scores' size is about ``|a_ref|_1 max|x| + |b_ref|`` and their spread about
    ``D side(A) max|x| + side(b)``; when the size exceeds :data:`FAR_FACTOR` times the spread,
    ``(A - a_ref, b - b_ref)`` is returned (their scores are ``y_i(x) - a_ref^T x - b_ref``),
    otherwise ``(A, b)`` unchanged.
    """
    a_ref, a_side = _box(A)
    b_ref, b_side = _box(b[:, None])
    xmax = float(np.abs(x).max()) if x.size else 0.0
    with np.errstate(over="ignore", invalid="ignore"):
        size = float(np.abs(a_ref).sum()) * xmax + abs(float(b_ref[0]))
        spread = a_side * A.shape[1] * xmax + b_side
    if math.isfinite(size) and math.isfinite(spread) and size > FAR_FACTOR * spread:
        return A - a_ref, b - b_ref
    return A, b


def _chunked(x: np.ndarray, fn: Callable[[np.ndarray], np.ndarray], width: int = 1) -> np.ndarray:
    """Apply ``fn`` to ``x`` flattened to ``(P, D)`` in chunks; restore the leading shape.

    A chunk holds :data:`CHUNK` points, fewer when its ``(points, width)`` scores would exceed
    :data:`MAX_MATRIX_ENTRIES`. Raises ValueError when a result is not finite (scores or
    ``beta`` times scores overflowing float64).
    """
    flat = x.reshape(-1, x.shape[-1])
    rows = max(1, min(CHUNK, MAX_MATRIX_ENTRIES // max(1, width)))
    with np.errstate(over="ignore", invalid="ignore"):
        out = np.concatenate([fn(flat[i:i + rows]) for i in range(0, len(flat), rows)])
    if not np.isfinite(out).all():
        raise ValueError("the scores overflow float64 (NaN or inf); rescale x, the affine pieces, beta or the bandwidth")
    return out.reshape(x.shape[:-1] + out.shape[1:])



def affine_scores(x, A, b) -> np.ndarray:
    r"""The affine scores :math:`y_i(x) = a_i^\top x + b_i`.

    Args:
        x: points ``(..., D)``, real, finite.
        A: slopes ``(N, D)``; b: offsets ``(N,)``.

    Returns:
        float64 ``(..., N)``, the scores as written (far from the origin they carry float64's
        rounding of their size; :func:`cell_index`, :func:`margin`, :func:`soft_indicator` and
        :func:`indicator_error` score relative to a reference instead).

    Raises:
        ValueError: for non-finite, complex, bool or empty input, shapes that do not match, or
            scores that overflow float64.

    Source: LHSL (NeurIPS 2025), the max-affine function. Chapter 5.
    """
    A, b = _affine(A, b)
    return _chunked(_points(x, A.shape[1]), lambda p: p @ A.T + b, A.shape[0])


def max_affine(x, A, b) -> np.ndarray:
    r""":math:`\mathrm{MaxAff}(x) = \max_i (a_i^\top x + b_i)`, float64 ``(...,)`` for ``x`` ``(..., D)``.

    Raises:
        ValueError: as :func:`affine_scores`.

    Source: LHSL (NeurIPS 2025), definition of the max-affine function. Chapter 5.
    """
    A, b = _affine(A, b)
    return _chunked(_points(x, A.shape[1]), lambda p: (p @ A.T + b).max(axis=1), A.shape[0])


def cell_index(x, A, b) -> np.ndarray:
    r"""The cell :math:`i_x = \arg\max_i (a_i^\top x + b_i)` of each point, int64 ``(...,)``.

    Ties (boundaries, a set of measure zero) go to the lowest index. Far from the origin the
    scores are taken relative to the pieces' midpoint (module docstring), so the cell is that of
    the pieces as given, not of their rounded scores.

    Raises:
        ValueError: as :func:`affine_scores`.

    Source: LHSL (NeurIPS 2025), the max-affine partition. Chapter 5.
    """
    A, b = _affine(A, b)
    x = _points(x, A.shape[1])
    A, b = _relative(x, A, b)

    def best(p):
        y = p @ A.T + b
        if not np.isfinite(y).all():
            raise ValueError("the affine scores overflow float64; rescale x or the affine pieces")
        return y.argmax(axis=1)

    return _chunked(x, best, A.shape[0]).astype(np.int64)


def partition_indicator(x, A, b) -> np.ndarray:
    r"""The partition indicator :math:`E(x) = e_{i_x}`: float64 one-hot ``(..., N)``.

    Ties go to the lowest index, as in :func:`cell_index`.

    Raises:
        ValueError: as :func:`affine_scores`.

    Source: LHSL (NeurIPS 2025), the partition indicator. Chapter 5.
    """
    A, b = _affine(A, b)
    idx = cell_index(x, A, b)
    return np.eye(A.shape[0])[idx]


def margin(x, A, b) -> np.ndarray:
    r"""The top-two gap :math:`\Delta(x) = y_{(1)}(x) - y_{(2)}(x) \ge 0`, float64 ``(...,)``.

    ``inf`` when there is a single cell (no competitor); 0 on a boundary. A difference of
    scores: far from the origin it is computed relative to the pieces' midpoint.

    Raises:
        ValueError: as :func:`affine_scores`.

    Source: the margin of LHSL's indicator lemma in the book's quantitative form (reconstructed by
    the book; see the Sources and certainty page). Chapter 5.
    """
    A, b = _affine(A, b)
    x = _points(x, A.shape[1])
    if A.shape[0] == 1:
        return np.full(x.shape[:-1], np.inf)
    A, b = _relative(x, A, b)

    def gap(p):
        top2 = np.partition(p @ A.T + b, -2, axis=1)[:, -2:]
        return top2[:, 1] - top2[:, 0]

    return _chunked(x, gap, A.shape[0])


def _beta(beta) -> float:
    return finite_real("beta", beta, minimum=0.0, strict=True)


def soft_indicator(x, A, b, beta: float) -> np.ndarray:
    r"""The attention weights :math:`\sigma(\beta\, y(x))` over the cells, float64 ``(..., N)``.

    Args:
        x: points ``(..., D)``; A, b: the max-affine pieces.
        beta: inverse temperature (> 0), multiplying the affine scores.

    Far from the origin the scores are taken relative to the pieces' midpoint (softmax is
    unchanged by a per-point constant).

    Raises:
        ValueError: as :func:`affine_scores`, or for a non-positive or non-finite ``beta``.

    Source: LHSL (NeurIPS 2025), the lemma "attention approximates the partition indicator".
    Chapter 5.
    """
    beta = _beta(beta)
    A, b = _affine(A, b)
    x = _points(x, A.shape[1])
    A, b = _relative(x, A, b)
    return _chunked(x, lambda p: torch.softmax(beta * torch.from_numpy(p @ A.T + b), dim=-1).numpy(), A.shape[0])


def indicator_error(x, A, b, beta: float) -> np.ndarray:
    r""":math:`\|\sigma(\beta y(x)) - E(x)\|_1`, computed without cancellation, float64 ``(...,)``.

    With :math:`s = \sum_{j \ne i_x} e^{\beta(y_j - y_{i_x})}` the error is exactly
    :math:`2s/(1+s) = 2\,\mathrm{sigmoid}(\log s)`; ``log s`` comes from torch's ``logsumexp``, so
    errors far below float64's ``1e-16`` resolution of :math:`1 - \sigma_{i_x}` are still resolved.

    Raises:
        ValueError: as :func:`soft_indicator`.

    Source: the left side of the book's quantitative form of LHSL's indicator lemma (check C14).
    Chapter 5.
    """
    beta = _beta(beta)
    A, b = _affine(A, b)
    x = _points(x, A.shape[1])
    A, b = _relative(x, A, b)

    def err(p):
        y = torch.from_numpy(p @ A.T + b)
        top = y.argmax(dim=1, keepdim=True)
        rel = beta * (y - y.gather(1, top))
        rel.scatter_(1, top, -math.inf)
        return (2 * torch.sigmoid(torch.logsumexp(rel, dim=1))).numpy()

    return _chunked(x, err, A.shape[0])


def indicator_bound(beta: float, margin, n_cells: int) -> np.ndarray | float:
    r"""The bound :math:`2(N-1)e^{-\beta\Delta}` on :math:`\|\sigma(\beta y) - E\|_1` at margin :math:`\Delta`.

    Args:
        beta: inverse temperature (> 0).
        margin: :math:`\Delta \ge 0`, a scalar or an array (``inf`` allowed: bound 0).
        n_cells: :math:`N \ge 1`.

    Returns:
        A float for a scalar ``margin``, else a float64 array of its shape.

    Raises:
        ValueError: for a non-positive or non-finite ``beta``, a negative or NaN ``margin``, a
            complex, bool or string ``margin`` (never read as its real part or as 0/1), or
            ``n_cells < 1``.

    Source: the book's quantitative form of LHSL's indicator lemma (reconstructed by the book,
    see the Sources and certainty page; one line: every non-top weight is at most
    :math:`e^{-\beta\Delta}`). Check C14, Chapter 5.
    """
    beta = _beta(beta)
    n_cells = positive_int("n_cells", n_cells, maximum=2**53)
    arr = np.asarray(as_float_array("margin", margin, min_ndim=0, finite=False), dtype=np.float64)
    if np.isnan(arr).any() or (arr < 0).any():
        raise ValueError(f"margin must be >= 0 (not NaN), got {short_repr(margin)}")
    out = 2.0 * (n_cells - 1) * np.exp(-beta * arr)
    return float(out) if out.ndim == 0 else out


def voronoi_affine(centres) -> tuple[np.ndarray, np.ndarray]:
    r"""The max-affine pieces of the Voronoi partition of ``centres``: :math:`a_i = 2c_i`, :math:`b_i = -\|c_i\|^2`.

    Since :math:`a_i^\top x + b_i = \|x\|^2 - \|x - c_i\|^2`, the arg-max cell is the nearest centre.

    Args:
        centres: ``(N, D)`` real, finite, ``N >= 1``.

    Returns:
        ``(A, b)``: float64 ``(N, D)`` and ``(N,)``.

    Raises:
        ValueError: for an empty, non-finite, complex, bool or non-2-D ``centres``, or centres whose
            squared norms overflow float64.

    Source: the Voronoi partition of the book's reconstruction of LHSL's construction (see the
    Sources and certainty page); check C13. Chapter 5.
    """
    c = _centres(centres)
    with np.errstate(over="ignore"):
        b = -(c ** 2).sum(axis=1)
    if not np.isfinite(b).all() or not np.isfinite(2.0 * c).all():
        raise ValueError(f"centres are too large: |c_i|^2 overflows float64, got {short_repr(c)}")
    return 2.0 * c, b


def grid_centres(m: int, dim: int, low: float = 0.0, high: float = 1.0) -> np.ndarray:
    r"""Centres of the :math:`m^{\text{dim}}` cubes of side :math:`h = (\text{high}-\text{low})/m` tiling :math:`[\text{low}, \text{high}]^{\text{dim}}`.

    Returns:
        float64 ``(m**dim, dim)``, the first coordinate varying slowest (``itertools.product`` order).

    Raises:
        ValueError: for ``m < 1``, ``dim < 1``, ``high <= low``, non-finite bounds, or more than
            ``2**20`` cells.

    Source: the grid of the book's reconstruction of LHSL's construction; checks C13–C17.
    Chapters 5-6.
    """
    m, dim = positive_int("m", m), positive_int("dim", dim)
    low, high = finite_real("low", low), finite_real("high", high)
    if not high > low or not math.isfinite(high - low):
        raise ValueError(f"high must exceed low by a finite amount, got low={low}, high={high}")
    if dim > 20 or m ** dim > MAX_CELLS:
        raise ValueError(f"m**dim = {m}**{dim} exceeds {MAX_CELLS} cells")
    axis = low + (np.arange(m) + 0.5) * (high - low) / m
    return np.stack(np.meshgrid(*([axis] * dim), indexing="ij"), axis=-1).reshape(-1, dim)


def grid_margin(x, m: int, low: float = 0.0, high: float = 1.0) -> np.ndarray:
    r"""The closed form of :func:`margin` on the grid of :func:`grid_centres`: :math:`\Delta(x)` without the scores.

    For the Voronoi pieces of ``grid_centres(m, D, low, high)`` (spacing :math:`h = (\text{high} -
    \text{low})/m`), let :math:`c` be the centre of the cube holding :math:`x` and
    :math:`u = (x - c)/h \in [-\tfrac12, \tfrac12]^D`. The rival centre :math:`c + hk` scores
    :math:`h^2 \sum_j (k_j^2 - 2k_j u_j)` below :math:`c`, a sum of non-negative terms, so the
    runner-up is an axis neighbour :math:`c \pm h e_j` and

    .. math:: \Delta(x) = h^2 \min_j \min\{1 - 2u_j \text{ (if } c + he_j \text{ is a centre)},\;
       1 + 2u_j \text{ (if } c - he_j \text{ is one)}\} = 2h\,\mathrm{dist}(x, \text{nearest bisector}).

    Hence :math:`\Delta \le h^2` in every cube with neighbours on both sides along some axis,
    and :math:`\Delta \le 2h^2` in the :math:`2^D` corner cubes, with equality at the corners of
    the domain (for ``m = 2`` every cube is a corner cube; for ``m = 1`` there is no rival and the
    margin is ``inf``, as for :func:`margin`).

    Args:
        x: points ``(..., D)`` in the closed box ``[low, high]^D``, real, finite.
        m: cells per axis (>= 1); low, high: the box, ``high > low``.

    Returns:
        float64 ``(...,)``; 0 on a boundary between cubes.

    Raises:
        ValueError: for ``m < 1``, bounds as :func:`grid_centres`, non-finite, complex or bool
            ``x``, or points outside ``[low, high]^D``.

    Source: the book's Proposition on grid margins, used to size the indicator bound of LHSL's
    lemma (check B5.2). Chapter 5.
    """
    m = positive_int("m", m)
    low, high = finite_real("low", low), finite_real("high", high)
    if not high > low or not math.isfinite(high - low):
        raise ValueError(f"high must exceed low by a finite amount, got low={low}, high={high}")
    x = as_float_array("x", x)
    if ((x < low) | (x > high)).any():
        raise ValueError(f"x must lie in [low, high]^D = [{low}, {high}]^{x.shape[-1]}, got {short_repr(x)}")
    if m == 1:
        return np.full(x.shape[:-1], np.inf)
    h = (high - low) / m
    t = (x - low) / h
    cell = np.clip(np.floor(t), 0, m - 1)
    u = t - cell - 0.5
    up = np.where(cell < m - 1, 1.0 - 2.0 * u, np.inf)
    down = np.where(cell > 0, 1.0 + 2.0 * u, np.inf)
    return h * h * np.minimum(up, down).min(axis=-1)


def _values(name: str, values, n: int) -> np.ndarray:
    v = as_float_array(name, values)
    if v.shape[0] != n:
        raise ValueError(f"{name} must have one row per centre ({n}), got shape {v.shape}")
    return v


def hard_lookup(x, centres, values) -> np.ndarray:
    r"""The hard partition's answer: the value of the nearest centre (Voronoi cell), ``(..., *values.shape[1:])``.

    The :math:`\beta\to\infty` limit of :func:`attention_approximator`, the reference of check C15.
    Far from the origin points and centres are translated first (module docstring).

    Raises:
        ValueError: for mismatched shapes or non-finite, complex or bool input.

    Source: the hard lookup of the book's reconstruction of LHSL's construction. Chapter 5.
    """
    c = _centres(centres)
    v = _values("values", values, c.shape[0])
    x, c = _translate(_points(x, c.shape[1]), c, _reference(c))
    A, b = voronoi_affine(c)
    return v[cell_index(x, A, b)]


def soft_lookup(x, centres, values, beta: float) -> np.ndarray:
    r"""The closed form of :func:`attention_approximator`'s output: :math:`\sigma(\beta y(x))^\top V`.

    The layer's output at the query token is exactly this weighted average of the values (up
    to the query token's own weight, below :math:`e^{-40}`); it costs ``O(N D)`` per point
    instead of building the ``N + 1``-token sequence, so Chapter 5's sweeps use it and check it
    against the literal layer on a sample.

    Args:
        x: points ``(..., D)``; centres: ``(N, D)``; values: ``(N, k)`` or ``(N,)``; beta: > 0.

    Returns:
        float64 ``(..., k)`` (or ``(...,)`` for 1-D ``values``).

    Far from the origin points and centres are translated first (module docstring): the
    weights are then those of the exact scores, not of their float64 cancellation.

    Raises:
        ValueError: as :func:`soft_indicator` and :func:`hard_lookup`.

    Source: the closed form of the book's reconstruction of LHSL's construction (see the Sources
    and certainty page); checks C15–C16, Chapter 5.
    """
    beta = _beta(beta)
    c = _centres(centres)
    v = torch.from_numpy(_values("values", values, c.shape[0]))
    x, c = _translate(_points(x, c.shape[1]), c, _reference(c))
    A, b = voronoi_affine(c)
    flat = v.reshape(len(v), -1)
    out = _chunked(x, lambda p: (torch.softmax(beta * torch.from_numpy(p @ A.T + b), dim=-1) @ flat).numpy(),
                   A.shape[0])
    return out.reshape(out.shape[:-1] + v.shape[1:])


def nadaraya_watson(x, centres, values, bandwidth: float) -> np.ndarray:
    r"""The Gaussian-kernel Nadaraya–Watson estimate :math:`\sum_i K(x - c_i) v_i / \sum_i K(x - c_i)`.

    :math:`K(u) = e^{-\|u\|^2 / (2 h^2)}` with ``h = bandwidth``; computed from the distances
    (``torch.cdist``), independently of the affine scores. With :math:`\beta = 1/(2h^2)` it equals
    the output of :func:`attention_approximator` on the Voronoi pieces of ``centres``.

    Args:
        x: points ``(..., D)``; centres: ``(N, D)``; values: ``(N, k)`` or ``(N,)``.
        bandwidth: ``h > 0``, in the units of ``x``.

    Returns:
        float64 ``(..., k)`` (or ``(...,)`` for 1-D ``values``).

    Far from the origin points and centres are translated first (module docstring; ``cdist``
    itself expands the squares and would cancel).

    Raises:
        ValueError: for mismatched shapes, non-finite, complex or bool input or a non-positive
            bandwidth.

    Source: the kernel-regression reading of LHSL's lookup (the book's remark on its
    reconstruction). Chapter 5.
    """
    h = finite_real("bandwidth", bandwidth, minimum=0.0, strict=True)
    c = _centres(centres)
    v = torch.from_numpy(_values("values", values, c.shape[0]))
    x, c = _translate(_points(x, c.shape[1]), c, _reference(c))
    ct = torch.from_numpy(c)

    def nw(p):
        w = torch.softmax(-torch.cdist(torch.from_numpy(p), ct) ** 2 / (2 * h * h), dim=-1)
        return (w @ v.reshape(len(v), -1)).numpy()

    out = _chunked(x, nw, c.shape[0])
    return out.reshape(out.shape[:-1] + v.shape[1:])


class SumOfLinear(nn.Module):
    r"""LHSL's sum-of-linear map :math:`L(X) = \sum_k A_k X B_k + C` between sequences.

    In the papers' column convention :math:`X \in \mathbb R^{d\times n}`, :math:`A_k \in \mathbb
    R^{d'\times d}`, :math:`B_k \in \mathbb R^{n\times n'}`, :math:`C \in \mathbb R^{d'\times n'}`;
    it is the general affine map between the two matrix spaces: it mixes tokens (``B_k``),
    mixes features (``A_k``) and appends constant tokens (``C``). Here tokens are rows: input
    ``(batch, n, d)``, output ``(batch, n', d')`` :math:`= \sum_k B_k^\top X A_k^\top + C^\top`.

    Args:
        A: ``(K, d', d)``; B: ``(K, n, n')``; C: ``(d', n')`` — real, finite.
        dtype: ``torch.float64`` (default) or ``torch.float32``.

    The matrices are trainable parameters ``A``, ``B``, ``C``.

    Raises:
        ValueError: for shapes that do not fit together, non-finite, complex or bool entries, an
            unknown dtype, more than :data:`lib.attention.MAX_PARAMETERS` entries in ``A``, ``B``
            and ``C`` together (checked before any is copied); in :meth:`forward` for input that
            is not ``(batch, n, d)`` of the module's dtype or is not finite.

    Source: LHSL (NeurIPS 2025), the "sum-of-linear transformation" (the name quoted, the form
    reconstructed by the book; see the Sources and certainty page). Chapter 5.
    """

    def __init__(self, A, B, C, dtype: torch.dtype = torch.float64):
        super().__init__()
        if dtype not in (torch.float32, torch.float64):
            raise ValueError(f"dtype must be torch.float32 or torch.float64, got {dtype!r}")
        A, B, C = real_array("A", A), real_array("B", B), real_array("C", C)
        check_size("SumOfLinear: the number of parameters", A.size + B.size + C.size, _attention.MAX_PARAMETERS,
                   "lib.attention.MAX_PARAMETERS")
        A = as_float_array("A", A, min_ndim=3)
        B = as_float_array("B", B, min_ndim=3)
        C = as_float_array("C", C, min_ndim=2)
        if A.ndim != 3 or B.ndim != 3 or C.ndim != 2:
            raise ValueError(f"A, B, C must be (K, d', d), (K, n, n'), (d', n'), got {A.shape}, {B.shape}, {C.shape}")
        if A.shape[0] != B.shape[0] or C.shape != (A.shape[1], B.shape[2]):
            raise ValueError(f"A {A.shape}, B {B.shape} and C {C.shape} must be (K, d', d), (K, n, n') and (d', n')")
        for name, value in (("A", A), ("B", B), ("C", C)):
            cast = torch.from_numpy(value).to(dtype)
            if not bool(torch.isfinite(cast).all()):
                raise ValueError(f"{name} does not fit in {dtype} (overflow)")
            setattr(self, name, nn.Parameter(cast))

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        """Map ``X`` ``(batch, n, d)`` to ``(batch, n', d')``."""
        K, d_out, d = self.A.shape
        n = self.B.shape[1]
        if not isinstance(X, torch.Tensor) or X.ndim != 3 or tuple(X.shape[1:]) != (n, d) or X.dtype != self.A.dtype:
            raise ValueError(f"X must be a {self.A.dtype} tensor (batch, {n}, {d}), got {short_repr(X)}")
        if not bool(torch.isfinite(X).all()):
            raise ValueError("X must be finite")
        out = torch.einsum("knq,bnd,kpd->bqp", self.B, X, self.A) + self.C.T
        if not bool(torch.isfinite(out).all()):
            raise ValueError(f"the sum-of-linear output overflows {out.dtype}; rescale X or the matrices")
        return out

    def extra_repr(self) -> str:
        K, d_out, d = self.A.shape
        return f"terms={K}, d={d}, n={self.B.shape[1]}, d'={d_out}, n'={self.B.shape[2]}"


class PartitionLookup(nn.Module):
    r"""``SumOfLinear`` then one single-head ``SelfAttention`` (no residual), read at the query tokens.

    Built by :func:`attention_approximator` and :func:`seq2seq_approximator`. Input: points
    ``(batch, D)`` (a flattened sequence, ``D = n d``); output ``(batch, k)`` or, for the seq2seq
    form, ``(batch, P, k)``. Evaluation runs in chunks of ``chunk`` points and only scores the
    ``P`` query tokens (``SelfAttention(rows=P)``): the outputs at the key tokens are never read.

    Attributes:
        linear: the :class:`SumOfLinear` map; attention: the :class:`lib.attention.SelfAttention`;
        centres, values, beta, bonus, suppress: the construction's data (numpy / floats);
        reference: ``None``, or the point ``(D,)`` subtracted from points and centres before
        scoring (centres far from the origin, module docstring; the map's constant ``C`` does
        it); A, b: the Voronoi pieces the key tokens carry, those of ``centres - reference``;
        token_dim, n_positions, value_dim: sizes.

    Source: LHSL (NeurIPS 2025), the self-attention universality theorems (the construction is
    reconstructed by the book; see the Sources and certainty page). Chapter 5.
    """

    def __init__(self, linear: SumOfLinear, attention: SelfAttention, *, token_dim: int, n_positions: int,
                 value_slice: slice, squeeze: bool, chunk: int = 512, **info):
        super().__init__()
        self.linear, self.attention = linear, attention
        self.token_dim, self.n_positions = token_dim, n_positions
        self.value_slice, self.squeeze = value_slice, squeeze
        self.value_dim = value_slice.stop - value_slice.start
        self.chunk = positive_int("chunk", chunk)
        for key, value in info.items():
            setattr(self, key, value)

    @property
    def D(self) -> int:
        return self.linear.B.shape[1] * self.token_dim

    def tokens(self, x) -> torch.Tensor:
        """The sequence ``L(X)`` ``(batch, n', d')`` the attention layer sees (queries first)."""
        x = self._check(x)
        return self.linear(x.reshape(len(x), -1, self.token_dim))

    def _check(self, x) -> torch.Tensor:
        x = _as_points(x, self.D)
        # the query token's own score must stay far below the best key's (see _build)
        ref = getattr(self, "reference", None)
        xs, cs = _translate(x, torch.from_numpy(self.centres), None if ref is None else torch.from_numpy(ref))
        nearest = torch.cdist(xs, cs).min(dim=1).values ** 2 if len(x) else x[:, 0]
        if bool((self.beta * (1.0 + nearest) > self.suppress - 30.0).any()):
            raise ValueError(f"x lies too far from the centres for suppress={self.suppress:.3g} (the query token "
                             f"would take weight); pass a larger suppress or points nearer the grid")
        return x.to(self.linear.A.dtype)

    @torch.no_grad()
    def forward(self, x) -> torch.Tensor:
        """Evaluate at points ``x`` ``(batch, D)`` (torch or numpy); float64 torch output."""
        x = self._check(x)
        parts = []
        for i in range(0, len(x), self.chunk):
            Z = self.linear(x[i:i + self.chunk].reshape(-1, self.linear.B.shape[1], self.token_dim))
            parts.append(self.attention(Z, rows=self.n_positions)[..., self.value_slice])
        out = torch.cat(parts) if parts else torch.empty(0, self.n_positions, self.value_dim, dtype=x.dtype)
        return out[:, 0] if self.squeeze else out


def _token_width(D: int, token_dim: int | None) -> int:
    d = D if token_dim is None else positive_int("token_dim", token_dim)
    if D % d:
        raise ValueError(f"token_dim must divide the point dimension D = {D}, got {d}")
    return d


def _check_layer(what: str, D: int, d: int, width: int, n_out: int, head_dim: int, d_out: int) -> None:
    """Count a lookup layer's numbers before allocating: copy terms, constant ``C`` and the four matrices."""
    n = D // d
    count = n * width * d + n * n * n_out + width * n_out + 3 * head_dim * width + d_out * head_dim
    check_size(f"{what}: the number of parameters", count, _attention.MAX_PARAMETERS, "lib.attention.MAX_PARAMETERS")


def _query_copy(D: int, token_dim: int | None, width: int, n_out: int, n_queries: int) -> tuple[int, np.ndarray, np.ndarray]:
    """The copy terms of the sum-of-linear map: term ``t`` writes token ``t`` of ``X`` into the ``x`` field.

    Returns ``(d, A_terms, B_terms)``: the token width, ``A`` ``(n, width, d)`` placing token ``t`` at
    rows ``t d .. (t + 1) d`` of the first ``D``, and ``B`` ``(n, n, n_out)`` sending it to the first
    ``n_queries`` output columns (``n = D / d``).
    """
    d = _token_width(D, token_dim)
    n = D // d
    A_terms, B_terms = np.zeros((n, width, d)), np.zeros((n, n, n_out))
    for t in range(n):
        A_terms[t, t * d:(t + 1) * d, :] = np.eye(d)
        B_terms[t, t, :n_queries] = 1.0
    return d, A_terms, B_terms


def _as_points(x, D: int) -> torch.Tensor:
    """``x`` (numpy or torch) as float64 points ``(batch, D)``; ValueError naming ``x`` otherwise."""
    if not isinstance(x, np.ndarray | torch.Tensor) or np.ndim(x) != 2 or np.shape(x)[1] != D:
        raise ValueError(f"x must be points (batch, {D}), got {short_repr(x)}")
    return torch.from_numpy(as_float_array("x", x))


def _centres_values(f: Callable, centres, n_positions: int | None) -> tuple[np.ndarray, np.ndarray]:
    c = _centres(centres)
    if not callable(f):
        raise ValueError(f"f must be callable, got {short_repr(f)}")
    v = as_float_array("f(centres)", f(c.copy()))
    want = "(N, k)" if n_positions is None else f"(N, {n_positions}, k)"
    ndim = 2 if n_positions is None else 3
    if v.ndim == ndim - 1:
        v = v[..., None]
    if v.ndim != ndim or v.shape[0] != len(c) or (n_positions is not None and v.shape[1] != n_positions):
        raise ValueError(f"f must map (N, D) = {c.shape} to {want}, got {v.shape}")
    return c, v if n_positions is not None else v[:, None, :]


def _build(f: Callable, centres, beta: float, *, token_dim: int | None, n_positions: int | None,
           bonus: float, suppress: float | None, chunk: int) -> PartitionLookup:
    """The token layout shared by both approximators (reconstructed by the book).

    Token fields (width ``d' = D + 2 + P + k``): ``[x (D) | one (1) | query flag (1) |
    position (P) | value (k)]``. Query token ``j``: ``(vec X - r, 1, 1, e_j, 0)``; key token
    ``(i, j)``: ``(a_i, b_i, 0, e_j, f(c_i)_j)`` with the Voronoi pieces of ``c_i - r``.
    ``W_Q z = (beta x, beta one, suppress flag, bonus pos)``, ``W_K z = (x, one, -flag, pos)``,
    so query ``j`` scores key ``(i, j')`` at ``beta (a_i^T (x - r) + b_i) + bonus [j = j']`` and
    every query token at ``beta (|x - r|^2 + 1) - suppress (+ bonus)``; ``W_O W_V`` copies the
    value field. ``r`` is the reference of far centres (module docstring), 0 otherwise: the
    constant ``C`` of the sum-of-linear map subtracts it.
    """
    beta = _beta(beta)
    squeeze = n_positions is None
    P = 1 if squeeze else positive_int("n_positions", n_positions, maximum=4096)
    c, v = _centres_values(f, centres, None if squeeze else P)
    N, D = c.shape
    k = v.shape[2]
    bonus = finite_real("bonus", bonus, minimum=0.0, maximum=1e6)
    ref = _reference(c)
    A, b = voronoi_affine(c if ref is None else c - ref)
    lo, hi = c.min(axis=0), c.max(axis=0)
    span2 = float(((hi - lo) ** 2).sum()) + 1.0
    if suppress is None:   # query tokens >= 40 nats below the best key for x within the centres' box, widened by its span
        suppress = beta * (1.0 + 4.0 * span2) + 40.0
    suppress = finite_real("suppress", suppress, minimum=0.0)
    width = D + 2 + P + k
    X_, ONE, FLAG, POS, VAL = 0, D, D + 1, D + 2, D + 2 + P
    n_out = P + N * P
    s = max(D + 2 + P, k)
    _check_layer("the lookup layer", D, _token_width(D, token_dim), width, n_out, s, width)
    # Sum-of-linear map: term t copies token t of X into the x field of every query column.
    d, A_terms, B_terms = _query_copy(D, token_dim, width, n_out, P)
    C = np.zeros((width, n_out))
    if ref is not None:
        C[X_:X_ + D, :P] = -ref[:, None]
    C[ONE, :P] = 1.0
    C[FLAG, :P] = 1.0
    C[POS:POS + P, :P] = np.eye(P)
    for j in range(P):
        cols = P + j * N + np.arange(N)
        C[X_:X_ + D, cols] = A.T
        C[ONE, cols] = b
        C[POS + j, cols] = 1.0
        C[VAL:VAL + k, cols] = v[:, j, :].T
    W_Q, W_K, W_V, W_O = np.zeros((s, width)), np.zeros((s, width)), np.zeros((s, width)), np.zeros((width, s))
    for r in range(D + 1):                       # x and one fields: score beta * (x^T x_t + one_t)
        W_Q[r, r], W_K[r, r] = beta, 1.0
    W_Q[D + 1, FLAG], W_K[D + 1, FLAG] = suppress, -1.0
    for j in range(P):
        W_Q[D + 2 + j, POS + j], W_K[D + 2 + j, POS + j] = bonus, 1.0
    for r in range(k):
        W_V[r, VAL + r], W_O[VAL + r, r] = 1.0, 1.0
    linear = SumOfLinear(A_terms, B_terms, C)
    attention = SelfAttention(width, head_dim=s, residual=False).set_weights(W_Q=W_Q, W_K=W_K, W_V=W_V, W_O=W_O)
    return PartitionLookup(linear, attention, token_dim=d, n_positions=P, value_slice=slice(VAL, VAL + k),
                           squeeze=squeeze, chunk=chunk, centres=c, values=v[:, 0] if squeeze else v,
                           A=A, b=b, beta=beta, bonus=bonus, suppress=suppress, reference=ref)


def attention_approximator(f: Callable, centres, beta: float, *, token_dim: int | None = None,
                           suppress: float | None = None, chunk: int = 512) -> PartitionLookup:
    r"""LHSL's partition lookup: one attention layer after a sum-of-linear map that returns :math:`f` at the cell centre.

    The partition is the Voronoi partition of ``centres`` (:func:`voronoi_affine`); key token
    :math:`i` carries :math:`(a_i, b_i)` and the value :math:`f(c_i)`; the query token carries
    :math:`(\mathrm{vec} X, 1)`, so the attention weights are :math:`\sigma(\beta y(x))`
    (:func:`soft_indicator`) and the output is :math:`\sum_i \sigma(\beta y(x))_i f(c_i)`. At
    margin :math:`\Delta` it is within ``indicator_bound(beta, Δ, N) * max|f(c_i)|`` of
    :math:`f(c_{i_x})`, plus the query tokens' weight, below :math:`e^{-40}` inside the centres'
    box by the default ``suppress``.

    Args:
        f: maps float64 numpy points ``(N, D)`` to values ``(N, k)`` (or ``(N,)``: ``k = 1``).
        centres: ``(N, D)``, the cells' centres, ``N >= 1``.
        beta: inverse temperature (> 0, finite) multiplying the affine scores.
        token_dim: ``d``, the width of one input token; the point is the flattened sequence of
            ``D / d`` tokens (default ``D``: one token). The output does not depend on it; the
            sum-of-linear map does (one term per token).
        suppress: the constant score penalty of the query token itself (default: see
            ``_build``); chunk: points evaluated at once.

    Returns:
        A :class:`PartitionLookup` mapping points ``(batch, D)`` to ``(batch, k)`` (float64).

    Raises:
        ValueError: for empty or non-finite ``centres``, ``f`` not callable or returning the
            wrong shape, non-finite, complex or bool values, non-finite or non-positive ``beta``,
            a ``token_dim`` that does not divide ``D``, centres whose squared norms overflow, a
            layer of more than :data:`lib.attention.MAX_PARAMETERS` numbers (checked before
            allocating); at call time for points of the wrong width, non-finite points, or
            points so far from the centres that the query token's suppressed score would no
            longer be negligible.

    Centres far from the origin are handled by a reference the layer subtracts (module
    docstring; the ``reference`` attribute).

    Source: LHSL (NeurIPS 2025), the L_∞ universality of single-head self-attention; the
    construction is reconstructed by the book (see the Sources and certainty page). Checks
    C15–C16, Chapter 5.
    """
    return _build(f, centres, beta, token_dim=token_dim, n_positions=None, bonus=0.0, suppress=suppress, chunk=chunk)


def seq2seq_approximator(f: Callable, centres, beta: float, n_positions: int, bonus: float = 50.0, *,
                         token_dim: int | None = None, suppress: float | None = None,
                         chunk: int = 512) -> PartitionLookup:
    r"""The sequence-to-sequence lookup: ``n_positions`` query tokens, one key block per output position.

    Key token :math:`(i, j)` carries :math:`(a_i, b_i)`, position :math:`e_j` and value
    :math:`f(c_i)_j`; query :math:`j` adds ``bonus`` :math:`M` to the keys of its own block, so
    block :math:`j` wins by :math:`M` and query :math:`j` returns :math:`f(\cdot)_j`
    (:math:`N P` keys in all). With ``bonus = 0`` every query sees all blocks equally and all
    positions return the same average: the failure case of check C17.

    Args:
        f: maps ``(N, D)`` to ``(N, n_positions, k)`` (or ``(N, n_positions)``).
        centres, beta, token_dim, suppress, chunk: as :func:`attention_approximator`.
        n_positions: output positions ``P >= 1``.
        bonus: the position bonus :math:`M \ge 0`.

    Returns:
        A :class:`PartitionLookup` mapping ``(batch, D)`` to ``(batch, n_positions, k)``.

    Raises:
        ValueError: as :func:`attention_approximator`, and for a negative or non-finite
            ``bonus`` or a non-positive ``n_positions``.

    Source: the sequence-to-sequence form of LHSL's self-attention theorem, reconstructed by the
    book (see the Sources and certainty page); check C17, Chapter 5.
    """
    return _build(f, centres, beta, token_dim=token_dim, n_positions=positive_int("n_positions", n_positions),
                  bonus=bonus, suppress=suppress, chunk=chunk)


def context_tokens(centres, values, *, biases=None, reference=None) -> np.ndarray:
    r"""The context sequence of LHSL's cross-attention lookup: one token :math:`(a_i, b_i, v_i)` per cell.

    Args:
        centres: ``(N, D)``; the keys are the Voronoi pieces :math:`a_i = 2c_i`,
            :math:`b_i = -\|c_i\|^2` (:func:`voronoi_affine`) unless ``biases`` is given.
        values: ``(N, k)`` or ``(N,)``, the value of each cell.
        biases: optional ``(N,)`` offsets :math:`b_i` to use instead of :math:`-\|c_i\|^2`
            (for instance 0, what a context computed *linearly* from the points can carry).
        reference: optional point ``(D,)``: the pieces are those of ``centres - reference``, for
            queries translated by the same point (:func:`cross_attention_approximator` does so
            for centres far from the origin, where the untranslated scores cancel).

    Returns:
        float64 ``(N, D + 1 + k)``.

    Raises:
        ValueError: for mismatched shapes or non-finite, complex or bool input.

    Source: the cross-attention form of LHSL's lookup, reconstructed by the book (see the Sources
    and certainty page). Chapter 6.
    """
    c = _centres(centres)
    if reference is not None:
        r = as_float_array("reference", reference)
        if r.shape != (c.shape[1],):
            raise ValueError(f"reference must have shape ({c.shape[1]},), got {r.shape}")
        c = c - r
    A, b = voronoi_affine(c)
    if biases is not None:
        b = _values("biases", biases, len(A))
        if b.ndim != 1:
            raise ValueError(f"biases must have shape ({len(A)},), got {b.shape}")
    v = _values("values", values, len(A))
    return np.concatenate([A, b[:, None], v.reshape(len(A), -1)], axis=1)


class CrossLookup(nn.Module):
    r"""A query map, a context sequence and one :class:`lib.attention.CrossAttention` head: LHSL's lookup as cross-attention.

    ``forward`` maps points ``(batch, D)`` to ``(batch, k)``: the query ``linear(X)`` (one token
    ``(vec X - reference, 1)``, the reference 0 unless the centres are far from the origin)
    attends to the constant ``context`` ``(N, D + 1 + k)``. Unpacks as
    ``linear, context, attention = cross_attention_approximator(...)``.

    Raises:
        ValueError: for parts of the wrong kind (``linear`` not a :class:`SumOfLinear`,
            ``attention`` not a :class:`lib.attention.CrossAttention`, ``context`` not a 2-D
            tensor of the layer's dtype), a non-positive ``token_dim`` or ``beta``, or centres,
            values or reference that are not finite real arrays; in :meth:`forward` as
            :func:`attention_approximator`.

    Source: LHSL (NeurIPS 2025), the cross-attention universality theorem (the construction is
    reconstructed by the book; see the Sources and certainty page). Chapter 6.
    """

    def __init__(self, linear: SumOfLinear, context: torch.Tensor, attention, *, token_dim: int, beta: float,
                 centres: np.ndarray, values: np.ndarray, reference: np.ndarray | None = None):
        from .attention import CrossAttention

        super().__init__()
        if not isinstance(linear, SumOfLinear) or not isinstance(attention, CrossAttention):
            raise ValueError(f"linear and attention must be a SumOfLinear and a lib.attention.CrossAttention, got "
                             f"{short_repr(linear)} and {short_repr(attention)}")
        if not isinstance(context, torch.Tensor) or context.ndim != 2 or context.dtype != attention._dtype():
            raise ValueError(f"context must be a 2-D {attention._dtype()} tensor (N, d_kv), got {short_repr(context)}")
        self.linear, self.attention = linear, attention
        self.register_buffer("context", context)
        self.token_dim = positive_int("token_dim", token_dim)
        self.beta = finite_real("beta", beta, minimum=0.0, strict=True)
        self.centres, self.values = _centres(centres), as_float_array("values", values)
        self.reference = None if reference is None else as_float_array("reference", reference)

    def __iter__(self):
        return iter((self.linear, self.context, self.attention))

    @torch.no_grad()
    def forward(self, x) -> torch.Tensor:
        """Evaluate at points ``x`` ``(batch, D)`` (torch or numpy); float64 ``(batch, k)``."""
        x = _as_points(x, self.linear.B.shape[1] * self.token_dim)
        parts = [self.attention(self.linear(x[i:i + CHUNK].reshape(-1, self.linear.B.shape[1], self.token_dim)),
                                self.context)[:, 0] for i in range(0, len(x), CHUNK)]
        return torch.cat(parts) if parts else torch.empty(0, self.values.shape[1], dtype=torch.float64)


def cross_attention_approximator(f: Callable, centres, beta: float, *, token_dim: int | None = None) -> CrossLookup:
    r"""LHSL's partition lookup with the keys and values moved into a context sequence ``Y``.

    The sum-of-linear map puts one query token :math:`\beta`-free :math:`(\mathrm{vec}X, 1)`
    together (``(batch, 1, D + 1)``); the context holds :func:`context_tokens` of the Voronoi
    pieces of ``centres`` and the values ``f(c_i)``; ``W_Q = \beta I`` reads the query, ``W_K``
    the key fields :math:`(a_i, b_i)`, ``W_V`` and ``W_O`` the value field. The output
    :math:`\sum_i \sigma(\beta y(x))_i f(c_i)` is that of :func:`attention_approximator`, without the
    query token to suppress: a query never attends to itself in cross-attention.

    Args:
        f, centres, beta, token_dim: as :func:`attention_approximator`.

    Returns:
        A :class:`CrossLookup`; ``linear, context, attention = ...`` unpacks it.

    Centres far from the origin are handled by a reference (module docstring): the query map
    subtracts it and the context carries the pieces of ``centres - reference``.

    Raises:
        ValueError: as :func:`attention_approximator`.

    Source: LHSL (NeurIPS 2025), single-head cross-attention is a universal approximator (the
    construction is reconstructed by the book; see the Sources and certainty page); check C18,
    Chapter 6.
    """
    from .attention import CrossAttention

    beta = _beta(beta)
    c, v = _centres_values(f, centres, None)
    v = v[:, 0]
    N, D = c.shape
    k = v.shape[1]
    s = max(D + 1, k)
    _check_layer("the cross-attention lookup", D, _token_width(D, token_dim), D + 1, 1, s, k)
    check_size("the cross-attention lookup: the context's entries", N * (D + 1 + k), _attention.MAX_PARAMETERS,
               "lib.attention.MAX_PARAMETERS")
    ref = _reference(c)
    d, A_terms, B_terms = _query_copy(D, token_dim, D + 1, 1, 1)
    C = np.zeros((D + 1, 1))
    if ref is not None:
        C[:D, 0] = -ref
    C[D, 0] = 1.0
    W_Q, W_K = np.zeros((s, D + 1)), np.zeros((s, D + 1 + k))
    W_V, W_O = np.zeros((s, D + 1 + k)), np.zeros((k, s))
    for r in range(D + 1):
        W_Q[r, r], W_K[r, r] = beta, 1.0
    for r in range(k):
        W_V[r, D + 1 + r], W_O[r, r] = 1.0, 1.0
    attention = CrossAttention(D + 1, D + 1 + k, head_dim=s, d_out=k).set_weights(W_Q=W_Q, W_K=W_K, W_V=W_V, W_O=W_O)
    context = torch.from_numpy(context_tokens(c, v, reference=ref))
    return CrossLookup(SumOfLinear(A_terms, B_terms, C), context, attention, token_dim=d, beta=beta, centres=c,
                       values=v, reference=ref)


def context_length(f: Callable, dim: int, errors, kappa: float, points, *, m_max: int) -> pd.DataFrame:
    r"""The shortest context (``N = m^dim`` key tokens) whose lookup reaches each target sup error.

    For ``m = 1, ..., m_max`` the sup error over ``points`` of the lookup with ``beta = kappa m^2``
    (:func:`soft_lookup`, the layer's closed form) is measured; for each target in ``errors`` the
    smallest ``m`` that reaches it is reported (NaN when none up to ``m_max`` does).

    Args:
        f: maps ``(P, dim)`` to ``(P,)``; dim: input dimension; errors: target sup errors;
        kappa: > 0; points: test points ``(P, dim)``; m_max: largest grid tried.

    Returns:
        DataFrame with ``dim``, ``error`` (target), ``m``, ``N`` (= ``m**dim``) and ``sup`` (the
        sup error over ``points`` at that ``m``), one row per target; ``m``, ``N`` and ``sup`` are
        NaN when no grid up to ``m_max`` reaches the target.

    Raises:
        ValueError: as :func:`error_row`, or when the largest grid, ``m_max**dim`` cells, exceeds
            :data:`MAX_CELLS` (checked before the first grid is built).

    Source: the curse of dimensionality of LHSL's construction (the rate is inferred by the book;
    see the Sources and certainty page). Chapter 6.
    """
    x = as_float_array("points", points, min_ndim=2)
    dim = positive_int("dim", dim)
    if x.shape[1] != dim:
        raise ValueError(f"points must have shape (P, {dim}), got {x.shape}")
    m_max = positive_int("m_max", m_max)
    check_size(f"context_length: the largest grid, {m_max}**{dim} cells",
               m_max**dim if dim * m_max.bit_length() <= 64 else math.inf, MAX_CELLS, "lib.maxaffine.MAX_CELLS")
    if not callable(f):
        raise ValueError(f"f must be callable, got {short_repr(f)}")
    kappa = finite_real("kappa", kappa, minimum=0.0, strict=True)
    errors = _errors(errors)
    target = as_float_array("f(points)", f(x))
    if target.shape != (len(x),):
        raise ValueError(f"f must map (P, {dim}) to (P,), got {target.shape}")
    sups = []
    for m in range(1, m_max + 1):
        c = grid_centres(m, dim)
        sups.append(float(np.abs(soft_lookup(x, c, as_float_array("f(centres)", f(c)), kappa * m * m) - target).max()))
    return _shortest(np.array(sups), errors, dim)


def _shortest(sups: np.ndarray, errors: np.ndarray, dim: int) -> pd.DataFrame:
    """For each target error the smallest ``m`` (1-based index into ``sups``) whose sup reaches it, and that sup."""
    rows = []
    for e in errors:
        hit = np.flatnonzero(sups <= e)
        m = float(hit[0] + 1) if len(hit) else np.nan
        rows.append({"dim": dim, "error": float(e), "m": m, "N": m ** dim,
                     "sup": float(sups[hit[0]]) if len(hit) else np.nan})
    return pd.DataFrame(rows)


def _errors(errors) -> np.ndarray:
    errors = as_float_array("errors", errors, min_ndim=0).reshape(-1) if not isinstance(errors, str) else None
    if errors is None or (errors < 0).any():
        raise ValueError(f"errors must be finite target errors >= 0, got {short_repr(errors)}")
    return errors


def _factor_lookup(g: Callable, t: np.ndarray, m: int, kappa: float) -> tuple[np.ndarray, np.ndarray]:
    """The 1-D lookup of ``g`` on the ``m``-grid of [0, 1] at ``beta = kappa m^2`` and ``g`` itself, at ``t`` ``(P,)``."""
    c = grid_centres(m, 1)
    values = as_float_array("g(centres)", g(c))
    target = as_float_array("g(points)", g(t[:, None]))
    if values.shape != (m,) or target.shape != t.shape:
        raise ValueError(f"g must map (P, 1) points to (P,), got {values.shape} for {m} points")
    return soft_lookup(t[:, None], c, values, kappa * m * m), target


def product_lookup(g: Callable, points, m: int, kappa: float) -> np.ndarray:
    r"""The grid lookup of a product target :math:`f(x) = \prod_k g(x_k)`, from one-dimensional lookups.

    On the tensor grid of ``m**D`` cell centres of :math:`[0,1]^D` (:func:`grid_centres`) with
    :math:`\beta = \kappa m^2`, the softmax weights are Gaussian in the distance
    (:func:`nadaraya_watson`), :math:`e^{-\beta\|x - c\|^2} = \prod_k e^{-\beta (x_k - c_k)^2}`, and
    so is their normaliser; the stored values :math:`f(c) = \prod_k g(c_k)` factorise too. So
    :func:`soft_lookup` of ``f`` equals the product over the coordinates of the 1-D lookup of ``g``
    on ``m`` cells, at a cost of ``O(P D m)`` instead of ``O(P m**D)``.

    Args:
        g: the one-dimensional factor, mapping points ``(P, 1)`` to ``(P,)``.
        points: ``(P, D)`` in :math:`[0,1]^D`; m: cells per axis; kappa: > 0.

    Returns:
        float64 ``(P,)``.

    Raises:
        ValueError: for a non-callable ``g`` or one of the wrong shape, points not of shape
            ``(P, D)``, ``m`` not a positive integer, ``kappa <= 0``.

    Source: the book's reconstruction of LHSL's construction (Chapter 5); used by Chapter 6's
    context-length check B6.1.
    """
    if not callable(g):
        raise ValueError(f"g must be callable, got {short_repr(g)}")
    x = as_float_array("points", points, min_ndim=2)
    if x.ndim != 2:
        raise ValueError(f"points must have shape (P, D), got {x.shape}")
    m = positive_int("m", m)
    kappa = finite_real("kappa", kappa, minimum=0.0, strict=True)
    out = np.ones(len(x))
    for k in range(x.shape[1]):
        out = out * _factor_lookup(g, x[:, k], m, kappa)[0]
    return out


def product_context_length(g: Callable, dim: int, errors, kappa: float, *, m_max: int,
                           resolution: int = 201) -> pd.DataFrame:
    r"""As :func:`context_length` for :math:`f(x) = \prod_k g(x_k)`, with the error taken over a lattice.

    The error of the lookup (:func:`product_lookup`) is measured on the tensor lattice of
    ``resolution`` evenly spaced points per axis of :math:`[0,1]^D`, faces and corners included:
    ``resolution**dim`` points, the same spacing in every dimension, where a random sample of
    fixed size covers the cube more thinly as ``dim`` grows. The largest error on the lattice is a
    lower bound on the sup error, computed from ``resolution`` values of the 1-D lookup per axis.

    Args:
        g: the one-dimensional factor, mapping ``(P, 1)`` to ``(P,)``; dim: input dimension;
        errors: target sup errors (>= 0); kappa: > 0; m_max: largest grid tried;
        resolution: lattice points per axis (>= 2).

    Returns:
        DataFrame with ``dim``, ``error`` (target), ``m``, ``N`` (= ``m**dim``) and ``sup`` (the
        largest error on the lattice at that ``m``), one row per target; ``m``, ``N`` and ``sup``
        are NaN when no grid up to ``m_max`` reaches the target.

    Raises:
        ValueError: as :func:`product_lookup`, for bad ``errors``, and when the lattice,
            ``resolution**dim`` points, exceeds :data:`MAX_MATRIX_ENTRIES`.

    Source: the curse of dimensionality of the book's reconstruction of LHSL's construction
    (the rate is the book's). Chapter 6, check B6.1.
    """
    if not callable(g):
        raise ValueError(f"g must be callable, got {short_repr(g)}")
    dim = positive_int("dim", dim)
    m_max = positive_int("m_max", m_max)
    check_size(f"product_context_length: the largest grid, {m_max} cells per axis", m_max, MAX_CELLS,
               "lib.maxaffine.MAX_CELLS")
    resolution = positive_int("resolution", resolution, minimum=2)
    check_size(f"product_context_length: the lattice, {resolution}**{dim} points",
               resolution**dim if dim * resolution.bit_length() <= 64 else math.inf, MAX_MATRIX_ENTRIES,
               "lib.maxaffine.MAX_MATRIX_ENTRIES")
    kappa = finite_real("kappa", kappa, minimum=0.0, strict=True)
    errors = _errors(errors)
    t = np.linspace(0.0, 1.0, resolution)
    sups = []
    for m in range(1, m_max + 1):
        look, target = _factor_lookup(g, t, m, kappa)
        approx, exact = np.ones(1), np.ones(1)
        for _ in range(dim - 1):
            approx, exact = np.multiply.outer(approx, look).ravel(), np.multiply.outer(exact, target).ravel()
        sups.append(float(np.abs(np.multiply.outer(look, approx) - np.multiply.outer(target, exact)).max()))
    return _shortest(np.array(sups), errors, dim)


#: Test points of Chapter 5's uniform-error table (C15) and Chapter 6's cross-attention table
#: (C18), per book mode; drawn by :func:`rate_points`.
RATE_POINTS = {"fast": 10_000, "full": 20_000}
#: Seed of :func:`rate_points`' generator.
RATE_SEED = 15


def rate_points(mode: str | None = None) -> np.ndarray:
    """The random test points shared by Chapter 5's check C15 and Chapter 6's check C18.

    Both chapters evaluate the lookup of the same target on these points, so their error tables
    agree entry by entry.

    Args:
        mode: ``"fast"`` or ``"full"``; default :data:`lib.config.MODE`.

    Returns:
        float64 ``(RATE_POINTS[mode], 2)``, uniform on :math:`[0,1]^2`, drawn from
        ``numpy.random.default_rng(RATE_SEED)``: the same points on every call.

    Raises:
        ValueError: for an unknown ``mode``.

    Source: the book's checks C15 (Chapter 5) and C18 (Chapter 6).
    """
    from . import config

    mode = config.MODE if mode is None else mode
    if mode not in RATE_POINTS:
        raise ValueError(f"mode must be one of {tuple(RATE_POINTS)}, got {short_repr(mode)}")
    return np.random.default_rng(RATE_SEED).uniform(size=(RATE_POINTS[mode], 2))


def error_row(f: Callable, m: int, kappa: float | None, points, *, low: float = 0.0, high: float = 1.0) -> dict:
    r"""One row of Chapter 5's error tables: the lookup on the ``m``-grid against ``f`` on ``points``.

    Args:
        f: maps points ``(P, D)`` to ``(P,)`` or ``(P, k)``.
        m: cells per axis (``N = m^D``); kappa: :math:`\beta = \kappa m^2`, or ``None`` for
            the hard partition only.
        points: test points ``(P, D)`` in the domain.

    Returns:
        dict with ``m``, ``kappa``, ``beta``, ``sup`` and ``L2`` (the soft layer's largest and
        root-mean-square error over ``points``, through :func:`soft_lookup`; the hard
        partition's when ``kappa`` is None),
        ``sup hard``, ``L2 hard`` and ``mean |P-E|1`` (mean :func:`indicator_error`, NaN when
        hard).

    Raises:
        ValueError: as :func:`grid_centres` and :func:`attention_approximator`.

    Source: the book's checks C15 and C16 of LHSL's self-attention theorem. Chapter 5.
    """
    x = as_float_array("points", points, min_ndim=2)
    if x.ndim != 2:
        raise ValueError(f"points must have shape (P, D), got {x.shape}")
    c = grid_centres(m, x.shape[1], low, high)
    if not callable(f):
        raise ValueError(f"f must be callable, got {short_repr(f)}")
    target = as_float_array("f(points)", f(x)).reshape(len(x), -1)
    values = as_float_array("f(centres)", f(c)).reshape(len(c), -1)
    hard = hard_lookup(x, c, values)
    row = {"m": m, "kappa": np.nan if kappa is None else float(kappa), "beta": np.nan,
           "sup hard": float(np.abs(hard - target).max()),
           "L2 hard": float(np.sqrt(((hard - target) ** 2).sum(axis=1).mean())), "mean |P-E|1": np.nan}
    if kappa is None:
        return row | {"sup": row["sup hard"], "L2": row["L2 hard"]}
    beta = finite_real("kappa", kappa, minimum=0.0, strict=True) * m ** 2
    err = soft_lookup(x, c, values, beta) - target
    xs, cs = _translate(x, c, _reference(c))
    A, b = voronoi_affine(cs)
    return row | {"beta": beta, "sup": float(np.abs(err).max()), "L2": float(np.sqrt((err ** 2).sum(axis=1).mean())),
                  "mean |P-E|1": float(indicator_error(xs, A, b, beta).mean())}


# --- LHSL Appendix B: the scale of W_K and W_Q against training noise (check C19) -------------

#: Our settings of the noise experiment per book mode (LHSL Appendix B does not give the paper's).
NOISE_SETTINGS = {
    "fast": {"train_images": 3000, "test_images": 2000, "epochs": 5, "batch_size": 64, "lr": 3e-3,
             "d_model": 32, "qk_init": 0.1, "label_ratios": [0.0, 0.1, 0.2, 0.3, 0.4, 0.5],
             "input_sigmas": [0.0, 0.5, 1.0], "seeds": [0, 1, 2]},
    "full": {"train_images": None, "test_images": None, "epochs": 10, "batch_size": 128, "lr": 1e-3,
             "d_model": 64, "qk_init": 0.1, "label_ratios": [0.0, 0.1, 0.2, 0.3, 0.4, 0.5],
             "input_sigmas": [0.0, 0.25, 0.5, 1.0], "seeds": [0, 1, 2]},
}

#: Datasets of the experiment, their loaders' names and patch sizes (7x7 on 28x28, 8x8 on 32x32).
NOISE_DATASETS = {"mnist": ("load_mnist", 7), "fashion-mnist": ("load_fashion_mnist", 7), "cifar10": ("load_cifar10", 8)}


def noise_datasets() -> list[str]:
    """The datasets the noise experiment runs on this machine: MNIST, Fashion-MNIST, and CIFAR-10 when available.

    CIFAR-10 is in no package registry; it is included when ``BOOK_CIFAR10`` names a folder with
    its six python batch files (:func:`lib.data.cifar10_root`).

    Raises:
        ValueError: when ``BOOK_CIFAR10`` is set but does not hold the six batch files (a
            mistyped path should not silently drop the dataset).

    Source: LHSL Appendix B's three datasets. Chapter 5.
    """
    import os

    from . import data

    if data.cifar10_root() is not None:
        return [*NOISE_DATASETS]
    if os.environ.get("BOOK_CIFAR10", "").strip():
        raise ValueError(f"BOOK_CIFAR10={os.environ['BOOK_CIFAR10']!r} does not hold the CIFAR-10 python batches "
                         f"(data_batch_1..5, test_batch); fix or unset it")
    return ["mnist", "fashion-mnist"]


def _image_split(dataset: str, split: str, count: int | None, name: str = "count") -> tuple[np.ndarray, np.ndarray]:
    """``count`` images of ``split`` (seeded draw, corpus order kept; all when None), pixels in [0, 1]."""
    from . import data

    images, labels = getattr(data, NOISE_DATASETS[dataset][0])(split)
    if count is not None:
        count = positive_int(name, count, maximum=len(images))
        keep = np.sort(np.random.default_rng(0).choice(len(images), count, replace=False))
        images, labels = images[keep], labels[keep]
    return images.astype(np.float32) / 255.0, np.array(labels, dtype=np.int64)


def noise_experiment(dataset: str, kind: str, level: float, seed: int, *, train_images: int | None,
                     test_images: int | None, epochs: int, batch_size: int, lr: float, d_model: int,
                     qk_init: float, **_) -> dict:
    r"""Train one :class:`lib.attention.PatchAttentionClassifier` on noisy data; return its attention norms.

    The training images (a seeded subset of ``train_images``, or all) get either symmetric label
    flips at ratio ``level`` (:func:`lib.data.add_label_noise`) or Gaussian pixel noise of standard
    deviation ``level`` on the ``[0, 1]`` scale (:func:`lib.data.add_input_noise`, drawn once);
    inputs are then standardised with the clean training set's mean and standard deviation.
    Training is :func:`lib.training.fit` (Adam, constant ``lr``, fixed shuffled batches).

    Args:
        dataset: ``"mnist"``, ``"fashion-mnist"`` or ``"cifar10"`` (:data:`NOISE_DATASETS`).
        kind: ``"label"`` or ``"input"``; level: the ratio or the standard deviation.
        seed: seed of the noise, the initialisation and the batch order.
        train_images, test_images, epochs, batch_size, lr, d_model, qk_init: the settings of
            :data:`NOISE_SETTINGS` (``None`` images means the whole split; other keys are ignored).

    Returns:
        dict with ``dataset``, ``kind``, ``level``, ``seed``, the norms of
        :meth:`~lib.attention.PatchAttentionClassifier.attention_norms`, ``entropy`` (mean
        attention entropy on up to 1,000 clean test images, nats), ``train_acc`` (last epoch,
        against the noisy labels), ``test_acc`` (clean test images) and ``seconds``.

    Raises:
        ValueError: for an unknown dataset or kind, a level outside the noise functions' range,
            or bad sizes; the loaders' errors when a dataset is not installed.

    Source: LHSL (NeurIPS 2025) Appendix B, Figure 2 (every setting here is the book's own; see
    the Sources and certainty page). Check C19, Chapter 5.
    """
    from . import data, training
    from .attention import PatchAttentionClassifier

    if not isinstance(dataset, str) or dataset not in NOISE_DATASETS:
        raise ValueError(f"dataset must be one of {tuple(NOISE_DATASETS)}, got {short_repr(dataset)}")
    if not isinstance(kind, str) or kind not in ("label", "input"):
        raise ValueError(f"kind must be 'label' or 'input', got {short_repr(kind)}")
    seed = positive_int("seed", seed, minimum=0, maximum=2**31)
    x, y = _image_split(dataset, "train", train_images, "train_images")
    xt, yt = _image_split(dataset, "test", test_images, "test_images")
    mean, std = float(x.mean()), float(x.std())
    if kind == "label":
        y = data.add_label_noise(y, level, 10, seed)
    else:
        x = data.add_input_noise(x, level, seed)
    x, xt = torch.tensor((x - mean) / std), torch.tensor((xt - mean) / std)
    y, yt = torch.tensor(y), torch.tensor(yt)
    batch_size = positive_int("batch_size", batch_size)
    order = torch.randperm(len(x), generator=torch.Generator().manual_seed(seed))
    batches = [(x[order[i:i + batch_size]], y[order[i:i + batch_size]]) for i in range(0, len(x), batch_size)]
    model = PatchAttentionClassifier(image_size=x.shape[1], patch=NOISE_DATASETS[dataset][1],
                                     channels=1 if x.ndim == 3 else x.shape[3], d_model=d_model,
                                     qk_init=qk_init, seed=seed)
    history = training.fit(model, batches, epochs=epochs, lr=lr, seed=seed, progress=False)
    test = [(xt[i:i + 1000], yt[i:i + 1000]) for i in range(0, len(xt), 1000)]
    return {"dataset": dataset, "kind": kind, "level": float(level), "seed": seed, **model.attention_norms(),
            "entropy": model.attention_entropy(xt[:1000]), "train_acc": float(history.train_acc.iloc[-1]),
            "test_acc": training.evaluate(model, test), "seconds": float(history.seconds.iloc[-1])}


def noise_runs(dataset: str, mode: str | None = None) -> pd.DataFrame:
    """Every run of :func:`noise_experiment` for one dataset, both noise kinds, in ``mode``'s settings.

    Label-noise runs at every ratio and seed of :data:`NOISE_SETTINGS`, input-noise runs at every
    non-zero standard deviation; the clean runs (level 0) are the same models for both kinds, so
    they are trained once and appear under both. Fast mode computes in place. Full mode goes
    through :mod:`lib.artifacts` as :func:`lib.memorization.conll_run` does: a stored result is
    loaded, a missing one computed and stored, except inside a book build, which stops with the
    command that computes it (``make full``).

    Returns:
        A DataFrame of the dicts of :func:`noise_experiment`, one row per kind, level and seed.

    Raises:
        ValueError: for an unknown mode or dataset; RuntimeError: in a full-mode build whose
            result is missing.

    Source: LHSL Appendix B, Figure 2. Chapter 5 and ``tools/full_mode.py``.
    """
    from . import artifacts, config

    mode = config.MODE if mode is None else mode
    if mode not in config.MODES:
        raise ValueError(f"mode must be one of {config.MODES}, got {mode!r}")
    if not isinstance(dataset, str) or dataset not in NOISE_DATASETS:
        raise ValueError(f"dataset must be one of {tuple(NOISE_DATASETS)}, got {short_repr(dataset)}")
    settings = NOISE_SETTINGS[mode]
    runs = [("label", level, seed) for level in settings["label_ratios"] for seed in settings["seeds"]]
    runs += [("input", level, seed) for level in settings["input_sigmas"] if level > 0 for seed in settings["seeds"]]

    def compute() -> list[dict]:
        return [noise_experiment(dataset, kind, level, seed, **settings)
                for kind, level, seed in config.progress(runs, desc=f"{dataset} noise")]

    if mode == "fast":
        rows = compute()
    else:
        name, params = f"noise-{dataset}", {**settings, "dataset": dataset}
        if config.IN_BUILD and not artifacts.artifact_path(name, params).exists():
            raise RuntimeError(f"the full-mode result {name} has not been computed for this code; run `make full` "
                               f"(hours on a CPU) before `BOOK_MODE=full make book`")
        rows = artifacts.load_or_compute(name, params, compute)
    clean = [r | {"kind": "input"} for r in rows if r["kind"] == "label" and r["level"] == 0]
    return pd.DataFrame(rows + clean)


def trend_test(levels, values, *, permutations: int = 20_000, seed: int = 0) -> tuple[float, float]:
    r"""Spearman's rank correlation of ``values`` with ``levels`` and its one-sided permutation p-value for a decline.

    :math:`\rho` is Pearson's correlation of the average ranks (ties share ranks, so replicate runs
    at one level are handled). The p-value is the share of random relabellings (``levels``
    permuted, ``numpy.random.default_rng(seed)``) whose :math:`\rho` is at most the observed one,
    counting the observed labelling itself: :math:`(1 + \#\{\rho_\pi \le \rho\})/(1 + \text{permutations})`.

    Args:
        levels: noise levels ``(R,)``, one per run (repeated for seeds).
        values: the measured norms ``(R,)``.
        permutations: random relabellings (>= 100).

    Returns:
        ``(rho, p)``: floats, ``rho`` in ``[-1, 1]`` and ``p`` in ``(0, 1]``.

    Raises:
        ValueError: for arrays of different lengths, fewer than 3 runs, non-finite, complex or
            bool entries, constant ``levels`` or ``values``, too few or too many permutations, or
            more than :data:`MAX_MATRIX_ENTRIES` permuted ranks (``permutations * R``).

    Source: the book's trend test for LHSL's "declines monotonically" (Appendix B, Figure 2),
    check C19, Chapter 5.
    """
    x = as_float_array("levels", levels)
    y = as_float_array("values", values)
    if x.ndim != 1 or x.shape != y.shape or len(x) < 3:
        raise ValueError(f"levels and values must be 1-D of one length >= 3, got shapes {x.shape} and {y.shape}")
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        raise ValueError("levels and values must not be constant")
    permutations = positive_int("permutations", permutations, minimum=100, maximum=1_000_000)
    check_size(f"trend_test: the permuted ranks, {permutations:,} x {len(x)}", permutations * len(x),
               MAX_MATRIX_ENTRIES, "lib.maxaffine.MAX_MATRIX_ENTRIES")
    rx, ry = pd.Series(x).rank().to_numpy(), pd.Series(y).rank().to_numpy()
    rx, ry = rx - rx.mean(), ry - ry.mean()
    scale = np.sqrt((rx ** 2).sum() * (ry ** 2).sum())
    rho = float(rx @ ry / scale)
    rng = np.random.default_rng(positive_int("seed", seed, minimum=0))
    shuffled = rng.permuted(np.broadcast_to(rx, (permutations, len(rx))), axis=1)
    null = shuffled @ ry / scale
    return rho, float((1 + np.sum(null <= rho + 1e-12)) / (1 + permutations))
