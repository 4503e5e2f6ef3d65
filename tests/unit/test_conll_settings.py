"""lib.experiments.conll_settings: the CoNLL-2003 experiment's configurations, their labels and
the runs each mode trains."""

import pytest

from lib.experiments import conll_settings


def test_configurations_have_one_label_and_one_stored_name():
    """The pages' label and make bench's stored key of a configuration, each written once."""
    assert conll_settings.config_label(1, 1) == "rank 1, 1 layer"
    assert conll_settings.config_label(3, 1) == "rank 1, 3 layers"
    assert conll_settings.config_label(1, None) == "full rank, 1 layer"
    assert conll_settings.bench_name(6, 1) == "6 layers, rank 1"
    assert conll_settings.bench_name(1, None) == "1 layer, rank full"
    # the stored bench file holds exactly the names bench_name gives its four models
    from lib.experiments import store

    models = store.read("bench", "training").result["models"]
    assert set(models) == {
        conll_settings.bench_name(L, r) for L, r in [(1, 1), (3, 1), (6, 1), (1, None)]
    }
    for bad, match in [((0, 1), "n_layers"), ((1, 0), "rank"), ((1.5, 1), "n_layers")]:
        with pytest.raises(ValueError, match=match):
            conll_settings.config_label(*bad)
        with pytest.raises(ValueError, match=match):
            conll_settings.bench_name(*bad)


def test_live_runs_follow_each_modes_settings():
    """Fast mode trains one rank-1 layer only; full mode every depth at rank 1, then the
    full-rank layer; make full's fast plan asks for the same runs."""
    from lib.experiments import conll_settings, tasks

    assert conll_settings.live_runs("fast") == [(1, 1)]
    assert conll_settings.live_runs("full") == [(1, 1), (3, 1), (6, 1), (1, None)]
    fast = tasks.plan("fast", datasets=[], root="/nonexistent-results")
    assert [t.label for t in fast] == ["conll layers-1-rank-1"]
    with pytest.raises(ValueError, match="mode"):
        conll_settings.live_runs("slow")
