r"""K&S Proposition 1 made executable: quantize, contextual mapping, lookup (Chapter 4).

A continuous permutation-equivariant map :math:`f` on :math:`[\text{low}, \text{high}]^{n\times d}`
is approximated by :math:`F^{(FF)}_2 \circ F^{(SA)} \circ F^{(FF)}_1`:

1. :func:`quantizer` — a ReLU layer mapping every token to a representative of its grid cell
   (spacing :math:`h = (\text{high} - \text{low})/m`), exact outside ramps of width ``tau``;
2. the rank-1 attention layer of K&S Theorem 2 (:func:`lib.contextual.rank_one_attention`) on the
   vocabulary of cell representatives — it gives every (quantized sequence, token) its context id;
3. a ReLU lookup layer that maps each context id to :math:`f` at the quantized sequence.

The error is small in :math:`L_p` because the inputs where it is not — a token on a ramp, or two
tokens in one cell (the representatives then repeat, which Theorem 2 excludes) — have small
measure; it does not vanish in :math:`L_\infty`. The three stages follow PAPERS.md §1.5 step 7
(reconstructed [I]); the exact quantization widths of the paper are unknown [U].

Our lookup layer puts its ReLU knots *at* the sorted ids (piecewise-linear interpolation between
neighbouring ids, constant beyond the ends), so its output always lies within the range of the
table: on inputs outside the table the error is bounded by the range of :math:`f`. This choice is
ours.
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections.abc import Callable
from fractions import Fraction

import mpmath
import numpy as np
import torch

from ._validate import as_float_array, finite_real, positive_int, short_repr
from .attention import FeedForward

__all__ = [
    "cell_representatives",
    "quantizer",
    "duplicate_cell_measure",
    "ramp_measure",
    "KSApproximator",
    "ks_approximator",
    "check_equivariant",
    "lp_error",
    "sup_error",
    "uniform_sampler",
    "bad_sets",
    "error_row",
    "price_row",
]


def _grid(m: int, low: float, high: float) -> tuple[int, float, float, float]:
    m = positive_int("m", m)
    low = finite_real("low", low)
    high = finite_real("high", high)
    if not high > low:
        raise ValueError(f"high must exceed low, got low={low}, high={high}")
    return m, low, high, (high - low) / m


def cell_representatives(m: int, low: float = 0.0, high: float = 1.0) -> np.ndarray:
    """The representative of each of the ``m`` cells along one axis, ``(m,)`` float64.

    The cell centres ``low + (i + 1/2) h``; when one of them is 0 (a token of norm 0 would break
    Theorem 2's ``r_min > 0``) all are shifted by ``h/4``.

    Raises:
        ValueError: for ``m < 1``, non-finite bounds or ``high <= low``.
    """
    m, low, high, h = _grid(m, low, high)
    reps = low + (np.arange(m) + 0.5) * h
    return reps + h / 4 if np.any(reps == 0) else reps


def quantizer(m: int, d: int, tau: float, low: float = 0.0, high: float = 1.0) -> FeedForward:
    r"""The first feed-forward layer of Proposition 1: every token to its cell's representative.

    Per coordinate, ``q(t) = r_0 + h \sum_{j=1}^{m-1} [\sigma_R(t - t_j + \tau) - \sigma_R(t - t_j)]/\tau``
    with grid lines ``t_j = low + j h``: exactly the representative of the cell of ``t`` unless
    ``t`` lies in a ramp ``(t_j - \tau, t_j)``, where it moves linearly to the next one; below
    ``low`` and above ``high`` it stays at the end representatives.

    Args:
        m: cells per axis; d: token dimension; tau: ramp width, ``0 < tau < h``;
        low, high: the cube ``[low, high]^d`` the grid covers.

    Returns:
        A float64 :class:`~lib.attention.FeedForward` ``(..., d) -> (..., d)`` of hidden width
        ``2 (m - 1) d`` (``max(1, ...)``; for ``m = 1`` it is the constant ``r_0``).

    Raises:
        ValueError: for non-positive ``m`` or ``d``, ``tau`` outside ``(0, h)``, bad bounds.

    Source: K&S Proposition 1, "the first FFN quantizes the input" [V]; construction
    reconstructed (PAPERS.md §1.5 step 7). Chapter 4.
    """
    m, low, high, h = _grid(m, low, high)
    d = positive_int("d", d)
    tau = finite_real("tau", tau, minimum=0.0, strict=True)
    if not tau < h:
        raise ValueError(f"tau must be below the cell width h = {h}, got {tau}")
    reps = cell_representatives(m, low, high)
    lines = low + np.arange(1, m) * h
    width = max(1, 2 * (m - 1) * d)
    W1, b1, W2 = np.zeros((width, d)), np.zeros(width), np.zeros((d, width))
    unit = 0
    for c in range(d):
        for t in lines:
            W1[unit, c] = W1[unit + 1, c] = 1.0
            b1[unit], b1[unit + 1] = -(t - tau), -t
            W2[c, unit], W2[c, unit + 1] = h / tau, -h / tau
            unit += 2
    ffn = FeedForward(d, width, d)
    ffn.set_weights(W1=W1, b1=b1, W2=W2, b2=np.full(d, reps[0]))
    return ffn


def duplicate_cell_measure(m: int, n: int, d: int) -> float:
    r"""Probability that two of ``n`` uniform tokens in ``[0,1]^d`` share one of the ``m^d`` cells.

    ``1 - \prod_{k=0}^{n-1} (1 - k / m^d)``, computed exactly in rationals (the birthday
    problem); 1 when ``n > m^d``.

    Raises:
        ValueError: for non-positive arguments.
    """
    m, n, d = positive_int("m", m), positive_int("n", n), positive_int("d", d)
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
    tau = finite_real("tau", tau, minimum=0.0, strict=True)
    if not tau < h:
        raise ValueError(f"tau must be below the cell width h = {h}, got {tau}")
    return float(1 - (1 - (m - 1) * tau / (high - low)) ** (n * d))


def uniform_sampler(n: int, d: int, low: float = 0.0, high: float = 1.0) -> Callable:
    """``sampler(rng, k) -> (k, n, d)`` float64 sequences of i.i.d. uniform tokens in ``[low, high]^d``."""
    n, d = positive_int("n", n), positive_int("d", d)
    low, high = finite_real("low", low), finite_real("high", high)
    if not high > low:
        raise ValueError(f"high must exceed low, got low={low}, high={high}")

    def sample(rng: np.random.Generator, k: int) -> np.ndarray:
        return rng.uniform(low, high, size=(positive_int("k", k), n, d))

    return sample


def _outputs(f: Callable, X: np.ndarray, name: str = "f") -> np.ndarray:
    out = f(X)
    out = out.detach().cpu().numpy() if isinstance(out, torch.Tensor) else np.asarray(out, dtype=float)
    if out.ndim != 3 or out.shape[:2] != X.shape[:2]:
        raise ValueError(f"{name} must map (batch, n, d) to (batch, n, d_out), got {X.shape} -> {out.shape}")
    if not np.isfinite(out).all():
        raise ValueError(f"{name} returned NaN or inf")
    return out


def check_equivariant(f: Callable, n: int, d: int, *, low: float = 0.0, high: float = 1.0, probes: int = 8,
                      seed: int = 0, tol: float = 1e-9) -> float:
    """Check on random probes that ``f(X P) = f(X) P`` (tokens permuted); return the largest deviation.

    Args:
        f: maps float64 ``(batch, n, d)`` (numpy) to ``(batch, n, d_out)``.
        n, d: sequence length and token dimension; low, high: where the probes are drawn.
        probes: random sequences, each checked under a random permutation.
        seed: seed of the probes; tol: allowed deviation relative to ``max(1, |f|)``.

    Returns:
        The largest relative deviation found (``<= tol``).

    Raises:
        ValueError: if ``f`` is not permutation equivariant on a probe (the deviation is given),
            or returns the wrong shape or non-finite values.
    """
    rng = np.random.default_rng(positive_int("seed", seed, minimum=0))
    X = uniform_sampler(n, d, low, high)(rng, positive_int("probes", probes))
    perms = np.array([rng.permutation(n) for _ in range(len(X))])
    Xp = np.take_along_axis(X, perms[:, :, None], axis=1)
    out, outp = _outputs(f, X), _outputs(f, Xp)
    dev = np.abs(outp - np.take_along_axis(out, perms[:, :, None], axis=1)).max() / max(1.0, np.abs(out).max())
    if not dev <= finite_real("tol", tol, minimum=0.0):
        raise ValueError(f"f is not permutation equivariant: permuting the tokens of a probe changed its output "
                         f"by {dev:.3g} (relative), above tol = {tol}")
    return float(dev)


class KSApproximator:
    r""":math:`F^{(FF)}_2 \circ F^{(SA)} \circ F^{(FF)}_1` approximating ``f`` (K&S Proposition 1).

    Built by :func:`ks_approximator`; call it on float64 ``(batch, n, d)`` arrays. Attributes:
    ``quantizer`` (:func:`quantizer`), ``attention`` (the rank-1 layer), ``v`` (the direction
    the lookup projects ids on), ``knots`` and ``values`` (the lookup table, sorted ids and
    ``(M, d_out)`` targets), ``lookup`` (the float64 ReLU layer, when ``exact`` is False),
    ``exact`` (whether the ids need mpmath), ``dps``, ``min_gap`` (smallest gap between table
    ids), ``max_weight`` (largest output weight of the lookup layer, the largest change of slope
    between neighbouring ids; mpf when ``exact``), ``distinct64`` (how many of the table's ids
    float64 tells apart), ``m, n, d, tau, low, high``.
    """

    def __init__(self, **parts):
        self.__dict__.update(parts)

    @property
    def parameters(self) -> int:
        """Weights and biases of the three layers (rank-1 factors counted, lookup as built)."""
        q = self.quantizer
        M, k = self.values.shape
        attention = 4 * (self.attention.head_dim + self.d)
        return q.W1.numel() + q.b1.numel() + q.W2.numel() + q.b2.numel() + attention + self.d + M + k * M + k

    def quantize(self, X: np.ndarray) -> np.ndarray:
        """``F_FF1(X)``, with float64 rounding on cell interiors removed.

        On a cell interior the quantizer equals the representative exactly; evaluated in float64
        it is off by about 1e-16, far more than the gaps between context ids. Coordinates within
        ``1e-9 h`` of a representative are therefore set to it (on a ramp this moves the output
        by at most ``1e-9 h``).
        """
        with torch.no_grad():
            Q = self.quantizer(torch.as_tensor(X)).numpy()
        reps = cell_representatives(self.m, self.low, self.high)
        nearest = reps[np.abs(Q[..., None] - reps).argmin(axis=-1)]
        h = (self.high - self.low) / self.m
        return np.where(np.abs(Q - nearest) <= 1e-9 * h, nearest, Q)

    def context_ids(self, X: np.ndarray) -> list:
        """Projected context ids ``v . F_SA(F_FF1(X))`` of every token: ``(batch * n,)`` floats or mpf."""
        from . import exact

        X = as_float_array("X", X, min_ndim=3)
        if X.ndim != 3 or X.shape[1:] != (self.n, self.d):
            raise ValueError(f"X must have shape (batch, {self.n}, {self.d}), got {X.shape}")
        Q = self.quantize(X)
        if not self.exact:
            with torch.no_grad():
                ids = self.attention(torch.as_tensor(Q)).numpy()
            return list(ids.reshape(-1, self.d) @ self.v)
        with mpmath.workdps(self.dps):
            return exact.project_mp([row for out in exact.attention_mp(Q, self.attention, self.dps) for row in out],
                                    self.v)

    def __call__(self, X) -> np.ndarray:
        """The approximation ``(batch, n, d_out)`` float64 at sequences ``X`` ``(batch, n, d)``."""
        z = self.context_ids(X)
        batch = len(z) // self.n
        if not self.exact:
            with torch.no_grad():
                out = self.lookup(torch.as_tensor(np.asarray(z, dtype=float))[:, None]).numpy()
            return out.reshape(batch, self.n, -1)
        with mpmath.workdps(self.dps):
            rows = [_pwl_mp(zi, self.knots, self.values) for zi in z]
        return np.array(rows, dtype=float).reshape(batch, self.n, -1)


def _pwl_mp(z, knots, values) -> list:
    """Evaluate the knots-at-the-ids interpolant at mpf ``z`` (constant beyond the ends)."""
    if z <= knots[0]:
        return [float(v) for v in values[0]]
    if z >= knots[-1]:
        return [float(v) for v in values[-1]]
    j = bisect.bisect_right(knots, z) - 1
    t = (z - knots[j]) / (knots[j + 1] - knots[j])
    return [float(values[j][c] + t * (values[j + 1][c] - values[j][c])) for c in range(len(values[0]))]


def _lookup_layer(knots: np.ndarray, values: np.ndarray) -> FeedForward:
    """A float64 ReLU layer ``(..., 1) -> (..., k)`` interpolating ``values`` at ``knots`` piecewise linearly.

    ``y(z) = y_1 + sum_j (s_j - s_{j-1}) relu(z - z_j)`` with ``s_0 = 0`` and ``s_M = 0`` (flat beyond
    the last knot): hidden width ``M``, output within the range of ``values`` everywhere.
    """
    M, k = values.shape
    slopes = np.zeros((M + 1, k))
    slopes[1:M] = np.diff(values, axis=0) / np.diff(knots)[:, None]
    coeffs = np.diff(slopes, axis=0)                       # (M, k): slope change at each knot
    from .memorization import knot_layer

    return knot_layer(knots, coeffs, values[0])


def ks_approximator(f: Callable, m: int, n: int, d: int, tau: float, *, low: float = 0.0, high: float = 1.0,
                    gamma: float | None = None, exact: bool | None = None, seed: int = 0,
                    tol: float = 1e-9) -> KSApproximator:
    r"""Build :math:`F^{(FF)}_2 \circ F^{(SA)} \circ F^{(FF)}_1` approximating ``f`` (K&S Proposition 1).

    The table holds one entry per (set of ``n`` distinct cells, token): ``C(m^d, n) n`` context
    ids and the values of ``f`` at the quantized sequences. Duplicate cells are not in the table
    (Theorem 2 excludes repeated tokens); inputs with them, or with a token on a ramp, get some
    value within the table's range.

    Args:
        f: the target, float64 numpy ``(batch, n, d) -> (batch, n, d_out)``, continuous and
            permutation equivariant (checked on random probes, relative tolerance ``tol``).
        m, n, d, tau, low, high: the grid (``m`` cells per axis) and ramp width, as :func:`quantizer`.
        gamma: the attention layer's inverse temperature; ``None`` is Theorem 2's value. Any
            value at which the table's ids are distinct gives the same approximation on the
            table; the theorem's value guarantees that they are.
        exact: evaluate ids in mpmath; ``None`` decides: float64 when its ids are at least
            ``1e-9`` apart relative to their size, else mpmath at a precision 30 digits beyond
            the construction's separation.
        seed: seed of the equivariance probes.

    Returns:
        A :class:`KSApproximator`.

    Raises:
        ValueError: for a non-equivariant ``f``, bad grid arguments, ``n > m^d`` (no sequence of
            distinct cells), a table of more than 200,000 entries, ``exact=False`` when float64
            cannot separate the ids, or ids that collide even in exact arithmetic.

    Source: K&S (ICLR 2024) Proposition 1 [V for the statement's shape]; the construction is
    reconstructed (PAPERS.md §1.5 step 7). Chapter 4.
    """
    from . import contextual
    from . import exact as exact_mod

    if not callable(f):
        raise ValueError(f"f must be callable, got {short_repr(f)}")
    m, low, high, h = _grid(m, low, high)
    n, d = positive_int("n", n, minimum=2), positive_int("d", d)
    q = quantizer(m, d, tau, low, high)
    check_equivariant(f, n, d, low=low, high=high, seed=seed, tol=tol)
    reps1 = cell_representatives(m, low, high)
    cells = np.array(list(itertools.product(reps1, repeat=d)))          # (m^d, d)
    if n > len(cells):
        raise ValueError(f"n = {n} tokens cannot lie in distinct cells of a grid with only {len(cells)} cells")
    entries = math.comb(len(cells), n) * n
    if entries > 200_000:
        raise ValueError(f"the lookup table would hold {entries:,} entries (C({len(cells)}, {n}) x {n}); use a smaller m")
    seqs = np.array([cells[list(c)] for c in itertools.combinations(range(len(cells)), n)])  # (S, n, d)
    targets = _outputs(f, seqs).reshape(len(seqs) * n, -1)
    layer = contextual.rank_one_attention(cells, n, gamma=gamma, seed=seed)
    v = np.asarray(layer.w, dtype=float)
    parts = dict(quantizer=q, attention=layer, v=v, m=m, n=n, d=d, tau=float(tau), low=low, high=high)
    with torch.no_grad():
        z64 = layer(torch.as_tensor(seqs)).numpy().reshape(-1, d) @ v
    order = np.argsort(z64, kind="stable")
    gaps = np.diff(z64[order])
    resolved = len(z64) < 2 or gaps.min() > 1e-9 * max(1.0, np.abs(z64).max())
    parts["distinct64"] = len(np.unique(z64))
    if exact is False and not resolved:
        raise ValueError(f"float64 cannot separate the {len(z64)} context ids (smallest gap {gaps.min():.3g}); "
                         f"use exact=True or a smaller gamma")
    if exact is None:
        exact = not resolved
    if not exact:
        knots, values = z64[order], targets[order]
        lookup = _lookup_layer(knots, values)
        return KSApproximator(**parts, exact=False, dps=15, knots=knots, values=values, min_gap=float(gaps.min()),
                              lookup=lookup, max_weight=float(lookup.weights()["W2"].abs().max()))
    delta = contextual.theorem2_delta(n, len(cells), d, layer.r_min, layer.r_max, layer.eps, c_w=layer.c_w)
    dps = 30 + max(0, int(-delta["construction"])) if gamma is None else 60
    with mpmath.workdps(dps):
        z = exact_mod.project_mp([row for out in exact_mod.attention_mp(seqs, layer, dps) for row in out], v)
        order = sorted(range(len(z)), key=lambda i: z[i])
        knots = [z[i] for i in order]
        min_gap = min((b - a for a, b in zip(knots, knots[1:], strict=False)), default=mpmath.inf)
        if min_gap <= mpmath.mpf(10) ** (10 - dps):
            raise ValueError(f"context ids collide at {dps} digits (smallest gap {mpmath.nstr(min_gap, 5)})")
        vals = targets[order]
        slopes = [[mpmath.mpf(0)] * vals.shape[1]]
        slopes += [[(mpmath.mpf(float(vals[j + 1, c])) - mpmath.mpf(float(vals[j, c]))) / (knots[j + 1] - knots[j])
                    for c in range(vals.shape[1])] for j in range(len(knots) - 1)]
        slopes += [[mpmath.mpf(0)] * vals.shape[1]]
        max_weight = max(abs(b - a) for s0, s1 in zip(slopes, slopes[1:], strict=False)
                         for a, b in zip(s0, s1, strict=True))
    return KSApproximator(**parts, exact=True, dps=dps, knots=knots, values=np.array(vals),
                          min_gap=min_gap, lookup=None, max_weight=max_weight)


def _errors(f: Callable, g: Callable, sampler: Callable, n_samples: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(positive_int("seed", seed, minimum=0))
    X = sampler(rng, positive_int("n_samples", n_samples))
    X = as_float_array("sampler output", X, min_ndim=3)
    return np.abs(_outputs(f, X, "f") - _outputs(g, X, "g"))


def lp_error(f: Callable, g: Callable, p: float, sampler: Callable, n_samples: int, seed: int = 0) -> tuple[float, float]:
    r"""Monte Carlo estimate of :math:`d_p(f, g) = (\mathbb E \|f(X) - g(X)\|_p^p)^{1/p}` and its standard error.

    :math:`\|\cdot\|_p` is the entrywise :math:`p`-norm of the ``(n, d_out)`` output; ``X`` is
    drawn by ``sampler(rng, n_samples)`` with ``rng = default_rng(seed)``, so every model
    compared with the same seed sees the same samples. The standard error is the delta-method
    one, :math:`\mathrm{se}(\bar e)/(p\, \bar e^{1 - 1/p})` with :math:`\bar e` the mean of
    :math:`\|f - g\|_p^p` (0 when the estimate is 0).

    Raises:
        ValueError: for ``p < 1`` or non-finite, ``n_samples < 2``, outputs of the wrong shape.

    Source: the :math:`L_p` distance of K&S Proposition 1. Chapter 4.
    """
    n_samples = positive_int("n_samples", n_samples, minimum=2)
    return _lp_from_errors(_errors(f, g, sampler, n_samples, seed), p)


def _lp_from_errors(errors: np.ndarray, p: float) -> tuple[float, float]:
    """:func:`lp_error`'s estimate and standard error from the absolute errors ``(samples, ...)``."""
    p = finite_real("p", p, minimum=1.0)
    e = (errors ** p).reshape(len(errors), -1).sum(axis=1)
    mean = e.mean()
    if mean == 0:
        return 0.0, 0.0
    se_mean = e.std(ddof=1) / math.sqrt(len(e))
    return float(mean ** (1 / p)), float(se_mean / (p * mean ** (1 - 1 / p)))


def sup_error(f: Callable, g: Callable, sampler: Callable, n_samples: int, seed: int = 0) -> tuple[float, int]:
    """The largest entrywise ``|f(X) - g(X)|`` over ``n_samples`` sampled sequences, and its sample index.

    A lower bound on the :math:`L_\\infty` distance (same samples as :func:`lp_error` with the
    same seed).

    Raises:
        ValueError: as :func:`lp_error`.
    """
    errs = _errors(f, g, sampler, n_samples, seed).reshape(positive_int("n_samples", n_samples), -1).max(axis=1)
    return float(errs.max()), int(errs.argmax())


def bad_sets(X, m: int, tau: float, low: float = 0.0, high: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """Which sequences ``X`` ``(batch, n, d)`` have a coordinate on a ramp, and which two tokens in one cell.

    Returns:
        Two bool arrays ``(batch,)``: ``on_ramp`` (some coordinate in ``(t_j - tau, t_j)`` for a
        grid line ``t_j``) and ``duplicate`` (two tokens in the same cell).

    Raises:
        ValueError: as :func:`quantizer`, or for ``X`` that is not ``(batch, n, d)``.
    """
    m, low, high, h = _grid(m, low, high)
    X = as_float_array("X", X, min_ndim=3)
    if X.ndim != 3:
        raise ValueError(f"X must have shape (batch, n, d), got {X.shape}")
    r = (X - low) / h
    j = np.ceil(r)
    on_ramp = ((j - r) * h < tau) & (j >= 1) & (j <= m - 1) & (j != r)
    cells = np.clip(np.floor(r), 0, m - 1)
    duplicate = np.array([len({tuple(c) for c in seq}) < len(seq) for seq in cells])
    return on_ramp.any(axis=(1, 2)), duplicate


def error_row(f: Callable, m: int, n: int, d: int, tau: float, *, gamma: float | None = None, n_samples: int = 4000,
              seed: int = 0) -> dict:
    """One row of Chapter 4's error table: the approximator for grid ``m`` against ``f``.

    Returns:
        dict with ``d``, ``m``, ``L1``, ``L1 se``, ``L2``, ``L2 se`` (:func:`lp_error`), ``sup``
        (:func:`sup_error`), the largest error on the sampled sequences with a coordinate on a
        ramp (``sup ramp``), with two tokens in one cell (``sup duplicate``) and on the others
        (``sup clean``; NaN for an empty set), and the measures ``duplicate``
        (:func:`duplicate_cell_measure`) and ``ramp`` (:func:`ramp_measure`), all on
        ``n_samples`` uniform sequences drawn from ``seed``.

    Raises:
        ValueError: as :func:`ks_approximator` and :func:`lp_error`.
    """
    g = ks_approximator(f, m, n, d, tau, gamma=gamma, seed=seed)
    n_samples = positive_int("n_samples", n_samples, minimum=2)
    X = uniform_sampler(n, d)(np.random.default_rng(seed), n_samples)   # lp_error's samples for this seed
    errors = np.abs(_outputs(f, X) - _outputs(g, X, "g"))               # g evaluated once
    (l1, se1), (l2, se2) = (_lp_from_errors(errors, p) for p in (1, 2))
    worst = errors.reshape(n_samples, -1).max(axis=1)
    ramp, dup = bad_sets(X, m, tau)
    def top(mask):
        return float(worst[mask].max()) if mask.any() else float("nan")
    return {"d": d, "m": m, "L1": l1, "L1 se": se1, "L2": l2, "L2 se": se2, "sup": float(worst.max()),
            "sup ramp": top(ramp), "sup duplicate": top(dup & ~ramp), "sup clean": top(~ramp & ~dup),
            "duplicate": duplicate_cell_measure(m, n, d), "ramp": ramp_measure(m, n, d, tau)}


def price_row(f: Callable, m: int, n: int, d: int, tau: float, *, gamma: float = 1.0) -> dict:
    """One row of Chapter 4's cost table: the approximator at the theorem's gamma and at ``gamma``.

    Returns:
        dict with ``m``, ``entries`` (table size), ``parameters``, ``digits, theorem γ`` (the
        working precision the theorem's ids need), ``largest weight, theorem γ`` (text, from an
        mpf), ``log10 weight, theorem γ``, ``largest weight, γ = <gamma>`` and ``distinct float64
        ids, theorem γ``.

    Raises:
        ValueError: as :func:`ks_approximator`.
    """
    exact = ks_approximator(f, m, n, d, tau)
    practical = ks_approximator(f, m, n, d, tau, gamma=gamma)
    weight = mpmath.mpf(exact.max_weight)
    with mpmath.workdps(30):
        text, log10 = mpmath.nstr(weight, 3), float(mpmath.log10(weight))
    return {"m": m, "entries": len(practical.knots), "parameters": practical.parameters,
            "digits, theorem γ": exact.dps if exact.exact else 15, "largest weight, theorem γ": text,
            "log10 weight, theorem γ": log10, f"largest weight, γ = {gamma:g}": practical.max_weight,
            "distinct float64 ids, theorem γ": exact.distinct64}
