"""lib.experiments.tasks: make full's runs planned, run on a 2-worker Dask LocalCluster, stored.

The runs are tiny noise runs on real MNIST (a few hundred images, one or two epochs). Workers
train with one torch thread, so the serial path here runs with one thread too: the stored results
are then the same to the last bit, whichever process computed them.
"""

import json
import os
import signal
import threading
import time

import pytest
import torch

from lib.experiments import catalog, noise, store, tasks

TINY = {
    "train_images": 256,
    "test_images": 100,
    "epochs": 1,
    "batch_size": 64,
    "lr": 3e-3,
    "d": 8,
    "qk_init": 0.1,
    "label_ratios": [0.0, 0.5],
    "input_sigmas": [0.5],
    "seeds": [0],
}


def tiny_plan(root, **kw):
    settings = {**TINY, **kw.pop("settings", {})}
    return tasks.plan(
        "fast", datasets=["mnist"], conll_runs=[], noise_settings=settings, root=root, **kw
    )


def stored_records(root):
    out = {}
    for path in sorted((root / "noise").glob("*.json")):
        record = json.loads(path.read_text())
        # what is measured about the machine rather than computed: the wall times
        record.pop("provenance"), record.pop("checksum"), record["result"].pop("seconds")
        out[path.name] = record
    return out


@pytest.fixture
def one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def client():
    env = {"BOOK_WORKERS": "2", "BOOK_THREADS": "1"}
    c = tasks.make_client(environ=env)
    yield c
    c.close()
    c.cluster.close()


def test_plan_batches_the_missing_runs_and_skips_the_stored_ones(tmp_path):
    plan = tiny_plan(tmp_path, noise_batch=2)
    assert [len(t.runs) for t in plan] == [2, 1]  # 3 runs: label 0, label 0.5, input 0.5
    names = [run for t in plan for run, _ in t.runs]
    assert names == ["mnist-label-0-seed-0", "mnist-label-0.5-seed-0", "mnist-input-0.5-seed-0"]
    # store the first task's runs: the plan keeps only the other one
    tasks.run_tasks(plan[:1], None, root=tmp_path, progress=False, echo=lambda _: None)
    again = tiny_plan(tmp_path, noise_batch=2)
    assert [[run for run, _ in t.runs] for t in again] == [["mnist-input-0.5-seed-0"]]
    # a changed setting makes every stored run stale
    assert sum(len(t.runs) for t in tiny_plan(tmp_path, settings={"epochs": 2})) == 3


def test_the_stored_full_runs_are_all_found():
    """The committed results/ hold every run of make full's current settings, under the keys the
    planner computes (a renamed run or a changed key would plan them all again)."""
    assert tasks.plan("full", datasets=noise.NOISE_SETTINGS["full"]["datasets"]) == []


def test_the_sgd_grid_is_planned_first_and_its_best_setting_once_the_grid_is_stored(tmp_path):
    """make full plans the six grid runs from nothing; with them stored, the long run of the
    grid's best setting, under the key sgd_best_settings computes; with it stored, nothing."""
    import shutil

    from lib.experiments import conll

    def planned(root):
        return [t for t in tasks.plan("full", datasets=[], root=root) if "described-" in t.label]

    grid = {conll.sgd_grid_settings(m, lr)[0] for m in conll.SGD_GRID["momenta"]
            for lr in conll.SGD_GRID["lrs"]}  # fmt: skip
    first = planned(tmp_path)
    labels = {t.label.removeprefix("conll ") for t in first}
    assert grid <= labels and "described-sgd-best" not in labels
    (tmp_path / "conll").mkdir()
    for run in grid:
        shutil.copy(store.RESULTS / "conll" / f"{run}.json", tmp_path / "conll")
    second = {t.label: t for t in planned(tmp_path)}
    best = second["conll described-sgd-best"]
    assert best.runs == (conll.sgd_best_settings(),)
    assert not grid & {label.removeprefix("conll ") for label in second}
    shutil.copy(store.RESULTS / "conll" / "described-sgd-best.json", tmp_path / "conll")
    assert "conll described-sgd-best" not in {t.label for t in planned(tmp_path)}


@pytest.mark.parametrize(
    "env, match",
    [
        ({"BOOK_WORKERS": "0"}, "BOOK_WORKERS='0': must be a whole number from 1"),
        ({"BOOK_WORKERS": "two"}, "BOOK_WORKERS='two': must be a whole number from 1"),
        ({"BOOK_WORKERS": str(4 * (os.cpu_count() or 1))}, "BOOK_WORKERS=.*this machine's cores"),
        ({"BOOK_WORKERS": "1", "BOOK_THREADS": str(2 * (os.cpu_count() or 1))}, "BOOK_THREADS="),
        (
            {"BOOK_WORKERS": str(os.cpu_count() or 1), "BOOK_THREADS": "2"},
            "oversubscribes|BOOK_THREADS='2'",
        ),
    ],
)
def test_cluster_shape_refuses_bad_or_oversubscribed_settings(env, match):
    with pytest.raises(ValueError, match=match):
        tasks.cluster_shape(env)


def test_a_scheduler_address_must_be_an_address():
    with pytest.raises(
        ValueError, match="BOOK_SCHEDULER='localhost': must be a Dask scheduler address"
    ):
        tasks.make_client(environ={"BOOK_SCHEDULER": "localhost"})


def test_the_local_scheduler_sends_a_worker_one_task_at_a_time(client):
    """Worker saturation 1.0: a one-thread worker holds one task, so a short list of long tasks
    cannot leave one worker idle while another still has a second queued."""
    saturation = client.run_on_scheduler(lambda dask_scheduler: dask_scheduler.WORKER_SATURATION)
    assert saturation == 1.0
    assert sorted(client.nthreads().values()) == [1, 1]
    # the book's thread settings are merged into Dask's own pre-spawn defaults, not in their
    # place, less the allocator's trim threshold (tasks.DROPPED_SPAWN_ENVIRON)
    seen = client.run(
        lambda: [os.environ.get(k) for k in ("MALLOC_TRIM_THRESHOLD_", "OPENBLAS_NUM_THREADS")]
    )
    assert all(v == [None, "1"] for v in seen.values()), seen


def test_worker_environ_drops_only_the_trim_threshold():
    import dask
    import distributed  # noqa: F401  (its configuration defaults)

    defaults = dask.config.get("distributed.nanny.pre-spawn-environ")
    assert defaults["MALLOC_TRIM_THRESHOLD_"] == 65536  # what Dask sets, and the book drops
    new, old = tasks.worker_environ(1), tasks.worker_environ(3, dask_defaults=True)
    assert set(old) - set(new) == {"MALLOC_TRIM_THRESHOLD_"}
    assert old["MALLOC_TRIM_THRESHOLD_"] == "65536" and old["MKL_NUM_THREADS"] == "3"
    assert new["OPENBLAS_NUM_THREADS"] == "1" and new["BOOK_THREADS"] == "1"
    for bad, match in ((0, "threads must be"), (1.5, "threads must be"), ("2", "threads must")):
        with pytest.raises(ValueError, match=match):
            tasks.worker_environ(bad)
    with pytest.raises(ValueError, match="dask_defaults"):
        tasks.worker_environ(1, dask_defaults="yes")


def test_the_trim_threshold_is_what_slows_the_allocation():
    """The measured cause of DROPPED_SPAWN_ENVIRON: with Dask's threshold, allocating and zeroing
    a 12 MB buffer (the dense gradient of the CoNLL-2003 tagger's embedding) page-faults it afresh
    each time; without, glibc reuses the freed pages. Counted, not timed: the minor page faults of
    200 allocations, in a process spawned with each environment."""
    import subprocess
    import sys

    code = (
        "import resource, torch\n"
        "torch.zeros(23625, 128)\n"
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt\n"
        "for _ in range(200):\n"
        "    torch.zeros(23625, 128)\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)\n"
    )
    faults = {}
    for name, environ in (
        ("book", tasks.worker_environ(1)),
        ("dask", tasks.worker_environ(1, dask_defaults=True)),
    ):
        env = {k: v for k, v in os.environ.items() if k not in tasks.DROPPED_SPAWN_ENVIRON}
        out = subprocess.run(
            [sys.executable, "-c", code], env={**env, **environ}, capture_output=True, text=True,
            check=True,
        )  # fmt: skip
        faults[name] = int(out.stdout)
    pages = 23625 * 128 * 4 // 4096  # one buffer's pages
    assert faults["dask"] >= 100 * pages, faults  # at least half the allocations fault afresh
    assert faults["book"] < 20 * pages, faults  # at most a tenth do (measured: 8 of 200)


def test_two_workers_store_what_the_serial_path_stores(tmp_path, client, one_thread):
    serial, dask_root = tmp_path / "serial", tmp_path / "dask"
    tasks.run_tasks(
        tiny_plan(serial, noise_batch=1)[:2], None, root=serial, progress=False, echo=lambda _: None
    )
    lines = []
    written = tasks.run_tasks(
        tiny_plan(dask_root, noise_batch=1)[:2],
        client,
        root=dask_root,
        progress=False,
        echo=lines.append,
    )
    assert len(written) == 2 and len(lines) == 2
    assert lines[0].startswith("noise/mnist-") and ": stored, " in lines[0]
    assert stored_records(dask_root) == stored_records(serial)
    workers = {s.provenance["worker"] for s in written}
    assert all(w.split(":")[1] != str(os.getpid()) for w in workers)  # computed elsewhere
    # and the stored runs are read back as the book reads them
    for s in written:
        assert store.read("noise", s.run, root=dask_root).result == s.result


def test_a_killed_worker_leaves_its_task_retried_and_stored_once(tmp_path, client, one_thread):
    settings = {"train_images": 10000, "epochs": 3}  # several seconds on one thread
    plan = tiny_plan(tmp_path / "dask", noise_batch=3, settings=settings)
    assert len(plan) == 1
    pids = client.run(os.getpid)  # worker address -> pid
    out, errors = {}, []

    def submit():
        try:
            out["stored"] = tasks.run_tasks(
                plan, client, root=tmp_path / "dask", progress=False, echo=lambda _: None
            )
        except Exception as exc:  # noqa: BLE001 (re-raised below, in the test's thread)
            errors.append(exc)

    thread = threading.Thread(target=submit)
    thread.start()
    killed = None
    deadline = time.monotonic() + 120
    while killed is None and time.monotonic() < deadline:
        busy = [w for w, keys in client.processing().items() if keys]
        if busy:
            time.sleep(1.0)  # mid-run: the task takes several seconds on one thread
            killed = pids[busy[0]]
            os.kill(killed, signal.SIGKILL)
        time.sleep(0.05)
    thread.join(timeout=600)
    assert killed is not None and not thread.is_alive()
    assert not errors, errors
    stored = out["stored"]
    assert len(stored) == 3  # each run stored once
    assert all(s.provenance["worker"].split(":")[1] != str(killed) for s in stored)
    serial = tmp_path / "serial"
    tasks.run_tasks(
        tiny_plan(serial, noise_batch=3, settings=settings),
        None,
        root=serial,
        progress=False,
        echo=lambda _: None,
    )
    assert stored_records(tmp_path / "dask") == stored_records(serial)


def test_the_noise_batch_is_the_one_make_bench_measured_best():
    """NOISE_BATCH is chosen by measurement at make full's own shape: the stored projection's
    batch with the fewest seconds per run-epoch on the new path."""
    measured = store.read("bench", "projection", remedy="make bench --projection-only").result
    noise_times = measured["paths"]["new"]["times"]["noise"]
    best = min(noise_times, key=lambda k: noise_times[k]["epoch_s"] / int(k))
    assert measured["best_noise_batch"] == int(best)
    assert tasks.NOISE_BATCH == measured["best_noise_batch"]
    # the short trial at another shape keeps its own best (shown beside it on the page)
    trial = store.read("bench", "batched", remedy="make bench").result
    runs = trial["trial"]
    assert trial["best_batch"] == int(max(runs, key=lambda k: runs[k]["run_epochs_per_s"]))


def _refuse(*args, **kwargs):
    raise AssertionError("computed a run that was already stored")


def test_a_task_whose_runs_are_stored_returns_them_at_once(tmp_path, monkeypatch, one_thread):
    """Rerun by the scheduler after a worker died, or finished by another make full: a stored run
    is read back, not trained again, and not written again."""
    (task,) = tiny_plan(tmp_path, noise_batch=3)
    first = tasks.run_tasks([task], None, root=tmp_path, progress=False, echo=lambda _: None)
    files = {p: p.read_bytes() for p in (tmp_path / "noise").glob("*.json")}
    monkeypatch.setattr(noise, "noise_experiments", _refuse)
    items = tasks.execute(task, tmp_path)
    assert [i["stored"] for i in items] == [True, True, True]
    assert [i["result"] for i in items] == [s.result for s in first]
    lines = []
    again = tasks.run_tasks([task], None, root=tmp_path, progress=False, echo=lines.append)
    assert [s.result for s in again] == [s.result for s in first]
    assert all(line.endswith("already stored, not computed again") for line in lines)
    assert {p: p.read_bytes() for p in (tmp_path / "noise").glob("*.json")} == files


def test_of_a_batch_only_the_runs_not_stored_are_trained(tmp_path, monkeypatch, one_thread):
    (task,) = tiny_plan(tmp_path, noise_batch=3)
    tasks.run_tasks([task], None, root=tmp_path, progress=False, echo=lambda _: None)
    gone = store.result_path("noise", task.runs[1][0], tmp_path)
    gone.unlink()
    trained = []
    real = noise.noise_experiments

    def spy(dataset, runs, **kw):
        trained.append(list(runs))
        return real(dataset, runs, **kw)

    monkeypatch.setattr(noise, "noise_experiments", spy)
    items = tasks.execute(task, tmp_path)
    assert trained == [[tuple(task.params["runs"][1])]]
    assert [i["stored"] for i in items] == [True, False, True]
    assert items[1]["provenance"]["batched"] == 1


def test_the_longest_tasks_go_first_and_long_ones_are_not_retried(tmp_path, one_thread):
    plan = tiny_plan(tmp_path, noise_batch=2)  # three runs: a batch of 2, then 1
    costs = [tasks.expected_seconds(t) for t in plan]
    assert costs == [2 * 1 * 2.0, 1 * 1 * 2.0]
    lines = []
    tasks.run_tasks(plan[::-1], None, root=tmp_path, progress=False, echo=lines.append)
    assert [line.split(":")[0] for line in lines] == [
        f"noise/{run}" for t in plan for run, _ in t.runs
    ]
    conll_task = tasks.Task("conll x", "conll", 1, (("x", {}),), {"settings": {"epochs": 40}})
    assert tasks.expected_seconds(conll_task) == 800.0 > tasks.LONG_TASK_S


def test_no_worker_waits_while_a_task_is_pending(tmp_path, client, one_thread, monkeypatch):
    """More tasks than worker threads, of unequal lengths: the client keeps exactly as many in
    flight as there are threads, so each worker starts its next task as soon as it is free."""
    from dask.distributed import get_task_stream

    settings = {"train_images": 2048, "label_ratios": [0.0, 0.2, 0.5], "input_sigmas": [0.5, 1.0]}
    plan = tiny_plan(tmp_path, noise_batch=2, settings=settings)  # batches of 2, 2 and 1 runs
    assert len(plan) > sum(client.nthreads().values())
    slots = sum(client.nthreads().values())
    submitted, in_flight, submit = [], [], client.submit

    def counting_submit(*args, **kwargs):
        in_flight.append(sum(not f.done() for f in submitted))
        submitted.append(submit(*args, **kwargs))
        return submitted[-1]

    monkeypatch.setattr(client, "submit", counting_submit)
    with get_task_stream(client) as stream:
        written = tasks.run_tasks(plan, client, root=tmp_path, progress=False, echo=lambda _: None)
    assert len(in_flight) == len(plan) and max(in_flight) < slots  # never more than the threads
    assert len(written) == sum(len(t.runs) for t in plan)
    spans = sorted(
        (ss["start"], ss["stop"], rec["worker"])
        for rec in stream.data
        for ss in rec["startstops"]
        if ss["action"] == "compute"
    )
    assert len(spans) == len(plan)
    last_start = spans[-1][0]
    for worker in {w for _, _, w in spans}:
        mine = [(a, b) for a, b, w in spans if w == worker]
        # from its first task until the last task started, a worker is idle only between tasks,
        # for the round trip of one result and one submission (well under a second)
        gaps = [
            b2 - a1 for (_, a1), (b2, _) in zip(mine, mine[1:], strict=False) if b2 <= last_start
        ]
        assert all(gap < 1.0 for gap in gaps), (worker, gaps)
    assert spans[0][0] - min(a for a, _, _ in spans) < 1.0


def test_memorising_arm_runs_are_planned_one_per_task_and_computed_unstacked(
    monkeypatch, tmp_path, one_thread
):
    """The memorising arm's missing runs become one task each; executing one trains the ReLU-head
    model as noise_experiment does (same numbers), and a stored run is planned no more."""
    tiny = {**TINY, "label_ratios": [0.5], "input_sigmas": [], "head_width": 8,
            "final_lr": 1e-4, "snapshots": [], "datasets": ["mnist"]}  # fmt: skip
    # the module that reads the arm's settings, and the package the plan reads them from
    monkeypatch.setitem(noise.memorising.__dict__, "MEMORISING_SETTINGS", tiny)
    monkeypatch.setitem(noise.__dict__, "MEMORISING_SETTINGS", tiny)
    monkeypatch.setitem(noise.__dict__, "FACTORIAL", {**noise.FACTORIAL, "datasets": []})
    planned = catalog._arm_tasks(["mnist", "fashion-mnist"], tmp_path)
    assert [t.label for t in planned] == ["noise memorising-mnist-label-0.5-seed-0"]
    (out,) = tasks.execute(planned[0], root=tmp_path)
    direct = noise.noise_experiment("mnist", "label", 0.5, 0, **tiny)
    assert out["result"]["w_k_spectral"] == direct["w_k_spectral"] and not out["stored"]
    run, settings = planned[0].runs[0]
    store.save("noise", run, noise.NOISE_VERSION, settings, out["result"], wall_s=1.0,
               root=tmp_path)  # fmt: skip
    assert catalog._arm_tasks(["mnist"], tmp_path) == []


def test_factorial_runs_are_planned_one_per_task_and_computed_as_factorial_runs_computes(
    monkeypatch, tmp_path, one_thread
):
    """Each design row at each level of a missing factorial run becomes one task; executing one
    gives the numbers noise_experiment gives for that row's settings, and a stored run is
    planned no more."""
    tiny = {**noise.FACTORIAL, "datasets": ["mnist"], "test_images": 64, "levels": [0.0, 0.5],
            "factors": {"train_images": (64, 96), "epochs": (1, 2), "batch_size": (32, 64),
                        "lr": (3e-3, 1e-3), "d": (8, 16)}}  # fmt: skip
    # the module that reads the design, and the package the plan reads it from
    monkeypatch.setitem(noise.factorial.__dict__, "FACTORIAL", tiny)
    monkeypatch.setitem(noise.__dict__, "FACTORIAL", tiny)
    monkeypatch.setitem(noise.__dict__, "MEMORISING_SETTINGS", {**noise.MEMORISING_SETTINGS,
                                                                "datasets": []})  # fmt: skip
    planned = catalog._arm_tasks(["mnist", "fashion-mnist"], tmp_path)
    assert [t.label for t in planned] == [
        f"noise factorial-{row}-mnist-label-{level:g}-seed-0" for row in range(8)
        for level in (0.0, 0.5)
    ]  # fmt: skip
    task = planned[5]  # row 2 (epochs at its full level) at r = 0.5
    (out,) = tasks.execute(task, root=tmp_path)
    run, settings = task.runs[0]
    assert settings["row"] == 2 and settings["epochs"] == 2 and settings["train_images"] == 64
    direct = noise.noise_experiment(
        "mnist", "label", 0.5, 0, **{k: settings[k] for k in noise.RUN_KEYS}
    )
    assert out["result"]["w_k_spectral"] == direct["w_k_spectral"] and not out["stored"]
    store.save("noise", run, noise.NOISE_VERSION, settings, out["result"], wall_s=1.0,
               root=tmp_path)  # fmt: skip
    assert len(catalog._arm_tasks(["mnist"], tmp_path)) == 15


def test_make_full_plans_each_cell_of_the_capacity_grid_and_stores_what_phase_run_reads(
    monkeypatch, tmp_path
):
    """A tiny capacity grid (Chapter 7): one task per cell, none once a task's run is stored; a
    task's stored result is what phase_run computes for the same cell in this process."""
    from lib.experiments import learned_lookup as LL
    from lib.experiments import trained as T

    tiny = {**T.PHASE_SETTINGS["full"], "Ns": [3, 5], "widths": [16], "seeds": [0],
            "tied": [False], "n": 2, "vocab_size": 4, "d": 4, "n_labels": 2,
            "epochs": 30, "arm": None}  # fmt: skip
    monkeypatch.setitem(T.PHASE_SETTINGS, "full", tiny)
    monkeypatch.setitem(LL.LOOKUP_SETTINGS, "full", {**LL.LOOKUP_SETTINGS["full"], "ms": []})

    def planned(root):
        return tasks.plan("full", datasets=[], conll_runs=[], root=root)

    todo = planned(tmp_path)
    assert [t.label for t in todo] == [
        "trained phase-3-width-16-seed-0",
        "trained phase-5-width-16-seed-0",
    ]
    assert tasks.expected_seconds(todo[0]) == pytest.approx(30 * 1 * 0.003)
    tasks.run_tasks(todo[:1], None, root=tmp_path, progress=False, echo=lambda _: None)
    assert [t.label for t in planned(tmp_path)] == ["trained phase-5-width-16-seed-0"]
    assert tasks.plan("full", datasets=[], conll_runs=[], root=tmp_path, trained_cells=False) == []
    stored = json.loads((tmp_path / "trained" / "phase-3-width-16-seed-0.json").read_text())
    # computed again here, outside make full: the same numbers
    again = T.phase_compute(todo[0].params["settings"])
    assert stored["result"]["fraction"] == again["fraction"]
    assert stored["result"]["epochs"] == again["epochs"]
    with pytest.raises(ValueError, match="missing"):
        T.phase_compute({"N": 3})


def test_make_full_plans_each_learned_lookup_and_stores_what_lookup_run_reads(
    monkeypatch, tmp_path
):
    """Tiny learned lookups (Chapter 7): one task per (m, seed), costed by epochs x keys x
    points; none once stored; the stored result is what lookup_run reads back in full mode and
    equals a computation in this process."""
    from lib.experiments import learned_lookup as LL
    from lib.experiments import trained as T

    monkeypatch.setitem(T.PHASE_SETTINGS, "full", {**T.PHASE_SETTINGS["full"], "Ns": []})
    tiny = {**LL.LOOKUP_SETTINGS["full"], "ms": [2, 3], "seeds": [1], "samples": 64,
            "epochs": 5, "points": 8}  # fmt: skip
    monkeypatch.setitem(LL.LOOKUP_SETTINGS, "full", tiny)

    def planned(root):
        return tasks.plan("full", datasets=[], conll_runs=[], root=root)

    todo = planned(tmp_path)
    assert [t.label for t in todo] == ["lookup lookup-2-seed-1", "lookup lookup-3-seed-1"]
    assert tasks.expected_seconds(todo[1]) == pytest.approx(5 * 9 * 64 * 4e-8)
    tasks.run_tasks(todo[:1], None, root=tmp_path, progress=False, echo=lambda _: None)
    assert [t.label for t in planned(tmp_path)] == ["lookup lookup-3-seed-1"]
    monkeypatch.setenv("BOOK_RESULTS", str(tmp_path))
    read = LL.lookup_run(2, 1, "full", allow_compute=False)
    again = LL.lookup_compute(todo[0].params["settings"])
    assert read["matching"] == again["matching"] and read["centres"] == again["centres"]
    assert read["provenance"]["threads"] >= 1
