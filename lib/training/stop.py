"""The stop rule of the training loops: stop once the training accuracy has levelled off.

:class:`lib.training.StopRule` is the rule Chapter 3 trains K&S Section 5's experiment with at
paper scale (and Chapter 5 its noise grid); ``stop_reason`` is how :func:`lib.training.fit`
and :func:`lib.training.fit_stacked` apply a rule (or any callable) to a run's history after each
epoch, scoring the validation batches of the last epoch when the rule ends a run there.

Source: the book's own stopping rule (K&S train for 800 epochs; Chapter 3 states why the book
stops earlier).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import torch
from torch import nn

from .._validate import finite_real, positive_int
from .scoring import evaluate

__all__ = ["StopRule", "stop_reason"]


@dataclass(frozen=True)
class StopRule:
    """Stop training once the training accuracy has reached ``target`` and levelled off.

    Levelled off at epoch ``e`` means: the best training accuracy of the last ``window`` epochs
    beats the best of every epoch before them by less than ``min_gain``. The rule is checked only
    from the first epoch whose accuracy is at least ``target`` plus ``window`` epochs on, so a run
    that reaches ``target`` always trains ``window`` epochs more, and a run that never reaches it
    trains to the epoch cap of :func:`fit`. Calling the rule on a history returns the reason to
    stop (a sentence) or ``None``.

    Attributes:
        target: the accuracy to pass, in ``(0, 1]`` (Chapter 3: K&S's reported 0.9872).
        window: epochs compared (>= 1).
        min_gain: the smallest gain in best accuracy over ``window`` epochs that counts as
            progress, in ``[0, 1)``.

    Raises:
        ValueError: for a target outside ``(0, 1]``, a window below 1 or a gain outside
            ``[0, 1)``.

    Source: this book's stopping rule for K&S Section 5's experiment at paper scale (the paper
    trains for 800 epochs; Chapter 3 states why the book stops earlier).
    """

    target: float
    window: int = 10
    min_gain: float = 5e-4

    def __post_init__(self) -> None:
        finite_real("target", self.target, minimum=0.0, maximum=1.0, strict=True)
        positive_int("window", self.window)
        gain = finite_real("min_gain", self.min_gain, minimum=0.0, maximum=1.0)
        if gain >= 1.0:
            raise ValueError(f"min_gain must lie in [0, 1), got {self.min_gain!r}")

    def __call__(self, history: pd.DataFrame) -> str | None:
        acc = history["train_acc"].to_numpy()
        reached = np.flatnonzero(acc >= self.target)
        if not len(reached) or len(acc) < reached[0] + 1 + self.window:
            return None
        recent, before = acc[-self.window :].max(), acc[: -self.window].max()
        if recent - before < self.min_gain:
            return (
                f"passed {self.target:g} at epoch {reached[0] + 1} and gained "
                f"{max(recent - before, 0.0):.5f} < {self.min_gain:g} in its last "
                f"{self.window} epochs"
            )
        return None


def stop_reason(
    stop: Callable[[pd.DataFrame], str | None] | None,
    rows: list[dict[str, Any]],
    model: nn.Module,
    validation: Sequence[tuple[torch.Tensor, torch.Tensor]] | None,
) -> str | None:
    """``stop``'s verdict on the history ``rows`` of one run after an epoch: a reason to stop (a
    sentence) or ``None`` (also when there is no rule).

    When the rule ends the run at an epoch without a validation score, ``model`` is scored on
    the ``validation`` batches now and the score written into the last row, so that a stopped
    run always ends with one.
    """
    if stop is None:
        return None
    reason = stop(pd.DataFrame(rows))
    if reason is not None and validation is not None and np.isnan(rows[-1]["val_acc"]):
        rows[-1]["val_acc"] = evaluate(model, validation)
    return reason
