"""make full's projection (tools/projection.py): the list scheduling it simulates, the batch sizes
it scales, and the stored projection against today's plan."""

from __future__ import annotations

import importlib.util
import random
import sys
from pathlib import Path

import pytest

from lib.experiments import store, tasks

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def projection():
    spec = importlib.util.spec_from_file_location("projection", ROOT / "tools" / "projection.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["projection"] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def stored():
    return store.read("bench", "projection", remedy="make bench --projection-only").result


def test_schedule_hands_each_task_to_the_first_free_worker(projection):
    # by hand: 5 | 4, then 3 joins the 4 (7), 3 the 5 (8), 3 the 7 (10)
    assert projection.schedule([5, 4, 3, 3, 3], 2) == 10
    assert projection.schedule([5, 4, 3, 3, 3], 1) == 18
    assert projection.schedule([5, 4, 3, 3, 3], 9) == 5
    rng = random.Random(0)
    for _ in range(200):  # Graham's bounds of list scheduling
        costs = [rng.uniform(0, 10) for _ in range(rng.randint(1, 30))]
        w = rng.randint(1, 4)
        wall = projection.schedule(costs, w)
        assert max(sum(costs) / w, max(costs)) - 1e-9 <= wall <= sum(costs) / w + max(costs)


def test_an_untimed_batch_is_scaled_from_the_nearest_timed_one(projection):
    times = {"noise": {"1": {"epoch_s": 2.0, "setup_s": 4.0}, "14": {"epoch_s": 28.0,
                                                                    "setup_s": 14.0}}}  # fmt: skip
    assert projection._interpolated(times, 13) == {"epoch_s": 26.0, "setup_s": 13.0}
    assert projection._interpolated(times, 3) == {"epoch_s": 6.0, "setup_s": 12.0}


def test_the_stored_projection_is_todays_plan_costed_by_its_own_measurements(projection, stored):
    """Recomputed from its stored epoch times with today's plan and stored epochs, each path's
    projection is the stored one: a changed setting or run list makes the stored one stale."""
    for name, path in stored["paths"].items():
        again = projection.project(
            path["times"], path["noise_batch"], stored["workers"], path["order"]
        )
        assert [t["label"] for t in again["tasks"]] == [t["label"] for t in path["tasks"]]
        assert again["wall_s"] == pytest.approx(path["wall_s"], rel=1e-12), name
    assert stored["ratio"] == pytest.approx(
        stored["paths"]["old"]["wall_s"] / stored["paths"]["new"]["wall_s"], rel=1e-12
    )
    assert stored["paths"]["new"]["noise_batch"] == tasks.NOISE_BATCH
    assert stored["paths"]["old"]["noise_batch"] == projection.PROJECTION["old_noise_batch"]
    for name, path in stored["paths"].items():  # each path as PATHS defines it
        assert path["order"] == projection.PATHS[name]["order"]
        assert path["commit"] == projection.PATHS[name]["commit"]
        assert path["environ"] == projection.path_environ(name)


def test_the_old_path_spawns_workers_as_its_commit_did(projection):
    """Commit 4b8d492's make_client set ``distributed.nanny.pre-spawn-environ`` to its three
    thread counts, which replaces Dask's defaults whole (``dask.config.set`` does not merge a
    dict): its workers never had ``MALLOC_TRIM_THRESHOLD_``. Today's path keeps Dask's other
    defaults."""
    import dask
    import distributed  # noqa: F401  (loads distributed's configuration defaults)

    env = {name: "1" for name in ("BOOK_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    with dask.config.set({"distributed.nanny.pre-spawn-environ": env}):
        assert dask.config.get("distributed.nanny.pre-spawn-environ") == env
    assert projection.path_environ("old") == env
    assert "MALLOC_TRIM_THRESHOLD_" not in projection.path_environ("old")
    assert projection.path_environ("new") == tasks.worker_environ(1)


def test_the_old_path_hands_tasks_out_in_plan_order(projection, stored):
    old = stored["paths"]["old"]
    costs = [t["seconds"] for t in old["tasks"]]
    assert old["wall_s"] == pytest.approx(
        old["pilots_s"] + projection.schedule(costs, stored["workers"]), rel=1e-12
    )
    with pytest.raises(ValueError, match="order"):
        projection.project(old["times"], old["noise_batch"], stored["workers"], "random")


def test_every_run_kind_of_make_full_was_timed(projection, stored):
    kinds = set(projection._conll_kinds())
    for path in stored["paths"].values():
        assert set(path["times"]["conll"]) == kinds
        for row in path["times"]["conll"].values():
            assert row["epoch_s"] > 0 and row["validation_s"] >= 0 and row["setup_s"] >= 0
    assert set(stored["paths"]["new"]["times"]["noise"]) == {
        str(k) for k in projection.PROJECTION["noise_batches"]
    }


def test_the_readme_states_the_stored_projection(stored):
    """The README's "about N hours" of make full from nothing is the stored projection, rounded."""
    import re

    words = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
    said = re.search(
        r"From nothing stored it takes about (\w+) hours", (ROOT / "README.md").read_text()
    )
    assert said is not None
    assert words[said.group(1)] == round(stored["paths"]["new"]["wall_s"] / 3600)
