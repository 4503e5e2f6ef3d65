"""lib.experiments.conll_grid: the described model's SGD grid and its best setting."""

import pandas as pd
import pytest

from lib.experiments import conll_grid, conll_runs, conll_settings


def test_sgd_grid_settings_and_the_best_setting():
    """Every grid point differs from the described model's settings in its momentum, rate and
    epochs only; the best setting is the grid run with the highest final training accuracy."""
    _, described = conll_settings.conll_run_settings(1, 1, "full", kind="described")
    names = set()
    for m in conll_grid.SGD_GRID["momenta"]:
        for lr in conll_grid.SGD_GRID["lrs"]:
            run, s = conll_grid.sgd_grid_settings(m, lr)
            names.add(run)
            changed = {k for k in s if s[k] != described.get(k)}
            assert changed <= {"kind", "momentum", "lr", "epochs"} and s["momentum"] == m
            assert s["lr"] == lr and s["epochs"] == conll_grid.SGD_GRID["epochs"]
    assert len(names) == 6
    grid = {
        key: conll_runs.ConllRun(pd.DataFrame(), acc, 0.0, 1, 1, 1, {})
        for key, acc in zip(
            [(m, lr) for m in conll_grid.SGD_GRID["momenta"] for lr in conll_grid.SGD_GRID["lrs"]],
            [0.5, 0.7, 0.6, 0.9, 0.8, 0.1],
            strict=True,
        )
    }
    run, best = conll_grid.sgd_best_settings(grid)
    assert run == "described-sgd-best" and (best["momentum"], best["lr"]) == (0.9, 0.1)
    tied = {k: conll_runs.ConllRun(pd.DataFrame(), 0.5, 0.0, 1, 1, 1, {}) for k in reversed(grid)}
    assert (
        conll_grid.sgd_best_settings(tied)[1]["momentum"] == 0.0
    )  # a tie: the first in grid order
    for bad in (
        {},
        [],
        {**grid, (0.0, 0.1): conll_runs.ConllRun(pd.DataFrame(), float("nan"), 0.0, 1, 1, 1, {})},
    ):
        with pytest.raises(ValueError, match="grid must map"):
            conll_grid.sgd_best_settings(bad)
    import numpy as np

    _, s32 = conll_grid.sgd_grid_settings(np.float32(0.9), np.float32(0.3))
    assert (s32["momentum"], s32["lr"]) == (0.9, 0.3)  # the grid's numbers, not float32's
    assert best["schedule"] == "cosine" and best["epochs"] == conll_grid.SGD_GRID["best_epochs"]
    assert best["final_lr"] == pytest.approx(0.1 * conll_grid.SGD_GRID["final_lr_share"])
    with pytest.raises(ValueError, match="momentum"):
        conll_grid.sgd_grid_settings(0.5, 0.1)
    with pytest.raises(ValueError, match="lr"):
        conll_grid.sgd_grid_settings(0.0, 0.2)
