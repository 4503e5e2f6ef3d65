"""The SGD grid of the described model of the CoNLL-2003 experiment (K&S Section 5, Chapter 3):
the reviewers' one-layer model trained with plain SGD at every setting of :data:`SGD_GRID`, then
its best setting for longer.

:func:`sgd_grid_settings` names and sets one point of the grid, :func:`sgd_grid` reads the stored
runs of all of them (a dict ``(momentum, lr)`` -> :class:`lib.experiments.conll_runs.ConllRun`),
:func:`sgd_best_settings` and :func:`sgd_best` the best setting's long run. Bad arguments raise
``ValueError`` naming them; a book build whose stored run is missing or stale raises
:class:`lib.experiments.store.StaleResultError`. :mod:`lib.experiments.conll` re-exports every
public name.

Source: the sources name plain SGD and nothing else (the AI-written report's "via SGD"); the grid
and the schedule are the book's own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .. import runtime
from .._validate import one_of, short_repr
from . import store
from .conll_runs import ConllRun, _as_run, conll_compute
from .conll_settings import CONLL_VERSION, _grid_run, conll_run_settings

__all__ = [
    "SGD_GRID",
    "sgd_grid_settings",
    "sgd_grid",
    "sgd_best_settings",
    "sgd_best",
]

#: The grid of SGD settings the described model is trained with (seed 0, full mode, gradients
#: clipped at ``clip_norm``, a constant rate, ``epochs`` epochs each): every ``momentum`` with
#: every ``lr``. The setting of the grid with the best final training accuracy is then trained
#: for ``best_epochs`` epochs with its rate falling along half a cosine to ``lr *
#: final_lr_share`` (:func:`sgd_best_settings`). The grid and the schedule are ours: the
#: sources name plain SGD and nothing else.
SGD_GRID: dict[str, Any] = {
    "momenta": [0.0, 0.9],
    "lrs": [0.1, 0.3, 1.0],
    "epochs": 200,
    "clip_norm": 1.0,
    "best_epochs": 800,
    "final_lr_share": 0.01,
}


def _grid_value(name: str, value: float, values: Sequence[float]) -> float:
    """The grid's own number equal to ``value`` (a float32 0.9 equals 0.9 but is not the same
    number, and the stored settings must hold the grid's), or a ValueError naming ``name``."""
    one_of(name, value, tuple(values))
    return next(float(v) for v in values if v == value)


def sgd_grid_settings(momentum: float, lr: float) -> tuple[str, dict]:
    """The stored run's name and settings of one point of :data:`SGD_GRID`: the described model's
    full-mode settings (seed 0) with this ``momentum`` and constant ``lr``, clipped at
    ``SGD_GRID["clip_norm"]``, for ``SGD_GRID["epochs"]`` epochs.

    Raises:
        ValueError: for a ``momentum`` or ``lr`` that is not a point of the grid.
    """
    momentum = _grid_value("momentum", momentum, SGD_GRID["momenta"])
    lr = _grid_value("lr", lr, SGD_GRID["lrs"])
    _, base = conll_run_settings(1, 1, "full", kind="described")
    settings = {**base, "kind": "described-grid", "momentum": float(momentum), "lr": float(lr),
                "epochs": SGD_GRID["epochs"], "clip_norm": SGD_GRID["clip_norm"]}  # fmt: skip
    return _grid_run(settings), settings


def sgd_grid(*, allow_compute: bool | None = None) -> dict[tuple[float, float], ConllRun]:
    """The stored runs of :data:`SGD_GRID`, keyed ``(momentum, lr)``.

    Raises:
        lib.experiments.store.StaleResultError: in a book build whose stored run is missing or
            stale (``make full`` computes it).
    """
    return {
        (m, lr): _stored_grid_run(*sgd_grid_settings(m, lr), allow_compute)
        for m in SGD_GRID["momenta"]
        for lr in SGD_GRID["lrs"]
    }


def sgd_best_settings(
    grid: Mapping[tuple[float, float], ConllRun] | None = None,
) -> tuple[str, dict]:
    """The stored run's name and settings of the grid's best setting trained longer: the
    ``(momentum, lr)`` of :func:`sgd_grid` whose run ends at the highest training accuracy (the
    first in grid order on a tie), ``SGD_GRID["best_epochs"]`` epochs, the rate falling along half
    a cosine to ``lr * SGD_GRID["final_lr_share"]``.

    Args:
        grid: the runs of :func:`sgd_grid` (default: read them, stored only).

    Raises:
        ValueError: for a ``grid`` that does not map every point of :data:`SGD_GRID` to a
            :class:`~lib.experiments.conll_runs.ConllRun` with a finite ``train_acc``.
        lib.experiments.store.StaleResultError: when the grid is not stored yet.
    """
    grid = sgd_grid(allow_compute=False) if grid is None else grid
    keys = [(m, lr) for m in SGD_GRID["momenta"] for lr in SGD_GRID["lrs"]]
    if (
        not isinstance(grid, Mapping)
        or set(grid) != set(keys)
        or not all(isinstance(r, ConllRun) and np.isfinite(r.train_acc) for r in grid.values())
    ):
        raise ValueError(
            f"grid must map every (momentum, lr) of SGD_GRID to a ConllRun with a finite "
            f"train_acc, got {short_repr(grid)}"
        )
    momentum, lr = max(keys, key=lambda key: grid[key].train_acc)  # the first in grid order
    _, settings = sgd_grid_settings(momentum, lr)
    settings.update(kind="described-sgd-best", epochs=SGD_GRID["best_epochs"], schedule="cosine",
                    final_lr=lr * SGD_GRID["final_lr_share"])  # fmt: skip
    return _grid_run(settings), settings


def sgd_best(*, allow_compute: bool | None = None) -> ConllRun:
    """The stored run of :func:`sgd_best_settings`.

    Raises:
        lib.experiments.store.StaleResultError: as :func:`sgd_grid`.
    """
    return _stored_grid_run(*sgd_best_settings(), allow_compute)


def _stored_grid_run(run: str, settings: dict, allow_compute: bool | None) -> ConllRun:
    """A grid or best-SGD run through :func:`lib.experiments.store.load_or_run`."""
    stored = store.load_or_run(
        "conll",
        run,
        CONLL_VERSION,
        settings,
        lambda: conll_compute(settings),
        allow_compute=not runtime.IN_BUILD if allow_compute is None else allow_compute,
        device=str(runtime.DEVICE),
    )
    return _as_run(stored.result, settings, stored.provenance)
