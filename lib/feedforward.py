r"""The feed-forward layer of both papers: one hidden ReLU layer applied to every token.

:class:`FeedForward` computes :math:`F^{(FF)}(z) = [z +]\; W_2\, \sigma_R(W_1 z + b_1) + b_2`
token by token, on inputs ``(..., d_in)`` in float32 or float64, optionally residual (K&S's
:math:`F^{(FF)}`). Its weights are set exactly (:meth:`FeedForward.set_weights`): so K&S
Corollary 1's interpolating layer (:mod:`lib.interpolation`, :mod:`lib.memorization`, Chapter 3)
and Proposition 1's quantizing and lookup layers (:mod:`lib.quantize`, :mod:`lib.approximation`,
Chapter 4) are built; the trainable models of :mod:`lib.models` put one after each attention
layer (Chapters 3 and 5).

Like every layer of :mod:`lib.layers`, it counts the parameters its sizes ask for before
allocating any and refuses more than :data:`lib.layers.MAX_PARAMETERS`; bad sizes, inputs and
weights raise ``ValueError`` (see the class).

Source: K&S (ICLR 2024), the residual feed-forward layer of their setting (recalled).
"""

from __future__ import annotations

import math

import torch
from numpy.typing import ArrayLike
from torch import nn

from ._validate import all_finite, flag, float_dtype, positive_int, short_repr
from .layers import _cast, _real_tensor, _require_parameter_count

__all__ = ["FeedForward"]


class FeedForward(nn.Module):
    r"""A one-hidden-layer ReLU network applied to every token, optionally residual.

    .. math:: F^{(FF)}(z) = [z +]\; W_2\, \sigma_R(W_1 z + b_1) + b_2

    Args:
        d_in: input dimension.
        width: hidden width ``q``.
        d_out: output dimension (default ``d_in``).
        residual: add the input (K&S's :math:`F^{(FF)}`); needs ``d_out == d_in``.
        dtype: ``torch.float32`` or ``torch.float64`` (default).
        seed: seed of the random initialisation.

    Shapes: ``W1 (width, d_in)``, ``b1 (width,)``, ``W2 (d_out, width)``, ``b2 (d_out,)``; input
    ``(..., d_in)``, output ``(..., d_out)``.

    Raises:
        ValueError: for non-positive sizes, a residual with ``d_out != d_in``, an unknown dtype,
            more than :data:`~lib.layers.MAX_PARAMETERS` parameters (checked before allocating);
            in :meth:`forward` for input of the wrong shape, dtype or with NaN/inf, or an
            overflowing output; in :meth:`set_weights` as
            :meth:`lib.layers.SingleHead.set_weights`.

    Accuracy:
        Not correctly rounded: with ``u`` the unit roundoff of ``dtype`` and
        :math:`h = \sigma_R(W_1 z + b_1)` exact, each output entry is within
        :math:`u\,(|z| + (q + 2)(|W_2| h + |b_2|) + (d_{in} + 2)\,|W_2|(|W_1||z| + |b_1|))` of the
        exact layer (the :math:`|z|` term only when ``residual``; mpmath probes at input scales
        1e-300..1e300 in float64 and 1e-36..1e36 in float32 reached at most 0.42 of it), so the
        relative error is unbounded under cancellation. A pre-activation that overflows to
        ``-inf`` gives the exact 0; any other overflow is refused (ValueError). :meth:`set_weights`
        rounds the float64 values to ``dtype`` as :meth:`lib.layers.SingleHead.set_weights` does
        for dense weights (float32 subnormals keep only absolute precision :math:`2^{-150}`).

    Source: K&S (ICLR 2024), the residual feed-forward layer of their setting (recalled). Used by
    :mod:`lib.memorization` and :mod:`lib.approximation` (Chapters 3-4).
    """

    _NAMES = ("W1", "b1", "W2", "b2")
    # Registered in __init__.
    W1: torch.Tensor
    b1: torch.Tensor
    W2: torch.Tensor
    b2: torch.Tensor

    def __init__(
        self,
        d_in: int,
        width: int,
        d_out: int | None = None,
        residual: bool = False,
        dtype: torch.dtype = torch.float64,
        seed: int = 0,
    ) -> None:
        super().__init__()
        self.d_in = positive_int("d_in", d_in)
        self.width = positive_int("width", width)
        self.d_out = self.d_in if d_out is None else positive_int("d_out", d_out)
        residual = flag("residual", residual)
        if residual and self.d_out != self.d_in:
            raise ValueError(
                f"a residual layer needs d_out == d_in, got {self.d_out} and {self.d_in}"
            )
        _require_parameter_count(
            f"FeedForward(d_in={self.d_in}, width={self.width}, d_out={self.d_out})",
            self.parameter_count(self.d_in, self.width, self.d_out),
        )
        self.residual = residual
        float_dtype("dtype", dtype)
        gen = torch.Generator().manual_seed(
            positive_int("seed", seed, minimum=0, maximum=2**63 - 1)
        )
        for name, shape in self._shapes().items():
            value = torch.randn(shape, generator=gen, dtype=torch.float64) / math.sqrt(shape[-1])
            self.register_parameter(name, nn.Parameter(value.to(dtype)))

    @staticmethod
    def parameter_count(d_in: int, width: int, d_out: int) -> int:
        """Parameters of a layer of these sizes: ``W1, b1, W2, b2``."""
        return width * d_in + width + d_out * width + d_out

    def _shapes(self) -> dict[str, tuple[int, ...]]:
        return {
            "W1": (self.width, self.d_in),
            "b1": (self.width,),
            "W2": (self.d_out, self.width),
            "b2": (self.d_out,),
        }

    def weights(self) -> dict[str, torch.Tensor]:
        """The parameters ``{"W1", "b1", "W2", "b2"}`` (detached copies)."""
        return {name: getattr(self, name).detach().clone() for name in self._NAMES}

    @torch.no_grad()
    def set_weights(self, **params: ArrayLike | torch.Tensor) -> FeedForward:
        """Set any of ``W1, b1, W2, b2`` (all-or-nothing, validated as in ``SelfAttention``).

        Raises:
            ValueError: for an unknown name, a wrong shape, a non-real or non-finite value, or
                one that does not fit the layer's dtype (an entry that overflows, or a non-zero
                entry that underflows to 0, in the cast). Nothing is changed unless every value
                is valid.
        """
        dtype = self.W1.dtype
        staged = {}
        for name, value in params.items():
            if name not in self._NAMES:
                raise ValueError(f"parameter name must be one of {self._NAMES}, got {name!r}")
            m = _real_tensor(name, value, self._shapes()[name])
            if not torch.isfinite(m).all():
                raise ValueError(f"{name} must be finite")
            staged[name] = _cast(name, m, dtype)
        for name, value in staged.items():
            getattr(self, name).copy_(value)
        return self

    def forward(self, Z: torch.Tensor) -> torch.Tensor:
        """Apply the layer to ``Z`` of shape ``(..., d_in)``; returns ``(..., d_out)``."""
        if not isinstance(Z, torch.Tensor):
            raise ValueError(
                f"Z must be a torch tensor of shape (..., {self.d_in}), got {short_repr(Z)}"
            )
        if Z.dtype != self.W1.dtype:
            raise ValueError(f"Z must have the layer's dtype {self.W1.dtype}, got {Z.dtype}")
        if Z.ndim < 1 or Z.shape[-1] != self.d_in:
            raise ValueError(f"Z must have shape (..., {self.d_in}), got {tuple(Z.shape)}")
        if not all_finite(Z):
            raise ValueError("Z must be finite")
        hidden = nn.functional.linear(Z, self.W1, self.b1).relu_()  # in place: one pass less
        out = nn.functional.linear(hidden, self.W2, self.b2)
        out = Z + out if self.residual else out
        if not all_finite(out):
            raise ValueError(f"the feed-forward output overflows {Z.dtype}")
        return out

    def extra_repr(self) -> str:
        return f"d_in={self.d_in}, width={self.width}, d_out={self.d_out}, residual={self.residual}"
