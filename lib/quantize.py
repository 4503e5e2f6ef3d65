r"""The first layer of K&S Proposition 1: the quantizer, and the measure of the inputs it gets
wrong (Chapter 4).

:func:`quantizer` is a residual ReLU layer that maps every token of
:math:`[\text{low}, \text{high}]^d` to a representative of its grid cell
(:func:`cell_representatives`; spacing :math:`h = (\text{high} - \text{low})/m`), exactly outside
ramps of width ``tau``; :func:`quantizer_float64_error` bounds what float64 does to it. The
approximator of :mod:`lib.approximation` errs only on two bad sets, tokens on a ramp and two
tokens in one cell: :func:`ramp_measure` and :func:`duplicate_cell_measure` give their measures
exactly, :func:`bad_sets` tells which sampled sequences lie in them. :func:`jump` and
:func:`quantized_jump` are the target of Chapter 4's exercise on what a quantizer does to a
discontinuity. The quantizer's widths are the book's choice (see the Sources and certainty page).

:func:`duplicate_cell_measure` checks the size of its exact rational and its work first against
:data:`MAX_MEASURE_BITS` and :data:`MAX_MEASURE_WORK`.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np
import torch
from numpy.typing import ArrayLike

from ._geometry import grid_step, midpoints
from ._validate import (
    as_float_array,
    finite_real,
    positive_int,
    require_size,
)
from .feedforward import FeedForward
from .layers import MAX_PARAMETERS

if TYPE_CHECKING:
    pass

__all__ = [
    "cell_representatives",
    "quantizer",
    "quantizer_float64_error",
    "duplicate_cell_measure",
    "ramp_measure",
    "bad_sets",
    "jump",
    "quantized_jump",
    "MAX_MEASURE_BITS",
    "MAX_MEASURE_WORK",
]

#: Largest size, in bits, of the exact rational :func:`duplicate_cell_measure` forms (about
#: ``n log2(m^d)``).
MAX_MEASURE_BITS = 2**20

#: Largest work of :func:`duplicate_cell_measure`, counted as ``n`` products of a rational of up
#: to ``n log2(m^d)`` bits, so ``n`` times the bits. Measured at about 0.5 ns a unit on the book's
#: 2-core machine (``(3, 5000, 40)``, 1.6e9 units, 0.8 s): the limit keeps a call near half a
#: second.
MAX_MEASURE_WORK = 2**30


_grid = grid_step  # the quantizer's grid is checked as every grid of lib is


def _ramp_width(tau: float, h: float) -> float:
    """``tau`` checked as a ramp width: a finite real in ``(0, h)``."""
    tau = finite_real("tau", tau, minimum=0.0, strict=True)
    if not tau < h:
        raise ValueError(
            f"tau must be below the cell width h = (high - low) / m = {h}, got tau={tau}"
        )
    if not math.isfinite(h / tau):
        raise ValueError(
            f"tau={tau!r} is too small for the cell width h = (high - low) / m = {h}: the ramp's "
            "slope h / tau overflows float64"
        )
    return tau


def cell_representatives(m: int, low: float = 0.0, high: float = 1.0) -> np.ndarray:
    """The representative of each of the ``m`` cells along one axis, ``(m,)`` float64.

    The cell centres ``low + (i + 1/2) h``; when one of them is 0 (a token of norm 0 would break
    Theorem 2's ``r_min > 0``) that centre is set to exactly 0 and all are shifted by ``h/4``.

    "Is 0" is decided without rounding artefacts: a centre within ``4 eps max(|low|, |high|)``
    of 0 (``eps`` the float64 machine epsilon, :math:`2^{-52}`) is one whose exact value is 0
    (``low = -0.21, high = 0.21, m = 3`` gives a float64 middle centre of ``-2.8e-17``) or is
    indistinguishable from it at this precision.

    Args:
        m: cells per axis, a positive int (at most ``lib._geometry.MAX_MATRIX_ENTRIES``).
        low, high: finite reals with ``low < high`` and ``high - low`` finite.

    Raises:
        ValueError: for ``m < 1``, non-finite bounds or ``high <= low``.

    Accuracy:
        Each representative is within ``6u max(|low|, |high|)`` of its exact centre
        (:math:`7u` after the shift), :math:`u = 2^{-53}`, from the rounding of ``h``, of the
        product and of the sum (Fraction probes over 3000 grids at scales 1e-300..1e300: at
        most :math:`3.6u`); this stays below the ``4 eps = 8u`` test, so an exactly-zero centre
        is always detected. Absolute, not relative: centres near 0 have few correct digits.

    Source: the book's quantization for K&S Proposition 1 (Chapter 4).
    """
    reps, h = midpoints(m, low, high)
    low, high = float(low), float(high)
    zero = np.abs(reps) <= 4 * np.finfo(np.float64).eps * max(abs(low), abs(high))
    if not zero.any():
        return reps
    reps[zero] = 0.0
    return reps + h / 4


def quantizer(m: int, d: int, tau: float, low: float = 0.0, high: float = 1.0) -> FeedForward:
    r"""The first feed-forward layer of Proposition 1: every token to its cell's representative.

    Per coordinate,
    ``q(t) = r_0 + h \sum_{j=1}^{m-1} [\sigma_R(t - t_j + \tau) - \sigma_R(t - t_j)]/\tau`` with
    grid lines ``t_j = low + j h``: exactly the representative of the cell of ``t`` unless ``t``
    lies in a ramp ``(t_j - \tau, t_j)``, where it moves linearly to the next one; below ``low`` and
    above ``high`` it stays at the end representatives. The layer is residual,
    ``F(z) = z + W2 relu(W1 z + b1) + b2``, with two more units per coordinate, ``relu(t)`` and
    ``relu(-t)`` (output weights ``-1``, ``+1``), that subtract ``t``: so ``F(z) = q(z)``
    coordinatewise.

    Args:
        m: cells per axis; d: token dimension; tau: ramp width, ``0 < tau < h``;
        low, high: the cube ``[low, high]^d`` the grid covers.

    Returns:
        A float64 residual :class:`~lib.feedforward.FeedForward` ``(..., d) -> (..., d)`` of hidden
        width ``2 (m - 1) d + 2 d`` (for ``m = 1`` it is the constant ``r_0``).

    Raises:
        ValueError: for non-positive ``m`` or ``d``, ``tau`` outside ``(0, h)`` (also NaN, bool or
            complex), bad bounds, or a layer of more than :data:`lib.layers.MAX_PARAMETERS`
            parameters (checked before anything is allocated).

    Accuracy:
        The weights are exact (``0``, ``±1``) except ``b1`` (the float64 ramp starts and grid
        lines ``t_j - tau``, ``t_j = low + j h``), ``W2 = ±h / tau`` and ``b2 = r_0``, each
        correctly rounded; the layer's output per coordinate is within
        :func:`quantizer_float64_error` of :math:`q(t)` built from those float64 lines (rational
        probes at scales 1e-200..1e200: at most 5% of that bound). The construction is
        deterministic.

    Source: K&S Proposition 1 (the first feed-forward layer quantizes the input, in the words of a
    report on the paper: quoted in shape); the construction is reconstructed by the book (see the
    Sources and certainty page). Chapter 4.
    """
    m, low, high, h = _grid(m, low, high)
    d = positive_int("d", d)
    tau = _ramp_width(tau, h)
    width = 2 * (m - 1) * d + 2 * d
    require_size(
        f"quantizer({m}, {d}, ...): the number of parameters",
        FeedForward.parameter_count(d, width, d),
        MAX_PARAMETERS,
        "lib.layers.MAX_PARAMETERS",
    )
    reps = cell_representatives(m, low, high)
    lines = low + np.arange(1, m) * h
    W1, b1, W2 = np.zeros((width, d)), np.zeros(width), np.zeros((d, width))
    if m > 1:  # coordinate c, grid line j: units 2 ((m - 1) c + j) and the one after it
        first = (2 * (m - 1) * np.arange(d)[:, None] + 2 * np.arange(m - 1)[None, :]).ravel()
        coord = np.repeat(np.arange(d), m - 1)
        W1[first, coord] = W1[first + 1, coord] = 1.0
        b1[first], b1[first + 1] = np.tile(-(lines - tau), d), np.tile(-lines, d)
        W2[coord, first], W2[coord, first + 1] = h / tau, -h / tau
    cancel = 2 * (m - 1) * d + 2 * np.arange(d)  # relu(t) and relu(-t): t = relu(t) - relu(-t)
    W1[cancel, np.arange(d)], W1[cancel + 1, np.arange(d)] = 1.0, -1.0
    W2[np.arange(d), cancel], W2[np.arange(d), cancel + 1] = -1.0, 1.0
    ffn = FeedForward(d, width, d, residual=True)
    ffn.set_weights(W1=W1, b1=b1, W2=W2, b2=np.full(d, reps[0]))
    return ffn


def quantizer_float64_error(
    m: int, d: int, tau: float, low: float = 0.0, high: float = 1.0, x_max: float = 1.0
) -> float:
    r"""A bound on the float64 rounding error of :func:`quantizer`'s layer at one coordinate.

    Each grid line's pair of units computes :math:`t + b` with :math:`|b| \le B`, ``B =
    max(|low|, |high|, x_max) + tau``, each with an error of at most ``2 eps B`` (the bias and the
    sum), and their difference is multiplied by ``h / tau``; the output adds the ``w = 2(m-1) + 2``
    terms of one coordinate, each at most ``2 B max(h / tau, 1)`` in size, with an error of at
    most ``w eps`` times their total (any order of summation). Hence

    .. math:: E = \epsilon\, B\, \max(h/\tau, 1)\,\big(4(m-1) + 2 w^2\big) + 2 \epsilon B,

    ``eps`` the float64 unit roundoff :math:`2^{-53}`.

    Returns:
        ``E`` as a float (absolute, in the units of the tokens).

    Args:
        m, d, tau, low, high: as :func:`quantizer`.
        x_max: a finite real ``>= 0``, the largest magnitude of an input coordinate.

    Raises:
        ValueError: as :func:`quantizer` for ``m``, ``tau`` and the bounds, for a negative
            or non-finite ``x_max``, or when ``E`` overflows float64.

    Accuracy:
        ``E`` is the formula evaluated in float64, a relative rounding error of a few ``eps``,
        negligible against its slack (the layer's measured error stays below 5% of it). It bounds
        the error for inputs with :math:`|t| \le` ``x_max``; beyond that it does not apply.

    Source: the book's error analysis of its quantizer for K&S Proposition 1 (Chapter 4).
    """
    m, low, high, h = _grid(m, low, high)
    positive_int("d", d)
    tau = _ramp_width(tau, h)
    x_max = finite_real("x_max", x_max, minimum=0.0)
    u = 2.0**-53
    B = max(abs(low), abs(high), x_max) + tau
    w = 2 * (m - 1) + 2
    bound = u * B * max(h / tau, 1.0) * (4 * (m - 1) + 2 * w * w) + 2 * u * B
    if not math.isfinite(bound):
        raise ValueError(
            f"quantizer_float64_error({m}, {d}, tau={tau!r}, low={low!r}, high={high!r}, "
            f"x_max={x_max!r}): the bound overflows float64 (no float64 layer on this grid has "
            f"a finite error bound); rescale low, high and x_max"
        )
    return bound


def duplicate_cell_measure(m: int, n: int, d: int) -> float:
    r"""Probability that two of ``n`` uniform tokens in ``[0,1]^d`` share one of the ``m^d`` cells.

    ``1 - \prod_{k=0}^{n-1} (1 - k / m^d)``, computed exactly in rationals (the birthday
    problem) and rounded once; 1 when ``n > m^d``.

    Args:
        m, n, d: positive ints (cells per axis, tokens, dimension).

    Raises:
        ValueError: for non-positive arguments, or when the exact rational would exceed
            :data:`MAX_MEASURE_BITS` bits (about ``n d log2(m)``) or the work ``n`` times those
            bits :data:`MAX_MEASURE_WORK` (both checked before computing).

    Accuracy:
        Correctly rounded (one rounding of the exact rational), and exactly 1.0 when
        ``n > m^d``. Every accepted call takes under a second (the work guard; ``(3, 4000, 40)``,
        near the limit, about 0.5 s); ``(2, 26000, 40)``, 14 s before the guard, is refused.

    Source: the measure of the duplicate-cell set in the book's reading of K&S Proposition 1
    (Chapter 4).
    """
    m, n, d = positive_int("m", m), positive_int("n", n), positive_int("d", d)
    log2_cells = d * math.log2(m)
    if n.bit_length() > log2_cells + 2:  # n >= 2^(bits - 1) > 2 m^d: more tokens than cells
        return 1.0
    require_size(
        f"duplicate_cell_measure({m}, {n}, {d}): the bits of the exact rational, n * log2(m^d)",
        math.ceil(n * log2_cells),
        MAX_MEASURE_BITS,
        "lib.quantize.MAX_MEASURE_BITS",
    )
    require_size(
        f"duplicate_cell_measure({m}, {n}, {d}): the work, n times the bits of the rational",
        n * math.ceil(n * log2_cells),
        MAX_MEASURE_WORK,
        "lib.quantize.MAX_MEASURE_WORK",
    )
    cells = m**d
    if n > cells:
        return 1.0
    p = Fraction(1)
    for k in range(n):
        p *= Fraction(cells - k, cells)
    return float(1 - p)


def ramp_measure(m: int, n: int, d: int, tau: float, low: float = 0.0, high: float = 1.0) -> float:
    """Probability that some coordinate of ``n`` uniform tokens in ``[low, high]^d`` lies on a ramp.

    Each coordinate avoids the ``m - 1`` ramps of width ``tau`` with probability
    ``1 - q`` with ``q = (m - 1) tau / (high - low)``; there are ``n d`` independent
    coordinates, so the measure is ``1 - (1 - q)^(n d)``, evaluated as
    ``-expm1(n d log1p(-q))``: within a few ulp of the exact value for every accepted input,
    measures of 1e-17 and below included (the literal formula cancels to 0 there).

    Args:
        m, tau, low, high: as :func:`quantizer`; n, d: positive ints.

    Returns:
        The probability, a float in ``[0, 1]``.

    Raises:
        ValueError: as :func:`quantizer`.

    Accuracy:
        Relative error at most about :math:`10u`, :math:`u = 2^{-53}`, for every accepted input
        (mpmath probes, 3000 cases at scales 1e-300..1e300: at most :math:`4.5u`, reached where
        ``q`` is subnormal): ``q`` carries a few ``u`` and the measure's condition number in
        ``q`` is at most 1.

    Source: the ramp set of the book's reading of K&S Proposition 1 (Chapter 4).
    """
    m, low, high, h = _grid(m, low, high)
    n, d = positive_int("n", n), positive_int("d", d)
    tau = _ramp_width(tau, h)
    q = (m - 1) * tau / (high - low)
    return -math.expm1(n * d * math.log1p(-q)) if q < 1 else 1.0


def bad_sets(
    X: ArrayLike, m: int, tau: float, low: float = 0.0, high: float = 1.0
) -> tuple[np.ndarray, np.ndarray]:
    """Which sequences ``X`` ``(batch, n, d)`` have a coordinate on a ramp, and which two tokens in
    one cell.

    Decided against the grid lines ``t_j = low + j h`` and ramp starts ``t_j - tau`` exactly as
    :func:`quantizer` computes them in float64 (a coordinate on a line belongs to the cell above
    it), so rounding in ``(x - low) / h`` cannot put a point on the wrong side of a line.

    Returns:
        Two bool arrays ``(batch,)``, namely ``on_ramp`` (some coordinate in ``(t_j - tau, t_j)``
        for a grid line ``t_j``) and ``duplicate`` (two tokens in the same cell).

    Raises:
        ValueError: as :func:`quantizer` (among them ``tau`` outside ``(0, h)``, NaN, bool or
            complex), or for ``X`` that is not a real ``(batch, n, d)`` array.

    Accuracy:
        Exact and deterministic with respect to the float64 lines and ramp starts: ``on_ramp``
        is true exactly when the quantizer's unit ``relu(x - (t_j - tau))`` is positive while
        ``x < t_j`` (checked against the layer's hidden units), and ``duplicate`` compares
        integer cell indices. Coordinates outside ``[low, high]`` belong to the end cells.

    Source: the two small sets of the book's reading of K&S Proposition 1 (Chapter 4).
    """
    m, low, high, h = _grid(m, low, high)
    tau = _ramp_width(tau, h)
    X = as_float_array("X", X, min_ndim=3)
    if X.ndim != 3:
        raise ValueError(f"X must have shape (batch, n, d), got {X.shape}")
    lines = low + np.arange(1, m) * h  # the quantizer's grid lines
    cells = np.searchsorted(lines, X, side="right")  # lines at or below x: the cell, 0 .. m - 1
    if m > 1:
        above = lines[np.minimum(cells, m - 2)]  # the next line up (where there is one)
        on_ramp = (cells < m - 1) & (X > above - tau)  # the quantizer's relu(x - (t - tau)) > 0
    else:
        on_ramp = np.zeros(X.shape, dtype=bool)
    duplicate = np.array([len({tuple(c) for c in seq}) < len(seq) for seq in cells])
    # ndarray.any with axes returns an array; numpy's stub also allows a numpy bool
    return on_ramp.any(axis=(1, 2)), duplicate  # type: ignore[return-value]


def jump(X: ArrayLike, a: float) -> np.ndarray:
    r"""The jump at ``a``, entrywise: :math:`f(x) = 1` for :math:`x \ge a`, else 0.

    The discontinuous target of Chapter 4's exercise ``ex-ua-step`` (with ``a = 1/3``), which
    :func:`quantized_jump` composes with the quantizer; K&S Proposition 1 does not cover it.

    Args:
        X: real array of any shape (sequences ``(batch, n, d)`` in the chapter), finite.
        a: where the jump lies, a finite real.

    Returns:
        float64 array of ``X``'s shape, each entry 0.0 or 1.0.

    Raises:
        ValueError: if ``X`` is not a real array with finite entries (bool, complex, NaN and
            infinity are refused), or ``a`` is not a finite real.

    Accuracy:
        Exact: one float64 comparison of each entry with ``a`` (``a`` rounded once to float64,
        so ``a = 1/3`` is the float nearest to it).

    Source: the book's exercise on Chapter 4's quantizer (not from the papers).
    """
    X = as_float_array("X", X)
    a = finite_real("a", a)
    return (X >= a).astype(float)


def quantized_jump(
    X: ArrayLike, m: int, tau: float, a: float, low: float = 0.0, high: float = 1.0
) -> np.ndarray:
    r"""The jump of :func:`jump` after the quantizer: :math:`g(x) = f(q(x))`, entrywise.

    ``q`` is :func:`quantizer` with ``m`` cells per axis and ramps of width ``tau`` on
    ``[low, high]``, applied to each token of ``X`` (token dimension ``d = X.shape[-1]``), and
    ``f`` the jump at ``a``. Off the ramps ``g`` is constant on each cell and equals ``f`` at the
    cell's representative; it differs from ``f`` only between ``a`` and where ``q`` crosses it.

    Args:
        X: real array ``(..., d)`` of tokens, finite.
        m, tau, low, high: the quantizer's grid and ramp width, as :func:`quantizer`.
        a: where the jump lies, a finite real.

    Returns:
        float64 array of ``X``'s shape, each entry 0.0 or 1.0.

    Raises:
        ValueError: as :func:`quantizer` for ``m``, ``tau``, ``low`` and ``high`` (also a layer
            of more than :data:`lib.layers.MAX_PARAMETERS` parameters), as :func:`jump` for
            ``a``, if ``X`` is not a finite real array with at least one axis, or when the
            layer's sums overflow float64 on ``X`` (a grid far wider than its ramps).

    Accuracy:
        Exact with respect to the float64 quantizer: the comparison is exact, and ``q`` is
        within :func:`quantizer_float64_error` (with ``x_max = max|X|``) of the exact staircase,
        so only points whose quantized value lies within that error of ``a`` (on a ramp) can
        differ from the exact composition; for every finite ``X`` on which the layer does not
        overflow (outside ``[low, high]`` ``q`` is the end representative).

    Source: the book's exercise ``ex-ua-step`` on Chapter 4's quantizer (K&S Proposition 1's
    first layer, reconstructed).
    """
    X = as_float_array("X", X, min_ndim=1)
    a = finite_real("a", a)
    q = quantizer(m, X.shape[-1], tau, low, high)
    try:
        with torch.no_grad():
            quantized = q(torch.as_tensor(X)).numpy()
    except ValueError as exc:  # the layer's sums overflow: a grid too wide for its ramps
        raise ValueError(
            f"quantized_jump(X, m={m}, tau={tau!r}, low={low!r}, high={high!r}): {exc}; "
            "rescale X, low and high"
        ) from None
    return jump(quantized, a)
