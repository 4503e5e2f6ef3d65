"""What the two training loops share: the checks of their common arguments and the epoch loop's
progress bar and validation schedule.

:func:`lib.training.fit` (one model) and :func:`lib.training.fit_stacked` (``K`` runs as one
stacked model) take the same schedule (``epochs``, ``lr``, ``final_lr``, ``eval_every``), the same
callbacks (``stop``, ``on_epoch``) and the same progress bar, checked and run by the functions
here; the other phases they share have modules of their own (:mod:`lib.training.batches`,
:mod:`lib.training.scoring`, :mod:`lib.training.optimizers`, :mod:`lib.training.stop`,
:mod:`lib.training.history`).

Source: the book's own training loop for the experiments of Chapters 3 and 5 (not a paper's).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

import pandas as pd
from torch import nn

from .. import runtime
from .._validate import finite_real, positive_int, short_repr

__all__ = ["as_callbacks", "as_model", "as_schedule", "close_bar", "epoch_bar", "validation_epoch"]

# The model type a training call is given; its callbacks receive the same model.
_Model = TypeVar("_Model", bound=nn.Module)


def as_model(model: _Model) -> _Model:
    """``model`` if it is a ``torch.nn.Module``, else a ValueError naming ``model``."""
    if not isinstance(model, nn.Module):
        raise ValueError(f"model must be a torch.nn.Module, got {short_repr(model)}")
    return model


def as_schedule(
    epochs: int, eval_every: int, lr: float, final_lr: float | None
) -> tuple[int, int, float, float | None]:
    """``epochs``, ``eval_every`` (positive ints), ``lr`` (> 0) and ``final_lr`` (``None`` or in
    ``(0, lr]``), validated as :func:`lib.training.fit` and :func:`lib.training.fit_stacked` take
    them.

    Raises:
        ValueError: naming the first argument that is out of range.
    """
    epochs = positive_int("epochs", epochs)
    eval_every = positive_int("eval_every", eval_every)
    lr = finite_real("lr", lr, minimum=0.0, strict=True)
    if final_lr is not None:
        final_lr = finite_real("final_lr", final_lr, minimum=0.0, strict=True)
        if final_lr > lr:
            raise ValueError(
                "final_lr must not exceed lr (the rate only falls), "
                f"got final_lr={final_lr} > lr={lr}"
            )
    return epochs, eval_every, lr, final_lr


def as_callbacks(
    stop: Callable[[pd.DataFrame], str | None] | None,
    on_epoch: Callable[..., object] | None,
) -> tuple[Callable[[pd.DataFrame], str | None] | None, Callable[..., object] | None]:
    """``stop`` and ``on_epoch``, each ``None`` or callable.

    Raises:
        ValueError: naming ``stop`` or ``on_epoch`` when it is neither.
    """
    if stop is not None and not callable(stop):
        raise ValueError(f"stop must be callable (e.g. a StopRule), got {short_repr(stop)}")
    if on_epoch is not None and not callable(on_epoch):
        raise ValueError(f"on_epoch must be callable, got {short_repr(on_epoch)}")
    return stop, on_epoch


def epoch_bar(done: int, epochs: int, desc: str | None, progress: bool) -> Iterable[int]:
    """The epochs ``done + 1, ..., epochs``, in a progress bar (:func:`lib.runtime.progress`,
    counting from ``done``) unless ``progress`` is false."""
    epochs_range = range(done + 1, epochs + 1)
    if not progress:
        return epochs_range
    return runtime.progress(epochs_range, desc=desc, total=epochs, initial=done)


def close_bar(bar: Any) -> None:
    """Close the bar of :func:`epoch_bar` (nothing to do for a plain range)."""
    if hasattr(bar, "close"):
        bar.close()


def validation_epoch(epoch: int, eval_every: int, epochs: int) -> bool:
    """Whether epoch ``epoch`` of ``epochs`` ends with a validation score (when there are
    validation batches): every ``eval_every`` epochs and after the last one."""
    return epoch % eval_every == 0 or epoch == epochs
