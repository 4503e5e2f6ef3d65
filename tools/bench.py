"""`make bench`: cold build, rebuild with nothing changed, and each chapter's execution time.

Prints a table and writes ``_build/bench.json``; exits non-zero when a target is missed
(the book's budgets, fast mode on 2 cores): each chapter within its ``budget_seconds`` front
matter (at most 90 s; 120 s for the chapters that train models), the whole cold build (set-up
excluded) within 8 minutes, a rebuild with nothing changed within 15 s.

It also measures training throughput on the full CoNLL-2003 training split: tokens per
second of ``lib.models.TokenTagger`` (rank 1, one layer, d 128, FFN 512, batch 128) and of a
same-size model built on ``torch.nn.TransformerEncoderLayer``, epochs alternating between the two,
with the target ratio >= 1.5; and the projected wall time of the full-mode Chapter 3 run
(800 epochs at 1, 3 and 6 layers). ``--training-only`` skips the builds.

For Chapter 5 it times one epoch of ``lib.models.PatchAttentionClassifier`` on MNIST
with the fast-mode settings of ``lib.experiments.noise.NOISE_SETTINGS`` and with the full-mode ones
(the whole 60,000-image training set), and projects the full-mode wall time of the noise experiment.
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
COMMAND = [
    str(Path(sys.executable).parent / "jupyter-book"),
    "build",
    ".",
    "-W",
    "-n",
    "--keep-going",
]
TARGETS = {"cold_s": 8 * 60, "rebuild_s": 15, "tokens_per_s_ratio": 1.5}
FULL_EPOCHS = 800  # Chapter 3, full mode (K&S Section 5 as reported)


def timed_build() -> float:
    start = time.perf_counter()
    result = subprocess.run(
        COMMAND, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
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


def training_throughput(rounds: int = 5) -> dict:
    """Tokens/s of the rank-1 TokenTagger and of a TransformerEncoderLayer tagger, side by side."""
    import statistics

    import torch
    from torch import nn

    from lib import data, training
    from lib.models import TokenTagger

    train = data.load_conll2003("train")
    vocab = data.build_vocab(train)
    encoded = data.encode_pairs(train, vocab)
    tokens = sum(len(ids) for ids, _ in encoded)
    batches = training.bucket_batches(encoded, 128, seed=0)

    class EncoderLayerTagger(nn.Module):
        """The same model from torch's standard parts: nn.Embedding, one nn.TransformerEncoderLayer
        (1 head, FFN 512, no dropout, key padding mask), nn.Linear head."""

        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(len(vocab), 128, padding_idx=data.PAD)
            self.layer = nn.TransformerEncoderLayer(128, 1, 512, dropout=0.0, batch_first=True)
            self.head = nn.Linear(128, len(data.CONLL_TAGS))

        def forward(self, ids):
            return self.head(self.layer(self.embed(ids), src_key_padding_mask=ids == data.PAD))

    def tagger(layers):
        return TokenTagger(
            len(vocab), len(data.CONLL_TAGS), d=128, n_layers=layers, rank=1, ffn_width=512, seed=0
        )

    models = {"rank1": tagger(1), "encoder_layer": EncoderLayerTagger()}
    seconds = {name: [] for name in models}
    for _ in range(rounds + 1):  # the first round warms up
        for name, model in models.items():
            seconds[name].append(training.fit(model, batches, epochs=1)["seconds"].iloc[-1])
    epoch_s = {name: statistics.median(s[1:]) for name, s in seconds.items()}
    deeper = {
        layers: training.fit(tagger(layers), batches, epochs=1)["seconds"].iloc[-1]
        for layers in (3, 6)
    }
    per_layers = {1: epoch_s["rank1"], **deeper}
    return {
        "tokens": tokens,
        "threads": torch.get_num_threads(),
        "epoch_s": epoch_s,
        "tokens_per_s": {name: tokens / s for name, s in epoch_s.items()},
        "ratio": epoch_s["encoder_layer"] / epoch_s["rank1"],
        "full_mode_projected_min": {
            layers: FULL_EPOCHS * s / 60 for layers, s in per_layers.items()
        },
    }


def classifier_epochs(rounds: int = 3) -> dict:
    """Seconds per training epoch of the Chapter 5 classifier, fast and full settings (best of
    ``rounds``)."""
    from lib.experiments import noise

    out = {}
    for mode in ("fast", "full"):
        settings = {**noise.NOISE_SETTINGS[mode], "epochs": 1, "test_images": 1000}
        seconds = [
            noise.noise_experiment("mnist", "label", 0.0, 0, **settings)["seconds"]
            for _ in range(rounds)
        ]
        full = noise.NOISE_SETTINGS[mode]
        runs = len(full["seeds"]) * (
            len(full["label_ratios"]) + len([s for s in full["input_sigmas"] if s > 0])
        )
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


def print_throughput(t: dict) -> bool:
    ok = t["ratio"] >= TARGETS["tokens_per_s_ratio"]
    print(
        f"training, full CoNLL-2003 train split ({t['tokens']:,} tokens, "
        "batch 128, d 128, FFN 512):"
    )
    for name, rate in t["tokens_per_s"].items():
        print(f"  {name:<14} {rate:9,.0f} tokens/s   ({t['epoch_s'][name]:.2f} s per epoch)")
    print(
        f"  ratio rank1 / encoder_layer {t['ratio']:.2f}   "
        f"(target >= {TARGETS['tokens_per_s_ratio']})   "
        f"{'ok' if ok else 'MISSED'}"
    )
    for layers, minutes in t["full_mode_projected_min"].items():
        print(f"  full mode, {layers} layer(s), {FULL_EPOCHS} epochs: ~{minutes:.0f} min projected")
    return ok


def main() -> int:
    if "--training-only" in sys.argv[1:]:
        throughput = training_throughput()
        BUILD.mkdir(exist_ok=True)
        classifier = classifier_epochs()
        (BUILD / "bench-training.json").write_text(
            json.dumps({**throughput, "classifier": classifier}, indent=2)
        )
        print_classifier(classifier)
        return 0 if print_throughput(throughput) else 1
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
        rows.append(
            {"chapter": path.stem, "budget_s": budget, "execution_s": seconds, "within": within}
        )
    throughput = training_throughput()
    classifier = classifier_epochs()
    result = {
        "cold_s": cold,
        "rebuild_s": rebuild,
        "chapters": rows,
        "targets": TARGETS,
        "threads": 2,
        "training": throughput,
        "classifier": classifier,
    }
    ok &= cold <= TARGETS["cold_s"] and rebuild <= TARGETS["rebuild_s"]
    (BUILD / "bench.json").write_text(json.dumps(result, indent=2))
    print(f"cold build            {cold:7.1f} s   (target <= {TARGETS['cold_s']} s)")
    print(f"rebuild, no change    {rebuild:7.1f} s   (target <= {TARGETS['rebuild_s']} s)")
    for r in rows:
        budget = "-" if r["budget_s"] is None else f"{r['budget_s']:>3d} s"
        secs = "-" if r["execution_s"] is None else f"{r['execution_s']:7.1f} s"
        print(f"  {r['chapter']:<22} {secs}   budget {budget}   {'ok' if r['within'] else 'OVER'}")
    print_classifier(classifier)
    ok &= print_throughput(throughput)
    print("all targets met" if ok else "TARGET MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
