"""The settings of the CoNLL-2003 experiment of K&S Section 5 (Chapter 3), and the names of its
stored runs.

The sources give none of K&S Section 5's settings except the 800 epochs and the depths 1, 3 and 6,
and those only in secondary summaries (see the Sources and certainty page): everything here is
the book's own. :data:`CONLL_SETTINGS` holds our model's settings per mode,
:data:`DESCRIBED_SETTINGS` those of the model the reviewers describe, :data:`SEEDS` (with
:data:`DEEP_SEEDS`, :data:`ADAM_SEEDS` and :func:`seeds_for`) the seeds ``make full`` stores, and
:data:`CONLL_VERSION` the code version every stored run is keyed on. :func:`conll_run_settings`
names a stored run and gives its settings, :func:`live_runs` and :func:`full_runs` list the runs a
mode trains, :func:`config_label` and :func:`bench_name` name a configuration on the pages and in
``make bench``'s file. Bad arguments raise ``ValueError`` naming them. The runs themselves are
:mod:`lib.experiments.conll_runs`; :mod:`lib.experiments.conll` re-exports every public name.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .. import runtime
from .._validate import one_of, positive_int

__all__ = [
    "CONLL_SETTINGS",
    "DESCRIBED_SETTINGS",
    "SEEDS",
    "DEEP_SEEDS",
    "ADAM_SEEDS",
    "FIXED_EPOCHS",
    "seeds_for",
    "SETTINGS_KINDS",
    "CONLL_VERSION",
    "REPORTED_ACCURACY",
    "THRESHOLDS",
    "conll_run_settings",
    "full_runs",
    "live_runs",
    "GRID_KINDS",
    "config_label",
    "bench_name",
]

#: The version of this experiment's code; raise it when a change alters what
#: :func:`~lib.experiments.conll_runs.conll_run` computes, so that stored full-scale results are
#: recomputed (``make full``) rather than reused.
CONLL_VERSION = 3


#: K&S Section 5's reported training accuracy (from secondary summaries only) and the levels whose
#: first epoch every stored full-scale run reports.
REPORTED_ACCURACY = 0.9872
THRESHOLDS = (0.95, 0.98, REPORTED_ACCURACY, 0.99)


#: The settings of the CoNLL-2003 experiment in each mode. The sources give none of K&S Section 5's
#: settings except the 800 epochs and the depths 1, 3, 6, and those only in secondary summaries (see
#: the Sources and certainty page): everything here is ours. Fast mode trains a live proxy on a
#: subset for a fixed number of epochs with a falling learning rate. Full mode trains on the whole
#: training split with Adam at a constant rate and stops each run by :class:`lib.training.StopRule`
#: once it has passed the reported accuracy and levelled off, or at its epoch cap ``max_epochs``
#: (per depth, ``"full"`` for the full-rank layer), which keeps ``make full`` within an hour on the
#: book's 2-core machine.
#:
#: Batch 64 with dense Adam is our choice, made from early trials of batch
#: sizes and of row-wise (lazy, ``sparse_embedding``) Adam that were not stored: the book states
#: no number from them.
#:
#: Fast mode trains one rank-1 layer (``"layers"``; ``"full_rank"`` false:
#: no full-rank layer), in float64 and for 60 epochs. In float64 the counts the chapter states
#: (tokens memorized, the epoch a ceiling is passed) come out the same on every CPU; in float32 the
#: rounding of AVX2 and AVX-512 kernels differs and moved them by one. Three rank-1 layers and a
#: full-rank layer, trained alike, ended a few tokens apart under other vector instructions even in
#: float64 (at 30 to 60 epochs), so fast mode leaves them to the stored runs. With singletons read
#: as ``<unk>`` half the time their vectors learn at half the pace: at 30 epochs the one-layer proxy
#: ended below its subset's context-free ceiling, at 60 above it.
CONLL_SETTINGS: dict[str, dict[str, Any]] = {
    "fast": {
        "sentences": 600,
        "validation_sentences": 500,
        "dtype": "float64",
        "epochs": 60,
        "d": 64,
        "batch_size": 32,
        "lr": 3e-3,
        "final_lr": 3e-4,
        "eval_every": 5,
        "layers": [1],
        "full_rank": False,
        "seed": 0,
        "unk_dropout": 0.5,
        "train_eval": True,
    },
    "full": {
        "sentences": None,
        "validation_sentences": None,
        "max_epochs": {"1": 150, "3": 100, "6": 120, "full": 150},
        "d": 128,
        "batch_size": 64,
        "lr": 1e-3,
        "final_lr": None,
        "eval_every": 10,
        "layers": [1, 3, 6],
        "seed": 0,
        "stop": {"target": REPORTED_ACCURACY, "window": 10, "min_gain": 5e-4},
        "sparse_embedding": False,
        "unk_dropout": 0.5,
        "train_eval": True,
    },
}


# What the described model's fast and full settings share (see DESCRIBED_SETTINGS).
_DESCRIBED_MODEL = {"d": 64, "final_lr": None, "lr": 0.3, "seed": 0, "tied": True,
                    "optimizer": "sgd", "clip_norm": 1.0, "sparse_embedding": True,
                    "unk_dropout": 0.5, "train_eval": True}  # fmt: skip
#: The settings of the model the ICLR 2024 OpenReview reviewers describe (one layer, one head of
#: size 1, ``W_Q = W_K = W_V`` tied, :class:`lib.layers.TiedSelfAttention`), trained with plain SGD
#: (the AI-written report's "via SGD") with no stop rule. The width ``d`` (FFN ``4 d``), the batch,
#: the rate, the gradient clipping and the embedding are not in the sources and are ours. Full mode
#: trains it with each setting of :data:`~lib.experiments.conll_grid.SGD_GRID`
#: (:func:`~lib.experiments.conll_grid.sgd_grid`, which replaces the momentum, rate and epochs
#: here) and the best of them for 800 epochs (:func:`~lib.experiments.conll_grid.sgd_best`); fast
#: mode trains a live proxy on a subset with the settings here. ``"described-fixed"`` holds every
#: block's projection at the value of K&S Theorem 2's construction for the embeddings, frozen at
#: their initialisation (:func:`lib.contextual.theorem2_projection`), the reviewers' question, and
#: trains with the settings here for :data:`FIXED_EPOCHS` epochs.
DESCRIBED_SETTINGS: dict[str, dict[str, Any]] = {
    "fast": {**_DESCRIBED_MODEL, "sentences": 600, "validation_sentences": 500, "epochs": 60,
             "batch_size": 32, "eval_every": 20, "dtype": "float64"},
    "full": {**_DESCRIBED_MODEL, "sentences": None, "validation_sentences": None, "epochs": 800,
             "batch_size": 64, "eval_every": 50},
}  # fmt: skip


#: How many epochs the fixed-projection run trains in full mode, the summaries' "within 400
#: epochs" (half the summaries' 800, which keeps ``make full`` within its budget).
FIXED_EPOCHS = 400


#: The kinds of :func:`~lib.experiments.conll_grid.sgd_grid_settings` and
#: :func:`~lib.experiments.conll_grid.sgd_best_settings`' runs.
GRID_KINDS = ("described-grid", "described-sgd-best")


#: Five seeds for every full-scale comparison the book states in Chapter 3, so that the rule
#: "every run of one configuration ends above every run of the other" has a one-sided p-value
#: of 1/252 (:func:`lib.seeds.order_p_value`) when the two configurations do not differ.
SEEDS = (0, 1, 2, 3, 4)


#: The seeds of our deeper models of rank-1 layers by depth. Five of 3 layers, so that an order
#: against one layer can be stated, and one of 6 layers (four more would add about four CPU-hours
#: to ``make full``), which Chapter 3 orders against nothing.
DEEP_SEEDS: dict[int, tuple[int, ...]] = {3: SEEDS, 6: (0,)}


#: The seeds stored of the described model trained by Adam (``"described-adam"``). Three, from
#: which Chapter 3 states no order.
ADAM_SEEDS = (0, 1, 2)


def seeds_for(n_layers: int, rank: int | None, kind: str = "ours") -> tuple[int, ...]:
    """The seeds ``make full`` stores for a configuration: :data:`SEEDS`, or
    :data:`DEEP_SEEDS` for our models of more than one layer (seed 0 alone at a depth it does not
    name); the fixed-projection run has seed 0 only.

    Raises:
        ValueError: as :func:`conll_run_settings`.
    """
    conll_run_settings(n_layers, rank, "full", kind=kind)  # checks the configuration
    if kind == "described-fixed":
        return (0,)
    if kind == "described-adam":
        return ADAM_SEEDS
    if kind == "ours" and n_layers > 1:
        return DEEP_SEEDS.get(n_layers, (0,))
    return SEEDS


#: The configurations of :func:`conll_run_settings`, ``"ours"`` (:data:`CONLL_SETTINGS`, the
#: book's own), ``"described"`` and ``"described-fixed"`` (:data:`DESCRIBED_SETTINGS`), and
#: ``"described-adam"``: the described model trained as ours is (dense Adam at our rate, no
#: clipping, in full mode our stopping rule within the 800 epochs), for where SGD falls short.
SETTINGS_KINDS = ("ours", "described", "described-fixed", "described-adam")


def _grid_run(settings: Mapping[str, Any]) -> str:
    """The stored run's name of a grid or best-SGD run's ``settings``."""
    if settings["kind"] == "described-sgd-best":
        return "described-sgd-best"
    return f"described-grid-momentum-{settings['momentum']:g}-lr-{settings['lr']:g}"


def live_runs(mode: str | None = None) -> list[tuple[int, int | None]]:
    """The ``(n_layers, rank)`` pairs Chapter 3's live section trains in ``mode`` (default
    :data:`lib.runtime.MODE`): rank 1 at each depth of the mode's ``"layers"``, then one
    full-rank layer unless the mode's ``"full_rank"`` is false (fast mode: see
    :data:`CONLL_SETTINGS`). ``make full`` stores more (:func:`full_runs`).

    Raises:
        ValueError: for an unknown mode.

    Source: the book's choice (Chapter 3, ``lib.experiments.tasks.plan``).
    """
    mode = runtime.MODE if mode is None else mode
    one_of("mode", mode, runtime.MODES)
    settings = CONLL_SETTINGS[mode]
    return [(n, 1) for n in settings["layers"]] + (
        [(1, None)] if settings.get("full_rank", True) else []
    )


def full_runs() -> list[tuple[int, int | None, int, str]]:
    """Every stored CoNLL-2003 run of ``make full``, as ``(n_layers, rank, seed, kind)``: our
    model at each depth of :data:`CONLL_SETTINGS` (rank 1) and one full-rank layer, and the
    described model's fixed-projection run and Adam runs, each for the seeds of
    :func:`seeds_for`. (The described model's SGD runs are
    :data:`~lib.experiments.conll_grid.SGD_GRID`'s.)"""
    ours = [(n, 1, "ours") for n in CONLL_SETTINGS["full"]["layers"]] + [(1, None, "ours")]
    configs = ours + [(1, 1, "described-fixed"), (1, 1, "described-adam")]
    return [(n, r, seed, kind) for n, r, kind in configs for seed in seeds_for(n, r, kind)]


def conll_run_settings(
    n_layers: int, rank: int | None, mode: str, *, seed: int = 0, kind: str = "ours"
) -> tuple[str, dict]:
    """The stored run's name and settings of :func:`~lib.experiments.conll_runs.conll_run`.

    ``"ours"``: depth, rank and the mode's :data:`CONLL_SETTINGS` (in full mode ``epochs`` is the
    depth's cap); named ``layers-<n>-rank-<r>``, with ``-seed-<s>`` for seeds other than 0.
    ``"described"`` and ``"described-fixed"``: :data:`DESCRIBED_SETTINGS` (one layer, rank 1
    only); named ``described-seed-<s>`` and ``described-fixed-seed-<s>``.

    Raises:
        ValueError: as :func:`~lib.experiments.conll_runs.conll_run`, or for an unknown
            ``kind``, a negative seed, or a described configuration with other than one rank-1
            layer.
    """
    one_of("mode", mode, runtime.MODES)
    one_of("kind", kind, SETTINGS_KINDS)
    n_layers = positive_int("n_layers", n_layers)
    rank = None if rank is None else positive_int("rank", rank)
    seed = positive_int("seed", seed, minimum=0, maximum=2**31)
    if kind != "ours":
        if (n_layers, rank) != (1, 1):
            raise ValueError(
                f"the described model has one rank-1 layer, got n_layers={n_layers}, rank={rank}"
            )
        settings = {
            **DESCRIBED_SETTINGS[mode],
            "seed": seed,
            "n_layers": 1,
            "rank": 1,
            "mode": mode,
            "kind": kind,
        }
        if kind == "described-fixed":
            settings["fixed_projection"] = "theorem2"
            if mode == "full":
                settings["epochs"] = FIXED_EPOCHS
        if kind == "described-adam":
            settings.pop("clip_norm")
            settings.update(optimizer="adam", lr=CONLL_SETTINGS[mode]["lr"], sparse_embedding=False)
            if mode == "full":
                settings["stop"] = CONLL_SETTINGS["full"]["stop"]
        return f"{kind}-seed-{seed}", settings
    base = CONLL_SETTINGS[mode]
    settings = {**base, "n_layers": n_layers, "rank": rank, "mode": mode}
    if seed != 0:
        settings["seed"] = seed
    run = f"layers-{n_layers}-rank-{rank or 'full'}" + (f"-seed-{seed}" if seed else "")
    if mode == "full":
        cap_key = "full" if rank is None else str(n_layers)
        if cap_key not in base["max_epochs"]:
            raise ValueError(
                f"full mode has no epoch cap for {n_layers} layer(s) of rank {rank or 'full'}; "
                f"CONLL_SETTINGS['full']['max_epochs'] has {sorted(base['max_epochs'])}"
            )
        settings = {k: v for k, v in settings.items() if k != "max_epochs"}
        settings["epochs"] = base["max_epochs"][cap_key]
    return run, settings


def _layers_rank(n_layers: object, rank: object) -> tuple[int, int | None]:
    n_layers = positive_int("n_layers", n_layers, maximum=64)
    if rank is not None:
        rank = positive_int("rank", rank, maximum=4096)
    return n_layers, rank


def config_label(n_layers: int, rank: int | None) -> str:
    """The book's name of one of our CoNLL-2003 configurations, as its tables and figures show it.

    ``config_label(3, 1) == "rank 1, 3 layers"``, ``config_label(1, None) == "full rank, 1 layer"``:
    the rows of Chapter 3's tables, the runs of the reproducibility page, the progress bars and
    ``make full``'s report.

    Args:
        n_layers: the number of attention layers, an integer from 1 to 64.
        rank: the rank of the attention matrices, a positive integer, or ``None`` for full rank.

    Raises:
        ValueError: naming the argument, for a depth or rank that is not a positive integer.
    """
    n_layers, rank = _layers_rank(n_layers, rank)
    kind = "full rank" if rank is None else f"rank {rank}"
    return f"{kind}, {n_layers} layer{'s' if n_layers > 1 else ''}"


def bench_name(n_layers: int, rank: int | None) -> str:
    """The name under which ``make bench`` stores a configuration's epoch time.

    The keys of ``results/bench/training.json``'s ``models`` (``tools/bench.py`` writes them,
    Chapter 3 reads them): ``bench_name(3, 1) == "3 layers, rank 1"``,
    ``bench_name(1, None) == "1 layer, rank full"``. A stored name, kept as stored; what the
    pages show is :func:`config_label`.

    Raises:
        ValueError: as :func:`config_label`.
    """
    n_layers, rank = _layers_rank(n_layers, rank)
    return f"{n_layers} layer{'s' if n_layers > 1 else ''}, rank {rank or 'full'}"
