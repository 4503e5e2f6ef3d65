"""lib.experiments.trained: Corollary 1's data generated and checked, the model trained on it,
and the quantities of Theorem 2's construction measured in both."""

import itertools
import math

import numpy as np
import pandas as pd
import pytest
import torch

from lib import training
from lib.experiments import trained as T


def test_instance_meets_the_hypotheses_it_claims():
    inst = T.corollary1_instance(20, 3, 7, 5, 3, seed=4, r_min=0.5, r_max=1.5)
    assert inst.ids.shape == inst.labels.shape == (20, 3) and inst.X.shape == (20, 3, 5)
    norms = np.linalg.norm(inst.vocab, axis=1)
    assert (norms >= 0.5).all() and (norms <= 1.5).all()
    assert len({tuple(sorted(r)) for r in inst.ids.tolist()}) == 20  # no two are permutations
    assert all(len(set(r)) == 3 for r in inst.ids.tolist())
    assert set(np.unique(inst.labels)) <= {0, 1, 2}
    h = T.instance_hypotheses(inst)
    used = np.unique(inst.ids)
    dist = [
        np.linalg.norm(inst.vocab[a] - inst.vocab[b]) for a, b in itertools.combinations(used, 2)
    ]
    assert h["eps"] == pytest.approx(min(dist), rel=1e-12)
    assert h["r_min"] == pytest.approx(norms[used].min(), rel=1e-12)
    assert h["r_max"] == pytest.approx(norms[used].max(), rel=1e-12)
    assert h["separated"] and h["consistent"] and h["contexts"] == h["tokens"] == 60
    again = T.corollary1_instance(20, 3, 7, 5, 3, seed=4, r_min=0.5, r_max=1.5)
    assert np.array_equal(again.ids, inst.ids) and np.array_equal(again.vocab, inst.vocab)


def test_inconsistent_labels_and_too_many_sequences_are_found():
    inst = T.corollary1_instance(2, 2, 3, 2, 2, seed=0)
    ids = np.array([[0, 1], [1, 0]])  # the same context twice, permuted
    bad = T.Corollary1Instance(inst.vocab, ids, np.array([[0, 1], [0, 0]]), 2, 0)
    h = T.instance_hypotheses(bad)
    assert not h["consistent"] and h["contexts"] == 2 and h["tokens"] == 4
    good = T.Corollary1Instance(inst.vocab, ids, np.array([[0, 1], [1, 0]]), 2, 0)
    assert T.instance_hypotheses(good)["consistent"]
    with pytest.raises(ValueError, match="N"):
        T.corollary1_instance(11, 2, 5, 2, 2)  # only binom(5, 2) = 10 subsets
    with pytest.raises(ValueError, match="duplicate token"):
        T.instance_hypotheses(T.Corollary1Instance(inst.vocab, np.array([[0, 0]]), ids[:1], 2, 0))
    with pytest.raises(ValueError, match="inst must be"):
        T.instance_hypotheses("data")


def test_capacity_counts_closed_forms():
    c = T.capacity_counts(4, 32, 8, s=2)
    assert c["corollary1"] == 4 * (2 + 8) + 8 * (2 * 4 * 32 + 8)
    assert c["ks2025"] == math.sqrt(128) and c["kim2023"] == 8 + 4 + math.sqrt(128)


def test_tagger_holds_the_vocabulary_and_counts_what_trains():
    inst = T.corollary1_instance(6, 3, 6, 4, 2, seed=1)
    model = T.tagger(inst, 8, seed=2)
    assert torch.equal(model.embed.weight[1:], torch.from_numpy(inst.vocab))
    assert not model.embed.weight.requires_grad
    total = sum(p.numel() for p in model.parameters())
    assert T.trainable_parameters(model) == total - 7 * 4
    with pytest.raises(ValueError, match="model must be"):
        T.trainable_parameters("model")


def test_memorise_reaches_every_label_of_a_small_instance_and_says_so():
    inst = T.corollary1_instance(4, 2, 4, 4, 2, seed=3)
    run = T.memorise(inst, 32, seed=0, epochs=400, lr=3e-2)
    pairs = [(r + 1, lab) for r, lab in zip(inst.ids, inst.labels, strict=True)]
    batches = training.bucket_batches(pairs, 64, device="cpu")
    assert run.memorised and run.fraction == training.evaluate(run.model, batches) == 1.0
    assert run.epochs == len(run.history) < 400  # stopped at the first perfect epoch
    assert (run.history["train_acc"].iloc[:-1] < 1.0).all()


def test_trained_geometry_of_a_tied_model_has_the_closed_form_score_scale():
    """For the tied head W_Q = W_K = w^T, W_Q^T W_K = w w^T has spectral norm |w|^2; the gap
    is the smallest distance between the layer's outputs, recomputed here pair by pair."""
    inst = T.corollary1_instance(5, 3, 6, 4, 2, seed=2)
    model = T.tagger(inst, 8, tied=True, seed=1)
    g = T.trained_geometry(model, inst)
    w = model.attn[0].weights()["W_Q"].double()
    assert g["score_scale"] == pytest.approx(float((w**2).sum()), rel=1e-12)
    ids = torch.from_numpy(inst.ids + 1)
    with torch.no_grad():
        out = model.attn[0](model.embed(ids), ids == 0).reshape(-1, 4).numpy()
    gaps = [np.linalg.norm(a - b) for a, b in itertools.combinations(out, 2)]
    assert g["min_gap"] == pytest.approx(min(gaps), rel=1e-12)
    assert g["digits"] == pytest.approx(math.log10(g["id_norm"] / g["min_gap"]), rel=1e-12)
    labels = inst.labels.reshape(-1)
    apart = [
        np.linalg.norm(out[i] - out[j])
        for i, j in itertools.combinations(range(len(out)), 2)
        if labels[i] != labels[j]
    ]
    assert g["min_gap_labels"] == pytest.approx(min(apart), rel=1e-12)
    assert g["min_gap_labels"] >= g["min_gap"]
    assert g["digits_labels"] == pytest.approx(
        math.log10(g["id_norm"] / g["min_gap_labels"]), rel=1e-12
    )


def test_constructed_geometry_follows_the_construction_constants():
    from lib.contextual import RankOneAttention

    inst = T.corollary1_instance(5, 3, 6, 4, 2, seed=2)
    g = T.constructed_geometry(inst)
    layer = RankOneAttention(inst.vocab, 3)
    gamma = (2 * math.log(3) + 3) / (layer.c_w**2 * layer.r_min * layer.eps)
    assert g["score_scale"] == pytest.approx(gamma, rel=1e-12)
    assert g["id_norm"] == pytest.approx(layer.r_max + layer.eps / 4, rel=1e-12)
    assert g["digits"] == pytest.approx(math.log10(g["id_norm"]) - g["log10_min_gap"], rel=1e-12)
    assert g["log10_ffn_scale"] == -g["log10_min_gap"] > 0


def test_phase_grid_cells_are_stored_and_read_back(monkeypatch, tmp_path):
    """A tiny full-mode grid: each cell computed once, stored, then read in a build without
    computing; the counts columns are capacity_counts' and a changed setting is stale."""
    from lib import runtime
    from lib.experiments import store

    tiny = {**T.PHASE_SETTINGS["full"], "Ns": [3, 5], "widths": [16], "seeds": [0],
            "tied": [False, True], "n": 2, "vocab_size": 4, "d": 4, "n_labels": 2,
            "epochs": 30, "arm": None}  # fmt: skip
    monkeypatch.setitem(T.PHASE_SETTINGS, "full", tiny)
    monkeypatch.setenv("BOOK_RESULTS", str(tmp_path))
    computed = T.phase_diagram("full", allow_compute=True)
    assert (
        len(computed) == 4
        and (tmp_path / "trained" / "phase-5-width-16-seed-0-tied.json").is_file()
    )
    assert computed[["N", "tied"]].values.tolist() == [[3, False], [5, False], [3, True], [5, True]]
    for _, row in computed.iterrows():
        assert row["corollary1"] == T.capacity_counts(2, row["N"], 4)["corollary1"]
        assert 0.0 <= row["fraction"] <= 1.0 and row["epochs"] <= 30
    monkeypatch.setattr(runtime, "IN_BUILD", True)
    read = T.phase_diagram("full")
    pd.testing.assert_frame_equal(read, computed)
    monkeypatch.setitem(T.PHASE_SETTINGS, "full", {**tiny, "lr": 2e-2})
    with pytest.raises(store.StaleResultError):
        T.phase_diagram("full")
    run, settings = T.phase_run_settings(5, 16, 0, True, "full")
    assert run == "phase-5-width-16-seed-0-tied" and settings["tied"] is True
    with pytest.raises(ValueError, match="mode"):
        T.phase_run_settings(5, 16, 0, True, "slow")


def test_geometry_refuses_a_model_of_another_instance_and_keeps_its_mode():
    small = T.corollary1_instance(5, 3, 6, 4, 2, seed=2)
    other = T.corollary1_instance(5, 3, 6, 8, 2, seed=2)
    model = T.tagger(small, 8)
    model.train()
    T.trained_geometry(model, small)
    assert model.training  # measured in eval mode, left as it was
    with pytest.raises(ValueError, match="built for inst"):
        T.trained_geometry(model, other)
    bad = T.Corollary1Instance(small.vocab, small.ids + 10, small.labels, 2, 0)
    with pytest.raises(ValueError, match="inst must hold"):
        T.instance_hypotheses(bad)
    with pytest.raises(ValueError, match="N"):
        T.phase_run_settings(1821, 8, 0, False, "full")  # binom(16, 4) = 1820


def test_the_arm_trains_its_widths_again_with_a_cosine_fall(monkeypatch):
    """The arm's cells follow the grid's, at the arm's widths only, under names ending in
    -cosine; their rate falls along half a cosine from lr to final_lr (fit's history)."""
    tiny = {**T.PHASE_SETTINGS["fast"], "Ns": [3], "widths": [4, 16], "seeds": [0],
            "tied": [False], "n": 2, "vocab_size": 4, "d": 4, "n_labels": 2, "epochs": 5,
            "arm": {"widths": [16], "lr": 3e-2, "final_lr": 1e-4}}  # fmt: skip
    monkeypatch.setitem(T.PHASE_SETTINGS, "fast", tiny)
    assert T.phase_cells("fast") == [
        (3, 4, 0, False, False),
        (3, 16, 0, False, False),
        (3, 16, 0, False, True),
    ]
    name, settings = T.phase_run_settings(3, 16, 0, False, "fast", True)
    assert name == "phase-3-width-16-seed-0-cosine"
    assert (settings["lr"], settings["final_lr"], settings["schedule"]) == (3e-2, 1e-4, "cosine")
    inst = T.corollary1_instance(3, 2, 4, 4, 2, seed=0)
    run = T.memorise(inst, 16, epochs=5, lr=3e-2, final_lr=1e-4, schedule="cosine")
    assert not run.memorised and len(run.history) == 5  # all five epochs: the whole fall
    rates = run.history["lr"].to_numpy()
    assert rates[0] == pytest.approx(3e-2) and rates[-1] == pytest.approx(1e-4, rel=1e-6)
    # half a cosine: halfway through, the mean of the two rates
    assert rates[2] == pytest.approx((3e-2 + 1e-4) / 2, rel=1e-9)
    monkeypatch.setitem(T.PHASE_SETTINGS, "fast", {**tiny, "arm": None})
    with pytest.raises(ValueError, match="has no arm"):
        T.phase_run_settings(3, 16, 0, False, "fast", True)
