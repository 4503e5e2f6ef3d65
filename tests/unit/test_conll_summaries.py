"""lib.experiments.conll_summaries: one CoNLL-2003 configuration's seeds summarised for
Chapter 3."""

import pandas as pd
import pytest

from lib.experiments import conll_runs, conll_summaries


def _run(train_acc, seconds, *, val_acc=0.5, stopped=None, parameters=1234, rule=True):
    """A hand-made ConllRun whose history has one row per epoch (trained with a stop rule unless
    ``rule`` is false)."""
    history = pd.DataFrame(
        {
            "epoch": range(1, len(train_acc) + 1),
            "train_acc": train_acc,
            "val_acc": [float("nan")] * (len(train_acc) - 1) + [val_acc],
            "seconds": seconds,
        }
    )
    settings = {"stop": {"target": 0.99}} if rule else {}
    return conll_runs.ConllRun(
        history, train_acc[-1], val_acc, parameters, 10, 100, settings, stopped
    )


def test_versus_gives_the_side_and_the_distance():
    assert conll_summaries.versus(0.75, 0.5) == ("above", 0.25)
    assert conll_summaries.versus(0.5, 0.75) == ("below", 0.25)
    assert conll_summaries.versus(0.5, 0.5) == ("same", 0.0)
    with pytest.raises(ValueError, match="^ref must be finite"):
        conll_summaries.versus(0.5, float("nan"))


def test_seed_summaries_of_hand_made_runs():
    runs = {
        0: _run([0.5, 0.9, 0.99], [60.0, 120.0, 180.0], val_acc=0.7, stopped="levelled"),
        1: _run([0.5, 0.8], [30.0, 90.0], val_acc=0.6),  # epochs of 30 and 60 s
        2: _run([0.95, 0.97, 0.99, 0.995], [6.0, 12.0, 18.0, 24.0], val_acc=0.8),
    }
    assert conll_summaries.first_epochs(runs, 0.9) == [2, None, 1]
    assert conll_summaries.first_epochs(runs, 0.99) == [3, None, 3]
    assert conll_summaries.epoch_times(runs) == [60.0, 45.0, 6.0]
    assert conll_summaries.run_minutes(runs) == 1.5  # median of 3, 1.5 and 0.4 minutes
    frame = conll_summaries.seed_frame(runs, "train_acc")
    assert list(frame.index) == [1, 2, 3, 4] and list(frame.columns) == [0, 1, 2]
    assert frame.loc[2].tolist() == [0.9, 0.8, 0.97]
    assert frame[1].isna().tolist() == [False, False, True, True]
    row = conll_summaries.described_row(runs, (2, 3), 0.99)
    assert row == {
        "seeds": 3,
        "parameters": "1,234",
        "train at epoch 2": "0.9000 (0.8000–0.9700, 3 seeds)",
        "train at epoch 3": None,  # seed 1 ended after two epochs
        "final train (evaluation mode)": "0.9900 (0.8000–0.9950, 3 seeds)",
        "first epoch ≥ 0.99": "3 (3–never, 3 seeds)",
        "levelled off": "1 of 3",
        "validation": "0.7000 (0.6000–0.8000, 3 seeds)",
        "minutes": "1.5",
    }
    assert next(iter(row)) == "first epoch ≥ 0.99"  # the column the chapter's text reads
    no_rule = conll_summaries.described_row(
        {0: _run([0.5, 0.9], [1.0, 2.0], rule=False)}, (2,), 0.99
    )
    assert no_rule["levelled off"] == "no rule"  # not "0 of 1": nothing could stop the run
    for call, match in [
        (lambda: conll_summaries.first_epochs({}, 0.9), "^runs must be a non-empty dict"),
        (lambda: conll_summaries.first_epochs([runs[0]], 0.9), "^runs must be a non-empty dict"),
        (lambda: conll_summaries.seed_frame(runs, "loss"), "^column must be"),
        (lambda: conll_summaries.described_row(runs, (0,), 0.99), "^epoch must be"),
    ]:
        with pytest.raises(ValueError, match=match):
            call()
