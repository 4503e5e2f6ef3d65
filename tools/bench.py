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
with the fast-mode settings of ``lib.experiments.noise.settings.NOISE_SETTINGS`` and with the
full-mode ones (the whole 60,000-image training set).

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

The measures live in ``tools/bench_measures/``, one module each; this file parses the command line
and runs them.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

from lib import _env

# The measures live in tools/bench_measures/, beside this file; put its folder on the path also
# when this file is loaded by path (the tests), not run as a script.
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_measures.batched import measure_batched, print_batched
from bench_measures.builds import measure_build, print_build
from bench_measures.common import BUILD, TARGETS, store_measure
from bench_measures.guards import guard_times, print_guards
from bench_measures.memory import measure_memory, print_memory
from bench_measures.redraw import print_redraw, redraw_times
from bench_measures.training import (
    classifier_epochs,
    measure_training,
    print_classifier,
    print_training,
)


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
