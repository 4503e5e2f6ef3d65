"""`make bench`: cold build, rebuild with nothing changed, and each chapter's execution time.

The two builds go to a scratch folder of their own under ``_build/`` (``--path-output``, with its
own execution cache, so the first is cold), deleted at the end: the reader's site and execution
cache are never touched. Options are parsed, and the ``BOOK_*`` settings checked, before anything
runs; an unknown option stops it with exit status 2 (``--help`` lists them).

Prints a table and writes ``_build/bench.json``; exits non-zero when a target is missed
(the book's budgets, fast mode on 2 cores): each chapter within its ``budget_seconds`` front
matter (at most 90 s; 120 s for the chapters that train models), every page's execution together
within 120 s, the whole cold build (set-up excluded) within 8 minutes, a rebuild with nothing
changed within 5 s.

Then two measures of training, each stored in ``results/bench/`` with its provenance
(``lib.experiments.store.save``) for the Reproducibility page:

* **Training against the machine's limit** (``results/bench/training.json``): the machine's float32
  peak, measured in the same run as the best of several 4096 x 4096 float32 matrix products, and
  each paper-scale CoNLL-2003 model of Chapter 3 (``CONLL_SETTINGS["full"]``: whole training split,
  its batch size and optimiser) trained for a few epochs: its matrix FLOPs per
  epoch, counted by ``torch.utils.flop_counter.FlopCounterMode`` (forward and backward; elementwise
  work and the optimizer are not counted), over its median seconds per epoch, as a share of the
  peak. Target: the one-layer rank-1 model reaches at least 40 %.
* **What rank 1 changes in attention** (``results/bench/attention.json``): one
  ``lib.layers.SelfAttention`` layer alone, forward and backward, single head, d = head size = 128,
  float32, rank 1 against full rank, at sequence lengths 128, 512 and 2048 (8,192 tokens per call).
  No target: at long sequences the n^2 softmax dominates both.

* **Independent runs batched** (``results/bench/batched.json``, ``lib.batched``): a short trial of
  1 to 27 noise runs trained together picks the batch that trains the most run-epochs per hour
  at that shape (part of MNIST, two threads; ``make full``'s batch, ``NOISE_BATCH``, comes from the
  projection below, timed at its own shape); then the whole noise grid of
  one dataset one at a time and in batches of that size, three CoNLL-2003 seeds of the one-layer
  rank-1 model for a few epochs one at a time and batched (runs per hour, the ratio, the share of
  the peak measured in the same run), and a few noise tasks through a Dask ``LocalCluster`` of
  2 workers x 1 thread against 1 worker x 2 threads. Targets: the batched grid at least 1.5 times
  the runs per hour of one at a time and at least 75 % of the float32 peak. ``--batched-only``
  runs only this measure.

For Chapter 5 it times one epoch of ``lib.models.PatchAttentionClassifier`` on MNIST
with the fast-mode settings of ``lib.experiments.noise.NOISE_SETTINGS`` and with the full-mode ones
(the whole 60,000-image training set).

Last, with the site built and Chromium present, the **redraw time** of every interactive figure
(``lib.book.interactive``): each page opened from disk in headless Chromium, each slider moved by
the keyboard several times, the time from the slider's input to the end of plotly's redraw as the
page's script records it. Target: the slowest redraw under 100 ms.

And the **work guards** (``lib._validate.MAX_WORK``): one call of each guarded sweep
(``lib.separation.best_direction``, ``lib.cross.context_length``,
``lib.cross.product_context_length``) at 1/64 of the work limit, timed, and its time projected
linearly to a call at the limit; and the exact functions' guard (``lib.exact.MAX_MP_SECONDS``,
digits and sizes together): ``boltz_mp``, ``min_distance`` and ``attention_mp`` at 50, 5,000 and
100,000 digits, each sized to 1/64 of the limit by ``lib.exact.mp_seconds`` and projected the same
way. Target: at most 120 s, the "under a minute" their docstrings promise with a factor of two for
a loaded machine. ``--guards-only`` runs only this measure.

And the **memory of each page** (``results/bench/memory.json``), for Binder: every page with code,
executed in fast mode as a reader's Jupyter runs it (jupytext, then nbclient with the ``python3``
kernel, each page from a process of its own), its peak the larger of the kernel's own peak
resident set (``getrusage``, exact for one process) and the sum over the kernel and every process
it starts (psutil, sampled every 20 ms); the part not shared with other processes (resident less
shared pages) is stored beside it. Target: each page's peak within the 1 GB (10^9 bytes) that
mybinder.org guarantees a session (above 2 GB it restarts the kernel). ``--memory-only`` runs
only this measure.

And **make full's projection** (``results/bench/projection.json``, ``tools/projection.py``): one
epoch of every run kind of ``make full`` timed alone in a worker's environment, for the book's base
code path (commit 4b8d492) and today's, and ``make full`` from nothing projected from them on its
local cluster. Target: the new path at most half the old. ``--projection-only`` runs only this
measure.

The builds and the chapters' execution times are also stored (``results/bench/build.json``, with
the provenance of the machine), so that the Reproducibility page can show the last measured cold
build: for the build's default plan (several chapters at a time, ``_ext/book_sphinx/parallel.py``)
and, in the same run, one chapter at a time with every core, each a cold build, the same build with
its pages cached (the difference is the pages' execution wall time) and a rebuild with nothing
changed. Targets: the pages' execution within 120 s of wall time, the cold build within 8 minutes,
the rebuild within 5 s. ``--build-only`` runs only these builds.

``--training-only`` skips the builds and the redraws; ``--redraw-only`` measures only the redraws of
the site already in ``_build/html``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import jupytext
from jupyter_cache import get_cache

from lib import _env

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / "_build"
COMMAND = [
    str(Path(sys.executable).parent / "jupyter-book"),
    "build",
    ".",
    "-W",
    "-n",
    "--keep-going",
]
TARGETS = {
    "cold_s": 8 * 60,
    "execution_s": 120,
    "rebuild_s": 5,
    "peak_share": 0.40,
    "redraw_ms": 100,
    "guard_limit_s": 120,
    "memory_mb": 1000,
}
#: Version of the two training measures (raise it when what they measure changes).
BENCH_VERSION = 1
ATTENTION = {"lengths": [128, 512, 2048], "d": 128, "tokens": 8192, "rounds": 5}


#: Put first on ``PYTHONPATH`` of a timed build: the build and its kernels then run as in a
#: reader's ``make book`` environment, without the test tools' ``rfc3987-syntax``
#: (``tools/reader_env/rfc3987_syntax.py`` says why).
READER_ENV = ROOT / "tools" / "reader_env"


def timed_build(output: Path, **settings: str) -> float:
    """Seconds of one strict build whose artefacts go to ``output/_build``, in a reader's
    environment (:data:`READER_ENV`) with the ``BOOK_*`` ``settings`` added."""
    path = os.pathsep.join(p for p in (str(READER_ENV), os.environ.get("PYTHONPATH", "")) if p)
    start = time.perf_counter()
    result = subprocess.run(
        [*COMMAND, "--path-output", str(output)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONPATH": path, **settings},
    )
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        print(result.stdout[-5000:])
        raise SystemExit(f"build failed (exit {result.returncode})")
    return elapsed


#: The two ways of executing the pages that ``make bench --build-only`` times side by side:
#: one chapter at a time with every core (the book's build before ``_ext/book_sphinx/parallel.py``)
#: and the build's default plan (``lib._env.page_plan``: one kernel of one thread per core).
def build_paths() -> dict[str, dict[str, str]]:
    cores = os.cpu_count() or 1
    return {
        "one at a time": {"BOOK_PAGE_JOBS": "1", "BOOK_THREADS": str(cores)},
        "default": {},
    }


def time_path(scratch: Path, settings: dict[str, str]) -> dict:
    """A cold build, the same build again with the executed pages cached (site and doctrees
    deleted), and a rebuild with nothing changed, into ``scratch``: the pages' execution wall time
    is the cold build less the cached one."""
    cold = timed_build(scratch, **settings)
    times = chapter_times(scratch / "_build")
    shutil.rmtree(scratch / "_build" / "html")
    shutil.rmtree(scratch / "_build" / ".doctrees")
    cached = timed_build(scratch, **settings)
    rebuild = timed_build(scratch, **settings)
    return {
        "settings": settings,
        "plan": list(_env.page_plan({**os.environ, **settings})),
        "cold_s": cold,
        "cached_s": cached,
        "execution_s": cold - cached,
        "chapters_sum_s": sum(times.values()),
        "rebuild_s": rebuild,
        "times": times,
    }


def measure_build(scratch: Path) -> dict:
    """Both ways of :func:`build_paths` timed by :func:`time_path` in one run, each into a scratch
    folder of its own; stored as ``results/bench/build.json``: the default path's ``{"cold_s",
    "rebuild_s", "execution_s"}`` (its pages' execution wall time), ``"chapters": [{"chapter",
    "budget_s", "execution_s", "within"}]``, ``"paths"`` (both, by name) and ``"targets"``."""

    def measure() -> dict:
        paths = {}
        for name, settings in build_paths().items():
            folder = scratch if name == "default" else scratch / "one-at-a-time"
            folder.mkdir(parents=True, exist_ok=True)
            paths[name] = time_path(folder, settings)
        default = paths["default"]
        rows = []
        for path in pages_with_code():
            budget = jupytext.read(path).metadata.get("budget_seconds")
            seconds = default["times"].get(path.stem)
            within = budget is None or (seconds is not None and seconds <= budget)
            rows.append(
                {"chapter": path.stem, "budget_s": budget, "execution_s": seconds, "within": within}
            )
        return {
            "cold_s": default["cold_s"],
            "rebuild_s": default["rebuild_s"],
            "execution_s": default["execution_s"],
            "chapters": rows,
            "paths": paths,
            "targets": {k: TARGETS[k] for k in ("cold_s", "rebuild_s", "execution_s")},
        }

    return store_measure("build", {"command": COMMAND[1:], "targets": TARGETS}, measure)


def print_build(b: dict) -> bool:
    """Print the builds and chapters of :func:`measure_build`; True when every target is met."""
    ok = b["cold_s"] <= TARGETS["cold_s"] and b["rebuild_s"] <= TARGETS["rebuild_s"]
    ok &= b["execution_s"] <= TARGETS["execution_s"]
    for name, p in b.get("paths", {}).items():
        jobs, threads = p["plan"]
        print(
            f"{name:<14} ({jobs} x {threads} thread(s)): cold {p['cold_s']:6.1f} s, pages "
            f"{p['execution_s']:6.1f} s wall ({p['chapters_sum_s']:.1f} s summed), rebuild "
            f"{p['rebuild_s']:.1f} s"
        )
    print(f"cold build            {b['cold_s']:7.1f} s   (target <= {TARGETS['cold_s']} s)")
    limit = TARGETS["execution_s"]
    print(f"  pages executed      {b['execution_s']:7.1f} s   (wall; target <= {limit} s)")
    print(f"rebuild, no change    {b['rebuild_s']:7.1f} s   (target <= {TARGETS['rebuild_s']} s)")
    for r in b["chapters"]:
        ok &= r["within"]
        budget = "-" if r["budget_s"] is None else f"{r['budget_s']:>3d} s"
        secs = "-" if r["execution_s"] is None else f"{r['execution_s']:7.1f} s"
        print(f"  {r['chapter']:<22} {secs}   budget {budget}   {'ok' if r['within'] else 'OVER'}")
    return ok


def chapter_times(build: Path) -> dict[str, float]:
    """Each chapter's execution seconds, from the execution cache of the build folder ``build``."""
    cache = get_cache(str(build / ".jupyter_cache"))
    times = {}
    for record in cache.list_cache_records():
        uri = Path(record.uri)
        times[uri.stem] = float(record.data.get("execution_seconds", float("nan")))
    return times


def peak_gflops(n: int = 4096, rounds: int = 5) -> float:
    """The machine's float32 matrix-product rate: best of ``rounds`` n x n products, GFLOP/s."""
    import torch

    a, b = torch.randn(n, n), torch.randn(n, n)
    a @ b  # warm-up
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        a @ b
        best = min(best, time.perf_counter() - start)
    return 2 * n**3 / best / 1e9


def training_share(epochs: int = 3) -> dict:
    """Each paper-scale CoNLL-2003 model's matrix FLOP rate while training, against the peak."""
    import statistics

    import torch
    from torch.utils.flop_counter import FlopCounterMode

    from lib import datasets, training
    from lib.experiments import conll
    from lib.models import TokenTagger

    full = conll.CONLL_SETTINGS["full"]
    train = datasets.load_conll2003("train")
    vocab = datasets.build_vocab(train)
    encoded = datasets.encode_pairs(train, vocab)
    tokens = sum(len(ids) for ids, _ in encoded)
    batches = training.bucket_batches(encoded, full["batch_size"], seed=full["seed"])

    def tagger(layers, rank):
        return TokenTagger(
            len(vocab),
            len(datasets.CONLL_TAGS),
            d=full["d"],
            n_layers=layers,
            rank=rank,
            seed=full["seed"],
            sparse_embedding=full["sparse_embedding"],
        )

    peak = peak_gflops()
    models = {}
    for layers, rank in [(1, 1), (3, 1), (6, 1), (1, None)]:
        name = conll.bench_name(layers, rank)
        counter = FlopCounterMode(display=False)
        with counter:
            training.fit(tagger(layers, rank), batches, epochs=1, lr=full["lr"], progress=False)
        flops = counter.get_total_flops()
        history = training.fit(
            tagger(layers, rank), batches, epochs=epochs, lr=full["lr"], progress=False
        )
        epoch_s = statistics.median(history.seconds.diff().fillna(history.seconds.iloc[0]))
        models[name] = {
            "flops_per_epoch": flops,
            "flops_per_token": flops / tokens,
            "epoch_s": epoch_s,
            "gflops": flops / epoch_s / 1e9,
            "peak_share": flops / epoch_s / 1e9 / peak,
        }
    return {
        "peak_gflops": peak,
        "tokens": tokens,
        "batch_size": full["batch_size"],
        "threads": torch.get_num_threads(),
        "models": models,
    }


def attention_curve() -> dict:
    """Seconds per forward + backward pass of one attention layer, rank 1 and full rank."""
    import statistics

    import torch

    from lib.layers import SelfAttention

    d, rows = ATTENTION["d"], []
    for n in ATTENTION["lengths"]:
        x = torch.randn(max(1, ATTENTION["tokens"] // n), n, d, generator=torch.Generator())
        x.requires_grad_(True)
        seconds = {}
        for rank in (1, None):
            layer = SelfAttention(d, head_dim=d, rank=rank, dtype=torch.float32, seed=0)
            times = []
            for _ in range(ATTENTION["rounds"] + 1):  # the first call warms up
                start = time.perf_counter()
                layer(x).sum().backward()
                times.append(time.perf_counter() - start)
            seconds["rank 1" if rank else "full rank"] = statistics.median(times[1:])
        rows.append(
            {
                "n": n,
                "batch": x.shape[0],
                "rank1_s": seconds["rank 1"],
                "full_s": seconds["full rank"],
                "speedup": seconds["full rank"] / seconds["rank 1"],
            }
        )
    return {"rows": rows}


def store_measure(run: str, settings: dict, measure) -> dict:
    """Run ``measure`` and store its result in results/bench/ with its provenance."""
    from lib import runtime
    from lib.experiments import store

    start = time.perf_counter()
    result = measure()
    store.save(
        "bench",
        run,
        BENCH_VERSION,
        settings,
        result,
        wall_s=time.perf_counter() - start,
        device=str(runtime.DEVICE),
    )
    return result


def classifier_epochs(rounds: int = 3) -> dict:
    """Seconds per training epoch of the Chapter 5 classifier, fast and full settings (best of
    ``rounds``)."""
    from lib.experiments import noise

    out = {}
    for mode in ("fast", "full"):
        # one epoch, so no snapshot of a later epoch
        settings = {**noise.NOISE_SETTINGS[mode], "epochs": 1, "test_images": 1000, "snapshots": []}
        seconds = [
            noise.noise_experiment("mnist", "label", 0.0, 0, **settings)["seconds"]
            for _ in range(rounds)
        ]
        full = noise.NOISE_SETTINGS[mode]
        runs = len(noise.noise_run_names(mode))
        out[mode] = {
            "images": settings["train_images"] or 60_000,
            "epoch_s": min(seconds),
            "projected_s_per_dataset": min(seconds) * full["epochs"] * runs,
        }
    return out


def print_classifier(c: dict) -> None:
    print("Chapter 5 classifier (PatchAttentionClassifier, MNIST):")
    for mode, r in c.items():
        print(
            f"  {mode:<5} {r['images']:>6,} images: {r['epoch_s']:6.2f} s per epoch; "
            f"noise experiment ~{r['projected_s_per_dataset'] / 60:.1f} min per dataset"
        )


def print_training(t: dict, a: dict) -> bool:
    one = t["models"]["1 layer, rank 1"]
    ok = one["peak_share"] >= TARGETS["peak_share"]
    print(
        f"float32 peak {t['peak_gflops']:.0f} GFLOP/s; paper-scale CoNLL-2003 training "
        f"({t['tokens']:,} tokens, batch {t['batch_size']}), matrix FLOPs over the peak:"
    )
    for name, m in t["models"].items():
        print(
            f"  {name:<18} {m['flops_per_token'] / 1e6:6.2f} MFLOP/token"
            f"  {m['epoch_s']:6.2f} s/epoch  {m['gflops']:6.1f} GFLOP/s"
            f"  {m['peak_share']:5.0%} of peak"
        )
    print(
        f"  one layer, rank 1: {one['peak_share']:.0%} (target >= {TARGETS['peak_share']:.0%})   "
        f"{'ok' if ok else 'MISSED'}"
    )
    print("one attention layer, forward + backward, d = 128, float32 (full rank / rank 1):")
    for r in a["rows"]:
        print(
            f"  n {r['n']:>5}  rank 1 {r['rank1_s'] * 1e3:8.1f} ms"
            f"  full {r['full_s'] * 1e3:8.1f} ms  {r['speedup']:4.1f}x"
        )
    return ok


def measure_training() -> tuple[dict, dict]:
    from lib.experiments import conll

    training = store_measure(
        "training",
        {"conll": conll.CONLL_SETTINGS["full"], "version": conll.CONLL_VERSION, "epochs": 3},
        training_share,
    )
    return training, store_measure("attention", ATTENTION, attention_curve)


#: The batched-runs measure (``results/bench/batched.json``): batches of runs tried for the noise
#: grid, the images and epochs of that trial, the CoNLL-2003 seeds and epochs, the local clusters.
BATCHED = {
    "trial_batches": [1, 3, 9, 14, 27],
    "trial_images": 5120,
    "trial_epochs": 2,
    "grid_dataset": "mnist",
    "conll_seeds": [0, 1, 2],
    "conll_epochs": 2,
    "cluster_tasks": 4,
    "cluster_images": 12000,
    "cluster_epochs": 2,
    "targets": {"noise_ratio": 1.5, "noise_peak_share": 0.75},
}


def _noise_flops_per_image(settings: dict) -> float:
    """Matrix FLOPs of one training step of the noise model per image (forward and backward),
    counted by ``torch.utils.flop_counter.FlopCounterMode`` on one batch."""
    from torch.utils.flop_counter import FlopCounterMode

    from lib import training
    from lib.experiments import noise

    model, batches, _ = noise._prepare(
        "mnist",
        "label",
        0.0,
        0,
        settings["batch_size"] * 2,
        1000,
        settings["batch_size"],
        settings["d"],
        settings["qk_init"],
    )
    counter = FlopCounterMode(display=False)
    with counter:
        training.fit(model, batches[:1], epochs=1, lr=settings["lr"], progress=False)
    return counter.get_total_flops() / len(batches[0][0])


def batched_runs() -> dict:
    """Independent runs one at a time against the same runs batched (lib.batched), side by side."""
    from lib import batched, datasets, training
    from lib.experiments import noise, tasks
    from lib.models import TokenTagger

    b = BATCHED
    full = noise.NOISE_SETTINGS["full"]
    peak = peak_gflops()
    per_image = _noise_flops_per_image(full)
    runs = noise.noise_run_names("full")

    # 1. which batch of runs trains the most runs per hour (a short trial on part of MNIST)
    trial = {}
    for k in b["trial_batches"]:
        prepared = [
            noise._prepare(
                b["grid_dataset"],
                kind,
                level,
                seed,
                b["trial_images"],
                1000,
                full["batch_size"],
                full["d"],
                full["qk_init"],
            )
            for kind, level, seed in (runs * 2)[:k]
        ]
        start = time.perf_counter()
        if k == 1:
            training.fit(
                prepared[0][0],
                prepared[0][1],
                epochs=b["trial_epochs"],
                lr=full["lr"],
                seed=0,
                progress=False,
            )
        else:
            batched.fit_stacked(
                [p[0] for p in prepared],
                [p[1] for p in prepared],
                epochs=b["trial_epochs"],
                lr=full["lr"],
                seeds=list(range(k)),
                progress=False,
            )
        seconds = time.perf_counter() - start
        flops = per_image * b["trial_images"] * b["trial_epochs"] * k
        trial[str(k)] = {
            "seconds": seconds,
            "run_epochs_per_s": k * b["trial_epochs"] / seconds,
            "peak_share": flops / seconds / 1e9 / peak,
        }
    best = max(trial, key=lambda k: trial[k]["run_epochs_per_s"])

    # 2. the whole noise grid of one dataset, one at a time and in batches of the best size
    flops = per_image * (full["train_images"] or 60_000) * full["epochs"] * len(runs)
    start = time.perf_counter()
    for kind, level, seed in runs:
        noise.noise_experiment(b["grid_dataset"], kind, level, seed, **full)
    serial_s = time.perf_counter() - start
    start = time.perf_counter()
    size = int(best)
    for i in range(0, len(runs), size):
        noise.noise_experiments(b["grid_dataset"], runs[i : i + size], **full)
    batched_s = time.perf_counter() - start
    grid = {
        "runs": len(runs),
        "batch": size,
        "serial_s": serial_s,
        "batched_s": batched_s,
        "serial_runs_per_hour": len(runs) / serial_s * 3600,
        "batched_runs_per_hour": len(runs) / batched_s * 3600,
        "ratio": serial_s / batched_s,
        "flops": flops,
        "serial_peak_share": flops / serial_s / 1e9 / peak,
        "batched_peak_share": flops / batched_s / 1e9 / peak,
    }

    # 3. three CoNLL-2003 seeds of the one-layer rank-1 model, a few epochs each
    from torch.utils.flop_counter import FlopCounterMode

    from lib.experiments import conll

    cs = conll.CONLL_SETTINGS["full"]
    train = datasets.load_conll2003("train")
    vocab = datasets.build_vocab(train)
    encoded = datasets.encode_pairs(train, vocab)

    def tagger(seed):
        return TokenTagger(
            len(vocab), len(datasets.CONLL_TAGS), d=cs["d"], n_layers=1, rank=1, seed=seed
        )

    seeds = b["conll_seeds"]
    batches = [training.bucket_batches(encoded, cs["batch_size"], seed=s) for s in seeds]
    counter = FlopCounterMode(display=False)
    with counter:
        training.fit(tagger(0), batches[0], epochs=1, lr=cs["lr"], progress=False)
    conll_flops = counter.get_total_flops() * len(seeds) * b["conll_epochs"]
    start = time.perf_counter()
    for s, bs in zip(seeds, batches, strict=True):
        training.fit(tagger(s), bs, epochs=b["conll_epochs"], lr=cs["lr"], seed=s, progress=False)
    conll_serial = time.perf_counter() - start
    start = time.perf_counter()
    batched.fit_stacked(
        [tagger(s) for s in seeds],
        batches,
        epochs=b["conll_epochs"],
        lr=cs["lr"],
        seeds=seeds,
        progress=False,
    )
    conll_batched = time.perf_counter() - start
    conll_row = {
        "runs": len(seeds),
        "epochs": b["conll_epochs"],
        "serial_s": conll_serial,
        "batched_s": conll_batched,
        "serial_runs_per_hour": len(seeds) / conll_serial * 3600,
        "batched_runs_per_hour": len(seeds) / conll_batched * 3600,
        "ratio": conll_serial / conll_batched,
        "serial_peak_share": conll_flops / conll_serial / 1e9 / peak,
        "batched_peak_share": conll_flops / conll_batched / 1e9 / peak,
    }

    # 4. the local cluster's shape: 2 workers x 1 thread against 1 worker x 2 threads
    import os
    import tempfile

    cluster = {}
    small = {
        **full,
        "train_images": b["cluster_images"],
        "test_images": 1000,
        "epochs": b["cluster_epochs"],
        "seeds": [0, 1, 2],
    }
    cores = os.cpu_count() or 1
    for workers, threads in ((cores, 1), (1, cores)):
        with tempfile.TemporaryDirectory() as root:
            plan = tasks.plan(
                "full",
                datasets=[b["grid_dataset"]],
                conll_runs=[],
                noise_settings=small,
                noise_batch=size,
                root=root,
            )
            plan = plan[: b["cluster_tasks"]]
            client = tasks.make_client(
                environ={"BOOK_WORKERS": str(workers), "BOOK_THREADS": str(threads)}
            )
            try:
                client.run(lambda: None)
                start = time.perf_counter()
                tasks.run_tasks(plan, client, root=root, progress=False, echo=lambda _: None)
                seconds = time.perf_counter() - start
            finally:
                client.close()
                client.cluster.close()
        cluster[f"{workers}x{threads}"] = {
            "tasks": len(plan),
            "runs": sum(len(t.runs) for t in plan),
            "seconds": seconds,
            "runs_per_hour": sum(len(t.runs) for t in plan) / seconds * 3600,
        }
    return {
        "peak_gflops": peak,
        "noise_flops_per_image": per_image,
        "trial": trial,
        "best_batch": size,
        "noise_grid": grid,
        "conll": conll_row,
        "cluster": cluster,
        "targets": b["targets"],
    }


def print_batched(r: dict) -> bool:
    t, g, c = r["targets"], r["noise_grid"], r["conll"]
    print(f"independent runs batched into one model (float32 peak {r['peak_gflops']:.0f} GFLOP/s):")
    for k, row in r["trial"].items():
        print(
            f"  trial, {k:>2} run(s) together: {row['run_epochs_per_s'] * 3600:7.0f} run-epochs "
            f"per hour, {row['peak_share']:4.0%} of peak"
        )
    ok = g["ratio"] >= t["noise_ratio"] and g["batched_peak_share"] >= t["noise_peak_share"]
    print(
        f"  noise grid, {g['runs']} runs: one at a time {g['serial_runs_per_hour']:.0f} runs/h "
        f"({g['serial_peak_share']:.0%} of peak), in batches of {g['batch']} "
        f"{g['batched_runs_per_hour']:.0f} runs/h ({g['batched_peak_share']:.0%}): "
        f"{g['ratio']:.2f}x (targets >= {t['noise_ratio']}x and >= {t['noise_peak_share']:.0%})"
        f"   {'ok' if ok else 'MISSED'}"
    )
    print(
        f"  CoNLL-2003, {c['runs']} seeds x {c['epochs']} epochs: one at a time "
        f"{c['serial_s']:.0f} s ({c['serial_peak_share']:.0%} of peak), "
        f"batched {c['batched_s']:.0f} s ({c['batched_peak_share']:.0%}): "
        f"{c['ratio']:.2f}x (no target)"
    )
    for shape, row in r["cluster"].items():
        print(
            f"  local cluster {shape}: {row['runs']} runs in {row['seconds']:.0f} s, "
            f"{row['runs_per_hour']:.0f} runs/h"
        )
    return ok


def measure_batched() -> dict:
    from lib.experiments import noise

    return store_measure(
        "batched",
        {"batched": BATCHED, "noise": noise.NOISE_SETTINGS["full"], "version": noise.NOISE_VERSION},
        batched_runs,
    )


def redraw_times(site: Path, moves: int = 6) -> dict | None:
    """The redraw times (ms) of every interactive figure of the built site, per figure: the
    slowest of ``moves`` keyboard steps; ``None`` without Chromium and its driver."""
    chromium, driver_path = shutil.which("chromium"), shutil.which("chromedriver")
    if not (chromium and driver_path):
        return None
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.keys import Keys

    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1280,1600"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    times = {}
    try:
        for page in sorted((site / "chapters").glob("*.html")):
            driver.get(page.as_uri())
            expected = page.read_text(encoding="utf8").count('class="book-interactive"')
            deadline = time.time() + 15
            boxes = driver.find_elements("css selector", ".book-interactive")
            while len(boxes) != expected and time.time() < deadline:  # the page still loading
                time.sleep(0.1)
                boxes = driver.find_elements("css selector", ".book-interactive")
            if len(boxes) != expected:
                raise RuntimeError(f"{page.name}: {len(boxes)} of {expected} figures found")
            deadline = time.time() + 30
            while (
                boxes
                and time.time() < deadline
                and driver.execute_script(
                    "return document.querySelectorAll('.book-interactive[data-frame]').length"
                )
                < len(boxes)
            ):
                time.sleep(0.1)
            for box in boxes:
                slider = box.find_element("css selector", "input[type=range]")
                driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", slider)
                slowest = 0.0
                for step in range(moves):
                    frame = box.get_attribute("data-frame")
                    slider.send_keys(Keys.ARROW_RIGHT if step < moves // 2 else Keys.ARROW_LEFT)
                    deadline = time.time() + 5
                    while box.get_attribute("data-frame") == frame and time.time() < deadline:
                        time.sleep(0.01)
                    slowest = max(slowest, float(box.get_attribute("data-draw-ms") or "nan"))
                times[f"{page.stem}/{box.get_attribute('id')}"] = slowest
    finally:
        driver.quit()
    return times


def print_redraw(times: dict | None) -> bool:
    if times is None:
        print("interactive figures: not measured (needs chromium and chromium-driver)")
        return True
    if not times:
        print("interactive figures: none found in _build/html (build the book first)")
        return False
    worst = max(times, key=times.get)
    for name, ms in times.items():
        print(f"  {name:<60} {ms:6.1f} ms")
    ok = times[worst] <= TARGETS["redraw_ms"]
    print(
        f"slowest redraw of {len(times)} interactive figures: {times[worst]:.1f} ms ({worst}; "
        f"target <= {TARGETS['redraw_ms']} ms)   {'ok' if ok else 'MISSED'}"
    )
    return ok


def guard_times(share: int = 64) -> list[dict]:
    """Each work guard's projected seconds at its limit: one call at ``MAX_WORK / share`` units of
    work, timed on one thread, times ``share`` (the work of these sweeps is linear in its units)."""
    import numpy as np
    import torch

    from lib import _validate, cross, separation

    torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    budget = _validate.MAX_WORK // share
    V = rng.normal(size=(200, 8))
    per_draw = 201 * 200 // 2 * 8
    draws = budget // per_draw
    points = rng.uniform(size=(1000, 2))
    m_ctx = 1
    while 1000 * sum(m * m for m in range(1, m_ctx + 2)) <= budget:
        m_ctx += 1
    res, m_prod = 101, 1
    while (m_prod + 1) * res**3 + res * (m_prod + 1) * (m_prod + 2) // 2 <= budget:
        m_prod += 1
    calls = [
        ("separation.best_direction", draws * per_draw,
         lambda: separation.best_direction(V, draws=draws)),
        ("cross.context_length", 1000 * sum(m * m for m in range(1, m_ctx + 1)),
         lambda: cross.context_length(lambda p: p.sum(axis=1), 2, [1e-9], 10.0, points,
                                      m_max=m_ctx)),
        ("cross.product_context_length", m_prod * res**3 + res * m_prod * (m_prod + 1) // 2,
         lambda: cross.product_context_length(lambda p: p[:, 0], 3, [1e-9], 10.0, m_max=m_prod,
                                              resolution=res)),
    ]  # fmt: skip
    rows = []
    for name, work, call in calls:
        start = time.perf_counter()
        call()
        seconds = time.perf_counter() - start
        at_limit = seconds * _validate.MAX_WORK / work
        rows.append({"function": name, "work": work, "seconds": seconds, "at_limit_s": at_limit})
    return rows + [measure_guard_time()] + exact_guard_times(share)


def measure_guard_time() -> dict:
    """:func:`lib.quantize.duplicate_cell_measure` at its work guard (``n`` times the bits of its
    rational, :data:`lib.quantize.MAX_MEASURE_WORK`): its work is quadratic in ``n``, so the call
    is made at the limit itself (m = 3, d = 40, the largest ``n`` accepted) and timed; its
    docstring promises under a second."""
    import math

    from lib import quantize

    m, d = 3, 40
    bits = d * math.log2(m)
    n = 1
    while (n + 1) * math.ceil((n + 1) * bits) <= quantize.MAX_MEASURE_WORK:
        n += 1
    start = time.perf_counter()
    quantize.duplicate_cell_measure(m, n, d)
    seconds = time.perf_counter() - start
    return {
        "function": f"quantize.duplicate_cell_measure ({m}, {n:,}, {d})",
        "work": n * math.ceil(n * bits),
        "seconds": seconds,
        "at_limit_s": seconds,
        "target_s": 1.0,
    }


def exact_guard_times(share: int = 64) -> list[dict]:
    """The exact functions' guard (``lib.exact.MAX_MP_SECONDS``): at each of a few precisions,
    a call sized so that ``lib.exact.mp_seconds`` expects ``MAX_MP_SECONDS / share``, timed, and
    projected linearly to a call at the limit (its work is linear in the operation counts)."""
    import numpy as np

    from lib import exact, layers

    budget = exact.MAX_MP_SECONDS / share
    layer = layers.SelfAttention(4, head_dim=4, seed=0)
    rng = np.random.default_rng(0)

    def boltz(dps):
        n = max(1, int(budget / exact.mp_seconds(dps, 4, 1)))
        return (
            n,
            exact.mp_seconds(dps, 4 * n, n),
            lambda: exact.boltz_mp(rng.normal(size=n), 1, dps),
        )

    def distance(dps):
        m = 2
        while exact.mp_seconds(dps, (m + 1) * m // 2 * 24) <= budget:
            m += 1
        pairs = m * (m - 1) // 2
        pts = [list(p) for p in rng.normal(size=(m, 4))]
        return m, exact.mp_seconds(dps, pairs * 24), lambda: exact.min_distance(pts, dps)

    def attention(dps):
        n = 2
        while exact.mp_seconds(dps, 2 * (n + 1) * 48 + 16 * (n + 1) ** 2 + 32 * (n + 1),
                               (n + 1) ** 2) <= budget:  # fmt: skip
            n += 1
        model = exact.mp_seconds(dps, 2 * n * 48 + 16 * n * n + 32 * n, n * n)
        return n, model, lambda: exact.attention_mp(rng.normal(size=(n, 4)), layer, dps)

    rows = []
    for name, sized in (("exact.boltz_mp", boltz), ("exact.min_distance", distance),
                        ("exact.attention_mp", attention)):  # fmt: skip
        for dps in (50, 5_000, exact.MAX_DPS):
            size, model, call = sized(dps)
            start = time.perf_counter()
            call()
            seconds = time.perf_counter() - start
            rows.append(
                {
                    "function": f"{name} ({dps:,} digits, size {size:,})",
                    "work": model,
                    "seconds": seconds,
                    "at_limit_s": seconds * exact.MAX_MP_SECONDS / model,
                }
            )
    return rows


def print_guards(rows: list[dict]) -> bool:
    ok = all(r["at_limit_s"] <= r.get("target_s", TARGETS["guard_limit_s"]) for r in rows)
    print(
        "work guards, projected to a call at lib._validate.MAX_WORK (or lib.exact.MAX_MP_SECONDS):"
    )
    for r in rows:
        target = r.get("target_s", TARGETS["guard_limit_s"])
        print(
            f"  {r['function']:<30} {r['seconds']:6.2f} s for {r['work']:,.4g} "
            f"{'expected s' if r['function'].startswith('exact.') else 'units'} -> "
            f"{r['at_limit_s']:6.1f} s at the limit (target <= {target} s)   "
            f"{'ok' if r['at_limit_s'] <= target else 'MISSED'}"
        )
    return ok


#: The program that executes one page and prints its memory (run in a process of its own, so that
#: ``RUSAGE_CHILDREN`` holds only that page's kernel).
_MEMORY_PROBE = r"""
import json, resource, sys, threading, time
import jupytext, nbclient, psutil

path, interval, timeout, folder, kernel_name = sys.argv[1:6]
notebook = jupytext.read(path)
client = nbclient.NotebookClient(notebook, timeout=int(timeout), kernel_name=kernel_name,
                                 resources={"metadata": {"path": folder}})
peak, anonymous, done = [0], [0], threading.Event()

def sample():
    me = psutil.Process()
    while not done.is_set():
        total = anon = 0
        for child in me.children(recursive=True):
            try:
                info = child.memory_info()
            except psutil.Error:
                continue
            total, anon = total + info.rss, anon + info.rss - info.shared
        peak[0], anonymous[0] = max(peak[0], total), max(anonymous[0], anon)
        time.sleep(float(interval))

watcher = threading.Thread(target=sample, daemon=True)
watcher.start()
start = time.perf_counter()
client.execute()
seconds = time.perf_counter() - start
done.set()
watcher.join()
kernel = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024  # kB on Linux
print(json.dumps({"sampled_bytes": peak[0], "anonymous_bytes": anonymous[0],
                  "kernel_bytes": kernel, "seconds": seconds}))
"""
#: mybinder.org's usage guidelines: at least 1 GB of memory, at most 2 GB (MB = 10^6 bytes).
MEMORY = {
    "interval_s": 0.02,
    "kernel": "python3",
    "mode": "fast",
    "timeout_s": 1800,
    "binder_guaranteed_mb": TARGETS["memory_mb"],
    "binder_max_mb": 2000,
}


def pages_with_code() -> list[Path]:
    """The chapters' pages that execute code (the book's notebooks), in file-name order."""
    return [p for p in sorted((ROOT / "chapters").glob("*.md")) if "{code-cell}" in p.read_text()]


def chapter_memory() -> dict:
    """Peak memory (MB, 10^6 bytes) of every page with code, each executed alone in fast mode."""
    import os

    env = {**os.environ, "BOOK_MODE": "fast"}
    rows = []
    for path in pages_with_code():
        done = subprocess.run(
            [sys.executable, "-c", _MEMORY_PROBE, str(path), str(MEMORY["interval_s"]),
             str(MEMORY["timeout_s"]), str(path.parent), MEMORY["kernel"]],
            cwd=path.parent, env=env, capture_output=True, text=True,
        )  # fmt: skip
        if done.returncode != 0:
            raise SystemExit(f"{path.name} failed to execute:\n{done.stderr[-4000:]}")
        probe = json.loads(done.stdout.strip().splitlines()[-1])
        peak = max(probe["sampled_bytes"], probe["kernel_bytes"]) / 1e6
        rows.append(
            {
                "page": path.stem,
                "peak_mb": peak,
                "kernel_mb": probe["kernel_bytes"] / 1e6,
                "sampled_mb": probe["sampled_bytes"] / 1e6,
                "anonymous_mb": probe["anonymous_bytes"] / 1e6,
                "seconds": probe["seconds"],
            }
        )
        print(f"  {path.stem:<28} {peak:7.0f} MB  ({probe['seconds']:.0f} s)", flush=True)
    return {"pages": rows, "target_mb": TARGETS["memory_mb"]}


def measure_memory() -> dict:
    print("peak memory of each page in fast mode:", flush=True)
    return store_measure("memory", MEMORY, chapter_memory)


def print_memory(m: dict) -> bool:
    worst = max(m["pages"], key=lambda r: r["peak_mb"])
    ok = worst["peak_mb"] <= TARGETS["memory_mb"]
    print(
        f"largest peak memory: {worst['peak_mb']:.0f} MB ({worst['page']}; target <= "
        f"{TARGETS['memory_mb']} MB, Binder's guaranteed memory)   {'ok' if ok else 'MISSED'}"
    )
    return ok


def _projection():
    """tools/projection.py, also when this file is loaded by path (the tests)."""
    here = str(Path(__file__).resolve().parent)
    if here not in sys.path:
        sys.path.insert(0, here)
    import projection

    return projection


def measure_projection() -> dict:
    """``make full``'s projection, old and new path (tools/projection.py), stored: as
    ``projection`` on the CPU, as ``projection-cuda`` (and so on) when ``BOOK_DEVICE`` names an
    accelerator (the timing processes inherit it), so that a GPU's timings never replace the
    CPU's."""
    from lib import runtime
    from lib.experiments import conll, noise

    projection = _projection()
    settings = {
        "projection": projection.PROJECTION,
        "conll": conll.CONLL_VERSION,
        "noise": noise.NOISE_VERSION,
    }
    device = runtime.DEVICE.type
    run = "projection" if device == "cpu" else f"projection-{device}"
    return store_measure(run, settings, projection.measure)


def arguments(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line, parsed and checked (with every BOOK_* setting) before anything runs."""
    parser = argparse.ArgumentParser(
        prog="python tools/bench.py",
        description="make bench: the book's speed targets (see this file's docstring).",
    )
    only = parser.add_mutually_exclusive_group()
    only.add_argument(
        "--redraw-only", action="store_true", help="only the redraw times of _build/html"
    )
    only.add_argument("--batched-only", action="store_true", help="only the batched-runs measure")
    only.add_argument(
        "--guards-only", action="store_true", help="only the work guards' projected times"
    )
    only.add_argument(
        "--memory-only", action="store_true", help="only each page's peak memory in fast mode"
    )
    only.add_argument(
        "--training-only", action="store_true", help="only the training and classifier measures"
    )
    only.add_argument(
        "--build-only",
        action="store_true",
        help="only the cold build, the rebuild and each chapter's execution (stored)",
    )
    only.add_argument(
        "--projection-only",
        action="store_true",
        help="only make full's projection, old and new code path (tools/projection.py)",
    )
    return _env.parse_args(parser, argv)


def main(argv: list[str] | None = None) -> int:
    args = arguments(argv)
    if args.redraw_only:
        return 0 if print_redraw(redraw_times(BUILD / "html")) else 1
    if args.batched_only:
        return 0 if print_batched(measure_batched()) else 1
    if args.guards_only:
        return 0 if print_guards(guard_times()) else 1
    if args.memory_only:
        return 0 if print_memory(measure_memory()) else 1
    if args.projection_only:
        return 0 if _projection().print_projection(measure_projection()) else 1
    if args.training_only:
        training, attention = measure_training()
        print_classifier(classifier_epochs())
        return 0 if print_training(training, attention) else 1
    # The cold build goes to a scratch output folder of its own (its own execution cache
    # included): the reader's _build/html and cache are left as they are.
    BUILD.mkdir(exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="bench-", dir=BUILD))
    try:
        if args.build_only:
            return 0 if print_build(measure_build(scratch)) else 1
        return _measure_all(scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _measure_all(scratch: Path) -> int:
    build = measure_build(scratch)
    training, attention = measure_training()
    classifier = classifier_epochs()
    batched = measure_batched()
    result = {
        "cold_s": build["cold_s"],
        "rebuild_s": build["rebuild_s"],
        "chapters": build["chapters"],
        "targets": TARGETS,
        "classifier": classifier,
    }
    (BUILD / "bench.json").write_text(json.dumps(result, indent=2))
    ok = print_build(build)
    print_classifier(classifier)
    ok &= print_training(training, attention)
    ok &= print_batched(batched)
    redraw = redraw_times(scratch / "_build" / "html")
    result["redraw_ms"] = redraw
    (BUILD / "bench.json").write_text(json.dumps(result, indent=2))
    ok &= print_redraw(redraw)
    result["guards"] = guards = guard_times()
    (BUILD / "bench.json").write_text(json.dumps(result, indent=2))
    ok &= print_guards(guards)
    result["memory"] = memory = measure_memory()
    (BUILD / "bench.json").write_text(json.dumps(result, indent=2))
    ok &= print_memory(memory)
    result["projection"] = projected = measure_projection()
    (BUILD / "bench.json").write_text(json.dumps(result, indent=2))
    ok &= _projection().print_projection(projected)
    print("all targets met" if ok else "TARGET MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
