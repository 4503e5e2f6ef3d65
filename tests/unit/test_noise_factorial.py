"""lib.experiments.noise.factorial: the factorial between fast and full mode's settings (its
design, run keys, response, main effects and yardstick)."""

import numpy as np
import pandas as pd
import pytest

from lib.experiments import noise


def test_factorial_design_is_balanced_and_its_main_effects_orthogonal():
    """Each factor is at each level in four of the eight rows and any two factors' columns are
    orthogonal (the main effects are estimated independently of each other); the full corner
    (every factor at its full level) is a row."""
    import numpy as np

    rows = noise.factorial_design()
    signs = np.array([[r[f] for f in noise.FACTORIAL["factors"]] for r in rows])
    assert signs.shape == (8, 5) and set(np.unique(signs)) == {-1, 1}
    assert (signs.sum(axis=0) == 0).all()
    gram = signs.T @ signs
    assert (gram == 8 * np.eye(5, dtype=int)).all()
    assert len({tuple(r) for r in signs}) == 8 and [1] * 5 in signs.tolist()


def test_factorial_run_keys(monkeypatch):
    """A row's settings take each factor's fast or full value by its sign (the full epochs from
    the dataset's pilot)."""
    monkeypatch.setattr(
        noise.runs,
        "noise_pilot",
        lambda ds, allow_compute=None: type("S", (), {"result": {"epochs": 7}}),
    )
    for row, signs in enumerate(noise.factorial_design()):
        run, s = noise.factorial_run_key("mnist", row, 0.5)
        assert run == f"factorial-{row}-mnist-label-0.5-seed-0" and s["row"] == row
        for f, sign in signs.items():
            fast, full = noise.FACTORIAL["factors"][f]
            want = (7 if full == "pilot" else full) if sign > 0 else fast
            assert s[f] == want
    with pytest.raises(ValueError, match="row"):
        noise.factorial_run_key("mnist", 8, 0.5)


def test_noise_response_and_main_effects_recover_a_known_linear_model():
    """Runs whose norms at r = 0.5 are exp(3 s_images + s_epochs + 0.5) times those at r = 0
    (s the design row's signs) have that exponent as their response, and main effects of twice
    the coefficients on those two factors and 0 on the other three (the design is orthogonal)."""
    design = noise.factorial_design()
    rows = []
    for row, signs in enumerate(design):
        exponent = 3 * signs["train_images"] + signs["epochs"] + 0.5
        for level, scale in ((0.0, 1.0), (0.5, np.exp(exponent))):
            rows.append({"row": row, "level": level, "a": 2.0 * scale, "b": 5.0 * scale})
    runs = pd.DataFrame(rows)
    response = noise.noise_response(runs, ["a", "b"], by="row")
    want = [3 * s["train_images"] + s["epochs"] + 0.5 for s in design]
    assert response.name == "response" and list(response.index) == list(range(8))
    np.testing.assert_allclose(response.to_numpy(), want, rtol=1e-12)
    effects = noise.main_effects(response)
    assert list(effects.index) == list(noise.FACTORIAL["factors"])
    np.testing.assert_allclose(effects.to_numpy(), [6.0, 2.0, 0.0, 0.0, 0.0], atol=1e-12)
    # a response that mixes two measures is their mean log-ratio
    runs.loc[(runs.row == 0) & (runs.level == 0.5), "b"] *= np.e**2
    assert noise.noise_response(runs, ["a", "b"], by="row")[0] == pytest.approx(want[0] + 1)


def test_noise_response_and_main_effects_refuse_what_they_cannot_read():
    runs = pd.DataFrame({"seed": [0, 0, 1], "level": [0.0, 0.5, 0.0], "a": [1.0, 2.0, 1.0]})
    with pytest.raises(ValueError, match="exactly one run"):
        noise.noise_response(runs, ["a"], by="seed")
    with pytest.raises(ValueError, match="lacks the columns"):
        noise.noise_response(runs, ["b"], by="seed")
    with pytest.raises(ValueError, match="columns"):
        noise.noise_response(runs, [], by="seed")
    with pytest.raises(ValueError, match="two noise levels"):
        noise.noise_response(runs[runs.level == 0], ["a"], by="seed")
    bad = pd.DataFrame({"seed": [0, 0], "level": [0.0, 0.5], "a": [0.0, 1.0]})
    with pytest.raises(ValueError, match="finite and positive"):
        noise.noise_response(bad, ["a"], by="seed")
    with pytest.raises(ValueError, match="DataFrame"):
        noise.noise_response({"a": 1}, ["a"], by="seed")
    with pytest.raises(ValueError, match="design rows"):
        noise.main_effects(pd.Series([1.0, 2.0]))
    with pytest.raises(ValueError, match="responses"):
        noise.main_effects(pd.Series([float("nan")] * 8))


def test_effect_yardstick_is_students_critical_value_times_the_standard_error():
    """With k seeds the threshold is t_{0.975, k-1} s / sqrt(2): for one degree of freedom t is
    tan(0.475 pi) = 12.706..., for two it is 0.95 sqrt(2 / (4 0.975 0.025)) = 4.3027...
    (closed forms of Student's quantile), and for many it approaches the normal 1.96."""
    two = np.array([0.0, 1.0])  # s = 1/sqrt(2)
    want1 = np.tan(0.475 * np.pi) * (1 / np.sqrt(2)) / np.sqrt(2)
    assert noise.effect_yardstick(two) == pytest.approx(want1, rel=1e-10)
    three = np.array([0.796, 0.851, 0.635])
    t2 = 0.95 * np.sqrt(2 / (4 * 0.975 * 0.025))
    want2 = t2 * np.std(three, ddof=1) / np.sqrt(2)
    assert noise.effect_yardstick(three) == pytest.approx(want2, rel=1e-10)
    many = np.random.default_rng(0).normal(size=4001)
    assert noise.effect_yardstick(many) / (np.std(many, ddof=1) / np.sqrt(2)) == pytest.approx(
        1.96, abs=2e-3
    )
    for bad, match in [([1.0], "seed_responses"), ([1.0, 1.0], "seed_responses"),
                       ([1.0, float("nan")], "seed_responses")]:  # fmt: skip
        with pytest.raises(ValueError, match=match):
            noise.effect_yardstick(bad)
    for level in (0, 1, 1.5, float("nan")):
        with pytest.raises(ValueError, match="level"):
            noise.effect_yardstick(two, level=level)
