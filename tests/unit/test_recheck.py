"""The stored paper-scale results are re-checkable: their first epochs recomputed here match them.

`make full` stores each run's per-epoch history (results/, lib.experiments.store). These tests
retrain the first epochs of two stored runs with the stored settings and the current code and
compare them with the stored history. A change in lib that alters what an experiment computes,
without raising its code version, fails here instead of leaving a stale result on the page.

Tolerance. Each recomputation uses the thread count that stored its run (the provenance's
``threads``): on that machine it then repeats the run bit for bit, and CI runs on that machine
(with another thread count, float32 sums in another order, which SGD with momentum at a large
rate amplifies past the tolerance within one epoch). Another CPU may sum float32
products in another order (other vector widths in the BLAS kernels): the differences start in the
last bits of the first step and grow with every Adam step, but after one or two epochs they move
the accuracy by a few tokens or images. So accuracies must agree to 1e-3 (about 200 of CoNLL's
203,621 tokens, or 60 of MNIST's 60,000 images) and mean losses to a relative 1e-3; a real change
of the code (another initialisation, batch order, learning rate or model) moves them by far more.
A run stored on another device (a GPU) is compared only on that device.
"""

import numpy as np
import pandas as pd
import pytest
import torch

from lib import runtime, training
from lib.experiments import conll, noise, store

ACC_TOL, LOSS_RTOL = 1e-3, 1e-3


@pytest.fixture(autouse=True)
def _restore_threads():
    """:func:`stored_run` sets the stored run's thread count; the next test gets the book's."""
    threads = torch.get_num_threads()
    yield
    torch.set_num_threads(threads)


def stored_run(experiment: str, run: str) -> store.StoredRun:
    """The stored run, with torch set to the thread count that computed it."""
    stored = store.read(experiment, run)  # fails, naming make full, when the file is missing
    torch.set_num_threads(stored.provenance["threads"])
    if stored.provenance["machine"]["device"] != str(runtime.DEVICE):
        pytest.skip(
            f"{experiment}/{run} was stored on {stored.provenance['machine']['device']}, "
            f"this run uses {runtime.DEVICE}"
        )
    return stored


def assert_history_matches(recomputed: dict, stored: dict, epochs: int) -> None:
    for column, tol in (("train_acc", {"abs": ACC_TOL}), ("loss", {"rel": LOSS_RTOL})):
        got, want = recomputed[column][:epochs], stored[column][:epochs]
        assert got == pytest.approx(want, **tol), f"{column}: recomputed {got}, stored {want}"


def test_first_two_epochs_of_the_stored_one_layer_conll_run():
    stored = stored_run("conll", "layers-1-rank-1")
    s = stored.settings
    train = conll.conll_subset("train", s["sentences"], s["seed"])
    valid = conll.conll_subset("validation", 20, s["seed"])  # scored once, not part of training
    rerun = conll.conll_experiment(
        train,
        valid,
        n_layers=s["n_layers"],
        rank=s["rank"],
        d=s["d"],
        batch_size=s["batch_size"],
        lr=s["lr"],
        epochs=2,
        eval_every=2,
        final_lr=s["final_lr"],  # None: constant, so two epochs of a longer run are these two
        seed=s["seed"],
        sparse_embedding=s["sparse_embedding"],
        unk_dropout=s["unk_dropout"],
        train_eval=s["train_eval"],
    )
    assert s["final_lr"] is None
    assert_history_matches(rerun.history.to_dict(orient="list"), stored.result["history"], 2)


@pytest.mark.parametrize(
    "run",
    [
        "described-grid-momentum-0-lr-0.3",
        "described-grid-momentum-0.9-lr-0.3",
        "described-fixed-seed-0",
    ],
)
def test_first_two_epochs_of_the_stored_described_runs(run):
    """The reviewers' model (tied head of size 1, SGD with clipping, without and with momentum)
    and its fixed-projection run: the first two epochs, recomputed from the stored settings."""
    stored = stored_run("conll", run)
    s = dict(stored.settings, epochs=2, eval_every=2, validation_sentences=20)
    rerun = conll.conll_compute(dict(s, mode="fast"))  # fast: no checkpoint of a 2-epoch run
    assert s["final_lr"] is None  # a constant rate: two epochs of the long run are these two
    assert_history_matches(rerun["history"], stored.result["history"], 2)
    if "construction" in stored.result:  # Theorem 2's constants, recomputed for the embeddings
        stored_constants = stored.result["construction"]
        tolerances = construction_tolerances(stored_constants, s["d"])
        for key, value in stored_constants.items():
            assert rerun["construction"][key] == pytest.approx(value, rel=tolerances[key]), key


def construction_tolerances(c: dict, d: int) -> dict:
    """How far two machines' :func:`lib.contextual.theorem2_projection` may differ.

    Each constant is within these relative bounds of its exact value on any machine, so two
    machines differ by at most twice them. The projections ``p = P w`` (``|w| = 1``) are float64
    dot products of length ``d``: each is off by at most ``gamma_d r_max`` (Higham's
    ``gamma_d = d u / (1 - d u)``), so ``c_w``, a minimum of ``|p_i - p_j| / |v_i - v_j|`` over
    pairs at distance ``>= eps``, is off by at most ``2 gamma_d r_max / eps`` absolutely; the
    distances come from the Gram identity, whose relative error the function bounds by 1e-6.
    ``gamma`` is ``lemma1_gap(n) / (c_w^2 r_min eps)``. The matrix products round differently on
    different processors, so a stored run's constants are reproduced to these bounds only.
    """
    u = np.finfo(np.float64).eps / 2
    gamma_d = d * u / (1 - d * u)
    gram = 1e-6
    rel_cw = 2 * gamma_d * c["r_max"] / (c["c_w"] * c["eps"]) + gram
    rel_eps = gram
    rel_norm = 2 * gamma_d
    one = {"c_w": rel_cw, "eps": rel_eps, "r_min": rel_norm, "r_max": rel_norm, "n": 0.0}
    one["gamma"] = 2 * rel_cw + rel_eps + rel_norm
    return {key: 2 * value for key, value in one.items()}


def test_first_epoch_of_a_stored_noise_run():
    stored = stored_run("noise", "mnist-label-0.2-seed-0")
    s = stored.settings
    assert len(stored.result["history"]["epoch"]) == s["epochs"] > max(s["snapshots"])
    run_settings = noise.run_keys(s) | {"epochs": 1, "snapshots": []}
    rerun = noise.noise_experiment(s["dataset"], s["kind"], s["level"], s["seed"], **run_settings)
    assert_history_matches(rerun["history"], stored.result["history"], 1)


@pytest.mark.parametrize("dataset", ["mnist", "fashion-mnist"])
def test_noise_pilot_stops_where_its_rule_says(dataset):
    """The stored pilot's own history, read again by a fresh stop rule: the rule fires at the
    pilot's last epoch and at none before, and the full runs train exactly that many epochs."""
    pilot = noise.noise_pilot(dataset, allow_compute=False).result
    history = pd.DataFrame(pilot["history"])
    p = noise.PILOT
    rule = training.StopRule(p["target"], p["window"], p["min_gain"])
    fired = [e for e in range(1, len(history) + 1) if rule(history.iloc[:e]) is not None]
    assert fired[:1] == [pilot["epochs"]] == [len(history)]
    runs = noise.noise_runs(dataset, "full", allow_compute=False)
    assert set(runs.epoch) == {pilot["epochs"]}


def test_the_stored_runs_are_those_of_the_current_settings():
    """Every run the book shows is stored for the current settings and code version (what a build
    would otherwise stop on)."""
    for layers, rank, seed, kind in conll.full_runs():
        run = conll.conll_run(layers, rank, "full", seed=seed, kind=kind, allow_compute=False)
        assert len(run.history) == run.history.epoch.iloc[-1]
        assert run.stopped is not None or len(run.history) == run.settings["epochs"]
    grid = conll.sgd_grid(allow_compute=False)
    assert all(len(r.history) == conll.SGD_GRID["epochs"] for r in grid.values())
    best = conll.sgd_best(allow_compute=False)
    assert len(best.history) == conll.SGD_GRID["best_epochs"]
    assert best.settings["lr"] == max(grid, key=lambda k: grid[k].train_acc)[1]
    for dataset in noise.NOISE_SETTINGS["full"]["datasets"]:
        runs = noise.noise_runs(dataset, "full", allow_compute=False)
        assert len(runs.attrs["provenance"]) == len(noise.noise_run_names("full"))
