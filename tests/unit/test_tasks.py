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

from lib.experiments import noise, store, tasks

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
    """NOISE_BATCH is chosen by measurement: the stored bench's fastest batch of runs."""
    measured = store.read("bench", "batched", remedy="make bench").result
    trial = measured["trial"]
    assert measured["best_batch"] == int(max(trial, key=lambda k: trial[k]["run_epochs_per_s"]))
    assert tasks.NOISE_BATCH == measured["best_batch"]
