"""lib.experiments.conll_runs: the CoNLL-2003 runs of K&S Section 5, live and stored."""

import pandas as pd
import pytest
import torch

from lib import datasets
from lib.experiments import conll, conll_runs, conll_settings, store


def test_conll_subset_is_a_seeded_sample_in_corpus_order():
    full = datasets.load_conll2003("validation")
    sub = conll_runs.conll_subset("validation", 50, seed=3)
    assert len(sub) == 50 and sub == conll_runs.conll_subset("validation", 50, seed=3)
    positions = [full.index(pair) for pair in sub]
    assert positions == sorted(positions)
    assert conll_runs.conll_subset("validation", None) == full
    with pytest.raises(ValueError, match="sentences"):
        conll_runs.conll_subset("validation", len(full) + 1)


def test_conll_experiment_memorizes_a_small_corpus():
    pairs = conll_runs.conll_subset("train", 40, seed=1)
    result = conll_runs.conll_experiment(
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
        conll_runs.conll_run(1, 1, mode="full")
    with pytest.raises(ValueError, match="mode must be one of"):
        conll_runs.conll_run(1, 1, mode="medium")
    with pytest.raises(
        ValueError, match="n_layers"
    ):  # checked before the (missing) result is looked up
        conll_runs.conll_run(-5, 1, mode="full")


def test_full_mode_run_is_stored_and_read_back_unchanged(monkeypatch, tmp_path):
    """A full-mode run (tiny settings) computed once, stored as JSON (epochs without a validation
    score as null) and read back, without computing, as the same history and numbers."""
    from lib import runtime

    tiny = {
        **conll_settings.CONLL_SETTINGS["full"],
        "sentences": 30,
        "validation_sentences": 10,
        "max_epochs": {"1": 3, "full": 3},
        "d": 8,
        "batch_size": 8,
        "lr": 1e-2,
        "eval_every": 2,
    }
    monkeypatch.setitem(conll_settings.CONLL_SETTINGS, "full", tiny)
    monkeypatch.setenv("BOOK_RESULTS", str(tmp_path))
    computed = conll_runs.conll_run(1, 1, "full", allow_compute=True)
    assert (tmp_path / "conll" / "layers-1-rank-1.json").is_file()
    assert computed.history.val_acc.isna().tolist() == [True, False, False]  # epochs 2 and 3
    monkeypatch.setattr(runtime, "IN_BUILD", True)
    read = conll_runs.conll_run(1, 1, "full")  # in a build: read, never computed
    pd.testing.assert_frame_equal(read.history, computed.history)
    assert (read.train_acc, read.val_acc, read.settings) == (
        computed.train_acc,
        computed.val_acc,
        computed.settings,
    )
    assert read.provenance["threads"] == torch.get_num_threads()
    monkeypatch.setitem(
        conll_settings.CONLL_SETTINGS, "full", {**tiny, "lr": 2e-2}
    )  # a changed setting
    with pytest.raises(store.StaleResultError) as error:
        conll_runs.conll_run(1, 1, "full")
    message = str(error.value)
    assert "\n" not in message and "make full" in message and "settings differ" in message


def test_validation_split_by_vocabulary_recombines_and_counts_oov():
    """The in-vocabulary and out-of-vocabulary accuracies weigh back to the whole validation
    accuracy by the OOV share, and that share is the share of validation tokens whose word is
    not a training word (counted here from the words)."""
    train = conll_runs.conll_subset("train", 60, seed=2)
    valid = conll_runs.conll_subset("validation", 30, seed=2)
    words = {w for tokens, _ in train for w in tokens}
    tokens = [w for t, _ in valid for w in t]
    out = conll_runs.conll_experiment(
        train, valid, n_layers=1, rank=1, d=16, batch_size=8, lr=1e-2, epochs=3, eval_every=3,
        unk_dropout=0.5, train_eval=True,
    )  # fmt: skip
    assert out.oov_share == sum(w not in words for w in tokens) / len(tokens)
    assert out.val_acc == pytest.approx(
        (1 - out.oov_share) * out.val_acc_iv + out.oov_share * out.val_acc_oov, abs=1e-12
    )
    assert out.history["train_acc"].iloc[-1] == out.train_acc  # the eval-mode score per epoch
    with pytest.raises(ValueError, match="unk_dropout"):
        conll_runs.conll_experiment(
            train, valid, n_layers=1, rank=1, d=16, batch_size=8, lr=1e-2, epochs=1,
            eval_every=1, unk_dropout=2.0,
        )  # fmt: skip
