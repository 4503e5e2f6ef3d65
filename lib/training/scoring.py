"""The loss and the accuracy of the training loops, over the counted positions of a batch.

A model maps a batch of inputs to logits ``(..., C)``; the positions whose target is not
:data:`lib.training.IGNORE` are counted. ``counts`` gives a batch's summed cross-entropy,
correct and counted positions (each step of :func:`lib.training.fit` trains on the mean over the
counted positions); :func:`lib.training.evaluate` gives a model's accuracy over a list of
batches (the validation scores of :func:`lib.training.fit` and :func:`lib.training.fit_stacked`).

Source: the book's own training loop for the experiments of Chapters 3 and 5 (not a paper's).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

from .._validate import all_finite, short_repr
from .batches import IGNORE, as_batches
from .common import as_model

__all__ = ["counts", "evaluate"]


def counts(logits: torch.Tensor, targets: torch.Tensor) -> tuple[torch.Tensor, int, int]:
    """Summed cross-entropy, number correct and number counted over non-IGNORE positions.

    Raises:
        ValueError: for logits that are not floating-point ``(..., C)``, do not match the
            targets' shape, or are not finite, and for targets outside ``[0, C)`` that are not
            IGNORE.
    """
    if not isinstance(logits, torch.Tensor) or not logits.is_floating_point() or logits.ndim < 1:
        raise ValueError(
            f"the model must return floating-point logits (..., C), got {short_repr(logits)}"
        )
    if logits.shape[:-1] != targets.shape:
        raise ValueError(
            f"the model's logits {tuple(logits.shape)} do not match "
            f"targets {tuple(targets.shape)} plus a class axis"
        )
    if not all_finite(logits):
        raise ValueError(
            "the model's logits are not finite (NaN or inf); check its weights and inputs"
        )
    flat, tgt = logits.reshape(-1, logits.shape[-1]), targets.reshape(-1)
    counted = tgt != IGNORE
    real = tgt[counted]
    if bool((real < 0).any()) or bool((real >= flat.shape[-1]).any()):
        raise ValueError(
            f"targets must lie in [0, {flat.shape[-1]}) (the model's classes) or be IGNORE, "
            f"got values in [{int(real.min())}, {int(real.max())}]"
        )
    loss = nn.functional.cross_entropy(flat, tgt, ignore_index=IGNORE, reduction="sum")
    correct = int((flat.argmax(-1) == tgt)[counted].sum())
    return loss, correct, int(counted.sum())


@torch.no_grad()
def evaluate(model: nn.Module, batches: Sequence[tuple[torch.Tensor, torch.Tensor]]) -> float:
    """Accuracy of ``model`` over the counted (non-:data:`IGNORE`) positions of ``batches``.

    Args:
        model: maps ``inputs`` to logits ``(..., C)``.
        batches: ``(inputs, targets)`` pairs, e.g. from :func:`bucket_batches`.

    Returns:
        A float in ``[0, 1]``, correct positions over counted positions, pooled over batches.

    Raises:
        ValueError: for malformed batches or logits that do not match the targets.
    """
    model = as_model(model)
    batches = as_batches("batches", batches)
    was_training = model.training
    model.eval()
    correct = total = 0
    try:
        for inputs, targets in batches:
            _, c, n = counts(model(inputs), targets)
            correct, total = correct + c, total + n
    finally:
        model.train(was_training)
    return correct / total
