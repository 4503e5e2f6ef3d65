"""The optimisers of the training loops, their learning-rate schedule and gradient clipping.

``make_optimizers`` builds what :func:`lib.training.fit` steps: Adam (``fused=True``) for the
dense parameters and torch's SparseAdam for the weights of embeddings built with ``sparse=True``,
or one SGD; ``lr_schedules`` lets the rate fall from ``lr`` to ``final_lr`` over the epochs
(linear or half a cosine), for :func:`lib.training.fit` and :func:`lib.training.fit_stacked`
alike; ``clip_gradients`` is torch's gradient-norm clipping for gradients that may be sparse.

Source: the book's own training loop for the experiments of Chapters 3 and 5 (not a paper's;
K&S do not give their optimiser, see the Sources and certainty page).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

__all__ = ["OPTIMIZERS", "SCHEDULES", "clip_gradients", "lr_schedules", "make_optimizers"]

#: The optimisers :func:`lib.training.fit` offers.
OPTIMIZERS = ("adam", "sgd")

#: The shapes of the falling learning rate :func:`lib.training.fit` offers.
SCHEDULES = ("linear", "cosine")


def make_optimizers(
    model: nn.Module, lr: float, optimizer: str, momentum: float
) -> list[torch.optim.Optimizer]:
    """Adam for the dense parameters; torch's SparseAdam ("lazy" Adam: only the rows a batch
    touches are updated, their moments included) for the weights of embeddings built with
    ``sparse=True``. For ``"sgd"`` one SGD (no weight decay; heavy-ball ``momentum``) for all of
    them: without momentum, its step on a sparse gradient is exactly the dense step, since
    untouched rows have gradient zero.

    Raises:
        ValueError: for a model without trainable parameters.
    """
    sparse_ids = {id(m.weight) for m in model.modules() if isinstance(m, nn.Embedding) and m.sparse}
    params = [p for p in model.parameters() if p.requires_grad]
    if not params:
        raise ValueError("model has no trainable parameters")
    if optimizer == "sgd":
        return [torch.optim.SGD(params, lr=lr, momentum=momentum)]
    dense = [p for p in params if id(p) not in sparse_ids]
    sparse = [p for p in params if id(p) in sparse_ids]
    out = [torch.optim.Adam(dense, lr=lr, fused=True)] if dense else []
    return out + ([torch.optim.SparseAdam(sparse, lr=lr)] if sparse else [])


def lr_schedules(
    optimizers: Sequence[torch.optim.Optimizer],
    epochs: int,
    lr: float,
    final_lr: float | None,
    schedule: str,
) -> list[torch.optim.lr_scheduler.LRScheduler]:
    """One scheduler per optimiser that takes the rate from ``lr`` in the first of ``epochs``
    epochs to ``final_lr`` in the last, stepped once after each epoch: ``"linear"``
    (``torch.optim.lr_scheduler.LinearLR``) or ``"cosine"`` (half a cosine,
    ``CosineAnnealingLR`` with ``eta_min=final_lr``). No scheduler for a constant rate
    (``final_lr`` is ``None``) or a single epoch."""
    if final_lr is None or epochs == 1:
        return []
    return [
        torch.optim.lr_scheduler.LinearLR(
            opt, start_factor=1.0, end_factor=final_lr / lr, total_iters=epochs - 1
        )
        if schedule == "linear"
        else torch.optim.lr_scheduler.CosineAnnealingLR(opt, epochs - 1, eta_min=final_lr)
        for opt in optimizers
    ]


def clip_gradients(params: list[nn.Parameter], max_norm: float) -> None:
    """``torch.nn.utils.clip_grad_norm_`` (the same coefficient ``max_norm / (norm + 1e-6)``,
    capped at 1) for gradients that may be sparse, which torch's own refuses: a sparse
    gradient is coalesced first, so that its norm is that of the dense gradient it stands for."""
    grads = []
    for p in params:
        if p.grad is None:
            continue
        if p.grad.is_sparse:
            p.grad = p.grad.coalesce()
        grads.append(p.grad)
    if not grads:
        return
    # sum() of a non-empty list of tensors is a tensor (typeshed adds the start value's Literal[0])
    total = torch.sqrt(sum((g._values() if g.is_sparse else g).pow(2).sum() for g in grads))  # type: ignore[arg-type]
    coef = torch.clamp(max_norm / (total + 1e-6), max=1.0)
    for g in grads:
        (g._values() if g.is_sparse else g).mul_(coef)
