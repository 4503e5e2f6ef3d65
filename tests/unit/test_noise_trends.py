"""lib.experiments.noise.trends: the trend test of check C19 and the tables built on it (the
norms' trends, the sharpness controls, the counts per kind of noise, the seed statistics)."""

import numpy as np
import pandas as pd
import pytest

from lib.experiments import noise


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
