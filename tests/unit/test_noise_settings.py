"""lib.experiments.noise.settings: the noise experiment's settings per mode, its datasets and
the settings of its pilot."""

import pytest

from lib.experiments import noise


def test_noise_settings_and_bad_arguments():
    for mode in ("fast", "full"):
        s = noise.NOISE_SETTINGS[mode]
        assert (
            s["label_ratios"][0] == 0.0
            and max(s["label_ratios"]) < 1
            and s["input_sigmas"][0] == 0.0
        )
        assert len(s["seeds"]) >= 3
    with pytest.raises(ValueError, match="dataset must be one of"):
        noise.noise_runs("svhn", "fast")
    with pytest.raises(ValueError, match="mode must be one of"):
        noise.noise_runs("mnist", "slow")
    with pytest.raises(ValueError, match="kind must be"):
        noise.noise_experiment("mnist", "blur", 0.1, 0, **noise.NOISE_SETTINGS["fast"])


def test_the_pilot_settings_are_full_modes_clean_run():
    s = noise.pilot_settings("mnist")
    full = noise.NOISE_SETTINGS["full"]
    assert s["pilot"] == noise.PILOT and (s["kind"], s["level"], s["seed"]) == ("label", 0.0, 0)
    assert all(s[k] == full[k] for k in noise.RUN_KEYS if k not in ("epochs", "snapshots"))
    assert full["epochs"] == "pilot" and full["snapshots"] == [10]


def test_noise_datasets_follow_book_cifar10(monkeypatch, tmp_path):
    monkeypatch.delenv("BOOK_CIFAR10", raising=False)
    assert noise.noise_datasets() == ["mnist", "fashion-mnist"]
    monkeypatch.setenv("BOOK_CIFAR10", str(tmp_path))  # set, but no batch files
    with pytest.raises(ValueError, match="BOOK_CIFAR10"):
        noise.noise_datasets()
