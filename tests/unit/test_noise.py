"""lib.experiments.noise: the noise experiment of LHSL Appendix B (settings, one run, the trend
test)."""

import numpy as np
import pandas as pd
import pytest

from lib.experiments import noise

# Three lines in the plane: y1 = x1, y2 = x2, y3 = 0.5 (hand-computed points below).
A3 = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]])
B3 = np.array([0.0, 0.0, 0.5])


def target(p):
    return np.sin(2 * np.pi * p[:, 0]) * np.cos(2 * np.pi * p[:, 1])


def test_trend_test_on_known_orderings():
    levels = np.repeat([0.0, 0.1, 0.2, 0.3], 3)
    rho, p = noise.trend_test(levels, -levels + 0.001 * np.tile([0, 1, 2], 4))
    # direct Spearman: Pearson correlation of average ranks (ties share ranks)
    rx = pd_rank(levels)
    ry = pd_rank(-levels + 0.001 * np.tile([0, 1, 2], 4))
    assert rho == pytest.approx(np.corrcoef(rx, ry)[0, 1], abs=1e-12)
    assert p < 0.01
    rho_up, p_up = noise.trend_test(levels, levels)
    assert rho_up == pytest.approx(1.0) and p_up > 0.99  # a rise is no evidence of a decline
    # a perfectly decreasing sequence of 5 distinct levels: p = P(rho_perm = -1) = 1/120
    # (+ resolution)
    rho5, p5 = noise.trend_test(np.arange(5.0), -np.arange(5.0), permutations=100_000)
    assert rho5 == pytest.approx(-1.0) and p5 == pytest.approx(1 / 120, rel=0.15)
    with pytest.raises(ValueError, match="must not be constant"):
        noise.trend_test(np.ones(4), np.arange(4.0))
    with pytest.raises(ValueError, match="one length"):
        noise.trend_test(np.arange(4.0), np.arange(3.0))


def pd_rank(a):
    return pd.Series(a).rank().to_numpy()


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
    monkeypatch.setattr(noise, "noise_pilot", lambda dataset, allow_compute=None: pilot)
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


# --- validation and sizes -----------------------------------------------------------------------


def sine(p):
    return np.prod(np.sin(np.pi * p), axis=1)


def test_sharpness_trends_tests_the_direction_that_contradicts_the_partition_reading():
    """Entropy falling and ||W_Q^T W_K|| rising with the level: small p for both; the opposite
    trends: p near 1; the changes are the seed means' ratios less 1 (closed form)."""
    import pandas as pd

    from lib.experiments import noise

    levels = [0.0, 0.0, 0.25, 0.25, 0.5, 0.5, 1.0, 1.0]
    ent = [2.0, 2.0, 1.5, 1.5, 1.0, 1.0, 0.5, 0.5]
    qk = [1.0, 1.0, 2.0, 2.0, 3.0, 3.0, 4.0, 4.0]
    runs = pd.DataFrame(
        {"dataset": "d", "kind": "label", "level": levels, "entropy": ent, "qk_spectral": qk}
    )
    got = noise.sharpness_trends(runs).loc[("d", "label")]
    assert got["entropy p"] < 0.05 and got["QK p"] < 0.05
    assert got["entropy change"] == pytest.approx(0.5 / 2.0 - 1)
    assert got["QK change"] == pytest.approx(4.0 / 1.0 - 1)
    smoother = runs.assign(entropy=ent[::-1], qk_spectral=qk[::-1])
    back = noise.sharpness_trends(smoother).loc[("d", "label")]
    assert back["entropy p"] > 0.5 and back["QK p"] > 0.5
    with pytest.raises(ValueError, match="columns"):
        noise.sharpness_trends(runs.drop(columns="entropy"))


def _runs():
    """Two kinds of noise, three seeds: "a" falls at every level, "b" rises under pixel noise."""
    rows = []
    for kind, levels in (("label", [0.0, 0.2, 0.4]), ("input", [0.0, 0.5, 1.0])):
        for i, level in enumerate(levels):
            for seed in range(3):
                b = 1.0 + (0.1 * i if kind == "input" else -0.1 * i)
                rows.append(
                    {"dataset": "d", "kind": kind, "level": level, "seed": seed,
                     "a": 2.0 - i + 0.01 * seed, "b": b + 0.01 * seed}
                )  # fmt: skip
    return pd.DataFrame(rows)


def test_norm_trends_per_experiment_against_trend_test_and_the_seed_means():
    runs = _runs()
    t = noise.norm_trends(runs, ["a", "b"])
    assert list(t.index.names) == ["dataset", "kind", "norm"] and len(t) == 4
    g = runs[runs.kind == "input"]
    rho, p = noise.trend_test(g.level, g["b"])
    assert (t.loc[("d", "input", "b"), "rho"], t.loc[("d", "input", "b"), "p"]) == (rho, p)
    assert t.loc[("d", "label", "a"), "monotone"] and not t.loc[("d", "input", "b"), "monotone"]
    # the seed means of "a" go 2.01 -> 0.01 over the levels, of "b" under pixel noise 1.01 -> 1.21
    assert t.loc[("d", "label", "a"), "fall"] == pytest.approx(0.01 / 2.01)
    assert t.loc[("d", "input", "b"), "fall"] == pytest.approx(1.21 / 1.01)
    with pytest.raises(ValueError, match="columns"):
        noise.norm_trends(runs, ["missing"])
    with pytest.raises(ValueError, match="non-empty"):
        noise.norm_trends(runs, [])


def test_curves_by_kind_counts_in_the_chapters_order():
    t = noise.norm_trends(_runs(), ["a", "b"])
    assert noise.curves_by_kind(t.monotone) == {
        "label": {"k": 2, "n": 2},
        "input": {"k": 1, "n": 2},
    }
    assert list(noise.curves_by_kind(t.fall > 1)) == ["label", "input"]  # not sorted
    assert noise.curves_by_kind(t.fall > 1, nonzero=True) == {"input": {"k": 1, "n": 2}}
    with pytest.raises(ValueError, match="boolean Series"):
        noise.curves_by_kind(t.fall)


def test_epochs_case():
    assert noise.epochs_case({"mnist": 5, "fashion-mnist": 5}) == "same"
    assert noise.epochs_case({"mnist": 90, "fashion-mnist": 73}) == "per_dataset"
    with pytest.raises(ValueError, match="non-empty mapping"):
        noise.epochs_case({})


def test_seed_stats_are_the_seed_means_and_deviations_per_level():
    stats = noise.seed_stats(_runs(), ["a", "b"])
    assert list(stats.index.names) == ["dataset", "kind", "level"] and len(stats) == 6
    label = stats.loc[("d", "label")]
    np.testing.assert_allclose(label[("a", "mean")], [2.01, 1.01, 0.01])
    np.testing.assert_allclose(label[("a", "std")], [0.01] * 3)  # seeds 0.00, 0.01, 0.02
    np.testing.assert_allclose(stats.loc[("d", "input"), ("b", "mean")], [1.01, 1.11, 1.21])
    with pytest.raises(ValueError, match="columns"):
        noise.seed_stats(_runs(), [])
    with pytest.raises(ValueError, match="columns"):
        noise.seed_stats(_runs(), "a")
    with pytest.raises(ValueError, match="lacks the columns"):
        noise.seed_stats(_runs(), ["c"])
    with pytest.raises(ValueError, match="DataFrame"):
        noise.seed_stats({"a": [1.0]}, ["a"])


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


def test_factorial_and_memorising_run_keys(monkeypatch):
    """A row's settings take each factor's fast or full value by its sign (the full epochs from
    the dataset's pilot); the memorising arm's keys add its head width and falling rate."""
    monkeypatch.setattr(
        noise,
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


def test_noise_experiment_with_a_relu_head_and_a_falling_rate():
    settings = {**noise.NOISE_SETTINGS["fast"], "train_images": 128, "test_images": 100,
                "epochs": 2, "head_width": 16, "final_lr": 1e-4}  # fmt: skip
    row = noise.noise_experiment("mnist", "label", 0.5, 0, **settings)
    plain = noise.noise_experiment("mnist", "label", 0.5, 0, **settings | {"head_width": None})
    assert row["w_k_spectral"] != plain["w_k_spectral"] and 0.0 <= row["train_acc"] <= 1.0


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
