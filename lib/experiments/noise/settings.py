r"""The settings of the noise experiment of LHSL Appendix B (Chapter 5), and the names and keys of
its stored runs.

* :data:`NOISE_SETTINGS` are the book's settings per mode (the sources give none), with
  :data:`NOISE_SEEDS`, :data:`NOISE_DATASETS` (loaders and patch sizes), :data:`NOISE_KINDS`,
  :data:`PILOT` (the pilot that fixes the full runs' length) and :data:`NOISE_VERSION` (the
  version of the experiment's code, part of every stored run's key);
* :func:`noise_datasets` lists the datasets this machine can load, :func:`noise_run_names` the
  runs of one dataset, :func:`noise_run_key` and :func:`run_keys` the name and settings under
  which a run is stored (:data:`RUN_KEYS`), :func:`pilot_settings` those of the pilot.

Every function raises :class:`ValueError`, naming the argument, for an unknown mode or dataset.

Source: LHSL (NeurIPS 2025) Appendix B, Figure 2 (every setting here is the book's own; see the
Sources and certainty page). Chapter 5, ``make full`` (:mod:`lib.experiments.tasks`).
"""

from __future__ import annotations

from typing import Any

from ... import datasets, runtime
from ..._validate import finite_real, one_of, positive_int

__all__ = [
    "NOISE_KINDS",
    "NOISE_VERSION",
    "NOISE_SEEDS",
    "NOISE_SETTINGS",
    "RUN_KEYS",
    "PILOT",
    "NOISE_DATASETS",
    "noise_datasets",
    "noise_run_names",
    "noise_run_names_for",
    "run_keys",
    "noise_run_key",
    "pilot_settings",
]

#: The kinds of noise in the order the chapter reports them (symmetric label flips, then
#: Gaussian pixel noise).
NOISE_KINDS = ("label", "input")

#: The version of this experiment's code; raise it when a change alters what
#: :func:`~lib.experiments.noise.runs.noise_runs` computes, so that stored full-scale results are
#: recomputed (``make full``) rather than reused.
NOISE_VERSION = 3

#: The seeds of every setting of the noise experiment, in both modes and both arms (the
#: factorial, which varies the settings themselves, trains one seed, ``FACTORIAL["seed"]``).
NOISE_SEEDS = (0, 1, 2)

#: Our settings of the noise experiment per book mode (LHSL Appendix B does not give the paper's).
NOISE_SETTINGS: dict[str, dict[str, Any]] = {
    "fast": {
        "train_images": 3000,
        "test_images": 2000,
        "epochs": 5,
        "batch_size": 64,
        "lr": 3e-3,
        "d": 32,
        "qk_init": 0.1,
        "snapshots": [],
        "label_ratios": [0.0, 0.1, 0.2, 0.3, 0.4, 0.5],
        "input_sigmas": [0.0, 0.5, 1.0],
        "seeds": list(NOISE_SEEDS),
    },
    "full": {
        "train_images": None,
        "test_images": None,
        "epochs": "pilot",
        "snapshots": [10],
        "batch_size": 128,
        "lr": 1e-3,
        "d": 64,
        "qk_init": 0.1,
        "label_ratios": [0.0, 0.1, 0.2, 0.3, 0.4, 0.5],
        "input_sigmas": [0.0, 0.25, 0.5, 1.0],
        "seeds": list(NOISE_SEEDS),
        "datasets": ["mnist", "fashion-mnist"],
    },
}

#: The settings one run depends on (its stored result is keyed on these, with the dataset, the kind
#: and level of noise and the seed): adding a noise level or a seed does not invalidate the others.
#: ``epochs`` is a number, or in full mode ``"pilot"``: the epoch at which
#: :func:`~lib.experiments.noise.runs.noise_pilot`'s clean model of the dataset levelled off
#: (:func:`~lib.experiments.noise.runs.run_epochs`); ``snapshots`` are the epochs at which a run is
#: also measured on its way (the 10 epochs that the book's first full runs trained).
RUN_KEYS = (
    "train_images",
    "test_images",
    "epochs",
    "batch_size",
    "lr",
    "d",
    "qk_init",
    "snapshots",
)

#: The pilot that fixes the full runs' length (:func:`~lib.experiments.noise.runs.noise_pilot`).
#: The clean model (label noise 0, seed 0) of a dataset trains in the full settings until
#: :class:`lib.training.StopRule` with the CoNLL-2003 runs' window and gain (Chapter 3) says its
#: training accuracy levelled off, above chance (one class in ten), or to ``max_epochs``; every
#: run of that dataset then trains as many epochs, so that runs at different noise levels are
#: compared after equal training.
PILOT: dict[str, Any] = {
    "target": 0.1,
    "window": 10,
    "min_gain": 5e-4,
    "max_epochs": 150,
    "test_every": 5,
}


#: Datasets of the experiment, their loaders' names and patch sizes (7x7 on 28x28, 8x8 on 32x32).
NOISE_DATASETS = {
    "mnist": ("load_mnist", 7),
    "fashion-mnist": ("load_fashion_mnist", 7),
    "cifar10": ("load_cifar10", 8),
}


def noise_datasets() -> list[str]:
    """The datasets of :data:`NOISE_DATASETS` this machine can load
    (:func:`lib.datasets.images.image_dataset_status`).

    Raises:
        ValueError: when ``BOOK_CIFAR10`` is set but does not hold the six batch files (a
            mistyped path must not silently drop the dataset).

    Source: LHSL Appendix B's three datasets. Chapter 5 and ``make full``.
    """
    status = datasets.image_dataset_status()
    return [name for name in NOISE_DATASETS if status[name] is None]


def noise_run_names(mode: str | None = None) -> list[tuple[str, float, int]]:
    """The ``(kind, level, seed)`` of every run of one dataset in ``mode``'s settings.

    Label-noise runs at every ratio and seed of :data:`NOISE_SETTINGS`, input-noise runs at every
    non-zero standard deviation (the clean runs, level 0, are the same models for both kinds and
    are trained once, as label-noise runs).

    Raises:
        ValueError: for an unknown mode.
    """
    mode = runtime.MODE if mode is None else mode
    one_of("mode", mode, runtime.MODES)
    return noise_run_names_for(NOISE_SETTINGS[mode])


def noise_run_names_for(settings: dict) -> list[tuple[str, float, int]]:
    """:func:`noise_run_names` for a settings dict with ``label_ratios``, ``input_sigmas`` and
    ``seeds`` (those of :data:`NOISE_SETTINGS`, or smaller ones)."""
    runs = [
        ("label", float(level), seed)
        for level in settings["label_ratios"]
        for seed in settings["seeds"]
    ]
    return runs + [
        ("input", float(level), seed)
        for level in settings["input_sigmas"]
        if level > 0
        for seed in settings["seeds"]
    ]


def run_keys(settings: dict) -> dict:
    """:data:`RUN_KEYS` of ``settings`` (``snapshots`` defaults to none)."""
    return {k: settings.get(k, []) if k == "snapshots" else settings[k] for k in RUN_KEYS}


def noise_run_key(
    dataset: str, kind: str, level: float, seed: int, settings: dict
) -> tuple[str, dict]:
    """The stored run's name and settings of one noise run: ``<dataset>-<kind>-<level>-seed-<seed>``
    and :data:`RUN_KEYS` of ``settings`` with the dataset, kind, level and seed."""
    run_settings = {
        **run_keys(settings),
        "dataset": dataset,
        "kind": kind,
        "level": float(level),
        "seed": seed,
    }
    return f"{dataset}-{kind}-{float(level):g}-seed-{seed}", run_settings


def pilot_settings(dataset: str) -> dict:
    """The stored settings of :func:`~lib.experiments.noise.runs.noise_pilot` for ``dataset``
    (full mode's run settings, :data:`PILOT`, the clean run's kind, level and seed)."""
    one_of("dataset", dataset, NOISE_DATASETS)
    full = NOISE_SETTINGS["full"]
    return {
        **{k: v for k, v in run_keys(full).items() if k not in ("epochs", "snapshots")},
        "pilot": dict(PILOT),
        "dataset": dataset,
        "kind": "label",
        "level": 0.0,
        "seed": 0,
    }


def _level_and_seed(level: float, seed: int) -> tuple[float, int]:
    """A label-noise ratio in ``[0, 1)`` and a seed ``>= 0``, checked."""
    level = finite_real("level", level, minimum=0.0, maximum=1.0)
    if level >= 1.0:
        raise ValueError(f"level must be a label-noise ratio in [0, 1), got {level!r}")
    return level, positive_int("seed", seed, minimum=0, maximum=2**31)
