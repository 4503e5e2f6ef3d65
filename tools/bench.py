"""`make bench`: cold build, rebuild with nothing changed, and each chapter's execution time.

Prints a table and writes ``_build/bench.json``; exits non-zero when a target is missed
(DESIGN.md budgets, fast mode on 2 cores): each chapter within its ``budget_seconds`` front
matter (at most 90 s), the whole cold build (set-up excluded) within 8 minutes, a rebuild with
nothing changed within 15 s.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import jupytext
from jupyter_cache import get_cache

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / "_build"
COMMAND = [str(Path(sys.executable).parent / "jupyter-book"), "build", ".", "-W", "-n", "--keep-going"]
TARGETS = {"cold_s": 8 * 60, "rebuild_s": 15}


def timed_build() -> float:
    start = time.perf_counter()
    result = subprocess.run(COMMAND, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        print(result.stdout[-5000:])
        raise SystemExit(f"build failed (exit {result.returncode})")
    return elapsed


def chapter_times() -> dict[str, float]:
    cache = get_cache(str(BUILD / ".jupyter_cache"))
    times = {}
    for record in cache.list_cache_records():
        uri = Path(record.uri)
        times[uri.stem] = float(record.data.get("execution_seconds", float("nan")))
    return times


def main() -> int:
    shutil.rmtree(BUILD, ignore_errors=True)
    cold = timed_build()
    rebuild = timed_build()
    times = chapter_times()
    rows, ok = [], True
    for path in sorted((ROOT / "chapters").glob("*.md")):
        if "{code-cell}" not in path.read_text():
            continue
        budget = jupytext.read(path).metadata.get("budget_seconds")
        seconds = times.get(path.stem)
        within = budget is None or (seconds is not None and seconds <= budget)
        ok &= within
        rows.append({"chapter": path.stem, "budget_s": budget, "execution_s": seconds, "within": within})
    result = {"cold_s": cold, "rebuild_s": rebuild, "chapters": rows,
              "targets": TARGETS, "threads": 2}
    ok &= cold <= TARGETS["cold_s"] and rebuild <= TARGETS["rebuild_s"]
    (BUILD / "bench.json").write_text(json.dumps(result, indent=2))
    print(f"cold build            {cold:7.1f} s   (target <= {TARGETS['cold_s']} s)")
    print(f"rebuild, no change    {rebuild:7.1f} s   (target <= {TARGETS['rebuild_s']} s)")
    for r in rows:
        budget = "-" if r["budget_s"] is None else f"{r['budget_s']:>3d} s"
        secs = "-" if r["execution_s"] is None else f"{r['execution_s']:7.1f} s"
        print(f"  {r['chapter']:<22} {secs}   budget {budget}   {'ok' if r['within'] else 'OVER'}")
    print("all targets met" if ok else "TARGET MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
