r"""Interpolation by one ReLU feed-forward layer: the feed-forward half of K&S Corollary 1
(Chapter 3).

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
(:func:`lib.memorization.memorizing_transformer`) interpolates the targets :math:`t = y - z` (label
minus context id): the residual adds the id back. This is the feed-forward half of K&S Corollary 1
as the book
reconstructs it (see the Sources and certainty page).

The memorizing network that puts this layer after the contextual mapping is in
:mod:`lib.memorization`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import mpmath
import numpy as np
import pandas as pd
import torch
from numpy.typing import ArrayLike

from ._validate import (
    as_float_array,
    blame,
    finite_real,
    flag,
    positive_int,
    require_size,
    short_repr,
)
from .feedforward import FeedForward

__all__ = [
    "Interpolation",
    "interpolation_knots",
    "knot_layer",
    "interpolating_ffn",
    "interpolation_mp",
    "residual_ffn",
    "ffn_mp",
    "scalar_outputs",
    "interpolation_price",
]


@dataclass(frozen=True)
class Interpolation:
    """An interpolating ReLU layer solved exactly (:func:`interpolation_mp`,
    :func:`lib.memorization.memorizing_transformer`).

    Attributes:
        biases: the ``M`` knots ``b_m`` (mpf, in sorted order of the ids).
        coeffs: ``M`` rows of ``k`` output weights ``c_m`` (mpf).
        order: the indices sorting the ids (for :func:`lib.memorization.memorizing_transformer`: the
            ``(sequence, token)`` index behind each sorted id).
        max_error: the largest ``|f(z_i) - t_i|`` at the working precision (mpf).
        max_coeff: the largest ``|c|`` (mpf).
        z: the sorted ids (mpf); targets: their targets (mpf rows).
    """

    biases: list
    coeffs: list
    order: list
    max_error: mpmath.mpf
    max_coeff: mpmath.mpf
    z: list
    targets: list


def _points(z: ArrayLike, y: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    z = as_float_array("z", z)
    if z.ndim != 1:
        raise ValueError(f"z must be 1-D (scalar ids), got shape {z.shape}")
    y = as_float_array("y", y)
    y = y[:, None] if y.ndim == 1 else y
    if y.ndim != 2 or len(y) != len(z):
        raise ValueError(f"y must have shape ({len(z)}, k) to match z, got {y.shape}")
    return z, y


def interpolation_knots(z: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Sort the ids and place one ReLU knot below each: ``(order, biases)``.

    Args:
        z: distinct finite scalars ``(M,)``.

    Returns:
        A pair ``(order, biases)``, with ``order`` the indices sorting ``z`` and ``biases`` of
        shape ``(M,)`` in sorted order, namely ``b_1 = z_1 - (z_2 - z_1)`` (``z_1 - 1`` for a
        single point, ``z_1 - |z_1|`` where ``z_1 - 1`` rounds to ``z_1``) and the midpoints
        between neighbouring ids after that, all finite: near
        float64's limit the midpoints are formed from halves and a first knot that would
        overflow is float64's most negative number.

    Raises:
        ValueError: for repeated ids (no function can give them different labels), NaN/inf, a
            wrong shape, or a smallest id equal to float64's most negative number.

    Accuracy:
        Exact: ``order`` is numpy's stable argsort; each later knot is the correctly rounded
        midpoint of its two ids, so it lies between them, strictly unless they are adjacent
        floats (then it equals one of them: the upper id for 1.0000000000000002 and
        1.0000000000000004); the first knot lies strictly below the smallest id, within two
        roundings of the stated formula unless it was replaced as described.

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
    with np.errstate(over="ignore"):
        first = s[0] - (s[1] - s[0] if len(s) > 1 else 1.0)
        if not first < s[0]:  # one id so large that z - 1 rounds back to it: a gap of its size
            first = s[0] - abs(s[0])
        sums = s[:-1] + s[1:]
    if not math.isfinite(first):  # near -1.8e308: any knot below the first id serves
        first = -np.finfo(np.float64).max
        if not first < s[0]:
            raise ValueError(
                f"z's smallest id ({s[0]!r}) leaves no float64 below it for the first knot"
            )
    # midpoints from halves where the sum overflows (ids near the float64 limit)
    mids = np.where(np.isfinite(sums), sums / 2, s[:-1] / 2 + s[1:] / 2)
    biases = np.concatenate([[first], mids])
    return order, biases


def knot_layer(knots: ArrayLike, coeffs: ArrayLike, offset: ArrayLike) -> FeedForward:
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

    Accuracy:
        Exact: the layer holds the given float64 knots, coefficients and offset unchanged
        (``b1 = -knots``); evaluating it adds float64 rounding (:func:`scalar_outputs`).

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


def interpolating_ffn(z: ArrayLike, y: ArrayLike) -> FeedForward:
    r"""A ReLU :class:`~lib.feedforward.FeedForward` (float64) with ``f(z_i) = y_i`` for every
    ``i``.

    Hidden width ``M = len(z)``; ``W1`` is all ones, ``b1 = -biases``, ``W2`` holds the
    coefficients of the triangular system (solved by ``torch.linalg.solve_triangular``), ``b2 = 0``.

    Args:
        z: distinct scalar ids ``(M,)``.
        y: targets ``(M,)`` or ``(M, k)``.

    Returns:
        A float64 ``FeedForward(1, M, k)`` mapping ``(..., 1)`` to ``(..., k)``.

    Raises:
        ValueError: for repeated ids, NaN/inf, mismatched shapes, or coefficients that overflow
            (also when two adjacent-float ids get a knot at the upper one, or when the ids span
            more than float64's largest number, e.g. -1e308 and 1e308).

    Accuracy:
        In float64 the interpolation is exact only up to rounding: evaluated at its ids the
        layer is within :math:`Mu\sum_m |c_m|(z_{\max} - b_1)` of the targets (probed with
        ids from 1e-2 to 1e-11 apart relative to their size). The bound grows with the
        coefficients: for ids closer than about ``1e-8`` relative to their size it exceeds the
        targets themselves (Chapter 3 shows it) — use :func:`interpolation_mp` there. A system
        with no finite float64 solution is refused.

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
        raise ValueError(
            "the interpolation system of z and y has no finite float64 solution (ids too close "
            "for their targets, adjacent floats whose midpoint rounds onto an id, or ids spanning "
            "more than float64's range); use interpolation_mp"
        )
    return knot_layer(biases, coeffs.numpy(), np.zeros(y.shape[1]))


def _relu_sum(x: mpmath.mpf, biases: Sequence[Any], coeffs: Sequence[Sequence[Any]]) -> list:
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
    coeffs: list[list[Any]] = []
    for j, zj in enumerate(s):  # forward substitution, row by row
        coeffs.append(
            [
                (targets[j][col] - mpmath.fsum(coeffs[m][col] * (zj - biases[m]) for m in range(j)))
                / (zj - biases[j])
                for col in range(len(targets[j]))
            ]
        )
    return biases, coeffs


def _sorted_distinct_mp(z: Sequence[Any]) -> tuple[list, list]:
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


def interpolation_mp(
    z: Sequence[float | mpmath.mpf] | np.ndarray | torch.Tensor, y: ArrayLike, dps: int = 50
) -> Interpolation:
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
            or more than :data:`lib.exact.MAX_MP_TERMS` exact terms (``M**2 k``) or
            :data:`lib.exact.MAX_MP_SECONDS` of them at ``dps`` digits (both checked before any is
            computed).

    Accuracy:
        Float ids and targets are read exactly (``dps >= 15``); mpf ids are rounded to ``dps``
        digits, and ids equal at that precision are refused as repeated. The knots,
        coefficients and ``max_error`` are computed in ``dps``-digit arithmetic, and
        ``max_error`` reports the residual at the ids itself (0 in probes at 1e-300 and 1e300).

    Source: the interpolation step of K&S Corollary 1 (reconstructed by the book). Chapter 3.
    """
    from .exact import MAX_DPS, MAX_MP_TERMS, require_mp_seconds, to_mpf

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
    require_size(
        f"interpolation_mp over {len(z):,} ids: the exact terms M^2 k of the triangular solve "
        "and its check",
        len(z) ** 2 * Y.shape[1],
        MAX_MP_TERMS,
        "lib.exact.MAX_MP_TERMS",
    )
    require_mp_seconds(f"interpolation_mp over {len(z):,} ids", dps, 4 * len(z) ** 2 * Y.shape[1])
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


def residual_ffn(
    v: ArrayLike, knots: ArrayLike, coeffs: ArrayLike, offset: ArrayLike | None = None
) -> FeedForward:
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

    Accuracy:
        Exact: every row of ``W1`` is ``v``, ``b1 = -knots``, ``W2 = coeffs^T`` and
        ``b2 = offset``, the given float64 numbers unchanged.

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


def ffn_mp(Z: Iterable[Sequence[Any] | np.ndarray], weights: dict, residual: bool = True) -> list:
    r"""A feed-forward layer evaluated exactly: ``[z +] W2 relu(W1 z + b1) + b2`` for every row
    ``z`` of ``Z``.

    Args:
        Z: rows (tokens) of ``d_in`` mpf or floats (a list of lists).
        weights: ``W1`` (``H`` rows of ``d_in``), ``b1`` (``H``), ``W2`` (``d_out`` rows of ``H``),
            ``b2`` (``d_out``), as nested lists of mpf or floats (floats are read exactly at
            53 bits or more, mpmath's default).
        residual: add ``z`` (K&S's :math:`F^{(FF)}`; needs ``d_out = d_in``).

    Returns:
        A list of rows of ``d_out`` mpf, at the caller's ``mpmath`` precision (call inside
        ``workdps``).

    Raises:
        ValueError: for mismatched shapes, for an entry of ``Z`` or of a weight that is not a
            finite real (NaN, inf, bools, strings that are not decimals, complex numbers), naming
            it, and if ``residual`` is not a bool.

    Accuracy:
        To the caller's working precision: each pre-activation and output is an
        ``mpmath.fsum`` of products rounded once each, within a few units of :math:`2^{-p}`
        (``p = mpmath.mp.prec``) times the sum of its terms' absolute values. Below 53 bits
        floats are rounded on reading (0.1 reads as 0.10000002 at ``dps = 5``).

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


def scalar_outputs(ffn: FeedForward, z: ArrayLike) -> np.ndarray:
    """``ffn`` applied to scalar ids ``z`` ``(M,)``: the float64 outputs ``(M, k)`` as numpy.

    Args:
        ffn: a :class:`~lib.feedforward.FeedForward` with ``d_in = 1``.
        z: finite real scalar ids ``(M,)``.

    Raises:
        ValueError: if ``ffn`` is not a :class:`~lib.feedforward.FeedForward` on scalars
            (``d_in = 1``), or ``z`` is not a finite real 1-D array (complex and bool refused).

    Accuracy:
        What the layer computes in its dtype: ``z`` is rounded to that dtype (exact for
        float64) and the outputs carry the layer's own rounding, nothing more.
    """
    if not isinstance(ffn, FeedForward) or ffn.d_in != 1:
        raise ValueError(
            f"ffn must be a lib.feedforward.FeedForward with d_in = 1, got {short_repr(ffn)}"
        )
    z = as_float_array("z", z)
    if z.ndim != 1:
        raise ValueError(f"z must be 1-D (scalar ids), got shape {z.shape}")
    with torch.no_grad():
        return ffn(torch.as_tensor(z, dtype=ffn.W1.dtype)[:, None]).numpy()


def _rows(name: str, value: object) -> list[list]:
    """A weight as a list of rows (a bias as one row), from a torch tensor, numpy array or nested
    mpf lists."""
    if isinstance(value, torch.Tensor):
        value = value.detach().cpu().numpy()
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if not isinstance(value, list | tuple) or not value:
        raise ValueError(f"{name} must be a non-empty matrix or vector, got {short_repr(value)}")
    return [list(r) for r in value] if isinstance(value[0], list | tuple) else [list(value)]


def interpolation_price(spacings: ArrayLike, labels: ArrayLike, base: float = 1.0) -> pd.DataFrame:
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

    Accuracy:
        The ids are ``base + g * k`` rounded to float64. ``max_coeff_exact`` is the largest
        coefficient of the exact interpolant of those float64 ids, at 50 digits, rounded to
        float64 (within :math:`u` relative); ``error_at_ids`` and ``error_ulp_off`` measure the
        float64 layer (:func:`interpolating_ffn`), each difference rounded once.

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
                f"the ids base + g * k are not distinct finite float64 numbers for "
                f"base={base!r} and the entry g={g!r} of spacings; move base nearer 0 or widen "
                f"spacings"
            )
        with blame("spacings", "base"):
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
