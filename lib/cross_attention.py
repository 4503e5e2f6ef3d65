r"""LHSL's cross-attention layer: one head whose queries come from ``X`` and whose keys and
values come from a context ``Y``.

:class:`CrossAttention` maps queries ``X`` ``(..., n, d_q)`` and a context ``Y`` ``(..., m,
d_kv)``, float32 or float64, to ``softmax((X W_Q^T)(Y W_K^T)^T, dim=-1) (Y W_V^T) W_O^T``
``(..., n, d_out)``; in the papers' column convention

.. math:: \mathrm{CrossAttn}(X, Y) = [X +]\; W_O W_V Y\, \sigma[(W_K Y)^\top (W_Q X)].

It shares its weights, weight setting, input guards and attention core with
:class:`lib.layers.SelfAttention` through their base :class:`lib.layers.SingleHead`, and counts its
parameters against :data:`lib.layers.MAX_PARAMETERS` before allocating any. Bad sizes, inputs and
weights raise ``ValueError`` (see the class).

Source: LHSL (NeurIPS 2025), the cross-attention universality theorem (the form is reconstructed
by the book; see the Sources and certainty page). Used by :mod:`lib.cross` (Chapter 6) and in
Chapter 1.
"""

from __future__ import annotations

import torch

from ._validate import positive_int
from .layers import SingleHead

__all__ = ["CrossAttention"]


class CrossAttention(SingleHead):
    r"""One head of cross-attention: queries from ``X``, keys and values from a context ``Y``.

    .. math:: \mathrm{CrossAttn}(X, Y) = [X +]\; W_O W_V Y\, \sigma[(W_K Y)^\top (W_Q X)]

    in the papers' column convention; with tokens in rows, ``X`` ``(..., n, d_q)`` and ``Y``
    ``(..., m, d_kv)`` give ``softmax((X W_Q^T)(Y W_K^T)^T, dim=-1) (Y W_V^T) W_O^T`` of shape
    ``(..., n, d_out)``. No ``1/sqrt(s)`` scaling.

    Args:
        d_q: query token width; d_kv: context token width.
        head_dim: head size ``s``: ``W_Q`` is ``(s, d_q)``, ``W_K`` and ``W_V`` ``(s, d_kv)``,
            ``W_O`` ``(d_out, s)``.
        d_out: output width (default ``d_q``).
        rank: ``None`` (dense) or the rank of every factorised matrix, as in
            :class:`~lib.layers.SelfAttention`.
        normalizer: ``"softmax"`` or ``"hardmax"``.
        residual: add ``X`` to the output (needs ``d_out == d_q``; default ``False``, as in LHSL).
        dtype: ``torch.float32`` or ``torch.float64`` (default); seed: of the initialisation
            (normal, standard deviation ``1/sqrt(d_q)``).

    Raises:
        ValueError: for non-positive sizes, a bad rank, normaliser or dtype, ``residual`` with
            ``d_out != d_q``, more than :data:`~lib.layers.MAX_PARAMETERS` parameters (checked
            before allocating); in :meth:`forward` for ``X`` or ``Y`` of the wrong width, dtype
            or with NaN/inf, batch shapes that differ, or overflow; in
            :meth:`~lib.layers.SingleHead.set_weights` as :class:`~lib.layers.SelfAttention`.

    Accuracy:
        :class:`~lib.layers.SelfAttention`'s bound, with ``n`` replaced by the context length
        ``m`` and ``d`` by ``max(d_q, d_kv)`` (mpmath probes: at most 0.5 of it), the residual
        term only when ``residual``. ``X`` and ``Y`` must already be in ``dtype``; scores or
        outputs that overflow are refused with ValueError; weights are rounded as
        :meth:`~lib.layers.SingleHead.set_weights` states.

    Source: LHSL (NeurIPS 2025), the cross-attention universality theorem; the form
    ``W_V Y σ[(W_K Y)^T W_Q X]`` is reconstructed by the book (see the Sources and certainty
    page). Used in Chapter 6.
    """

    def __init__(
        self,
        d_q: int,
        d_kv: int,
        head_dim: int = 1,
        d_out: int | None = None,
        rank: int | None = None,
        normalizer: str = "softmax",
        residual: bool = False,
        dtype: torch.dtype = torch.float64,
        seed: int = 0,
    ) -> None:
        d_q, d_kv = positive_int("d_q", d_q), positive_int("d_kv", d_kv)
        d_out = d_q if d_out is None else positive_int("d_out", d_out)
        super().__init__(d_q, d_kv, d_out, head_dim, rank, normalizer, residual, dtype, seed)

    def attention(
        self, X: torch.Tensor, Y: torch.Tensor, padding_mask: torch.Tensor | None = None
    ) -> torch.Tensor:
        """The attention matrix ``(..., n, m)``: row ``l`` holds query ``l``'s weights over the
        context tokens.

        ``padding_mask`` (bool ``(..., m)``, ``True`` at padding) removes context tokens.
        """
        X, Y = self._as_pair(X, Y)
        mask = self._as_mask(padding_mask, Y)
        self._require_finite_weights()
        return self._normalize(self._scores_values(X, Y, False)[0], mask, Y.dtype)

    def forward(
        self, X: torch.Tensor, Y: torch.Tensor, padding_mask: torch.Tensor | None = None
    ) -> torch.Tensor:
        """Attend from ``X`` ``(..., n, d_q)`` to the context ``Y`` ``(..., m, d_kv)``; returns
        ``(..., n, d_out)``.

        The batch shapes of ``X`` and ``Y`` must be equal; a single context ``(m, d_kv)`` is
        shared by every batch entry of ``X``.
        """
        X, Y = self._as_pair(X, Y)
        mask = self._as_mask(padding_mask, Y)
        self._require_finite_weights()
        return self._attend(X, Y, mask, False)

    def _as_pair(self, X: object, Y: object) -> tuple[torch.Tensor, torch.Tensor]:
        X = self._as_tokens("X", X, self.d_q)
        Y = self._as_tokens("Y (the context)", Y, self.d_kv)
        if Y.ndim == 2 and X.ndim > 2:
            Y = Y.expand(*X.shape[:-2], *Y.shape)
        if X.shape[:-2] != Y.shape[:-2]:
            raise ValueError(
                f"X and Y must have the same batch shape, got {tuple(X.shape)} and {tuple(Y.shape)}"
            )
        return X, Y

    def extra_repr(self) -> str:
        return (
            f"d_q={self.d_q}, d_kv={self.d_kv}, d_out={self.d_out}, head_dim={self.head_dim}, "
            f"rank={self.rank}, normalizer={self.normalizer!r}, residual={self.residual}"
        )
