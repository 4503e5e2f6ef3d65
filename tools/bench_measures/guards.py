"""``make bench``'s work guards: one call of each guarded sweep (``lib._validate.MAX_WORK``) and of
each exact function (``lib.exact.MAX_MP_SECONDS``) at a share of its limit, timed and projected to
a call at the limit; ``lib.quantize.duplicate_cell_measure`` at its own limit.

Raises what the timed calls raise.

Source: the book's own budget (``tools/bench.py``'s docstring; the guards' docstrings promise
"under a minute"). Used by ``make bench`` and ``make bench --guards-only``.
"""

from __future__ import annotations

import time

from .common import TARGETS


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
