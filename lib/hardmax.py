r"""K&S Theorem 1: hardmax attention is not a contextual mapping, and softmax tells apart what
hardmax cannot (Chapter 2).

:func:`hardmax_counterexample` builds two sequences that no hardmax layer, with any number of
heads, tells apart at their first token; :func:`hardmax_trials` draws random multi-head layers
and measures the distance between the two first outputs in float64 and exactly (mpmath);
:func:`id_difference` and :func:`id_distance` give the exact difference of two context ids. The
statement is quoted from K&S; the counterexample is the book's reconstruction (see the Sources
and certainty page).

Random draws are capped at :data:`lib.separation.MAX_DRAWS` and raise ``ValueError`` beyond it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from numpy.typing import ArrayLike

from ._validate import (
    as_float_array,
    blame,
    positive_int,
    short_repr,
)
from .layers import SelfAttention
from .separation import MAX_DRAWS, _sequences

if TYPE_CHECKING:
    import mpmath
    import pandas as pd

__all__ = [
    "hardmax_counterexample",
    "id_difference",
    "id_distance",
    "hardmax_trials",
]


def hardmax_counterexample(v: ArrayLike) -> np.ndarray:
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
        ValueError: if ``v`` is zero, not 1-D, or not finite, or so large (``4v`` overflows)
            or small (two tokens round to the same float64) that the pair cannot be built.

    Accuracy:
        The tokens are ``fl(c v)``, one float64 product each. They are the exact multiples
        when every entry of ``v`` has at most 50 significant bits and every non-zero entry is
        at least :math:`2^{-1022}` in size (e.g. ``[1.0]``, ``[0.5, 2.0]``); the property above
        then holds exactly. Otherwise ``3v``, ``1.5v`` and ``3.5v`` are rounded (within
        :math:`u = 2^{-53}` relative each), the two zero-slope means differ by about
        :math:`u |v|` and a hardmax layer whose scores all tie tells the pair apart by that
        much (``v = [1/3]``: exact distance 2.8e-17); no error is raised.

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


def id_difference(layer: SelfAttention, pair: ArrayLike, token: int = 0, dps: int = 50) -> list:
    """Exact difference ``F(X1)[token] - F(X2)[token]`` of the context ids of one token (mpmath).

    Only the outputs of tokens ``0..token`` are evaluated (:func:`lib.exact.attention_mp` with
    ``rows``); every token still serves as a key.

    Args:
        layer: a :class:`~lib.layers.SelfAttention` (softmax or hardmax, any head size).
        pair: array ``(2, n, d)`` of finite reals, ``d`` the layer's width.
        token: index of the token whose ids are compared, in ``[0, n - 1]``.
        dps: decimal digits, ``15 <= dps <=`` :data:`lib.exact.MAX_DPS`.

    Returns:
        A list of ``d`` mpf, each carrying ``dps`` digits.

    Raises:
        ValueError: for a pair of the wrong shape or a bad ``token``/``dps``, or as
            :func:`lib.exact.attention_mp` (too many score terms, too slow at ``dps``).

    Accuracy:
        The layer's float64 weights and the tokens are read exactly; the ids are computed with
        ``dps`` significant digits and subtracted, so each entry has an absolute error of order
        ``10**-dps`` times the ids' size, not relative to the difference (observed 5e-51 on
        ids of size 1 at ``dps=50``). Hardmax ties are decided on the scores as computed at
        ``dps`` digits.

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


def id_distance(layer: SelfAttention, pair: ArrayLike, token: int = 0, dps: int = 50) -> mpmath.mpf:
    """Exact distance between the context ids of ``token`` in two sequences (mpmath).

    Args:
        layer: a :class:`~lib.layers.SelfAttention` (softmax or hardmax, any head size).
        pair: array ``(2, n, d)`` of finite reals, ``d`` the layer's width.
        token: index of the token whose ids are compared, in ``[0, n - 1]``.
        dps: decimal digits, ``15 <= dps <=`` :data:`lib.exact.MAX_DPS`.

    Returns:
        ``||F(X1)[token] - F(X2)[token]||`` as an mpf with ``dps`` digits.

    Raises:
        ValueError: as :func:`id_difference`.

    Accuracy:
        As :func:`id_difference`: an absolute error of order ``10**-dps`` times the ids' size
        (the norm adds a relative ``10**-dps``); 0 means the ids agree to ``dps`` digits.

    Source: K&S Theorem 1 (check C5). Chapter 2.
    """
    import mpmath

    diff = id_difference(layer, pair, token, dps)
    with mpmath.workdps(dps):
        return mpmath.sqrt(mpmath.fsum(c**2 for c in diff))


def _head_weights(rng: np.random.Generator, s: int, d: int, scale: float, zero_q: bool) -> dict:
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

    def mp(M: ArrayLike) -> list[list[Any]]:
        return [[mpmath.mpf(float(c)) for c in row] for row in np.atleast_2d(M)]

    def apply(M: Sequence[Sequence[Any]], x: Sequence[Any]) -> list[Any]:
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


def _exact_first_distance(
    weights: list, arr: np.ndarray, normalizer: str, draw: int
) -> tuple[mpmath.mpf, int]:
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

    def distance(dps: int) -> mpmath.mpf:
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
            f"pair is too large for exact=True: under the weights of draw {draw}, its first "
            f"scores spread {spread:.3g} apart and need {cap} digits, more than "
            f"lib.exact.MAX_DPS={exact_mod.MAX_DPS}; rescale pair"
        )
    size = float(np.abs(arr[:, 0]).max()) + 1.0
    dps = 40
    while True:
        dist = distance(dps)
        if dps >= cap or (dist > 0 and mpmath.log10(dist) > math.log10(size) - dps + 20):
            return dist, dps
        dps = min(2 * dps, cap)


def hardmax_trials(
    pair: ArrayLike, draws: int = 2000, seed: int = 0, *, max_heads: int = 1, exact: bool = False
) -> pd.DataFrame:
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
        ValueError: for a bad pair, ``draws`` outside ``[1, MAX_DRAWS]``
            (:data:`lib.separation.MAX_DRAWS`), a negative ``seed``, ``max_heads`` outside
            ``[1, 8]``, a non-bool ``exact``, or first scores so spread that the exact
            evaluation would need more than :data:`lib.exact.MAX_DPS` digits; also when the
            float64 scores overflow (tokens near 1e150 or larger).

    Accuracy:
        Deterministic for a given ``seed``. The float64 distances carry an absolute error of
        order :math:`u` (:math:`2^{-53}`) times the size of the outputs (``softmax_error`` at
        most 5e-15 in probes with tokens up to 4 and weight scale 10); a distance below that
        is noise, and a float64 hardmax breaks or makes ties as the rounded scores do. The
        exact columns are as described above: the hardmax to 60 digits, the softmax to 20
        significant digits or to an exact collision. Their zero is exact only for a ``pair``
        whose tokens are exact multiples (see :func:`hardmax_counterexample`): for ``v = [0.1,
        0.3]`` the all-tied draws give ``log10_hardmax_exact`` about -17.8, not ``-inf``.

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
            with torch.no_grad(), blame("pair"):
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
