r"""The self-attention layers of both papers, the base of every attention head, and the parameter
budget every layer shares.

:class:`SelfAttention` (one head, dense or of rank-``r`` factors, softmax or hardmax) and
:class:`TiedSelfAttention` (the tied head of size 1 the reviewers describe) take tokens ``(..., n,
d)`` in float32 or float64 and return the same shape; :class:`SingleHead` holds what they share
with :class:`lib.cross_attention.CrossAttention` (weights, weight setting, input guards, the
attention core). The feed-forward layer is :class:`lib.feedforward.FeedForward`. Used from
Chapter 2 on (K&S Theorem 2, Corollary 1, Proposition 1; LHSL's lookups in Chapters 5 and 6);
the trainable models built from them are in :mod:`lib.models`.

K&S (ICLR 2024) use a self-attention layer with a residual connection and *no* :math:`1/\sqrt{s}`
factor — the inverse temperature (the scale of the scores) lives in the weights:

.. math:: F^{(SA)}(Z) = Z + W_O W_V Z\, \sigma[(W_K Z)^\top (W_Q Z)],

with tokens as the columns of :math:`Z \in \mathbb{R}^{d\times n}` and :math:`\sigma` the softmax
(or the hardmax) over the keys of each query. Here tokens are the *rows* of ``X`` of shape
``(..., n, d)``, as in torch, so the same layer reads
``X + softmax((X W_Q^T)(X W_K^T)^T, dim=-1) (X W_V^T) W_O^T``.

Every layer (these, :mod:`lib.cross_attention`'s and :mod:`lib.feedforward`'s) counts the
parameters its sizes ask for before allocating any and refuses more than :data:`MAX_PARAMETERS`
(``ValueError``, as for bad sizes, inputs and weights: see each class).
"""

from __future__ import annotations

import math
from typing import Self

import torch
from numpy.typing import ArrayLike
from torch import nn

from ._validate import (
    all_finite,
    as_float_array,
    finite_real,
    flag,
    float_dtype,
    one_of,
    positive_int,
    require_size,
    short_repr,
)

__all__ = [
    "SingleHead",
    "SelfAttention",
    "TiedSelfAttention",
    "NORMALIZERS",
    "MAX_PARAMETERS",
]

NORMALIZERS = ("softmax", "hardmax")
_NAMES = ("W_Q", "W_K", "W_V", "W_O")
#: Largest number of parameters (weights and biases) one layer or model of ``lib`` allocates
#: (2**27, 1 GiB in float64); the count is checked from the sizes before anything is built.
MAX_PARAMETERS = 2**27


def _require_parameter_count(what: str, count: int) -> None:
    require_size(
        f"{what}: the number of parameters", count, MAX_PARAMETERS, "lib.layers.MAX_PARAMETERS"
    )


def _real_tensor(
    name: str, value: ArrayLike | torch.Tensor, shape: tuple[int, ...]
) -> torch.Tensor:
    """``value`` as a float64 tensor of ``shape``; ValueError naming ``name`` otherwise (NaN/inf
    pass)."""
    m = torch.from_numpy(as_float_array(name, value, min_ndim=0, finite=False))
    if tuple(m.shape) != shape:
        raise ValueError(f"{name} must have shape {shape}, got {tuple(m.shape)}")
    return m


def _cast(name: str, m: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """``m`` (finite float64) cast to ``dtype``; ValueError naming ``name`` when an entry
    overflows to infinity or a non-zero entry underflows to 0 in the cast."""
    cast = m.to(dtype)
    if not torch.isfinite(cast).all() or bool(((cast == 0) & (m != 0)).any()):
        raise ValueError(f"{name} does not fit in {dtype} (overflow or underflow)")
    return cast


def _attention_weights(
    scores: torch.Tensor, mask: torch.Tensor | None, dtype: torch.dtype, normalizer: str
) -> torch.Tensor:
    """Each query's weights over the keys: softmax, or hardmax (ties share equally), of the
    ``scores`` ``(..., n_q, n_k)``, with masked keys (``mask`` ``(..., n_k)``) at weight 0;
    ValueError when the scores overflow ``dtype``."""
    if not all_finite(scores):
        raise ValueError(
            f"the attention scores overflow {dtype}; rescale the inputs or the weights"
        )
    if mask is not None:
        scores = scores.masked_fill(mask[..., None, :], float("-inf"))
    if normalizer == "softmax":
        return torch.softmax(scores, dim=-1)
    ties = scores == scores.amax(dim=-1, keepdim=True)
    return ties.to(dtype) / ties.sum(dim=-1, keepdim=True).to(dtype)


def _as_tokens(name: str, X: object, width: int, dtype: torch.dtype) -> torch.Tensor:
    """``X`` when it is a finite tensor of ``dtype`` and shape ``(..., n, width)``, ``n >= 1``;
    ValueError naming ``name`` otherwise."""
    if not isinstance(X, torch.Tensor):
        raise ValueError(
            f"{name} must be a torch tensor of shape (..., n, {width}), got {short_repr(X)}"
        )
    if X.dtype != dtype:
        raise ValueError(f"{name} must have the layer's dtype {dtype}, got {X.dtype}")
    if X.ndim < 2 or X.shape[-1] != width or X.shape[-2] == 0:
        raise ValueError(
            f"{name} must have shape (..., n, {width}) with n >= 1, got {tuple(X.shape)}"
        )
    if not all_finite(X):
        raise ValueError(f"{name} must be finite")
    return X


class SingleHead(nn.Module):
    """Base class of :class:`SelfAttention` and :class:`~lib.cross_attention.CrossAttention`:
    weights, weight setting, input guards, the attention core.

    Not used directly.

    Queries are tokens of width ``d_q``, keys and values tokens of width ``d_kv``, outputs of width
    ``d_out``: ``W_Q`` is ``(s, d_q)``, ``W_K`` and ``W_V`` ``(s, d_kv)``, ``W_O`` ``(d_out, s)``.

    Args:
        d_q, d_kv, d_out: query, context and output token widths (positive ints, checked by the
            subclasses).
        head_dim: head size ``s`` (positive int); rank: ``None`` or ``1 <= rank <=
            min(s, d_q, d_kv, d_out)``.
        normalizer: one of ``lib.layers.NORMALIZERS``; residual: a bool (needs ``d_out == d_q``).
        dtype: ``torch.float32`` or ``torch.float64``; seed: an int in ``[0, 2**63 - 1]``.

    Raises:
        ValueError: for a bad size, rank, normaliser, flag, dtype or seed, ``residual`` with
            ``d_out != d_q``, or more than :data:`MAX_PARAMETERS` parameters (checked before
            allocating); :meth:`set_weights` as it documents.

    Accuracy:
        The initialisation is deterministic: float64 normal draws of a seeded
        ``torch.Generator``, rounded once to ``dtype``. The attention computed by the subclasses
        meets the bound stated in :class:`SelfAttention` and
        :class:`~lib.cross_attention.CrossAttention`; :meth:`set_weights` rounds each float64
        matrix to ``dtype`` (see there).
    """

    # Registered in __init__: the dense matrices, or with ``rank`` set their factors ``_A @ _B``.
    W_Q: torch.Tensor
    W_K: torch.Tensor
    W_V: torch.Tensor
    W_O: torch.Tensor
    W_Q_A: torch.Tensor
    W_Q_B: torch.Tensor
    W_K_A: torch.Tensor
    W_K_B: torch.Tensor
    W_V_A: torch.Tensor
    W_V_B: torch.Tensor
    W_O_A: torch.Tensor
    W_O_B: torch.Tensor

    def __init__(
        self,
        d_q: int,
        d_kv: int,
        d_out: int,
        head_dim: int,
        rank: int | None,
        normalizer: str,
        residual: bool,
        dtype: torch.dtype,
        seed: int,
    ) -> None:
        super().__init__()
        self.d_q, self.d_kv, self.d_out = d_q, d_kv, d_out
        self.head_dim = positive_int("head_dim", head_dim)
        if rank is not None:
            rank = positive_int("rank", rank, maximum=min(self.head_dim, d_q, d_kv, d_out))
        self.rank = rank
        _require_parameter_count(
            f"{type(self).__name__}(d_q={d_q}, d_kv={d_kv}, d_out={d_out}, head_dim={head_dim}, "
            f"rank={rank})",
            self.parameter_count(d_q, d_kv, d_out, self.head_dim, rank),
        )
        one_of("normalizer", normalizer, NORMALIZERS)
        self.normalizer = normalizer
        residual = flag("residual", residual)
        if residual and d_out != d_q:
            raise ValueError(f"residual needs d_out == d_q, got d_out={d_out}, d_q={d_q}")
        self.residual = residual
        float_dtype("dtype", dtype)
        gen = torch.Generator().manual_seed(
            positive_int("seed", seed, minimum=0, maximum=2**63 - 1)
        )
        std = 1.0 / math.sqrt(d_q)
        for name in _NAMES:
            rows, cols = self._shape(name)
            if rank is None:
                shapes = {"": (rows, cols)}
            else:
                shapes = {"_A": (rows, rank), "_B": (rank, cols)}
            for suffix, shape in shapes.items():
                value = torch.randn(shape, generator=gen, dtype=torch.float64) * (
                    std if rank is None else math.sqrt(std)
                )
                self.register_parameter(name + suffix, nn.Parameter(value.to(dtype)))

    @staticmethod
    def parameter_count(d_q: int, d_kv: int, d_out: int, head_dim: int, rank: int | None) -> int:
        """Parameters of a head of these sizes: ``W_Q, W_K, W_V, W_O`` dense or as rank-``rank``
        factors."""
        shapes = [(head_dim, d_q), (head_dim, d_kv), (head_dim, d_kv), (d_out, head_dim)]
        return sum(r * c if rank is None else rank * (r + c) for r, c in shapes)

    def _shape(self, name: str) -> tuple[int, int]:
        return {
            "W_Q": (self.head_dim, self.d_q),
            "W_K": (self.head_dim, self.d_kv),
            "W_V": (self.head_dim, self.d_kv),
            "W_O": (self.d_out, self.head_dim),
        }[name]

    def _dense(self, name: str) -> torch.Tensor:
        if self.rank is None:
            return getattr(self, name)
        return getattr(self, name + "_A") @ getattr(self, name + "_B")

    def weights(self) -> dict[str, torch.Tensor]:
        """The dense matrices ``{"W_Q", "W_K", "W_V", "W_O"}`` (detached copies)."""
        return {name: self._dense(name).detach().clone() for name in _NAMES}

    @torch.no_grad()
    def set_weights(self, **matrices: ArrayLike | torch.Tensor) -> Self:
        """Set any of ``W_Q`` ``(head_dim, d_q)``, ``W_K``, ``W_V`` ``(head_dim, d_kv)`` and ``W_O``
        ``(d_out, head_dim)``.

        For :class:`SelfAttention` ``d_q = d_kv = d_out = d``. With ``rank`` set, each matrix is
        factorised by SVD into ``A @ B``; a matrix whose rank exceeds ``rank`` (singular value
        ``rank + 1`` above ``1e-12`` times the largest) is refused.

        Args:
            **matrices: any of ``W_Q, W_K, W_V, W_O``, each a real array-like or tensor of the
                shape above with finite entries (read as float64).

        Returns:
            ``self``, for chaining.

        Raises:
            ValueError: for an unknown name, a wrong shape, a non-real or non-finite matrix (also
                after the cast to the layer's dtype), or too high a rank. Nothing is changed
                unless every matrix is valid.

        Accuracy:
            Dense weights are the float64 values correctly rounded to the layer's dtype (exact in
            float64; relative error :math:`2^{-24}` in float32, but absolute error up to
            :math:`2^{-150}` for float32 entries below :math:`2^{-126}` in magnitude); an entry
            that overflows, or a non-zero one that rounds to 0, is refused. With ``rank`` set the
            stored product ``A @ B`` of the SVD factors matches each matrix only to about ``u``
            times its largest singular value in absolute terms, not entry by entry: ``[[1,
            1e-30], [3e-30, 2]]`` at ``rank=2`` stores ``-6e-30`` for ``1e-30``; a dropped
            singular value up to ``1e-12`` times the largest is lost silently.
        """
        dtype = self._dtype()
        staged = {}
        for name, value in matrices.items():
            if name not in _NAMES:
                raise ValueError(f"weight name must be one of {_NAMES}, got {name!r}")
            m = _real_tensor(name, value, self._shape(name))
            if not torch.isfinite(m).all():
                raise ValueError(f"{name} must be finite")
            if self.rank is None:
                parts = {"": m.to(dtype)}
            else:
                U, S, Vh = torch.linalg.svd(m, full_matrices=False)
                if S.numel() > self.rank and S[self.rank] > 1e-12 * max(S[0].item(), 1e-300):
                    raise ValueError(
                        f"{name} has rank above {self.rank} (singular values {S.tolist()})"
                    )
                root = S[: self.rank].sqrt()
                parts = {
                    "_A": (U[:, : self.rank] * root).to(dtype),
                    "_B": (root[:, None] * Vh[: self.rank]).to(dtype),
                }
            cast = parts[""] if self.rank is None else parts["_A"] @ parts["_B"]
            if not torch.isfinite(cast).all() or bool(((cast == 0) & (m != 0)).any()):
                raise ValueError(f"{name} does not fit in {dtype} (overflow or underflow)")
            staged[name] = parts
        for name, parts in staged.items():
            for suffix, value in parts.items():
                getattr(self, name + suffix).copy_(value)
        return self

    def _dtype(self) -> torch.dtype:
        return self.W_Q.dtype if self.rank is None else self.W_Q_A.dtype

    def _scores_values(
        self, Xq: torch.Tensor, Y: torch.Tensor, same: bool
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """The scores ``(Xq W_Q^T)(Y W_K^T)^T`` and the values ``Y W_V^T``, through the factors.

        With ``W = A B`` (inner size ``r``) the scores are ``(Xq B_Q^T)(A_Q^T A_K)(Y B_K^T)^T`` and
        the values ``(Y B_V^T) A_V^T``; when the queries are the keys' own tokens (``same``) the
        three projections are one product with the stacked ``B`` factors: ``O(n d r + n^2 r)``
        operations instead of ``O(n d s + n^2 s)``. For ``rank`` set the values are returned in
        the factor space, ``Y B_V^T`` ``(..., m, r)``.
        """
        if self.rank is None:
            return (Xq @ self.W_Q.T) @ (Y @ self.W_K.T).transpose(-1, -2), Y @ self.W_V.T
        if same:
            q, k, v = (Y @ torch.cat([self.W_Q_B, self.W_K_B, self.W_V_B]).T).split(
                self.rank, dim=-1
            )
        else:
            q = Xq @ self.W_Q_B.T
            k, v = (Y @ torch.cat([self.W_K_B, self.W_V_B]).T).split(self.rank, dim=-1)
        core = self.W_Q_A.T @ self.W_K_A  # (r, r)
        return (q @ core) @ k.transpose(-1, -2), v

    def _output_matrix(self) -> torch.Tensor:
        """``W_O W_V`` restricted to what multiplies the values of :meth:`_scores_values`."""
        if self.rank is None:
            return self.W_O
        return self.W_O_A @ (self.W_O_B @ self.W_V_A)  # (d_out, r)

    def _normalize(
        self, scores: torch.Tensor, mask: torch.Tensor | None, dtype: torch.dtype
    ) -> torch.Tensor:
        return _attention_weights(scores, mask, dtype, self.normalizer)

    def _attend(
        self, Xq: torch.Tensor, Y: torch.Tensor, mask: torch.Tensor | None, same: bool
    ) -> torch.Tensor:
        scores, values = self._scores_values(Xq, Y, same)
        out = (self._normalize(scores, mask, Y.dtype) @ values) @ self._output_matrix().T
        out = Xq + out if self.residual else out
        if not all_finite(out):
            raise ValueError(
                f"the layer's output overflows {Y.dtype}; rescale the inputs or the weights"
            )
        return out

    @staticmethod
    def _as_mask(mask: object, Y: torch.Tensor, name: str = "padding_mask") -> torch.Tensor | None:
        if mask is None:
            return None
        if (
            not isinstance(mask, torch.Tensor)
            or mask.dtype != torch.bool
            or tuple(mask.shape) != tuple(Y.shape[:-1])
        ):
            got = (
                short_repr(mask)
                if not isinstance(mask, torch.Tensor)
                else (mask.dtype, tuple(mask.shape))
            )
            raise ValueError(
                f"{name} must be a bool tensor of shape {tuple(Y.shape[:-1])}, got {got}"
            )
        if bool(mask.all(dim=-1).any()):
            raise ValueError(
                f"{name} masks every token of some sequence; each needs one real token"
            )
        return mask

    def _require_finite_weights(self) -> None:
        """ValueError naming the first weight with a NaN/inf entry (tested on the stored factors;
        a product of finite factors that overflows shows up as non-finite scores or outputs)."""
        for name, param in self.named_parameters(recurse=False):
            if not all_finite(param):
                raise ValueError(
                    f"{name.removesuffix('_A').removesuffix('_B')} is not finite (NaN or inf)"
                )

    def _as_tokens(self, name: str, X: object, width: int) -> torch.Tensor:
        return _as_tokens(name, X, width, self._dtype())


class SelfAttention(SingleHead):
    r"""One head of self-attention, optionally with rank-``r`` factorised weights.

    Args:
        d: token dimension.
        head_dim: head size ``s``; ``W_Q, W_K, W_V`` have shape ``(s, d)`` and ``W_O`` ``(d, s)``.
        rank: ``None`` for dense weights, or ``r`` (``1 <= r <= min(s, d)``): each matrix is
            then stored as a product ``A @ B`` of factors of inner size ``r`` and has rank at most
            ``r`` by construction.
        normalizer: ``"softmax"``, or ``"hardmax"``: each query averages the values of the keys
            that tie for its maximum score (K&S Theorem 1). Ties are exact equalities of the
            computed float scores: rounding can split a mathematical tie (use
            :func:`lib.exact.attention_mp` for exact ties).
        residual: add the input to the output (K&S's :math:`F^{(SA)}`); LHSL's layer has none.
        dtype: ``torch.float32`` or ``torch.float64`` (default).
        seed: seed of the random initialisation (normal, standard deviation ``1/sqrt(d)``).

    Input ``(..., n, d)``, output ``(..., n, d)``, same dtype. There is no ``1/sqrt(s)`` scaling.

    Raises:
        ValueError: for non-positive sizes, a rank above ``min(head_dim, d)``, an unknown
            normaliser or dtype, more than :data:`MAX_PARAMETERS` parameters (checked before
            allocating); in :meth:`forward` for input of the wrong shape, dtype or with
            NaN/inf, or when the scores or the output overflow the dtype; in
            :meth:`~SingleHead.set_weights` for a wrong shape, a non-real (complex, bool) or
            non-finite matrix (also after the cast to the layer's dtype) or a matrix of too high a
            rank.

    Accuracy:
        Not correctly rounded: with ``u`` the unit roundoff of ``dtype`` (:math:`2^{-53}` or
        :math:`2^{-24}`), :math:`q_l, k_k, v_k` the projections of the tokens by the stored weights
        (``weights()``) and :math:`a_{lk}` the exact weights, each output entry is within
        :math:`u\,(|x_{lj}| + (n+s+d+4 + 2(d+s+2)\,\bar s_l)\,(|W_O| \sum_k a_{lk}|v_k|)_j)`
        of the exact layer, :math:`\bar s_l = \max_k |q_l|^\top |k_k|` (the first term only when
        ``residual``; mpmath probes at token scales 1e-300..1e150 in float64, 1e-37..1e18 in
        float32, reached 0.9 of it). Hence relative accuracy is lost under cancellation and once
        the scores reach about :math:`1/u` (1e16, 1e7) without saturating the softmax; hardmax
        averages the keys whose *computed* scores tie, which may differ from the exact tie set
        by keys within that score error of the maximum. ``X`` must already be in ``dtype`` (no
        cast); scores or outputs that overflow are refused with ValueError, never returned.

    Source: K&S (ICLR 2024), the self-attention layer used by Theorems 1-2 (its form is recalled,
    following Yun et al. 2020; see the Sources and certainty page).
    Used in Chapters 2-5.
    """

    def __init__(
        self,
        d: int,
        head_dim: int = 1,
        rank: int | None = None,
        normalizer: str = "softmax",
        residual: bool = True,
        dtype: torch.dtype = torch.float64,
        seed: int = 0,
    ) -> None:
        d = positive_int("d", d)
        super().__init__(d, d, d, head_dim, rank, normalizer, residual, dtype, seed)
        self.d = d

    def attention(self, X: torch.Tensor, padding_mask: torch.Tensor | None = None) -> torch.Tensor:
        """The attention matrix ``(..., n, n)``: row ``l`` holds query ``l``'s weights over the
        keys.

        Args:
            X: tokens ``(..., n, d)`` in the layer's dtype.
            padding_mask: optional bool ``(..., n)``, ``True`` at padding positions (torch's
                ``key_padding_mask`` convention); padded keys get weight 0. Every row needs at
                least one real token.
        """
        X = self._as_tokens("X", X, self.d)
        mask = self._as_mask(padding_mask, X)
        self._require_finite_weights()
        return self._normalize(self._scores_values(X, X, True)[0], mask, X.dtype)

    def forward(
        self, X: torch.Tensor, padding_mask: torch.Tensor | None = None, rows: int | None = None
    ) -> torch.Tensor:
        """Apply the layer to ``X`` of shape ``(..., n, d)``; returns the same shape and dtype.

        ``padding_mask`` (bool ``(..., n)``, ``True`` at padding) removes padded tokens from
        every query's keys; the outputs at padded positions are computed but meaningless.
        ``rows`` (``1 <= rows <= n``) computes only the outputs of the first ``rows`` tokens,
        ``(..., rows, d)``, equal to ``forward(X)[..., :rows, :]`` at ``O(rows n)`` instead of
        ``O(n^2)`` cost: LHSL's lookup reads its answer at the query tokens only (Chapter 5).
        """
        X = self._as_tokens("X", X, self.d)
        mask = self._as_mask(padding_mask, X)
        self._require_finite_weights()
        if rows is None:
            return self._attend(X, X, mask, True)
        rows = positive_int("rows", rows, maximum=X.shape[-2])
        return self._attend(X[..., :rows, :], X, mask, False)

    def extra_repr(self) -> str:
        return (
            f"d={self.d}, head_dim={self.head_dim}, rank={self.rank}, "
            f"normalizer={self.normalizer!r}, residual={self.residual}"
        )


class TiedSelfAttention(nn.Module):
    r"""One head of size 1 whose query, key and value maps are one shared projection ``w``.

    ``W_Q = W_K = W_V = w^T`` (``(1, d)``) and ``W_O = u`` (``(d, 1)``), so with ``p = X w`` (each
    token's projection, ``(..., n)``) the layer computes

    .. math:: F(X)_l = x_l + u \sum_k \sigma_S[p_l\, p]_k\, p_k
              = x_l + u\, \mathrm{boltz}(p_l\, p) / p_l \quad (p_l \ne 0),

    the Boltzmann operator of K&S Theorem 2's proof with the scale left inside ``w``: Theorem 2's
    construction puts its inverse temperature :math:`\gamma` on ``W_Q`` alone; tied, the scale of
    the scores is :math:`|w|^2` times the tokens' scale. Residual, no ``1/sqrt(s)``, softmax.

    Args:
        d: token dimension.
        dtype: ``torch.float32`` or ``torch.float64`` (default).
        seed: seed of the initialisation: ``w`` and ``u`` normal, standard deviation
            ``1/sqrt(d)``.
        fixed_projection: ``None`` (``w`` is trained), or a real vector ``(d,)`` at which ``w`` is
            held: it is then a buffer, not a parameter, and only ``u`` is trained (the reviewers'
            question, Chapter 3).
        gamma: an inverse temperature on the scores, ``gamma (p_l p_k)`` (default 1, > 0): the
            layer is then the tied layer of projection ``sqrt(gamma) w`` with output vector
            ``u / sqrt(gamma)`` (the same function, :meth:`weights`), written so that a huge
            :math:`\gamma` from Theorem 2's construction leaves ``p`` and ``u`` of ordinary size.

    Input ``(..., n, d)``, output ``(..., n, d)``, same dtype. :meth:`weights` gives the four
    dense matrices.

    Raises:
        ValueError: for a non-positive ``d`` (or more than :data:`MAX_PARAMETERS` parameters), an
            unknown dtype, a ``fixed_projection`` that is not a finite real ``(d,)`` vector, is
            zero, or does not fit ``dtype`` (an entry overflowing, or a non-zero one underflowing
            to 0, in the cast), a ``gamma`` that is not finite and positive; in :meth:`forward`
            for input of the wrong shape, dtype or with NaN/inf, a mask as
            :class:`SelfAttention` refuses, or scores or outputs that overflow.

    Accuracy:
        :meth:`forward` meets :class:`SelfAttention`'s bound with ``s = 1``, :math:`v_k = p_k`,
        ``W_O = u`` and :math:`\bar s_l = \gamma \max_k (|x_l|^\top |w|)(|x_k|^\top |w|)` (mpmath
        probes: at most 0.8 of it). In float32 ``gamma`` is rounded to float32 inside the product:
        above :math:`3.4\cdot 10^{38}` it becomes inf and the scores are refused (ValueError),
        below :math:`2^{-126}` it keeps only an absolute precision of :math:`2^{-150}` (a score
        error of at most :math:`2^{-150} |p_l p_k|`). :meth:`weights` is exact to rounding (one
        product or quotient by :math:`\sqrt\gamma` in the layer's dtype); where an entry would
        overflow or underflow to 0 in it (float32 and ``gamma=1e-300``) it is refused.

    Source: the ICLR 2024 OpenReview reviews of K&S, which describe the experiment's model as one
    layer, one head of size 1, tied ``W_Q``, ``W_K``, ``W_V``; the tying written as
    ``W_Q = W_K = W_V = w^T`` is this book's reading (see the Sources page). Chapter 3.
    """

    w: torch.Tensor  # a parameter, or a buffer when the projection is fixed

    def __init__(
        self,
        d: int,
        dtype: torch.dtype = torch.float64,
        seed: int = 0,
        fixed_projection: ArrayLike | torch.Tensor | None = None,
        gamma: float = 1.0,
    ) -> None:
        super().__init__()
        self.d = positive_int("d", d)
        self.gamma = finite_real("gamma", gamma, minimum=0.0, strict=True)
        _require_parameter_count(f"TiedSelfAttention(d={self.d})", 2 * self.d)
        float_dtype("dtype", dtype)
        gen = torch.Generator().manual_seed(
            positive_int("seed", seed, minimum=0, maximum=2**63 - 1)
        )
        std = 1.0 / math.sqrt(self.d)
        w = torch.randn(self.d, generator=gen, dtype=torch.float64) * std
        u = torch.randn(self.d, 1, generator=gen, dtype=torch.float64) * std
        self.W_O = nn.Parameter(u.to(dtype))
        if fixed_projection is None:
            self.w = nn.Parameter(w.to(dtype))
        else:
            fixed = _real_tensor("fixed_projection", fixed_projection, (self.d,))
            if not torch.isfinite(fixed).all() or not bool((fixed != 0).any()):
                raise ValueError("fixed_projection must be a finite, non-zero vector")
            self.register_buffer("w", _cast("fixed_projection", fixed, dtype))
        self.fixed = fixed_projection is not None

    @staticmethod
    def parameter_count(d: int, fixed: bool = False) -> int:
        """Trainable parameters: ``d`` for ``W_O`` and, unless the projection is fixed, ``d`` for
        ``w``."""
        return d if flag("fixed", fixed) else 2 * d

    def weights(self) -> dict[str, torch.Tensor]:
        """The dense matrices ``{"W_Q", "W_K", "W_V"}`` (each ``w^T``, ``(1, d)``) and ``"W_O"``
        ``(d, 1)``, detached copies."""
        root = math.sqrt(self.gamma)
        row = self.w.detach().clone()[None, :] * root
        W_O = self.W_O.detach().clone() / root
        lost = (row == 0) & (self.w.detach()[None, :] != 0)
        if not (all_finite(row) and all_finite(W_O)) or bool(lost.any()):
            # sqrt(gamma) times w, or W_O over it, leaves the layer's dtype (float32 and a
            # gamma far from 1): the dense matrices cannot be written in it
            raise ValueError(
                f"the dense weights sqrt(gamma) w and W_O / sqrt(gamma) of this layer "
                f"(gamma={self.gamma:.3g}) overflow or underflow {row.dtype}; build the layer "
                f"in float64"
            )
        return {"W_Q": row, "W_K": row.clone(), "W_V": row.clone(), "W_O": W_O}

    def forward(self, X: torch.Tensor, padding_mask: torch.Tensor | None = None) -> torch.Tensor:
        """Apply the layer to ``X`` ``(..., n, d)``; ``padding_mask`` (bool ``(..., n)``, ``True``
        at padding) removes padded keys. Returns ``(..., n, d)`` in the layer's dtype."""
        X = _as_tokens("X", X, self.d, self.W_O.dtype)
        mask = SingleHead._as_mask(padding_mask, X)
        if not all_finite(self.W_O) or not all_finite(self.w):
            raise ValueError("w or W_O is not finite (NaN or inf)")
        p = X @ self.w  # (..., n)
        scores = p[..., :, None] * p[..., None, :]
        if self.gamma != 1.0:
            scores = scores * self.gamma
        attn = _attention_weights(scores, mask, X.dtype, "softmax")
        out = X + (attn @ p[..., None]) * self.W_O[:, 0]
        if not all_finite(out):
            raise ValueError(
                f"the layer's output overflows {X.dtype}; rescale the inputs or the weights"
            )
        return out

    def extra_repr(self) -> str:
        return f"d={self.d}, head_dim=1, tied, fixed_projection={self.fixed}, gamma={self.gamma:g}"
