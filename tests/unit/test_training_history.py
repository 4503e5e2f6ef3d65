"""lib.training.history: what the chapters read from a run's history."""

import pandas as pd
import pytest

from lib import training


def test_accuracy_at_and_epoch_seconds_read_a_history():
    history = pd.DataFrame(
        {
            "epoch": [1, 2, 3, 4],
            "train_acc": [0.5, 0.75, 0.875, 0.9375],
            "seconds": [2.0, 5.0, 9.0, 12.0],  # cumulative: epochs of 2, 3, 4 and 3 s
        }
    )
    assert training.accuracy_at(history, 1) == 0.5
    assert training.accuracy_at(history, 4) == 0.9375
    assert training.accuracy_at(history, 5) is None  # the run ended before epoch 5
    assert isinstance(training.accuracy_at(history, 2), float)
    assert training.epoch_seconds(history) == 3.0  # median of 2, 3, 4, 3
    assert training.epoch_seconds(history.iloc[:2]) == 2.5  # median of 2 and 3
    for call, match in [
        (lambda: training.accuracy_at(history, 0), "epoch must be"),
        (lambda: training.accuracy_at(history, 2, column="val_acc"), "history must be"),
        (lambda: training.epoch_seconds(history.drop(columns="seconds")), "history must be"),
        (lambda: training.epoch_seconds(history.iloc[:0]), "history must be"),
    ]:
        with pytest.raises(ValueError, match=match):
            call()
