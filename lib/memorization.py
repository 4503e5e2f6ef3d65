r"""Memorization after a contextual mapping: K&S Corollary 1 and its parameter counts
(Chapter 3).

Once the rank-1 attention layer of K&S Theorem 2 (:mod:`lib.contextual`) gives every token a
distinct context id, one residual ReLU feed-forward layer (:mod:`lib.interpolation`) maps the ids
to any labels: :func:`memorizing_transformer` builds the network and evaluates it exactly;
:func:`float64_memorization` asks whether it survives float64; :func:`corollary1_parameter_count`,
:func:`parameter_count` and :func:`weight_lower_bound` count what it costs. This is K&S
Corollary 1 as the book reconstructs it (see the Sources and certainty page).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import mpmath
import numpy as np
import torch
from numpy.typing import ArrayLike
from torch import nn

from ._validate import as_float_array, blame, finite_real, positive_int, short_repr
from .feedforward import FeedForward
from .interpolation import (
    Interpolation,
    _rows,
    _solve_mp,
    _sorted_distinct_mp,
    ffn_mp,
    interpolating_ffn,
    residual_ffn,
)

__all__ = [
    "MemorizingNetwork",
    "Float64Memorization",
    "corollary1_parameter_count",
    "parameter_count",
    "weight_lower_bound",
    "memorizing_transformer",
    "float64_network",
    "float64_memorization",
]


@dataclass(frozen=True)
class MemorizingNetwork:
    """K&S Corollary 1's one-layer Transformer built exactly (:func:`memorizing_transformer`).

    Attributes:
        attention: the :class:`lib.contextual.RankOneAttention` layer (float64 weights).
        v: the projection direction ``(d,)`` of the feed-forward layer's input.
        ffn: the feed-forward weights ``W1, b1, W2, b2`` as nested lists of mpf.
        interpolation: the :class:`lib.interpolation.Interpolation` behind them (targets ``y - z``).
        dps: the working precision; contexts: ``M``, the number of distinct context ids.
        min_gap: the smallest gap between the projected ids (mpf).
        outputs: the network's output per token (``N n`` rows of ``d`` mpf, sequence-major).
        max_error: the largest ``|F_FF(F_SA(X)) - Y|`` (mpf); max_coeff: the largest output
            weight (mpf).
        parameters_corollary: :func:`corollary1_parameter_count` for these sizes.
    """

    attention: object
    v: np.ndarray
    ffn: dict
    interpolation: Interpolation
    dps: int
    contexts: int
    min_gap: object
    outputs: list
    max_error: object
    max_coeff: object
    parameters_corollary: int


@dataclass(frozen=True)
class Float64Memorization:
    """Corollary 1's network built and run in float64 at one inverse temperature
    (:func:`float64_memorization`).

    Attributes:
        gamma: the inverse temperature; min_gap64: the smallest gap between the float64 ids
            (0.0 when two collide); largest_weight and max_error: of the residual network (NaN
            when the ids collide, so that no layer exists).
    """

    gamma: float
    min_gap64: float
    largest_weight: float
    max_error: float


def corollary1_parameter_count(n: int, N: int, d: int, s: int) -> int:
    """K&S Corollary 1's parameter count ``4(s + d) + d(2nN + d)``.

    ``4(s + d)``: the four rank-1 attention matrices, each an outer product of an ``s``- and a
    ``d``-vector; ``d(2nN + d)``: per output coordinate, ``nN`` biases, ``nN`` output weights and a
    ``d``-dimensional projection of the ids (this reading is reconstructed by the book; see the
    Sources and certainty page).

    Args:
        n: sequence length; N: number of sequences; d: token dimension; s: head size (all ``>= 1``).

    Returns:
        The count, a Python int.

    Raises:
        ValueError: for arguments that are not positive integers (floats and bools refused).

    Accuracy:
        Exact: integer arithmetic, no rounding, for any size of the arguments.

    Source: K&S (ICLR 2024), Corollary 1 (the count's shape quoted, its reading reconstructed).
    Chapter 3.
    """
    n, N, d, s = (positive_int(name, v) for name, v in (("n", n), ("N", N), ("d", d), ("s", s)))
    return 4 * (s + d) + d * (2 * n * N + d)


def _nonzero(rows: Iterable[Iterable[Any]]) -> int:
    return sum(1 for r in rows for x in r if x != 0)


def parameter_count(*layers: nn.Module | dict[str, Any]) -> int:
    r"""The parameters of a built network, read off its tensors (K&S Corollary 1's bookkeeping).

    The rules, applied to each layer:

    * a :class:`~lib.layers.SingleHead` layer with ``rank`` set: every entry of its stored
      factors ``W_*_A``, ``W_*_B`` (``s + d`` per rank-1 matrix, zeros included: they are free
      parameters of the rank-1 parameterization); a dense head: the nonzero entries of its matrices;
    * a feed-forward layer (:class:`~lib.feedforward.FeedForward`, or a dict with ``W1, b1, W2, b2``
      as arrays or nested lists of mpf): the nonzero entries of ``b1``, ``W2`` and ``b2``, and the
      nonzero entries of the *distinct* rows of ``W1`` — hidden units that read the same
      projection share it, as in Zhang et al.'s ``2n + d`` count (a positive factor on a ReLU
      unit's input can be moved into its bias and output weight, so it is not a free parameter).

    Args:
        layers: any number of such layers.

    Returns:
        The total, a Python int.

    Raises:
        ValueError: for a layer of another kind, or a dict without the four weights, or with
            a weight that is not a non-empty matrix or vector.

    Accuracy:
        Exact: an integer count of stored entries, no rounding. Entries are compared with
        ``!= 0`` and rows with ``==`` as stored (``-0.0`` is zero; a NaN counts as non-zero).

    Source: the count of K&S Corollary 1, ``4(s + d) + d(2nN + d)``, as the book reads it (its
    reading is reconstructed; see the Sources and certainty page). Chapters 3 and 4 (check C11).
    """
    from .layers import SingleHead

    total = 0
    for i, layer in enumerate(layers):
        if isinstance(layer, SingleHead):
            params = dict(layer.named_parameters(recurse=False))
            if layer.rank is not None:
                total += sum(p.numel() for p in params.values())
            else:
                total += sum(int((p != 0).sum()) for p in params.values())
            continue
        if isinstance(layer, FeedForward):
            layer = layer.weights()
        if not isinstance(layer, dict) or not {"W1", "b1", "W2", "b2"} <= set(layer):
            raise ValueError(
                f"layers[{i}] must be a SingleHead, a FeedForward or a dict with W1, b1, W2, b2, "
                f"got {short_repr(layer)}"
            )
        distinct = []
        for row in _rows("W1", layer["W1"]):
            if row not in distinct:
                distinct.append(row)
        total += _nonzero(distinct) + sum(_nonzero(_rows(k, layer[k])) for k in ("b1", "W2", "b2"))
    return total


def weight_lower_bound(
    z: Sequence[float | mpmath.mpf] | np.ndarray | torch.Tensor,
    targets: ArrayLike | Sequence[Sequence[Any]],
) -> mpmath.mpf:
    r"""The largest output weight any layer :math:`\sum_m c_m \sigma_R(z - b_m)` of width ``M``
    needs to interpolate.

    The bound is for layers of exactly this form: ``M`` hidden units with unit input weights on
    the scalar ``z`` and any biases ``b_m`` (the form of
    :func:`lib.interpolation.interpolating_ffn`, and of the memorizing layer on the projected ids).
    Over :math:`[z_j, z_{j+1}]` the layer is piecewise
    linear with average slope :math:`(t_{j+1} - t_j) / (z_{j+1} - z_j)`, a weighted mean of the
    slopes of its pieces there, so one of them is at least that large in absolute value; every
    slope is a sum of at most ``M`` output weights. Hence

    .. math:: \max_m |c_m| \ge \max_j \frac{|t_{j+1} - t_j|}{M\,(z_{j+1} - z_j)} .

    Args:
        z: sorted distinct ids ``(M,)`` (floats, mpf, decimal strings, a numpy array or torch
            tensor); targets: ``M`` rows of ``k >= 1`` numbers, or ``M`` numbers (``k = 1``);
            checked also when ``M = 1``.

    Returns:
        The bound as an mpf (at the caller's precision; 0 for one id).

    Raises:
        ValueError: for ids that are not strictly increasing (at the working precision),
            mismatched lengths, rows of different or zero length, or an id or target that is
            not a finite real (NaN, inf, bools, strings that are not decimals), naming it.

    Accuracy:
        Four roundings at mpmath's working precision ``p = mpmath.mp.prec`` bits: within
        :math:`4 \cdot 2^{-p}` relative (:math:`4u` at the default 53 bits; 2.3u observed for
        ids and targets from 1e-300 to 1e300 in size, 1-ulp gaps included). Floats are read
        exactly; decimal strings and wider mpf are rounded to ``p`` bits first.

    Source: the book's derivation (Chapter 3, check C10): the weight-norm price of close ids.
    """
    from .exact import to_mpf

    if isinstance(z, torch.Tensor | np.ndarray):
        z = z.tolist()
    if not isinstance(z, list | tuple) or not z:
        raise ValueError(f"z must be a non-empty sequence of ids, got {short_repr(z)}")
    z = [to_mpf(f"z[{i}]", x) for i, x in enumerate(z)]
    rows = _rows("targets", targets)
    if len(z) > 1 and len(rows) == 1 and len(rows[0]) == len(z):  # a vector: one target per id
        rows = [[x] for x in rows[0]]
    rows = [[to_mpf(f"targets[{i}][{j}]", x) for j, x in enumerate(r)] for i, r in enumerate(rows)]
    if len(rows) != len(z):
        raise ValueError(f"targets must have {len(z)} rows like z, got {len(rows)}")
    if len({len(r) for r in rows}) != 1 or not rows[0]:
        raise ValueError(
            f"targets must have rows of one length k >= 1, got lengths {[len(r) for r in rows]}"
        )
    if any(b <= a for a, b in zip(z, z[1:], strict=False)):
        raise ValueError("z must be strictly increasing")
    M = len(z)
    return max(
        (
            max(abs(mpmath.mpf(b) - mpmath.mpf(a)) for a, b in zip(r0, r1, strict=True))
            / (M * (z1 - z0))
            for z0, z1, r0, r1 in zip(z, z[1:], rows, rows[1:], strict=False)
        ),
        default=mpmath.mpf(0),
    )


def _first_of_each_key(X: np.ndarray, labels: np.ndarray) -> list[int]:
    """Index (into the flattened ``(N n)`` tokens) of the first token of each equivalence key.

    Raises:
        ValueError: if two tokens forced to share a context id (same key, see
            :func:`_equivalence_keys`) ask different labels (rows of ``labels``).
    """
    n = X.shape[1]
    first: dict[tuple, int] = {}
    for i, key in enumerate(_equivalence_keys(X)):
        j = first.setdefault(key, i)
        if not np.array_equal(labels[i], labels[j]):
            raise ValueError(
                f"inconsistent labels: (sequence {i // n}, token {i % n}) and (sequence {j // n}, "
                f"token {j % n}) are forced to share a context id "
                f"but ask {labels[i]} and {labels[j]}"
            )
    return sorted(first.values())


def _equivalence_keys(X: np.ndarray) -> list[tuple]:
    """Key of each (sequence, token): the sorted multiset of the sequence and the token itself.

    Two (sequence, token) pairs with the same key are forced to share a context id by permutation
    equivariance, so they must share a label.
    """
    keys: list[tuple[Any, ...]] = []
    for seq in X:
        multiset = tuple(sorted(tuple(t) for t in seq.tolist()))
        keys.extend((multiset, tuple(t)) for t in seq.tolist())
    return keys


def memorizing_transformer(
    X: ArrayLike,
    Y: ArrayLike,
    *,
    dps: int | None = None,
    seed: int = 0,
    directions: int = 100,
    head_dim: int = 1,
) -> MemorizingNetwork:
    r"""K&S Corollary 1 built and checked exactly: ``F_FF(F_SA(X)) = Y`` for every given pair.

    ``F_SA`` is the rank-1 residual layer of Theorem 2 (:class:`lib.contextual.RankOneAttention`
    on the vocabulary of ``X``, head size ``head_dim``): it maps token ``x`` to its context id
    ``z``. The ids are projected on a direction ``v`` that separates them (``w`` first, then seeded
    random directions), and ``F_FF`` is one residual ReLU layer of width ``M`` (the number of
    distinct contexts, at most ``nN``),

    .. math:: F^{(FF)}(z) = z + W_2 \sigma_R(W_1 z + b_1), \quad
       W_1 = 1_M v^\top,\ b_1 = -(\text{knots}),

    whose output weights ``W_2`` interpolate the targets ``y - z`` at the projected ids
    (the residual absorbed into the targets; :func:`lib.interpolation.interpolation_mp`'s system),
    ``b_2 = 0``. The network's output at every token is then evaluated from its weights with
    :func:`lib.interpolation.ffn_mp`
    on the exact ids (:func:`lib.exact.attention_mp`), in ``dps``-digit arithmetic.

    Args:
        X: sequences ``(N, n, d)`` (tokenwise separated, no repeated token inside a sequence).
        Y: labels ``(N, n, d)`` (or ``(N, n)`` when ``d = 1``): the layers are residual, so labels
            live in the token space. Permutation-equivalent sequences must give the same token
            the same label (consistent labels).
        dps: working precision; by default 30 digits beyond the construction's separation
            (:func:`lib.contextual.theorem2_delta`, ``construction``, which follows the theorem's
            ``gamma`` and ``r_max`` through its factor :math:`e^{-2\gamma r_{\max}^2}`), plus
            ``floor(log10(r_max))`` digits for ids larger than 10 (their leading digits).
        seed: seed of the attention layer's direction and of the fallback projections.
        directions: how many random projections to try if ``w`` does not separate the ids, at
            most :data:`lib.separation.MAX_DRAWS`.
        head_dim: head size ``s`` of the attention layer.

    Returns:
        A :class:`MemorizingNetwork`.

    Raises:
        ValueError: for inconsistent labels, shapes that do not match, a sequence with a repeated
            token, complex or bool entries, a precision outside ``[15, lib.exact.MAX_DPS]``, more
            than :data:`lib.separation.MAX_DRAWS` directions, or when no tried direction
            separates the context ids; and as :class:`lib.contextual.RankOneAttention` and
            :func:`lib.exact.attention_mp` (tokens whose scale puts :math:`\gamma` outside
            float64, evaluations too large or slow).

    Accuracy:
        Tokens, labels and the attention weights are read exactly; ids, weights and outputs
        are computed with ``dps`` significant digits, and ``max_error`` is measured on the
        result, not assumed. The default ``dps`` counts the digits below 1 down to the
        separation and the ids' leading digits above the first: with labels of order 1 it gave
        ``max_error`` below 1e-19 for tokens from 1e-100 to 1e150 in size in probes (3e-186 at
        1e-100, 8e-22 at 1e60, 6e-20 at 1e150). Deterministic for a given ``seed``.

    Source: K&S (ICLR 2024), Corollary 1 (statement and count quoted in shape; the construction
    is reconstructed by the book, see the Sources and certainty page). Chapter 3 (check C10).
    """
    from . import contextual, exact, separation

    directions = positive_int("directions", directions, maximum=separation.MAX_DRAWS)
    Xa, Ya, head_dim = _sequences_and_labels(X, Y, head_dim)
    N: int
    n: int
    d: int
    N, n, d = Xa.shape
    separation.tokenwise_separation(Xa)  # rejects repeated tokens inside a sequence
    labels = Ya.reshape(N * n, d)
    reps = _first_of_each_key(Xa, labels)  # one (sequence, token) per context; rejects conflicts
    with blame("X"):  # the layer names the tokens of X "vocab"
        layer = contextual.RankOneAttention(
            separation.vocabulary(Xa), n, seed=seed, head_dim=positive_int("head_dim", head_dim)
        )
        delta = contextual.theorem2_delta(
            n, len(layer.vocab), d, layer.r_min, layer.r_max, layer.eps, c_w=layer.c_w
        )
    dps = _working_digits(dps, delta.construction, layer.r_max)
    ids = [row for out in exact.attention_mp(Xa, layer, dps) for row in out]
    rng = np.random.default_rng(positive_int("seed", seed, minimum=0))
    candidates: list[np.ndarray] = [layer.w] + [rng.normal(size=d) for _ in range(directions)]
    with mpmath.workdps(dps):
        v, z = _separating_direction(candidates, ids, reps, dps)
        order, s = _sorted_distinct_mp(z)
        targets = [
            [mpmath.mpf(float(labels[reps[i]][c])) - ids[reps[i]][c] for c in range(d)]
            for i in order
        ]
        biases, coeffs = _solve_mp(s, targets)  # the residual absorbed: targets y - z
        ffn = {
            "W1": [[mpmath.mpf(float(x)) for x in v] for _ in biases],
            "b1": [-b for b in biases],
            "W2": [[row[c] for row in coeffs] for c in range(d)],
            "b2": [mpmath.mpf(0)] * d,
        }
        outputs = ffn_mp(ids, ffn)  # the network's forward pass, from its weights
        max_error = max(
            abs(o - mpmath.mpf(float(t)))
            for out, lab in zip(outputs, labels, strict=True)
            for o, t in zip(out, lab, strict=True)
        )
        max_coeff = max(abs(c) for row in coeffs for c in row)
        min_gap = min((b - a for a, b in zip(s, s[1:], strict=False)), default=mpmath.inf)
    interp = Interpolation(
        biases, coeffs, [reps[i] for i in order], max_error, max_coeff, s, targets
    )
    return MemorizingNetwork(
        layer,
        v,
        ffn,
        interp,
        dps,
        len(reps),
        min_gap,
        outputs,
        max_error,
        max_coeff,
        corollary1_parameter_count(n, N, d, layer.head_dim),
    )


def _sequences_and_labels(
    X: ArrayLike, Y: ArrayLike, head_dim: int
) -> tuple[np.ndarray, np.ndarray, int]:
    """:func:`memorizing_transformer`'s ``X`` ``(N, n, d)`` (``n >= 2``) and labels ``Y``
    ``(N, n, d)`` (``(N, n)`` read as ``d = 1``) as float64 arrays, and ``head_dim`` checked
    against ``d``; ValueError naming the argument otherwise."""
    from . import contextual

    Xa = as_float_array("X", X, min_ndim=3)
    if Xa.ndim != 3:
        raise ValueError(f"X must have shape (N, n, d), got {Xa.shape}")
    N: int
    n: int
    d: int
    N, n, d = Xa.shape
    if n < 2:
        raise ValueError(
            f"X must hold sequences of at least two tokens (Theorem 2 needs n >= 2), got shape "
            f"{Xa.shape}"
        )
    head_dim = contextual.as_head_dim(head_dim, d)  # before the work, not after it
    Ya = as_float_array("Y", Y, min_ndim=2)
    Ya = Ya[..., None] if Ya.ndim == 2 and d == 1 else Ya
    if Ya.shape != Xa.shape:
        raise ValueError(
            f"Y must have shape {Xa.shape}"
            + (f" or {Xa.shape[:2]}" if d == 1 else "")
            + f" (labels in the token space: the layers are residual), got {Ya.shape}"
        )
    return Xa, Ya, head_dim


def _working_digits(dps: int | None, construction: float, r_max: float) -> int:
    """``dps`` checked, or :func:`memorizing_transformer`'s default for a separation of
    ``10**construction`` between ids of tokens up to ``r_max``; ValueError above
    :data:`lib.exact.MAX_DPS`."""
    from . import exact

    if dps is None:
        # digits below the unit down to the separation, plus the ids' digits above the first
        # (ids of tokens near 1e100 need 100 more to keep the same gaps), plus 30 guard digits
        dps = (
            exact.GUARD_DIGITS + max(0, int(-construction)) + max(0, math.floor(math.log10(r_max)))
        )
        if dps > exact.MAX_DPS:
            raise ValueError(
                f"the context ids of X need {dps:,} digits, more than "
                f"lib.exact.MAX_DPS={exact.MAX_DPS}; rescale X"
            )
    else:
        dps = positive_int("dps", dps, minimum=15, maximum=exact.MAX_DPS)
    return dps


def _separating_direction(
    candidates: list[np.ndarray], ids: list[list[Any]], reps: list[int], dps: int
) -> tuple[np.ndarray, list[Any]]:
    """The first of ``candidates`` (normalised) on which the ids of ``reps`` lie more than
    ``10**(20 - dps)`` apart, and those projections (call inside ``mpmath.workdps(dps)``);
    ValueError when none does."""
    from . import exact

    for v in candidates:
        v = v / np.linalg.norm(v)
        z = exact.project_mp([ids[i] for i in reps], v)
        if exact.min_gap(z, dps, distinct=False) > mpmath.mpf(10) ** (20 - dps):
            break
    else:
        raise ValueError(
            f"none of {len(candidates)} directions separates the context ids of X at "
            f"dps={dps} digits; pass more directions or a larger dps"
        )
    return v, z


def float64_network(memorizer: MemorizingNetwork) -> FeedForward:
    """The feed-forward layer of :func:`memorizing_transformer` with its weights rounded to float64.

    Applied to the float64 context ids ``memorizer.attention(X)`` it shows what the exact
    network becomes in ordinary arithmetic (check C10).

    Args:
        memorizer: the :class:`MemorizingNetwork` of :func:`memorizing_transformer`.

    Returns:
        A float64 residual ``FeedForward(d, M, d)`` (:func:`lib.interpolation.residual_ffn`) with
        ``W1 = 1_M v^T``, ``b1 = -biases``, ``W2`` the output weights and ``b2 = 0``.

    Raises:
        ValueError: if ``memorizer`` is not a :class:`MemorizingNetwork`, or a weight overflows
            float64.

    Accuracy:
        Each weight is its mpf value rounded once to the nearest float64 (correctly rounded in
        the normal range; values below about 1e-308 may be rounded twice or flushed to 0);
        ``v`` is copied. Nothing is evaluated: the float64 layer's error on the ids is for the
        caller to measure (labels missed by about 1 on a 4-token vocabulary in probes).

    Source: K&S Corollary 1 (construction reconstructed). Chapter 3.
    """
    if not isinstance(memorizer, MemorizingNetwork):
        raise ValueError(
            f"memorizer must be the result of memorizing_transformer, got {short_repr(memorizer)}"
        )
    interp = memorizer.interpolation
    return residual_ffn(
        memorizer.v,
        [float(b) for b in interp.biases],
        [[float(c) for c in row] for row in interp.coeffs],
    )


def float64_memorization(X: ArrayLike, Y: ArrayLike, gamma: float) -> Float64Memorization:
    """Corollary 1's network built and run entirely in float64 at inverse temperature ``gamma``.

    The rank-1 residual layer of :class:`lib.contextual.RankOneAttention` (``w = 1``, with
    ``gamma`` replacing the theorem's value) gives float64 context ids ``z`` of the tokens of
    ``X`` ``(N, n, 1)``; a float64 residual layer (:func:`lib.interpolation.residual_ffn`) is built
    on them to interpolate ``Y - z``, and the error is that of the whole network's forward pass
    ``F_FF(F_SA(X))`` against ``Y`` ``(N, n)``.

    Args:
        X: sequences ``(N, n, 1)``, ``n >= 2``, finite reals (as
            :class:`lib.contextual.RankOneAttention` accepts its vocabulary).
        Y: labels ``(N, n)``, finite reals.
        gamma: the inverse temperature, a positive finite real.

    Returns:
        A :class:`Float64Memorization`.

    Raises:
        ValueError: for ``X`` that is not ``(N, n, 1)``, mismatched ``Y``, labels that differ
            between tokens forced to share a context id (permuted sequences, as for
            :func:`memorizing_transformer`), or a ``gamma`` that is not a positive finite real
            (``None`` included: this function has no default); as
            :class:`lib.contextual.RankOneAttention` for the vocabulary; when ``gamma`` times
            the tokens' products overflows the scores; or when the interpolation coefficients
            overflow float64 (ids too close for their labels,
            :func:`lib.interpolation.interpolating_ffn`).

    Accuracy:
        Deterministic float64 arithmetic throughout, with no guarantee: the fields report what
        float64 delivers. ``min_gap64`` is the rounded difference of two float64 ids (0.0 only
        for an exact collision, which then gives NaN ``largest_weight`` and ``max_error``);
        ``max_error`` is the float64 ``|out - Y|`` (within :math:`u = 2^{-53}` relative) and
        can be far above the labels (2e137
        with labels up to 2 for tokens 1e150, ``gamma=1e-300``).

    Source: this book (Chapter 3, a regime outside K&S Theorem 2).
    """
    from . import contextual, separation

    gamma = finite_real("gamma", gamma, minimum=0.0, strict=True)
    X = as_float_array("X", X, min_ndim=3)
    if X.ndim != 3 or X.shape[2] != 1:
        raise ValueError(f"X must have shape (N, n, 1), got {X.shape}")
    if X.shape[1] < 2:
        raise ValueError(f"X must hold sequences of at least two tokens, got shape {X.shape}")
    Y = as_float_array("Y", Y, min_ndim=2)
    if Y.shape != X.shape[:2]:
        raise ValueError(f"Y must have shape {X.shape[:2]}, got {Y.shape}")
    with blame("X"):  # the layer names the tokens of X "vocab"
        layer = contextual.RankOneAttention(
            separation.vocabulary(X), X.shape[1], w=[1.0], gamma=gamma
        )
    with torch.no_grad():
        try:
            ids = layer(torch.as_tensor(X))
        except ValueError as e:  # the layer's scores, gamma times products of tokens, overflow
            raise ValueError(f"gamma={gamma!r} is too large for the tokens of X: {e}") from None
    z_all, y_all = ids.numpy().reshape(-1), Y.reshape(-1)
    # tokens of permuted sequences share their id by equivariance: one id per equivalence key
    keep = _first_of_each_key(X, y_all[:, None])
    z, y = z_all[keep], y_all[keep]
    gap = float(np.diff(np.unique(z)).min(initial=np.inf)) if len(np.unique(z)) == len(z) else 0.0
    if gap == 0.0:  # float64 ids of different keys collide: no layer can separate them
        return Float64Memorization(float(gamma), gap, math.nan, math.nan)
    fit = interpolating_ffn(z, y - z).weights()  # the residual absorbed: targets y - z
    ffn = residual_ffn([1.0], -fit["b1"].numpy(), fit["W2"].numpy().T)
    with torch.no_grad():
        out = ffn(ids).numpy().reshape(Y.shape)  # the network's forward pass F_FF(F_SA(X))
    return Float64Memorization(
        float(gamma),
        gap,
        float(np.abs(ffn.weights()["W2"].numpy()).max()),
        float(np.abs(out - Y).max()),
    )
