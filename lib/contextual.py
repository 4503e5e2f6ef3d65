r"""Contextual mappings: K&S Theorem 2's rank-1 attention layer, the separation :math:`\delta` it
guarantees, and its projection for vocabularies too large to enumerate (Chapters 2-3).

Tokens are rows: a vocabulary is an array ``(K, d)``. The statement of Theorem 2 is quoted, its
constants recalled; the construction of the layer (:class:`RankOneAttention`) is reconstructed by
the book (see the Sources and certainty page). :func:`score_separation` checks the layer's scores
against Lemma 1 exactly, :func:`theorem2_delta` gives the theorem's and the construction's
:math:`\delta`, and :func:`theorem2_projection` computes the construction's direction and inverse
temperature for a vocabulary of thousands of tokens (Chapter 3's fixed-projection run of the
reviewers' model). The exact context ids of every subset sequence, and how their order moves with
``gamma``, are in :mod:`lib.context_ids`; tokenwise separation and the projection constant in
:mod:`lib.separation`; the hardmax counterexample of Theorem 1 in :mod:`lib.hardmax`. Every
function raises ``ValueError`` naming the argument for bad input.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from numpy.typing import ArrayLike

from ._validate import as_float_array, finite_real, positive_int, short_repr
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
    "score_separation",
    "RankOneAttention",
    "theorem2_delta",
    "theorem2_projection",
]


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
        :func:`~lib.context_ids.context_ids`). With the tight constants the score gaps equal
        Lemma 1's threshold only up to :math:`\gamma`'s rounding (a margin of order :math:`u`
        times the threshold, either sign). The default ``w`` is deterministic for a given
        ``seed``. With ``gamma`` given, a token norm near 1.8e308 makes the default ``r_max``
        ``inf`` and ``W_O`` zero without an error.

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


def theorem2_projection(
    vocab: ArrayLike, n: int, *, seed: int = 0, slack: float = 0.01, chunk: int = 512
) -> dict[str, Any]:
    r"""K&S Theorem 2's projection and inverse temperature for a vocabulary too large to hold its
    pairwise differences: one seeded random unit direction ``w``, its projection constant
    :math:`c_w` on :math:`V \cup \{0\}`, the separation constants and
    :math:`\gamma = (2\log n + 3) / (c_w^2 r_{\min} \epsilon)`.

    The constants are those of :func:`lib.separation.strict_constants` (``slack`` inside the
    tight values) and :math:`c_w` that of :func:`lib.separation.projection_constant`, computed in
    blocks of ``chunk`` rows: each block's squared distances come from the Gram identity
    :math:`|x|^2 + |x'|^2 - 2 x^\top x'` in float64, whose relative rounding error is at most
    about :math:`4 u (|x|^2 + |x'|^2) / |x - x'|^2` (``u`` the unit roundoff); a vocabulary for
    which that bound exceeds ``1e-6`` at its closest pair is refused rather than answered
    roughly.

    Args:
        vocab: tokens ``(K, d)``, float, pairwise distinct and non-zero (e.g. an embedding table
            without its padding row).
        n: the longest sequence length, ``>= 2`` (Lemma 1's gap :math:`2 \log n + 3`).
        seed: seed of the direction (numpy ``default_rng``).
        slack: as :func:`lib.separation.strict_constants`.
        chunk: rows per block (memory: about ``6 * chunk * K`` float64 entries).

    Returns:
        ``{"w": (d,) unit float64 array, "c_w", "gamma", "r_min", "r_max", "eps", "n"}``.

    Raises:
        ValueError: for a ``vocab`` that is not a finite real ``(K, d)`` array with ``K >= 2``
            distinct non-zero rows, a bad ``n``, ``seed``, ``slack`` or ``chunk``, a direction
            that does not separate the tokens (:math:`c_w = 0`), or distances the Gram identity
            cannot give to ``1e-6``.

    Accuracy:
        The projections ``p = V w`` are float64 dot products of length ``d``, each off by at
        most :math:`\gamma_d r_{max}` (:math:`\gamma_d = du/(1-du)`), so ``c_w`` (a minimum of
        :math:`|p_i - p_j| / |v_i - v_j|`) is within :math:`2\gamma_d r_{max} /
        (c_w\,\varepsilon)` of its exact value relatively, plus the Gram identity's 1e-6 on the
        distances; ``gamma`` inherits twice that. Processors whose matrix products round
        differently agree to these bounds, not to the last digit.

    Source: K&S (ICLR 2024) Theorem 2, the construction as the book reconstructs it (see the
    Sources page; :class:`RankOneAttention` for small vocabularies). Chapter 3, the reviewers'
    question (:mod:`lib.experiments.conll` holds every block's projection of the described model
    at this value).
    """
    V = as_float_array("vocab", vocab, min_ndim=2)
    if V.ndim != 2 or len(V) < 2:
        raise ValueError(f"vocab must have shape (K, d) with K >= 2, got {V.shape}")
    n = positive_int("n", n, minimum=2)
    chunk = positive_int("chunk", chunk, maximum=1 << 16)
    slack = finite_real("slack", slack, minimum=0.0, strict=True, maximum=1.0)
    if slack >= 1.0:
        raise ValueError(f"slack must be < 1, got {slack!r}")
    sq = np.einsum("ij,ij->i", V, V)
    if (sq == 0).any():
        raise ValueError(f"vocab holds the zero token (row {int(np.argmin(sq))})")
    rng = np.random.default_rng(positive_int("seed", seed, minimum=0))
    w = rng.normal(size=V.shape[1])
    # rng.normal(size=...) is an array; the stub picks its scalar overload for the Any size
    w /= np.linalg.norm(w)  # type: ignore[assignment]
    P = np.vstack([V, np.zeros((1, V.shape[1]))])  # V and 0
    p, sqP = P @ w, np.append(sq, 0.0)
    K = len(V)
    eps2, c_w, worst = np.inf, np.inf, 0.0
    for a in range(0, K + 1, chunk):
        b = min(a + chunk, K + 1)
        D2 = sqP[a:b, None] + sqP[None, a:] - 2.0 * (P[a:b] @ P[a:].T)
        upper = np.triu(np.ones((b - a, K + 1 - a), dtype=bool), 1)  # pairs j > i only
        D2 = np.where(upper, np.maximum(D2, 0.0), np.inf)
        tokens = D2[:, : K - a] if a < K else D2[:, :0]  # pairs of two tokens (0 excluded)
        if tokens.size and tokens.min() < eps2:
            i, j = np.unravel_index(np.argmin(tokens), tokens.shape)
            eps2 = float(tokens[i, j])
            worst = 4 * np.finfo(float).eps * (sqP[a + i] + sqP[a + j]) / max(eps2, 1e-300)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(upper, np.abs(p[a:b, None] - p[None, a:]) / np.sqrt(D2), np.inf)
        c_w = min(c_w, float(ratio.min()))
    if eps2 == 0 or worst > 1e-6:
        raise ValueError(
            "vocab has two tokens too close for the Gram identity (relative error bound "
            f"{worst:.1e} > 1e-6) or equal tokens"
        )
    if not c_w > 0:
        raise ValueError(
            f"vocab is not separated from 0 by the random direction of seed={seed} (c_w = 0: a "
            "token at 0, two tokens of equal projection, or a scale float64 cannot hold)"
        )
    norms = np.sqrt(sq)
    r_min, r_max = float(norms.min()) * (1 - slack), float(norms.max()) * (1 + slack)
    eps = float(np.sqrt(eps2)) * (1 - slack)
    gamma = lemma1_gap(n) / (c_w**2 * r_min * eps)
    return {"w": w, "c_w": c_w, "gamma": gamma, "r_min": r_min, "r_max": r_max, "eps": eps, "n": n}
