"""``make bench``'s builds: a cold build, the same build with its pages cached and a rebuild with
nothing changed, for the build's default plan and one chapter at a time, and each chapter's
execution time against its budget (``results/bench/build.json``).

Raises ``SystemExit`` with the build's output when a build fails.

Source: the book's own budgets (``tools/bench.py``'s docstring). Used by ``make bench`` and
``make bench --build-only``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import jupytext
from jupyter_cache import get_cache

from lib import _env

from .common import ROOT, TARGETS, pages_with_code, store_measure

COMMAND = [
    str(Path(sys.executable).parent / "jupyter-book"),
    "build",
    ".",
    "-W",
    "-n",
    "--keep-going",
]


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
