r"""The exact context ids of K&S Theorem 2's rank-1 layer on every subset sequence of a vocabulary,
and how their order moves with the inverse temperature (Chapters 2-3, checks C6-C8).

Tokens are rows: a family of ``N`` sequences of ``n`` tokens in :math:`\mathbb{R}^d` is an array
of shape ``(N, n, d)``. :func:`subset_sequences` builds the family (every ``n``-subset of the
vocabulary, none a permutation of another, none repeating a token); :func:`context_ids` evaluates
the layer of :class:`lib.contextual.RankOneAttention` on it in mpmath at a precision chosen from
the separation the construction guarantees (:func:`lib.contextual.theorem2_delta`);
:func:`order_flips`, :func:`limit_reversals` and :func:`id_shifts` read how the ids move with
``gamma`` (check C8). The layer itself is in :mod:`lib.contextual`.

Functions that enumerate subsets check the count first against :data:`MAX_SEQUENCE_ENTRIES` (and
:data:`lib.exact.MAX_PAIRS` for :func:`context_ids`) and raise ``ValueError`` beyond them, as for
any other bad input (naming the argument).

Source: K&S (ICLR 2024) Theorem 2, the book's checks C6-C8 (the construction as the book
reconstructs it). Chapters 2 and 3.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ._validate import capped_comb, positive_int, require_size, short_repr
from .contextual import RankOneAttention, Theorem2Delta, theorem2_delta
from .exact import GUARD_DIGITS
from .separation import _vocab

__all__ = [
    "ContextIds",
    "LimitReversals",
    "subset_sequences",
    "order_flips",
    "limit_reversals",
    "context_ids",
    "id_shifts",
    "MAX_SEQUENCE_ENTRIES",
]

#: Largest number of float64 entries :func:`subset_sequences` builds (``binom(K, n) n d``, 128 MiB).
MAX_SEQUENCE_ENTRIES = 2**24


@dataclass(frozen=True)
class ContextIds:
    """Every context id of the ``n``-subsets of a vocabulary, exactly (:func:`context_ids`).

    Attributes:
        layer: the :class:`~lib.contextual.RankOneAttention` layer; X: the sequences
            ``(binom(K, n), n, d)``.
        ids: the context ids, mpmath vectors (one per token of every sequence, in order).
        dps: the working precision (decimal digits).
        gap: the smallest distance between two ids (mpmath; 0 for a collision); log10_gap: its
            base-10 logarithm (``-inf`` for a collision).
        max_norm: the largest id norm; delta: the :class:`~lib.contextual.Theorem2Delta` of these
            constants.
    """

    layer: RankOneAttention
    X: np.ndarray
    ids: list
    dps: int
    gap: object
    log10_gap: float
    max_norm: float
    delta: Theorem2Delta


@dataclass(frozen=True)
class LimitReversals:
    """Order reversals between the ids of one token and their ``gamma -> 0`` limit
    (:func:`limit_reversals`).

    Attributes:
        reversed: pairs whose order is opposite to the order of their sequences' means.
        tied: pairs whose means are equal (the limit does not order them).
        pairs: all pairs of ids of one token, from different sequences.
    """

    reversed: int
    tied: int
    pairs: int


def subset_sequences(vocab: ArrayLike, n: int) -> np.ndarray:
    """All ``n``-subsets of the tokens of ``vocab`` as sequences ``(binom(K, n), n, d)``.

    No two are permutations of each other and none repeats a token: the family of checks C6-C7
    of K&S Theorem 2 (Chapters 2-3).

    Args:
        vocab: tokens ``(K, d)``, finite reals, pairwise distinct.
        n: the subset size, an integer in ``[1, K]``.

    Raises:
        ValueError: for bad ``vocab``, ``n`` outside ``[1, K]``, or more than
            :data:`MAX_SEQUENCE_ENTRIES` entries ``binom(K, n) n d`` (checked before building).

    Accuracy:
        Exact: the tokens are copied as float64, nothing is computed. Deterministic: the
        subsets in ``itertools.combinations`` order of the rows of ``vocab`` as given.
    """
    V = _vocab(vocab)
    n = positive_int("n", n, maximum=len(V))
    count = capped_comb(len(V), n, MAX_SEQUENCE_ENTRIES)
    require_size(
        f"subset_sequences of {len(V)} tokens, n = {n}: the number of entries "
        f"binom({len(V)}, {n}) * {n} * {V.shape[1]}",
        count * n * V.shape[1],
        MAX_SEQUENCE_ENTRIES,
        "lib.context_ids.MAX_SEQUENCE_ENTRIES",
    )
    return np.array([V[list(idx)] for idx in itertools.combinations(range(len(V)), n)])


def order_flips(runs: list) -> list[tuple[float, float, int]]:
    """Pairs of context ids of one token whose order changes between neighbouring runs of
    :func:`context_ids`.

    Context ids move continuously with the layer's ``gamma``; if two ids of the same query token
    are in one order at one ``gamma`` and in the other order at the next, they coincide
    exactly at some ``gamma`` in between. Ids are compared along the layer's output direction
    ``u`` (exactly, at each run's precision).

    Args:
        runs: results of :func:`context_ids` on the same vocabulary and ``n`` (same sequences),
            in increasing order of ``gamma``; at least two.

    Returns:
        One ``(gamma_a, gamma_b, flips)`` per neighbouring pair of runs, where ``flips`` is the
        number of pairs of ids (same query token, different sequences) in opposite order at the
        two ends.

    Raises:
        ValueError: for fewer than two runs, runs whose sequences differ, or ``gamma`` not
            increasing.

    Accuracy:
        The counts are exact integers, given the signs: each sign is that of the difference of
        two ids projected on ``u`` at the run's ``dps`` digits, right whenever the difference
        exceeds about ``10**-dps`` times the ids' size. A pair tied (sign 0) at either end is
        not counted. Runs are assumed to share ``u`` (not checked).

    Source: the book's check C8 (K&S Theorem 2 outside its inverse temperature). Chapter 2.
    """
    if not isinstance(runs, list | tuple) or len(runs) < 2:
        raise ValueError(
            f"runs must be a list of at least two context_ids results, got {short_repr(runs)}"
        )
    if not all(isinstance(r, ContextIds) for r in runs):
        raise ValueError(f"runs must be results of context_ids, got {short_repr(runs)}")
    X = runs[0].X
    if any(r.X.shape != X.shape or not np.array_equal(r.X, X) for r in runs):
        raise ValueError("runs must share their sequences (same vocabulary and n)")
    gammas = [float(r.layer.gamma) for r in runs]
    if any(b <= a for a, b in zip(gammas, gammas[1:], strict=False)):
        raise ValueError(f"runs must be in increasing order of gamma, got {gammas}")
    groups = _token_groups(X)
    out, before = [], _pair_signs(runs[0], groups)
    for a, b, run in zip(gammas, gammas[1:], runs[1:], strict=False):
        after = _pair_signs(run, groups)
        out.append((a, b, sum(1 for key in before if before[key] * after[key] < 0)))
        before = after
    return out


def _token_groups(X: np.ndarray) -> list[np.ndarray]:
    """Indices (into the flattened ``(N * n)`` ids) of the occurrences of each distinct token."""
    tokens = X.reshape(-1, X.shape[-1])
    return [np.flatnonzero((tokens == t).all(axis=1)) for t in np.unique(tokens, axis=0)]


def _pair_signs(run: ContextIds, groups: list) -> dict:
    """Sign of (id_i - id_j) along the layer's ``u`` for every pair of ids of one token, exactly."""
    import mpmath

    with mpmath.workdps(run.dps):
        u = [mpmath.mpf(float(c)) for c in run.layer.u]
        along = [mpmath.fsum(a * b for a, b in zip(row, u, strict=True)) for row in run.ids]
        return {
            (i, j): int(mpmath.sign(along[i] - along[j]))
            for g in groups
            for k, i in enumerate(g)
            for j in g[k + 1 :]
        }


def limit_reversals(run: ContextIds) -> LimitReversals:
    r"""Pairs of context ids of one token whose order in ``run`` is opposite to their order as
    ``gamma -> 0``.

    As :math:`\gamma \to 0` the softmax becomes uniform, :math:`\operatorname{boltz}(a) /
    (\gamma\, w^\top t)` tends to the mean of the :math:`w^\top x_k` over the sequence, and the
    id of token ``t`` tends to :math:`t + \frac{\epsilon}{4 r_{\max}} \operatorname{mean}_k(w^\top
    x_k)\, u`: two ids of one token are then ordered (along ``u``) as the means of their
    sequences. Ids move continuously with :math:`\gamma`, so a pair whose order in ``run`` is the
    opposite coincides exactly at some :math:`\gamma` between 0 and the run's.

    Args:
        run: a result of :func:`context_ids`.

    Returns:
        A :class:`LimitReversals`. The means are compared exactly (as fractions of the float64
        entries of ``w`` and the tokens), the ids at the run's precision.

    Raises:
        ValueError: if ``run`` is not a result of :func:`context_ids`.

    Accuracy:
        The counts are exact integers. The limit's order is exact (rational arithmetic on the
        float64 entries); the ids' order is the sign of their difference along ``u`` at the
        run's ``dps`` digits, right whenever it exceeds about ``10**-dps`` times the ids' size.

    Source: the book's check C8 (K&S Theorem 2 outside its inverse temperature). Chapter 2.
    """
    from fractions import Fraction

    if not isinstance(run, ContextIds):
        raise ValueError(f"run must be a result of context_ids, got {short_repr(run)}")
    X = run.X
    groups = _token_groups(X)
    w = [Fraction(float(c)) for c in run.layer.w]
    means = [
        sum(
            sum((Fraction(float(c)) * wc for c, wc in zip(x, w, strict=True)), Fraction(0))
            for x in seq
        )
        / len(seq)
        for seq in X
    ]
    seq_of = np.repeat(np.arange(len(X)), X.shape[1])
    reversed_, tied, pairs = 0, 0, 0
    for (i, j), sign in _pair_signs(run, groups).items():
        limit = (means[seq_of[i]] > means[seq_of[j]]) - (means[seq_of[i]] < means[seq_of[j]])
        pairs += 1
        tied += limit == 0
        reversed_ += limit * sign < 0
    return LimitReversals(int(reversed_), int(tied), pairs)


def context_ids(
    vocab: ArrayLike, n: int, *, digits_beyond: int = GUARD_DIGITS, **kwargs: Any
) -> ContextIds:
    """Checks C6-C8: the Theorem 2 layer on all ``n``-subsets of ``vocab``, evaluated exactly.

    The working precision is chosen from the separation the construction guarantees
    (:func:`~lib.contextual.theorem2_delta`, ``construction``) plus ``digits_beyond`` digits, or
    from the inverse temperature when ``gamma`` is overridden (the ids then differ by about
    :math:`e^{-2\\gamma r_{\\max}^2}` at worst).

    Args:
        vocab: tokens ``(K, d)``.
        n: sequence length.
        digits_beyond: spare digits, ``>= 10`` (default :data:`lib.exact.GUARD_DIGITS`).
        **kwargs: passed to :class:`~lib.contextual.RankOneAttention` (``w``, ``gamma``, ...).

    Returns:
        A :class:`ContextIds`.

    Raises:
        ValueError: as :class:`~lib.contextual.RankOneAttention`, for ``digits_beyond < 10``, for
            constants that need more than :data:`lib.exact.MAX_DPS` digits, or when the
            ``binom(K, n) n`` ids would have more pairs to compare than
            :data:`lib.exact.MAX_PAIRS` (checked before anything is evaluated) or their sequences
            more entries than :data:`MAX_SEQUENCE_ENTRIES`; also for unknown keyword arguments.

    Accuracy:
        The ids are the layer's outputs on its float64 weights and tokens, read exactly and
        computed with ``dps`` significant digits: an absolute error of order ``10**-dps`` times
        ``max_norm``. ``gap`` is exact to that error (0 only for ids equal to ``dps`` digits).
        ``dps`` is ``digits_beyond`` digits past the construction's separation, or past
        :math:`2\\gamma r_{\\max}^2/\\ln 10` when larger, so for ids of unit size a gap that
        small keeps about ``digits_beyond`` digits (65 to 234 digits agreed with a rerun at
        ``dps + 60`` in probes, vocabularies scaled 1e-100 to 1e100). ``max_norm`` and
        ``log10_gap`` are correctly rounded floats.

    Source: K&S Theorem 2, the book's checks C6-C8. Chapter 2.
    """
    import mpmath

    from . import exact
    from .exact import MAX_DPS, MAX_PAIRS

    beyond = positive_int("digits_beyond", digits_beyond, minimum=10)
    allowed = {"w", "eps", "r_min", "r_max", "head_dim", "seed", "gamma"}
    if set(kwargs) - allowed:
        raise ValueError(
            f"unknown arguments {sorted(set(kwargs) - allowed)}; allowed: {sorted(allowed)}"
        )
    layer = RankOneAttention(vocab, n, **kwargs)
    V = layer.vocab
    ids: Any = capped_comb(len(V), n, MAX_PAIRS) * n  # a count here, the ids themselves below
    require_size(
        f"context_ids of {len(V)} tokens, n = {n}: the number of pairs of the "
        f"binom({len(V)}, {n}) * {n} ids",
        ids * (ids - 1) // 2 if ids != math.inf else ids,
        MAX_PAIRS,
        "lib.exact.MAX_PAIRS",
    )
    X = subset_sequences(V, n)
    delta = theorem2_delta(
        n, len(V), V.shape[1], layer.r_min, layer.r_max, layer.eps, c_w=layer.c_w
    )
    # gamma times r_max, then r_max: r_max**2 alone overflows for a vocabulary near 1e154
    worst = max(-delta.construction, 2 * layer.gamma * layer.r_max * layer.r_max / math.log(10))
    if not worst + beyond <= MAX_DPS:
        raise ValueError(
            f"the constants of vocab (gamma={layer.gamma:.3g}, r_max={layer.r_max:.3g}, "
            f"c_w={layer.c_w:.3g}) "
            f"need about {worst:.3g} digits plus digits_beyond={beyond:,}, more than "
            f"lib.exact.MAX_DPS={MAX_DPS}; rescale vocab"
        )
    dps = beyond + int(worst)
    ids = [row for out in exact.attention_mp(X, layer, dps) for row in out]
    gap = exact.min_distance(ids, dps, distinct=False)  # a collision must show as 0, not be skipped
    with mpmath.workdps(dps):
        max_norm = float(max(mpmath.sqrt(mpmath.fsum(c**2 for c in row)) for row in ids))
        log10_gap = float(mpmath.log10(gap)) if gap > 0 else -math.inf
    return ContextIds(layer, X, ids, dps, gap, log10_gap, max_norm, delta)


def id_shifts(run: ContextIds) -> np.ndarray:
    r"""How far the layer moves each token: its context id minus the token itself,
    :math:`F(X)_{:,k} - X_{:,k}`, for every token of every sequence of ``run``.

    The attention layer is residual, so this is its attention term alone; the differences are
    taken in mpmath at the run's precision and only then rounded to float64, so that shifts far
    smaller than the token (``gamma`` near 0, ids bunched at their token) keep their digits.
    Chapter 2 plots them against ``gamma`` (``fig-contextual-gamma-interactive``).

    Args:
        run: a result of :func:`context_ids`.

    Returns:
        A float64 array ``(N, n, d)``, in the units of the tokens. Entry ``[i, k, c]`` is
        coordinate ``c`` of the id of token ``k`` of sequence ``i`` (of ``run.X``) minus that
        coordinate of the token.

    Raises:
        ValueError: if ``run`` is not a result of :func:`context_ids`.

    Accuracy:
        Each entry is the difference at ``run.dps`` digits, rounded once to float64: within half
        an ulp of itself plus about ``10**-run.dps`` times ``run.max_norm`` (the ids' own error).
        Tokens are read exactly.

    Source: K&S Theorem 2's rank-1 layer (its residual form recalled); the book's figure of the
    ids against ``gamma``, check C8. Chapter 2.
    """
    import mpmath

    if not isinstance(run, ContextIds):
        raise ValueError(f"run must be a result of context_ids, got {short_repr(run)}")
    X = np.asarray(run.X, dtype=np.float64)
    with mpmath.workdps(run.dps):
        shifts = [
            [float(i - t) for i, t in zip(ids, token, strict=True)]
            for ids, token in zip(run.ids, X.reshape(-1, X.shape[-1]), strict=True)
        ]
    return np.array(shifts, dtype=np.float64).reshape(X.shape)
