"""lib.experiments.catalog: every experiment of make full declared once, planned, computed,
costed and reported through it."""

import json

import pytest

from lib.experiments import catalog, tasks

from conftest import ROOT


def test_the_catalog_holds_exactly_the_experiments_make_full_stores():
    stored = {p.name for p in (ROOT / "results").iterdir() if p.is_dir()}
    assert set(catalog.EXPERIMENTS) <= stored
    # what is stored besides: make bench's and make mutate's measurements, not make full's runs
    assert stored - set(catalog.EXPERIMENTS) == {"bench", "mutation"}


@pytest.mark.parametrize("name", ["trained", "lookup"])
def test_a_report_sums_the_stored_wall_times_of_its_runs(name):
    """The report's wall time of Chapter 7's experiments against the provenance of every file
    in their results folder, read directly."""
    files = sorted((ROOT / "results" / name).glob("*.json"))
    walls = [json.loads(f.read_text(encoding="utf8"))["provenance"]["wall_s"] for f in files]
    [(row, wall, line)] = catalog.EXPERIMENTS[name].report([])
    assert wall == pytest.approx(sum(walls), rel=1e-12)
    assert f"({len(files)} " in row and line


def test_costs_order_the_tasks_as_their_experiments_declare():
    conll = catalog.Task("c", "conll", 1, (), {"settings": {"epochs": 10}})
    noise = catalog.Task("n", "noise", 1, (("a", {}), ("b", {})), {"settings": {"epochs": 10}})
    grid = catalog.Task("t", "trained", 1, (), {"settings": {"epochs": 100, "N": 65}})
    lookup = catalog.Task("l", "lookup", 1, (), {"settings": {"epochs": 10, "m": 4, "samples": 5}})
    assert tasks.expected_seconds(conll) == 200.0  # 10 epochs x 20 s
    assert tasks.expected_seconds(noise) == 40.0  # 2 runs x 10 epochs x 2 s
    assert tasks.expected_seconds(grid) == pytest.approx(100 * 2 * 0.003)  # 2 batches of 64
    assert tasks.expected_seconds(lookup) == pytest.approx(10 * 16 * 5 * 4e-8)
    with pytest.raises(ValueError, match="task must be a Task of"):
        tasks.expected_seconds(catalog.Task("x", "unknown", 1))
