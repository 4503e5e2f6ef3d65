r"""Tokenwise separation and the projection constant: the first step of K&S Theorem 2 (Chapter 2).

Tokens are rows: a family of ``N`` sequences of ``n`` tokens in :math:`\mathbb{R}^d` is an array
of shape ``(N, n, d)``. K&S Definition 1 (tokenwise :math:`(r_{\min}, r_{\max},
\epsilon)`-separation) and the projection constant :math:`c_w` of Theorem 2's proof: how much one
direction ``w`` shrinks the distances between the tokens of a vocabulary and 0. The shapes are
quoted from K&S, the constant of the random-projection bound recalled; the book reconstructs the
argument (see the Sources and certainty page).

Functions that form pairwise differences or random draws check the count first against
:data:`MAX_PAIR_ENTRIES` and :data:`MAX_DRAWS` and raise ``ValueError`` beyond them.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike

from ._validate import MAX_WORK as _MAX_WORK
from ._validate import (
    as_float_array,
    blame,
    finite_real,
    positive_int,
    require_size,
    short_repr,
)

__all__ = [
    "tokenwise_separation",
    "strict_constants",
    "vocabulary",
    "projection_constant",
    "projection_bound",
    "projection_miss_expectation",
    "miss_exponent",
    "dimension_exponent",
    "projection_rate_check",
    "RATE_TOLERANCE",
    "SLOPE_TOLERANCE",
    "DIMENSION_TOLERANCE",
    "best_direction",
    "MAX_PAIR_ENTRIES",
    "MAX_DRAWS",
    "MAX_WORK",
]

#: that :func:`tokenwise_separation`, :func:`projection_constant` and
#: :class:`lib.contextual.RankOneAttention` form.
MAX_PAIR_ENTRIES = 2**24
#: Largest number of random draws :func:`best_direction` and
#: :func:`lib.hardmax.hardmax_trials` make.
MAX_DRAWS = 100_000
#: Largest work of one :func:`best_direction` call, draws times the entries of the pairwise
#: differences (under a minute on one core; the same budget as :mod:`lib.cross`'s sweeps).
MAX_WORK = _MAX_WORK


def _sequences(X: ArrayLike, name: str = "X") -> np.ndarray:
    arr = as_float_array(name, X, min_ndim=3)
    if arr.ndim != 3:
        raise ValueError(f"{name} must have shape (N, n, d), got {arr.shape}")
    return arr


def tokenwise_separation(X: ArrayLike) -> tuple[float, float, float]:
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
            entries of pairwise differences; also when a token norm or a distance overflows
            float64 (about 1.8e308).

    Accuracy:
        ``r_min`` and ``r_max`` are float64 norms scaled per row, each within :math:`(d + 3)u`
        relative (:math:`u = 2^{-53}`; at most 2.2u observed for ``d <= 50``); ``eps`` also
        carries the rounding of the difference, within :math:`(d + 4)u`. This holds for entries
        from subnormal (5e-324) to 1e308 in size, 1-ulp pairs included (their difference is
        exact); beyond that the overflow is refused.

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


def strict_constants(vocab: ArrayLike, slack: float = 0.01) -> dict[str, float]:
    r"""Constants for which ``vocab`` is tokenwise separated with the strict inequalities of
    Definition 1.

    The tight constants of :func:`tokenwise_separation` are attained by some token or pair, so
    Definition 1's strict inequalities fail for them. These move each one by the factor
    ``slack``: ``r_min = (1 - slack) min ||x||``, ``r_max = (1 + slack) max ||x||``,
    ``eps = (1 - slack) min ||x - x'||``. With them, every score gap of the Theorem 2 layer
    (:class:`lib.contextual.RankOneAttention`) is at least
    :math:`(2\log n + 3)/(1 - \text{slack})^2`, strictly above the threshold of K&S Lemma 1.

    Args:
        vocab: tokens ``(K, d)``, ``K >= 2``, pairwise distinct and non-zero.
        slack: relative margin in ``(0, 1)``.

    Returns:
        ``{"r_min": ..., "r_max": ..., "eps": ...}``, ready to pass to
        :class:`lib.contextual.RankOneAttention` or :func:`lib.context_ids.context_ids`.

    Raises:
        ValueError: for bad ``vocab`` (fewer than two tokens, a zero or repeated token, NaN/inf,
            complex or bool entries) or ``slack`` outside ``(0, 1)``, a norm or distance that
            overflows float64, an ``r_max`` that overflows, or a constant that the factor does
            not move in float64 (``slack`` below about :math:`2^{-52}`, e.g. ``1e-17``, or a
            tight value among the subnormals): Definition 1's inequality would not be strict.

    Accuracy:
        Each constant is a :func:`tokenwise_separation` value times a rounded ``1 -+ slack``,
        within :math:`(d + 6)u` relative (:math:`u = 2^{-53}`; 1.3u observed), and every one
        returned differs from its tight value in float64, so the strict inequalities hold for
        the float64 numbers themselves.

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
    tight = {"r_min": float(norms.min()), "r_max": float(norms.max()), "eps": _min_distance(V)}
    out = {
        "r_min": tight["r_min"] * (1 - slack),
        "r_max": tight["r_max"] * (1 + slack),
        "eps": tight["eps"] * (1 - slack),
    }
    if not math.isfinite(out["r_max"]):
        raise ValueError(
            f"vocab's largest norm {tight['r_max']:.6g} times 1 + slack overflows float64; "
            f"rescale vocab"
        )
    for key, value in out.items():
        if value == tight[key]:  # the factor rounded away: Definition 1's inequality not strict
            raise ValueError(
                f"slack={slack!r} does not move {key} = {tight[key]!r} of vocab in float64 (a "
                f"slack below about 2^-52, or a subnormal {key}); take a larger slack or "
                f"rescale vocab"
            )
    return out


def _norms(x: np.ndarray) -> np.ndarray:
    """Euclidean norms of the rows of ``x`` without overflow or underflow (scaled per row)."""
    scale = np.abs(x).max(axis=-1, keepdims=True)
    safe = np.where(scale > 0, scale, 1.0)
    with np.errstate(over="ignore", invalid="ignore"):  # inf rows give inf or NaN, refused later
        return (scale * np.linalg.norm(x / safe, axis=-1, keepdims=True))[..., 0]


def _require_pair_count(count: int, d: int) -> None:
    """Refuse to form the ``binom(count, 2) d`` entries of all pairwise differences beyond the
    limit."""
    require_size(
        f"the pairwise differences of {count:,} tokens in dimension {d}: the number of entries",
        count * (count - 1) // 2 * d,
        MAX_PAIR_ENTRIES,
        "lib.separation.MAX_PAIR_ENTRIES",
    )


def _min_distance(points: np.ndarray) -> float:
    if len(points) < 2:
        return math.inf
    _require_pair_count(len(points), points.shape[1])
    i, j = np.triu_indices(len(points), 1)
    with np.errstate(over="ignore"):
        diff = points[i] - points[j]
    out = float(_norms(diff).min())
    if not math.isfinite(out):
        raise ValueError("distances between the tokens overflow float64; rescale the tokens")
    return out


def vocabulary(X: ArrayLike) -> np.ndarray:
    """The distinct tokens of ``X`` (shape ``(N, n, d)``), as an array ``(K, d)`` in sorted order.

    Args:
        X: sequences ``(N, n, d)``, any real dtype (converted to float64).

    Raises:
        ValueError: for ``X`` that is not a finite real ``(N, n, d)`` array (complex and bool
            refused).

    Accuracy:
        Exact: the tokens are copied, not computed (lexicographic order of
        ``numpy.unique``); ``0.0`` and ``-0.0`` count as one token. Deterministic.
    """
    arr = _sequences(X)
    return np.unique(arr.reshape(-1, arr.shape[-1]), axis=0)


def _vocab(vocab: ArrayLike) -> np.ndarray:
    V = as_float_array("vocab", vocab, min_ndim=2)
    if V.ndim != 2:
        raise ValueError(f"vocab must have shape (K, d), got {V.shape}")
    if len(np.unique(V, axis=0)) != len(V):
        raise ValueError("vocab holds the same token twice")
    return V


def _unit(w: ArrayLike, d: int) -> np.ndarray:
    w = as_float_array("w", w)
    if w.shape != (d,):
        raise ValueError(f"w must have shape ({d},), got {w.shape}")
    if not np.any(w):
        raise ValueError("w must be non-zero")
    w = w / np.abs(w).max()  # scale first: the norm of a huge w would overflow
    # w is an array: numpy's stub types the division above as Any, and mypy then falls back to
    # the parameter's declared ArrayLike
    return w / np.linalg.norm(w)  # type: ignore[operator, return-value]


def projection_constant(w: ArrayLike, vocab: ArrayLike) -> float:
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

    Accuracy:
        Absolute error below :math:`(2d + 4)u` (:math:`u = 2^{-53}`; at most :math:`0.45\,du`
        observed) for ``w`` and tokens from 1e-300 to 1e300 in size, near-opposite tokens near
        1.8e308 and 1-ulp pairs included. A :math:`c_w` of that order is not resolved: an exact
        0 can come back as a tiny positive number and a tiny positive one as 0 (e.g.
        ``w = [1e-300, 3e-300]`` with the token ``[3, -1]``: 0.0, exact 1.66e-17).

    Source: the projection lemma K&S cite (Park et al. 2021) for Theorem 2; its use in the
    construction is reconstructed by the book (see the Sources and certainty page). Chapter 2.
    """
    V = _vocab(vocab)
    u = _unit(w, V.shape[1])
    _require_pair_count(len(V) + 1, V.shape[1])
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


def projection_bound(vocab_size: int, d: int, *, power: float = 2) -> float:
    r"""The worst-case projection constant :math:`(|V|+1)^{-2}\sqrt{8/(\pi d)}` (Park et al. 2021).

    Args:
        vocab_size: :math:`|V| \ge 1`; d: the dimension ``>= 1``.
        power: the exponent of :math:`|V|+1` (2, the reconstructed constant; other values give
            the wrong forms :math:`(|V|+1)^{-p}\sqrt{8/(\pi d)}` that check C9 must tell apart).

    Returns:
        The constant as a Python float.

    Raises:
        ValueError: for sizes that are not integers in ``[1, 10**12]``, or a ``power`` that is
            not a real number in ``[0, 8]``.

    Accuracy:
        Within :math:`3u` relative (:math:`u = 2^{-53}`; 1.7u observed against mpmath) over the
        whole accepted domain: a few float64 operations, no overflow or underflow there.

    Source: Park et al. (2021), the constant in K&S Theorem 2 (its role there reconstructed by
    the book; see the Sources and certainty page). Chapter 2 (check C9).
    """
    K = positive_int("vocab_size", vocab_size, maximum=10**12)
    d = positive_int("d", d, maximum=10**12)
    power = finite_real("power", power, minimum=0.0, maximum=8.0)
    return (K + 1.0) ** -power * math.sqrt(8.0 / (math.pi * d))


def projection_miss_expectation(vocab_size: int, d: int, *, power: float = 2) -> float:
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
            result is 0 (every pair, :math:`\binom{|V|+1}{2}`, when ``b > 1``).
        power: the exponent of :func:`projection_bound` (2, the reconstructed constant).

    Returns:
        :math:`\lambda` as a Python float.

    Raises:
        ValueError: for sizes or a ``power`` that :func:`projection_bound` refuses.

    Accuracy:
        Within :math:`3u` relative (:math:`u = 2^{-53}`; 0.8u observed) of :math:`\lambda` at
        the exact bound: the float64 ``b`` carries under 2u, the beta function is evaluated at
        30 digits and rounded once; sizes and dimensions up to ``10**12`` take milliseconds.
        The incomplete beta function is used for :math:`b < 1` (every ``power >= 1`` gives
        it); for :math:`b \ge 1` (a smaller ``power`` with ``d <= 2``) every pair misses and
        :math:`\binom{|V|+1}{2}` is returned exactly (rounded once).

    Source: the book's reading of the projection lemma (Park et al. 2021) behind K&S Theorem 2
    (reconstructed; see the Sources and certainty page). Chapter 2 (check C9).
    """
    import mpmath

    b = projection_bound(vocab_size, d, power=power)
    d = positive_int("d", d)
    pairs = math.comb(vocab_size + 1, 2)
    if d == 1:  # |t| = 1 for every pair: all miss when b > 1, none otherwise
        return float(pairs) if b > 1 else 0.0
    if b >= 1:  # |t| <= 1 always and |t| = 1 with probability 0: every pair misses
        return float(pairs)
    with mpmath.workdps(30):
        p = mpmath.betainc(
            mpmath.mpf(1) / 2, mpmath.mpf(d - 1) / 2, 0, mpmath.mpf(b) ** 2, regularized=True
        )
        return float(mpmath.binomial(vocab_size + 1, 2) * p)


def miss_exponent(vocab_sizes: ArrayLike, rates: ArrayLike, draws: int) -> float:
    r"""How the expected number of missed pairs grows with the vocabulary: the least-squares slope
    of :math:`\log \hat\lambda` against :math:`\log(|V|+1)`, where
    :math:`\hat\lambda = -\log(\text{rate})` is the number of pairs projected below the
    constant that a rate of good directions implies under the Poisson reading of
    :func:`projection_miss_expectation`.

    For the reconstructed constant (exponent 2 of :math:`|V|+1`) :math:`\lambda` tends to a limit
    as :math:`|V|` grows, so the slope is close to 0; a constant with exponent :math:`2 \mp 1` has
    :math:`\lambda` larger or smaller by a factor :math:`|V|+1`, a slope larger or smaller by
    about 1 (check C9 compares the measured slope with the one the closed form predicts).
    A rate of 0 or 1 is clipped to ``1 / (2 draws)`` or ``1 - 1 / (2 draws)`` (half a draw), so
    that a rate that has collapsed still gives a finite, large slope.

    Args:
        vocab_sizes: at least two distinct sizes :math:`|V| \ge 1`, shape ``(k,)``.
        rates: the share of good directions at each size, in ``[0, 1]``, shape ``(k,)``.
        draws: the number of draws behind each rate (``>= 1``).

    Returns:
        The slope as a Python float.

    Raises:
        ValueError: for sizes and rates of different or too short lengths, sizes that are not
            whole numbers >= 1 or not distinct, rates outside ``[0, 1]``, or a bad ``draws``
            (not an integer in ``[1, 10**9]``).

    Accuracy:
        The least-squares slope from centred logarithms, in float64: each
        :math:`\log(|V|+1)` carries an error of about :math:`u \log(|V|+1)`
        (:math:`u = 2^{-53}`), so the slope's relative error is about
        :math:`u \max \log(|V|+1) / \min |\Delta \log(|V|+1)|` (below 1e-12 absolute in
        probes with sizes from 1 to 1e6). Sizes whose logarithms round to one float (e.g.
        ``[2**60, 2**60 + 256]``) are refused: the slope is undefined.

    Source: the book's check of the reconstructed projection constant behind K&S Theorem 2
    (Park et al. 2021). Chapter 2 (check C9).
    """
    return _miss_slope("vocab_sizes", vocab_sizes, rates, draws, lambda v: np.log(v + 1.0))


def dimension_exponent(dims: ArrayLike, rates: ArrayLike, draws: int) -> float:
    r"""How the expected number of missed pairs changes with the dimension at a fixed vocabulary
    size: the least-squares slope of :math:`\log \hat\lambda` against :math:`\log d`, with
    :math:`\hat\lambda = -\log(\text{rate})` as in :func:`miss_exponent`.

    The factor :math:`\sqrt{8/(\pi d)}` of :func:`projection_bound` pays for the density of a
    random cosine near 0, which grows like :math:`\sqrt d`; a constant without the square root
    (:math:`8/(\pi d)`) or without the factor has :math:`\lambda` smaller or larger by a factor
    of about :math:`\sqrt d`, a slope lower or higher by 1/2. Check C9 compares the measured
    slope with the one the closed form predicts. Rates of 0 or 1 are clipped at half a draw.

    Args:
        dims: at least two distinct dimensions :math:`d \ge 1`, shape ``(k,)``.
        rates: the share of good directions at each dimension, in ``[0, 1]``, shape ``(k,)``.
        draws: the number of draws behind each rate (``>= 1``).

    Returns:
        The slope as a Python float.

    Raises:
        ValueError: for dimensions and rates of different or too short lengths, dimensions that
            are not distinct whole numbers >= 1, rates outside ``[0, 1]``, or a bad ``draws``
            (not an integer in ``[1, 10**9]``).

    Accuracy:
        As :func:`miss_exponent`, with :math:`\log d` in place of :math:`\log(|V|+1)`.

    Source: the book's check of the reconstructed projection constant behind K&S Theorem 2
    (Park et al. 2021). Chapter 2 (check C9).
    """
    return _miss_slope("dims", dims, rates, draws, np.log)


def _miss_slope(
    name: str,
    values: ArrayLike,
    rates: ArrayLike,
    draws: int,
    axis: Callable[[np.ndarray], np.ndarray],
) -> float:
    """Least-squares slope of ``log(-log(rate))`` (rates clipped at half a draw) against
    ``axis(values)``, after checking ``values`` (distinct whole numbers >= 1, named ``name``),
    ``rates`` and ``draws`` (:func:`miss_exponent`, :func:`dimension_exponent`)."""
    vals = as_float_array(name, values)
    shares = as_float_array("rates", rates)
    draws = positive_int("draws", draws, maximum=10**9)
    if vals.ndim != 1 or shares.shape != vals.shape or len(vals) < 2:
        raise ValueError(
            f"{name} and rates must be 1-d of one length >= 2, got shapes {vals.shape} and "
            f"{shares.shape}"
        )
    if np.any(vals < 1) or np.any(vals != np.round(vals)) or len(set(vals)) != len(vals):
        raise ValueError(f"{name} must be distinct whole numbers >= 1, got {vals.tolist()}")
    if np.any(shares < 0) or np.any(shares > 1):
        raise ValueError(f"rates must lie in [0, 1], got {shares.tolist()}")
    x = axis(vals)
    if len(set(x.tolist())) < len(x):
        raise ValueError(
            f"{name} {vals.tolist()} are so close that two of their logarithms round to one "
            f"float64 number: the slope is undefined; spread {name}"
        )
    half = 0.5 / draws
    return _slope(x, np.log(-np.log(np.clip(shares, half, 1.0 - half))))


def _slope(x: np.ndarray, y: np.ndarray) -> float:
    """The least-squares slope of ``y`` against ``x`` from centred values (no Vandermonde
    matrix to condition)."""
    dx = x - x.mean()
    return float((dx * (y - y.mean())).sum() / (dx * dx).sum())


#: Check C9's tolerance on a share of good directions estimated from its 400 draws, four standard
#: errors (at most 0.025 each) rounded up.
RATE_TOLERANCE = 0.1
#: Check C9's tolerance on the slope of :func:`miss_exponent`, half the change of slope that one
#: power of :math:`|V|+1` more or less in the constant makes.
SLOPE_TOLERANCE = 0.5
#: Check C9's tolerance on the slope of :func:`dimension_exponent`, half the change of slope
#: (1/2) that a missing or extra square root of :math:`8/(\pi d)` in the constant makes.
DIMENSION_TOLERANCE = 0.25


def projection_rate_check(
    vocab_sizes: ArrayLike, dims: ArrayLike, rates: ArrayLike, draws: int, *, power: float = 2
) -> dict:
    r"""Check C9: whether measured shares of random directions that reach the constant
    :func:`projection_bound` (with exponent ``power``) behave as the reconstructed constant
    predicts on every vocabulary size and dimension measured.

    Four comparisons, each able to fail:

    * **floor** (a derivation, not a fit): by the union bound a random direction reaches the
      constant with probability at least :math:`1 - \lambda > 1 - 2/\pi` on every vocabulary
      (:func:`projection_miss_expectation`), so every measured rate must be at least
      :math:`1 - 2/\pi -` :data:`RATE_TOLERANCE`; a constant too large for its vocabulary (e.g.
      one power of :math:`|V|+1` too few) falls below it;
    * **trend**: per dimension, :func:`miss_exponent` of the measured rates within
      :data:`SLOPE_TOLERANCE` of the slope the closed form predicts for the reconstructed
      constant; a power of :math:`|V|+1` more or less moves the slope by about 1;
    * **dimension**: per vocabulary size, :func:`dimension_exponent` of the measured rates within
      :data:`DIMENSION_TOLERANCE` of the slope a derivation predicts without
      :func:`projection_bound`: to first order in :math:`b`, the union bound's
      :math:`\lambda` is proportional to :math:`b\,f_d(0)`, with
      :math:`f_d(0) = \Gamma(d/2) / (\sqrt\pi\,\Gamma((d-1)/2))` the density of a random
      cosine at 0, so the reconstructed :math:`b \propto d^{-1/2}` predicts the slope of
      :math:`\log(f_d(0)/\sqrt d)` against :math:`\log d`; a missing or extra square root of
      :math:`8/(\pi d)` moves the measured slope by 1/2;
    * **Poisson**: every rate within :data:`RATE_TOLERANCE` of :math:`e^{-\lambda}` for the
      constant measured (the Poisson reading; it holds for a constant of any form, so alone it
      cannot tell the form).

    Args:
        vocab_sizes, dims, rates: one entry per cell, shape ``(k,)``: the vocabulary size, the
            dimension and the share of draws whose projection constant reached the constant.
        draws: draws per cell.
        power: the exponent of :math:`|V|+1` of the constant the rates were measured against
            (2: the reconstructed one; the tests measure wrong forms).

    Returns:
        dict with ``lowest_rate``, ``floor``, ``slopes`` (per dimension, ``(measured,
        predicted)``), ``largest_slope_gap``, ``dimension_slopes`` (per vocabulary size, the
        same), ``largest_dimension_gap``, ``poisson_dev`` (largest ``|rate - e^{-lambda}|``) and
        ``floor_ok``, ``trend_ok``, ``dimension_ok``, ``poisson_ok`` and ``holds`` (all four).

    Raises:
        ValueError: for arrays of different lengths, sizes or dimensions that are not whole
            numbers >= 1 (or above ``10**12``), a dimension with fewer than two sizes or a
            size repeated within one dimension (the same for sizes and their dimensions; every
            dimension at least 2), rates
            outside ``[0, 1]``, a bad ``draws`` (as :func:`miss_exponent`) or a ``power``
            :func:`projection_bound` refuses.

    Accuracy:
        Deterministic, no random draws. ``lowest_rate`` is exact (an input); ``floor`` and
        each :math:`\lambda` are within :math:`3u` relative (:math:`u = 2^{-53}`); the slopes
        as :func:`miss_exponent`; ``poisson_dev`` within a few :math:`u` absolute. A verdict
        can flip only for a quantity within that error of its tolerance. Inherits
        :func:`projection_miss_expectation`'s domain: ``power < 1`` with ``d <= 2`` can fail.

    Source: the book's reading of the projection lemma (Park et al. 2021) behind K&S Theorem 2
    (reconstructed; see the Sources and certainty page). Chapter 2 (check C9).
    """
    sizes = as_float_array("vocab_sizes", vocab_sizes)
    ds = as_float_array("dims", dims)
    shares = as_float_array("rates", rates)
    draws = positive_int("draws", draws, maximum=10**9)
    if not (sizes.ndim == ds.ndim == shares.ndim == 1) or not (
        len(sizes) == len(ds) == len(shares)
    ):
        raise ValueError(
            f"vocab_sizes, dims and rates must be 1-d of one length, got shapes {sizes.shape}, "
            f"{ds.shape} and {shares.shape}"
        )
    if np.any(ds < 1) or np.any(ds != np.round(ds)):
        raise ValueError(f"dims must be whole numbers >= 1, got {ds.tolist()}")
    if np.any(sizes < 1) or np.any(sizes != np.round(sizes)):
        raise ValueError(f"vocab_sizes must be whole numbers >= 1, got {sizes.tolist()}")
    if np.any(shares < 0) or np.any(shares > 1):
        raise ValueError(f"rates must lie in [0, 1], got {shares.tolist()}")
    for d in set(ds.tolist()):
        if len(set(sizes[ds == d].tolist())) < int((ds == d).sum()):
            raise ValueError(
                f"vocab_sizes must be distinct within each dimension of dims, got vocab_sizes "
                f"{sizes[ds == d].tolist()} at dims = {int(d)}"
            )
    if np.any(ds < 2):
        raise ValueError(
            f"dims must be >= 2 (in d = 1 every cosine is ±1: no density at 0 to predict the "
            f"dimension's slope from), got {ds.tolist()}"
        )
    for K in set(sizes.tolist()):
        if len(ds[sizes == K]) < 2:
            raise ValueError(
                f"dims must hold at least two dimensions for each vocabulary size, got dims "
                f"{ds[sizes == K].tolist()} at vocab_sizes = {int(K)}"
            )
    floor = 1.0 - 2.0 / math.pi - RATE_TOLERANCE
    cells = [(int(K), int(d)) for K, d in zip(sizes, ds, strict=True)]
    with blame("vocab_sizes", "dims"):
        right = np.array([projection_miss_expectation(K, d) for K, d in cells])  # exponent 2
        measured_form = (
            right
            if power == 2
            else np.array([projection_miss_expectation(K, d, power=power) for K, d in cells])
        )
    predicted_rates = np.exp(-measured_form)
    slopes = {}
    for d in sorted(set(ds.tolist())):
        at = ds == d
        slopes[int(d)] = (
            miss_exponent(sizes[at], shares[at], draws),
            miss_exponent(sizes[at], np.exp(-right[at]), draws),
        )
    dimension_slopes = {}
    for K in sorted(set(sizes.tolist())):
        at = sizes == K
        x = np.log(ds[at])
        # log(f_d(0) / sqrt(d)): the first-order lambda of a constant proportional to d^(-1/2)
        y = np.array([math.lgamma(d / 2) - math.lgamma((d - 1) / 2) for d in ds[at]]) - x / 2
        dimension_slopes[int(K)] = (dimension_exponent(ds[at], shares[at], draws), _slope(x, y))
    gap = float(max(abs(m - p) for m, p in slopes.values()))
    d_gap = float(max(abs(m - p) for m, p in dimension_slopes.values()))
    lowest, dev = float(shares.min()), float(np.abs(shares - predicted_rates).max())
    floor_ok, trend_ok, poisson_ok = lowest >= floor, gap <= SLOPE_TOLERANCE, dev <= RATE_TOLERANCE
    dimension_ok = d_gap <= DIMENSION_TOLERANCE
    return {
        "lowest_rate": lowest,
        "floor": floor,
        "slopes": slopes,
        "largest_slope_gap": gap,
        "dimension_slopes": dimension_slopes,
        "largest_dimension_gap": d_gap,
        "poisson_dev": dev,
        "floor_ok": floor_ok,
        "trend_ok": trend_ok,
        "dimension_ok": dimension_ok,
        "poisson_ok": poisson_ok,
        "holds": bool(floor_ok and trend_ok and dimension_ok and poisson_ok),
    }


def best_direction(vocab: ArrayLike, draws: int = 64, seed: int = 0) -> tuple[np.ndarray, float]:
    """The best of ``draws`` random Gaussian unit directions for :func:`projection_constant`.

    Args:
        vocab: tokens ``(K, d)``, pairwise distinct (as :func:`projection_constant`).
        draws: number of directions, an integer in ``[1, MAX_DRAWS]``.
        seed: non-negative integer seed of ``numpy.random.default_rng``.

    Returns:
        ``(w, c_w)`` with ``w`` a unit float64 vector ``(d,)``.

    Raises:
        ValueError: for bad ``vocab`` (as :func:`projection_constant`), ``draws`` outside
            ``[1, MAX_DRAWS]`` (:data:`MAX_DRAWS`), ``draws`` times the entries of the pairwise
            differences above :data:`MAX_WORK` (under a minute; checked before the first draw)
            or a negative ``seed``; also when every draw gives :math:`c_w = 0`.

    Accuracy:
        Deterministic for a given ``seed`` (the first draw wins ties). ``c_w`` is
        :func:`projection_constant` of ``w``, with its absolute error below :math:`(2d + 4)u`
        (:math:`u = 2^{-53}`); ``w`` has norm 1 within about :math:`du`.

    Source: the book's check C9 of the projection constant in K&S Theorem 2 ("take the best of
    k random w"). Chapter 2.
    """
    V = _vocab(vocab)
    draws = positive_int("draws", draws, maximum=MAX_DRAWS)
    _require_pair_count(len(V) + 1, V.shape[1])
    count = len(V) + 1
    require_size(
        f"best_direction: draws={draws:,} times the {count * (count - 1) // 2 * V.shape[1]:,} "
        "entries of the pairwise differences, the work",
        draws * (count * (count - 1) // 2 * V.shape[1]),
        MAX_WORK,
        "lib.separation.MAX_WORK",
    )
    rng = np.random.default_rng(positive_int("seed", seed, minimum=0))
    best, best_c = None, -1.0
    for _ in range(draws):
        w = rng.normal(size=V.shape[1])
        # rng.normal(size=...) is an array; the stub picks its scalar overload for the Any size
        w /= np.linalg.norm(w)  # type: ignore[assignment]
        c = projection_constant(w, V)
        if c > best_c:
            best, best_c = w, c
    if best_c <= 0:
        raise ValueError("no random direction separates this vocabulary (every c_w is 0)")
    return best, best_c  # type: ignore[return-value]  # best_c > 0: best was set
