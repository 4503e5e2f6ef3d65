"""``make bench``'s training measures: each paper-scale CoNLL-2003 model's matrix FLOP rate against
the machine's float32 peak (``results/bench/training.json``), one attention layer rank 1 against
full rank (``results/bench/attention.json``), and an epoch of Chapter 5's classifier in fast and
full settings.

Raises what the training raises (a missing dataset's error among them).

Source: the book's own budgets (``tools/bench.py``'s docstring). Used by ``make bench`` and
``make bench --training-only``.
"""

from __future__ import annotations

import time

from .common import TARGETS, peak_gflops, store_measure

ATTENTION = {"lengths": [128, 512, 2048], "d": 128, "tokens": 8192, "rounds": 5}


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
