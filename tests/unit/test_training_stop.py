"""lib.training.stop: the stopping rule and how fit applies it."""

import pandas as pd
import pytest
from test_training_loop import toy_batches

from lib import datasets, training
from lib.models import TokenTagger


def test_stop_rule_on_hand_made_histories():
    rule = training.StopRule(target=0.9, window=3, min_gain=0.01)

    def hist(acc):
        return pd.DataFrame({"train_acc": acc})

    assert rule(hist([0.5, 0.6, 0.7, 0.8, 0.85, 0.86, 0.86, 0.86])) is None  # never reached 0.9
    # reached at epoch 3 (index 2): the rule waits 3 epochs more, then compares best-of-3 windows
    assert rule(hist([0.5, 0.8, 0.91, 0.92, 0.93])) is None  # too early
    assert rule(hist([0.5, 0.8, 0.91, 0.95, 0.97, 0.99])) is None  # still gaining 0.08 > 0.01
    reason = rule(hist([0.5, 0.8, 0.91, 0.95, 0.951, 0.952, 0.953]))
    # last 3 epochs best 0.953, before them best 0.95: gain 0.003 < 0.01
    assert reason is not None and "epoch 3" in reason and "0.00300" in reason
    # a dip after the best epoch is levelled off too (gain counted as 0)
    assert "0.00000" in rule(hist([0.5, 0.91, 0.96, 0.95, 0.94, 0.95]))
    for bad, match in [
        ({"target": 0.0}, "target"),
        ({"target": 1.2}, "target"),
        ({"target": 0.9, "window": 0}, "window"),
        ({"target": 0.9, "min_gain": 1.0}, "min_gain"),
        ({"target": 0.9, "min_gain": -0.1}, "min_gain"),
    ]:
        with pytest.raises(ValueError, match=match):
            training.StopRule(**bad)


def test_fit_stops_by_the_rule_and_evaluates_the_last_epoch():
    vocab, batches = toy_batches()
    model = TokenTagger(len(vocab), len(datasets.CONLL_TAGS), d=16, n_layers=1, rank=1, seed=0)
    rule = training.StopRule(target=1.0, window=2, min_gain=1e-6)
    history = training.fit(
        model, batches, epochs=200, lr=1e-2, stop=rule, validation=batches, eval_every=50
    )
    first = training.epochs_to(history, 1.0)
    assert first is not None and len(history) == first + 2  # 1.0 cannot be beaten: stop 2 later
    assert history.attrs["stopped"] == rule(history) and history.val_acc.iloc[-1] == 1.0
    capped = training.fit(TokenTagger(len(vocab), 9, d=16, seed=0), batches, epochs=3, stop=rule)
    assert len(capped) == 3 and capped.attrs["stopped"] is None
    with pytest.raises(ValueError, match="stop must be callable"):
        training.fit(model, batches, epochs=1, stop=0.99)
