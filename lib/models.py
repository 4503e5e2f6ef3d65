r"""The small trainable models of Chapters 3 and 5, built from the layers of :mod:`lib.layers`,

* :class:`TokenTagger`: the rank-1 Transformer of K&S Section 5, a token classifier for CoNLL-2003
  (Chapter 3);
* :class:`PatchAttentionClassifier`: one single-head attention layer over image patches, for the
  noise experiment of LHSL Appendix B (Chapter 5).

Both count their parameters before allocating and refuse more than
:data:`lib.layers.MAX_PARAMETERS`.
"""

from __future__ import annotations

import math

import torch
from numpy.typing import ArrayLike
from torch import nn

from ._validate import all_finite, finite_real, flag, float_dtype, positive_int, short_repr
from .feedforward import FeedForward
from .layers import (
    SelfAttention,
    SingleHead,
    TiedSelfAttention,
    _require_parameter_count,
)

__all__ = ["TokenTagger", "PatchAttentionClassifier"]


def _require_tied_settings(
    tied: bool, rank: int | None, head_dim: int | None, fixed_projection: object
) -> None:
    """Refuse a tied tagger of another rank or head size, and a fixed projection without tying."""
    if tied and (rank != 1 or head_dim not in (None, 1)):
        raise ValueError(
            f"tied attention has head size 1 and rank 1, got rank={rank!r}, head_dim={head_dim!r}"
        )
    if fixed_projection is not None and not tied:
        raise ValueError("fixed_projection needs tied=True (it fixes the shared projection w)")


class TokenTagger(nn.Module):
    r"""A permutation-equivariant token classifier: embeddings, ``n_layers`` blocks, a linear head.

    Each block is :math:`F^{(FF)} \circ F^{(SA)}` as in K&S: one single-head
    :class:`~lib.layers.SelfAttention` (``W_Q, W_K, W_V, W_O`` of the given ``rank``, residual, no
    :math:`1/\sqrt{s}`) followed by a residual :class:`~lib.feedforward.FeedForward` of width
    ``ffn_width``. There is no positional encoding and no LayerNorm, so permuting a sentence
    permutes the output. Padding (word id ``pad_id``) is masked out of every query's keys; the loss
    (:func:`lib.training.fit`) ignores it too.

    Args:
        vocab_size: number of word ids (``len(vocab)`` of
            :func:`lib.datasets.conll2003.build_vocab`).
        n_tags: number of output classes.
        d: embedding and token width ``d``.
        n_layers: number of attention + feed-forward blocks.
        rank: rank of the attention matrices (default 1, K&S Section 5); ``None`` for dense.
        ffn_width: hidden width of each feed-forward layer (default ``4 * d``).
        head_dim: head size ``s`` (default ``d``).
        pad_id: the padding word id (default ``lib.datasets.conll2003.PAD = 0``).
        dtype: ``torch.float32`` (default) or ``torch.float64``.
        seed: seed of the initialisation (embeddings ``N(0, 1)``; layers as in their classes).
        sparse_embedding: build the embedding with ``sparse=True``, so that its gradient holds
            only the rows of a batch's words and :func:`lib.training.fit` updates only those rows
            (torch's ``SparseAdam``, or SGD's exact sparse step); default ``False`` (dense
            gradients).
        tied: ``True`` for the OpenReview reviewers' description of K&S's model: each block's
            attention is a :class:`~lib.layers.TiedSelfAttention` (head size 1,
            ``W_Q = W_K = W_V = w^T``); needs ``rank=1`` and ``head_dim`` ``None`` or 1. Default
            ``False`` (four separate factorised matrices, the book's own setting).
        fixed_projection: with ``tied``, a ``(d,)`` vector at which every block's ``w`` is held
            (not trained); default ``None``.

    Input: word ids, int64 ``(batch, n)``. Output: logits ``(batch, n, n_tags)`` in ``dtype``.

    Raises:
        ValueError: for non-positive sizes or a bad rank (as :class:`~lib.layers.SelfAttention`),
            a ``sparse_embedding`` or ``tied`` that is not a bool, ``tied`` with a rank other than
            1 or a head size other than 1, a ``fixed_projection`` without ``tied`` (or as
            :class:`~lib.layers.TiedSelfAttention` refuses it), more than
            :data:`~lib.layers.MAX_PARAMETERS` parameters in all (checked before
            allocating); in :meth:`forward` for ids that are not an int64 ``(batch, n)`` tensor, ids
            outside ``[0, vocab_size)``, or a row that is all padding.

    Accuracy:
        Not an approximation of a closed form: the initialisation is a deterministic function of
        ``seed`` (bitwise equal across constructions), the padding embedding is exactly 0, and
        :meth:`forward` is each block's layers in ``dtype``, every one within the bounds stated
        in :class:`~lib.layers.SelfAttention` (or :class:`~lib.layers.TiedSelfAttention`) and
        :class:`~lib.feedforward.FeedForward`; no end-to-end bound is claimed. An overflowing score
        or output in a block, or non-finite logits, are refused with ValueError.

    Source: K&S (ICLR 2024) Section 5, the rank-1 Transformer trained on CoNLL-2003; its sizes
    are unknown (the sources do not give them) and are the book's own. Used in Chapter 3.
    """

    def __init__(
        self,
        vocab_size: int,
        n_tags: int,
        d: int = 128,
        n_layers: int = 1,
        rank: int | None = 1,
        ffn_width: int | None = None,
        head_dim: int | None = None,
        pad_id: int = 0,
        dtype: torch.dtype = torch.float32,
        seed: int = 0,
        sparse_embedding: bool = False,
        tied: bool = False,
        fixed_projection: ArrayLike | torch.Tensor | None = None,
    ) -> None:
        super().__init__()
        sparse_embedding = flag("sparse_embedding", sparse_embedding)
        self.tied = flag("tied", tied)
        _require_tied_settings(self.tied, rank, head_dim, fixed_projection)
        self.vocab_size = positive_int("vocab_size", vocab_size, minimum=2)
        self.n_tags = positive_int("n_tags", n_tags, minimum=2)
        self.d = positive_int("d", d)
        self.n_layers = positive_int("n_layers", n_layers)
        if head_dim is None:
            head_dim = 1 if self.tied else self.d
        head_dim = positive_int("head_dim", head_dim)
        ffn_width = 4 * self.d if ffn_width is None else positive_int("ffn_width", ffn_width)
        self.pad_id = positive_int("pad_id", pad_id, minimum=0, maximum=self.vocab_size - 1)
        seed = positive_int("seed", seed, minimum=0, maximum=2**62)
        float_dtype("dtype", dtype)
        if rank is not None:
            rank = positive_int("rank", rank, maximum=min(head_dim, self.d))
        self._require_parameter_budget(rank, head_dim, ffn_width, fixed_projection is not None)
        gen = torch.Generator().manual_seed(seed)
        self.embed = self._embedding(gen, sparse_embedding, dtype)
        self.attn = self._attention_layers(head_dim, rank, dtype, seed, fixed_projection)
        self.ffn = nn.ModuleList(
            FeedForward(self.d, ffn_width, residual=True, dtype=dtype, seed=seed + 2 + 2 * i)
            for i in range(self.n_layers)
        )
        self.head = nn.Linear(self.d, self.n_tags, dtype=dtype)
        self._scale_branches_and_draw_head(gen, rank, dtype)
        self.rank = rank

    def _require_parameter_budget(
        self, rank: int | None, head_dim: int, ffn_width: int, fixed: bool
    ) -> None:
        """Refuse, before allocating, a tagger of more than ``MAX_PARAMETERS`` parameters."""
        d = self.d
        attn_count = (
            TiedSelfAttention.parameter_count(d, fixed)
            if self.tied
            else SingleHead.parameter_count(d, d, d, head_dim, rank)
        )
        block = attn_count + FeedForward.parameter_count(d, ffn_width, d)
        _require_parameter_count(
            f"TokenTagger(vocab_size={self.vocab_size}, d={d}, n_layers={self.n_layers})",
            self.vocab_size * d + self.n_layers * block + self.n_tags * d + self.n_tags,
        )

    def _embedding(
        self, gen: torch.Generator, sparse_embedding: bool, dtype: torch.dtype
    ) -> nn.Embedding:
        """The word embedding: ``N(0, 1)`` draws of ``gen`` (float64, then cast), padding row 0."""
        embed = nn.Embedding(
            self.vocab_size,
            self.d,
            padding_idx=self.pad_id,
            sparse=sparse_embedding,
            dtype=dtype,
        )
        with torch.no_grad():
            embed.weight.copy_(
                torch.randn(self.vocab_size, self.d, generator=gen, dtype=torch.float64)
            )
            embed.weight[self.pad_id] = 0
        return embed

    def _attention_layers(
        self,
        head_dim: int,
        rank: int | None,
        dtype: torch.dtype,
        seed: int,
        fixed_projection: ArrayLike | torch.Tensor | None,
    ) -> nn.ModuleList:
        """The blocks' attention layers, block ``i`` seeded ``seed + 1 + 2 i``."""
        return nn.ModuleList(
            TiedSelfAttention(
                self.d, dtype=dtype, seed=seed + 1 + 2 * i, fixed_projection=fixed_projection
            )
            if self.tied
            else SelfAttention(
                self.d, head_dim, rank=rank, residual=True, dtype=dtype, seed=seed + 1 + 2 * i
            )
            for i in range(self.n_layers)
        )

    @torch.no_grad()
    def _scale_branches_and_draw_head(
        self, gen: torch.Generator, rank: int | None, dtype: torch.dtype
    ) -> None:
        """Scale the residual branches' last matrices and draw the head from ``gen`` (bias 0)."""
        # GPT-2's scaling of the residual branches: their last matrices start 1/sqrt(2 L)
        # smaller, so the sum over L blocks starts with the spread of one block.
        scale = 1.0 / math.sqrt(2 * self.n_layers)
        for attn, ffn in zip(self.attn, self.ffn, strict=True):
            # attn and ffn come out of the ModuleLists typed as Module (attributes untyped)
            (attn.W_O if rank is None or self.tied else attn.W_O_A).mul_(scale)  # type: ignore[operator]
            ffn.W2.mul_(scale)  # type: ignore[operator]
        self.head.weight.copy_(
            torch.randn(self.n_tags, self.d, generator=gen, dtype=dtype) / math.sqrt(self.d)
        )
        self.head.bias.zero_()

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        """Logits ``(batch, n, n_tags)`` for word ids ``(batch, n)``; padding positions are
        masked."""
        if (
            not isinstance(ids, torch.Tensor)
            or ids.dtype != torch.int64
            or ids.ndim != 2
            or 0 in ids.shape
        ):
            got = (
                (ids.dtype, tuple(ids.shape)) if isinstance(ids, torch.Tensor) else short_repr(ids)
            )
            raise ValueError(f"ids must be a non-empty int64 tensor of shape (batch, n), got {got}")
        if bool((ids < 0).any()) or bool((ids >= self.vocab_size).any()):
            raise ValueError(
                f"ids must lie in [0, {self.vocab_size}), "
                f"got min {int(ids.min())}, max {int(ids.max())}"
            )
        mask = ids == self.pad_id
        Z = self.embed(ids)
        for attn, ffn in zip(self.attn, self.ffn, strict=True):
            Z = ffn(attn(Z, mask))
        logits = self.head(Z)
        if not all_finite(logits):
            raise ValueError(
                f"the logits overflow {logits.dtype} or are NaN; check the head's weights"
            )
        return logits

    def extra_repr(self) -> str:
        return (
            f"vocab_size={self.vocab_size}, n_tags={self.n_tags}, d={self.d}, "
            f"n_layers={self.n_layers}, rank={self.rank}" + (", tied" if self.tied else "")
        )


class PatchAttentionClassifier(nn.Module):
    r"""An image classifier whose only token mixing is one single-head softmax attention layer.

    Patch embedding (each ``patch x patch`` patch flattened and mapped linearly to ``d``,
    plus a learned position embedding), one :class:`~lib.layers.SelfAttention` (single head, dense,
    no residual: attention alone, as in LHSL), mean pooling over the patches and a linear head, or
    with ``head_width`` a ReLU feed-forward head (``d -> head_width -> n_classes``) that can
    memorise labels the linear head cannot fit.

    Args:
        image_size: side of the square input images (a multiple of ``patch``).
        patch: side of the square patches (``(image_size / patch)**2`` tokens).
        channels: colour channels (1 for MNIST/Fashion-MNIST, 3 for CIFAR-10).
        d: token width ``d``; head_dim: head size ``s`` (default ``d``).
        n_classes: output classes.
        head_width: ``None`` (default, a linear head) or the hidden width of a ReLU head.
        qk_init: factor on the initial ``W_Q`` and ``W_K`` (default 1:
            :class:`~lib.layers.SelfAttention`'s normal initialisation, standard deviation
            ``1/sqrt(d)``; between 1e-6 and 1e6). Chapter 5 starts them small so that their final
            norms measure what training put there.
        dtype: ``torch.float32`` (default) or ``torch.float64``.
        seed: seed of the initialisation (embeddings and head: normal with standard deviation
            ``1/sqrt(fan_in)``, biases and position embedding small; attention as in
            :class:`~lib.layers.SelfAttention`).

    Input: images ``(batch, H, W)`` or ``(batch, H, W, C)``, floating point in the model's dtype
    (the chapter scales pixels to ``[0, 1]``). Output: logits ``(batch, n_classes)``.
    :meth:`attention_norms` gives the spectral and Frobenius norms of ``W_K`` and ``W_Q``.

    Raises:
        ValueError: for non-positive sizes or ``qk_init``, ``image_size`` not a multiple of
            ``patch``, an unknown dtype, more than :data:`~lib.layers.MAX_PARAMETERS` parameters
            (checked before allocating); in :meth:`forward` for images of the wrong shape or dtype,
            or non-finite, and for logits that overflow or are NaN.

    Accuracy:
        Not an approximation of a closed form: the initialisation is a deterministic function of
        ``seed``, the patch extraction is an exact rearrangement, and the attention layer meets
        :class:`~lib.layers.SelfAttention`'s bound (its overflow refused); logits that overflow
        after the mean pooling and the head are refused too (float64, ``head_weight`` 1e300 and
        ``attn.W_O`` 1e10), as in :class:`TokenTagger`.

    Source: LHSL (NeurIPS 2025) Appendix B trains "a single-head attention" model whose
    architecture the paper does not give; this ViT-style one is the book's own (see the
    Sources and certainty page). Used in Chapter 5.
    """

    def __init__(
        self,
        image_size: int = 28,
        patch: int = 7,
        channels: int = 1,
        d: int = 64,
        head_dim: int | None = None,
        n_classes: int = 10,
        qk_init: float = 1.0,
        dtype: torch.dtype = torch.float32,
        seed: int = 0,
        head_width: int | None = None,
    ) -> None:
        super().__init__()
        self.image_size = positive_int("image_size", image_size)
        self.patch = positive_int("patch", patch, maximum=self.image_size)
        if self.image_size % self.patch:
            raise ValueError(
                "image_size must be a multiple of patch, "
                f"got image_size={image_size}, patch={patch}"
            )
        self.channels = positive_int("channels", channels)
        self.d = positive_int("d", d)
        self.n_classes = positive_int("n_classes", n_classes, minimum=2)
        head_dim = self.d if head_dim is None else positive_int("head_dim", head_dim)
        self.head_width = None if head_width is None else positive_int("head_width", head_width)
        seed = positive_int("seed", seed, minimum=0, maximum=2**62)
        width = self.d if self.head_width is None else self.head_width
        float_dtype("dtype", dtype)
        self.n_patches = (self.image_size // self.patch) ** 2
        fan_in = self.patch * self.patch * self.channels
        d = self.d
        _require_parameter_count(
            f"PatchAttentionClassifier(image_size={self.image_size}, patch={self.patch}, "
            f"channels={self.channels}, d={d}, head_width={self.head_width})",
            d * fan_in
            + d
            + self.n_patches * d
            + SingleHead.parameter_count(d, d, d, head_dim, None)
            + (0 if self.head_width is None else self.head_width * (d + 1))
            + self.n_classes * width
            + self.n_classes,
        )
        gen = torch.Generator().manual_seed(seed)

        def normal(*shape: int, std: float) -> nn.Parameter:
            return nn.Parameter(
                (torch.randn(shape, generator=gen, dtype=torch.float64) * std).to(dtype)
            )

        self.embed_weight = normal(self.d, fan_in, std=1 / math.sqrt(fan_in))
        self.embed_bias = nn.Parameter(torch.zeros(self.d, dtype=dtype))
        self.position = normal(self.n_patches, self.d, std=0.02)
        self.attn = SelfAttention(self.d, head_dim, residual=False, dtype=dtype, seed=seed + 1)
        qk_init = finite_real("qk_init", qk_init, minimum=1e-6, maximum=1e6)
        with torch.no_grad():
            self.attn.W_Q.mul_(qk_init)
            self.attn.W_K.mul_(qk_init)
        if self.head_width is not None:
            self.hidden_weight = normal(self.head_width, self.d, std=1 / math.sqrt(self.d))
            self.hidden_bias = nn.Parameter(torch.zeros(self.head_width, dtype=dtype))
        self.head_weight = normal(self.n_classes, width, std=1 / math.sqrt(width))
        self.head_bias = nn.Parameter(torch.zeros(self.n_classes, dtype=dtype))

    def patches(self, images: torch.Tensor) -> torch.Tensor:
        """``(batch, n_patches, patch*patch*channels)``: patches in row-major order, pixels
        row-major inside."""
        if not isinstance(images, torch.Tensor) or images.dtype != self.embed_weight.dtype:
            raise ValueError(
                f"images must be a {self.embed_weight.dtype} tensor, got {short_repr(images)}"
            )
        x = images[..., None] if images.ndim == 3 else images
        want = (self.image_size, self.image_size, self.channels)
        if x.ndim != 4 or tuple(x.shape[1:]) != want or x.shape[0] == 0:
            raise ValueError(
                f"images must have shape (batch, {self.image_size}, {self.image_size}"
                f"{'' if self.channels == 1 else f', {self.channels}'}), got {tuple(images.shape)}"
            )
        g, p = self.image_size // self.patch, self.patch
        x = x.reshape(len(x), g, p, g, p, self.channels).permute(0, 1, 3, 2, 4, 5)
        return x.reshape(len(x), g * g, p * p * self.channels)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        """Logits ``(batch, n_classes)`` for ``images`` ``(batch, H, W[, C])``."""
        x = self.patches(images)
        if not all_finite(x):
            raise ValueError("images must be finite")
        Z = nn.functional.linear(x, self.embed_weight, self.embed_bias) + self.position
        pooled = self.attn(Z).mean(dim=1)
        if self.head_width is not None:
            pooled = torch.relu(nn.functional.linear(pooled, self.hidden_weight, self.hidden_bias))
        logits = nn.functional.linear(pooled, self.head_weight, self.head_bias)
        if not all_finite(logits):
            raise ValueError(
                f"the logits overflow {logits.dtype} or are NaN; check the head's weights"
            )
        return logits

    @torch.no_grad()
    def attention_norms(self) -> dict[str, float]:
        """Norms of the attention layer's weights, as a dict of floats.

        Keys ``"w_k_spectral"``, ``"w_k_frobenius"``, ``"w_q_spectral"``, ``"w_q_frobenius"``
        (LHSL's Figure 2 says "ℓ2 norm" without saying which), and two controls:
        ``"qk_spectral"`` (the spectral norm of :math:`W_Q^\top W_K`, the bilinear form of the
        scores) and ``"w_v_frobenius"`` (a matrix the partition picture
        says nothing about). Spectral = largest singular value
        (``torch.linalg.matrix_norm(ord=2)``); Frobenius = square root of the sum of squares.
        """
        self.attn._require_finite_weights()
        w = {name: m.double() for name, m in self.attn.weights().items()}
        w["W_Q^T W_K"] = w["W_Q"].T @ w["W_K"]
        out = {
            f"{name.lower()}_{kind}": float(torch.linalg.matrix_norm(w[name], ord=order))
            for name in ("W_K", "W_Q")
            for kind, order in (("spectral", 2), ("frobenius", "fro"))
        }
        out["qk_spectral"] = float(torch.linalg.matrix_norm(w["W_Q^T W_K"], ord=2))
        out["w_v_frobenius"] = float(torch.linalg.matrix_norm(w["W_V"], ord="fro"))
        return out

    @torch.no_grad()
    def attention_entropy(self, images: torch.Tensor) -> float:
        """Mean entropy (nats) of the attention rows on ``images``: ``log(n_patches)`` for uniform
        attention, 0 for one-hot.

        A direct measure of how sharp the learned partition is, independent of how the scale is
        split between the embedding and ``W_Q``, ``W_K``.

        Raises:
            ValueError: as :meth:`forward`.
        """
        x = self.patches(images)
        if not all_finite(x):
            raise ValueError("images must be finite")
        P = self.attn.attention(
            nn.functional.linear(x, self.embed_weight, self.embed_bias) + self.position
        )
        return float(torch.special.entr(P.double()).sum(dim=-1).mean())

    def extra_repr(self) -> str:
        return (
            f"image_size={self.image_size}, patch={self.patch}, channels={self.channels}, "
            f"d={self.d}, n_classes={self.n_classes}"
            + ("" if self.head_width is None else f", head_width={self.head_width}")
        )
