"""``make bench``'s batched runs (``results/bench/batched.json``, ``lib.batched``): a short trial
picks the batch of noise runs that trains the most run-epochs per hour; then the whole noise grid
of one dataset one at a time and in batches of that size, three CoNLL-2003 seeds one at a time and
batched, and a few noise tasks through the local Dask cluster's two shapes.

Raises what the training raises (a missing dataset's error among them).

Source: the book's own targets (``tools/bench.py``'s docstring). Used by ``make bench`` and
``make bench --batched-only``.
"""

from __future__ import annotations

import time

from .common import peak_gflops, store_measure

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

    model, batches, _ = noise.runs._prepare(
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
    from lib.experiments import noise

    b = BATCHED
    full = noise.NOISE_SETTINGS["full"]
    peak = peak_gflops()
    per_image = _noise_flops_per_image(full)
    runs = noise.noise_run_names("full")
    trial = _trial(b, full, runs, per_image, peak)
    best = max(trial, key=lambda k: trial[k]["run_epochs_per_s"])
    grid = _noise_grid(b, full, runs, per_image, peak, best)
    size = grid["batch"]
    conll_row = _conll_pair(b, peak)
    cluster = _cluster_shapes(b, full, size)
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


def _trial(b: dict, full: dict, runs: list, per_image: float, peak: float) -> dict:
    """1. which batch of runs trains the most runs per hour (a short trial on part of MNIST)"""
    from lib import training
    from lib.experiments import noise

    trial = {}
    for k in b["trial_batches"]:
        prepared = [
            noise.runs._prepare(
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
            training.fit_stacked(
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
    return trial


def _noise_grid(b: dict, full: dict, runs: list, per_image: float, peak: float, best: str) -> dict:
    """2. the whole noise grid of one dataset, one at a time and in batches of the best size"""
    from lib.experiments import noise

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
    return {
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


def _conll_pair(b: dict, peak: float) -> dict:
    """3. three CoNLL-2003 seeds of the one-layer rank-1 model, a few epochs each"""
    from torch.utils.flop_counter import FlopCounterMode

    from lib import datasets, training
    from lib.experiments import conll
    from lib.models import TokenTagger

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
    training.fit_stacked(
        [tagger(s) for s in seeds],
        batches,
        epochs=b["conll_epochs"],
        lr=cs["lr"],
        seeds=seeds,
        progress=False,
    )
    conll_batched = time.perf_counter() - start
    return {
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


def _cluster_shapes(b: dict, full: dict, size: int) -> dict:
    """4. the local cluster's shape: 2 workers x 1 thread against 1 worker x 2 threads"""
    import os
    import tempfile

    from lib.experiments import tasks

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
    return cluster


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
