r"""Memorization after a contextual mapping: K&S Corollary 1's feed-forward half (Chapter 3).

Once every token has a distinct context id, one ReLU feed-forward layer maps the ids to any
labels. For distinct scalars :math:`z_1 < \dots < z_M` (a projection of the ids) and targets
:math:`t_j \in \mathbb{R}^k`, put ReLU biases :math:`b_1 < z_1` and
:math:`b_j = (z_{j-1} + z_j)/2`. Then :math:`\sigma_R(z_j - b_m) = z_j - b_m` for
:math:`m \le j` and :math:`0` for :math:`m > j`, so

.. math:: f(z) = \sum_{m=1}^M c_m\, \sigma_R(z - b_m), \qquad
          \sum_{m \le j} c_m (z_j - b_m) = t_j \quad (j = 1, \dots, M)

is a lower-triangular system with positive diagonal: hidden width :math:`M`, output weights that
grow like one over the smallest gap between the ids (the finite-sample construction of Zhang et
al. 2017). K&S's feed-forward layer is residual,
:math:`F^{(FF)}(Z) = Z + W_2 \sigma_R(W_1 Z + b_1 1^\top) + b_2 1^\top`, so the memorizing network
(:func:`memorizing_transformer`) interpolates the targets :math:`t = y - z` (label minus context
id): the residual adds the id back. This is the feed-forward half of K&S Corollary 1 as the book
reconstructs it (see the Sources and certainty page).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import mpmath
import numpy as np
import pandas as pd
import torch

from ._validate import as_float_array, check_size, finite_real, flag, positive_int, short_repr
from .layers import FeedForward

__all__ = [
    "Interpolation",
    "MemorizingNetwork",
    "Float64Memorization",
    "interpolation_knots",
    "knot_layer",
    "interpolating_ffn",
    "interpolation_mp",
    "corollary1_parameter_count",
    "parameter_count",
    "weight_lower_bound",
    "residual_ffn",
    "ffn_mp",
    "memorizing_transformer",
    "float64_network",
    "scalar_outputs",
    "interpolation_price",
    "float64_memorization",
]


@dataclass(frozen=True)
class Interpolation:
    """An interpolating ReLU layer solved exactly (:func:`interpolation_mp`,
    :func:`memorizing_transformer`).

    Attributes:
        biases: the ``M`` knots ``b_m`` (mpf, in sorted order of the ids).
        coeffs: ``M`` rows of ``k`` output weights ``c_m`` (mpf).
        order: the indices sorting the ids (for :func:`memorizing_transformer`: the
            ``(sequence, token)`` index behind each sorted id).
        max_error: the largest ``|f(z_i) - t_i|`` at the working precision (mpf).
        max_coeff: the largest ``|c|`` (mpf).
        z: the sorted ids (mpf); targets: their targets (mpf rows).
    """

    biases: list
    coeffs: list
    order: list
    max_error: object
    max_coeff: object
    z: list
    targets: list


@dataclass(frozen=True)
class MemorizingNetwork:
    """K&S Corollary 1's one-layer Transformer built exactly (:func:`memorizing_transformer`).

    Attributes:
        attention: the :class:`lib.contextual.RankOneAttention` layer (float64 weights).
        v: the projection direction ``(d,)`` of the feed-forward layer's input.
        ffn: the feed-forward weights ``W1, b1, W2, b2`` as nested lists of mpf.
        interpolation: the :class:`Interpolation` behind them (targets ``y - z``).
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


def _points(z, y) -> tuple[np.ndarray, np.ndarray]:
    z = as_float_array("z", z)
    if z.ndim != 1:
        raise ValueError(f"z must be 1-D (scalar ids), got shape {z.shape}")
    y = as_float_array("y", y)
    y = y[:, None] if y.ndim == 1 else y
    if y.ndim != 2 or len(y) != len(z):
        raise ValueError(f"y must have shape ({len(z)}, k) to match z, got {y.shape}")
    return z, y


def interpolation_knots(z) -> tuple[np.ndarray, np.ndarray]:
    """Sort the ids and place one ReLU knot below each: ``(order, biases)``.

    Args:
        z: distinct finite scalars ``(M,)``.

    Returns:
        A pair ``(order, biases)``, with ``order`` the indices sorting ``z`` and ``biases`` of
        shape ``(M,)`` in sorted order, namely ``b_1 = z_1 - (z_2 - z_1)`` (``z_1 - 1`` for a
        single point) and the midpoints between neighbouring ids after that.

    Raises:
        ValueError: for repeated ids (no function can give them different labels), NaN/inf or a
            wrong shape.

    Source: the interpolation step of K&S Corollary 1, reconstructed by the book (see the
    Sources and certainty page). Chapter 3.
    """
    z = as_float_array("z", z)
    if z.ndim != 1:
        raise ValueError(f"z must be 1-D (scalar ids), got shape {z.shape}")
    order = np.argsort(z, kind="stable")
    s = z[order]
    if len(s) > 1 and not (np.diff(s) > 0).all():
        i = int(np.flatnonzero(np.diff(s) <= 0)[0])
        raise ValueError(f"z holds a repeated id ({s[i]!r}); distinct ids are required")
    first = s[0] - (s[1] - s[0] if len(s) > 1 else 1.0)
    biases = np.concatenate([[first], (s[:-1] + s[1:]) / 2])
    return order, biases


def knot_layer(knots, coeffs, offset) -> FeedForward:
    r"""The float64 ReLU layer ``z -> offset + sum_m coeffs[m] relu(z - knots[m])`` on scalar ids.

    Args:
        knots: ``(M,)`` reals; coeffs: ``(M, k)`` (or ``(M,)``) output weights; offset: ``(k,)``
            output bias.

    Returns:
        ``FeedForward(1, M, k)`` with ``W1 = 1``, ``b1 = -knots``, ``W2 = coeffs^T``,
        ``b2 = offset``.

    Raises:
        ValueError: for mismatched shapes, complex or bool values (never read as their real part
            or as 0/1), or values that are not finite in float64.

    Source: the one-dimensional interpolation lemma of Chapter 3 (Zhang et al. 2017), the
    non-residual core of the layer of K&S Corollary 1 (reconstructed by the book); used by
    :func:`interpolating_ffn`. Chapter 3.
    """
    knots = as_float_array("knots", knots)
    if knots.ndim != 1:
        raise ValueError(f"knots must be 1-D, got shape {knots.shape}")
    coeffs = as_float_array("coeffs", coeffs)
    if coeffs.shape[0] != len(knots) or coeffs.ndim > 2:
        raise ValueError(f"coeffs must have shape ({len(knots)}, k) like knots, got {coeffs.shape}")
    coeffs = coeffs.reshape(len(knots), -1)
    offset = as_float_array("offset", offset)
    if offset.shape != (coeffs.shape[1],):
        raise ValueError(f"offset must have shape ({coeffs.shape[1]},), got {offset.shape}")
    ffn = FeedForward(1, len(knots), coeffs.shape[1])
    ffn.set_weights(W1=np.ones((len(knots), 1)), b1=-knots, W2=coeffs.T, b2=offset)
    return ffn


def interpolating_ffn(z, y) -> FeedForward:
    """A ReLU :class:`~lib.layers.FeedForward` (float64) with ``f(z_i) = y_i`` for every ``i``.

    Hidden width ``M = len(z)``; ``W1`` is all ones, ``b1 = -biases``, ``W2`` holds the
    coefficients of the triangular system (solved by ``torch.linalg.solve_triangular``), ``b2 = 0``.
    In float64 the interpolation is exact only up to rounding: when the ids are closer than
    about ``1e-8`` relative to their size, the coefficients explode and the result is wrong — use
    :func:`interpolation_mp` there.

    Args:
        z: distinct scalar ids ``(M,)``.
        y: targets ``(M,)`` or ``(M, k)``.

    Returns:
        A float64 ``FeedForward(1, M, k)`` mapping ``(..., 1)`` to ``(..., k)``.

    Raises:
        ValueError: for repeated ids, NaN/inf, mismatched shapes, or coefficients that overflow.

    Source: K&S (ICLR 2024), Corollary 1 (construction reconstructed by the book; see the
    Sources and certainty page). Chapter 3.
    """
    z, y = _points(z, y)
    order, biases = interpolation_knots(z)
    s, ys = torch.as_tensor(z[order]), torch.as_tensor(y[order])
    b = torch.as_tensor(biases)
    A = torch.tril(s[:, None] - b[None, :])
    coeffs = torch.linalg.solve_triangular(A, ys, upper=False)
    if not torch.isfinite(coeffs).all():
        raise ValueError("the interpolation coefficients overflow float64; use interpolation_mp")
    return knot_layer(biases, coeffs.numpy(), np.zeros(y.shape[1]))


def _relu_sum(x, biases, coeffs) -> list:
    """``f(x) = sum_m c_m relu(x - b_m)`` for one scalar ``x`` (mpf; call inside ``workdps``)."""
    return [
        mpmath.fsum(c[col] * max(x - b, 0) for c, b in zip(coeffs, biases, strict=True))
        for col in range(len(coeffs[0]))
    ]


def _solve_mp(s: list, targets: list) -> tuple[list, list]:
    """Knots and output weights of :func:`interpolation_mp` for sorted mpf ids ``s`` and mpf target
    rows.

    Call inside ``workdps``; ``s`` strictly increasing, ``targets`` ``len(s)`` rows of ``k`` mpf.
    """
    first = s[0] - ((s[1] - s[0]) if len(s) > 1 else 1)
    biases = [first] + [(a + b) / 2 for a, b in zip(s, s[1:], strict=False)]
    coeffs = []
    for j, zj in enumerate(s):  # forward substitution, row by row
        coeffs.append(
            [
                (targets[j][col] - mpmath.fsum(coeffs[m][col] * (zj - biases[m]) for m in range(j)))
                / (zj - biases[j])
                for col in range(len(targets[j]))
            ]
        )
    return biases, coeffs


def _sorted_distinct_mp(z) -> tuple[list, list]:
    """``(order, sorted values)`` of mpf ids ``z``; ValueError for a repeated id (call inside
    ``workdps``)."""
    order = sorted(range(len(z)), key=lambda i: z[i])
    s = [z[i] for i in order]
    for a, b in zip(s, s[1:], strict=False):
        if b == a:
            raise ValueError(
                f"z holds a repeated id ({mpmath.nstr(a, 8)}); distinct ids are required"
            )
    return order, s


def interpolation_mp(z, y, dps: int = 50) -> dict:
    """The same interpolation in ``dps``-digit arithmetic: biases, coefficients and a check.

    Args:
        z: distinct scalar ids ``(M,)``: floats, or mpf values (e.g. context ids from
            :func:`lib.exact.attention_mp`) — mpf ids closer than float64 can resolve are handled.
        y: targets ``(M,)`` or ``(M, k)`` (floats).
        dps: decimal digits.

    Returns:
        An :class:`Interpolation` (``max_error`` evaluated at ``dps`` digits).

    Raises:
        ValueError: for fewer than one id, repeated ids, non-finite values, mismatched shapes,
            or more than :data:`lib.exact.MAX_MP_TERMS` exact terms (``M**2 k``; checked before
            any is computed).

    Source: the interpolation step of K&S Corollary 1 (reconstructed by the book). Chapter 3.
    """
    from .exact import MAX_DPS, MAX_MP_TERMS, to_mpf

    dps = positive_int("dps", dps, minimum=15, maximum=MAX_DPS)
    if (
        not isinstance(z, list | tuple | np.ndarray | torch.Tensor)
        or (isinstance(z, np.ndarray | torch.Tensor) and z.ndim != 1)
        or len(z) == 0
        or not all(np.ndim(v) == 0 for v in z)
    ):
        raise ValueError(f"z must be a non-empty sequence of scalar ids, got {short_repr(z)}")
    Y = as_float_array("y", y)
    Y = Y[:, None] if Y.ndim == 1 else Y
    if Y.ndim != 2 or len(Y) != len(z):
        raise ValueError(f"y must have shape ({len(z)}, k) to match z, got {Y.shape}")
    check_size(
        f"interpolation_mp over {len(z):,} ids: the exact terms M^2 k of the triangular solve "
        "and its check",
        len(z) ** 2 * Y.shape[1],
        MAX_MP_TERMS,
        "lib.exact.MAX_MP_TERMS",
    )
    with mpmath.workdps(dps):
        zs = [
            to_mpf(f"z[{i}]", v)
            for i, v in enumerate(z if not isinstance(z, torch.Tensor) else z.tolist())
        ]
        order, s = _sorted_distinct_mp(zs)
        targets = [[mpmath.mpf(float(v)) for v in Y[i]] for i in order]
        biases, coeffs = _solve_mp(s, targets)
        max_error = max(
            abs(v - t)
            for zj, tj in zip(s, targets, strict=True)
            for v, t in zip(_relu_sum(zj, biases, coeffs), tj, strict=True)
        )
        max_coeff = max(abs(c) for row in coeffs for c in row)
    return Interpolation(biases, coeffs, order, max_error, max_coeff, s, targets)


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
        ValueError: for non-positive arguments.

    Source: K&S (ICLR 2024), Corollary 1 (the count's shape quoted, its reading reconstructed).
    Chapter 3.
    """
    n, N, d, s = (positive_int(name, v) for name, v in (("n", n), ("N", N), ("d", d), ("s", s)))
    return 4 * (s + d) + d * (2 * n * N + d)


def _rows(name: str, value) -> list[list]:
    """A weight as a list of rows (a bias as one row), from a torch tensor, numpy array or nested
    mpf lists."""
    if isinstance(value, torch.Tensor):
        value = value.detach().cpu().numpy()
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if not isinstance(value, list | tuple) or not value:
        raise ValueError(f"{name} must be a non-empty matrix or vector, got {short_repr(value)}")
    return [list(r) for r in value] if isinstance(value[0], list | tuple) else [list(value)]


def _nonzero(rows) -> int:
    return sum(1 for r in rows for x in r if x != 0)


def parameter_count(*layers) -> int:
    r"""The parameters of a built network, read off its tensors (K&S Corollary 1's bookkeeping).

    The rules, applied to each layer:

    * a :class:`~lib.layers.SingleHead` layer with ``rank`` set: every entry of its stored
      factors ``W_*_A``, ``W_*_B`` (``s + d`` per rank-1 matrix, zeros included: they are free
      parameters of the rank-1 parameterization); a dense head: the nonzero entries of its matrices;
    * a feed-forward layer (:class:`~lib.layers.FeedForward`, or a dict with ``W1, b1, W2, b2``
      as arrays or nested lists of mpf): the nonzero entries of ``b1``, ``W2`` and ``b2``, and the
      nonzero entries of the *distinct* rows of ``W1`` — hidden units that read the same
      projection share it, as in Zhang et al.'s ``2n + d`` count (a positive factor on a ReLU
      unit's input can be moved into its bias and output weight, so it is not a free parameter).

    Args:
        layers: any number of such layers.

    Returns:
        The total, a Python int.

    Raises:
        ValueError: for a layer of another kind, or a dict without the four weights.

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


def weight_lower_bound(z, targets) -> mpmath.mpf:
    r"""The largest output weight any layer :math:`\sum_m c_m \sigma_R(z - b_m)` of width ``M``
    needs to interpolate.

    The bound is for layers of exactly this form: ``M`` hidden units with unit input weights on
    the scalar ``z`` and any biases ``b_m`` (the form of :func:`interpolating_ffn`, and of the
    memorizing layer on the projected ids). Over :math:`[z_j, z_{j+1}]` the layer is piecewise
    linear with average slope :math:`(t_{j+1} - t_j) / (z_{j+1} - z_j)`, a weighted mean of the
    slopes of its pieces there, so one of them is at least that large in absolute value; every
    slope is a sum of at most ``M`` output weights. Hence

    .. math:: \max_m |c_m| \ge \max_j \frac{|t_{j+1} - t_j|}{M\,(z_{j+1} - z_j)} .

    Args:
        z: sorted distinct ids ``(M,)`` (floats or mpf); targets: ``M`` rows of ``k`` numbers.

    Returns:
        The bound as an mpf (at the caller's precision; 0 for one id).

    Raises:
        ValueError: for ids that are not strictly increasing, mismatched lengths, or an id or
            target that is not a finite real (NaN, inf, bools, strings that are not decimals),
            naming it.

    Source: the book's derivation (Chapter 3, check C10): the weight-norm price of close ids.
    """
    from .exact import to_mpf

    if isinstance(z, torch.Tensor | np.ndarray):
        z = z.tolist()
    if not isinstance(z, list | tuple) or not z:
        raise ValueError(f"z must be a non-empty sequence of ids, got {short_repr(z)}")
    z = [to_mpf(f"z[{i}]", x) for i, x in enumerate(z)]
    rows = _rows("targets", targets) if len(z) > 1 else [[0]]
    rows = [[to_mpf(f"targets[{i}][{j}]", x) for j, x in enumerate(r)] for i, r in enumerate(rows)]
    if len(rows) != len(z):
        raise ValueError(f"targets must have {len(z)} rows like z, got {len(rows)}")
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


def residual_ffn(v, knots, coeffs, offset=None) -> FeedForward:
    r"""The residual float64 layer ``z -> z + offset + sum_m coeffs[m] relu(v.z - knots[m])`` on
    ``d``-vectors.

    That is K&S's :math:`F^{(FF)}(Z) = Z + W_2 \sigma_R(W_1 Z + b_1 1^\top) + b_2 1^\top` with
    ``W1 = 1_M v^T`` (every hidden unit reads the projection ``v . z``), ``b1 = -knots``,
    ``W2 = coeffs^T`` and ``b2 = offset``.

    Args:
        v: projection ``(d,)``; knots: ``(M,)``; coeffs: ``(M, d)`` (or ``(M,)`` for ``d = 1``);
        offset: ``(d,)``, default 0.

    Returns:
        ``FeedForward(d, M, d, residual=True)`` (float64).

    Raises:
        ValueError: for mismatched shapes, complex, bool or non-finite values.

    Source: the feed-forward layer of K&S Corollary 1 (construction reconstructed by the book).
    Chapter 3.
    """
    v = as_float_array("v", v)
    if v.ndim != 1:
        raise ValueError(f"v must be 1-D, got shape {v.shape}")
    d = len(v)
    knots = as_float_array("knots", knots)
    if knots.ndim != 1:
        raise ValueError(f"knots must be 1-D, got shape {knots.shape}")
    coeffs = as_float_array("coeffs", coeffs)
    coeffs = coeffs[:, None] if coeffs.ndim == 1 and d == 1 else coeffs
    if coeffs.shape != (len(knots), d):
        raise ValueError(
            f"coeffs must have shape ({len(knots)}, {d}) to match knots and v, got {coeffs.shape}"
        )
    offset = np.zeros(d) if offset is None else as_float_array("offset", offset)
    if offset.shape != (d,):
        raise ValueError(f"offset must have shape ({d},), got {offset.shape}")
    ffn = FeedForward(d, len(knots), d, residual=True)
    ffn.set_weights(W1=np.outer(np.ones(len(knots)), v), b1=-knots, W2=coeffs.T, b2=offset)
    return ffn


def ffn_mp(Z, weights: dict, residual: bool = True) -> list:
    r"""A feed-forward layer evaluated exactly: ``[z +] W2 relu(W1 z + b1) + b2`` for every row
    ``z`` of ``Z``.

    Args:
        Z: rows (tokens) of ``d_in`` mpf or floats (a list of lists).
        weights: ``W1`` (``H`` rows of ``d_in``), ``b1`` (``H``), ``W2`` (``d_out`` rows of ``H``),
            ``b2`` (``d_out``), as nested lists of mpf or floats (floats are read exactly).
        residual: add ``z`` (K&S's :math:`F^{(FF)}`; needs ``d_out = d_in``).

    Returns:
        A list of rows of ``d_out`` mpf, at the caller's ``mpmath`` precision (call inside
        ``workdps``).

    Raises:
        ValueError: for mismatched shapes, for an entry of ``Z`` or of a weight that is not a
            finite real (NaN, inf, bools, strings that are not decimals, complex numbers), naming
            it, and if ``residual`` is not a bool.

    Source: K&S's residual feed-forward layer; used for the exact evaluations of Chapters 3-4.
    """
    from .exact import to_mpf

    residual = flag("residual", residual)
    if not isinstance(weights, dict) or not {"W1", "b1", "W2", "b2"} <= set(weights):
        raise ValueError(f"weights must be a dict with W1, b1, W2, b2, got {short_repr(weights)}")
    W1, b1, W2, b2 = (_rows(k, weights[k]) for k in ("W1", "b1", "W2", "b2"))
    b1, b2 = b1[0], b2[0]
    if len(b1) != len(W1) or any(len(r) != len(b1) for r in W2) or len(b2) != len(W2):
        raise ValueError(
            "weights must have shapes W1 (H, d_in), b1 (H,), W2 (d_out, H), b2 (d_out,)"
        )
    W1 = [[to_mpf(f"W1[{i}][{j}]", x) for j, x in enumerate(r)] for i, r in enumerate(W1)]
    W2 = [[to_mpf(f"W2[{i}][{j}]", x) for j, x in enumerate(r)] for i, r in enumerate(W2)]
    b1 = [to_mpf(f"b1[{i}]", x) for i, x in enumerate(b1)]
    b2 = [to_mpf(f"b2[{i}]", x) for i, x in enumerate(b2)]
    out = []
    for k, z in enumerate(Z):
        if not isinstance(z, list | tuple | np.ndarray):
            raise ValueError(f"Z[{k}] must be a row of reals, got {short_repr(z)}")
        z = [to_mpf(f"Z[{k}][{i}]", x) for i, x in enumerate(z)]
        if len(z) != len(W1[0]) or (residual and len(z) != len(W2)):
            raise ValueError(
                f"a row of Z has {len(z)} entries; the layer needs {len(W1[0])}"
                + (f" and d_out = d_in = {len(W2)}" if residual else "")
            )
        hidden = [
            max(mpmath.fsum(w * x for w, x in zip(row, z, strict=True)) + b, 0)
            for row, b in zip(W1, b1, strict=True)
        ]
        res = [
            mpmath.fsum(w * h for w, h in zip(row, hidden, strict=True) if h) + b
            for row, b in zip(W2, b2, strict=True)
        ]
        out.append([x + r for x, r in zip(z, res, strict=True)] if residual else res)
    return out


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
    keys = []
    for seq in X:
        multiset = tuple(sorted(tuple(t) for t in seq.tolist()))
        keys.extend((multiset, tuple(t)) for t in seq.tolist())
    return keys


def memorizing_transformer(
    X, Y, *, dps: int | None = None, seed: int = 0, directions: int = 100, head_dim: int = 1
) -> dict:
    r"""K&S Corollary 1 built and checked exactly: ``F_FF(F_SA(X)) = Y`` for every given pair.

    ``F_SA`` is the rank-1 residual layer of Theorem 2 (:class:`lib.contextual.RankOneAttention`
    on the vocabulary of ``X``, head size ``head_dim``): it maps token ``x`` to its context id
    ``z``. The ids are projected on a direction ``v`` that separates them (``w`` first, then seeded
    random directions), and ``F_FF`` is one residual ReLU layer of width ``M`` (the number of
    distinct contexts, at most ``nN``),

    .. math:: F^{(FF)}(z) = z + W_2 \sigma_R(W_1 z + b_1), \quad
       W_1 = 1_M v^\top,\ b_1 = -(\text{knots}),

    whose output weights ``W_2`` interpolate the targets ``y - z`` at the projected ids
    (the residual absorbed into the targets; :func:`interpolation_mp`'s system), ``b_2 = 0``.
    The network's output at every token is then evaluated from its weights with :func:`ffn_mp`
    on the exact ids (:func:`lib.exact.attention_mp`), in ``dps``-digit arithmetic.

    Args:
        X: sequences ``(N, n, d)`` (tokenwise separated, no repeated token inside a sequence).
        Y: labels ``(N, n, d)`` (or ``(N, n)`` when ``d = 1``): the layers are residual, so labels
            live in the token space. Permutation-equivalent sequences must give the same token
            the same label (consistent labels).
        dps: working precision; by default 30 digits beyond the construction's separation
            (:func:`lib.contextual.theorem2_delta`, ``construction``, which follows the theorem's
            ``gamma`` and ``r_max`` through its factor :math:`e^{-2\gamma r_{\max}^2}`).
        seed: seed of the attention layer's direction and of the fallback projections.
        directions: how many random projections to try if ``w`` does not separate the ids, at
            most :data:`lib.contextual.MAX_DRAWS`.
        head_dim: head size ``s`` of the attention layer.

    Returns:
        A :class:`MemorizingNetwork`.

    Raises:
        ValueError: for inconsistent labels, shapes that do not match, a sequence with a repeated
            token, complex or bool entries, a precision outside ``[15, lib.exact.MAX_DPS]``, more
            than :data:`lib.contextual.MAX_DRAWS` directions, or when no tried direction
            separates the context ids.

    Source: K&S (ICLR 2024), Corollary 1 (statement and count quoted in shape; the construction
    is reconstructed by the book, see the Sources and certainty page). Chapter 3 (check C10).
    """
    from . import contextual, exact

    directions = positive_int("directions", directions, maximum=contextual.MAX_DRAWS)
    Xa = as_float_array("X", X, min_ndim=3)
    if Xa.ndim != 3:
        raise ValueError(f"X must have shape (N, n, d), got {Xa.shape}")
    N, n, d = Xa.shape
    head_dim = contextual.check_head_dim(head_dim, d)  # before the work, not after it
    Ya = as_float_array("Y", Y, min_ndim=2)
    Ya = Ya[..., None] if Ya.ndim == 2 and d == 1 else Ya
    if Ya.shape != Xa.shape:
        raise ValueError(
            f"Y must have shape {Xa.shape}"
            + (f" or {Xa.shape[:2]}" if d == 1 else "")
            + f" (labels in the token space: the layers are residual), got {Ya.shape}"
        )
    contextual.tokenwise_separation(Xa)  # rejects repeated tokens inside a sequence
    labels = Ya.reshape(N * n, d)
    reps = _first_of_each_key(Xa, labels)  # one (sequence, token) per context; rejects conflicts
    layer = contextual.RankOneAttention(
        contextual.vocabulary(Xa), n, seed=seed, head_dim=positive_int("head_dim", head_dim)
    )
    delta = contextual.theorem2_delta(
        n, len(layer.vocab), d, layer.r_min, layer.r_max, layer.eps, c_w=layer.c_w
    )
    if dps is None:
        dps = 30 + max(0, int(-delta.construction))
        if dps > exact.MAX_DPS:
            raise ValueError(
                f"the context ids need {dps:,} digits, more than lib.exact.MAX_DPS={exact.MAX_DPS}"
            )
    else:
        dps = positive_int("dps", dps, minimum=15, maximum=exact.MAX_DPS)
    ids = [row for out in exact.attention_mp(Xa, layer, dps) for row in out]
    rng = np.random.default_rng(positive_int("seed", seed, minimum=0))
    candidates = [layer.w] + [rng.normal(size=d) for _ in range(directions)]
    with mpmath.workdps(dps):
        for v in candidates:
            v = v / np.linalg.norm(v)
            z = exact.project_mp([ids[i] for i in reps], v)
            if exact.min_gap(z, dps, distinct=False) > mpmath.mpf(10) ** (20 - dps):
                break
        else:
            raise ValueError(
                f"none of {len(candidates)} directions separates the context ids at {dps} digits"
            )
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


def float64_network(memorizer: MemorizingNetwork) -> FeedForward:
    """The feed-forward layer of :func:`memorizing_transformer` with its weights rounded to float64.

    Applied to the float64 context ids ``memorizer.attention(X)`` it shows what the exact
    network becomes in ordinary arithmetic (check C10).

    Args:
        memorizer: the :class:`MemorizingNetwork` of :func:`memorizing_transformer`.

    Returns:
        A float64 residual ``FeedForward(d, M, d)`` (:func:`residual_ffn`): ``W1 = 1_M v^T``,
        ``b1 = -biases``, ``W2`` the output weights, ``b2 = 0``.

    Raises:
        ValueError: if ``memorizer`` is not a :class:`MemorizingNetwork`, or a weight overflows
            float64.

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


def scalar_outputs(ffn: FeedForward, z) -> np.ndarray:
    """``ffn`` applied to scalar ids ``z`` ``(M,)``: the float64 outputs ``(M, k)`` as numpy.

    Raises:
        ValueError: if ``ffn`` is not a :class:`~lib.layers.FeedForward` on scalars
            (``d_in = 1``), or ``z`` is not a finite real 1-D array (complex and bool refused).
    """
    if not isinstance(ffn, FeedForward) or ffn.d_in != 1:
        raise ValueError(
            f"ffn must be a lib.layers.FeedForward with d_in = 1, got {short_repr(ffn)}"
        )
    z = as_float_array("z", z)
    if z.ndim != 1:
        raise ValueError(f"z must be 1-D (scalar ids), got shape {z.shape}")
    with torch.no_grad():
        return ffn(torch.as_tensor(z, dtype=ffn.W1.dtype)[:, None]).numpy()


def interpolation_price(spacings, labels, base: float = 1.0) -> pd.DataFrame:
    """What the interpolating layer costs as its ids close in (Chapter 3, Figure "interp").

    For each spacing ``g`` the ids are ``base + g * arange(M)`` with the given labels.

    Args:
        spacings: positive spacings ``(S,)``.
        labels: targets ``(M,)``.
        base: where the ids start.

    Returns:
        A DataFrame with one row per spacing and the columns ``spacing``, ``max_coeff_exact``
        (the largest output weight at 50 digits), ``error_at_ids`` (float64 layer at its own
        float64 ids) and ``error_ulp_off`` (the same layer at ids one unit in the last place
        higher: the rounding any float64 computation of the ids carries).

    Raises:
        ValueError: for non-positive or non-finite spacings, a non-finite ``base``, complex or bool
            input, or spacings that make ids collide.

    Source: the interpolation step of K&S Corollary 1 (reconstructed by the book). Chapter 3.
    """
    base = finite_real("base", base)
    spacings = as_float_array("spacings", spacings)
    if spacings.ndim != 1 or (spacings <= 0).any():
        raise ValueError(f"spacings must be positive, got {short_repr(spacings)}")
    labels = as_float_array("labels", labels)
    rows = []
    for g in spacings:
        z = base + g * np.arange(len(labels))
        if not (np.isfinite(z).all() and (np.diff(z) > 0).all()):
            raise ValueError(
                f"the ids base + spacing * k are not distinct finite float64 numbers for "
                f"base={base!r} and spacing={g!r}; move base nearer 0 or widen the spacing"
            )
        f64 = interpolating_ffn(z, labels)
        rows.append(
            {
                "spacing": g,
                "max_coeff_exact": float(interpolation_mp(list(z), labels, dps=50).max_coeff),
                "error_at_ids": np.abs(scalar_outputs(f64, z)[:, 0] - labels).max(),
                "error_ulp_off": np.abs(
                    scalar_outputs(f64, np.nextafter(z, np.inf))[:, 0] - labels
                ).max(),
            }
        )
    return pd.DataFrame(rows)


def float64_memorization(X, Y, gamma: float) -> Float64Memorization:
    """Corollary 1's network built and run entirely in float64 at inverse temperature ``gamma``.

    The rank-1 residual layer of :class:`lib.contextual.RankOneAttention` (``w = 1``, with
    ``gamma`` replacing the theorem's value) gives float64 context ids ``z`` of the tokens of
    ``X`` ``(N, n, 1)``; a float64 residual layer (:func:`residual_ffn`) is built on them to
    interpolate ``Y - z``, and the error is that of the whole network's forward pass
    ``F_FF(F_SA(X))`` against ``Y`` ``(N, n)``.

    Returns:
        A :class:`Float64Memorization`.

    Raises:
        ValueError: for ``X`` that is not ``(N, n, 1)``, mismatched ``Y``, labels that differ
            between tokens forced to share a context id (permuted sequences, as for
            :func:`memorizing_transformer`), or a ``gamma`` that is not a positive finite real
            (``None`` included: this function has no default).

    Source: this book (Chapter 3, a regime outside K&S Theorem 2).
    """
    from . import contextual

    gamma = finite_real("gamma", gamma, minimum=0.0, strict=True)
    X = as_float_array("X", X, min_ndim=3)
    if X.ndim != 3 or X.shape[2] != 1:
        raise ValueError(f"X must have shape (N, n, 1), got {X.shape}")
    Y = as_float_array("Y", Y, min_ndim=2)
    if Y.shape != X.shape[:2]:
        raise ValueError(f"Y must have shape {X.shape[:2]}, got {Y.shape}")
    layer = contextual.RankOneAttention(contextual.vocabulary(X), X.shape[1], w=[1.0], gamma=gamma)
    with torch.no_grad():
        try:
            ids = layer(torch.as_tensor(X))
        except ValueError as e:  # the layer's scores, gamma times products of tokens, overflow
            raise ValueError(f"gamma={gamma!r} is too large for these tokens: {e}") from None
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
