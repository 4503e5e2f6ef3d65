r"""K&S Proposition 1 made executable: quantize, contextual mapping, lookup (Chapter 4).

A continuous permutation-equivariant map :math:`f` on :math:`[\text{low}, \text{high}]^{n\times d}`
is approximated by :math:`F^{(FF)}_2 \circ F^{(SA)} \circ F^{(FF)}_1`:

1. :func:`quantizer` — a residual ReLU layer mapping every token to a representative of its grid
   cell (spacing :math:`h = (\text{high} - \text{low})/m`), exact outside ramps of width ``tau``;
2. the rank-1 residual attention layer of K&S Theorem 2 (:class:`lib.contextual.RankOneAttention`)
   on the vocabulary of cell representatives — it gives every (quantized sequence, token) its
   context id;
3. a residual ReLU lookup layer that maps each context id to :math:`f` at the quantized sequence.

All three are residual, as K&S's layers are:
:math:`F^{(FF)}(Z) = Z + W_2 \sigma_R(W_1 Z + b_1 1^\top) + b_2 1^\top`. The two feed-forward
layers cancel their residual with two ReLU units per coordinate,
:math:`\sigma_R(z) - \sigma_R(-z) = z` (output weights :math:`-1` and :math:`+1`), so that each
computes exactly its staircase or interpolant; this choice is the book's.

The error is small in :math:`L_p` because the inputs where it is not — a token on a ramp, or two
tokens in one cell (the representatives then repeat, which Theorem 2 excludes) — have small
measure; it does not vanish in :math:`L_\infty`. The three stages are the book's reconstruction
of the construction behind K&S Proposition 1 (see the Sources and certainty page); the paper's own
quantization widths are not known, so the widths here are the book's choice.

Our lookup layer puts its ReLU knots *at* the sorted ids (piecewise-linear interpolation between
neighbouring ids, constant beyond the ends), so its output always lies within the range of the
table: on inputs outside the table the error is bounded by the range of :math:`f`. This choice is
ours; the bound holds for the floating-point output too (an output that rounding pushes past the
table's range is set to the range's end).

Builders check what they will allocate or enumerate first: :data:`MAX_TABLE_ENTRIES`,
:data:`lib.metrics.MAX_SAMPLE_ENTRIES`, :data:`MAX_MEASURE_BITS` and
:data:`lib.layers.MAX_PARAMETERS`.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

import mpmath
import numpy as np
import torch

from . import metrics
from ._geometry import grid_step, midpoints
from ._validate import (
    as_float_array,
    capped_comb,
    check_size,
    finite_real,
    flag,
    function,
    positive_int,
)
from .layers import MAX_PARAMETERS, FeedForward

__all__ = [
    "cell_representatives",
    "quantizer",
    "quantizer_float64_error",
    "duplicate_cell_measure",
    "ramp_measure",
    "KSApproximator",
    "ks_approximator",
    "check_equivariant",
    "bad_sets",
    "KSErrorRow",
    "ks_error_row",
    "PriceRow",
    "price_row",
    "MAX_TABLE_ENTRIES",
    "MAX_MEASURE_BITS",
]

#: Largest lookup table :func:`ks_approximator` builds: ``binom(m^d, n) n`` context ids.
MAX_TABLE_ENTRIES = 200_000
#: Largest size, in bits, of the exact rational :func:`duplicate_cell_measure` forms (about
#: ``n log2(m^d)``).
MAX_MEASURE_BITS = 2**20


_grid = grid_step  # the quantizer's grid is checked as every grid of lib is


def _ramp_width(tau, h: float) -> float:
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

    "Is 0" is decided without rounding artefacts: the float64 centres carry a rounding error of
    at most about ``1.5 eps max(|low|, |high|)`` (``eps`` the float64 machine epsilon; the
    error of ``h``, of the product and of the sum), so a centre within ``4 eps max(|low|,
    |high|)`` of 0 is one whose exact value is 0 (``low = -0.21, high = 0.21, m = 3`` gives a
    float64 middle centre of ``-2.8e-17``) or is indistinguishable from it at this precision.

    Raises:
        ValueError: for ``m < 1``, non-finite bounds or ``high <= low``.

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
        A float64 residual :class:`~lib.layers.FeedForward` ``(..., d) -> (..., d)`` of hidden
        width ``2 (m - 1) d + 2 d`` (for ``m = 1`` it is the constant ``r_0``).

    Raises:
        ValueError: for non-positive ``m`` or ``d``, ``tau`` outside ``(0, h)`` (also NaN, bool or
            complex), bad bounds, or a layer of more than :data:`lib.layers.MAX_PARAMETERS`
            parameters (checked before anything is allocated).

    Source: K&S Proposition 1 (the first feed-forward layer quantizes the input, in the words of a
    report on the paper: quoted in shape); the construction is reconstructed by the book (see the
    Sources and certainty page). Chapter 4.
    """
    m, low, high, h = _grid(m, low, high)
    d = positive_int("d", d)
    tau = _ramp_width(tau, h)
    width = 2 * (m - 1) * d + 2 * d
    check_size(
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

    Raises:
        ValueError: as :func:`quantizer` for ``m``, ``tau`` and the bounds, and for a negative
            or non-finite ``x_max``.

    Source: the book's error analysis of its quantizer for K&S Proposition 1 (Chapter 4).
    """
    m, low, high, h = _grid(m, low, high)
    positive_int("d", d)
    tau = _ramp_width(tau, h)
    x_max = finite_real("x_max", x_max, minimum=0.0)
    u = 2.0**-53
    B = max(abs(low), abs(high), x_max) + tau
    w = 2 * (m - 1) + 2
    return u * B * max(h / tau, 1.0) * (4 * (m - 1) + 2 * w * w) + 2 * u * B


def duplicate_cell_measure(m: int, n: int, d: int) -> float:
    r"""Probability that two of ``n`` uniform tokens in ``[0,1]^d`` share one of the ``m^d`` cells.

    ``1 - \prod_{k=0}^{n-1} (1 - k / m^d)``, computed exactly in rationals (the birthday
    problem) and rounded once; 1 when ``n > m^d``.

    Raises:
        ValueError: for non-positive arguments, or when the exact rational would exceed
            :data:`MAX_MEASURE_BITS` bits (about ``n d log2(m)``; checked before computing).

    Source: the measure of the duplicate-cell set in the book's reading of K&S Proposition 1
    (Chapter 4).
    """
    m, n, d = positive_int("m", m), positive_int("n", n), positive_int("d", d)
    log2_cells = d * math.log2(m)
    if n.bit_length() > log2_cells + 2:  # n >= 2^(bits - 1) > 2 m^d: more tokens than cells
        return 1.0
    check_size(
        f"duplicate_cell_measure({m}, {n}, {d}): the bits of the exact rational, n * log2(m^d)",
        math.ceil(n * log2_cells),
        MAX_MEASURE_BITS,
        "lib.approximation.MAX_MEASURE_BITS",
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
    ``1 - (m - 1) tau / (high - low)``; there are ``n d`` independent coordinates.

    Raises:
        ValueError: as :func:`quantizer`.
    """
    m, low, high, h = _grid(m, low, high)
    n, d = positive_int("n", n), positive_int("d", d)
    tau = _ramp_width(tau, h)
    return float(1 - (1 - (m - 1) * tau / (high - low)) ** (n * d))


def check_equivariant(
    f: Callable,
    n: int,
    d: int,
    *,
    low: float = 0.0,
    high: float = 1.0,
    probes: int = 8,
    seed: int = 0,
    tol: float = 1e-9,
) -> float:
    """Check on random probes that ``f(X P) = f(X) P`` (tokens permuted); return the largest
    deviation.

    Args:
        f: maps float64 ``(batch, n, d)`` (numpy) to ``(batch, n, d_out)``.
        n, d: sequence length and token dimension; low, high: where the probes are drawn.
        probes: random sequences, each checked under a random permutation.
        seed: seed of the probes; tol: allowed deviation relative to ``max(1, |f|)``.

    Returns:
        The largest relative deviation found (``<= tol``).

    Raises:
        ValueError: if ``f`` is not permutation equivariant on a probe (the deviation is given),
            or returns the wrong shape, non-finite, complex or bool values; for more probe
            entries than :data:`lib.metrics.MAX_SAMPLE_ENTRIES`.
    """
    rng = np.random.default_rng(positive_int("seed", seed, minimum=0))
    sample, probes = metrics.uniform_sampler(n, d, low, high), positive_int("probes", probes)
    check_size(
        f"check_equivariant: probes={probes:,} sequences of n={n} tokens in dimension d={d}, "
        "the number of entries",
        probes * n * d,
        metrics.MAX_SAMPLE_ENTRIES,
        "lib.metrics.MAX_SAMPLE_ENTRIES",
    )
    X = sample(rng, probes)
    perms = np.array([rng.permutation(n) for _ in range(len(X))])
    Xp = np.take_along_axis(X, perms[:, :, None], axis=1)
    out, outp = metrics.outputs(f, X), metrics.outputs(f, Xp)
    dev = np.abs(outp - np.take_along_axis(out, perms[:, :, None], axis=1)).max() / max(
        1.0, np.abs(out).max()
    )
    if not dev <= finite_real("tol", tol, minimum=0.0):
        raise ValueError(
            f"f is not permutation equivariant: permuting the tokens of a probe changed its output "
            f"by {dev:.3g} (relative), above tol = {tol}"
        )
    return float(dev)


class KSApproximator:
    r""":math:`F^{(FF)}_2 \circ F^{(SA)} \circ F^{(FF)}_1` approximating ``f`` (K&S Proposition 1).

    Built by :func:`ks_approximator`; call it on float64 ``(batch, n, d)`` arrays. Attributes:
    ``quantizer`` (:func:`quantizer`, residual), ``attention`` (the rank-1 residual layer), ``v``
    (the direction the lookup projects ids on), ``knots`` and ``values`` (the lookup table,
    sorted projected ids and ``(M, d)`` targets), ``lookup`` (the residual lookup layer
    :math:`F^{(FF)}_2`: a float64 :class:`~lib.layers.FeedForward` when ``exact`` is False,
    else its weights ``W1, b1, W2, b2`` as nested lists of mpf, evaluated by
    :func:`lib.memorization.ffn_mp`), ``exact`` (whether the ids need mpmath), ``dps``,
    ``min_gap`` (smallest gap between table ids), ``max_weight`` (largest output weight of the
    lookup layer, in practice the largest change of slope between neighbouring ids; mpf when
    ``exact``), ``distinct64`` (how many of the table's ids float64 tells apart),
    ``conflicts64`` (how many pairs of table entries have equal float64 ids but different
    values: no layer that reads float64 ids can return both), ``m, n, d, tau, low, high``.
    """

    def __init__(self, **parts):
        self.__dict__.update(parts)

    @property
    def parameters(self) -> int:
        """Parameters of the three layers as built, read off their tensors
        (:func:`lib.memorization.parameter_count`: rank-1 factors counted as factors, nonzero
        feed-forward entries, repeated first-layer rows counted once)."""
        from .memorization import parameter_count

        return parameter_count(self.quantizer, self.attention, self.lookup)

    def quantize(self, X: np.ndarray) -> np.ndarray:
        """``F_FF1(X)``, with float64 rounding on cell interiors removed.

        On a cell interior the quantizer equals the representative exactly; evaluated in float64
        it is off by up to :func:`quantizer_float64_error` (about ``1e-16 h / tau`` times the
        width: the ramps' output weights ``h / tau`` multiply the rounding of their inputs), far
        more than the gaps between context ids. Coordinates within that bound (at least
        ``1e-9 h``) of a representative are therefore set to it (on a ramp this moves the output
        by at most that much).

        Raises:
            ValueError: if the bound reaches a quarter cell, ``h / 4``, where float64 can no
                longer tell which cell a coordinate is in (``tau`` too small for these inputs).
        """
        with torch.no_grad():
            Q = self.quantizer(torch.as_tensor(X)).numpy()
        reps = cell_representatives(self.m, self.low, self.high)
        nearest = reps[np.abs(Q[..., None] - reps).argmin(axis=-1)]
        h = (self.high - self.low) / self.m
        x_max = float(np.abs(X).max()) if np.size(X) else 0.0
        bound = quantizer_float64_error(self.m, self.d, self.tau, self.low, self.high, x_max)
        if not bound < h / 4:
            raise ValueError(
                f"tau={self.tau!r} is too small for float64: the quantizer's rounding error "
                f"bound {bound:.3g} on inputs up to {x_max:.3g} reaches a quarter cell "
                f"(h/4 = {h / 4:.3g}); use a larger tau"
            )
        snap = max(bound, 1e-9 * h)  # never below the 1e-9 h the book's tables were made with
        return np.where(np.abs(Q - nearest) <= snap, nearest, Q)

    def context_ids(self, X: np.ndarray):
        """Context ids ``F_SA(F_FF1(X))`` of every token: ``(batch * n, d)`` float64, or that many
        rows of mpf."""
        from . import exact

        X = as_float_array("X", X, min_ndim=3)
        if X.ndim != 3 or X.shape[1:] != (self.n, self.d):
            raise ValueError(f"X must have shape (batch, {self.n}, {self.d}), got {X.shape}")
        Q = self.quantize(X)
        if not self.exact:
            with torch.no_grad():
                return self.attention(torch.as_tensor(Q)).numpy().reshape(-1, self.d)
        return [row for out in exact.attention_mp(Q, self.attention, self.dps) for row in out]

    def raw(self, X) -> np.ndarray:
        """The network's output ``F_FF2(F_SA(F_FF1(X)))``, ``(batch * n, d)``, before the clamp that
        calling the approximator applies."""
        from .memorization import ffn_mp

        z = self.context_ids(X)
        if not self.exact:
            with torch.no_grad():
                return self.lookup(torch.as_tensor(z)).numpy()
        with mpmath.workdps(self.dps):
            return np.array([[float(x) for x in row] for row in ffn_mp(z, self.lookup)])

    def __call__(self, X) -> np.ndarray:
        """The approximation ``(batch, n, d)`` float64 at sequences ``X`` ``(batch, n, d)``.

        Every output coordinate lies within the range of its column of ``values`` (the table),
        in floating point too: the ReLU sum can overshoot an end of the range by rounding, and
        such an output is set to the end (others are returned as computed, :meth:`raw`).
        """
        out = self.raw(X)
        lo, hi = self.values.min(axis=0), self.values.max(axis=0)
        out = np.where(out < lo, lo, np.where(out > hi, hi, out))
        return out.reshape(-1, self.n, self.d)


def _pairs_within(keys: np.ndarray) -> int:
    """How many unordered pairs of rows of ``keys`` ``(M, k)`` are equal."""
    _, counts = np.unique(keys, axis=0, return_counts=True)
    return int((counts * (counts - 1) // 2).sum())


def _conflicting_pairs(ids: np.ndarray, values: np.ndarray) -> int:
    """Pairs of table entries whose ids ``(M,)`` are equal but whose values ``(M, k)`` differ.

    A layer that reads only the id gives both entries of such a pair the same output, so it
    cannot return both table values; pairs with equal ids and equal values do no harm.
    """
    ids = np.asarray(ids, dtype=float).reshape(-1, 1)
    values = np.asarray(values, dtype=float).reshape(len(ids), -1)
    return _pairs_within(ids) - _pairs_within(np.hstack([ids, values]))


def _slope_changes(knots, values) -> list:
    """Output weights of the knots-at-the-ids interpolant: the change of slope at each knot,
    ``(M, k)``.

    ``y(p) = y_1 + sum_j c_j relu(p - p_j)`` with slopes ``s_0 = 0``, ``s_j`` between knots ``j``
    and ``j + 1`` and ``s_M = 0`` (flat beyond the last knot), ``c_j = s_j - s_{j-1}``. Works for
    float or mpf knots (call inside ``workdps`` for mpf).
    """
    M, k = values.shape
    mp = not isinstance(knots, np.ndarray)
    zero = mpmath.mpf(0) if mp else 0.0
    cast = (lambda x: mpmath.mpf(float(x))) if mp else float
    slopes = [[zero] * k]
    slopes += [
        [
            (cast(values[j + 1, c]) - cast(values[j, c])) / (knots[j + 1] - knots[j])
            for c in range(k)
        ]
        for j in range(M - 1)
    ]
    slopes += [[zero] * k]
    return [
        [b - a for a, b in zip(s0, s1, strict=True)]
        for s0, s1 in zip(slopes, slopes[1:], strict=False)
    ]


def _lookup_weights(v: np.ndarray, knots, values: np.ndarray) -> dict:
    """``W1, b1, W2, b2`` of the residual lookup layer (nested lists; mpf where ``knots`` are mpf).

    Hidden units: ``M`` knots reading ``v . z``, then ``relu(z_c)`` and ``relu(-z_c)`` per
    coordinate ``c`` with output weights ``-1``, ``+1`` (they cancel the residual ``z``); ``b2`` is
    the first table value. The output is ``y(v . z)``, the interpolant of :func:`_slope_changes`.
    """
    M, d = values.shape
    mp = not isinstance(knots, np.ndarray)
    one, zero = (mpmath.mpf(1), mpmath.mpf(0)) if mp else (1.0, 0.0)
    coeffs = _slope_changes(knots, values)
    eye = [[one if i == c else zero for i in range(d)] for c in range(d)]
    W1 = [[float(x) for x in v] for _ in range(M)]
    for c in range(d):
        W1 += [eye[c], [-x for x in eye[c]]]
    b1 = [-x for x in knots] + [zero] * (2 * d)
    W2 = [
        [coeffs[j][c] for j in range(M)] + [x for i in range(d) for x in (-eye[c][i], eye[c][i])]
        for c in range(d)
    ]
    b2 = [mpmath.mpf(float(x)) if mp else float(x) for x in values[0]]
    return {"W1": W1, "b1": b1, "W2": W2, "b2": b2}


def _lookup_layer(v: np.ndarray, knots: np.ndarray, values: np.ndarray) -> FeedForward:
    """The float64 residual lookup layer ``(..., d) -> (..., d)``: hidden width ``M + 2d``, output
    ``y(v . z)``, the piecewise-linear interpolant of ``values`` at ``knots`` (within their
    range)."""
    w = _lookup_weights(v, knots, values)
    ffn = FeedForward(len(v), len(w["b1"]), len(v), residual=True)
    ffn.set_weights(**{k: np.array(val, dtype=float) for k, val in w.items()})
    return ffn


def ks_approximator(
    f: Callable,
    m: int,
    n: int,
    d: int,
    tau: float,
    *,
    low: float = 0.0,
    high: float = 1.0,
    gamma: float | None = None,
    exact: bool | None = None,
    seed: int = 0,
    tol: float = 1e-9,
) -> KSApproximator:
    r"""Build :math:`F^{(FF)}_2 \circ F^{(SA)} \circ F^{(FF)}_1` approximating ``f`` (K&S
    Proposition 1).

    The table holds one entry per (set of ``n`` distinct cells, token): ``C(m^d, n) n`` context
    ids and the values of ``f`` at the quantized sequences. Duplicate cells are not in the table
    (Theorem 2 excludes repeated tokens); inputs with them, or with a token on a ramp, get some
    value within the table's range. All three layers are residual (see the module docstring).

    Args:
        f: the target, float64 numpy ``(batch, n, d) -> (batch, n, d)`` (residual layers: the
            output lives in the token space), continuous and permutation equivariant (checked on
            random probes, relative tolerance ``tol``).
        m, n, d, tau, low, high: the grid (``m`` cells per axis) and ramp width, as
            :func:`quantizer`.
        gamma: the attention layer's inverse temperature; ``None`` is Theorem 2's value. Any
            value at which the table's ids are distinct gives the same approximation on the
            table; the theorem's value guarantees that they are.
        exact: evaluate ids in mpmath; ``None`` decides: float64 when its ids are at least
            ``1e-9`` apart relative to their size, else mpmath at a precision 30 digits beyond
            the construction's separation.
        seed: seed of the equivariance probes.

    Returns:
        A :class:`KSApproximator`.

    The working precision of the exact evaluation follows the construction: with the theorem's
    ``gamma``, 30 digits beyond the separation it guarantees (:func:`lib.contextual.theorem2_delta`,
    ``construction``); with a given ``gamma``, at least 60 digits and 30 beyond
    :math:`-\log_{10}` of the same separation formula at that ``gamma``,
    :math:`\epsilon(\log n)^2 e^{-2\gamma r_{\max}^2}/(4\gamma r_{\max}^2)` (the ids of a large
    ``gamma`` differ by about :math:`e^{-2\gamma r_{\max}^2}`).

    Raises:
        ValueError: for a non-equivariant ``f`` or one whose outputs are not ``d``-dimensional,
            bad grid arguments, ``n > m^d`` (no sequence of
            distinct cells), a table of more than :data:`MAX_TABLE_ENTRIES` entries (counted
            before anything is built), ``exact`` other than True, False or None, ``exact=False``
            when float64 cannot separate the ids, a precision above
            :data:`lib.exact.MAX_DPS`, or ids that collide even in exact arithmetic.

    Source: K&S (ICLR 2024) Proposition 1 (the statement's shape quoted); the construction is
    reconstructed by the book (see the Sources and certainty page). Chapter 4.
    """
    from . import contextual
    from . import exact as exact_mod

    function("f", f)
    m, low, high, h = _grid(m, low, high)
    n, d = positive_int("n", n, minimum=2), positive_int("d", d)
    exact = flag("exact", exact, allow_none=True)
    n_cells = (
        m**d if d * m.bit_length() <= 64 else math.inf
    )  # math.inf: far more than any table allows
    if n > n_cells:
        raise ValueError(
            f"n = {n} tokens cannot lie in distinct cells of a grid with only {n_cells} cells"
        )
    count = math.inf if n_cells == math.inf else capped_comb(n_cells, n, MAX_TABLE_ENTRIES) * n
    check_size(
        f"the lookup table of m = {m}, n = {n}, d = {d}: the number of entries "
        f"binom({m}^{d}, {n}) * {n}",
        count,
        MAX_TABLE_ENTRIES,
        "lib.approximation.MAX_TABLE_ENTRIES",
    )
    q = quantizer(m, d, tau, low, high)
    check_equivariant(f, n, d, low=low, high=high, seed=seed, tol=tol)
    reps1 = cell_representatives(m, low, high)
    cells = np.array(list(itertools.product(reps1, repeat=d)))  # (m^d, d)
    seqs = np.array(
        [cells[list(c)] for c in itertools.combinations(range(len(cells)), n)]
    )  # (S, n, d)
    targets = metrics.outputs(f, seqs)
    if targets.shape[2] != d:
        raise ValueError(
            f"f must map (batch, n, d) to (batch, n, d) with d = {d} (the layers are residual), "
            f"got d_out = {targets.shape[2]}"
        )
    targets = targets.reshape(len(seqs) * n, d)
    layer = contextual.RankOneAttention(cells, n, gamma=gamma, seed=seed)
    v = np.asarray(layer.w, dtype=float)
    parts = dict(
        quantizer=q, attention=layer, v=v, m=m, n=n, d=d, tau=float(tau), low=low, high=high
    )
    with torch.no_grad():
        z64 = layer(torch.as_tensor(seqs)).numpy().reshape(-1, d) @ v
    order = np.argsort(z64, kind="stable")
    gaps = np.diff(z64[order])
    resolved = len(z64) < 2 or gaps.min() > 1e-9 * max(1.0, np.abs(z64).max())
    parts["distinct64"] = len(np.unique(z64))
    parts["conflicts64"] = _conflicting_pairs(z64, targets)
    if exact is False and not resolved:
        raise ValueError(
            f"float64 cannot separate the {len(z64)} context ids (smallest gap {gaps.min():.3g}); "
            f"use exact=True or a smaller gamma"
        )
    if exact is None:
        exact = not resolved
    if not exact:
        knots, values = z64[order], targets[order]
        lookup = _lookup_layer(v, knots, values)
        return KSApproximator(
            **parts,
            exact=False,
            dps=15,
            knots=knots,
            values=values,
            min_gap=float(gaps.min()),
            lookup=lookup,
            max_weight=float(lookup.weights()["W2"].abs().max()),
        )
    if gamma is None:
        delta = contextual.theorem2_delta(
            n, len(cells), d, layer.r_min, layer.r_max, layer.eps, c_w=layer.c_w
        )
        dps = 30 + max(0, int(-delta.construction))
    else:
        r2 = layer.gamma * layer.r_max**2
        log10_gap = (
            math.log10(layer.eps)
            + 2 * math.log10(math.log(n))
            - math.log10(4 * r2)
            - 2 * r2 / math.log(10)
        )
        if not math.isfinite(log10_gap):  # gamma r_max^2 overflows float64: far beyond MAX_DPS
            raise ValueError(
                f"the context ids would need more than float64 can count digits "
                f"(gamma={layer.gamma:.3g}, r_max={layer.r_max:.3g}), more than "
                f"lib.exact.MAX_DPS={exact_mod.MAX_DPS}"
            )
        dps = max(60, 30 + math.ceil(-log10_gap))
    if dps > exact_mod.MAX_DPS:
        raise ValueError(
            f"the context ids need {dps:,} digits "
            f"(gamma={layer.gamma:.3g}, r_max={layer.r_max:.3g}), "
            f"more than lib.exact.MAX_DPS={exact_mod.MAX_DPS}"
        )
    with mpmath.workdps(dps):
        z = exact_mod.project_mp(
            [row for out in exact_mod.attention_mp(seqs, layer, dps) for row in out], v
        )
        order = sorted(range(len(z)), key=lambda i: z[i])
        knots = [z[i] for i in order]
        min_gap = min((b - a for a, b in zip(knots, knots[1:], strict=False)), default=mpmath.inf)
        if min_gap <= mpmath.mpf(10) ** (10 - dps):
            raise ValueError(
                f"context ids collide at {dps} digits (smallest gap {mpmath.nstr(min_gap, 5)})"
            )
        vals = targets[order]
        lookup = _lookup_weights(v, knots, vals)
        max_weight = max(abs(x) for row in lookup["W2"] for x in row)
    return KSApproximator(
        **parts,
        exact=True,
        dps=dps,
        knots=knots,
        values=np.array(vals),
        min_gap=min_gap,
        lookup=lookup,
        max_weight=max_weight,
    )


def bad_sets(
    X, m: int, tau: float, low: float = 0.0, high: float = 1.0
) -> tuple[np.ndarray, np.ndarray]:
    """Which sequences ``X`` ``(batch, n, d)`` have a coordinate on a ramp, and which two tokens in
    one cell.

    Decided against the grid lines ``t_j = low + j h`` and ramp starts ``t_j - tau`` exactly as
    :func:`quantizer` computes them in float64 (a coordinate on a line belongs to the cell above
    it), so rounding in ``(x - low) / h`` cannot put a point on the wrong side of a line.

    Returns:
        Two bool arrays ``(batch,)``: ``on_ramp`` (some coordinate in ``(t_j - tau, t_j)`` for a
        grid line ``t_j``) and ``duplicate`` (two tokens in the same cell).

    Raises:
        ValueError: as :func:`quantizer` (among them ``tau`` outside ``(0, h)``, NaN, bool or
            complex), or for ``X`` that is not a real ``(batch, n, d)`` array.

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
    return on_ramp.any(axis=(1, 2)), duplicate


@dataclass(frozen=True)
class KSErrorRow:
    """One row of Chapter 4's error table (:func:`ks_error_row`).

    Attributes:
        d, m: token dimension and grid size.
        l1, l1_se, l2, l2_se, sup: the :class:`lib.metrics.ErrorSummary` of the sample.
        sup_ramp, sup_duplicate, sup_clean: the largest error on the sampled sequences with a
            coordinate on a ramp, with two tokens in one cell (and none on a ramp), and on the
            others (NaN for an empty set).
        duplicate, ramp: the measures of :func:`duplicate_cell_measure` and :func:`ramp_measure`.
    """

    d: int
    m: int
    l1: float
    l1_se: float
    l2: float
    l2_se: float
    sup: float
    sup_ramp: float
    sup_duplicate: float
    sup_clean: float
    duplicate: float
    ramp: float


def ks_error_row(
    f: Callable,
    m: int,
    n: int,
    d: int,
    tau: float,
    *,
    gamma: float | None = None,
    n_samples: int = 4000,
    seed: int = 0,
) -> KSErrorRow:
    """The K&S approximator for grid ``m`` against ``f`` on ``n_samples`` uniform sequences.

    The sequences are those :func:`lib.metrics.lp_error` draws with the same ``seed``; the
    approximator is evaluated once.

    Returns:
        A :class:`KSErrorRow`.

    Raises:
        ValueError: as :func:`ks_approximator` and :func:`lib.metrics.lp_error`.

    Source: the :math:`L_p` distance of K&S Proposition 1 and the bad sets of the book's
    reconstruction. Chapter 4 (checks C12, B4.2) and the epilogue.
    """
    g = ks_approximator(f, m, n, d, tau, gamma=gamma, seed=seed)
    n_samples = positive_int("n_samples", n_samples, minimum=2)
    X = metrics.uniform_sampler(n, d)(
        np.random.default_rng(seed), n_samples
    )  # lp_error's samples for this seed
    errors = np.abs(metrics.outputs(f, X) - metrics.outputs(g, X, "g"))  # g evaluated once
    summary = metrics.error_summary(errors)
    worst = errors.reshape(n_samples, -1).max(axis=1)
    ramp, dup = bad_sets(X, m, tau)

    def top(mask):
        return float(worst[mask].max()) if mask.any() else float("nan")

    return KSErrorRow(
        d,
        m,
        summary.l1,
        summary.l1_se,
        summary.l2,
        summary.l2_se,
        summary.sup,
        top(ramp),
        top(dup & ~ramp),
        top(~ramp & ~dup),
        duplicate_cell_measure(m, n, d),
        ramp_measure(m, n, d, tau),
    )


@dataclass(frozen=True)
class PriceRow:
    """One row of Chapter 4's cost table (:func:`price_row`).

    Attributes:
        m: grid size; entries: table size; parameters: the approximator's parameter count.
        digits_theorem: the working precision the theorem's ids need (15: float64 sufficed).
        weight_theorem: the largest weight at the theorem's gamma, as text (:func:`lib.claims.fmt`
            of an mpmath number, which may lie beyond float64's range); log10_weight_theorem: its
            base-10 logarithm.
        gamma, weight_gamma: the practical inverse temperature and the largest weight there.
        distinct64_theorem: the distinct float64 ids at the theorem's gamma.
        conflicts64_theorem: pairs of entries whose float64 ids are equal and whose values differ.
    """

    m: int
    entries: int
    parameters: int
    digits_theorem: int
    weight_theorem: str
    log10_weight_theorem: float
    gamma: float
    weight_gamma: float
    distinct64_theorem: int
    conflicts64_theorem: int


def price_row(f: Callable, m: int, n: int, d: int, tau: float, *, gamma: float = 1.0) -> PriceRow:
    """One row of Chapter 4's cost table: the approximator at the theorem's gamma and at ``gamma``.

    Returns:
        A :class:`PriceRow`.

    Raises:
        ValueError: as :func:`ks_approximator`.

    Source: the construction of K&S Proposition 1 as the book reconstructs it. Chapter 4.
    """
    from .claims import fmt

    gamma = finite_real("gamma", gamma, minimum=0.0, strict=True)  # no default of its own here
    exact = ks_approximator(f, m, n, d, tau)
    practical = ks_approximator(f, m, n, d, tau, gamma=gamma)
    weight = mpmath.mpf(exact.max_weight)
    with mpmath.workdps(30):
        text, log10 = fmt(weight), float(mpmath.log10(weight))
    return PriceRow(
        m,
        len(practical.knots),
        practical.parameters,
        exact.dps if exact.exact else 15,
        text,
        log10,
        float(gamma),
        practical.max_weight,
        exact.distinct64,
        exact.conflicts64,
    )
