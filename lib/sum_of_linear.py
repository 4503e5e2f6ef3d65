r"""LHSL's sum-of-linear map, and the token layout it writes for both lookup layers.

:class:`SumOfLinear` is the general affine map between sequences,
:math:`L(X) = \sum_k A_k X B_k + C` in the papers' column convention; with tokens in rows it maps
``(batch, n, d)`` to ``(batch, n', d')`` in float32 or float64 (``A`` ``(K, d', d)``, ``B``
``(K, n, n')``, ``C`` ``(d', n')``). LHSL's lookups put it before their one attention layer: it
copies the input sequence into the query tokens and appends the constant key tokens. The helpers
here size and write that layout for the self-attention lookup (:mod:`lib.lookup`) and the
cross-attention lookup (:mod:`lib.cross`): the token width, the copy terms, and the count of the
layer's numbers, checked against :data:`lib.layers.MAX_PARAMETERS` before anything is allocated.
Shapes that do not fit, non-finite, complex or bool entries, an unknown dtype or too many numbers
raise ``ValueError``.

Source: LHSL (NeurIPS 2025), the "sum-of-linear transformation" (the name quoted, the form and
the token layout reconstructed by the book; see the Sources and certainty page). Chapters 5 and 6.
"""

from __future__ import annotations

import numpy as np
import torch
from numpy.typing import ArrayLike
from torch import nn

from ._validate import (
    as_float_array,
    float_dtype,
    positive_int,
    real_array,
    require_size,
    short_repr,
)
from .layers import MAX_PARAMETERS

__all__ = ["SumOfLinear"]


class SumOfLinear(nn.Module):
    r"""LHSL's sum-of-linear map :math:`L(X) = \sum_k A_k X B_k + C` between sequences.

    In the papers' column convention :math:`X \in \mathbb R^{d\times n}`, :math:`A_k \in \mathbb
    R^{d'\times d}`, :math:`B_k \in \mathbb R^{n\times n'}`, :math:`C \in \mathbb R^{d'\times n'}`;
    it is the general affine map between the two matrix spaces: it mixes tokens (``B_k``),
    mixes features (``A_k``) and appends constant tokens (``C``). Here tokens are rows: input
    ``(batch, n, d)``, output ``(batch, n', d')`` :math:`= \sum_k B_k^\top X A_k^\top + C^\top`.

    Args:
        A: ``(K, d', d)``; B: ``(K, n, n')``; C: ``(d', n')`` — real, finite.
        dtype: ``torch.float64`` (default) or ``torch.float32``.

    The matrices are trainable parameters ``A``, ``B``, ``C``.

    Raises:
        ValueError: for shapes that do not fit together, non-finite, complex or bool entries, an
            unknown dtype, more than :data:`lib.layers.MAX_PARAMETERS` entries in ``A``, ``B``
            and ``C`` together (checked before any is copied); in :meth:`forward` for input that
            is not ``(batch, n, d)`` of the module's dtype or is not finite, or whose output
            overflows.

    Accuracy:
        ``A``, ``B``, ``C`` are the given float64 numbers rounded once to ``dtype`` (exact for
        float64). Each entry of :meth:`forward`'s output is within
        :math:`\gamma_{Knd+3}` times the same sum of absolute values,
        :math:`\sum_k |B_k|^\top |X| |A_k|^\top + |C|^\top`, of the exact value, :math:`u` the
        dtype's unit roundoff (:math:`2^{-53}`, :math:`2^{-24}` for float32; probed in both).

    Source: LHSL (NeurIPS 2025), the "sum-of-linear transformation" (the name quoted, the form
    reconstructed by the book; see the Sources and certainty page). Chapter 5.
    """

    # Registered in __init__.
    A: torch.Tensor
    B: torch.Tensor
    C: torch.Tensor

    def __init__(
        self, A: ArrayLike, B: ArrayLike, C: ArrayLike, dtype: torch.dtype = torch.float64
    ) -> None:
        super().__init__()
        float_dtype("dtype", dtype)
        A, B, C = real_array("A", A), real_array("B", B), real_array("C", C)
        require_size(
            "SumOfLinear: the number of parameters",
            A.size + B.size + C.size,
            MAX_PARAMETERS,
            "lib.layers.MAX_PARAMETERS",
        )
        A = as_float_array("A", A, min_ndim=3)
        B = as_float_array("B", B, min_ndim=3)
        C = as_float_array("C", C, min_ndim=2)
        if A.ndim != 3 or B.ndim != 3 or C.ndim != 2:
            raise ValueError(
                "A, B, C must be (K, d', d), (K, n, n'), (d', n'), "
                f"got {A.shape}, {B.shape}, {C.shape}"
            )
        if A.shape[0] != B.shape[0] or C.shape != (A.shape[1], B.shape[2]):
            raise ValueError(
                f"A {A.shape}, B {B.shape} and C {C.shape} "
                "must be (K, d', d), (K, n, n') and (d', n')"
            )
        for name, value in (("A", A), ("B", B), ("C", C)):
            cast = torch.from_numpy(value).to(dtype)
            if not bool(torch.isfinite(cast).all()):
                raise ValueError(f"{name} does not fit in {dtype} (overflow)")
            setattr(self, name, nn.Parameter(cast))

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        """Map ``X`` ``(batch, n, d)`` to ``(batch, n', d')``."""
        K, d_out, d = self.A.shape
        n = self.B.shape[1]
        if (
            not isinstance(X, torch.Tensor)
            or X.ndim != 3
            or tuple(X.shape[1:]) != (n, d)
            or X.dtype != self.A.dtype
        ):
            raise ValueError(
                f"X must be a {self.A.dtype} tensor (batch, {n}, {d}), got {short_repr(X)}"
            )
        if not bool(torch.isfinite(X).all()):
            raise ValueError("X must be finite")
        out = torch.einsum("knq,bnd,kpd->bqp", self.B, X, self.A) + self.C.T
        if not bool(torch.isfinite(out).all()):
            raise ValueError(
                f"the sum-of-linear output overflows {out.dtype}; rescale X or the matrices"
            )
        return out

    def extra_repr(self) -> str:
        K, d_out, d = self.A.shape
        return f"terms={K}, d={d}, n={self.B.shape[1]}, d'={d_out}, n'={self.B.shape[2]}"


def _token_width(D: int, token_dim: int | None) -> int:
    d = D if token_dim is None else positive_int("token_dim", token_dim)
    if D % d:
        raise ValueError(f"token_dim must divide the point dimension D = {D}, got {d}")
    return d


def _require_layer_size(
    what: str, D: int, d: int, width: int, n_out: int, head_dim: int, d_out: int
) -> None:
    """Count a lookup layer's numbers before allocating: copy terms, constant ``C`` and the four
    matrices."""
    n = D // d
    count = n * width * d + n * n * n_out + width * n_out + 3 * head_dim * width + d_out * head_dim
    require_size(
        f"{what}: the number of parameters", count, MAX_PARAMETERS, "lib.layers.MAX_PARAMETERS"
    )


def _query_copy(
    D: int, token_dim: int | None, width: int, n_out: int, n_queries: int
) -> tuple[int, np.ndarray, np.ndarray]:
    """The copy terms of the sum-of-linear map: term ``t`` writes token ``t`` of ``X`` into the
    ``x`` field.

    Returns ``(d, A_terms, B_terms)``: the token width, ``A`` ``(n, width, d)`` placing token ``t``
    at rows ``t d .. (t + 1) d`` of the first ``D``, and ``B`` ``(n, n, n_out)`` sending it to the
    first ``n_queries`` output columns (``n = D / d``).
    """
    d = _token_width(D, token_dim)
    n = D // d
    A_terms, B_terms = np.zeros((n, width, d)), np.zeros((n, n, n_out))
    for t in range(n):
        A_terms[t, t * d : (t + 1) * d, :] = np.eye(d)
        B_terms[t, t, :n_queries] = 1.0
    return d, A_terms, B_terms
