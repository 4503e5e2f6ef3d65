"""lib.experiments.conll: the ceilings and the CoNLL-2003 runs of K&S Section 5."""

import pandas as pd
import pytest
import torch

from lib import datasets
from lib.experiments import conll, store


def test_ceilings_hand_computed():
    corpus = [
        (["a", "b", "a"], ["X", "Y", "Z"]),
        (["b", "a"], ["Y", "X"]),
        (["a", "b"], ["Z", "Y"]),
    ]
    # context-free: 'a' has X, Z, X, Z -> best 2 of 4; 'b' has Y, Y, Y -> 3 of 3: 5 / 7
    assert conll.context_free_ceiling(corpus) == pytest.approx(5 / 7)
    # permutation classes: {a,a,b}: a -> X, Z (1 of 2), b -> Y (1);
    # {a,b}: a -> X, Z (1 of 2), b -> Y, Y (2)
    assert conll.permutation_ceiling(corpus) == pytest.approx((1 + 1 + 1 + 2) / 7)
    assert conll.permutation_ceiling(corpus) >= conll.context_free_ceiling(corpus)
    with pytest.raises(ValueError, match="non-empty list"):
        conll.context_free_ceiling([])
    with pytest.raises(ValueError, match="equal, non-zero length"):
        conll.permutation_ceiling([(["a"], ["X", "Y"])])


def test_conll_subset_is_a_seeded_sample_in_corpus_order():
    full = datasets.load_conll2003("validation")
    sub = conll.conll_subset("validation", 50, seed=3)
    assert len(sub) == 50 and sub == conll.conll_subset("validation", 50, seed=3)
    positions = [full.index(pair) for pair in sub]
    assert positions == sorted(positions)
    assert conll.conll_subset("validation", None) == full
    with pytest.raises(ValueError, match="sentences"):
        conll.conll_subset("validation", len(full) + 1)


def test_conll_experiment_memorizes_a_small_corpus():
    pairs = conll.conll_subset("train", 40, seed=1)
    result = conll.conll_experiment(
        pairs, pairs[:5], n_layers=1, rank=1, d=16, batch_size=8, lr=1e-2, epochs=25, eval_every=5
    )
    assert result.train_acc > conll.context_free_ceiling(pairs) - 0.02
    assert result.train_acc <= conll.permutation_ceiling(pairs) + 1e-12  # no model can beat it
    assert result.tokens == sum(len(t) for t, _ in pairs)
    assert list(result.history.epoch) == list(range(1, 26))


def test_conll_run_full_mode_in_a_build_needs_make_full(monkeypatch, tmp_path):
    from lib import runtime

    monkeypatch.setenv("BOOK_RESULTS", str(tmp_path))
    monkeypatch.setattr(runtime, "IN_BUILD", True)
    with pytest.raises(RuntimeError, match="make full"):
        conll.conll_run(1, 1, mode="full")
    with pytest.raises(ValueError, match="mode must be one of"):
        conll.conll_run(1, 1, mode="medium")
    with pytest.raises(
        ValueError, match="n_layers"
    ):  # checked before the (missing) result is looked up
        conll.conll_run(-5, 1, mode="full")


def test_ceilings_by_counting_agree_with_the_ceilings():
    corpus = [
        (["a", "b", "a"], ["X", "Y", "Z"]),
        (["b", "a"], ["Y", "X"]),
        (["a", "b"], ["Z", "Y"]),
    ]
    assert conll.ceilings_by_counting(corpus) == pytest.approx((5 / 7, 5 / 7))
    pairs = conll.conll_subset("validation", 200, seed=4)
    cf, perm = conll.ceilings_by_counting(pairs)
    assert cf == pytest.approx(conll.context_free_ceiling(pairs), abs=1e-12)
    assert perm == pytest.approx(conll.permutation_ceiling(pairs), abs=1e-12)


def test_full_mode_run_is_stored_and_read_back_unchanged(monkeypatch, tmp_path):
    """A full-mode run (tiny settings) computed once, stored as JSON (epochs without a validation
    score as null) and read back, without computing, as the same history and numbers."""
    from lib import runtime

    tiny = {
        **conll.CONLL_SETTINGS["full"],
        "sentences": 30,
        "validation_sentences": 10,
        "max_epochs": {"1": 3, "full": 3},
        "d": 8,
        "batch_size": 8,
        "lr": 1e-2,
        "eval_every": 2,
    }
    monkeypatch.setitem(conll.CONLL_SETTINGS, "full", tiny)
    monkeypatch.setenv("BOOK_RESULTS", str(tmp_path))
    computed = conll.conll_run(1, 1, "full", allow_compute=True)
    assert (tmp_path / "conll" / "layers-1-rank-1.json").is_file()
    assert computed.history.val_acc.isna().tolist() == [True, False, False]  # epochs 2 and 3
    monkeypatch.setattr(runtime, "IN_BUILD", True)
    read = conll.conll_run(1, 1, "full")  # in a build: read, never computed
    pd.testing.assert_frame_equal(read.history, computed.history)
    assert (read.train_acc, read.val_acc, read.settings) == (
        computed.train_acc,
        computed.val_acc,
        computed.settings,
    )
    assert read.provenance["threads"] == torch.get_num_threads()
    monkeypatch.setitem(conll.CONLL_SETTINGS, "full", {**tiny, "lr": 2e-2})  # a changed setting
    with pytest.raises(store.StaleResultError) as error:
        conll.conll_run(1, 1, "full")
    message = str(error.value)
    assert "\n" not in message and "make full" in message and "settings differ" in message


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
    return conll.ConllRun(history, train_acc[-1], val_acc, parameters, 10, 100, settings, stopped)


def test_configurations_have_one_label_and_one_stored_name():
    """The pages' label and make bench's stored key of a configuration, each written once."""
    assert conll.config_label(1, 1) == "rank 1, 1 layer"
    assert conll.config_label(3, 1) == "rank 1, 3 layers"
    assert conll.config_label(1, None) == "full rank, 1 layer"
    assert conll.bench_name(6, 1) == "6 layers, rank 1"
    assert conll.bench_name(1, None) == "1 layer, rank full"
    # the stored bench file holds exactly the names bench_name gives its four models
    from lib.experiments import store

    models = store.read("bench", "training").result["models"]
    assert set(models) == {conll.bench_name(L, r) for L, r in [(1, 1), (3, 1), (6, 1), (1, None)]}
    for bad, match in [((0, 1), "n_layers"), ((1, 0), "rank"), ((1.5, 1), "n_layers")]:
        with pytest.raises(ValueError, match=match):
            conll.config_label(*bad)
        with pytest.raises(ValueError, match=match):
            conll.bench_name(*bad)


def test_versus_gives_the_side_and_the_distance():
    assert conll.versus(0.75, 0.5) == ("above", 0.25)
    assert conll.versus(0.5, 0.75) == ("below", 0.25)
    assert conll.versus(0.5, 0.5) == ("same", 0.0)
    with pytest.raises(ValueError, match="^ref must be finite"):
        conll.versus(0.5, float("nan"))


def test_seed_summaries_of_hand_made_runs():
    runs = {
        0: _run([0.5, 0.9, 0.99], [60.0, 120.0, 180.0], val_acc=0.7, stopped="levelled"),
        1: _run([0.5, 0.8], [30.0, 90.0], val_acc=0.6),  # epochs of 30 and 60 s
        2: _run([0.95, 0.97, 0.99, 0.995], [6.0, 12.0, 18.0, 24.0], val_acc=0.8),
    }
    assert conll.first_epochs(runs, 0.9) == [2, None, 1]
    assert conll.first_epochs(runs, 0.99) == [3, None, 3]
    assert conll.epoch_times(runs) == [60.0, 45.0, 6.0]
    assert conll.run_minutes(runs) == 1.5  # median of 3, 1.5 and 0.4 minutes
    frame = conll.seed_frame(runs, "train_acc")
    assert list(frame.index) == [1, 2, 3, 4] and list(frame.columns) == [0, 1, 2]
    assert frame.loc[2].tolist() == [0.9, 0.8, 0.97]
    assert frame[1].isna().tolist() == [False, False, True, True]
    row = conll.described_row(runs, (2, 3), 0.99)
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
    no_rule = conll.described_row({0: _run([0.5, 0.9], [1.0, 2.0], rule=False)}, (2,), 0.99)
    assert no_rule["levelled off"] == "no rule"  # not "0 of 1": nothing could stop the run
    for call, match in [
        (lambda: conll.first_epochs({}, 0.9), "^runs must be a non-empty dict"),
        (lambda: conll.first_epochs([runs[0]], 0.9), "^runs must be a non-empty dict"),
        (lambda: conll.seed_frame(runs, "loss"), "^column must be"),
        (lambda: conll.described_row(runs, (0,), 0.99), "^epoch must be"),
    ]:
        with pytest.raises(ValueError, match=match):
            call()


def test_validation_split_by_vocabulary_recombines_and_counts_oov():
    """The in-vocabulary and out-of-vocabulary accuracies weigh back to the whole validation
    accuracy by the OOV share, and that share is the share of validation tokens whose word is
    not a training word (counted here from the words)."""
    train = conll.conll_subset("train", 60, seed=2)
    valid = conll.conll_subset("validation", 30, seed=2)
    words = {w for tokens, _ in train for w in tokens}
    tokens = [w for t, _ in valid for w in t]
    out = conll.conll_experiment(
        train, valid, n_layers=1, rank=1, d=16, batch_size=8, lr=1e-2, epochs=3, eval_every=3,
        unk_dropout=0.5, train_eval=True,
    )  # fmt: skip
    assert out.oov_share == sum(w not in words for w in tokens) / len(tokens)
    assert out.val_acc == pytest.approx(
        (1 - out.oov_share) * out.val_acc_iv + out.oov_share * out.val_acc_oov, abs=1e-12
    )
    assert out.history["train_acc"].iloc[-1] == out.train_acc  # the eval-mode score per epoch
    with pytest.raises(ValueError, match="unk_dropout"):
        conll.conll_experiment(
            train, valid, n_layers=1, rank=1, d=16, batch_size=8, lr=1e-2, epochs=1,
            eval_every=1, unk_dropout=2.0,
        )  # fmt: skip


def test_sgd_grid_settings_and_the_best_setting():
    """Every grid point differs from the described model's settings in its momentum, rate and
    epochs only; the best setting is the grid run with the highest final training accuracy."""
    _, described = conll.conll_run_settings(1, 1, "full", kind="described")
    names = set()
    for m in conll.SGD_GRID["momenta"]:
        for lr in conll.SGD_GRID["lrs"]:
            run, s = conll.sgd_grid_settings(m, lr)
            names.add(run)
            changed = {k for k in s if s[k] != described.get(k)}
            assert changed <= {"kind", "momentum", "lr", "epochs"} and s["momentum"] == m
            assert s["lr"] == lr and s["epochs"] == conll.SGD_GRID["epochs"]
    assert len(names) == 6
    grid = {
        key: conll.ConllRun(pd.DataFrame(), acc, 0.0, 1, 1, 1, {})
        for key, acc in zip(
            [(m, lr) for m in conll.SGD_GRID["momenta"] for lr in conll.SGD_GRID["lrs"]],
            [0.5, 0.7, 0.6, 0.9, 0.8, 0.1],
            strict=True,
        )
    }
    run, best = conll.sgd_best_settings(grid)
    assert run == "described-sgd-best" and (best["momentum"], best["lr"]) == (0.9, 0.1)
    tied = {k: conll.ConllRun(pd.DataFrame(), 0.5, 0.0, 1, 1, 1, {}) for k in reversed(grid)}
    assert conll.sgd_best_settings(tied)[1]["momentum"] == 0.0  # a tie: the first in grid order
    for bad in (
        {},
        [],
        {**grid, (0.0, 0.1): conll.ConllRun(pd.DataFrame(), float("nan"), 0.0, 1, 1, 1, {})},
    ):
        with pytest.raises(ValueError, match="grid must map"):
            conll.sgd_best_settings(bad)
    import numpy as np

    _, s32 = conll.sgd_grid_settings(np.float32(0.9), np.float32(0.3))
    assert (s32["momentum"], s32["lr"]) == (0.9, 0.3)  # the grid's numbers, not float32's
    assert best["schedule"] == "cosine" and best["epochs"] == conll.SGD_GRID["best_epochs"]
    assert best["final_lr"] == pytest.approx(0.1 * conll.SGD_GRID["final_lr_share"])
    with pytest.raises(ValueError, match="momentum"):
        conll.sgd_grid_settings(0.5, 0.1)
    with pytest.raises(ValueError, match="lr"):
        conll.sgd_grid_settings(0.0, 0.2)


def test_live_runs_follow_each_modes_settings():
    """Fast mode trains one rank-1 layer only; full mode every depth at rank 1, then the
    full-rank layer; make full's fast plan asks for the same runs."""
    from lib.experiments import conll, tasks

    assert conll.live_runs("fast") == [(1, 1)]
    assert conll.live_runs("full") == [(1, 1), (3, 1), (6, 1), (1, None)]
    fast = tasks.plan("fast", datasets=[], root="/nonexistent-results")
    assert [t.label for t in fast] == ["conll layers-1-rank-1"]
    with pytest.raises(ValueError, match="mode"):
        conll.live_runs("slow")
