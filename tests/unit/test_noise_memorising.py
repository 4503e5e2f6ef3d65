"""lib.experiments.noise.memorising: the memorising arm's run keys."""

import pytest

from lib.experiments import noise


def test_memorising_run_keys():
    """The memorising arm's keys add its head width and falling rate."""
    run, s = noise.memorising_run_key("fashion-mnist", 0.3, 1)
    assert run == "memorising-fashion-mnist-label-0.3-seed-1"
    assert s["head_width"] == noise.MEMORISING_SETTINGS["head_width"] and s["arm"] == "memorising"
    assert s["final_lr"] < s["lr"] and s["level"] == 0.3
    for level, seed, match in [(float("nan"), 0, "level"), (1.0, 0, "level"), (0.5, -1, "seed"),
                               (0.5, "x", "seed")]:  # fmt: skip
        with pytest.raises(ValueError, match=match):
            noise.memorising_run_key("mnist", level, seed)
    with pytest.raises(ValueError, match="dataset"):
        noise.memorising_run_key("cifar10", 0.5, 0)
