"""``make full``'s runs as Dask tasks: planned from the settings, computed on workers, stored by the
client.

* :func:`plan` lists the runs of the current settings whose stored result is missing or stale
  (:func:`lib.experiments.store.lookup`), as :class:`~lib.experiments.catalog.Task`, for every
  experiment that :data:`lib.experiments.catalog.EXPERIMENTS` declares: one per CoNLL-2003 run
  (Chapter 3), and one per batch of up to :data:`NOISE_BATCH` noise runs of one dataset
  (Chapter 5), trained together as one stacked model
  (:func:`lib.experiments.noise.runs.noise_experiments`), and one per cell of the capacity grid of
  Chapter 7 (:func:`lib.experiments.trained.phase_cells`) and per learned lookup of Chapter 7
  (:func:`lib.experiments.learned_lookup.lookup_cells`).
* :func:`execute` computes one task; it runs on a Dask worker and returns the results with the
  worker's own provenance, so that workers need no shared disk for results.
* :func:`make_client` starts a ``dask.distributed.LocalCluster`` on this machine (``BOOK_WORKERS``
  worker processes, each running one task at a time with ``BOOK_THREADS`` torch threads), or
  connects to a running cluster named by ``BOOK_SCHEDULER`` (``tcp://host:8786``).
* :func:`run_tasks` submits the tasks, longest first and no more at a time than the cluster has
  worker threads, and writes each finished run into the results folder.

Resuming: a CoNLL-2003 run keeps an epoch checkpoint in ``BOOK_RESULTS/.partial``; a task whose
worker dies is retried by the scheduler, and where that folder is shared with the worker that takes
it over (always on a ``LocalCluster``) the retry resumes from the checkpoint, else from epoch 0.
A noise task (a batch of short runs; their wall times are on the Reproducibility page) keeps no
checkpoint and restarts from epoch 0. A run already stored is never computed again, whoever runs
its task: :func:`execute` reads it back.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import _env, runtime
from .._validate import flag, one_of, positive_int, short_repr
from . import store
from .catalog import EXPERIMENTS, PlanRequest, Task

if TYPE_CHECKING:
    from dask.distributed import Client

__all__ = [
    "NOISE_BATCH",
    "plan",
    "execute",
    "expected_seconds",
    "LONG_TASK_S",
    "cluster_shape",
    "DROPPED_SPAWN_ENVIRON",
    "worker_environ",
    "make_client",
    "run_tasks",
]

#: How many noise runs one task trains together, the batch that trained the fewest seconds per
#: run-epoch in ``make bench --projection-only``, timed at ``make full``'s own shape (one worker's
#: environment and one thread, the whole training set; ``results/bench/projection.json``, a test
#: checks). It is 1 on the book's machine, where one run alone beat every batch tried, although a
#: batch of 14 was fastest in a short trial on part of MNIST at two threads
#: (``results/bench/batched.json``).
NOISE_BATCH = 1


def plan(
    mode: str = "full",
    *,
    noise_batch: int = NOISE_BATCH,
    datasets: Iterable[str] | None = None,
    conll_runs: Iterable[tuple[int, int | None] | tuple[int, int | None, int, str]] | None = None,
    noise_settings: dict | None = None,
    root: str | os.PathLike | None = None,
    trained_cells: bool | None = None,
) -> list[Task]:
    """The tasks that compute every run of ``mode``'s settings not stored yet.

    Args:
        mode: ``"full"`` (``make full``'s) or ``"fast"``.
        noise_batch: noise runs per task (>= 1).
        datasets: the noise experiment's datasets (default: the mode's ``datasets``, or all of
            :data:`lib.experiments.noise.settings.NOISE_DATASETS` this machine can load).
        conll_runs: ``(n_layers, rank)`` pairs (seed 0 of our settings) or ``(n_layers, rank,
            seed, kind)`` tuples (default in full mode
            :func:`lib.experiments.conll_settings.full_runs`, the SGD grid
            :data:`lib.experiments.conll_grid.SGD_GRID` and, once the grid is stored in ``root``,
            its best setting's long run (:func:`lib.experiments.conll_grid.sgd_best`); in fast
            mode the mode's depths at rank 1 and one full-rank layer); ``[]`` for none.
        noise_settings: settings of the noise runs in place of the mode's (the tests' tiny runs).
        root: the results folder (default :data:`lib.experiments.store.RESULTS` or
            ``BOOK_RESULTS``).
        trained_cells: plan the cells of the capacity grid
            (:func:`lib.experiments.trained.phase_cells` of ``mode``); default in full mode with
            its own noise settings, as the memorising arm; the learned lookups of Chapter 7
            (:func:`lib.experiments.learned_lookup.lookup_cells`) are planned with them.

    Returns:
        A list of :class:`~lib.experiments.catalog.Task`, CoNLL-2003 runs first (the longest),
        then the noise batches, then (full mode with its own noise settings) the runs of the
        noise experiment's memorising arm
        (:func:`lib.experiments.noise.memorising.memorising_runs`), one per task, then the
        capacity grid's cells and the learned lookups, one per task.

    Raises:
        ValueError: for an unknown mode, a bad batch size or run.
    """
    noise_batch = positive_int("noise_batch", noise_batch, maximum=1000)
    one_of("mode", mode, runtime.MODES)
    request = PlanRequest(
        mode, noise_batch, datasets, conll_runs, noise_settings, root, trained_cells
    )
    return [task for experiment in EXPERIMENTS.values() for task in experiment.plan(request)]


def execute(task: Task, root: str | os.PathLike | None = None) -> list[dict]:
    """Compute ``task`` (on a Dask worker, or in this process) and return, per run of
    ``task.runs``, ``{"run", "settings", "result", "provenance", "stored"}``.

    A run already stored under its current key in ``root`` (:func:`lib.experiments.store.lookup`)
    is returned as stored, with ``"stored": True``, and not computed again: a task the scheduler
    reruns after a worker died (distributed issue 7870), or that another ``make full`` finished
    meanwhile, costs a file read, not an hour of training. Of a batch of noise runs, only those
    not stored are trained. Workers see the results folder where it is shared (always on a
    ``LocalCluster``); elsewhere every run is computed.

    The provenance of a computed run is :func:`lib.experiments.store.provenance` on the machine
    that computed it, with ``batched`` (runs trained together), ``batch_wall_s`` (the task's wall
    time; ``wall_s`` is each run's share of it) and ``worker`` (host and process id).

    Raises:
        ValueError: for a task that is not a :class:`~lib.experiments.catalog.Task`, and as the
            experiments' functions.
    """
    if not isinstance(task, Task) or task.experiment not in EXPERIMENTS:
        raise ValueError(f"task must be a Task of {tuple(EXPERIMENTS)}, got {short_repr(task)}")
    found = [store.lookup(task.experiment, run, task.version, s, root) for run, s in task.runs]
    todo = [i for i, hit in enumerate(found) if hit is None]
    start = time.perf_counter()
    results = EXPERIMENTS[task.experiment].compute(task, todo) if todo else []
    wall = time.perf_counter() - start
    computed = dict(zip(todo, results, strict=True))
    out = []
    for i, ((run, settings), hit) in enumerate(zip(task.runs, found, strict=True)):
        if hit is not None:
            item = {"result": hit.result, "provenance": hit.provenance, "stored": True}
        else:
            provenance = store.provenance(
                wall / len(results),
                str(runtime.DEVICE),
                batched=len(results),
                batch_wall_s=round(wall, 1),
                worker=f"{socket.gethostname()}:{os.getpid()}",
            )
            result = {k: v for k, v in computed[i].items() if k != "batched"}
            item = {"result": result, "provenance": provenance, "stored": False}
        out.append({"run": run, "settings": settings, **item})
    return out


#: A task expected to run longer than this many seconds is not retried after an error (a retry
#: of a failed hour-long CoNLL-2003 run would spend another hour to fail again); the scheduler
#: still hands a task whose worker died to another worker.
LONG_TASK_S = 300


def expected_seconds(task: Task) -> float:
    """A rough cost of ``task`` for ordering, in seconds on one of the book's cores, as its
    experiment declares it (:data:`lib.experiments.catalog.EXPERIMENTS`). Only its order matters
    (longest first).

    Raises:
        ValueError: for a task that is not a :class:`~lib.experiments.catalog.Task` of a known
            experiment.
    """
    if not isinstance(task, Task) or task.experiment not in EXPERIMENTS:
        raise ValueError(f"task must be a Task of {tuple(EXPERIMENTS)}, got {short_repr(task)}")
    return EXPERIMENTS[task.experiment].seconds(task)


def cluster_shape(environ: Mapping[str, object] | None = None) -> tuple[int, int]:
    """``(workers, threads)`` of the local cluster: ``BOOK_WORKERS`` (default 2) worker processes
    with ``BOOK_THREADS`` (default 1 when there are several workers, else
    :data:`lib.runtime.THREADS`) torch threads each.

    Raises:
        ValueError: for a value that is not a positive integer, or ``workers * threads`` above the
            machine's cores (oversubscribed workers slow each other down).
    """
    cores = os.cpu_count() or 1
    workers = _env.read_int("BOOK_WORKERS", environ) or min(2, cores)
    threads = _env.read_int("BOOK_THREADS", environ) or (1 if workers > 1 else runtime.THREADS)
    if workers * threads > cores:
        raise ValueError(
            f"BOOK_WORKERS={workers} x BOOK_THREADS={threads} oversubscribes this machine's "
            f"{cores} cores; lower one of them"
        )
    return workers, threads


#: Variables of Dask's ``distributed.nanny.pre-spawn-environ`` defaults that the book's workers do
#: not get. Setting ``MALLOC_TRIM_THRESHOLD_`` at all turns off glibc's dynamic mmap threshold
#: (``mallopt(3)``), so every buffer above 128 KiB is mapped afresh at each allocation and each
#: training step page-faults its large buffers (a dense embedding gradient of 12 MB: 5.1 ms
#: instead of 0.5 ms to allocate and zero). ``make bench --projection-only`` measures the cost on
#: every run kind of ``make full`` (``results/bench/projection.json``).
DROPPED_SPAWN_ENVIRON = ("MALLOC_TRIM_THRESHOLD_",)


def worker_environ(threads: int, *, dask_defaults: bool = False) -> dict[str, str]:
    """The environment a local worker process is spawned with (before Python starts, so that the
    C allocator and the BLAS libraries read it): Dask's own ``pre-spawn-environ`` defaults
    (``OPENBLAS_NUM_THREADS=1`` and the like) without :data:`DROPPED_SPAWN_ENVIRON`, and
    ``BOOK_THREADS``, ``OMP_NUM_THREADS`` and ``MKL_NUM_THREADS`` set to ``threads``.

    Args:
        threads: torch threads per worker (>= 1).
        dask_defaults: keep Dask's defaults whole (the path before the book dropped
            ``MALLOC_TRIM_THRESHOLD_``; ``make bench`` measures both side by side).

    Returns:
        ``{name: value}``, every value a string.

    Raises:
        ValueError: for ``threads`` that is not a whole number from 1 to 4096, or a
            ``dask_defaults`` that is not a bool.

    Used by :func:`make_client` (``make full``: the stored runs of Chapters 3 and 5) and
    ``make bench --projection-only``.
    """
    import dask
    import distributed  # noqa: F401  (loads distributed's configuration defaults)

    threads = positive_int("threads", threads, maximum=4096)
    dask_defaults = flag("dask_defaults", dask_defaults)
    defaults = dask.config.get("distributed.nanny.pre-spawn-environ", default={}) or {}
    spawn = {
        str(k): str(v)
        for k, v in defaults.items()
        if dask_defaults or k not in DROPPED_SPAWN_ENVIRON
    }
    names = ("BOOK_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
    return {**spawn, **{name: str(threads) for name in names}}


def make_client(
    scheduler: str | None = None, environ: Mapping[str, object] | None = None
) -> Client:
    """A ``dask.distributed.Client``: to the cluster at ``scheduler`` (default ``BOOK_SCHEDULER``),
    or to a new ``LocalCluster`` shaped by :func:`cluster_shape`.

    The local workers are processes (``processes=True``), each running one task at a time
    (``threads_per_worker=1``) and sent one only when it is free (the scheduler's
    ``worker-saturation`` 1.0) with ``BOOK_THREADS`` torch threads and as many OpenMP/MKL
    threads; their memory is not limited (a batch of noise runs holds a copy of the training
    images per run). They are spawned with :func:`worker_environ` (Dask's defaults less the
    allocator's trim threshold, with which each run kind of ``make full`` trained 1.3 to 2.2 times
    slower per epoch).

    Raises:
        ValueError: as :func:`cluster_shape`, or for a scheduler address that is not
            ``tcp://host:port`` (or another Dask protocol).
    """
    import dask
    from dask.distributed import Client, LocalCluster

    if scheduler is None:
        scheduler = _env.read_text("BOOK_SCHEDULER", environ)
    elif not isinstance(scheduler, str) or "://" not in scheduler:
        raise ValueError(
            f"scheduler must be a scheduler address such as tcp://host:8786, got "
            f"{short_repr(scheduler)}"
        )
    if scheduler:
        return Client(scheduler)
    workers, threads = cluster_shape(environ)
    env = {name: str(threads) for name in ("BOOK_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    # worker-saturation 1.0: a worker holds one task at a time and takes the next when it is
    # free (at dask's default, 1.1, a one-thread worker is sent two, and in a short list of long
    # tasks one worker can be left idle while another works through its second)
    spawn = worker_environ(threads)
    config_ = {
        "distributed.nanny.pre-spawn-environ": spawn,
        "distributed.scheduler.worker-saturation": 1.0,
    }
    with dask.config.set(config_):
        cluster = LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            memory_limit=0,
            dashboard_address=None,
            env=env,
        )
    return Client(cluster)


def run_tasks(
    tasks: Iterable[Task],
    client: Client | None = None,
    *,
    root: str | os.PathLike | None = None,
    progress: bool = True,
    echo: Callable[[str], object] = print,
) -> list[store.StoredRun]:
    """Compute ``tasks`` on ``client`` (a ``dask.distributed.Client``; ``None``: one by one in
    this process, the serial path) and store every run as its task finishes.

    One progress bar over the runs; one line per finished run with its wall time (its share of
    its task's, for runs trained together), the task's and the worker.
    This process writes the results (:func:`lib.experiments.store.save`, with the provenance of
    the worker that computed them); a run :func:`execute` found stored is not written again.

    Scheduling: the tasks go longest first (:func:`expected_seconds`), and only as many are
    submitted as the cluster has worker threads; each time one finishes the next is added
    (``as_completed(...).add``), so no worker waits while a task is pending and none holds a
    queue of its own, on any cluster (the scheduler's ``worker-saturation`` queues only large
    groups of similar keys). A finished task's future is released once its runs are stored, so
    that a worker dying later cannot make the scheduler compute it again. A task is retried twice
    after an error unless it is expected to take more than :data:`LONG_TASK_S`; a task whose
    worker dies is resubmitted by the scheduler (up to its ``allowed-failures``, 3 by default).

    Returns:
        The :class:`lib.experiments.store.StoredRun` written, in the order they finished.

    Raises:
        ValueError: for tasks that are not :class:`~lib.experiments.catalog.Task` or a
            ``progress`` that is not a bool; a task's own error, re-raised when its retries are
            spent.
    """
    tasks = list(tasks)
    for i, t in enumerate(tasks):
        if not isinstance(t, Task):
            raise ValueError(f"tasks[{i}] must be a Task, got {short_repr(t)}")
    progress = flag("progress", progress)
    if not tasks:
        return []
    total = sum(len(t.runs) for t in tasks)
    bar = runtime.progress(range(total), desc="make full runs", total=total) if progress else None
    folder = None if root is None else str(Path(root).resolve())
    order = sorted(tasks, key=expected_seconds, reverse=True)  # stable: plan's order on ties
    stored = []
    for task, items in _finished(order, client, folder):
        for item in items:
            stored.append(_keep(task, item, root, echo))
            if bar is not None:
                bar.update(1)
    if bar is not None:
        bar.close()
    return stored


def _finished(
    tasks: list[Task], client: Client | None, root: str | None
) -> Iterator[tuple[Task, list[dict]]]:
    """``(task, items)`` as each task finishes; at most the cluster's worker threads in flight."""
    if client is None:
        for t in tasks:
            yield t, execute(t, root)
        return
    from dask.distributed import as_completed

    slots = max(1, sum(client.nthreads().values()))
    pending = list(enumerate(tasks))

    def submit() -> tuple[Any, Task]:
        i, t = pending.pop(0)
        retries = 0 if expected_seconds(t) > LONG_TASK_S else 2
        future = client.submit(execute, t, root, key=f"{t.label}-{i}", pure=False, retries=retries)
        return future, t

    running = dict(submit() for _ in range(min(slots, len(pending))))
    queue = as_completed(list(running))
    for future in queue:
        task = running.pop(future)
        items = future.result()
        if pending:
            nxt, t = submit()
            running[nxt] = t
            queue.add(nxt)
        yield task, items
        future.release()  # stored: nothing may make the scheduler compute it again


def _keep(
    task: Task, item: dict, root: str | os.PathLike | None, echo: Callable[[str], object]
) -> store.StoredRun:
    """Store one finished run (unless it was found stored) and print its line."""
    p = item["provenance"]
    if item["stored"]:
        kept = store.lookup(task.experiment, item["run"], task.version, item["settings"], root)
        if kept is not None:
            echo(f"{task.experiment}/{item['run']}: already stored, not computed again")
            return kept
    kept = store.save(
        task.experiment,
        item["run"],
        task.version,
        item["settings"],
        item["result"],
        wall_s=p["wall_s"],
        root=root,
        provenance_=p,
    )
    together = f", trained with {p['batched'] - 1} other(s)" if p["batched"] > 1 else ""
    echo(
        f"{task.experiment}/{item['run']}: stored, {p['wall_s']:.0f} s "
        f"(task {p['batch_wall_s']:.0f} s{together}) on {p['worker']}"
    )
    return kept
