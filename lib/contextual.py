r"""Contextual mappings: tokenwise separation, the projection constant, K&S Theorem 2's rank-1
attention layer and the hardmax counterexample of Theorem 1 (Chapter 2).

Tokens are rows: a family of ``N`` sequences of ``n`` tokens in :math:`\mathbb{R}^d` is an array
of shape ``(N, n, d)``. The shapes of K&S Definition 1 and Theorems 1-2 are quoted, their
constants recalled; the construction of the Theorem 2 layer and the Theorem 1 counterexample are
reconstructed by the book (see the Sources and certainty page).

Functions that enumerate subsets, pairs or random draws check the count first against
:data:`MAX_SEQUENCE_ENTRIES`, :data:`MAX_PAIR_ENTRIES`, :data:`MAX_DRAWS` (and
:data:`lib.exact.MAX_PAIRS` for :func:`context_ids`) and raise ``ValueError`` beyond them.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
import torch

from ._validate import (
    as_float_array,
    capped_comb,
    check_size,
    finite_real,
    positive_int,
    short_repr,
)
from .boltzmann import lemma1_gap
from .layers import SelfAttention, _check_parameters

__all__ = [
    "check_head_dim",
    "ScoreSeparation",
    "Theorem2Delta",
    "ContextIds",
    "LimitReversals",
    "tokenwise_separation",
    "strict_constants",
    "score_separation",
    "vocabulary",
    "projection_constant",
    "projection_bound",
    "projection_miss_expectation",
    "best_direction",
    "RankOneAttention",
    "theorem2_delta",
    "subset_sequences",
    "hardmax_counterexample",
    "id_difference",
    "id_distance",
    "order_flips",
    "limit_reversals",
    "hardmax_trials",
    "context_ids",
    "MAX_SEQUENCE_ENTRIES",
    "MAX_PAIR_ENTRIES",
    "MAX_DRAWS",
]

#: Largest number of float64 entries :func:`subset_sequences` builds (``binom(K, n) n d``, 128 MiB).
MAX_SEQUENCE_ENTRIES = 2**24
#: Largest number of float64 entries of the pairwise differences of tokens (``binom(K + 1, 2) d``)
#: that :func:`tokenwise_separation`, :func:`projection_constant` and
#: :class:`RankOneAttention` form.
MAX_PAIR_ENTRIES = 2**24
#: Largest number of random draws :func:`best_direction` and :func:`hardmax_trials` make.
MAX_DRAWS = 100_000


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


def _sequences(X, name: str = "X") -> np.ndarray:
    arr = as_float_array(name, X, min_ndim=3)
    if arr.ndim != 3:
        raise ValueError(f"{name} must have shape (N, n, d), got {arr.shape}")
    return arr


def tokenwise_separation(X) -> tuple[float, float, float]:
    r"""The tight constants of K&S Definition 1 for sequences ``X``.

    Args:
        X: array ``(N, n, d)``: ``N`` sequences of ``n`` tokens (rows) in :math:`\mathbb{R}^d`.

    Returns:
        ``(r_min, r_max, eps)``, the smallest and largest token norm and the smallest distance
        between two different tokens anywhere in ``X``. The sequences are tokenwise
        :math:`(r_{\min}', r_{\max}', \epsilon')`-separated for every :math:`r_{\min}' < r_{\min}`,
        :math:`r_{\max}' > r_{\max}`, :math:`\epsilon' < \epsilon` (the definition's inequalities
        are strict). ``eps`` is ``inf`` when all tokens are equal.

    Raises:
        ValueError: for a wrong shape, NaN/inf, complex or bool entries, a sequence that holds the
            same token twice (Theorem 2 excludes it), or more than :data:`MAX_PAIR_ENTRIES`
            entries of pairwise differences.

    Source: K&S (ICLR 2024), Definition 1 (name and triple quoted, wording recalled). Chapter 2.
    """
    arr = _sequences(X)
    for i, seq in enumerate(arr):
        if len(np.unique(seq, axis=0)) != len(seq):
            raise ValueError(f"X[{i}] holds a duplicate token: {short_repr(seq)}")
    norms = _norms(arr)
    if not np.isfinite(norms).all():
        raise ValueError("token norms overflow float64; rescale the tokens")
    vocab = vocabulary(arr)
    return float(norms.min()), float(norms.max()), _min_distance(vocab)


def strict_constants(vocab, slack: float = 0.01) -> dict[str, float]:
    r"""Constants for which ``vocab`` is tokenwise separated with the strict inequalities of
    Definition 1.

    The tight constants of :func:`tokenwise_separation` are attained by some token or pair, so
    Definition 1's strict inequalities fail for them. These move each one by the factor
    ``slack``: ``r_min = (1 - slack) min ||x||``, ``r_max = (1 + slack) max ||x||``,
    ``eps = (1 - slack) min ||x - x'||``. With them, every score gap of the Theorem 2 layer
    (:class:`RankOneAttention`) is at least :math:`(2\log n + 3)/(1 - \text{slack})^2`, strictly
    above the threshold of K&S Lemma 1.

    Args:
        vocab: tokens ``(K, d)``, ``K >= 2``, pairwise distinct and non-zero.
        slack: relative margin in ``(0, 1)``.

    Returns:
        ``{"r_min": ..., "r_max": ..., "eps": ...}``, ready to pass to :class:`RankOneAttention`
        or :func:`context_ids`.

    Raises:
        ValueError: for bad ``vocab`` (fewer than two tokens, a zero or repeated token, NaN/inf,
            complex or bool entries) or ``slack`` outside ``(0, 1)``.

    Source: K&S (ICLR 2024), Definition 1 (strict inequalities; wording recalled) and the gap
    condition of Lemma 1. Chapter 2.
    """
    V = _vocab(vocab)
    slack = finite_real("slack", slack, minimum=0.0, strict=True, maximum=1.0)
    if slack >= 1.0:
        raise ValueError(f"slack must be < 1, got {slack!r}")
    if len(V) < 2:
        raise ValueError(f"vocab must hold at least two tokens (eps is undefined), got {len(V)}")
    norms = _norms(V)
    if not np.isfinite(norms).all() or (norms == 0).any():
        raise ValueError("vocab holds the zero token or norms that overflow float64")
    return {
        "r_min": float(norms.min()) * (1 - slack),
        "r_max": float(norms.max()) * (1 + slack),
        "eps": _min_distance(V) * (1 - slack),
    }


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
        ValueError: if ``layer`` is not a layer of :class:`RankOneAttention`.

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
        return ScoreSeparation(
            float(gap),
            threshold,
            float(margin),
            float(top),
            float(layer.gamma) * float(layer.r_max) ** 2,
        )


def _norms(x: np.ndarray) -> np.ndarray:
    """Euclidean norms of the rows of ``x`` without overflow or underflow (scaled per row)."""
    scale = np.abs(x).max(axis=-1, keepdims=True)
    safe = np.where(scale > 0, scale, 1.0)
    with np.errstate(over="ignore"):
        return (scale * np.linalg.norm(x / safe, axis=-1, keepdims=True))[..., 0]


def _check_pairs(count: int, d: int) -> None:
    """Refuse to form the ``binom(count, 2) d`` entries of all pairwise differences beyond the
    limit."""
    check_size(
        f"the pairwise differences of {count:,} tokens in dimension {d}: the number of entries",
        count * (count - 1) // 2 * d,
        MAX_PAIR_ENTRIES,
        "lib.contextual.MAX_PAIR_ENTRIES",
    )


def _min_distance(points: np.ndarray) -> float:
    if len(points) < 2:
        return math.inf
    _check_pairs(len(points), points.shape[1])
    i, j = np.triu_indices(len(points), 1)
    with np.errstate(over="ignore"):
        diff = points[i] - points[j]
    out = float(_norms(diff).min())
    if not math.isfinite(out):
        raise ValueError("distances between the tokens overflow float64; rescale the tokens")
    return out


def vocabulary(X) -> np.ndarray:
    """The distinct tokens of ``X`` (shape ``(N, n, d)``), as an array ``(K, d)`` in sorted order.

    Raises:
        ValueError: for ``X`` that is not a finite real ``(N, n, d)`` array (complex and bool
            refused).
    """
    arr = _sequences(X)
    return np.unique(arr.reshape(-1, arr.shape[-1]), axis=0)


def _vocab(vocab) -> np.ndarray:
    V = as_float_array("vocab", vocab, min_ndim=2)
    if V.ndim != 2:
        raise ValueError(f"vocab must have shape (K, d), got {V.shape}")
    if len(np.unique(V, axis=0)) != len(V):
        raise ValueError("vocab holds the same token twice")
    return V


def _unit(w, d: int) -> np.ndarray:
    w = as_float_array("w", w)
    if w.shape != (d,):
        raise ValueError(f"w must have shape ({d},), got {w.shape}")
    if not np.any(w):
        raise ValueError("w must be non-zero")
    w = w / np.abs(w).max()  # scale first: the norm of a huge w would overflow
    return w / np.linalg.norm(w)


def projection_constant(w, vocab) -> float:
    r"""The constant :math:`c_w = \min_{x \ne x'} |w^\top (x - x')| / \|x - x'\|` over
    :math:`V \cup \{0\}`.

    Args:
        w: direction ``(d,)``; it is normalised to unit length.
        vocab: tokens ``(K, d)``, pairwise distinct.

    Returns:
        :math:`c_w \in [0, 1]`; 0 means ``w`` does not separate some pair (the construction then
        fails). Including 0 makes :math:`|w^\top x| \ge c_w \|x\|` for every token.

    Raises:
        ValueError: for wrong shapes, NaN/inf, complex or bool entries, a zero ``w``, repeated
            tokens, or more than :data:`MAX_PAIR_ENTRIES` entries of pairwise differences.

    Source: the projection lemma K&S cite (Park et al. 2021) for Theorem 2; its use in the
    construction is reconstructed by the book (see the Sources and certainty page). Chapter 2.
    """
    V = _vocab(vocab)
    u = _unit(w, V.shape[1])
    _check_pairs(len(V) + 1, V.shape[1])
    points = np.vstack([V, np.zeros((1, V.shape[1]))]) if not (V == 0).all(axis=1).any() else V
    if len(points) < 2:
        raise ValueError("vocab must hold a non-zero token")
    i, j = np.triu_indices(len(points), 1)
    # Subtract the tokens as given (exact for close tokens), then scale each difference by its
    # own largest entry: c_w is scale invariant per pair. Rescaling V first would round close
    # tokens before they are subtracted.
    with np.errstate(over="ignore"):
        diff = points[i] - points[j]
    far = ~np.isfinite(diff).all(axis=1)  # opposite tokens near float64's top: halve them first
    diff[far] = 0.5 * points[i[far]] - 0.5 * points[j[far]]
    scale = np.abs(diff).max(axis=1, keepdims=True)
    diff = diff / scale
    c = float((np.abs(diff @ u) / np.linalg.norm(diff, axis=1)).min())
    if not math.isfinite(c):
        raise ValueError("the projection constant is not finite for this vocabulary")
    return min(c, 1.0)  # rounding can push a perfect projection a hair above 1


def projection_bound(vocab_size: int, d: int) -> float:
    r"""The worst-case projection constant :math:`(|V|+1)^{-2}\sqrt{8/(\pi d)}` (Park et al. 2021).

    Raises:
        ValueError: for non-positive sizes.

    Source: Park et al. (2021), the constant in K&S Theorem 2 (its role there reconstructed by
    the book; see the Sources and certainty page). Chapter 2 (check C9).
    """
    K = positive_int("vocab_size", vocab_size, maximum=10**12)
    d = positive_int("d", d, maximum=10**12)
    return (K + 1) ** -2 * math.sqrt(8.0 / (math.pi * d))


def projection_miss_expectation(vocab_size: int, d: int) -> float:
    r"""Expected number of pairs of :math:`V \cup \{0\}` that a random direction projects below
    :func:`projection_bound`.

    For a unit ``w`` drawn uniformly from the sphere and any fixed pair :math:`x \ne x'`, the
    cosine :math:`t = w^\top (x - x') / \|x - x'\|` is distributed as one coordinate of a random
    unit vector of :math:`\mathbb{R}^d`, so :math:`P(|t| < b) = I_{b^2}(\tfrac12, \tfrac{d-1}{2})`
    (regularised incomplete beta function), whatever the vocabulary. With
    :math:`b` = ``projection_bound(vocab_size, d)`` and :math:`\binom{|V|+1}{2}` pairs,

    .. math:: \lambda = \binom{|V|+1}{2}\, I_{b^2}\big(\tfrac12, \tfrac{d-1}{2}\big).

    By the union bound a random direction reaches ``b`` with probability at least
    :math:`1 - \lambda` for every vocabulary of ``vocab_size`` distinct non-zero tokens, and
    :math:`\lambda < 2/\pi` (the density of :math:`t` is at most
    :math:`\Gamma(d/2) / (\sqrt\pi\,\Gamma((d-1)/2)) < \sqrt{d / (2\pi)}` near 0 for
    :math:`d \ge 3`). If the pairs fell below ``b`` independently, the probability would be
    :math:`e^{-\lambda}` (a Poisson heuristic, which check C9 tests on random vocabularies).

    Args:
        vocab_size: :math:`|V| \ge 1`.
        d: dimension ``>= 1``; for ``d = 1`` every pair projects with :math:`|t| = 1` and the
            result is 0.

    Returns:
        :math:`\lambda` as a Python float.

    Raises:
        ValueError: for non-positive sizes (as :func:`projection_bound`).

    Source: the book's reading of the projection lemma (Park et al. 2021) behind K&S Theorem 2
    (reconstructed; see the Sources and certainty page). Chapter 2 (check C9).
    """
    import mpmath

    b = projection_bound(vocab_size, d)
    d = positive_int("d", d)
    if d == 1:
        return 0.0
    with mpmath.workdps(30):
        p = mpmath.betainc(
            mpmath.mpf(1) / 2, mpmath.mpf(d - 1) / 2, 0, mpmath.mpf(b) ** 2, regularized=True
        )
        return float(mpmath.binomial(vocab_size + 1, 2) * p)


def best_direction(vocab, draws: int = 64, seed: int = 0) -> tuple[np.ndarray, float]:
    """The best of ``draws`` random Gaussian unit directions for :func:`projection_constant`.

    Returns:
        ``(w, c_w)`` with ``w`` a unit float64 vector ``(d,)``.

    Raises:
        ValueError: for bad ``vocab`` (as :func:`projection_constant`), ``draws`` outside
            ``[1, MAX_DRAWS]`` (:data:`MAX_DRAWS`) or a negative ``seed``.

    Source: the book's check C9 of the projection constant in K&S Theorem 2 ("take the best of
    k random w"). Chapter 2.
    """
    V = _vocab(vocab)
    draws = positive_int("draws", draws, maximum=MAX_DRAWS)
    _check_pairs(len(V) + 1, V.shape[1])
    rng = np.random.default_rng(positive_int("seed", seed, minimum=0))
    best, best_c = None, -1.0
    for _ in range(draws):
        w = rng.normal(size=V.shape[1])
        w /= np.linalg.norm(w)
        c = projection_constant(w, V)
        if c > best_c:
            best, best_c = w, c
    if best_c <= 0:
        raise ValueError("no random direction separates this vocabulary (every c_w is 0)")
    return best, best_c


def check_head_dim(head_dim, d: int) -> int:
    """``head_dim`` of a rank-1 layer on ``d``-dimensional tokens, checked before anything is built.

    Raises:
        ValueError: if ``head_dim`` is not a positive integer, or the layer's parameters would
            exceed :data:`lib.layers.MAX_PARAMETERS`.

    Source: the head size ``s`` of K&S Theorem 2's rank-1 layer (any ``s >= 1``); used by
    :class:`RankOneAttention` and :func:`lib.memorization.memorizing_transformer` (Chapters 2-3).
    """
    head_dim = positive_int("head_dim", head_dim)
    d = positive_int("d", d)
    _check_parameters(
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
        eps, r_min, r_max: separation constants; by default those of :func:`strict_constants`
            (1% inside the tight values, so that ``vocab`` meets Definition 1's strict
            inequalities and every score gap is strictly above Lemma 1's threshold). Given values
            must be consistent with ``vocab`` (``r_min <=`` every norm ``<= r_max``, ``eps <=``
            every distance); the tight values themselves are accepted, for showing that they
            meet the hypotheses only with equality.
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
            non-finite or non-positive ``gamma``, or a vocabulary too large for
            :data:`MAX_PAIR_ENTRIES`.

    Source: K&S (ICLR 2024), Theorem 2; the constants are recalled and the construction is
    reconstructed by the book (see the Sources and certainty page). Chapter 2.
    """

    def __init__(
        self,
        vocab,
        n: int,
        *,
        w=None,
        eps=None,
        r_min=None,
        r_max=None,
        head_dim: int = 1,
        seed: int = 0,
        gamma=None,
    ):
        V = _vocab(vocab)
        n = positive_int("n", n, minimum=2)
        head_dim = check_head_dim(head_dim, V.shape[1])
        if len(V) < 2:
            raise ValueError(
                f"vocab must hold at least two tokens (eps is undefined), got {len(V)}"
            )
        if (V == 0).all(axis=1).any():
            raise ValueError("vocab holds the zero token; Theorem 2 needs r_min > 0")
        norms = _norms(V)
        if not np.isfinite(norms).all() or (norms == 0).any():
            raise ValueError("token norms overflow or underflow float64; rescale the vocabulary")
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
            gamma = lemma1_gap(n) / (c_w**2 * const["r_min"] * const["eps"])
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
            cannot be returned as a float.

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

        def log10_delta(c) -> float:
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
    return Theorem2Delta(paper, construction, r_max + eps / 4)


def subset_sequences(vocab, n: int) -> np.ndarray:
    """All ``n``-subsets of the tokens of ``vocab`` as sequences ``(binom(K, n), n, d)``.

    No two are permutations of each other and none repeats a token: the family of checks C6-C7
    of K&S Theorem 2 (Chapters 2-3).

    Raises:
        ValueError: for bad ``vocab``, ``n`` outside ``[1, K]``, or more than
            :data:`MAX_SEQUENCE_ENTRIES` entries ``binom(K, n) n d`` (checked before building).
    """
    V = _vocab(vocab)
    n = positive_int("n", n, maximum=len(V))
    count = capped_comb(len(V), n, MAX_SEQUENCE_ENTRIES)
    check_size(
        f"subset_sequences of {len(V)} tokens, n = {n}: the number of entries "
        f"binom({len(V)}, {n}) * {n} * {V.shape[1]}",
        count * n * V.shape[1],
        MAX_SEQUENCE_ENTRIES,
        "lib.contextual.MAX_SEQUENCE_ENTRIES",
    )
    return np.array([V[list(idx)] for idx in itertools.combinations(range(len(V)), n)])


def hardmax_counterexample(v) -> np.ndarray:
    r"""Two sequences that no hardmax attention layer tells apart at their first token.

    :math:`X^{(1)} = [v, 2v, 3v, 4v]` and :math:`X^{(2)} = [v, 1.5v, 3.5v, 4v]`: distinct, not
    permutations of each other, free of duplicates and tokenwise separated. For query ``v`` every
    score is linear in the token's coefficient, so hardmax picks ``4v`` (positive slope), ``v``
    (negative) or averages all four (zero slope, mean ``2.5v`` in both) — the same in both.

    Args:
        v: a non-zero vector ``(d,)``.

    Returns:
        float64 array ``(2, 4, d)``.

    Raises:
        ValueError: if ``v`` is zero, not 1-D, or not finite.

    Source: K&S (ICLR 2024), Theorem 1 (statement quoted; this counterexample is reconstructed
    by the book, see the Sources and certainty page). Chapter 2 (check C5).
    """
    v = as_float_array("v", v)
    if v.ndim != 1:
        raise ValueError(f"v must be 1-D, got shape {v.shape}")
    if not np.any(v):
        raise ValueError("v must be non-zero")
    coeffs = np.array([[1.0, 2.0, 3.0, 4.0], [1.0, 1.5, 3.5, 4.0]])
    with np.errstate(over="ignore"):
        pair = coeffs[:, :, None] * v[None, None, :]
    if not np.isfinite(pair).all() or any(len(np.unique(seq, axis=0)) < 4 for seq in pair):
        raise ValueError(
            f"v={short_repr(v)} is too large or too small: 4v overflows or the tokens coincide"
        )
    return pair


def id_difference(layer: SelfAttention, pair, token: int = 0, dps: int = 50) -> list:
    """Exact difference ``F(X1)[token] - F(X2)[token]`` of the context ids of one token (mpmath).

    Only the outputs of tokens ``0..token`` are evaluated (:func:`lib.exact.attention_mp` with
    ``rows``); every token still serves as a key.

    Args:
        layer: a :class:`~lib.layers.SelfAttention`.
        pair: array ``(2, n, d)``.
        token: index of the token whose ids are compared.
        dps: decimal digits.

    Returns:
        A list of ``d`` mpf, each carrying ``dps`` digits.

    Raises:
        ValueError: for a pair of the wrong shape or a bad ``token``/``dps``.

    Source: K&S Theorem 1 (the book's check C5 and the scale sweep that follows it). Chapter 2.
    """
    import mpmath

    from . import exact

    arr = _sequences(pair, "pair")
    if arr.shape[0] != 2:
        raise ValueError(f"pair must hold two sequences, got shape {arr.shape}")
    token = positive_int("token", token, minimum=0, maximum=arr.shape[1] - 1)
    ids = exact.attention_mp(arr, layer, dps, rows=token + 1)
    with mpmath.workdps(dps):
        return [p - q for p, q in zip(ids[0][token], ids[1][token], strict=True)]


def id_distance(layer: SelfAttention, pair, token: int = 0, dps: int = 50):
    """Exact distance between the context ids of ``token`` in two sequences (mpmath).

    Args:
        layer: a :class:`~lib.layers.SelfAttention`.
        pair: array ``(2, n, d)``.
        token: index of the token whose ids are compared.
        dps: decimal digits.

    Returns:
        ``||F(X1)[token] - F(X2)[token]||`` as an mpf with ``dps`` digits.

    Raises:
        ValueError: for a pair of the wrong shape or a bad ``token``/``dps``.

    Source: K&S Theorem 1 (check C5). Chapter 2.
    """
    import mpmath

    diff = id_difference(layer, pair, token, dps)
    with mpmath.workdps(dps):
        return mpmath.sqrt(mpmath.fsum(c**2 for c in diff))


def _head_weights(rng, s: int, d: int, scale: float, zero_q: bool) -> dict:
    W = {name: scale * rng.normal(size=(s, d)) for name in ("W_Q", "W_K", "W_V")}
    W["W_O"] = rng.normal(size=(d, s))
    if zero_q:
        W["W_Q"] = np.zeros((s, d))
    return W


def _first_id_difference(weights: list, arr: np.ndarray, normalizer: str, dps: int) -> list:
    """``F(X1)[0] - F(X2)[0]`` for ``F(X) = X + sum of heads`` (one weight dict per head), in
    mpmath.

    The same formula as :func:`lib.exact.attention_mp`, restricted to the first query of each
    sequence and summed over heads, without building a layer per head.
    """
    import mpmath

    def mp(M):
        return [[mpmath.mpf(float(c)) for c in row] for row in np.atleast_2d(M)]

    def apply(M, x):
        return [mpmath.fsum(a * b for a, b in zip(row, x, strict=True)) for row in M]

    with mpmath.workdps(dps):
        X = [mp(seq) for seq in arr]
        diff = [a - b for a, b in zip(X[0][0], X[1][0], strict=True)]
        for W in weights:
            WQ, WK, WV, WO = (mp(W[name]) for name in ("W_Q", "W_K", "W_V", "W_O"))
            for sign, seq in ((1, X[0]), (-1, X[1])):
                q = apply(WQ, seq[0])
                scores = [
                    mpmath.fsum(a * b for a, b in zip(q, apply(WK, x), strict=True)) for x in seq
                ]
                top = max(scores)
                if normalizer == "softmax":
                    wts = [mpmath.exp(sc - top) for sc in scores]
                else:
                    wts = [mpmath.mpf(1) if sc == top else mpmath.mpf(0) for sc in scores]
                total = mpmath.fsum(wts)
                values = [apply(WV, x) for x in seq]
                head = [
                    mpmath.fsum(w * v[j] for w, v in zip(wts, values, strict=True)) / total
                    for j in range(len(WV))
                ]
                diff = [c + sign * o for c, o in zip(diff, apply(WO, head), strict=True)]
        return diff


def _exact_first_distance(weights: list, arr: np.ndarray, normalizer: str, draw: int):
    """Exact distance between the first-token ids of ``arr[0]`` and ``arr[1]`` under
    ``X + sum of heads``.

    Hardmax heads are evaluated at 60 digits (no exponentials; a tie is an equality of the
    scores as computed at that precision). Softmax heads start at 40 digits and double the
    precision until the distance is resolved to 20 significant digits relative to the ids, up
    to ``40 + ceil(spread / ln 10)`` digits, where ``spread`` is the largest difference between
    two first-query scores of a head: at that precision every softmax weight, down to
    ``exp(-spread)`` relative to the largest, is carried with 40 digits, and a distance of 0 is
    an exact collision.

    Returns ``(distance as mpf, digits used)``.
    """
    import mpmath

    from . import exact as exact_mod

    def distance(dps):
        diff = _first_id_difference(weights, arr, normalizer, dps)
        with mpmath.workdps(dps):
            return mpmath.sqrt(mpmath.fsum(c**2 for c in diff))

    if normalizer == "hardmax":
        return distance(60), 60
    spread = max(
        float(np.ptp((arr[:, :1] @ W["W_Q"].T) @ (arr @ W["W_K"].T).transpose(0, 2, 1)))
        for W in weights
    )
    cap = 40 + math.ceil(spread / math.log(10))
    if cap > exact_mod.MAX_DPS:
        raise ValueError(
            f"draw {draw}: first scores spread {spread:.3g} apart need {cap} digits, "
            f"more than lib.exact.MAX_DPS={exact_mod.MAX_DPS}"
        )
    size = float(np.abs(arr[:, 0]).max()) + 1.0
    dps = 40
    while True:
        dist = distance(dps)
        if dps >= cap or (dist > 0 and mpmath.log10(dist) > math.log10(size) - dps + 20):
            return dist, dps
        dps = min(2 * dps, cap)


def hardmax_trials(
    pair, draws: int = 2000, seed: int = 0, *, max_heads: int = 1, exact: bool = False
):
    """Check C5: first-token id distances of ``pair`` under random hardmax and softmax layers.

    Draw ``i`` uses ``h = 1 + (i // 9) % max_heads`` heads, each of head size ``1 + i % 3``, weight
    scale ``(0.1, 1, 10)[(i // 3) % 3]`` for ``W_Q, W_K, W_V`` (standard normal entries times the
    scale) and a standard normal ``W_O``; every head has ``W_Q = 0`` (every query ties) when
    ``i % 10 == 0``. The layer is ``X + sum of the heads`` (K&S's multi-head :math:`F^{(SA)}`);
    the same weights go into a hardmax and a softmax layer, evaluated in float64. With
    ``max_heads = 1`` the draws are those of a single residual head.

    With ``exact=True`` both layers are also evaluated in mpmath (the formula of
    :func:`lib.exact.attention_mp`, first token only): the hardmax at 60 digits, the softmax at a
    precision doubled from 40 digits until the distance is resolved to 20 significant digits, at
    most ``40 + ceil(spread / ln 10)`` digits (``spread``: the largest difference between two scores
    of the first query in any head), at which every softmax weight down to ``exp(-spread)``
    relative to the largest is carried with 40 digits and a distance of 0 is an exact collision.

    Args:
        pair: array ``(2, n, d)``, e.g. :func:`hardmax_counterexample`.
        draws: number of weight draws, ``>= 1``.
        seed: seed of the draws.
        max_heads: largest number of heads, ``1 <= max_heads <= 8``.
        exact: also evaluate the distances in exact arithmetic.

    Returns:
        A pandas DataFrame with one row per draw and the columns ``heads``, ``head_size``,
        ``scale``, ``w_q_zero`` (all queries tie), ``hardmax`` and ``softmax`` (the two float64
        distances); with ``exact``, also ``dps`` (the softmax's final precision),
        ``log10_hardmax_exact`` and ``log10_softmax_exact`` (base-10
        logarithms of the exact distances, ``-inf`` for an exact collision; logarithms because
        the distances can lie far below float64's range) and ``softmax_error``, the absolute
        difference between the float64 and the exact softmax distance.

    Raises:
        ValueError: for a bad pair, ``draws`` outside ``[1, MAX_DRAWS]`` (:data:`MAX_DRAWS`), a
            negative ``seed``, ``max_heads`` outside ``[1, 8]``, a non-bool ``exact``, or first
            scores so spread that the exact evaluation would need more than
            :data:`lib.exact.MAX_DPS` digits.

    Source: K&S Theorem 1, the book's check C5. Chapter 2.
    """
    import mpmath
    import pandas as pd

    from ._validate import flag

    arr = _sequences(pair, "pair")
    if arr.shape[0] != 2:
        raise ValueError(f"pair must hold two sequences, got shape {arr.shape}")
    rng = np.random.default_rng(positive_int("seed", seed, minimum=0))
    max_heads = positive_int("max_heads", max_heads, maximum=8)
    draws = positive_int("draws", draws, maximum=MAX_DRAWS)
    exact = flag("exact", exact)
    d = arr.shape[2]
    X = torch.as_tensor(arr)
    layers = {
        (s, norm, j): SelfAttention(d, head_dim=s, normalizer=norm, residual=False)
        for s in (1, 2, 3)
        for norm in ("hardmax", "softmax")
        for j in range(max_heads)
    }
    rows = []
    for i in range(draws):
        s, scale, h = 1 + i % 3, (0.1, 1.0, 10.0)[(i // 3) % 3], 1 + (i // 9) % max_heads
        heads = [_head_weights(rng, s, d, scale, i % 10 == 0) for _ in range(h)]
        row = {"heads": h, "head_size": s, "scale": scale, "w_q_zero": i % 10 == 0}
        for norm in ("hardmax", "softmax"):
            with torch.no_grad():
                out = X + sum(layers[s, norm, j].set_weights(**W)(X) for j, W in enumerate(heads))
            row[norm] = (out[0, 0] - out[1, 0]).norm().item()
        if exact:
            for norm in ("hardmax", "softmax"):
                dist, dps = _exact_first_distance(heads, arr, norm, i)
                row[f"log10_{norm}_exact"] = float(mpmath.log10(dist)) if dist > 0 else -math.inf
            row["dps"] = dps
            row["softmax_error"] = float(abs(mpmath.mpf(row["softmax"]) - dist))
        rows.append(row)
    return pd.DataFrame(rows)


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
        One ``(gamma_a, gamma_b, flips)`` per neighbouring pair of runs: ``flips`` is the number of
        pairs of ids (same query token, different sequences) in opposite order at the two ends.

    Raises:
        ValueError: for fewer than two runs, runs whose sequences differ, or ``gamma`` not
            increasing.

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


def context_ids(vocab, n: int, *, digits_beyond: int = 30, **kwargs) -> ContextIds:
    """Checks C6-C8: the Theorem 2 layer on all ``n``-subsets of ``vocab``, evaluated exactly.

    The working precision is chosen from the separation the construction guarantees
    (:func:`theorem2_delta`, ``construction``) plus ``digits_beyond`` digits, or from the inverse
    temperature when ``gamma`` is overridden (the ids then differ by about
    :math:`e^{-2\\gamma r_{\\max}^2}` at worst).

    Args:
        vocab: tokens ``(K, d)``.
        n: sequence length.
        digits_beyond: spare digits, ``>= 10``.
        **kwargs: passed to :class:`RankOneAttention` (``w``, ``gamma``, ...).

    Returns:
        A :class:`ContextIds`.

    Raises:
        ValueError: as :class:`RankOneAttention`, for ``digits_beyond < 10``, for constants that
            need more than :data:`lib.exact.MAX_DPS` digits, or when the ``binom(K, n) n`` ids
            would have more pairs to compare than :data:`lib.exact.MAX_PAIRS` (checked before
            anything is evaluated) or their sequences more entries than
            :data:`MAX_SEQUENCE_ENTRIES`.

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
    ids = capped_comb(len(V), n, MAX_PAIRS) * n
    check_size(
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
    worst = max(-delta.construction, 2 * layer.gamma * layer.r_max**2 / math.log(10))
    if not worst + beyond <= MAX_DPS:
        raise ValueError(
            f"these constants (gamma={layer.gamma:.3g}, r_max={layer.r_max:.3g}, "
            f"c_w={layer.c_w:.3g}) "
            f"need about {worst:.3g} digits plus digits_beyond={beyond:,}, more than "
            f"lib.exact.MAX_DPS={MAX_DPS}"
        )
    dps = beyond + int(worst)
    ids = [row for out in exact.attention_mp(X, layer, dps) for row in out]
    gap = exact.min_distance(ids, dps, distinct=False)  # a collision must show as 0, not be skipped
    with mpmath.workdps(dps):
        max_norm = float(max(mpmath.sqrt(mpmath.fsum(c**2 for c in row)) for row in ids))
        log10_gap = float(mpmath.log10(gap)) if gap > 0 else -math.inf
    return ContextIds(layer, X, ids, dps, gap, log10_gap, max_norm, delta)
