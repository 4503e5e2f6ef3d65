"""The history of a training run: one row per epoch, as both training loops write it, and what
the chapters read from it.

``epoch_row`` and ``history_frame`` give the rows and the DataFrame that
:func:`lib.training.fit` and :func:`lib.training.fit_stacked` return (the columns ``epoch``,
``loss``, ``train_acc``, ``val_acc``, ``lr``, ``seconds``, and ``running_acc`` with
``train_eval``); :func:`lib.training.epochs_to`, :func:`lib.training.accuracy_at` and
:func:`lib.training.epoch_seconds` read one.

Source: the book's own training loop for the experiments of Chapters 3 and 5 (not a paper's).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from .._validate import finite_real, positive_int, short_repr

__all__ = ["accuracy_at", "epoch_row", "epoch_seconds", "epochs_to", "history_frame"]


def epoch_row(
    epoch: int,
    loss_sum: float,
    correct: int,
    total: int,
    *,
    val: float,
    lr: float,
    seconds: float,
    train_acc: float | None = None,
) -> dict[str, Any]:
    """One epoch's row of a history: the mean loss ``loss_sum / total`` per counted position,
    the accuracy ``correct / total`` during the epoch (``train_acc``, or, when a ``train_acc``
    scored after the epoch is given, that score, and the one during the epoch as
    ``running_acc``), the validation score ``val`` (NaN without one), the rate ``lr`` and the
    cumulative wall time ``seconds``."""
    return {
        "epoch": epoch,
        "loss": loss_sum / total,
        "train_acc": correct / total if train_acc is None else train_acc,
        "val_acc": val,
        "lr": lr,
        "seconds": seconds,
        **({} if train_acc is None else {"running_acc": correct / total}),
    }


def history_frame(rows: list[dict[str, Any]], stopped: str | None) -> pd.DataFrame:
    """The rows of :func:`epoch_row` as a DataFrame, with the stop rule's reason (``None`` when
    the epoch cap ended the run) in ``attrs["stopped"]``."""
    history = pd.DataFrame(rows)
    history.attrs["stopped"] = stopped
    return history


def epochs_to(history: pd.DataFrame, level: float, column: str = "train_acc") -> int | None:
    """The first epoch of ``history`` (from :func:`fit`) whose ``column`` reaches ``level``, or
    None.

    Raises:
        ValueError: if ``history`` lacks ``epoch`` or ``column``, or ``level`` is not finite.
    """
    if not isinstance(history, pd.DataFrame) or not {"epoch", column} <= set(history.columns):
        raise ValueError(
            f"history must be a DataFrame from fit with 'epoch' and {column!r}, "
            f"got {short_repr(history)}"
        )
    level = finite_real("level", level)
    reached = history.loc[history[column] >= level, "epoch"]
    return int(reached.iloc[0]) if len(reached) else None


def _history(history: object, columns: set[str]) -> pd.DataFrame:
    """``history`` if it is a DataFrame from :func:`fit` with ``columns``, else a ValueError."""
    if (
        not isinstance(history, pd.DataFrame)
        or not columns <= set(history.columns)
        or history.empty
    ):
        raise ValueError(
            f"history must be a non-empty DataFrame from fit with {sorted(columns)}, "
            f"got {short_repr(history)}"
        )
    return history


def accuracy_at(history: pd.DataFrame, epoch: int, column: str = "train_acc") -> float | None:
    """The ``column`` of ``history`` (from :func:`fit`) at ``epoch``, as :func:`fit` recorded it
    for that epoch (the training accuracy scored in evaluation mode after the epoch when it ran
    with ``train_eval``, else measured during it), or None when the run ended before it.

    Args:
        history: one row per epoch, epochs numbered 1, 2, ... as :func:`fit` numbers them.
        epoch: the epoch, an integer >= 1.
        column: the accuracy to read (default the training accuracy).

    Returns:
        A Python float, or None for an epoch past the last row.

    Raises:
        ValueError: if ``history`` is not a non-empty DataFrame with ``epoch`` and ``column``,
            or ``epoch`` is not an integer >= 1.
    """
    history = _history(history, {"epoch", column})
    epoch = positive_int("epoch", epoch)
    return float(history[column].iloc[epoch - 1]) if epoch <= len(history) else None


def epoch_seconds(history: pd.DataFrame) -> float:
    """The median wall time of one epoch of ``history`` (from :func:`fit`), in seconds.

    ``seconds`` is cumulative, so an epoch's time is the difference from the previous row
    (the first epoch's is its own ``seconds``).

    Args:
        history: one row per epoch with the cumulative ``seconds`` of :func:`fit`.

    Returns:
        A float, seconds.

    Raises:
        ValueError: if ``history`` is not a non-empty DataFrame with ``seconds``.
    """
    seconds = _history(history, {"seconds"})["seconds"]
    return float(seconds.diff().fillna(seconds.iloc[0]).median())
