"""`make bench --projection-only`: how long `make full` from nothing takes, projected from one epoch
of every run kind timed alone, for the book's base code path and for today's, side by side.

The two paths (:data:`PATHS`):

* **old**, the code path of commit 4b8d492, against which the speed target is set: its workers
  were spawned with ``BOOK_THREADS``, ``OMP_NUM_THREADS`` and ``MKL_NUM_THREADS`` only (its
  ``make_client`` replaced Dask's ``pre-spawn-environ`` defaults with these three, so Dask's
  ``MALLOC_TRIM_THRESHOLD_`` was never set), trained the noise runs 14 to a task, and submitted
  every task at once in the order of ``plan`` (CoNLL-2003 runs, then the noise batches);
* **new**, today's: ``lib.experiments.tasks.worker_environ`` (Dask's defaults without
  ``MALLOC_TRIM_THRESHOLD_``), the noise batch measured fastest here, tasks longest first.

The training code itself (``lib.training``, ``lib.batched``, ``lib.models``) is the same on both
paths. Each path is timed in a process of its own, spawned with the environment a ``make full``
worker gets on that path and nothing else running. In that process:

* every CoNLL-2003 run kind of ``make full`` (``lib.experiments.conll.full_runs``: our model at each
  depth and the full-rank layer, the described model with its projection fixed and with Adam, and
  the described model with SGD, the kind of the SGD grid's runs) trains on the whole training
  split for three epochs through ``lib.experiments.conll.conll_compute``, validation in the last
  epoch only: the second epoch's seconds are one training epoch, the third's less that are one
  validation pass, the wall time before the first epoch is the run's set-up (data, vocabulary,
  model);
* the noise runs (``lib.experiments.noise.noise_experiments``) of one dataset in batches of each
  size of the path's noise batches train on the whole training set for one and for three
  epochs: half the difference is one epoch of the batch, the rest its set-up and measurements.

The two paths are timed ``PROJECTION["repeats"]`` times, alternately (old, new, old, new), and
each run kind's fastest timing counts (:func:`fastest`): this machine's speed varies by a quarter
from one process to the next, and the repeats are stored, so the page can show that spread.

The projection then lists ``make full``'s tasks from an empty results folder
(``lib.experiments.tasks.plan``, with each path's batch of noise runs), costs each as set-up +
epochs x epoch + validations x validation (the epochs a stored run actually trained, so a run its
stopping rule ended early counts those; a run of the SGD grid costs as the described model with
SGD),
and hands them out in the path's order, each to the first free worker, on ``make full``'s local
cluster. For the old path this is the most favourable reading of Dask's scheduler of the time (it
assigned every task to a worker when submitted, and work stealing moved some of them later; a
probe of that version left one worker idle for 4 s of 14). The noise pilots run before the tasks
in the main process, the same on both paths: their stored wall times are added to both. Target:
the new path's projection at most half the old one's.

The result is stored in ``results/bench/projection.json`` for the Reproducibility page, and the
noise batch of the new path is what ``lib.experiments.tasks.NOISE_BATCH`` must be (a test checks).
"""

from __future__ import annotations

import heapq
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: What the projection measures: the candidate batches of noise runs, the dataset they are timed
#: on, the old path's batch, and the target ratio of the projections (old over new).
PROJECTION = {
    "noise_batches": [1, 3, 7, 14],
    "noise_dataset": "mnist",
    "old_noise_batch": 14,
    "conll_epochs": 3,
    "noise_epochs": [1, 3],
    "repeats": 2,
    "target_ratio": 2.0,
}

#: The two code paths: the commit the target is set against (``None``: today's), how each
#: spawns a worker (``"base"``: :func:`base_environ`; ``"today"``:
#: ``lib.experiments.tasks.worker_environ``) and in which order its tasks are handed out
#: (``"plan"``: as ``lib.experiments.tasks.plan`` lists them; ``"longest"``: longest first by
#: ``lib.experiments.tasks.expected_seconds``, as ``run_tasks`` does today).
PATHS = {
    "old": {"commit": "4b8d492", "environ": "base", "order": "plan"},
    "new": {"commit": None, "environ": "today", "order": "longest"},
}


def base_environ(threads: int) -> dict[str, str]:
    """The environment commit 4b8d492's ``make_client`` spawned a local worker with: its
    ``distributed.nanny.pre-spawn-environ`` was ``BOOK_THREADS``, ``OMP_NUM_THREADS`` and
    ``MKL_NUM_THREADS`` set to ``threads``, which replaced Dask's defaults
    (``MALLOC_TRIM_THRESHOLD_``, ``OPENBLAS_NUM_THREADS``, ...) whole."""
    return {name: str(threads) for name in ("BOOK_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}


def path_environ(name: str, threads: int = 1) -> dict[str, str]:
    """The worker environment of path ``name`` of :data:`PATHS`."""
    from lib.experiments import tasks

    if PATHS[name]["environ"] == "base":
        return base_environ(threads)
    return tasks.worker_environ(threads)


def _conll_kinds() -> dict[str, dict]:
    """One settings dict (seed 0) per CoNLL-2003 run kind of ``make full``, keyed by kind."""
    from lib.experiments import conll

    kinds = {}
    # the SGD grid's runs (and its best setting's) are the described model with SGD
    for n_layers, rank, _seed, kind in [*conll.full_runs(), (1, 1, 0, "described")]:
        key = _conll_kind(n_layers, rank, kind)
        if key not in kinds:
            kinds[key] = conll.conll_run_settings(n_layers, rank, "full", seed=0, kind=kind)[1]
    return kinds


def _conll_kind(n_layers: int, rank: int | None, kind: str) -> str:
    return f"{kind} {n_layers}x{rank or 'full'}"


def time_kinds(spec: dict) -> dict:
    """In this process (spawned with a path's environment): the seconds of each run kind."""
    from lib.experiments import conll, noise

    out: dict = {"conll": {}, "noise": {}}
    epochs = spec["conll_epochs"]
    for key, settings in _conll_kinds().items():
        short = {**settings, "epochs": epochs, "eval_every": 10**6}
        short.pop("stop", None)
        start = time.perf_counter()
        seconds = conll.conll_compute(short)["history"]["seconds"]
        wall = time.perf_counter() - start
        epoch = seconds[1] - seconds[0]
        out["conll"][key] = {
            "epoch_s": epoch,
            "validation_s": max(0.0, seconds[2] - seconds[1] - epoch),
            "setup_s": max(0.0, wall - seconds[-1]),
        }
        print(f"  conll {key}: {epoch:.2f} s per epoch", file=sys.stderr, flush=True)
    full = noise.NOISE_SETTINGS["full"]
    runs = noise.noise_run_names("full")
    short, long = spec["noise_epochs"]
    for k in spec["noise_batches"]:
        walls = []
        for n_epochs in (short, long):
            settings = {**full, "epochs": n_epochs, "snapshots": []}
            start = time.perf_counter()
            noise.noise_experiments(spec["noise_dataset"], runs[:k], **settings)
            walls.append(time.perf_counter() - start)
        epoch = max((walls[1] - walls[0]) / (long - short), 0.0)
        out["noise"][str(k)] = {"epoch_s": epoch, "setup_s": max(walls[0] - short * epoch, 0.0)}
        print(f"  noise batch {k}: {epoch / k:.2f} s per run-epoch", file=sys.stderr, flush=True)
    return out


def _timed_path(name: str, spec: dict) -> dict:
    """:func:`time_kinds` in a fresh process spawned with path ``name``'s worker environment."""
    from lib.experiments import tasks

    environ = path_environ(name)
    env = {k: v for k, v in os.environ.items() if k not in tasks.DROPPED_SPAWN_ENVIRON}
    with tempfile.TemporaryDirectory() as root:
        env = {**env, **environ, "BOOK_RESULTS": root, "PYTHONPATH": str(ROOT)}
        spec_file, out_file = Path(root) / "spec.json", Path(root) / "out.json"
        spec_file.write_text(json.dumps(spec))
        print(f"{name} path ({', '.join(f'{k}={v}' for k, v in sorted(environ.items()))}):")
        subprocess.run(
            [
                sys.executable,
                str(Path(__file__).resolve()),
                "--child",
                str(spec_file),
                str(out_file),
            ],
            env=env,
            check=True,
            cwd=ROOT,
        )
        return json.loads(out_file.read_text())


def _task_seconds(task, times: dict, stored_epochs: dict) -> float:
    """Projected seconds of one ``make full`` task from the timed kinds."""
    if task.experiment == "noise":
        k = len(task.runs)
        row = times["noise"][str(k)] if str(k) in times["noise"] else _interpolated(times, k)
        return row["setup_s"] + task.params["settings"]["epochs"] * row["epoch_s"]
    settings = task.params["settings"]
    ((run, _),) = task.runs
    from lib.experiments import conll

    kind = settings.get("kind", "ours")
    if kind in conll.GRID_KINDS:
        kind = "described"
    row = times["conll"][_conll_kind(settings["n_layers"], settings["rank"], kind)]
    epochs = stored_epochs[run]
    validations = epochs // settings["eval_every"] + 1
    return row["setup_s"] + epochs * row["epoch_s"] + validations * row["validation_s"]


def _interpolated(times: dict, k: int) -> dict:
    """A batch size not timed (a dataset's last, partial batch): the nearest timed size's
    seconds scaled to ``k`` runs."""
    size = min((int(s) for s in times["noise"]), key=lambda s: (abs(s - k), s))
    row = times["noise"][str(size)]
    return {key: row[key] * k / size for key in ("epoch_s", "setup_s")}


def stored_epochs() -> dict[str, int]:
    """Epochs each stored CoNLL-2003 run trained."""
    from lib.experiments import store

    out = {}
    for path in sorted((store.RESULTS / "conll").glob("*.json")):
        run = path.stem
        out[run] = len(store.read("conll", run).result["history"]["epoch"])
    return out


def schedule(costs: list[float], workers: int) -> float:
    """The wall time of tasks handed out in the given order, each to the first free worker."""
    free = [0.0] * workers
    for cost in costs:
        heapq.heappush(free, heapq.heappop(free) + cost)
    return max(free)


def project(times: dict, noise_batch: int, workers: int, order: str = "longest") -> dict:
    """The projection of one path: its tasks in the order they are handed out (``order`` as in
    :data:`PATHS`), their projected seconds, and the wall time. The memorising arm's runs are
    left out: no timing of the two paths measured them."""
    from lib.experiments import conll, noise, store, tasks

    with tempfile.TemporaryDirectory() as root:
        todo = tasks.plan(
            "full", noise_batch=noise_batch, datasets=noise.NOISE_SETTINGS["full"]["datasets"],
            root=root,
        )  # fmt: skip
    # the noise experiment's memorising arm (2,000 images, another model) came after the timings
    # were measured and is costed by none of them: the paths are compared on the rest
    # the capacity grid and the learned lookups of Chapter 7 (small models of other kinds) neither
    todo = [
        t for t in todo if not t.params.get("arm") and t.experiment not in ("trained", "lookup")
    ]
    # make full plans the SGD grid's best setting once the grid is stored (a second round): it is
    # costed here as the committed grid's best, as if it could start with the rest
    if not any(t.label == "conll described-sgd-best" for t in todo):
        run, settings = conll.sgd_best_settings()
        version = conll.CONLL_VERSION
        todo.append(tasks.Task(f"conll {run}", "conll", version, ((run, settings),),
                               {"settings": settings}))  # fmt: skip
    epochs = stored_epochs()
    if order not in ("plan", "longest"):
        raise ValueError(f"order must be 'plan' or 'longest', got {order!r}")
    handed = todo if order == "plan" else sorted(todo, key=tasks.expected_seconds, reverse=True)
    costs = [_task_seconds(t, times, epochs) for t in handed]
    pilots = sum(
        store.read("noise", f"pilot-{ds}").provenance["wall_s"]
        for ds in noise.NOISE_SETTINGS["full"]["datasets"]
    )
    return {
        "noise_batch": noise_batch,
        "order": order,
        "tasks": [{"label": t.label, "seconds": c} for t, c in zip(handed, costs, strict=True)],
        "worker_s": sum(costs),
        "pilots_s": pilots,
        "wall_s": pilots + schedule(costs, workers),
    }


def fastest(repeats: list[dict]) -> dict:
    """Each run kind's fastest seconds over repeated timings (:func:`time_kinds`), field by field:
    on a shared machine a timing is slowed by what else runs, never sped up, so the minimum is
    the estimate least disturbed."""
    return {
        group: {
            kind: {
                field: min(r[group][kind][field] for r in repeats)
                for field in repeats[0][group][kind]
            }
            for kind in repeats[0][group]
        }
        for group in repeats[0]
    }


def measure() -> dict:
    """Both paths timed and projected (the stored measure of ``make bench``)."""
    from lib.experiments import tasks

    workers, _ = tasks.cluster_shape({"BOOK_WORKERS": "2", "BOOK_THREADS": "1"})
    spec = dict(PROJECTION)
    timed: dict[str, list[dict]] = {"old": [], "new": []}
    for _ in range(spec["repeats"]):  # the paths alternate, so a slow spell hits both
        old_spec = {**spec, "noise_batches": [spec["old_noise_batch"]]}
        timed["old"].append(_timed_path("old", old_spec))
        timed["new"].append(_timed_path("new", spec))
    old, new = fastest(timed["old"]), fastest(timed["new"])
    best = min(new["noise"], key=lambda k: new["noise"][k]["epoch_s"] / int(k))
    paths = {
        "old": {
            "repeats": timed["old"],
            "times": old,
            "commit": PATHS["old"]["commit"],
            "environ": path_environ("old"),
            **project(old, spec["old_noise_batch"], workers, PATHS["old"]["order"]),
        },
        "new": {
            "repeats": timed["new"],
            "times": new,
            "commit": PATHS["new"]["commit"],
            "environ": path_environ("new"),
            **project(new, int(best), workers, PATHS["new"]["order"]),
        },
    }
    return {
        "workers": workers,
        "threads": 1,
        "best_noise_batch": int(best),
        "paths": paths,
        "ratio": paths["old"]["wall_s"] / paths["new"]["wall_s"],
        "target_ratio": spec["target_ratio"],
    }


def print_projection(r: dict) -> bool:
    print(f"make full from nothing, projected on {r['workers']} one-thread workers:")
    for name, p in r["paths"].items():
        print(
            f"  {name} path: {p['wall_s'] / 60:6.0f} min ({p['worker_s'] / 60:.0f} worker-minutes "
            f"of tasks, noise runs in batches of {p['noise_batch']}, pilots "
            f"{p['pilots_s'] / 60:.0f} min, tasks in {p['order']} order)"
        )
    ok = r["ratio"] >= r["target_ratio"]
    print(
        f"  old / new: {r['ratio']:.2f}x (target >= {r['target_ratio']}x)   "
        f"{'ok' if ok else 'MISSED'}"
    )
    return ok


def main(argv: list[str] | None = None) -> int:
    """The timing child of :func:`_timed_path` (``--child SPEC OUT``); run the measure itself
    through ``make bench --projection-only``."""
    import argparse

    from lib import _env

    parser = argparse.ArgumentParser(
        prog="python tools/projection.py",
        description="make full's projection; run it as: python tools/bench.py --projection-only",
    )
    parser.add_argument(
        "--child",
        nargs=2,
        metavar=("SPEC", "OUT"),
        help="time the run kinds of the JSON file SPEC in this process and write them to OUT",
    )
    args = _env.parse_args(parser, argv)
    if args.child is None:
        parser.error(
            "run the projection through make bench: python tools/bench.py --projection-only"
        )
    spec = json.loads(Path(args.child[0]).read_text())
    Path(args.child[1]).write_text(json.dumps(time_kinds(spec)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
