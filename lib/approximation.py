r"""K&S Proposition 1 made executable: quantize, contextual mapping, lookup (Chapter 4).

A continuous permutation-equivariant map :math:`f` on :math:`[\text{low}, \text{high}]^{n\times d}`
is approximated by :math:`F^{(FF)}_2 \circ F^{(SA)} \circ F^{(FF)}_1`:

1. :func:`lib.quantize.quantizer` — a residual ReLU layer mapping every token to a representative
   of its grid cell (spacing :math:`h = (\text{high} - \text{low})/m`), exact outside ramps of
   width ``tau``;
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
:data:`lib.metrics.MAX_SAMPLE_ENTRIES`, :data:`lib.quantize.MAX_MEASURE_BITS` and
:data:`lib.layers.MAX_PARAMETERS`.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import mpmath
import numpy as np
import torch
from numpy.typing import ArrayLike

from . import metrics
from ._geometry import CHUNK_ENTRIES, grid_step
from ._validate import (
    as_float_array,
    capped_comb,
    finite_real,
    flag,
    function,
    positive_int,
    require_size,
)
from .feedforward import FeedForward
from .quantize import (
    _ramp_width,
    bad_sets,
    cell_representatives,
    quantizer,
    quantizer_float64_error,
)

if TYPE_CHECKING:
    from .contextual import RankOneAttention

__all__ = [
    "KSApproximator",
    "ks_approximator",
    "require_equivariant",
    "error_along_line",
    "MAX_TABLE_ENTRIES",
]

#: Largest lookup table :func:`ks_approximator` builds, in context ids (``binom(m^d, n) n``).
MAX_TABLE_ENTRIES = 200_000


_grid = grid_step  # the quantizer's grid is checked as every grid of lib is


def require_equivariant(
    f: Callable,
    n: int,
    d: int,
    *,
    low: float = 0.0,
    high: float = 1.0,
    probes: int = 8,
    seed: int = 0,
    tol: float = 1e-9,
) -> None:
    r"""Refuse ``f`` unless ``f(X P) = f(X) P`` (tokens permuted) on random probes: the input guard
    of :func:`ks_approximator`, whose theorem assumes a permutation-equivariant target.

    Args:
        f: maps float64 ``(batch, n, d)`` (numpy) to ``(batch, n, d_out)``.
        n, d: sequence length and token dimension; low, high: where the probes are drawn.
        probes: random sequences, each compared with its image under a random permutation.
        seed: seed of the probes; tol: allowed deviation relative to ``max(1, |f|)``.

    Raises:
        ValueError: if ``f`` is not permutation equivariant on a probe (the deviation is given),
            or returns the wrong shape, non-finite, complex or bool values; for more probe
            entries than :data:`lib.metrics.MAX_SAMPLE_ENTRIES`.

    Accuracy:
        Exact as a test of the probes only: ``f`` is refused exactly when the largest
        deviation :math:`|f(XP) - f(X)P|` over the probes, relative to
        :math:`\max(1, \max|f(X)|)` and computed in float64 (a few :math:`u`), exceeds ``tol``.
        An ``f`` that is equivariant on the probes but not elsewhere passes.
    """
    rng = np.random.default_rng(positive_int("seed", seed, minimum=0))
    sample, probes = metrics.uniform_sampler(n, d, low, high), positive_int("probes", probes)
    require_size(
        f"require_equivariant: probes={probes:,} sequences of n={n} tokens in dimension d={d}, "
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


class KSApproximator:
    r""":math:`F^{(FF)}_2 \circ F^{(SA)} \circ F^{(FF)}_1` approximating ``f`` (K&S Proposition 1).

    Built by :func:`ks_approximator`; call it on float64 ``(batch, n, d)`` arrays. Attributes:
    ``quantizer`` (:func:`lib.quantize.quantizer`, residual), ``attention`` (the rank-1 residual
    layer), ``v`` (the direction the lookup projects ids on), ``knots`` and ``values`` (the lookup
    table, sorted projected ids and ``(M, d)`` targets), ``lookup`` (the residual lookup layer
    :math:`F^{(FF)}_2`: a float64 :class:`~lib.feedforward.FeedForward` when ``exact`` is False,
    else its weights ``W1, b1, W2, b2`` as nested lists of mpf, evaluated by
    :func:`lib.interpolation.ffn_mp`), ``exact`` (whether the ids need mpmath), ``dps``, ``min_gap``
    (smallest gap between table ids), ``max_weight`` (largest output weight of the lookup layer, in
    practice the largest change of slope between neighbouring ids; mpf when ``exact``),
    ``distinct64`` (how many of the table's ids float64 tells apart),
    ``conflicts64`` (how many pairs of table entries have equal float64 ids but different
    values: no layer that reads float64 ids can return both), ``m, n, d, tau, low, high``.

    Raises:
        ValueError: when called, for ``X`` not of shape ``(batch, n, d)`` or not finite real,
            or a ``tau`` too small for float64 at these inputs (:meth:`quantize`).

    Accuracy:
        Every output coordinate lies within the range of its column of ``values``, exactly.
        At a sequence of tokens in distinct cells, off the ramps, the output is the table
        value of :math:`f` at the quantized sequence: within :math:`u` relative when ``exact``
        (ids, lookup at ``dps`` digits, then rounded to float64; observed equal), and to the
        float64 rounding of the three layers otherwise, about :math:`u` times ``max_weight``
        times the spread of the ids (observed :math:`24u \max|f|` for ``m = 4``, ``n = 3``,
        ``d = 1``). Elsewhere only the range is guaranteed.
    """

    # The parts ks_approximator passes (see the docstring); the lookup layer and its knots are
    # float64 (a FeedForward, an array) or mpf (nested lists) as ``exact`` says.
    quantizer: FeedForward
    attention: RankOneAttention
    v: np.ndarray
    knots: Any
    values: np.ndarray
    lookup: Any
    exact: bool
    dps: int
    min_gap: Any
    max_weight: Any
    distinct64: int
    conflicts64: int
    m: int
    n: int
    d: int
    tau: float
    low: float
    high: float

    def __init__(self, **parts: Any) -> None:
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

        On a cell interior the quantizer equals the representative exactly; evaluated in float64 it
        is off by up to :func:`lib.quantize.quantizer_float64_error` (about ``1e-16 h / tau`` times
        the width: the ramps' output weights ``h / tau`` multiply the rounding of their inputs), far
        more than the gaps between context ids. Coordinates within that bound (at least ``1e-9 h``)
        of a representative are therefore set to it (on a ramp this moves the output by at most that
        much).

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

    def context_ids(self, X: ArrayLike) -> np.ndarray | list[Any]:
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

    def raw(self, X: ArrayLike) -> np.ndarray:
        """The network's output ``F_FF2(F_SA(F_FF1(X)))``, ``(batch * n, d)``, before the clamp that
        calling the approximator applies."""
        from .interpolation import ffn_mp

        z = self.context_ids(X)
        if not self.exact:
            # the hidden layer has one unit per table entry: a block of rows at a time keeps its
            # (rows, entries) activations within lib._geometry.CHUNK_ENTRIES
            rows = max(1, CHUNK_ENTRIES // max(1, len(self.knots)))
            with torch.no_grad():
                return np.concatenate(
                    [self.lookup(torch.as_tensor(z[i : i + rows])).numpy()
                     for i in range(0, len(z), rows)]
                    or [np.zeros((0, self.d))]
                )  # fmt: skip
        with mpmath.workdps(self.dps):
            return np.array([[float(x) for x in row] for row in ffn_mp(z, self.lookup)])

    def __call__(self, X: ArrayLike) -> np.ndarray:
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


def _slope_changes(knots: np.ndarray | list[Any], values: np.ndarray) -> list[list[Any]]:
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


def _lookup_weights(
    v: np.ndarray, knots: np.ndarray | list[Any], values: np.ndarray
) -> dict[str, list[Any]]:
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
            output lives in the token space), continuous and permutation equivariant
            (:func:`require_equivariant` on random probes, relative tolerance ``tol``).
        m, n, d, tau, low, high: the grid (``m`` cells per axis) and ramp width, as
            :func:`lib.quantize.quantizer`.
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

    Accuracy:
        As :class:`KSApproximator`. ``exact=None`` picks float64 only when the table's ids are
        more than ``1e-9`` times :math:`\max(1, \max|\text{id}|)` apart; the exact ids are
        computed at ``dps`` digits and refused when two lie within :math:`10^{10 - \text{dps}}`.

    Source: K&S (ICLR 2024) Proposition 1 (the statement's shape quoted); the construction is
    reconstructed by the book (see the Sources and certainty page). Chapter 4.
    """
    from . import contextual

    function("f", f)
    m, low, high, h = _grid(m, low, high)
    n, d = positive_int("n", n, minimum=2), positive_int("d", d)
    exact = flag("exact", exact, allow_none=True)
    _require_table_size(m, n, d)
    q = quantizer(m, d, tau, low, high)
    require_equivariant(f, n, d, low=low, high=high, seed=seed, tol=tol)
    cells, seqs, targets = _table(f, m, n, d, low, high)
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
    dps = _exact_dps(layer, gamma, n, len(cells), d)
    return _exact_approximator(parts, layer, seqs, v, targets, dps)


def _require_table_size(m: int, n: int, d: int) -> None:
    """Refuse, before anything is built, ``n`` tokens in distinct cells of a grid of fewer than
    ``n`` cells, or a table of more than :data:`MAX_TABLE_ENTRIES` entries (``binom(m^d, n) n``)."""
    n_cells = (
        m**d if d * m.bit_length() <= 64 else math.inf
    )  # math.inf: far more than any table allows
    if n > n_cells:
        raise ValueError(
            f"n = {n} tokens cannot lie in distinct cells of a grid with only {n_cells} cells"
        )
    # n_cells is an int where capped_comb is called (math.inf is taken care of first)
    count = math.inf if n_cells == math.inf else capped_comb(n_cells, n, MAX_TABLE_ENTRIES) * n  # type: ignore[arg-type]
    require_size(
        f"the lookup table of m = {m}, n = {n}, d = {d}: the number of entries "
        f"binom({m}^{d}, {n}) * {n}",
        count,
        MAX_TABLE_ENTRIES,
        "lib.approximation.MAX_TABLE_ENTRIES",
    )


def _table(
    f: Callable, m: int, n: int, d: int, low: float, high: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The lookup table of :func:`ks_approximator`: the cell representatives ``(m^d, d)``, every
    sequence of ``n`` distinct cells ``(S, n, d)`` and ``f`` there, one row per token ``(S n, d)``;
    ValueError when ``f``'s outputs are not ``d``-dimensional."""
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
    return cells, seqs, targets.reshape(len(seqs) * n, d)


def _exact_dps(layer: RankOneAttention, gamma: float | None, n: int, n_vocab: int, d: int) -> int:
    """The digits of :func:`ks_approximator`'s exact ids: 30 beyond the construction's separation
    (its docstring); ValueError beyond float64's count of digits or :data:`lib.exact.MAX_DPS`."""
    from . import contextual
    from . import exact as exact_mod

    if gamma is None:
        delta = contextual.theorem2_delta(
            n, n_vocab, d, layer.r_min, layer.r_max, layer.eps, c_w=layer.c_w
        )
        dps = exact_mod.GUARD_DIGITS + max(0, int(-delta.construction))
    else:
        r2 = layer.gamma * layer.r_max * layer.r_max  # gamma first: r_max**2 may overflow
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
        dps = max(60, exact_mod.GUARD_DIGITS + math.ceil(-log10_gap))
    if dps > exact_mod.MAX_DPS:
        raise ValueError(
            f"the context ids need {dps:,} digits "
            f"(gamma={layer.gamma:.3g}, r_max={layer.r_max:.3g}), "
            f"more than lib.exact.MAX_DPS={exact_mod.MAX_DPS}"
        )
    return dps


def _exact_approximator(
    parts: dict[str, Any],
    layer: RankOneAttention,
    seqs: np.ndarray,
    v: np.ndarray,
    targets: np.ndarray,
    dps: int,
) -> KSApproximator:
    """:func:`ks_approximator`'s table at ``dps`` digits: the exact ids of ``seqs`` projected on
    ``v``, sorted, the lookup's mpf weights; ValueError when two ids collide at ``dps`` digits."""
    from . import exact as exact_mod

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


def error_along_line(
    f: Callable,
    m: int,
    others: ArrayLike,
    tau: float,
    *,
    gamma: float | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """K&S's approximator of ``f`` along a line through the input space: the first token moves
    across ``[0, 1]``, the others stay fixed; the output and error at the first token, and
    which inputs lie in the two bad sets.

    The approximator is :func:`ks_approximator` on ``[0, 1]`` with scalar tokens (``d = 1``),
    ``n = 1 + len(others)`` tokens and ``m`` cells per axis. The line is sampled at 201 evenly
    spaced points and 7 more on each of the ``m - 1`` ramps ``[j/m - tau, j/m]`` (where the
    approximation changes fastest), merged and sorted. Chapter 4's
    ``fig-approx-line-interactive`` shows one call per slider position.

    Args:
        f: the target, as :func:`ks_approximator` (float64 ``(batch, n, 1)`` sequences to
            ``(batch, n, 1)``, permutation equivariant).
        m: cells per axis, a positive int.
        others: the fixed tokens 2..n, a 1-D real array of ``n - 1 >= 1`` entries in ``[0, 1]``.
        tau: ramp width, ``0 < tau < 1/m``.
        gamma: the attention layer's inverse temperature, as :func:`ks_approximator` (``None``
            is Theorem 2's).

    Returns:
        The tuple ``(x, output, error, on_ramp, duplicate)`` of arrays of shape ``(R,)``, in order
        the first token's values (sorted, float64), the approximation at token 1 (first
        coordinate), its absolute error against ``f``, and the bool masks of
        :func:`lib.quantize.bad_sets` (a token on a ramp; two tokens in one cell).

    Raises:
        ValueError: as :func:`ks_approximator` for ``f``, ``m``, ``tau`` and ``gamma``; if
            ``others`` is not a non-empty 1-D real array with entries in ``[0, 1]``, or ``f``
            returns NaN, infinity or the wrong shape on the line.

    Accuracy:
        The approximator's output as :class:`KSApproximator` states it; the error is one float64
        subtraction of it and ``f``'s output (exact where they are within a factor of 2, else
        half an ulp); the masks are exact (:func:`lib.quantize.bad_sets`). The sample points are
        float64 roundings of ``j/m - tau t`` (a few ulp).

    Source: the book's view of K&S Proposition 1's approximator (reconstructed), Chapter 4
    (check B4.1 and its interactive figure).
    """
    function("f", f)
    m, low, high, h = _grid(m, 0.0, 1.0)
    tau = _ramp_width(tau, h)
    others = as_float_array("others", others)
    if others.ndim != 1 or len(others) == 0:
        raise ValueError(f"others must be a non-empty 1-D array, got shape {others.shape}")
    if not ((others >= 0.0) & (others <= 1.0)).all():
        raise ValueError(f"others must lie in [0, 1], got {others.tolist()}")
    # 7 points on each ramp, 201 on the line
    ramps = np.arange(1, m)[:, None] / m - tau * np.linspace(0, 1, 7)
    x = np.union1d(np.linspace(0.0, 1.0, 201), ramps)
    X = np.stack([x, *(np.full_like(x, c) for c in others)], axis=1)[:, :, None]
    model = ks_approximator(f, m, X.shape[1], 1, tau=tau, gamma=gamma)(X)[:, 0, 0]
    err = np.abs(model - metrics.outputs(f, X)[:, 0, 0])
    on_ramp, duplicate = bad_sets(X, m, tau)
    return x, model, err, on_ramp, duplicate
