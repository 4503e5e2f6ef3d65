"""lib.training.common: the checks, epochs and validation schedule both training loops share."""

import pytest
import torch

from lib.training import common


def test_validation_falls_every_eval_every_epochs_and_after_the_last():
    # 10 epochs scored every 4: after epochs 4 and 8, and after the last (10)
    assert [e for e in range(1, 11) if common.validation_epoch(e, 4, 10)] == [4, 8, 10]
    assert [e for e in range(1, 4) if common.validation_epoch(e, 1, 3)] == [1, 2, 3]
    assert [e for e in range(1, 6) if common.validation_epoch(e, 9, 5)] == [5]


def test_a_resumed_loop_runs_the_epochs_left():
    assert list(common.epoch_bar(3, 7, None, progress=False)) == [4, 5, 6, 7]
    assert list(common.epoch_bar(7, 7, None, progress=False)) == []
    common.close_bar(range(3))  # a plain range has nothing to close


def test_the_schedule_and_callbacks_are_checked_naming_the_argument():
    assert common.as_schedule(5, 2, 0.1, 0.01) == (5, 2, 0.1, 0.01)
    assert common.as_schedule(5, 2, 0.1, None) == (5, 2, 0.1, None)
    for args, match in [
        ((0, 1, 0.1, None), "epochs"),
        ((5, 0, 0.1, None), "eval_every"),
        ((5, 1, 0.0, None), "lr"),
        ((5, 1, 0.1, 0.0), "final_lr"),
        ((5, 1, 0.1, 0.2), "final_lr must not exceed lr"),
    ]:
        with pytest.raises(ValueError, match=match):
            common.as_schedule(*args)
    rule = lambda history: None  # noqa: E731
    assert common.as_callbacks(rule, None) == (rule, None)
    with pytest.raises(ValueError, match="stop must be callable"):
        common.as_callbacks("stop", None)
    with pytest.raises(ValueError, match="on_epoch must be callable"):
        common.as_callbacks(None, 3)
    layer = torch.nn.Linear(2, 2)
    assert common.as_model(layer) is layer
    with pytest.raises(ValueError, match="model must be a torch.nn.Module"):
        common.as_model("model")
