"""What every measure of ``make bench`` shares: the repository's paths, the targets, the store of
a measure's result (``results/bench/``, with its provenance), the machine's float32 peak and the
pages that execute code.

Raises nothing of its own; :func:`store_measure` raises what the measure raises.

Source: the book's own budgets (``tools/bench.py``'s docstring). Used by ``make bench``.
"""

from __future__ import annotations

import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BUILD = ROOT / "_build"
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


def pages_with_code() -> list[Path]:
    """The chapters' pages that execute code (the book's notebooks), in file-name order."""
    return [p for p in sorted((ROOT / "chapters").glob("*.md")) if "{code-cell}" in p.read_text()]
