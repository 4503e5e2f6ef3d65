r"""Max-affine functions and their partitions: the geometry behind LHSL's lookup (Chapter 5).

Liu, Hu, Song & Liu (NeurIPS 2025; "LHSL") read one single-head softmax attention layer as a
**max-affine partition** of its input domain. This module holds the partition itself; the
attention layers that use it as a lookup table are in :mod:`lib.lookup`.

* A **max-affine function** :math:`\mathrm{MaxAff}(x) = \max_i (a_i^\top x + b_i)`
  (:func:`max_affine`, :func:`affine_scores`) cuts the domain into convex cells
  :math:`U_i = \{x : a_i^\top x + b_i \text{ is the max}\}`; its **partition indicator**
  :math:`E(x)` is the one-hot vector of the cell (:func:`cell_index`, :func:`partition_indicator`).
* Softmax of the scaled scores, :math:`\sigma(\beta y(x))`, approximates :math:`E(x)`
  (:func:`soft_indicator`, :func:`indicator_error`): with :math:`\Delta(x)` the top-two gap
  (:func:`margin`), :math:`\|\sigma(\beta y(x)) - E(x)\|_1 \le 2(N-1)e^{-\beta\Delta(x)}`
  (:func:`indicator_bound`).
* The Voronoi partition of a set of centres is max-affine (:func:`voronoi_affine`:
  :math:`a_i = 2c_i`, :math:`b_i = -\|c_i\|^2`); on a grid (:func:`grid_centres`) its margins have
  a closed form (:func:`grid_margin`), and :func:`grid_margin_summary` compares measured margins
  with it and with the proposition's bounds.

What is quoted and what is the book's: the definitions and the qualitative indicator lemma are
LHSL's (quoted from summaries of the paper; see the Sources and certainty page); the quantitative
bound and the grid margins are the book's.

Conventions: points are rows ``(..., D)`` of float64; ``A`` is ``(N, D)`` (row ``i`` is
:math:`a_i`), ``b`` is ``(N,)``. The functions that need only differences of scores (the cell,
the margin, the soft indicator and its error) score each point relative to its own top piece, so
float64 cancellation cannot pick the wrong cell wherever points and pieces lie (also when one
piece lies far from the others); :func:`affine_scores` and :func:`max_affine` return the scores
themselves, as written. Evaluations run in
chunks of at most ``CHUNK`` points and ``MAX_MATRIX_ENTRIES`` scores (both re-exported here).
"""

from __future__ import annotations

import math

import numpy as np
import torch
from numpy.typing import ArrayLike

from ._geometry import (
    CHUNK,
    FAR_FACTOR,
    MAX_MATRIX_ENTRIES,
    as_affine,
    as_beta,
    as_centres,
    as_points,
    chunked,
    grid_step,
    midpoints,
    scores_from_top,
)
from ._validate import as_float_array, positive_int, require_size, short_repr

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
    "grid_margin_summary",
    "CHUNK",
    "MAX_CELLS",
    "MAX_MATRIX_ENTRIES",
    "FAR_FACTOR",
]

#: Largest number of grid cells :func:`grid_centres` builds.
MAX_CELLS = 2**20


def affine_scores(x: ArrayLike, A: ArrayLike, b: ArrayLike) -> np.ndarray:
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

    Accuracy:
        Each score is the float64 evaluation of :math:`a_i^\top x + b_i`, within
        :math:`\gamma_{D+1}(|a_i|^\top |x| + |b_i|)` of the exact score of the float64 inputs
        (:math:`\gamma_n = nu/(1 - nu)`, :math:`u = 2^{-53}`; plus below :math:`D\,2^{-1074}`
        where products underflow), at any scale up to overflow, which is refused: far from the
        origin the error scales with the scores' size, not with their differences.

    Source: LHSL (NeurIPS 2025), the max-affine function. Chapter 5.
    """
    A, b = as_affine(A, b)
    return chunked(as_points(x, A.shape[1]), lambda p: p @ A.T + b, A.shape[0])


def max_affine(x: ArrayLike, A: ArrayLike, b: ArrayLike) -> np.ndarray:
    r""":math:`\mathrm{MaxAff}(x) = \max_i (a_i^\top x + b_i)`, float64 ``(...,)`` for ``x``
    ``(..., D)``.

    Args:
        x: points ``(..., D)``, real, finite.
        A: slopes ``(N, D)``; b: offsets ``(N,)``.

    Raises:
        ValueError: as :func:`affine_scores`.

    Accuracy:
        The largest of :func:`affine_scores`' computed scores: within
        :math:`\gamma_{D+1} \max_i (|a_i|^\top |x| + |b_i|)` of the exact maximum of the float64
        inputs (the maximum itself adds no rounding).

    Source: LHSL (NeurIPS 2025), definition of the max-affine function. Chapter 5.
    """
    A, b = as_affine(A, b)
    return chunked(as_points(x, A.shape[1]), lambda p: (p @ A.T + b).max(axis=1), A.shape[0])


def cell_index(x: ArrayLike, A: ArrayLike, b: ArrayLike) -> np.ndarray:
    r"""The cell :math:`i_x = \arg\max_i (a_i^\top x + b_i)` of each point, int64 ``(...,)``.

    Ties (boundaries, a set of measure zero) go to the lowest index. Each point is scored
    relative to its own top piece, with the pieces' differences formed first
    (``lib._geometry.scores_from_top``), so the cell is that of the pieces as given, wherever
    the points and the pieces lie, not that of their cancelled float64 scores.

    Args:
        x: points ``(..., D)``, real, finite.
        A: slopes ``(N, D)``; b: offsets ``(N,)``.

    Raises:
        ValueError: as :func:`affine_scores` (also when a relative score overflows).

    Accuracy:
        Exact: the arg max of the exact scores of the float64 inputs for every point whose top
        piece :math:`k` beats every other piece :math:`i` by more than
        :math:`\gamma_{D+2}(|a_i - a_k|^\top |x| + |b_i - b_k|)`, the rounding of its relative
        score, whatever the scale (probed from 1e-300 to 1e300 in size, pieces 1e-2 of their
        size apart); within that band of a boundary either cell may come back. Ties of the
        computed relative scores go to the lowest index.

    Source: LHSL (NeurIPS 2025), the max-affine partition. Chapter 5.
    """
    A, b = as_affine(A, b)
    x = as_points(x, A.shape[1])

    def best(p: np.ndarray) -> np.ndarray:
        r, k = scores_from_top(p, A, b)
        if not np.isfinite(r).all():
            raise ValueError("the affine scores overflow float64; rescale x or the affine pieces")
        return k

    return chunked(x, best, A.shape[0]).astype(np.int64)


def partition_indicator(x: ArrayLike, A: ArrayLike, b: ArrayLike) -> np.ndarray:
    r"""The partition indicator :math:`E(x) = e_{i_x}`: float64 one-hot ``(..., N)``.

    Ties go to the lowest index, as in :func:`cell_index`.

    Args:
        x: points ``(..., D)``, real, finite.
        A: slopes ``(N, D)``; b: offsets ``(N,)``.

    Raises:
        ValueError: as :func:`affine_scores`, or when points x pieces exceeds
            ``MAX_MATRIX_ENTRIES`` (checked before anything is built).

    Accuracy:
        Exact: entries are exactly 0.0 and 1.0, the 1.0 at :func:`cell_index`'s cell, so the
        indicator is that of the exact scores wherever :func:`cell_index` is.

    Source: LHSL (NeurIPS 2025), the partition indicator. Chapter 5.
    """
    A, b = as_affine(A, b)
    x = as_points(x, A.shape[1])
    N = A.shape[0]
    require_size(
        f"partition_indicator: the one-hot matrix of {x[..., 0].size:,} points x {N:,} pieces",
        x[..., 0].size * N,
        MAX_MATRIX_ENTRIES,
        "lib.maxaffine.MAX_MATRIX_ENTRIES",
    )
    idx = cell_index(x, A, b)
    out = np.zeros(idx.shape + (N,))
    np.put_along_axis(out, idx[..., None], 1.0, axis=-1)
    return out


def margin(x: ArrayLike, A: ArrayLike, b: ArrayLike) -> np.ndarray:
    r"""The top-two gap :math:`\Delta(x) = y_{(1)}(x) - y_{(2)}(x) \ge 0`, float64 ``(...,)``.

    ``inf`` when there is a single cell (no competitor); 0 on a boundary. A difference of
    scores, computed relative to each point's top piece (:func:`cell_index`): no cancellation
    wherever the points and pieces lie.

    Args:
        x: points ``(..., D)``, real, finite.
        A: slopes ``(N, D)``; b: offsets ``(N,)``.

    Raises:
        ValueError: as :func:`affine_scores`.

    Accuracy:
        Within :math:`\gamma_{D+2}\,\rho(x)` of the exact top-two gap of the float64 inputs,
        :math:`\rho(x) = \max_{i \ne k}(|a_i - a_k|^\top |x| + |b_i - b_k|)` with :math:`k` the
        top piece: an absolute error of the size of the pieces' differences, not of the
        scores, at any scale (probed from 1e-300 to 1e300 in size); a gap far below
        :math:`u\rho(x)` is not resolved. ``inf`` for a single piece is exact.

    Source: the margin of LHSL's indicator lemma in the book's quantitative form (reconstructed by
    the book; see the Sources and certainty page). Chapter 5.
    """
    A, b = as_affine(A, b)
    x = as_points(x, A.shape[1])
    if A.shape[0] == 1:
        return np.full(x.shape[:-1], np.inf)

    def gap(p: np.ndarray) -> np.ndarray:
        r, k = scores_from_top(p, A, b)
        r[np.arange(len(p)), k] = -np.inf
        return -r.max(axis=1)

    return chunked(x, gap, A.shape[0])


def soft_indicator(x: ArrayLike, A: ArrayLike, b: ArrayLike, beta: float) -> np.ndarray:
    r"""The attention weights :math:`\sigma(\beta\, y(x))` over the cells, float64 ``(..., N)``.

    Args:
        x: points ``(..., D)``; A, b: the max-affine pieces.
        beta: inverse temperature (> 0), multiplying the affine scores.

    The scores are taken relative to each point's top piece (:func:`cell_index`; softmax is
    unchanged by a per-point constant): no cancellation wherever the points and pieces lie.

    Raises:
        ValueError: as :func:`affine_scores`, or for a non-positive or non-finite ``beta``.

    Accuracy:
        Each weight of at least float64's smallest normal number (2.2e-308) is within relative
        error :math:`(N + 4)u + 2\beta\gamma_{D+2}\,\rho(x)` (:math:`\rho` as in :func:`margin`)
        of the exact softmax of :math:`\beta` times the exact scores of the float64 inputs
        (probed from 1e-300 to 1e300 in size); smaller weights come back subnormal or 0, with
        an absolute error below 2.3e-308.

    Source: LHSL (NeurIPS 2025), the lemma "attention approximates the partition indicator".
    Chapter 5.
    """
    beta = as_beta(beta)
    A, b = as_affine(A, b)
    x = as_points(x, A.shape[1])
    return chunked(
        x,
        lambda p: torch.softmax(beta * torch.from_numpy(scores_from_top(p, A, b)[0]), -1).numpy(),
        A.shape[0],
    )


def indicator_error(x: ArrayLike, A: ArrayLike, b: ArrayLike, beta: float) -> np.ndarray:
    r""":math:`\|\sigma(\beta y(x)) - E(x)\|_1`, computed without cancellation, float64 ``(...,)``.

    With :math:`s = \sum_{j \ne i_x} e^{\beta(y_j - y_{i_x})}` the error is exactly
    :math:`2s/(1+s) = 2\,\mathrm{sigmoid}(\log s)`; ``log s`` comes from torch's ``logsumexp``, so
    errors far below float64's ``1e-16`` resolution of :math:`1 - \sigma_{i_x}` are still resolved.

    Args:
        x: points ``(..., D)``; A, b: the max-affine pieces.
        beta: inverse temperature (> 0, finite).

    Raises:
        ValueError: as :func:`soft_indicator`.

    Accuracy:
        Relative error at most :math:`(N + 4)u + 2\beta\gamma_{D+2}\,\rho(x)` (:math:`\rho` as in
        :func:`margin`) against the exact :math:`\|\sigma(\beta y(x)) - E(x)\|_1` of the float64
        inputs wherever that is at least 2.2e-308 (probed from 1e-300 to 1e300 in size); smaller
        errors come back subnormal or 0, with an absolute error below 2.3e-308.

    Source: the left side of the book's quantitative form of LHSL's indicator lemma (check C14).
    Chapter 5.
    """
    beta = as_beta(beta)
    A, b = as_affine(A, b)
    x = as_points(x, A.shape[1])

    def err(p: np.ndarray) -> np.ndarray:
        r, k = scores_from_top(p, A, b)
        rel = beta * torch.from_numpy(r)
        rel[torch.arange(len(p)), torch.from_numpy(k)] = -math.inf
        return (2 * torch.sigmoid(torch.logsumexp(rel, dim=1))).numpy()

    return chunked(x, err, A.shape[0])


def indicator_bound(beta: float, margin: ArrayLike, n_cells: int) -> np.ndarray | float:
    r"""The bound :math:`2(N-1)e^{-\beta\Delta}` on :math:`\|\sigma(\beta y) - E\|_1` at margin
    :math:`\Delta`.

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

    Accuracy:
        Within relative error :math:`(\beta\Delta + 3)u` of the exact
        :math:`2(N-1)e^{-\beta\Delta}` of the float64 inputs wherever that is at least 2.2e-308;
        below, it underflows to a subnormal or 0 (exactly 0 for :math:`\Delta = \infty` or
        :math:`N = 1`). The float is not rounded upward, so it may lie below the exact bound by
        that relative amount.

    Source: the book's quantitative form of LHSL's indicator lemma (reconstructed by the book,
    see the Sources and certainty page; one line: every non-top weight is at most
    :math:`e^{-\beta\Delta}`). Check C14, Chapter 5.
    """
    beta = as_beta(beta)
    n_cells = positive_int("n_cells", n_cells, maximum=2**53)
    arr = np.asarray(as_float_array("margin", margin, min_ndim=0, finite=False), dtype=np.float64)
    if np.isnan(arr).any() or (arr < 0).any():
        raise ValueError(f"margin must be >= 0 (not NaN), got {short_repr(margin)}")
    out = 2.0 * (n_cells - 1) * np.exp(-beta * arr)
    return float(out) if out.ndim == 0 else out


def voronoi_affine(centres: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    r"""The max-affine pieces of the Voronoi partition of ``centres``: :math:`a_i = 2c_i`,
    :math:`b_i = -\|c_i\|^2`.

    Since :math:`a_i^\top x + b_i = \|x\|^2 - \|x - c_i\|^2`, the arg-max cell is the nearest
    centre. How far rounding moves the cells is under Accuracy.

    Args:
        centres: ``(N, D)`` real, finite, ``N >= 1``.

    Returns:
        The pair ``(A, b)`` of float64 arrays, of shapes ``(N, D)`` and ``(N,)``.

    Raises:
        ValueError: for an empty, non-finite, complex, bool or non-2-D ``centres``, or centres whose
            squared norms overflow float64.

    Accuracy:
        The pieces are float64 numbers: :math:`a_i = 2c_i` exactly, :math:`b_i` within
        :math:`\gamma_D \|c_i\|^2` (``D`` rounded squares summed; :math:`\gamma_D = Du/(1 - Du)`,
        :math:`u = 2^{-53}`), plus below :math:`D\,2^{-1075}` where squares underflow (centres
        below about 1e-154 in size: :math:`b_i = -0.0` for :math:`c_i = (10^{-200}, 0)`).
        So :func:`cell_index` of these pieces is the nearest centre :math:`c_i` of every point
        :math:`x` with :math:`\|x - c_j\|^2 - \|x - c_i\|^2 > \gamma_D(\|c_i\|^2 + \|c_j\|^2)`
        plus :func:`cell_index`'s own rounding for every rival :math:`j`: everywhere but a band
        of about :math:`10^{-16} \|c\|^2 / \|c_i - c_j\|` around each boundary. Near the origin
        that band is invisible; for centres far from the origin compared with their spacing it
        is not (the rounded :math:`b_i` no longer tell neighbours apart): translate centres and
        points by a nearby point first, or use :func:`lib.lookup.hard_lookup`, which works from
        distances.

    Source: the Voronoi partition of the book's reconstruction of LHSL's construction (see the
    Sources and certainty page); check C13. Chapter 5.
    """
    c = as_centres(centres)
    with np.errstate(over="ignore"):
        b = -(c**2).sum(axis=1)
    if not np.isfinite(b).all() or not np.isfinite(2.0 * c).all():
        raise ValueError(f"centres are too large: |c_i|^2 overflows float64, got {short_repr(c)}")
    return 2.0 * c, b


def grid_centres(m: int, dim: int, low: float = 0.0, high: float = 1.0) -> np.ndarray:
    r"""Centres of the :math:`m^{\text{dim}}` cubes of side :math:`h = (\text{high}-\text{low})/m`
    tiling :math:`[\text{low}, \text{high}]^{\text{dim}}`.

    Args:
        m: cells per axis (>= 1); dim: dimension (>= 1).
        low, high: the box, finite, ``high > low`` with ``high - low`` finite.

    Returns:
        float64 ``(m**dim, dim)``, the first coordinate varying slowest (``itertools.product``
        order).

    Raises:
        ValueError: for ``m < 1``, ``dim < 1``, ``high <= low``, non-finite bounds, more than
            :data:`MAX_CELLS` cells or more than ``MAX_MATRIX_ENTRIES`` coordinates (checked
            before anything is built).

    Accuracy:
        Each coordinate is within :math:`4u \max(|\text{low}|, |\text{high}|)` of the exact
        midpoint :math:`\text{low} + (i + \tfrac12)(\text{high} - \text{low})/m` (probed up to
        1e300 in size); cells narrower than that rounding give unevenly spaced or repeated
        centres.

    Source: the grid of the book's reconstruction of LHSL's construction; checks C13–C17.
    Chapters 5-6.
    """
    m, dim = positive_int("m", m), positive_int("dim", dim)
    cells = 1 if m == 1 else (m**dim if dim * math.log2(m) < 64 else math.inf)
    require_size(
        f"grid_centres({m}, {dim}): the number of cells m**dim", cells, MAX_CELLS, "MAX_CELLS"
    )
    require_size(
        f"grid_centres({m}, {dim}): the coordinates m**dim * dim",
        cells * dim,
        MAX_MATRIX_ENTRIES,
        "lib.maxaffine.MAX_MATRIX_ENTRIES",
    )
    axis, _ = midpoints(m, low, high)
    return np.stack(np.meshgrid(*([axis] * dim), indexing="ij"), axis=-1).reshape(-1, dim)


def grid_margin(x: ArrayLike, m: int, low: float = 0.0, high: float = 1.0) -> np.ndarray:
    r"""The closed form of :func:`margin` on the grid of :func:`grid_centres`: :math:`\Delta(x)`
    without the scores.

    For the Voronoi pieces of ``grid_centres(m, D, low, high)`` (spacing :math:`h = (\text{high} -
    \text{low})/m`), let :math:`c` be the centre of the cube holding :math:`x` and
    :math:`u = (x - c)/h \in [-\tfrac12, \tfrac12]^D`. The rival centre :math:`c + hk` scores
    :math:`h^2 \sum_j (k_j^2 - 2k_j u_j)` below :math:`c`, a sum of non-negative terms, so the
    runner-up is an axis neighbour :math:`c \pm h e_j` and

    .. math:: \Delta(x) = h^2 \min_j \min\{1 - 2u_j \text{ (if } c + he_j \text{ is a centre)},\;
       1 + 2u_j \text{ (if } c - he_j \text{ is one)}\}
       = 2h\,\mathrm{dist}(x, \text{nearest bisector}).

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
            ``x``, points outside ``[low, high]^D``, or a margin that overflows float64 (cells
            wider than about ``1e154``; ``inf`` is kept for "no rival") or, off every boundary,
            underflows below its normal range (cells narrower than about ``1.5e-154``).

    Accuracy:
        Within :math:`(8m + 16)u\,h^2` of the exact margin of the float64 point (:math:`h` the
        exact cell width; probed from boxes near 1e-3 wide at 1e6 to 1e150 in size); a margin
        that would underflow is refused, so 0 means a point on a boundary. ``inf`` for
        ``m = 1`` is exact.

    Source: the book's Proposition on grid margins, used to size the indicator bound of LHSL's
    lemma (check B5.2). Chapter 5.
    """
    m, low, high, h = grid_step(m, low, high)
    x = as_float_array("x", x)
    if ((x < low) | (x > high)).any():
        raise ValueError(
            f"x must lie in [low, high]^D = [{low}, {high}]^{x.shape[-1]}, got {short_repr(x)}"
        )
    if m == 1:
        return np.full(x.shape[:-1], np.inf)
    t = (x - low) / h
    cell = np.clip(np.floor(t), 0, m - 1)
    u = t - cell - 0.5
    up = np.where(cell < m - 1, 1.0 - 2.0 * u, np.inf)
    down = np.where(cell > 0, 1.0 + 2.0 * u, np.inf)
    with np.errstate(over="ignore", under="ignore"):
        out = h * (h * np.minimum(up, down).min(axis=-1))  # the factor is in [0, 2]: finite
    if not np.isfinite(out).all():  # inf here would read as "no rival", which m > 1 excludes
        raise ValueError(
            f"the margin (of order h^2) overflows float64 for the cell width h = (high - low) / m "
            f"= {h:.3g}; "
            "rescale the box"
        )
    if ((out < np.finfo(np.float64).tiny) & (np.minimum(up, down).min(axis=-1) > 0)).any():
        # a subnormal or zero margin off every boundary: digits lost, or read as "on a boundary"
        raise ValueError(
            f"the margin (of order h^2) underflows float64 for the cell width h = (high - low) / "
            f"m = {h:.3g}; rescale the box"
        )
    return out


def grid_margin_summary(x: ArrayLike, margins: ArrayLike, m: int) -> dict[str, float]:
    r"""Measured score margins on the grid of :math:`[0,1]^D` against the proposition on grid
    margins, in units of :math:`h^2 = 1/m^2`.

    The proposition (:func:`grid_margin`) says :math:`\Delta(x) \le h^2` in every cube with
    neighbours on both sides along some axis, :math:`\Delta(x) \le 2h^2` in the :math:`2^D`
    corner cubes, and that the set where :math:`\Delta(x) > h^2` has volume :math:`m^{-D}`,
    i.e. a share :math:`1/m^2` of the square for :math:`D = 2`. This summarises one grid.

    Args:
        x: points ``(P, D)`` in :math:`[0,1]^D`, real and finite, at least one of them outside
            the corner cubes.
        margins: their margins ``(P,)`` as measured (e.g. :func:`margin` of
            :func:`voronoi_affine` of ``grid_centres(m, D)``), real and finite.
        m: cells per axis, ``m >= 3`` (for ``m = 2`` every cube is a corner cube).

    Returns:
        A dict of Python floats (``m`` an int) with the keys ``m``; ``diff``, the largest
        :math:`|\text{margin} - \text{closed form}|`; ``max``, the largest margin; ``max outside
        corners``, the largest margin outside the corner cubes (all three over :math:`h^2`);
        ``share above h2``, the share of the points whose margin exceeds :math:`h^2`; and
        ``predicted share``, :math:`1/m^2`.

    Raises:
        ValueError: naming ``x`` (not points ``(P, D)`` in :math:`[0,1]^D`, or none outside
            the corner cubes), ``margins`` (not finite real of shape ``(P,)``, or a ratio to
            :math:`h^2` that overflows float64) or ``m`` (not an integer ``>= 3``), and as
            :func:`grid_margin`.

    Accuracy:
        ``diff`` carries :func:`grid_margin`'s error, within :math:`(8m + 16)u` (in units of
        :math:`h^2`, :math:`u = 2^{-53}`), plus one rounding; the other ratios are one float64
        division each (within :math:`u` relative of margin over the float64 :math:`1/m^2`);
        the shares are exact counts over ``P`` rounded once. Which cube is a corner cube is
        decided against the float64 :math:`1/m` and :math:`1 - 1/m`: exact except for points
        within an ulp of a cube face.

    Source: the book's Proposition on grid margins (check B5.2, Chapter 5).
    """
    m = positive_int("m", m, minimum=3)
    x = as_float_array("x", x, min_ndim=2)
    if x.ndim != 2:
        raise ValueError(f"x must be points (P, D), got shape {x.shape}")
    gap = as_float_array("margins", margins)
    if gap.shape != (len(x),):
        raise ValueError(f"margins must have shape (P,) = ({len(x)},), got {gap.shape}")
    closed = grid_margin(x, m)  # refuses points outside [0, 1]^D, naming x
    h2 = 1.0 / m**2
    corner = ((x < 1 / m) | (x > 1 - 1 / m)).all(axis=1)
    if corner.all():
        raise ValueError(f"x must hold a point outside the 2^D corner cubes of the {m}-grid")
    with np.errstate(over="ignore"):
        out = {
            "m": m,
            "diff": float(np.abs(gap - closed).max() / h2),
            "max": float(gap.max() / h2),
            "max outside corners": float(gap[~corner].max() / h2),
            "share above h2": float((gap > h2).mean()),
            "predicted share": 1.0 / m**2,
        }
    if not all(math.isfinite(v) for v in out.values()):
        raise ValueError(f"margins over h^2 = 1/{m}^2 overflow float64, got {short_repr(margins)}")
    return out


# --- LHSL Appendix B: the scale of W_K and W_Q against training noise (check C19) -------------
