r"""Contextual mappings: K&S Theorem 2's rank-1 attention layer, its :math:`\delta`, and the
exact context ids of every subset sequence of a vocabulary (Chapter 2).

Tokens are rows: a family of ``N`` sequences of ``n`` tokens in :math:`\mathbb{R}^d` is an array
of shape ``(N, n, d)``. The statement of Theorem 2 is quoted, its constants recalled; the
construction of the layer is reconstructed by the book (see the Sources and certainty page).
Tokenwise separation and the projection constant are in :mod:`lib.separation`; the hardmax
counterexample of Theorem 1 in :mod:`lib.hardmax`.

Functions that enumerate subsets check the count first against :data:`MAX_SEQUENCE_ENTRIES` (and
:data:`lib.exact.MAX_PAIRS` for :func:`context_ids`) and raise ``ValueError`` beyond them.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from numpy.typing import ArrayLike

from ._validate import (
    capped_comb,
    finite_real,
    positive_int,
    require_size,
    short_repr,
)
from .exact import GUARD_DIGITS
from .layers import SelfAttention, _require_parameter_count
from .lemma1 import lemma1_gap
from .separation import (
    _min_distance,
    _norms,
    _unit,
    _vocab,
    best_direction,
    projection_constant,
    strict_constants,
)

__all__ = [
    "as_head_dim",
    "ScoreSeparation",
    "Theorem2Delta",
    "ContextIds",
    "LimitReversals",
    "score_separation",
    "RankOneAttention",
    "theorem2_delta",
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
class ScoreSeparation:
    """How the scores of a :class:`RankOneAttention` layer meet K&S Lemma 1
    (:func:`score_separation`).

    Attributes:
        gap: the smallest difference between distinct scores of one query (Lemma 1's delta).
        threshold: ``2 log n + 3``, the float64 value the layer's ``gamma`` was computed from.
        margin: ``gap - threshold``, computed in mpmath before rounding (0.0 is an exact tie).
        r: the largest absolute score; r_bound: ``gamma r_max^2``, its bound.
    """

    gap: float
    threshold: float
    margin: float
    r: float
    r_bound: float


@dataclass(frozen=True)
class Theorem2Delta:
    """The separations of K&S Theorem 2 (:func:`theorem2_delta`), as base-10 logarithms.

    Attributes:
        paper: log10 of the theorem's delta (worst-case projection constant).
        construction: log10 of the separation the construction guarantees with the measured
            projection constant (``paper`` when none is given).
        r: ``r_max + eps / 4``, the bound on every context id.
    """

    paper: float
    construction: float
    r: float


@dataclass(frozen=True)
class ContextIds:
    """Every context id of the ``n``-subsets of a vocabulary, exactly (:func:`context_ids`).

    Attributes:
        layer: the :class:`RankOneAttention` layer; X: the sequences ``(binom(K, n), n, d)``.
        ids: the context ids, mpmath vectors (one per token of every sequence, in order).
        dps: the working precision (decimal digits).
        gap: the smallest distance between two ids (mpmath; 0 for a collision); log10_gap: its
            base-10 logarithm (``-inf`` for a collision).
        max_norm: the largest id norm; delta: the :class:`Theorem2Delta` of these constants.
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


def score_separation(layer: SelfAttention) -> ScoreSeparation:
    r"""How well the scores of a Theorem 2 layer meet the hypotheses of K&S Lemma 1, in exact
    arithmetic.

    For each query token ``t`` of the layer's vocabulary, the scores
    :math:`(W_Q t)^\top (W_K x)` over the keys ``x`` of the vocabulary are the entries Lemma 1
    sees (every context of ``t`` draws its keys from them). Their smallest difference, minimised
    over ``t``, is Lemma 1's :math:`\delta`; their largest absolute value is its :math:`r`.
    Scores are computed from the layer's float weights read exactly (mpmath, 60 digits), so a
    gap equal to the threshold is reported as equal, not rounded to either side.

    Args:
        layer: a layer built by :class:`RankOneAttention` (it carries ``vocab`` and ``n``).

    Returns:
        A :class:`ScoreSeparation`.

    Raises:
        ValueError: if ``layer`` is not a layer of :class:`RankOneAttention`, or its scores
            (``gap``, ``margin``, ``r``) or ``r_bound`` leave float64's range (possible only with
            an overridden ``gamma`` or tokens near the float limits).

    Accuracy:
        Scores carry a relative error of about 1e-60 (60-digit arithmetic on the exact float64
        weights and tokens); ``gap``, ``margin`` and ``r`` are then rounded once to float64
        (correctly rounded in the normal range), so the sign of ``margin`` is that of the
        layer's actual margin. ``r_bound`` is two float64 products (within :math:`u`,
        :math:`2^{-53}`). A layer whose scores leave float64's range is refused, not answered
        with ``inf`` or 0 (e.g. vocabulary ``[[1e200], [2e200]]`` with ``gamma=1``).

    Source: K&S (ICLR 2024), Lemma 1 (threshold quoted, wording recalled) applied to the Theorem 2
    construction as the book reconstructs it. Chapter 2.
    """
    import mpmath

    from . import exact

    if not isinstance(layer, RankOneAttention):
        raise ValueError(f"layer must be a RankOneAttention, got {short_repr(layer)}")
    W = {name: M.detach().to("cpu", torch.float64).numpy() for name, M in layer.weights().items()}
    threshold = lemma1_gap(layer.n)
    with mpmath.workdps(60):
        q = [[mpmath.mpf(float(c)) for c in row] for row in layer.vocab]
        WQ = [[mpmath.mpf(float(c)) for c in row] for row in W["W_Q"]]
        WK = [[mpmath.mpf(float(c)) for c in row] for row in W["W_K"]]
        Q = [[mpmath.fsum(a * b for a, b in zip(wr, x, strict=True)) for wr in WQ] for x in q]
        K = [[mpmath.fsum(a * b for a, b in zip(wr, x, strict=True)) for wr in WK] for x in q]
        gap, top = mpmath.inf, mpmath.mpf(0)
        for qt in Q:
            scores = sorted(mpmath.fsum(a * b for a, b in zip(qt, k, strict=True)) for k in K)
            top = max(top, abs(scores[0]), abs(scores[-1]))
            diffs = [hi - lo for lo, hi in zip(scores, scores[1:], strict=False) if hi != lo]
            if diffs:
                gap = min(gap, min(diffs))
        margin = gap - exact.to_mpf("threshold", threshold)
        fields = {"gap": gap, "margin": margin, "r": top}
        for name, value in fields.items():
            stored = float(value)
            if not math.isfinite(stored) or (stored == 0 and value != 0):
                # an overridden gamma (or tokens near the float limits): the float64 layer
                # itself cannot compute such scores, so no float answer describes it
                raise ValueError(
                    f"the scores of layer leave float64's range ({name} = "
                    f"{mpmath.nstr(value, 5)}); build layer with a smaller gamma or rescale its "
                    f"vocab"
                )
        r_bound = float(layer.gamma) * float(layer.r_max) * float(layer.r_max)
        if not math.isfinite(r_bound):
            raise ValueError(
                f"the score bound gamma r_max^2 of layer overflows float64 (gamma="
                f"{layer.gamma:.3g}, r_max={layer.r_max:.3g}); rescale its vocab"
            )
        return ScoreSeparation(float(gap), threshold, float(margin), float(top), r_bound)


def as_head_dim(head_dim: int, d: int) -> int:
    """``head_dim`` of a rank-1 layer on ``d``-dimensional tokens, validated before anything is
    built.

    Args:
        head_dim: the head size ``s``, an integer ``>= 1`` (bools refused).
        d: the token dimension, an integer ``>= 1``.

    Returns:
        ``head_dim`` as a Python int.

    Raises:
        ValueError: if ``head_dim`` or ``d`` is not a positive integer, or the layer's
            parameters would exceed :data:`lib.layers.MAX_PARAMETERS`.

    Accuracy:
        Exact: integer arithmetic, no rounding; nothing is allocated.

    Source: the head size ``s`` of K&S Theorem 2's rank-1 layer (any ``s >= 1``); used by
    :class:`RankOneAttention` and :func:`lib.memorization.memorizing_transformer` (Chapters 2-3).
    """
    head_dim = positive_int("head_dim", head_dim)
    d = positive_int("d", d)
    _require_parameter_count(
        f"a rank-1 layer with head_dim={head_dim:,} on d={d:,}",
        SelfAttention.parameter_count(d, d, d, head_dim, 1),
    )
    return head_dim


class RankOneAttention(SelfAttention):
    r"""The rank-1 self-attention layer of K&S Theorem 2, as the book reconstructs its construction.

    With a unit direction ``w`` of projection constant :math:`c_w` and
    :math:`\gamma = (2\log n + 3)/(c_w^2 r_{\min} \epsilon)`:
    :math:`W_Q = \gamma e_1 w^\top`, :math:`W_K = W_V = e_1 w^\top`,
    :math:`W_O = \frac{\epsilon}{4 r_{\max}} u e_1^\top` with :math:`u = w`. Query token ``t`` of a
    sequence ``X`` then receives ``t + (eps / (4 r_max)) * boltz(a) / (gamma w.t) * u`` with
    ``a = gamma (w.t) (X w)`` — a context id.

    Args:
        vocab: the tokens ``(K, d)``, pairwise distinct and non-zero.
        n: sequence length, ``>= 2``.
        w: the direction; by default the best of 64 seeded random directions.
        eps, r_min, r_max: separation constants; by default those of
            :func:`lib.separation.strict_constants` (1% inside the tight values, so that ``vocab``
            meets Definition 1's strict inequalities and every score gap is strictly above Lemma 1's
            threshold). Given values must be consistent with ``vocab`` (``r_min <=`` every norm ``<=
            r_max``, ``eps <=`` every distance); the tight values themselves are accepted, for
            showing that they meet the hypotheses only with equality.
        head_dim: head size ``s >= 1`` (the construction uses one coordinate).
        seed: seed for the default ``w``.
        gamma: override of :math:`\gamma` (check C8: inverse temperatures outside the theorem).

    The layer is a float64, residual, rank-1 :class:`~lib.layers.SelfAttention`, fixed (no
    gradients): called on tokens ``(..., n, d)`` it returns their context ids. It also carries its
    construction.

    Attributes:
        gamma: the inverse temperature :math:`\gamma`; w, u: the unit directions ``(d,)``;
        c_w: the projection constant of ``w`` on :math:`V \cup \{0\}`; eps, r_min, r_max: the
        separation constants; n: the sequence length; vocab: the tokens ``(K, d)``.

    Raises:
        ValueError: for a zero token, repeated tokens, a ``w`` that does not separate
            :math:`V \cup \{0\}` (:math:`c_w = 0`), constants inconsistent with ``vocab``, a
            non-finite or non-positive ``gamma``, a vocabulary too large for
            :data:`lib.separation.MAX_PAIR_ENTRIES`, a vocabulary whose scale puts the theorem's
            :math:`\gamma` outside float64 (tokens near 1e-300 or 1e300, ``gamma`` not given),
            ``n`` not an integer ``>= 2`` or a bad ``head_dim`` (:func:`as_head_dim`).

    Accuracy:
        The construction is float64: ``c_w`` within :math:`(2d + 4)u` absolute
        (:math:`u = 2^{-53}`, :func:`lib.separation.projection_constant`), :math:`\gamma`
        within a few :math:`u` relative of the formula at that ``c_w``, each weight rounded
        once. Called on tokens, the float64 ids differ from an exact evaluation of the same
        weights (:func:`lib.exact.attention_mp`) by about :math:`u` times the largest id
        (at most 0.9u observed for vocabularies scaled 1e-100 to 1e100), i.e. up to about 40u
        of the correction ``id - t``: ids closer than that are not told apart in float64 (use
        :func:`context_ids`). With the tight constants the score gaps equal Lemma 1's threshold
        only up to :math:`\gamma`'s rounding (a margin of order :math:`u` times the threshold,
        either sign). The default ``w`` is deterministic for a given ``seed``. With ``gamma``
        given, a token norm near 1.8e308 makes the default ``r_max`` ``inf`` and ``W_O`` zero
        without an error.

    Source: K&S (ICLR 2024), Theorem 2; the constants are recalled and the construction is
    reconstructed by the book (see the Sources and certainty page). Chapter 2.
    """

    def __init__(
        self,
        vocab: ArrayLike,
        n: int,
        *,
        w: ArrayLike | None = None,
        eps: float | None = None,
        r_min: float | None = None,
        r_max: float | None = None,
        head_dim: int = 1,
        seed: int = 0,
        gamma: float | None = None,
    ) -> None:
        V = _vocab(vocab)
        n = positive_int("n", n, minimum=2)
        head_dim = as_head_dim(head_dim, V.shape[1])
        if len(V) < 2:
            raise ValueError(
                f"vocab must hold at least two tokens (eps is undefined), got {len(V)}"
            )
        if (V == 0).all(axis=1).any():
            raise ValueError("vocab holds the zero token; Theorem 2 needs r_min > 0")
        norms = _norms(V)
        if not np.isfinite(norms).all() or (norms == 0).any():
            raise ValueError(
                "the token norms of vocab overflow or underflow float64; rescale vocab"
            )
        tight = {"r_min": float(norms.min()), "r_max": float(norms.max()), "eps": _min_distance(V)}
        default = strict_constants(V)
        given = {"r_min": r_min, "r_max": r_max, "eps": eps}
        const = {}
        for name, value in given.items():
            const[name] = (
                default[name]
                if value is None
                else finite_real(name, value, minimum=0.0, strict=True)
            )
        if (
            const["r_min"] > tight["r_min"]
            or const["r_max"] < tight["r_max"]
            or const["eps"] > tight["eps"]
        ):
            raise ValueError(
                f"constants {const} are inconsistent with vocab (tight values {tight})"
            )
        if w is None:
            w, c_w = best_direction(V, seed=seed)
        else:
            w = _unit(w, V.shape[1])
            c_w = projection_constant(w, V)
        if c_w <= 0:
            raise ValueError(f"w={short_repr(w)} does not separate the vocabulary and 0 (c_w = 0)")
        if gamma is None:
            gamma = _theorem_gamma(n, c_w, const["r_min"], const["eps"])
        else:
            gamma = finite_real("gamma", gamma, minimum=0.0, strict=True)
        d = V.shape[1]
        e1 = np.zeros(head_dim)
        e1[0] = 1.0
        super().__init__(d, head_dim=head_dim, rank=1, residual=True, dtype=torch.float64)
        self.set_weights(
            W_Q=gamma * np.outer(e1, w),
            W_K=np.outer(e1, w),
            W_V=np.outer(e1, w),
            W_O=const["eps"] / (4 * const["r_max"]) * np.outer(w, e1),
        )
        self.requires_grad_(False)  # a fixed construction, not a model to train
        self.gamma, self.w, self.u, self.c_w, self.n, self.vocab = gamma, w, w.copy(), c_w, n, V
        self.eps, self.r_min, self.r_max = const["eps"], const["r_min"], const["r_max"]

    def extra_repr(self) -> str:
        return (
            f"n={self.n}, vocabulary of {len(self.vocab)}, "
            f"gamma={self.gamma:.6g}, c_w={self.c_w:.4g}"
        )


def _theorem_gamma(n: int, c_w: float, r_min: float, eps: float) -> float:
    """Theorem 2's ``gamma = (2 log n + 3) / (c_w^2 r_min eps)``, refused naming ``vocab`` when
    float64 cannot hold it (a vocabulary near 1e-300 or 1e300)."""
    with np.errstate(over="ignore", under="ignore"):
        denominator = c_w**2 * r_min * eps
    gamma = lemma1_gap(n) / denominator if denominator > 0 else math.inf
    if not (math.isfinite(gamma) and gamma > 0):
        raise ValueError(
            f"vocab's scale leaves Theorem 2's gamma = (2 log n + 3) / (c_w^2 r_min eps) outside "
            f"float64 (c_w={c_w:.3g}, r_min={r_min:.3g}, eps={eps:.3g}); rescale vocab or pass "
            "gamma"
        )
    return gamma


def theorem2_delta(
    n: int,
    vocab_size: int,
    d: int,
    r_min: float,
    r_max: float,
    eps: float,
    c_w: float | None = None,
) -> Theorem2Delta:
    r"""Base-10 logarithms of the separations of K&S Theorem 2.

    ``paper``: the theorem's :math:`\delta`, with the worst-case projection constant,

    .. math:: \delta = \frac{2(\log n)^2 \epsilon^2 r_{\min}}{r_{\max}^2 (|V|+1)^4 (2\log n+3)\pi d}
              \exp\Big(-\frac{(|V|+1)^4 (2\log n + 3)\pi d\, r_{\max}^2}{4 \epsilon r_{\min}}\Big).

    ``construction``: the separation the construction guarantees with a measured :math:`c_w`,
    :math:`\epsilon(\log n)^2 e^{-2\gamma r_{\max}^2}/(4\gamma r_{\max}^2)`,
    :math:`\gamma = (2\log n+3)/(c_w^2 r_{\min}\epsilon)` (equal to ``paper`` when ``c_w`` is the
    worst case). Also ``r``, the bound :math:`r_{\max} + \epsilon/4` on every context id.

    Args:
        n: sequence length ``>= 2``; vocab_size: :math:`|V| \ge 1`; d: dimension ``>= 1``.
        r_min, r_max, eps: separation constants, positive, ``r_min <= r_max``.
        c_w: measured projection constant in ``(0, 1]``; default the worst case.

    Returns:
        A :class:`Theorem2Delta`.

    Raises:
        ValueError: for out-of-range arguments, among them ``eps > 2 r_max`` (two different
            tokens of norm at most ``r_max`` are at most ``2 r_max`` apart, so no vocabulary has
            such constants) and ``r_max < r_min``; and when a base-10 logarithm itself lies
            beyond float64's range (about ``c_w < 1e-150`` for unit-size constants): the
            computation is in log space, so nothing overflows on the way, but such a logarithm
            cannot be returned as a float; or when ``r = r_max + eps / 4`` overflows float64.

    Accuracy:
        ``paper`` and ``construction`` are evaluated at 30 digits from the float64 arguments
        and rounded once: within :math:`u` relative (:math:`u = 2^{-53}`; exact to the last
        bit in probes), for any finite positive constants whose logarithm fits a float64.
        ``r`` is one float64 sum, correctly rounded (refused where it overflows).

    Source: K&S (ICLR 2024), Theorem 2 (formula recalled, see the Sources and certainty page;
    the book's reconstruction of the construction reproduces it exactly). Chapter 2.
    """
    import mpmath

    n = positive_int("n", n, minimum=2)
    K = positive_int("vocab_size", vocab_size, maximum=10**12)
    d = positive_int("d", d, maximum=10**12)
    r_min = finite_real("r_min", r_min, minimum=0.0, strict=True)
    r_max = finite_real("r_max", r_max, minimum=0.0, strict=True)
    if r_max < r_min:
        raise ValueError(f"r_max must be >= r_min, got r_min={r_min!r}, r_max={r_max!r}")
    eps = finite_real("eps", eps, minimum=0.0, strict=True)
    if eps > 2 * r_max:
        raise ValueError(f"eps must be <= 2 r_max, got eps={eps!r}, r_max={r_max!r}")
    c_w = None if c_w is None else finite_real("c_w", c_w, minimum=0.0, strict=True, maximum=1.0)

    with mpmath.workdps(30):  # log space in mpmath: no overflow or underflow on the way
        worst = (mpmath.mpf(K) + 1) ** -2 * mpmath.sqrt(8 / (mpmath.pi * d))

        def log10_delta(c: float | mpmath.mpf) -> float:
            c = mpmath.mpf(c)
            gamma = (2 * mpmath.log(n) + 3) / (c**2 * r_min * eps)
            ln = (
                mpmath.log(eps * mpmath.log(n) ** 2 / (4 * gamma * mpmath.mpf(r_max) ** 2))
                - 2 * gamma * mpmath.mpf(r_max) ** 2
            )
            out = ln / mpmath.log(10)
            if not mpmath.fabs(out) < mpmath.mpf(np.finfo(np.float64).max):
                raise ValueError(
                    f"log10 of Theorem 2's delta is {mpmath.nstr(out, 5)}, beyond float64's "
                    f"range: c_w={mpmath.nstr(c, 5)}, r_min={r_min!r}, eps={eps!r} too small or "
                    f"r_max={r_max!r} too large for it to be stored as a float (gamma alone is "
                    f"{mpmath.nstr(gamma, 5)})"
                )
            return float(out)

        paper = log10_delta(worst)
        construction = paper if c_w is None else log10_delta(c_w)
    r = r_max + eps / 4
    if not math.isfinite(r):
        raise ValueError(
            f"r = r_max + eps / 4 overflows float64 for r_max={r_max!r}, eps={eps!r}; rescale them"
        )
    return Theorem2Delta(paper, construction, r)


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
        "lib.contextual.MAX_SEQUENCE_ENTRIES",
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
    (:func:`theorem2_delta`, ``construction``) plus ``digits_beyond`` digits, or from the inverse
    temperature when ``gamma`` is overridden (the ids then differ by about
    :math:`e^{-2\\gamma r_{\\max}^2}` at worst).

    Args:
        vocab: tokens ``(K, d)``.
        n: sequence length.
        digits_beyond: spare digits, ``>= 10`` (default :data:`lib.exact.GUARD_DIGITS`).
        **kwargs: passed to :class:`RankOneAttention` (``w``, ``gamma``, ...).

    Returns:
        A :class:`ContextIds`.

    Raises:
        ValueError: as :class:`RankOneAttention`, for ``digits_beyond < 10``, for constants that
            need more than :data:`lib.exact.MAX_DPS` digits, or when the ``binom(K, n) n`` ids
            would have more pairs to compare than :data:`lib.exact.MAX_PAIRS` (checked before
            anything is evaluated) or their sequences more entries than
            :data:`MAX_SEQUENCE_ENTRIES`; also for unknown keyword arguments.

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
