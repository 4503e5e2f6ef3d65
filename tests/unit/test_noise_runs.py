"""lib.experiments.noise.runs: one run of the noise experiment of LHSL Appendix B trained and
measured, its snapshots, and the epochs the pilot sets."""

import pytest

from lib.experiments import noise


def test_noise_experiment_runs_and_reports_norms():
    settings = {
        **noise.NOISE_SETTINGS["fast"],
        "train_images": 256,
        "test_images": 200,
        "epochs": 1,
    }
    row = noise.noise_experiment("mnist", "label", 0.2, 0, **settings)
    assert set(row) >= {
        "w_k_spectral",
        "w_k_frobenius",
        "w_q_spectral",
        "w_q_frobenius",
        "train_acc",
        "test_acc",
    }
    assert 0 < row["w_k_spectral"] <= row["w_k_frobenius"]
    assert 0.0 <= row["test_acc"] <= 1.0 and row["level"] == 0.2
    again = noise.noise_experiment("mnist", "label", 0.2, 0, **settings)
    assert again["w_k_frobenius"] == row["w_k_frobenius"]  # deterministic for a seed


def test_run_epochs_reads_the_pilot_and_refuses_other_words(monkeypatch):
    fast = noise.NOISE_SETTINGS["fast"]
    assert noise.run_epochs("mnist", fast) == fast  # a number is kept
    pilot = type("Stored", (), {"result": {"epochs": 42}})()
    monkeypatch.setattr(noise.runs, "noise_pilot", lambda dataset, allow_compute=None: pilot)
    assert noise.run_epochs("mnist", noise.NOISE_SETTINGS["full"])["epochs"] == 42
    with pytest.raises(ValueError, match="'pilot'"):
        noise.run_epochs("mnist", {**fast, "epochs": "converged"})


def test_snapshots_must_lie_within_the_run():
    settings = {**noise.NOISE_SETTINGS["fast"], "train_images": 64, "test_images": 50}
    with pytest.raises(ValueError, match="snapshots"):
        noise.noise_experiment("mnist", "label", 0.0, 0, **settings | {"snapshots": [6]})
    with pytest.raises(ValueError, match="snapshots must be a list"):
        noise.noise_experiment("mnist", "label", 0.0, 0, **settings | {"snapshots": 3})
    with pytest.raises(ValueError, match="at must be one of the snapshot epochs"):
        noise.noise_runs("mnist", "fast", at=10)


def test_noise_experiment_with_a_relu_head_and_a_falling_rate():
    settings = {**noise.NOISE_SETTINGS["fast"], "train_images": 128, "test_images": 100,
                "epochs": 2, "head_width": 16, "final_lr": 1e-4}  # fmt: skip
    row = noise.noise_experiment("mnist", "label", 0.5, 0, **settings)
    plain = noise.noise_experiment("mnist", "label", 0.5, 0, **settings | {"head_width": None})
    assert row["w_k_spectral"] != plain["w_k_spectral"] and 0.0 <= row["train_acc"] <= 1.0
