r"""LHSL's cross-attention lookup: keys and values from a context sequence, the query from the
input (Chapter 6).

In the cross-attention form of Liu, Hu, Song & Liu (NeurIPS 2025; "LHSL") only the query comes
from the input; the keys and values are a context sequence of one token :math:`(a_i, b_i, v_i)`
per cell of a max-affine partition (:func:`context_tokens`). :class:`CrossLookup` is the query
map, the context and one :class:`lib.cross_attention.CrossAttention` head;
:func:`cross_attention_approximator` builds it for a target; :func:`context_length` measures the
context's length against the error, and for product targets on a grid :func:`product_lookup` and
:func:`product_context_length` factorise the lookup per coordinate; :func:`per_position_costs`
runs one layer per output position of a sequence target and counts what it stores.

The context's layout is the book's reconstruction (see the Sources and certainty page). Every
layer is compared with its closed form (:func:`lib.lookup.soft_lookup`) on every call and
refuses points where rounding breaks it, as :mod:`lib.lookup` describes.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import torch
from numpy.typing import ArrayLike
from torch import nn

from ._geometry import (
    CHUNK,
    CHUNK_ENTRIES,
    MAX_MATRIX_ENTRIES,
    as_beta,
    as_centres,
    as_values,
    far_reference,
)
from ._validate import MAX_WORK as _MAX_WORK
from ._validate import (
    as_float_array,
    blame,
    finite_real,
    function,
    positive_int,
    require_size,
    short_repr,
)
from .layers import MAX_PARAMETERS
from .lookup import _as_point_batch, _centres_values, _refuse_unfaithful, soft_lookup
from .maxaffine import MAX_CELLS, grid_centres, soft_indicator, voronoi_affine
from .sum_of_linear import SumOfLinear, _query_copy, _require_layer_size, _token_width

if TYPE_CHECKING:
    from .cross_attention import CrossAttention

__all__ = [
    "context_tokens",
    "CrossLookup",
    "cross_attention_approximator",
    "context_length",
    "product_lookup",
    "product_context_length",
    "per_position_costs",
    "MAX_WORK",
]

#: Largest work of one :func:`context_length` or :func:`product_context_length` sweep (points
#: times cells, summed over the grids tried): under a minute on one core.
MAX_WORK = _MAX_WORK


def context_tokens(
    centres: ArrayLike,
    values: ArrayLike,
    *,
    biases: ArrayLike | None = None,
    reference: ArrayLike | None = None,
) -> np.ndarray:
    r"""The context sequence of LHSL's cross-attention lookup: one token :math:`(a_i, b_i, v_i)` per
    cell.

    Args:
        centres: ``(N, D)``; the keys are the Voronoi pieces :math:`a_i = 2c_i`,
            :math:`b_i = -\|c_i\|^2` (:func:`lib.maxaffine.voronoi_affine`) unless ``biases`` is
            given.
        values: ``(N, k)`` or ``(N,)``, the value of each cell.
        biases: optional ``(N,)`` offsets :math:`b_i` to use instead of :math:`-\|c_i\|^2`
            (for instance 0, what a context computed *linearly* from the points can carry).
        reference: optional point ``(D,)``: the pieces are those of ``centres - reference``, for
            queries translated by the same point (:func:`cross_attention_approximator` does so
            for centres far from the origin, where the untranslated scores cancel).

    Returns:
        float64 ``(N, D + 1 + k)``.

    Raises:
        ValueError: for mismatched shapes or non-finite, complex or bool input, or centres whose
            squared norms overflow float64.

    Accuracy:
        Exact: the key fields are :func:`lib.maxaffine.voronoi_affine`'s pieces of ``centres``
        (of ``centres - reference``, each difference rounded once, within :math:`u` relative),
        to that function's accuracy; ``biases`` and ``values`` are copied unchanged.

    Source: the cross-attention form of LHSL's lookup, reconstructed by the book (see the Sources
    and certainty page). Chapter 6.
    """
    c = as_centres(centres)
    if reference is not None:
        r = as_float_array("reference", reference)
        if r.shape != (c.shape[1],):
            raise ValueError(f"reference must have shape ({c.shape[1]},), got {r.shape}")
        c = c - r
    A, b = voronoi_affine(c)
    if biases is not None:
        b = as_values("biases", biases, len(A))
        if b.ndim != 1:
            raise ValueError(f"biases must have shape ({len(A)},), got {b.shape}")
    v = as_values("values", values, len(A))
    return np.concatenate([A, b[:, None], v.reshape(len(A), -1)], axis=1)


class CrossLookup(nn.Module):
    r"""A query map, a context sequence and one :class:`lib.cross_attention.CrossAttention` head:
    LHSL's lookup as cross-attention.

    ``forward`` maps points ``(batch, D)`` to ``(batch, k)``: the query ``linear(X)`` (one token
    ``(vec X - reference, 1)``, the reference 0 unless the centres are far from the origin)
    attends to the constant ``context`` ``(N, D + 1 + k)``. Unpacks as
    ``linear, context, attention = cross_attention_approximator(...)``.

    Raises:
        ValueError: for parts of the wrong kind (``linear`` not a
            :class:`lib.sum_of_linear.SumOfLinear`, ``attention`` not a
            :class:`lib.cross_attention.CrossAttention`, ``context`` not a 2-D tensor of the
            layer's dtype), a non-positive ``token_dim`` or ``beta``, or centres, values or
            reference that are not finite real arrays; in :meth:`forward` as
            :func:`lib.lookup.attention_approximator`.

    Accuracy:
        :meth:`forward` returns an output only where it lies within
        :data:`lib.lookup.ROUNDING_TOL` times the largest :math:`|v_i|` of :meth:`closed_form`,
        and refuses the other points with ValueError. :meth:`closed_form` has
        :func:`lib.lookup.soft_lookup`'s accuracy for the construction's own context, and
        :func:`lib.maxaffine.soft_indicator`'s (followed by one product with the values) for
        another.

    Source: LHSL (NeurIPS 2025), the cross-attention universality theorem (the construction is
    reconstructed by the book; see the Sources and certainty page). Chapter 6.
    """

    context: torch.Tensor  # a buffer, registered in __init__

    def __init__(
        self,
        linear: SumOfLinear,
        context: torch.Tensor,
        attention: CrossAttention,
        *,
        token_dim: int,
        beta: float,
        centres: np.ndarray,
        values: np.ndarray,
        reference: np.ndarray | None = None,
    ) -> None:
        from .cross_attention import CrossAttention

        super().__init__()
        if not isinstance(linear, SumOfLinear) or not isinstance(attention, CrossAttention):
            raise ValueError(
                "linear and attention must be a SumOfLinear and a "
                f"lib.cross_attention.CrossAttention, got {short_repr(linear)} and "
                f"{short_repr(attention)}"
            )
        if (
            not isinstance(context, torch.Tensor)
            or context.ndim != 2
            or context.dtype != attention._dtype()
        ):
            raise ValueError(
                f"context must be a 2-D {attention._dtype()} tensor (N, d_kv), "
                f"got {short_repr(context)}"
            )
        self.linear, self.attention = linear, attention
        self.register_buffer("context", context)
        self.token_dim = positive_int("token_dim", token_dim)
        self.beta = finite_real("beta", beta, minimum=0.0, strict=True)
        self.centres, self.values = as_centres(centres), as_float_array("values", values)
        self.reference = None if reference is None else as_float_array("reference", reference)

    def __iter__(self) -> Iterator[Any]:
        return iter((self.linear, self.context, self.attention))

    @torch.no_grad()
    def forward(self, x: ArrayLike | torch.Tensor) -> torch.Tensor:
        """Evaluate at points ``x`` ``(batch, D)`` (torch or numpy); float64 ``(batch, k)``."""
        queries = self.linear.B.shape[1]
        x = _as_point_batch(x, queries * self.token_dim)
        # a block's (points, queries, N) scores stay within lib._geometry.CHUNK_ENTRIES
        rows = max(1, min(CHUNK, CHUNK_ENTRIES // max(1, queries * len(self.context))))
        parts = [
            self.attention(
                self.linear(x[i : i + rows].reshape(-1, queries, self.token_dim)), self.context
            )[:, 0]
            for i in range(0, len(x), rows)
        ]
        out = (
            torch.cat(parts) if parts else torch.empty(0, self.values.shape[1], dtype=torch.float64)
        )
        _refuse_unfaithful(x, out, self._closed(x), self.values)
        return out

    def closed_form(self, x: ArrayLike | torch.Tensor) -> torch.Tensor:
        r"""The construction's output at points ``x`` ``(batch, D)``, float64 torch ``(batch, k)``.

        For the construction's own context (the Voronoi pieces of ``centres``) computed from
        distances (:func:`lib.lookup.soft_lookup`); for another context, the softmax of its pieces
        :math:`\sigma(\beta (a_i^\top x + b_i))^\top V` computed relative to each point's top
        piece (:func:`lib.maxaffine.soft_indicator`). :meth:`forward` refuses points where the
        layer lies further than :data:`lib.lookup.ROUNDING_TOL` from it."""
        return self._closed(_as_point_batch(x, self.linear.B.shape[1] * self.token_dim))

    def _closed(self, x: torch.Tensor) -> torch.Tensor:
        D = self.centres.shape[1]
        ctx = self.context.numpy()
        A, b, V = ctx[:, :D], ctx[:, D], ctx[:, D + 1 :]
        cs = self.centres if self.reference is None else self.centres - self.reference
        voronoi = len(cs) == len(A) and all(
            np.array_equal(u, w) for u, w in zip(voronoi_affine(cs), (A, b), strict=True)
        )
        if voronoi:  # the construction's own context: from distances, exact wherever x lies
            out = soft_lookup(x.numpy(), self.centres, V, self.beta)
        else:  # another context (e.g. Chapter 6's linear one): the exact softmax of its pieces
            xs = x.numpy() if self.reference is None else x.numpy() - self.reference
            out = soft_indicator(xs, A, b, self.beta) @ V
        return torch.from_numpy(out).reshape(len(x), -1)


def cross_attention_approximator(
    f: Callable, centres: ArrayLike, beta: float, *, token_dim: int | None = None
) -> CrossLookup:
    r"""LHSL's partition lookup with the keys and values moved into a context sequence ``Y``.

    The sum-of-linear map puts one query token :math:`\beta`-free :math:`(\mathrm{vec}X, 1)`
    together (``(batch, 1, D + 1)``); the context holds :func:`context_tokens` of the Voronoi
    pieces of ``centres`` and the values ``f(c_i)``; ``W_Q = \beta I`` reads the query, ``W_K``
    the key fields :math:`(a_i, b_i)`, ``W_V`` and ``W_O`` the value field. The output
    :math:`\sum_i \sigma(\beta y(x))_i f(c_i)` is that of :func:`lib.lookup.attention_approximator`,
    without the query token to suppress: a query never attends to itself in cross-attention.

    Args:
        f, centres, beta, token_dim: as :func:`lib.lookup.attention_approximator`.

    Returns:
        A :class:`CrossLookup`; ``linear, context, attention = ...`` unpacks it.

    Raises:
        ValueError: as :func:`lib.lookup.attention_approximator`.

    Accuracy:
        Centres far from the origin are handled by a reference (module docstring): the query
        map subtracts it and the context carries the pieces of ``centres - reference``; points
        whose float64 output still departs from ``closed_form`` by more than
        :data:`lib.lookup.ROUNDING_TOL` of the values' scale are refused, so every returned
        output is within that of the closed form (:class:`CrossLookup`).

    Source: LHSL (NeurIPS 2025), single-head cross-attention is a universal approximator (the
    construction is reconstructed by the book; see the Sources and certainty page); check C18,
    Chapter 6.
    """
    from .cross_attention import CrossAttention

    beta = as_beta(beta)
    c, v = _centres_values(f, centres, None)
    v = v[:, 0]
    N, D = c.shape
    k = v.shape[1]
    s = max(D + 1, k)
    _require_layer_size("the cross-attention lookup", D, _token_width(D, token_dim), D + 1, 1, s, k)
    require_size(
        "the cross-attention lookup: the context's entries",
        N * (D + 1 + k),
        MAX_PARAMETERS,
        "lib.layers.MAX_PARAMETERS",
    )
    ref = far_reference(c)
    d, A_terms, B_terms = _query_copy(D, token_dim, D + 1, 1, 1)
    C = np.zeros((D + 1, 1))
    if ref is not None:
        C[:D, 0] = -ref
    C[D, 0] = 1.0
    W_Q, W_K = np.zeros((s, D + 1)), np.zeros((s, D + 1 + k))
    W_V, W_O = np.zeros((s, D + 1 + k)), np.zeros((k, s))
    for r in range(D + 1):
        W_Q[r, r], W_K[r, r] = beta, 1.0
    for r in range(k):
        W_V[r, D + 1 + r], W_O[r, r] = 1.0, 1.0
    attention = CrossAttention(D + 1, D + 1 + k, head_dim=s, d_out=k).set_weights(
        W_Q=W_Q, W_K=W_K, W_V=W_V, W_O=W_O
    )
    context = torch.from_numpy(context_tokens(c, v, reference=ref))
    return CrossLookup(
        SumOfLinear(A_terms, B_terms, C),
        context,
        attention,
        token_dim=d,
        beta=beta,
        centres=c,
        values=v,
        reference=ref,
    )


def context_length(
    f: Callable, dim: int, errors: ArrayLike, kappa: float, points: ArrayLike, *, m_max: int
) -> pd.DataFrame:
    r"""The shortest context (``N = m^dim`` key tokens) whose lookup reaches each target sup error.

    For ``m = 1, ..., m_max`` the sup error over ``points`` of the lookup with ``beta = kappa m^2``
    (:func:`lib.lookup.soft_lookup`, the layer's closed form) is measured; for each target in
    ``errors`` the smallest ``m`` that reaches it is reported (NaN when none up to ``m_max`` does).

    Args:
        f: maps ``(P, dim)`` to ``(P,)``; dim: input dimension; errors: target sup errors;
        kappa: > 0; points: test points ``(P, dim)``; m_max: largest grid tried.

    Returns:
        DataFrame with ``dim``, ``error`` (target), ``m``, ``N`` (= ``m**dim``) and ``sup`` (the
        sup error over ``points`` at that ``m``), one row per target; ``m``, ``N`` and ``sup`` are
        NaN when no grid up to ``m_max`` reaches the target.

    Raises:
        ValueError: as :func:`lib.experiments.tables.lookup_error_row`, or when the largest grid,
            ``m_max**dim`` cells, exceeds :data:`lib.maxaffine.MAX_CELLS`, or the work, the
            number of points times the cells of every grid tried, exceeds :data:`MAX_WORK`
            (under a minute; both checked before the first grid is built).

    Accuracy:
        Exact given the computed sups: ``m`` is the smallest grid whose computed sup error is at
        most the target. Each sup carries :func:`lib.lookup.soft_lookup`'s rounding (with
        ``N = m**dim``) and one subtraction's, so a target within that of a sup may be decided
        either way; the largest error over ``points`` is a lower bound on the sup over the cube.

    Source: the curse of dimensionality of LHSL's construction (the rate is inferred by the book;
    see the Sources and certainty page). Chapter 6.
    """
    x = as_float_array("points", points, min_ndim=2)
    dim = positive_int("dim", dim)
    if x.shape[1] != dim:
        raise ValueError(f"points must have shape (P, dim) = (P, {dim}), got {x.shape}")
    m_max = positive_int("m_max", m_max)
    require_size(
        f"context_length: the largest grid, m_max**dim = {m_max}**{dim} cells",
        m_max**dim if dim * m_max.bit_length() <= 64 else math.inf,
        MAX_CELLS,
        "lib.maxaffine.MAX_CELLS",
    )
    require_size(
        f"context_length: {len(x):,} points times the sum of m**{dim} cells for m = 1..{m_max}, "
        "the work",
        len(x) * sum(m**dim for m in range(1, m_max + 1)),
        MAX_WORK,
        "lib.cross.MAX_WORK",
    )
    function("f", f)
    kappa = finite_real("kappa", kappa, minimum=0.0, strict=True)
    errors = _errors(errors)
    target = as_float_array("f(points)", f(x))
    if target.shape != (len(x),):
        raise ValueError(f"f must map (P, {dim}) to (P,), got {target.shape}")
    sups = []
    for m in range(1, m_max + 1):
        c = grid_centres(m, dim)
        sups.append(
            float(
                np.abs(
                    soft_lookup(x, c, as_float_array("f(centres)", f(c)), _grid_beta(kappa, m))
                    - target
                ).max()
            )
        )
    return _shortest(np.array(sups), errors, dim)


def _shortest(sups: np.ndarray, errors: np.ndarray, dim: int) -> pd.DataFrame:
    """For each target error the smallest ``m`` (1-based index into ``sups``) whose sup reaches it,
    and that sup."""
    rows = []
    for e in errors:
        hit = np.flatnonzero(sups <= e)
        m = float(hit[0] + 1) if len(hit) else np.nan
        rows.append(
            {
                "dim": dim,
                "error": float(e),
                "m": m,
                "N": m**dim,
                "sup": float(sups[hit[0]]) if len(hit) else np.nan,
            }
        )
    return pd.DataFrame(rows)


def _errors(errors: Any) -> np.ndarray:
    errors = (
        as_float_array("errors", errors, min_ndim=0).reshape(-1)
        if not isinstance(errors, str)
        else None
    )
    if errors is None or (errors < 0).any():
        raise ValueError(f"errors must be finite target errors >= 0, got {short_repr(errors)}")
    return errors


def _grid_beta(kappa: float, m: int) -> float:
    r""":math:`\beta = \kappa m^2`, checked: ValueError naming ``kappa`` when it is not a positive
    finite real or the product overflows or underflows float64."""
    kappa = finite_real("kappa", kappa, minimum=0.0, strict=True)
    beta = kappa * m * m
    if not (math.isfinite(beta) and beta > 0):
        raise ValueError(
            f"kappa={kappa!r} gives beta = kappa m^2 = {beta!r} for m={m}: not finite "
            "and positive in float64"
        )
    return beta


def _factor_lookup(
    g: Callable, t: np.ndarray, m: int, kappa: float
) -> tuple[np.ndarray, np.ndarray]:
    """The 1-D lookup of ``g`` on the ``m``-grid of [0, 1] at ``beta = kappa m^2`` and ``g`` itself,
    at ``t`` ``(P,)``."""
    c = grid_centres(m, 1)
    values = as_float_array("g(centres)", g(c))
    target = as_float_array("g(points)", g(t[:, None]))
    if values.shape != (m,) or target.shape != t.shape:
        raise ValueError(f"g must map (P, 1) points to (P,), got {values.shape} for {m} points")
    return soft_lookup(t[:, None], c, values, _grid_beta(kappa, m)), target


def product_lookup(g: Callable, points: ArrayLike, m: int, kappa: float) -> np.ndarray:
    r"""The grid lookup of a product target :math:`f(x) = \prod_k g(x_k)`, from one-dimensional
    lookups.

    On the tensor grid of ``m**D`` cell centres of :math:`[0,1]^D`
    (:func:`lib.maxaffine.grid_centres`) with :math:`\beta = \kappa m^2`, the softmax weights are
    Gaussian in the distance (:func:`lib.lookup.nadaraya_watson`),
    :math:`e^{-\beta\|x - c\|^2} = \prod_k e^{-\beta (x_k - c_k)^2}`, and so is their normaliser;
    the stored values :math:`f(c) = \prod_k g(c_k)` factorise too. So :func:`lib.lookup.soft_lookup`
    of ``f`` equals the product over the coordinates of the 1-D lookup of ``g`` on ``m`` cells, at a
    cost of
    ``O(P D m)`` instead of ``O(P m**D)``.

    Args:
        g: the one-dimensional factor, mapping points ``(P, 1)`` to ``(P,)``.
        points: ``(P, D)`` in :math:`[0,1]^D`; m: cells per axis; kappa: > 0.

    Returns:
        float64 ``(P,)``.

    Raises:
        ValueError: for a non-callable ``g`` or one of the wrong shape, points not of shape
            ``(P, D)`` or not finite, ``m`` not a positive integer, ``kappa <= 0``, or a
            :math:`\beta = \kappa m^2` that is not finite and positive in float64.

    Accuracy:
        Each one-dimensional factor has :func:`lib.lookup.soft_lookup`'s accuracy (with
        ``N = m``, ``D = 1``); the product adds ``D - 1`` roundings. So the result is within
        about ``D`` times a factor's error of :func:`lib.lookup.soft_lookup` of :math:`f` on the
        ``m**D`` grid (the identity is exact in real arithmetic; observed within :math:`6u`
        relative for ``D = 3``, ``m <= 7``).

    Source: the book's reconstruction of LHSL's construction (Chapter 5); used by Chapter 6's
    context-length check B6.1.
    """
    function("g", g)
    x = as_float_array("points", points, min_ndim=2)
    if x.ndim != 2:
        raise ValueError(f"points must have shape (P, D), got {x.shape}")
    m = positive_int("m", m)
    kappa = finite_real("kappa", kappa, minimum=0.0, strict=True)
    out = np.ones(len(x))
    for k in range(x.shape[1]):
        out = out * _factor_lookup(g, x[:, k], m, kappa)[0]
    return out


def product_context_length(
    g: Callable, dim: int, errors: ArrayLike, kappa: float, *, m_max: int, resolution: int = 201
) -> pd.DataFrame:
    r"""As :func:`context_length` for :math:`f(x) = \prod_k g(x_k)`, with the error taken over a
    lattice.

    The error of the lookup (:func:`product_lookup`) is measured on the tensor lattice of
    ``resolution`` evenly spaced points per axis of :math:`[0,1]^D`, faces and corners included:
    ``resolution**dim`` points, the same spacing in every dimension, where a random sample of
    fixed size covers the cube more thinly as ``dim`` grows. The largest error on the lattice is a
    lower bound on the sup error, computed from ``resolution`` values of the 1-D lookup per axis.

    Args:
        g: the one-dimensional factor, mapping ``(P, 1)`` to ``(P,)``; dim: input dimension;
        errors: target sup errors (>= 0); kappa: > 0; m_max: largest grid tried;
        resolution: lattice points per axis (>= 2).

    Returns:
        DataFrame with ``dim``, ``error`` (target), ``m``, ``N`` (= ``m**dim``) and ``sup`` (the
        largest error on the lattice at that ``m``), one row per target; ``m``, ``N`` and ``sup``
        are NaN when no grid up to ``m_max`` reaches the target.

    Raises:
        ValueError: as :func:`product_lookup`, for bad ``errors``, when the lattice,
            ``resolution**dim`` points, exceeds ``lib.maxaffine.MAX_MATRIX_ENTRIES``, and when
            the work, ``m_max`` times the lattice plus the 1-D lookups' point-cell pairs, exceeds
            :data:`MAX_WORK` (under a minute; checked before the first grid).

    Accuracy:
        Exact given the computed sups, as :func:`context_length`: each lattice error carries
        :func:`product_lookup`'s rounding, so a target within that of a sup may be decided
        either way; the lattice's largest error is a lower bound on the sup over the cube.

    Source: the curse of dimensionality of the book's reconstruction of LHSL's construction
    (the rate is the book's). Chapter 6, check B6.1.
    """
    function("g", g)
    dim = positive_int("dim", dim)
    m_max = positive_int("m_max", m_max)
    require_size(
        f"product_context_length: the largest grid, m_max = {m_max} cells per axis",
        m_max,
        MAX_CELLS,
        "lib.maxaffine.MAX_CELLS",
    )
    resolution = positive_int("resolution", resolution, minimum=2)
    require_size(
        f"product_context_length: the lattice, resolution**dim = {resolution}**{dim} points",
        resolution**dim if dim * resolution.bit_length() <= 64 else math.inf,
        MAX_MATRIX_ENTRIES,
        "lib.maxaffine.MAX_MATRIX_ENTRIES",
    )
    require_size(
        f"product_context_length: m_max = {m_max} grids times the lattice of {resolution}**{dim} "
        f"points and the {resolution} x m cells of each 1-D lookup, the work",
        m_max * resolution**dim + resolution * m_max * (m_max + 1) // 2,
        MAX_WORK,
        "lib.cross.MAX_WORK",
    )
    kappa = finite_real("kappa", kappa, minimum=0.0, strict=True)
    errors = _errors(errors)
    t = np.linspace(0.0, 1.0, resolution)
    sups = []
    for m in range(1, m_max + 1):
        look, target = _factor_lookup(g, t, m, kappa)
        approx, exact = np.ones(1), np.ones(1)
        for _ in range(dim - 1):
            approx, exact = (
                np.multiply.outer(approx, look).ravel(),
                np.multiply.outer(exact, target).ravel(),
            )
        sups.append(
            float(np.abs(np.multiply.outer(look, approx) - np.multiply.outer(target, exact)).max())
        )
    return _shortest(np.array(sups), errors, dim)


def _grid_target(
    f: Callable, X: ArrayLike, m: int, kappa: float
) -> tuple[np.ndarray, float, np.ndarray, np.ndarray, np.ndarray]:
    """The checked inputs of a per-position lookup of ``f`` (:func:`per_position_costs`,
    :func:`lib.atlas.lhsl_costs`): the points ``X`` as float64 ``(P, n)``, the inverse
    temperature, the ``m**n`` grid centres, ``f`` at them and ``f(X)``; refuses a ``f`` that
    does not map points ``(P, n)`` to ``(P, n)``, naming it."""
    function("f", f)
    x = as_float_array("X", X, min_ndim=2)
    if x.ndim != 2:
        raise ValueError(f"X must be points (P, n), got shape {x.shape}")
    n = x.shape[1]
    m = positive_int("m", m)
    beta = _grid_beta(kappa, m)
    c = grid_centres(m, n)
    table = as_float_array("f(centres)", f(c.copy()))
    truth = as_float_array("f(X)", f(x.copy()))
    if table.shape != (len(c), n) or truth.shape != x.shape:
        raise ValueError(
            f"f must map points (P, n) = (P, {n}) to (P, {n}), got {table.shape} for "
            f"{c.shape} and {truth.shape} for X {x.shape}"
        )
    return x, beta, c, table, truth


def per_position_costs(f: Callable, X: ArrayLike, m: int, kappa: float) -> dict[str, float]:
    r"""LHSL's lookup of a sequence target run literally, one cross-attention layer per output
    position: its errors on sample points and what it stores.

    For a target ``f`` mapping points ``(P, n)`` (sequences of ``n`` scalar tokens, the whole
    input as one point) to one output per position, ``(P, n)``, output ``j`` is computed by its
    own :func:`cross_attention_approximator` over the ``m**n`` grid of :math:`[0,1]^n`
    (:func:`lib.maxaffine.grid_centres`) at :math:`\beta = \kappa m^2`, whose context holds
    the values :math:`f(c_i)_j`. The ``n`` layers are evaluated on ``X`` and compared with
    ``f(X)``.

    Args:
        f: the target, mapping float64 points ``(P, n)`` to ``(P, n)``.
        X: sample points ``(P, n)``, real and finite (in :math:`[0,1]^n` for the lookup to
            approximate ``f``; farther points are evaluated or refused as the layer does).
        m: cells per axis, ``m >= 1``; kappa: :math:`\kappa > 0`, finite.

    Returns:
        A dict with the keys ``tokens`` (context tokens of the ``n`` layers, ``n m**n``),
        ``numbers`` (the entries of their contexts), ``max |w|`` (the largest magnitude
        among the layers' parameters and contexts), ``L1`` (the mean over ``X`` of the
        summed absolute errors of the ``n`` outputs) and ``sup`` (the largest absolute
        error).

    Raises:
        ValueError: naming ``f`` (not callable, or ``f(centres)`` or ``f(X)`` not finite real
            of shape ``(·, n)``), ``X`` (not finite real points ``(P, n)``, or points where a
            layer refuses, :class:`CrossLookup`), ``m`` or ``kappa`` (out of range, a grid beyond
            :data:`lib.maxaffine.MAX_CELLS` cells, or :math:`\beta` not finite and positive
            in float64).

    Accuracy:
        The outputs are the layers' float64 outputs, each within :data:`lib.lookup.ROUNDING_TOL`
        of the largest :math:`|f(c_i)_j|` of the closed form :func:`lib.lookup.soft_lookup`
        (points beyond that are refused); ``L1`` and ``sup`` are float64 sample statistics of
        them (a mean and a maximum, not bounds on the sup over the cube); the counts are exact.

    Source: the book's reconstruction of LHSL's cross-attention construction (NeurIPS 2025),
    run on the epilogue's shared target against K&S's approximator.
    """
    x, beta, c, _, truth = _grid_target(f, X, m, kappa)
    n = x.shape[1]
    layers = [cross_attention_approximator(lambda p, j=j: f(p)[:, j], c, beta) for j in range(n)]
    with blame("X"):
        out = np.stack([layer(x).numpy()[:, 0] for layer in layers], 1)
    err = np.abs(out - truth)
    weights = [
        t.abs().max().item() for layer in layers for t in (*layer.parameters(), layer.context)
    ]
    return {
        "tokens": sum(len(layer.context) for layer in layers),
        "numbers": sum(layer.context.numel() for layer in layers),
        "max |w|": max(weights),
        "L1": float(err.sum(axis=1).mean()),
        "sup": float(err.max()),
    }
