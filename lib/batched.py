r"""Independent training runs of one model shape, trained together as one stacked model.

``make full`` trains many small models that differ only in their seed, noise level or noise kind
(Chapter 5's noise grid) or in their seed (Chapter 3's CoNLL-2003 runs). Run one at a time, such a
model keeps the cores far below their peak rate: its matrix products are small. Here ``K`` runs
of one shape are trained as one model whose parameters carry a leading run axis ``K``: each
matrix product of the ``K`` runs is one ``torch.bmm`` over each run's flattened tokens, and one
``torch.optim.Adam`` (``fused=True``) updates all of them.

Why this is exactly ``K`` separate trainings (up to floating-point rounding):

* each run keeps its own initialisation (its model is built alone and its parameters copied in),
  its own data (labels, input noise) and its own batch order (one generator per run, seeded and
  drawn exactly as :func:`lib.training.fit` draws it);
* the loss is the **sum** of the runs' mean losses, so the gradient of run ``k``'s parameters is
  the gradient of run ``k``'s own loss (no other run's loss depends on them);
* Adam is elementwise and its step counter is shared by runs that step together, so its update of
  run ``k``'s slice is the update run ``k`` would get alone;
* a run that its stop rule ends leaves the batch: its parameters are written back to its model and
  its slice is cut out of the stacked parameters and of Adam's moments, so that the remaining runs
  go on exactly as before.

Stacked products rather than ``torch.func.vmap``: in a prototype on the book's 2-core CPU, one
training step of the noise model for 3, 9 and 14 runs through ``vmap(functional_call(...))``
gained less over the same steps one at a time than these stacked products did (``make bench``
measures the latter); ``vmap`` also cannot trace the layers' input guards (data-dependent
``bool``), which the stacked forwards leave out: their inputs are the validated batches of the
runs, and a non-finite loss is caught per run at the end of each epoch.
``tests/unit/test_batched.py`` checks in float64 that ``K`` stacked runs and the same runs one by
one give the same parameters, Adam moments and histories.

* :class:`StackedPatchAttention`: ``K`` :class:`lib.models.PatchAttentionClassifier` (Chapter 5);
* :class:`StackedTokenTagger`: ``K`` :class:`lib.models.TokenTagger` (Chapter 3);
* :func:`stack`: ``K`` models of one shape as one stacked model.

The loop that trains them is :func:`lib.training.fit_stacked` (:mod:`lib.training.stacked`),
which imports this module, never the reverse.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch import nn

from ._constants import IGNORE
from ._validate import short_repr
from .models import PatchAttentionClassifier, TokenTagger

__all__ = ["StackedModel", "StackedPatchAttention", "StackedTokenTagger", "stack"]


def _lin(Z: torch.Tensor, W: torch.Tensor, bias: torch.Tensor | None = None) -> torch.Tensor:
    """``Z W_k^T (+ b_k)`` for every run ``k``: ``Z`` ``(K, ..., c)``, ``W`` ``(K, r, c)``, ``bias``
    ``(K, r)``; one ``torch.bmm``/``baddbmm`` over the flattened tokens of each run (broadcasting
    ``W[:, None]`` over the batch would run one small product per sequence instead)."""
    K, c = Z.shape[0], Z.shape[-1]
    flat = Z.reshape(K, -1, c)
    out = torch.bmm(flat, W.mT) if bias is None else torch.baddbmm(bias[:, None], flat, W.mT)
    return out.reshape(*Z.shape[:-1], W.shape[1])


def _stacked(models: Sequence[nn.Module], name: str) -> nn.Parameter:
    """The parameter ``name`` (a dotted path) of every model, stacked along a new axis 0."""
    values = [m.get_parameter(name).detach() for m in models]
    return nn.Parameter(torch.stack(values).clone())


class StackedModel(nn.Module):
    """Base of the stacked models: the parameters of ``K`` models of one shape, as ``(K, ...)``.

    Not used directly (see :class:`StackedPatchAttention`, :class:`StackedTokenTagger`).

    Args:
        models: the ``K`` models; their current parameters are copied (stacked along axis 0).
        names: each stacked parameter's attribute name -> the dotted name of the parameter in one
            model (``"attn.W_Q"``).
        shape_of: a function of one model whose value every model must share (sizes, dtypes).

    Raises:
        ValueError: for an empty list, a model of the wrong type, or models of different shapes.
    """

    _TYPE: type[nn.Module] = nn.Module

    def __init__(
        self,
        models: Sequence[nn.Module],
        names: dict[str, str],
        shape_of: Callable[[nn.Module], object],
    ) -> None:
        super().__init__()
        if not isinstance(models, (list, tuple)) or not models:
            raise ValueError(
                f"models must be a non-empty list of {self._TYPE.__name__}, got "
                f"{short_repr(models)}"
            )
        for i, m in enumerate(models):
            if not isinstance(m, self._TYPE):
                raise ValueError(
                    f"models[{i}] must be a {self._TYPE.__name__}, got {short_repr(m)}"
                )
            if shape_of(m) != shape_of(models[0]):
                raise ValueError(
                    f"models must share one shape; models[{i}] is {shape_of(m)}, "
                    f"models[0] is {shape_of(models[0])}"
                )
        self.names = dict(names)
        for attr, name in self.names.items():
            self.register_parameter(attr, _stacked(models, name))

    @property
    def runs(self) -> int:
        """The number ``K`` of runs stacked."""
        return next(iter(self.parameters())).shape[0]

    @torch.no_grad()
    def write_back(self, models: Sequence[nn.Module], rows: Sequence[int] | None = None) -> None:
        """Copy run ``rows[i]``'s parameters into ``models[i]`` (``rows``: all runs, in order)."""
        rows = range(self.runs) if rows is None else rows
        if len(models) != len(rows):
            raise ValueError(f"need one model per run: {len(models)} models, {len(rows)} runs")
        for model, row in zip(models, rows, strict=True):
            for attr, name in self.names.items():
                model.get_parameter(name).copy_(getattr(self, attr)[row])

    @torch.no_grad()
    def adam_state(self, optimizer: torch.optim.Optimizer, row: int) -> dict:
        """Run ``row``'s Adam state, keyed by its model's parameter names: ``exp_avg`` and
        ``exp_avg_sq`` (copies of its slices) and ``step`` (a float)."""
        out = {}
        for attr, name in self.names.items():
            state = optimizer.state.get(getattr(self, attr), {})
            out[name] = {
                key: (float(v) if key == "step" else v[row].clone())
                for key, v in state.items()
                if isinstance(v, torch.Tensor)
            }
        return out

    @torch.no_grad()
    def keep(self, rows: list[int], optimizer: torch.optim.Optimizer) -> None:
        """Keep only the runs ``rows`` (indices into the current run axis), in the parameters and
        in ``optimizer``'s per-parameter state (Adam's moments; its step counters are shared)."""
        index = torch.as_tensor(rows, dtype=torch.long, device=next(self.parameters()).device)
        swap = {}
        for attr in self.names:
            old = getattr(self, attr)
            new = nn.Parameter(old.detach().index_select(0, index).clone())
            state = optimizer.state.pop(old, {})
            optimizer.state[new] = {
                key: value.index_select(0, index).clone()
                if isinstance(value, torch.Tensor) and value.ndim
                else value
                for key, value in state.items()
            }
            self.register_parameter(attr, new)
            swap[id(old)] = new
        for group in optimizer.param_groups:
            group["params"] = [swap.get(id(p), p) for p in group["params"]]

    def stack_batch(
        self, items: list[tuple[torch.Tensor, torch.Tensor]]
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """One ``(inputs, targets)`` batch per run into one batch with a leading run axis ``K``
        (a step of :func:`lib.training.fit_stacked`).

        Runs whose batches are smaller at this step (a smaller last batch) are filled up with
        zero inputs whose targets are :data:`lib.training.IGNORE`: each input is classified on
        its own, so the filling changes no counted output.
        """
        inputs, targets = [x for x, _ in items], [y for _, y in items]
        b = max(len(x) for x in inputs)
        if all(len(x) == b for x in inputs):
            return torch.stack(inputs), torch.stack(targets)
        x = inputs[0].new_zeros((len(inputs), b, *inputs[0].shape[1:]))
        y = targets[0].new_full((len(inputs), b, *targets[0].shape[1:]), IGNORE)
        for k, (xk, yk) in enumerate(zip(inputs, targets, strict=True)):
            x[k, : len(xk)], y[k, : len(yk)] = xk, yk
        return x, y


def _shape(*attrs: str) -> Callable[[nn.Module], tuple[Any, ...]]:
    """A ``shape_of`` for :class:`StackedModel`: the named size attributes of a model and the names,
    shapes and dtypes of its parameters (models that stack must agree on all of them)."""

    def shape_of(m: nn.Module) -> tuple[Any, ...]:
        sizes = tuple(getattr(m, a) for a in attrs)
        return sizes + tuple((n, tuple(p.shape), p.dtype) for n, p in m.named_parameters())

    return shape_of


_tagger_shape = _shape("vocab_size", "n_tags", "d", "n_layers", "rank", "pad_id")
_patch_shape = _shape("image_size", "patch", "channels", "d", "n_classes")


class StackedPatchAttention(StackedModel):
    r"""``K`` :class:`lib.models.PatchAttentionClassifier` of one shape as one model.

    The forward pass is the classifier's (patch embedding plus position embedding, one dense
    single-head softmax attention without residual or :math:`1/\sqrt{s}`, mean over the patches,
    linear head) with a leading run axis; ``W_O`` is applied after the mean over patches (the same
    linear map, fewer products).

    Args:
        models: the ``K`` classifiers (same sizes and dtype); their current parameters are copied.

    Input: images ``(K, batch, H, W)`` or ``(K, batch, H, W, C)``, one batch per run, in the models'
    dtype. Output: logits ``(K, batch, n_classes)``.

    Raises:
        ValueError: for an empty list, a model that is not a ``PatchAttentionClassifier``, models
            of different shapes, or a model with a ReLU head (``head_width``, not stacked here); in
            :meth:`forward` for images of the wrong shape or dtype.

    Source: the model of LHSL Appendix B's experiment as the book builds it (Chapter 5), batched
    for ``make full``.
    """

    _TYPE = PatchAttentionClassifier
    # Registered in __init__: each model's parameter with a leading run axis (K, ...).
    embed_weight: torch.Tensor
    embed_bias: torch.Tensor
    position: torch.Tensor
    W_Q: torch.Tensor
    W_K: torch.Tensor
    W_V: torch.Tensor
    W_O: torch.Tensor
    head_weight: torch.Tensor
    head_bias: torch.Tensor

    def __init__(self, models: Sequence[PatchAttentionClassifier]) -> None:
        names = {
            "embed_weight": "embed_weight",
            "embed_bias": "embed_bias",
            "position": "position",
            "W_Q": "attn.W_Q",
            "W_K": "attn.W_K",
            "W_V": "attn.W_V",
            "W_O": "attn.W_O",
            "head_weight": "head_weight",
            "head_bias": "head_bias",
        }
        for k, m in enumerate(models if isinstance(models, (list, tuple)) else []):
            if getattr(m, "head_width", None) is not None:
                raise ValueError(
                    f"models[{k}] has a ReLU head (head_width={m.head_width}), which is not "
                    "stacked here; train it with lib.training.fit"
                )
        super().__init__(models, names, _patch_shape)
        self.template = models[0]

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        """Logits ``(K, batch, n_classes)`` for images ``(K, batch, H, W[, C])``, run ``k``'s
        batch through run ``k``'s parameters."""
        t = self.template
        if not isinstance(images, torch.Tensor) or images.ndim < 4 or images.shape[0] != self.runs:
            raise ValueError(
                f"images must be a tensor (K={self.runs}, batch, H, W[, C]), got "
                f"{short_repr(images)}"
            )
        K, B = images.shape[:2]
        x = t.patches(images.reshape(K * B, *images.shape[2:]))
        x = x.reshape(K, B, *x.shape[1:])  # (K, B, n, f)
        Z = _lin(x, self.embed_weight, self.embed_bias) + self.position[:, None]
        q, k, v = _lin(Z, torch.cat([self.W_Q, self.W_K, self.W_V], dim=1)).split(
            self.W_Q.shape[1], dim=-1
        )
        P = torch.softmax(q @ k.mT, dim=-1)
        out = _lin((P @ v).mean(dim=2), self.W_O)  # (K, B, d)
        return _lin(out, self.head_weight, self.head_bias)


class StackedTokenTagger(StackedModel):
    r"""``K`` :class:`lib.models.TokenTagger` of one shape as one model.

    The forward pass is the tagger's (embedding, ``n_layers`` blocks of residual single-head
    attention with padding masked and a residual ReLU feed-forward layer, linear head), dense or
    through the rank-``r`` factors, with a leading run axis. Each run's embedding table is a slice
    of one ``(K, vocab, d)`` tensor, looked up with run ``k``'s ids offset by ``k * vocab``; padding
    positions are multiplied by 0, so the padding rows get no gradient (the tagger's
    ``padding_idx``). Runs whose batches differ in length are padded to the longest
    (:meth:`stack_inputs`): padding is masked from every key and ignored by the loss, so it changes
    no counted output.

    Args:
        models: the ``K`` taggers (same sizes, rank and dtype, ``sparse_embedding=False``).

    Input: word ids ``(K, batch, n)`` int64. Output: logits ``(K, batch, n, n_tags)``.

    Raises:
        ValueError: for an empty list, a model that is not a ``TokenTagger``, models of different
            shapes, or a tagger with a sparse embedding (not stacked here); in :meth:`forward`
            for ids of the wrong shape or outside ``[0, vocab_size)``.

    Source: the model of K&S Section 5's experiment as the book builds it (Chapter 3), batched
    for ``make full``.
    """

    _TYPE = TokenTagger
    # Registered in __init__ (with the layers' a{i}_W_*, f{i}_* read through getattr).
    embed: torch.Tensor
    head_weight: torch.Tensor
    head_bias: torch.Tensor
    template: TokenTagger

    def __init__(self, models: Sequence[TokenTagger]) -> None:
        if isinstance(models, (list, tuple)) and any(
            isinstance(m, TokenTagger) and m.embed.sparse for m in models
        ):
            raise ValueError("StackedTokenTagger stacks taggers with sparse_embedding=False only")
        t = models[0] if isinstance(models, (list, tuple)) and models else None
        names = {"embed": "embed.weight", "head_weight": "head.weight", "head_bias": "head.bias"}
        if isinstance(t, TokenTagger):
            suffixes = [""] if t.rank is None else ["_A", "_B"]
            for i in range(t.n_layers):
                for w in ("W_Q", "W_K", "W_V", "W_O"):
                    for s in suffixes:
                        names[f"a{i}_{w}{s}"] = f"attn.{i}.{w}{s}"
                for w in ("W1", "b1", "W2", "b2"):
                    names[f"f{i}_{w}"] = f"ffn.{i}.{w}"
        super().__init__(models, names, _tagger_shape)
        self.template = t  # type: ignore[assignment]  # a TokenTagger: super() refused all else

    def stack_inputs(
        self, inputs: list[torch.Tensor], targets: list[torch.Tensor]
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """One batch per run into ``(K, b, n_max)`` ids (padded with ``pad_id``) and targets
        (padded with :data:`lib.training.IGNORE`)."""
        b = max(len(x) for x in inputs)
        n = max(x.shape[1] for x in inputs)
        ids = inputs[0].new_full((len(inputs), b, n), self.template.pad_id)
        tgt = targets[0].new_full((len(inputs), b, n), IGNORE)
        for k, (x, y) in enumerate(zip(inputs, targets, strict=True)):
            ids[k, : len(x), : x.shape[1]] = x
            tgt[k, : len(y), : y.shape[1]] = y
        return ids, tgt

    def stack_batch(
        self, items: list[tuple[torch.Tensor, torch.Tensor]]
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """One ``(ids, targets)`` batch per run into ``(K, b, n_max)`` ids and targets, padded
        (:meth:`stack_inputs`)."""
        return self.stack_inputs([x for x, _ in items], [y for _, y in items])

    def _layer(self, i: int, Z: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        g = lambda name: getattr(self, f"a{i}_{name}")  # noqa: E731  (K, r, c)
        if self.template.rank is None:
            q, k, v = _lin(Z, torch.cat([g("W_Q"), g("W_K"), g("W_V")], dim=1)).split(
                g("W_Q").shape[1], dim=-1
            )
            scores, out_matrix = q @ k.mT, g("W_O")
        else:
            B = torch.cat([g("W_Q_B"), g("W_K_B"), g("W_V_B")], dim=1)
            q, k, v = _lin(Z, B).split(self.template.rank, dim=-1)
            core = g("W_Q_A").mT @ g("W_K_A")  # (K, r, r)
            scores = _lin(q, core.mT) @ k.mT
            out_matrix = g("W_O_A") @ (g("W_O_B") @ g("W_V_A"))
        scores = scores.masked_fill(mask[..., None, :], float("-inf"))
        # (rows that are all padding, added where the runs' batches differ in size, attend
        # uniformly instead: their outputs are never counted)
        Z = Z + _lin(torch.softmax(scores, dim=-1) @ v, out_matrix)
        f = lambda name: getattr(self, f"f{i}_{name}")  # noqa: E731
        hidden = _lin(Z, f("W1"), f("b1")).relu()
        return Z + _lin(hidden, f("W2"), f("b2"))

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        """Logits ``(K, batch, n, n_tags)`` for word ids ``(K, batch, n)``, run ``k``'s batch
        through run ``k``'s parameters; padding is masked from every key."""
        t = self.template
        if (
            not isinstance(ids, torch.Tensor)
            or ids.dtype != torch.int64
            or ids.ndim != 3
            or ids.shape[0] != self.runs
        ):
            raise ValueError(
                f"ids must be an int64 tensor (K={self.runs}, batch, n), got {short_repr(ids)}"
            )
        if bool((ids < 0).any()) or bool((ids >= t.vocab_size).any()):
            raise ValueError(f"ids must lie in [0, {t.vocab_size})")
        mask = ids == t.pad_id
        keys = mask & ~mask.all(dim=-1, keepdim=True)
        offset = torch.arange(self.runs, device=ids.device)[:, None, None] * t.vocab_size
        table = self.embed.reshape(-1, self.embed.shape[-1])
        Z = nn.functional.embedding(ids + offset, table) * (~mask)[..., None]
        for i in range(t.n_layers):
            Z = self._layer(i, Z, keys)
        return _lin(Z, self.head_weight, self.head_bias)


def stack(models: Sequence[nn.Module]) -> StackedModel:
    """The stacked model of ``models`` (:class:`StackedPatchAttention` or
    :class:`StackedTokenTagger`).

    Raises:
        ValueError: for an empty list or models of another type or of different shapes.
    """
    if not isinstance(models, (list, tuple)) or not models:
        raise ValueError(f"models must be a non-empty list of models, got {short_repr(models)}")
    for cls in (StackedPatchAttention, StackedTokenTagger):
        if isinstance(models[0], cls._TYPE):
            return cls(models)
    raise ValueError(
        "models must be PatchAttentionClassifier or TokenTagger instances, got "
        f"{short_repr(models[0])}"
    )
