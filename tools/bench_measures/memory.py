"""``make bench``'s memory of each page, for Binder: every page with code executed in fast mode as
a reader's Jupyter runs it, each from a process of its own, its peak resident memory
(``results/bench/memory.json``).

Raises ``SystemExit`` with the page's error when a page fails to execute.

Source: mybinder.org's usage guidelines (1 GB guaranteed, 2 GB at most). Used by ``make bench``
and ``make bench --memory-only``.
"""

from __future__ import annotations

import json
import subprocess
import sys

from .common import TARGETS, pages_with_code, store_measure

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
