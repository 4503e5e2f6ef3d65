r"""LHSL's lookup: one single-head self-attention layer after a sum-of-linear map (Chapter 5).

Liu, Hu, Song & Liu (NeurIPS 2025; "LHSL") show that one single-head softmax attention layer,
preceded only by a linear "sum-of-linear" map, approximates any continuous map in
:math:`L_\infty` (and any :math:`L_p` map in :math:`L_p`). The book reconstructs the
construction as a lookup table over a max-affine partition (:mod:`lib.maxaffine`):

* the sum-of-linear map (:class:`lib.sum_of_linear.SumOfLinear`) copies :math:`\mathrm{vec}(X)`
  into a query token and appends one constant key token per cell carrying :math:`(a_i, b_i)` and
  a value :math:`v_i = f(c_i)`; the attention layer then returns, approximately, the value of the
  cell the input lies in (:func:`attention_approximator`, :class:`PartitionLookup`; one key block
  per output position for sequence outputs, :func:`seq2seq_approximator`);
* the layers' closed forms: :func:`hard_lookup` (the :math:`\beta \to \infty` limit),
  :func:`soft_lookup` (:math:`\sigma(\beta y(x))^\top V`), and, on a Voronoi grid, the
  Gaussian-kernel Nadaraya–Watson estimate (:func:`nadaraya_watson`), on points ``(..., D)``,
  centres ``(N, D)`` and values ``(N, k)`` (float64 numpy out); the error bounds and grid sizes
  are :mod:`lib.lookup_bounds`.

The cross-attention form, where keys and values are a context sequence, is :mod:`lib.cross`
(Chapter 6). The token layout, the suppression of non-key tokens and the position bonus are the
book's reconstruction (see the Sources and certainty page). Every layer counts its parameters
against :data:`lib.layers.MAX_PARAMETERS` before allocating any; bad input raises ``ValueError``
naming the argument.

Far from the origin. The closed forms work from squared distances formed from explicit
differences, so they are right wherever points and centres lie. A literal layer computes what a
layer computes: its scores :math:`\beta(a_i^\top x + b_i)` are float64 numbers of the size of
:math:`\beta \|x\|^2`, translated by the midpoint of the centres' box when that lies far away
(the ``reference``; the sum-of-linear map's constant subtracts it). Where that is not enough
(one centre far from the others, points far from the centres), rounding breaks the
construction: every call compares the layer with its closed form (``closed_form``) and refuses
points where they differ by more than :data:`ROUNDING_TOL` of the values' scale, naming them.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from numpy.typing import ArrayLike
from torch import nn

from ._geometry import (
    as_beta,
    as_centres,
    as_points,
    as_values,
    chunked,
    far_reference,
    scaled_distances,
    sq_distances,
    voronoi_scores,
)
from ._validate import (
    as_float_array,
    finite_real,
    function,
    positive_int,
    short_repr,
)
from .layers import SelfAttention
from .maxaffine import voronoi_affine
from .sum_of_linear import SumOfLinear, _query_copy, _require_layer_size, _token_width

__all__ = [
    "hard_lookup",
    "soft_lookup",
    "nadaraya_watson",
    "PartitionLookup",
    "attention_approximator",
    "seq2seq_approximator",
    "ROUNDING_TOL",
]


def hard_lookup(x: ArrayLike, centres: ArrayLike, values: ArrayLike) -> np.ndarray:
    r"""The hard partition's answer: the value of the nearest centre (Voronoi cell),
    ``(..., *values.shape[1:])``.

    The :math:`\beta\to\infty` limit of :func:`attention_approximator`, the reference of check C15.
    Ties go to the lowest index. From squared distances formed from explicit differences
    (``lib._geometry.distances``, scaled where a square would underflow or overflow).

    Args:
        x: points ``(..., D)``; centres: ``(N, D)``, ``N >= 1``; values: ``(N, ...)``, one row
            per centre; all real and finite.

    Returns:
        ``values[i]`` of the nearest centre ``i`` of each point, ``(..., *values.shape[1:])``.

    Raises:
        ValueError: for mismatched shapes or non-finite, complex or bool input.

    Accuracy:
        Exact: the value of the nearest centre of the float64 inputs for every point whose
        nearest centre is nearer than every other by more than :math:`(D + 6)u` relative in
        distance, wherever they lie, from 1e-300 to 1e300 in size, also when one centre lies
        far from the others (probed with near-ties); computed ties go to the lowest index.
        Distances beyond float64's largest number (coordinates of opposite signs near 1e308)
        are compared after scaling by a power of two (``lib._geometry.scaled_distances``), so
        the nearest centre comes back there too.

    Source: the hard lookup of the book's reconstruction of LHSL's construction. Chapter 5.
    """
    c = as_centres(centres)
    v = as_values("values", values, c.shape[0])
    x = as_points(x, c.shape[1])
    nearest = chunked(x, lambda p: scaled_distances(p, c)[0].argmin(dim=1).numpy(), c.shape[0])
    return v[nearest]


def soft_lookup(x: ArrayLike, centres: ArrayLike, values: ArrayLike, beta: float) -> np.ndarray:
    r"""The closed form of :func:`attention_approximator`'s output:
    :math:`\sigma(\beta y(x))^\top V`.

    The layer's output at the query token is exactly this weighted average of the values (up
    to the query token's own weight, below :math:`e^{-40}`); it costs ``O(N D)`` per point
    instead of building the ``N + 1``-token sequence, so Chapter 5's sweeps use it and check it
    against the literal layer on a sample.

    Args:
        x: points ``(..., D)``; centres: ``(N, D)``; values: ``(N, k)`` or ``(N,)``; beta: > 0.

    Returns:
        float64 ``(..., k)`` (or ``(...,)`` for 1-D ``values``).

    Computed from squared distances formed from explicit differences
    (``lib._geometry.distances``), since :math:`y_i(x) = \|x\|^2 - \|x - c_i\|^2` and
    softmax ignores the per-point :math:`\|x\|^2`: the weights are those of the exact scores of
    the float64 inputs wherever they lie, not of their float64 cancellation.

    Raises:
        ValueError: as :func:`lib.maxaffine.soft_indicator` and :func:`hard_lookup`.

    Accuracy:
        Within :math:`(N + 4D + 16)(1 + \beta d^2)\,u \max_i |v_i|` of the exact
        :math:`\sigma(-\beta\|x - c_i\|^2)^\top V` of the float64 inputs, :math:`d` the
        distance from ``x`` to its nearest centre (probed from 1e-300 to 1e300 in size, one
        centre far from the others included), distances beyond float64's largest number
        included (scaled by a power of two before the scores are formed).

    Source: the closed form of the book's reconstruction of LHSL's construction (see the Sources
    and certainty page); checks C15–C16, Chapter 5.
    """
    beta = as_beta(beta)
    c = as_centres(centres)
    v = torch.from_numpy(as_values("values", values, c.shape[0]))
    x = as_points(x, c.shape[1])
    flat = v.reshape(len(v), -1)

    def weighted(p: np.ndarray) -> np.ndarray:
        rel = voronoi_scores(p, c, beta)
        return (torch.softmax(-rel, dim=-1) @ flat).numpy()

    out = chunked(x, weighted, c.shape[0])
    return out.reshape(out.shape[:-1] + v.shape[1:])


def nadaraya_watson(
    x: ArrayLike, centres: ArrayLike, values: ArrayLike, bandwidth: float
) -> np.ndarray:
    r"""The Gaussian-kernel Nadaraya–Watson estimate
    :math:`\sum_i K(x - c_i) v_i / \sum_i K(x - c_i)`.

    :math:`K(u) = e^{-\|u\|^2 / (2 h^2)}` with ``h = bandwidth``; computed from the distances
    (:func:`soft_lookup` at :math:`\beta = 1/(2h^2)`, which works from squared distances),
    independently of the affine scores that :func:`attention_approximator`'s layer computes: the
    two agree by the identity :math:`a_i^\top x + b_i = \|x\|^2 - \|x - c_i\|^2`.

    Args:
        x: points ``(..., D)``; centres: ``(N, D)``; values: ``(N, k)`` or ``(N,)``.
        bandwidth: ``h > 0``, in the units of ``x``.

    Returns:
        float64 ``(..., k)`` (or ``(...,)`` for 1-D ``values``).

    Raises:
        ValueError: for mismatched shapes, non-finite, complex or bool input, a non-positive
            bandwidth, or one so small that :math:`1/(2h^2)` overflows float64 (or so large
            that it falls below float64's normal range, where its digits are lost: about
            ``h > 1e153``).

    Accuracy:
        As :func:`soft_lookup` at :math:`\beta = 1/(2h^2)` (itself rounded twice, which that
        bound covers): within :math:`(N + 4D + 16)(1 + d^2/(2h^2))\,u \max_i |v_i|` of the
        exact estimate of the float64 inputs, distances beyond float64's largest number
        included.

    Source: the kernel-regression reading of LHSL's lookup (the book's remark on its
    reconstruction). Chapter 5.
    """
    h = finite_real("bandwidth", bandwidth, minimum=0.0, strict=True)
    beta = 0.5 / h / h
    if not math.isfinite(beta):
        raise ValueError(f"bandwidth={h!r} is too small: 1/(2 h^2) overflows float64")
    if beta < sys.float_info.min:  # subnormal or 0: 1/(2 h^2) has lost its digits
        raise ValueError(
            f"bandwidth={h!r} is too large: 1/(2 h^2) = {beta!r} falls below float64's normal range"
        )
    return soft_lookup(x, centres, values, beta)


#: How far a literal lookup layer's float64 output may lie from the construction's closed form,
#: relative to the largest magnitude of the layer's values, for the layer still to return it. The
#: closed form is :func:`soft_lookup`, computed from distances without cancellation; the value,
#: three digits, is the book's choice (the layers of the chapters agree to about 1e-13, a grid at
#: 1e8 translated by its reference to 1e-9). Beyond it float64 rounding of the layer's scores has
#: broken the construction at that point, for instance when one centre lies far from the others,
#: and the layer refuses the point.
ROUNDING_TOL = 1e-3


def _refuse_unfaithful(
    x: torch.Tensor, out: torch.Tensor, closed: torch.Tensor, values: np.ndarray
) -> None:
    """Raise ValueError naming the first point where ``out`` and ``closed`` differ by more than
    :data:`ROUNDING_TOL` times the values' largest magnitude."""
    limit = ROUNDING_TOL * float(np.abs(values).max()) if np.size(values) else 0.0
    gap = (out - closed).abs().reshape(len(out), -1).amax(dim=1) if len(out) else out
    bad = torch.nonzero(gap > limit).flatten()
    if len(bad):
        i = int(bad[0])
        raise ValueError(
            f"x[{i}] = {short_repr(x[i].numpy())}: the layer's float64 output there lies "
            f"{float(gap[i]):.3g} from the construction's closed form (more than ROUNDING_TOL x "
            f"max|f(c_i)| = {limit:.3g}): its scores are too large for their differences (the "
            "point or some centres lie far from the centres' box midpoint); evaluate the closed "
            "form (the layer's closed_form, lib.lookup.soft_lookup) or translate points and centres"
        )


class PartitionLookup(nn.Module):
    r"""``SumOfLinear`` then one single-head ``SelfAttention`` (no residual), read at the query
    tokens.

    Built by :func:`attention_approximator` and :func:`seq2seq_approximator`. Input: points
    ``(batch, D)`` (a flattened sequence, ``D = n d``); output ``(batch, k)`` or, for the seq2seq
    form, ``(batch, P, k)``. Evaluation runs in chunks of ``chunk`` points and only scores the
    ``P`` query tokens (``SelfAttention(rows=P)``): the outputs at the key tokens are never read.

    Attributes:
        linear: the :class:`~lib.sum_of_linear.SumOfLinear` map; attention: the
        :class:`lib.layers.SelfAttention`; centres, values, beta, bonus, suppress: the
        construction's data, as numpy arrays and floats;
        reference: ``None``, or the point ``(D,)`` subtracted from points and centres before
        scoring (centres far from the origin, module docstring; the map's constant ``C`` does
        it); A, b: the Voronoi pieces the key tokens carry, those of ``centres - reference``;
        token_dim, n_positions, value_dim: sizes.

    Raises:
        ValueError: for a non-positive ``chunk``; in :meth:`forward` and :meth:`closed_form` as
            :func:`attention_approximator` at call time.

    Accuracy:
        :meth:`forward` returns an output only where it lies within :data:`ROUNDING_TOL` times
        the largest :math:`|f(c_i)|` of :meth:`closed_form`, and refuses the other points with
        ValueError (the layers of the chapters agree to about 1e-13). :meth:`closed_form` has
        :func:`soft_lookup`'s accuracy in each key block; it leaves out the query tokens'
        weight, below :math:`e^{-40}` for points the layer accepts.

    Source: LHSL (NeurIPS 2025), the self-attention universality theorems (the construction is
    reconstructed by the book; see the Sources and certainty page). Chapter 5.
    """

    # Set in __init__ from ``info`` (the construction's data, see Attributes).
    centres: np.ndarray
    values: np.ndarray
    A: np.ndarray
    b: np.ndarray
    beta: float
    bonus: float
    suppress: float
    reference: np.ndarray | None

    def __init__(
        self,
        linear: SumOfLinear,
        attention: SelfAttention,
        *,
        token_dim: int,
        n_positions: int,
        value_slice: slice,
        squeeze: bool,
        chunk: int = 512,
        **info: Any,
    ) -> None:
        super().__init__()
        self.linear, self.attention = linear, attention
        self.token_dim, self.n_positions = token_dim, n_positions
        self.value_slice, self.squeeze = value_slice, squeeze
        self.value_dim = value_slice.stop - value_slice.start
        self.chunk = positive_int("chunk", chunk)
        for key, value in info.items():
            setattr(self, key, value)

    @property
    def D(self) -> int:
        return self.linear.B.shape[1] * self.token_dim

    def tokens(self, x: ArrayLike | torch.Tensor) -> torch.Tensor:
        """The sequence ``L(X)`` ``(batch, n', d')`` the attention layer sees (queries first)."""
        x = self._as_near_points(x)
        return self.linear(x.reshape(len(x), -1, self.token_dim))

    def _as_near_points(self, x: ArrayLike | torch.Tensor) -> torch.Tensor:
        x = _as_point_batch(x, self.D)
        # the query token's own score must stay far below the best key's (see _build): by
        # beta (1 + |x - c_nearest|^2) - suppress, whatever the reference
        nearest = sq_distances(x.numpy(), self.centres).min(dim=1).values if len(x) else x[:, 0]
        if bool((self.beta * (1.0 + nearest) > self.suppress - 30.0).any()):
            raise ValueError(
                f"x lies too far from the centres for suppress={self.suppress:.3g} "
                "(the query token would take weight); pass a larger suppress or points nearer "
                "the grid"
            )
        return x.to(self.linear.A.dtype)

    @torch.no_grad()
    def forward(self, x: ArrayLike | torch.Tensor) -> torch.Tensor:
        """Evaluate at points ``x`` ``(batch, D)`` (torch or numpy); float64 torch output."""
        x = self._as_near_points(x)
        parts = []
        for i in range(0, len(x), self.chunk):
            Z = self.linear(
                x[i : i + self.chunk].reshape(-1, self.linear.B.shape[1], self.token_dim)
            )
            parts.append(self.attention(Z, rows=self.n_positions)[..., self.value_slice])
        out = (
            torch.cat(parts)
            if parts
            else torch.empty(0, self.n_positions, self.value_dim, dtype=x.dtype)
        )
        _refuse_unfaithful(x, out, self._closed(x), self.values)
        return out[:, 0] if self.squeeze else out

    def closed_form(self, x: ArrayLike | torch.Tensor) -> torch.Tensor:
        r"""The construction's output at points ``x`` ``(batch, D)`` computed from distances,
        float64 torch of :meth:`forward`'s shape.

        Query :math:`j` gives each key block weight :math:`e^{M[j = j']}` and, within a block,
        :math:`\sigma(\beta y(x))`: :math:`o_j = (e^M u_j + \sum_{j' \ne j} u_{j'}) /
        (e^M + P - 1)` with :math:`u_{j'}` = :func:`soft_lookup` of the values of position
        :math:`j'` (the query tokens' own weight, below :math:`e^{-40}`, left out). :meth:`forward`
        refuses points where the layer lies further than :data:`ROUNDING_TOL` from it.
        """
        out = self._closed(_as_point_batch(x, self.D))
        return out[:, 0] if self.squeeze else out

    def _closed(self, x: torch.Tensor) -> torch.Tensor:
        N, P = len(self.centres), self.n_positions
        v = self.values.reshape(N, P, -1)
        # distances need no reference: translating would only add a rounding
        u = torch.from_numpy(
            soft_lookup(x.numpy(), self.centres, v.reshape(N, -1), self.beta)
        ).reshape(len(x), P, -1)
        t = math.exp(-self.bonus)
        return (u + t * (u.sum(dim=1, keepdim=True) - u)) / (1.0 + t * (P - 1))


def _as_point_batch(x: object, D: int) -> torch.Tensor:
    """``x`` (numpy or torch) as float64 points ``(batch, D)``; ValueError naming ``x``
    otherwise."""
    if not isinstance(x, np.ndarray | torch.Tensor) or np.ndim(x) != 2 or np.shape(x)[1] != D:
        raise ValueError(f"x must be points (batch, {D}), got {short_repr(x)}")
    return torch.from_numpy(as_float_array("x", x))


def _centres_values(
    f: Callable, centres: ArrayLike, n_positions: int | None
) -> tuple[np.ndarray, np.ndarray]:
    c = as_centres(centres)
    function("f", f)
    v = as_float_array("f(centres)", f(c.copy()))
    want = "(N, k)" if n_positions is None else f"(N, {n_positions}, k)"
    ndim = 2 if n_positions is None else 3
    if v.ndim == ndim - 1:
        v = v[..., None]
    if (
        v.ndim != ndim
        or v.shape[0] != len(c)
        or (n_positions is not None and v.shape[1] != n_positions)
    ):
        raise ValueError(f"f must map (N, D) = {c.shape} to {want}, got {v.shape}")
    return c, v if n_positions is not None else v[:, None, :]


def _suppression(beta: float, c: np.ndarray, suppress: float | None) -> float:
    """The query tokens' score penalty of :func:`_build`: ``suppress`` checked, or by default
    ``beta (1 + 4 span^2) + 40`` for centres ``c`` ``(N, D)``; ValueError when it overflows."""
    lo, hi = c.min(axis=0), c.max(axis=0)
    span2 = float(((hi - lo) ** 2).sum()) + 1.0
    # query tokens >= 40 nats below the best key for x within the centres' box, widened by its span
    if suppress is None:
        suppress = beta * (1.0 + 4.0 * span2) + 40.0
        if not math.isfinite(suppress):
            raise ValueError(
                f"beta={beta!r} is too large for these centres: the query token's default "
                "suppression beta (1 + 4 span^2) + 40 overflows float64"
            )
    return finite_real("suppress", suppress, minimum=0.0)


def _constant_tokens(
    v: np.ndarray, A: np.ndarray, b: np.ndarray, ref: np.ndarray | None, N: int, D: int, P: int
) -> np.ndarray:
    """The constant ``C`` ``(d', P + N P)`` of :func:`_build`'s sum-of-linear map: the query
    tokens' fixed fields (``-r``, one, flag, position), then key token ``(i, j)`` in column
    ``P + j N + i`` (``a_i``, ``b_i``, position ``j``, value ``v[i, j]``)."""
    k = v.shape[2]
    width, n_out = D + 2 + P + k, P + N * P
    X_, ONE, FLAG, POS, VAL = 0, D, D + 1, D + 2, D + 2 + P
    C = np.zeros((width, n_out))
    if ref is not None:
        C[X_ : X_ + D, :P] = -ref[:, None]
    C[ONE, :P] = 1.0
    C[FLAG, :P] = 1.0
    C[POS : POS + P, :P] = np.eye(P)
    for j in range(P):
        cols = P + j * N + np.arange(N)
        C[X_ : X_ + D, cols] = A.T
        C[ONE, cols] = b
        C[POS + j, cols] = 1.0
        C[VAL : VAL + k, cols] = v[:, j, :].T
    return C


def _head_weights(
    beta: float, suppress: float, bonus: float, D: int, P: int, k: int
) -> dict[str, np.ndarray]:
    """``W_Q, W_K, W_V`` ``(s, d')`` and ``W_O`` ``(d', s)`` of :func:`_build`'s attention head,
    ``s = max(D + 2 + P, k)``: the scores and the copy of the value field its docstring gives."""
    width, s = D + 2 + P + k, max(D + 2 + P, k)
    FLAG, POS, VAL = D + 1, D + 2, D + 2 + P
    W_Q, W_K, W_V, W_O = (
        np.zeros((s, width)),
        np.zeros((s, width)),
        np.zeros((s, width)),
        np.zeros((width, s)),
    )
    for r in range(D + 1):  # x and one fields: score beta * (x^T x_t + one_t)
        W_Q[r, r], W_K[r, r] = beta, 1.0
    W_Q[D + 1, FLAG], W_K[D + 1, FLAG] = suppress, -1.0
    for j in range(P):
        W_Q[D + 2 + j, POS + j], W_K[D + 2 + j, POS + j] = bonus, 1.0
    for r in range(k):
        W_V[r, VAL + r], W_O[VAL + r, r] = 1.0, 1.0
    return {"W_Q": W_Q, "W_K": W_K, "W_V": W_V, "W_O": W_O}


def _build(
    f: Callable,
    centres: ArrayLike,
    beta: float,
    *,
    token_dim: int | None,
    n_positions: int | None,
    bonus: float,
    suppress: float | None,
    chunk: int,
) -> PartitionLookup:
    """The token layout shared by both approximators (reconstructed by the book).

    Token fields (width ``d' = D + 2 + P + k``): ``[x (D) | one (1) | query flag (1) |
    position (P) | value (k)]``. Query token ``j``: ``(vec X - r, 1, 1, e_j, 0)``; key token
    ``(i, j)``: ``(a_i, b_i, 0, e_j, f(c_i)_j)`` with the Voronoi pieces of ``c_i - r``.
    ``W_Q z = (beta x, beta one, suppress flag, bonus pos)``, ``W_K z = (x, one, -flag, pos)``,
    so query ``j`` scores key ``(i, j')`` at ``beta (a_i^T (x - r) + b_i) + bonus [j = j']`` and
    every query token at ``beta (|x - r|^2 + 1) - suppress (+ bonus)``; ``W_O W_V`` copies the
    value field. ``r`` is the reference of far centres (module docstring), 0 otherwise: the
    constant ``C`` of the sum-of-linear map subtracts it.
    """
    beta = as_beta(beta)
    squeeze = n_positions is None
    P = 1 if squeeze else positive_int("n_positions", n_positions, maximum=4096)
    c, v = _centres_values(f, centres, None if squeeze else P)
    N, D = c.shape
    k = v.shape[2]
    bonus = finite_real("bonus", bonus, minimum=0.0, maximum=1e6)
    ref = far_reference(c)
    A, b = voronoi_affine(c if ref is None else c - ref)
    suppress = _suppression(beta, c, suppress)
    width = D + 2 + P + k
    VAL = D + 2 + P
    n_out = P + N * P
    s = max(D + 2 + P, k)
    _require_layer_size("the lookup layer", D, _token_width(D, token_dim), width, n_out, s, width)
    # Sum-of-linear map: term t copies token t of X into the x field of every query column.
    d, A_terms, B_terms = _query_copy(D, token_dim, width, n_out, P)
    C = _constant_tokens(v, A, b, ref, N, D, P)
    weights = _head_weights(beta, suppress, bonus, D, P, k)
    linear = SumOfLinear(A_terms, B_terms, C)
    attention = SelfAttention(width, head_dim=s, residual=False).set_weights(**weights)
    return PartitionLookup(
        linear,
        attention,
        token_dim=d,
        n_positions=P,
        value_slice=slice(VAL, VAL + k),
        squeeze=squeeze,
        chunk=chunk,
        centres=c,
        values=v[:, 0] if squeeze else v,
        A=A,
        b=b,
        beta=beta,
        bonus=bonus,
        suppress=suppress,
        reference=ref,
    )


def attention_approximator(
    f: Callable,
    centres: ArrayLike,
    beta: float,
    *,
    token_dim: int | None = None,
    suppress: float | None = None,
    chunk: int = 512,
) -> PartitionLookup:
    r"""LHSL's partition lookup: one attention layer after a sum-of-linear map that returns
    :math:`f` at the cell centre.

    The partition is the Voronoi partition of ``centres`` (:func:`lib.maxaffine.voronoi_affine`);
    key token :math:`i` carries :math:`(a_i, b_i)` and the value :math:`f(c_i)`; the query token
    carries :math:`(\mathrm{vec} X, 1)`, so the attention weights are :math:`\sigma(\beta y(x))`
    (:func:`lib.maxaffine.soft_indicator`) and the output is
    :math:`\sum_i \sigma(\beta y(x))_i f(c_i)`. At margin :math:`\Delta` it is within
    ``indicator_bound(beta, Δ, N) * max|f(c_i)|`` of :math:`f(c_{i_x})`, plus the query tokens'
    weight, below :math:`e^{-40}` inside the centres' box by the default ``suppress``.

    Args:
        f: maps float64 numpy points ``(N, D)`` to values ``(N, k)`` (or ``(N,)``: ``k = 1``).
        centres: ``(N, D)``, the cells' centres, ``N >= 1``.
        beta: inverse temperature (> 0, finite) multiplying the affine scores.
        token_dim: ``d``, the width of one input token; the point is the flattened sequence of
            ``D / d`` tokens (default ``D``: one token). The output does not depend on it; the
            sum-of-linear map does (one term per token).
        suppress: the constant score penalty of the query token itself (default: see
            ``_build``); chunk: points evaluated at once.

    Returns:
        A :class:`PartitionLookup` mapping points ``(batch, D)`` to ``(batch, k)`` (float64).

    Raises:
        ValueError: for empty or non-finite ``centres``, ``f`` not callable or returning the
            wrong shape, non-finite, complex or bool values, non-finite or non-positive ``beta``,
            a ``token_dim`` that does not divide ``D``, centres whose squared norms overflow, a
            layer of more than :data:`lib.layers.MAX_PARAMETERS` numbers (checked before
            allocating); at call time for points of the wrong width, non-finite points, or
            points so far from the centres that the query token's suppressed score would no
            longer be negligible, or whose float64 output departs from ``closed_form`` by more
            than :data:`ROUNDING_TOL` of the values' scale.

    Accuracy:
        The layer's pieces are :func:`lib.maxaffine.voronoi_affine`'s, to its accuracy.
        Centres far from the origin are handled by a reference the layer subtracts (module
        docstring; the ``reference`` attribute); points whose float64 output still departs
        from ``closed_form`` by more than :data:`ROUNDING_TOL` of the values' scale are
        refused, so every returned output is within that of the closed form, which has
        :func:`soft_lookup`'s accuracy (as :class:`PartitionLookup`).

    Source: LHSL (NeurIPS 2025), the L_∞ universality of single-head self-attention; the
    construction is reconstructed by the book (see the Sources and certainty page). Checks
    C15–C16, Chapter 5.
    """
    return _build(
        f,
        centres,
        beta,
        token_dim=token_dim,
        n_positions=None,
        bonus=0.0,
        suppress=suppress,
        chunk=chunk,
    )


def seq2seq_approximator(
    f: Callable,
    centres: ArrayLike,
    beta: float,
    n_positions: int,
    bonus: float = 50.0,
    *,
    token_dim: int | None = None,
    suppress: float | None = None,
    chunk: int = 512,
) -> PartitionLookup:
    r"""The sequence-to-sequence lookup: ``n_positions`` query tokens, one key block per output
    position.

    Key token :math:`(i, j)` carries :math:`(a_i, b_i)`, position :math:`e_j` and value
    :math:`f(c_i)_j`; query :math:`j` adds ``bonus`` :math:`M` to the keys of its own block, so
    block :math:`j` wins by :math:`M` and query :math:`j` returns :math:`f(\cdot)_j`
    (:math:`N P` keys in all). With ``bonus = 0`` every query sees all blocks equally and all
    positions return the same average: the failure case of check C17.

    Args:
        f: maps ``(N, D)`` to ``(N, n_positions, k)`` (or ``(N, n_positions)``).
        centres, beta, token_dim, suppress, chunk: as :func:`attention_approximator`.
        n_positions: output positions ``P >= 1``.
        bonus: the position bonus :math:`M \ge 0`.

    Returns:
        A :class:`PartitionLookup` mapping ``(batch, D)`` to ``(batch, n_positions, k)``.

    Raises:
        ValueError: as :func:`attention_approximator`, and for a negative or non-finite
            ``bonus`` or a non-positive ``n_positions``.

    Accuracy:
        As :func:`attention_approximator`, position by position: every returned output is
        within :data:`ROUNDING_TOL` times the largest :math:`|f(c_i)|` of ``closed_form``
        (others refused), whose blocks have :func:`soft_lookup`'s accuracy.

    Source: the sequence-to-sequence form of LHSL's self-attention theorem, reconstructed by the
    book (see the Sources and certainty page); check C17, Chapter 5.
    """
    return _build(
        f,
        centres,
        beta,
        token_dim=token_dim,
        n_positions=positive_int("n_positions", n_positions),
        bonus=bonus,
        suppress=suppress,
        chunk=chunk,
    )
