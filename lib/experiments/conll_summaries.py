"""One CoNLL-2003 configuration's seeds summarised for Chapter 3's tables, figures and phrases
(K&S Section 5).

Each function takes a configuration's runs as a dict seed ->
:class:`lib.experiments.conll_runs.ConllRun` (:func:`lib.experiments.conll_runs.conll_run`):
:func:`first_epochs` (each seed's first epoch at an accuracy), :func:`epoch_times` (seconds per
epoch), :func:`run_minutes` (minutes of training), :func:`seed_frame` (one history column, seeds
side by side) and :func:`described_row` (a row of the described model's table); :func:`versus`
gives the case, and number, of the chapter's phrase table ``versus``. Bad arguments raise
``ValueError`` naming them. :mod:`lib.experiments.conll` re-exports every public name.

Source: the book's own summaries (Chapter 3), with the seed bands of :mod:`lib.seeds`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from .. import seeds, training
from .._validate import finite_real, short_repr
from .conll_runs import ConllRun

__all__ = [
    "versus",
    "first_epochs",
    "epoch_times",
    "run_minutes",
    "seed_frame",
    "described_row",
]


def versus(x: float, ref: float) -> tuple[str, float]:
    """Where ``x`` lies against ``ref``, as a case of Chapter 3's phrase table ``versus``:
    ``("above", x - ref)``, ``("below", ref - x)`` or ``("same", 0.0)``.

    Args:
        x, ref: finite real numbers (an accuracy and the ceiling or reported value it is
            compared with).

    Returns:
        The pair ``(side, by)``, ``side`` one of ``"above"``, ``"below"`` or ``"same"`` and ``by``
        the float ``|x - ref|``.

    Raises:
        ValueError: if ``x`` or ``ref`` is not a finite real number.
    """
    x, ref = finite_real("x", x), finite_real("ref", ref)
    side = "same" if x == ref else "above" if x > ref else "below"
    return side, abs(x - ref)


def _runs(runs: object) -> list[ConllRun]:
    """The runs of ``runs``, a non-empty dict seed ->
    :class:`~lib.experiments.conll_runs.ConllRun`, else a ValueError."""
    if (
        not isinstance(runs, Mapping)
        or not runs
        or not all(isinstance(r, ConllRun) for r in runs.values())
    ):
        raise ValueError(
            f"runs must be a non-empty dict of seed -> ConllRun, got {short_repr(runs)}"
        )
    return list(runs.values())


def first_epochs(runs: Mapping[int, ConllRun], level: float) -> list[int | None]:
    """Each seed's first epoch whose training accuracy reaches ``level`` (``None``: never).

    Args:
        runs: one configuration's seeds, seed -> :class:`~lib.experiments.conll_runs.ConllRun`
            (:func:`~lib.experiments.conll_runs.conll_run`).
        level: the accuracy, a finite real number.

    Returns:
        One int or ``None`` per seed, in the order of ``runs``.

    Raises:
        ValueError: if ``runs`` is not a non-empty dict of runs or ``level`` is not finite.
    """
    return [training.epochs_to(r.history, level) for r in _runs(runs)]


def epoch_times(runs: Mapping[int, ConllRun]) -> list[float]:
    """Each seed's median seconds per epoch (:func:`lib.training.epoch_seconds`).

    Args:
        runs: one configuration's seeds, as :func:`first_epochs`.

    Returns:
        One float per seed, seconds.

    Raises:
        ValueError: as :func:`first_epochs`.
    """
    return [training.epoch_seconds(r.history) for r in _runs(runs)]


def run_minutes(runs: Mapping[int, ConllRun]) -> float:
    """The median over the seeds of each run's whole training time, in minutes.

    Args:
        runs: one configuration's seeds, as :func:`first_epochs`.

    Returns:
        A float, minutes (the cumulative ``seconds`` of each run's last epoch, over 60).

    Raises:
        ValueError: as :func:`first_epochs`.
    """
    return float(np.median([r.history.seconds.iloc[-1] / 60 for r in _runs(runs)]))


def seed_frame(runs: Mapping[int, ConllRun], column: str) -> pd.DataFrame:
    """One column of every seed's history side by side: epochs by rows, seeds by columns,
    NaN after a seed's last epoch (for the bands of Chapter 3's figures).

    Args:
        runs: one configuration's seeds, as :func:`first_epochs`.
        column: a column of the histories, e.g. ``"train_acc"`` or ``"val_acc"``.

    Returns:
        A DataFrame indexed by epoch (sorted), one column per seed.

    Raises:
        ValueError: as :func:`first_epochs`, or for a column the histories lack.
    """
    _runs(runs)
    if not all(column in r.history for r in runs.values()):
        raise ValueError(f"column must be a column of the runs' histories, got {column!r}")
    return pd.DataFrame(
        {s: r.history.set_index("epoch")[column] for s, r in runs.items()}
    ).sort_index()


def described_row(
    runs: Mapping[int, ConllRun], epochs: Iterable[int], level: float
) -> dict[str, Any]:
    """One configuration's seeds as a row of Chapter 3's table of the described model.

    Args:
        runs: one configuration's seeds, as :func:`first_epochs`.
        epochs: the epochs at which the training accuracy recorded for that epoch is shown
            (:func:`lib.training.accuracy_at`; the summaries' 400 and 800).
        level: the accuracy whose first epoch is shown
            (:data:`~lib.experiments.conll_settings.REPORTED_ACCURACY`).

    Returns:
        A dict from column to cell, in the table's order. First comes the first epoch at ``level``
        (:func:`lib.seeds.reached_band_text`), the column the chapter's text reads; then
        ``seeds`` and ``parameters``; ``train at epoch e`` for each of ``epochs``, a band of
        :func:`lib.seeds.band_text`, or ``None`` where a seed ended before that epoch; the final
        training accuracy, how many seeds levelled off (``"no rule"`` for runs trained without a
        stop rule, :data:`~lib.experiments.conll_settings.DESCRIBED_SETTINGS`), the validation
        accuracy and the median minutes of training.

    Raises:
        ValueError: as :func:`first_epochs`, or for an epoch that is not an integer >= 1.
    """
    group = _runs(runs)
    level = finite_real("level", level)
    row: dict[str, Any] = {
        f"first epoch ≥ {level}": seeds.reached_band_text(first_epochs(runs, level)),
        "seeds": len(group),
        "parameters": f"{group[0].parameters:,}",
    }
    for e in epochs:
        values = [training.accuracy_at(r.history, e) for r in group]
        row[f"train at epoch {e}"] = None if None in values else seeds.band_text(values)
    return row | {
        "final train (evaluation mode)": seeds.band_text([r.train_acc for r in group]),
        "levelled off": f"{sum(r.stopped is not None for r in group)} of {len(group)}"
        if any("stop" in r.settings for r in group)
        else "no rule",
        "validation": seeds.band_text([r.val_acc for r in group]),
        "minutes": f"{run_minutes(runs):.1f}",
    }
