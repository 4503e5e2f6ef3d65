r"""The noise experiment of LHSL Appendix B: does the scale of W_K and W_Q fall as training noise
grows? (Chapter 5)

LHSL's Appendix B ("Proof-of-Concept Experiments", Figure 2) trains an attention model on MNIST,
Fashion-MNIST and CIFAR-10 with a growing ratio of injected label noise and reports that the
:math:`\ell_2` norms of :math:`W_K` and :math:`W_Q` decline monotonically as the noise grows. The
sources give neither the model nor any setting: every choice here is the book's own
(:data:`NOISE_SETTINGS`), and both kinds of noise a summary could mean are run (label flips and
Gaussian pixel noise).

* :func:`noise_experiment` trains one :class:`lib.models.PatchAttentionClassifier` and measures its
  attention norms, entropy and accuracies;
* :func:`noise_runs` runs every noise level and seed for one dataset: live in fast mode, through
  the stored results (:mod:`lib.experiments.store`) in full mode;
* :func:`trend_test` is the book's test of a decline (Spearman's rank correlation with a one-sided
  permutation p-value), check C19; :func:`norm_trends` applies it to every norm of every
  experiment, :func:`curves_by_kind` counts the curves that do something per kind of noise and
  :func:`seed_stats` gives the seed means and spreads of the norms per noise level (which
  :func:`lib.book.figures.norm_figure` draws);
* :func:`epochs_case` says whether every dataset trained for the same number of epochs.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import mpmath
import numpy as np
import pandas as pd
import torch
from numpy.typing import ArrayLike

from .. import datasets, runtime, training
from .._geometry import MAX_MATRIX_ENTRIES
from .._validate import (
    as_float_array,
    finite_real,
    flag,
    one_of,
    positive_int,
    require_size,
    short_repr,
)
from ..models import PatchAttentionClassifier
from . import store

__all__ = [
    "NOISE_SEEDS",
    "NOISE_SETTINGS",
    "NOISE_DATASETS",
    "NOISE_VERSION",
    "RUN_KEYS",
    "noise_datasets",
    "noise_run_names",
    "noise_run_names_for",
    "noise_run_key",
    "run_keys",
    "pilot_settings",
    "PILOT",
    "noise_experiment",
    "noise_experiments",
    "noise_pilot",
    "run_epochs",
    "noise_runs",
    "trend_test",
    "sharpness_trends",
    "norm_trends",
    "curves_by_kind",
    "epochs_case",
    "seed_stats",
    "NOISE_KINDS",
    "MEMORISING_SETTINGS",
    "MEMORISING_TARGET",
    "memorising_run_key",
    "memorising_runs",
    "FACTORIAL",
    "factorial_design",
    "factorial_run_key",
    "factorial_runs",
    "noise_response",
    "main_effects",
    "effect_yardstick",
]

#: The kinds of noise in the order the chapter reports them (symmetric label flips, then
#: Gaussian pixel noise).
NOISE_KINDS = ("label", "input")

#: The version of this experiment's code; raise it when a change alters what :func:`noise_runs`
#: computes, so that stored full-scale results are recomputed (``make full``) rather than reused.
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

#: The arm whose model can fit the flipped labels. The model of :data:`NOISE_SETTINGS` (a linear
#: head after the attention) cannot: at full scale its training accuracy on the noisy labels
#: levels off near the share of labels left clean, so its runs study a model that fits none of
#: the flips. This arm trains the same attention layer with a ReLU head of ``head_width`` units on
#: a seeded subset of ``train_images`` training images (the whole training sets are beyond what
#: such a model memorises within the book's budget), with the rate falling linearly to
#: ``final_lr``, long enough that its training accuracy on the noisy labels reaches
#: :data:`MEMORISING_TARGET` at the largest ratio (a requirement the chapter checks, not a result).
#: Label flips only (the regime in question); every setting is ours.
MEMORISING_SETTINGS: dict[str, Any] = {
    "train_images": 2000,
    "test_images": None,
    "epochs": 150,
    "batch_size": 64,
    "lr": 3e-3,
    "final_lr": 3e-5,
    "d": 64,
    "qk_init": 0.1,
    "head_width": 512,
    "snapshots": [],
    "label_ratios": [0.0, 0.1, 0.2, 0.3, 0.4, 0.5],
    "input_sigmas": [],
    "seeds": list(NOISE_SEEDS),
    "datasets": ["mnist", "fashion-mnist"],
}

#: The training accuracy on its noisy labels that the memorising arm must reach at the largest
#: label-noise ratio, in every seed, for its runs to count as fitting the flips.
MEMORISING_TARGET = 0.95

#: The factorial that locates which of the five settings in which fast and full mode differ
#: turns the norms' response to label noise around: a 2^(5-2) fractional design (eight settings,
#: each factor at its fast level ``-1`` or its full level ``+1``; ``lr = train_images x epochs`` and
#: ``d = train_images x batch_size``, so every main effect is free of the other main effects and
#: aliased with two-factor interactions), each trained at the two label-noise ``levels`` from one
#: seed, on the whole test split. ``epochs`` at its full level is the dataset's pilot length.
FACTORIAL: dict[str, Any] = {
    "factors": {
        "train_images": (3000, None),
        "epochs": (5, "pilot"),
        "batch_size": (64, 128),
        "lr": (3e-3, 1e-3),
        "d": (32, 64),
    },
    "generators": {"lr": ("train_images", "epochs"), "d": ("train_images", "batch_size")},
    "levels": [0.0, 0.5],
    "seed": 0,
    "test_images": None,
    "qk_init": 0.1,
    "datasets": ["mnist", "fashion-mnist"],
}

#: The settings one run depends on (its stored result is keyed on these, with the dataset, the kind
#: and level of noise and the seed): adding a noise level or a seed does not invalidate the others.
#: ``epochs`` is a number, or in full mode ``"pilot"``: the epoch at which :func:`noise_pilot`'s
#: clean model of the dataset levelled off (:func:`run_epochs`); ``snapshots`` are the epochs at
#: which a run is also measured on its way (the 10 epochs that the book's first full runs trained).
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

#: The pilot that fixes the full runs' length (:func:`noise_pilot`). The clean model (label noise 0,
#: seed 0) of a dataset trains in the full settings until :class:`lib.training.StopRule` with the
#: CoNLL-2003 runs' window and gain (Chapter 3) says its training accuracy levelled off, above
#: chance (one class in ten), or to ``max_epochs``; every run of that dataset then trains as many
#: epochs, so that runs at different noise levels are compared after equal training.
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


def _image_split(
    dataset: str, split: str, count: int | None, name: str = "count"
) -> tuple[np.ndarray, np.ndarray]:
    """``count`` images of ``split`` (seeded draw, corpus order kept; all when None), pixels in
    [0, 1]."""
    images, labels = getattr(datasets, NOISE_DATASETS[dataset][0])(split)
    if count is not None:
        count = positive_int(name, count, maximum=len(images))
        keep = np.sort(np.random.default_rng(0).choice(len(images), count, replace=False))
        images, labels = images[keep], labels[keep]
    return images.astype(np.float32) / 255.0, np.array(labels, dtype=np.int64)


def noise_experiment(
    dataset: str,
    kind: str,
    level: float,
    seed: int,
    *,
    train_images: int | None,
    test_images: int | None,
    epochs: int,
    batch_size: int,
    lr: float,
    d: int,
    qk_init: float,
    snapshots: Sequence[int] | None = None,
    head_width: int | None = None,
    final_lr: float | None = None,
    **_: Any,
) -> dict:
    r"""Train one :class:`lib.models.PatchAttentionClassifier` on noisy data; return its attention
    norms.

    The training images (a seeded subset of ``train_images``, or all) get either symmetric label
    flips at ratio ``level`` (:func:`lib.datasets.perturbations.add_label_noise`) or Gaussian pixel
    noise of standard deviation ``level`` on the ``[0, 1]`` scale
    (:func:`lib.datasets.perturbations.add_input_noise`, drawn once); inputs are then standardised
    with the clean training set's mean and standard deviation.
    Training is :func:`lib.training.fit` (Adam at ``lr``, constant unless ``final_lr`` is given;
    fixed shuffled batches).

    Args:
        dataset: ``"mnist"``, ``"fashion-mnist"`` or ``"cifar10"`` (:data:`NOISE_DATASETS`).
        kind: ``"label"`` or ``"input"``; level: the ratio or the standard deviation.
        seed: seed of the noise, the initialisation and the batch order.
        train_images, test_images, epochs, batch_size, lr, d, qk_init: the settings of
            :data:`NOISE_SETTINGS` (``None`` images means the whole split; ``epochs`` a number
            here, :func:`run_epochs` resolves ``"pilot"``; other keys are ignored).
        snapshots: epochs (at most ``epochs``) at which the run is also measured on its way.
        head_width: ``None`` (the linear head of :data:`NOISE_SETTINGS`' model) or the width of
            a ReLU head (:data:`MEMORISING_SETTINGS`).
        final_lr: ``None`` (a constant rate) or the rate the training falls to linearly
            (:func:`lib.training.fit`).

    Returns:
        dict with ``dataset``, ``kind``, ``level``, ``seed``, the norms of
        :meth:`~lib.models.PatchAttentionClassifier.attention_norms`, ``entropy`` (mean
        attention entropy on up to 1,000 clean test images, nats), ``train_acc`` (last epoch,
        against the noisy labels), ``test_acc`` (clean test images), ``seconds``, ``history``
        (per epoch: ``epoch``, ``loss``, ``train_acc``, lists) and ``at``: per snapshot epoch
        (a string key) the same norms, ``entropy``, ``test_acc`` and ``train_acc`` then.

    Raises:
        ValueError: for an unknown dataset or kind, a level outside the noise functions' range,
            or bad sizes; the loaders' errors when a dataset is not installed.

    Source: LHSL (NeurIPS 2025) Appendix B, Figure 2 (every setting here is the book's own; see
    the Sources and certainty page). Check C19, Chapter 5.
    """
    model, batches, test = _prepare(
        dataset, kind, level, seed, train_images, test_images, batch_size, d, qk_init, head_width
    )
    epochs, snapshots = _schedule(epochs, snapshots)
    at: dict = {}
    history = training.fit(
        model,
        batches,
        epochs=epochs,
        lr=lr,
        final_lr=final_lr,
        seed=seed,
        progress=False,
        on_epoch=lambda m, h: _snapshot(at, snapshots, m, h, test),
    )
    return _measure(model, history, test, dataset, kind, level, seed) | {"at": at}


def _schedule(epochs: int, snapshots: Sequence[int] | None) -> tuple[int, list[int]]:
    """Checked ``epochs`` (a number here) and ``snapshots`` (epochs before the last)."""
    epochs = positive_int("epochs", epochs, maximum=100_000)
    snapshots = [] if snapshots is None else snapshots
    if not isinstance(snapshots, (list, tuple)):
        raise ValueError(f"snapshots must be a list of epochs, got {snapshots!r}")
    snapshots = [positive_int("snapshots", e, maximum=epochs) for e in snapshots]
    return epochs, snapshots


def _measures(
    model: PatchAttentionClassifier, test: list[tuple[torch.Tensor, torch.Tensor]]
) -> dict:
    """The attention norms, entropy and clean test accuracy of a model (see :func:`_measure`)."""
    return {
        **model.attention_norms(),
        "entropy": model.attention_entropy(test[0][0]),
        "test_acc": training.evaluate(model, test),
    }


def _snapshot(
    at: dict,
    snapshots: Sequence[int],
    model: PatchAttentionClassifier,
    history: pd.DataFrame,
    test: list[tuple[torch.Tensor, torch.Tensor]],
) -> None:
    """Store the model's measures in ``at[str(epoch)]`` when the epoch just trained is one of
    ``snapshots``."""
    epoch = int(history.epoch.iloc[-1])
    if epoch in snapshots:
        at[str(epoch)] = _measures(model, test) | {"train_acc": float(history.train_acc.iloc[-1])}


def _prepare(
    dataset: str,
    kind: str,
    level: float,
    seed: int,
    train_images: int | None,
    test_images: int | None,
    batch_size: int,
    d: int,
    qk_init: float,
    head_width: int | None = None,
) -> tuple[
    PatchAttentionClassifier,
    list[tuple[torch.Tensor, torch.Tensor]],
    list[tuple[torch.Tensor, torch.Tensor]],
]:
    """One run's model, training batches and clean test batches (see :func:`noise_experiment`)."""
    one_of("dataset", dataset, NOISE_DATASETS)
    one_of("kind", kind, ("label", "input"))
    seed = positive_int("seed", seed, minimum=0, maximum=2**31)
    # numpy arrays here, torch tensors on the device below
    x: np.ndarray | torch.Tensor
    y: np.ndarray | torch.Tensor
    xt: np.ndarray | torch.Tensor
    yt: np.ndarray | torch.Tensor
    x, y = _image_split(dataset, "train", train_images, "train_images")
    xt, yt = _image_split(dataset, "test", test_images, "test_images")
    mean, std = float(x.mean()), float(x.std())
    if kind == "label":
        y = datasets.add_label_noise(y, level, 10, seed)
    else:
        x = datasets.add_input_noise(x, level, seed)
    device = runtime.DEVICE
    x, xt = (torch.tensor((a - mean) / std, device=device) for a in (x, xt))
    y, yt = torch.tensor(y, device=device), torch.tensor(yt, device=device)
    batch_size = positive_int("batch_size", batch_size)
    order = torch.randperm(len(x), generator=torch.Generator().manual_seed(seed))
    batches = [
        (x[order[i : i + batch_size]], y[order[i : i + batch_size]])
        for i in range(0, len(x), batch_size)
    ]
    model = PatchAttentionClassifier(
        image_size=x.shape[1],
        patch=NOISE_DATASETS[dataset][1],
        channels=1 if x.ndim == 3 else x.shape[3],
        d=d,
        qk_init=qk_init,
        seed=seed,
        head_width=head_width,
    ).to(device)
    test = [(xt[i : i + 1000], yt[i : i + 1000]) for i in range(0, len(xt), 1000)]
    return model, batches, test


def _measure(
    model: PatchAttentionClassifier,
    history: pd.DataFrame,
    test: list[tuple[torch.Tensor, torch.Tensor]],
    dataset: str,
    kind: str,
    level: float,
    seed: int,
) -> dict:
    """The result dict of :func:`noise_experiment` for a trained model and its history."""
    return {
        "dataset": dataset,
        "kind": kind,
        "level": float(level),
        "seed": seed,
        **_measures(model, test),
        "train_acc": float(history.train_acc.iloc[-1]),
        "seconds": float(history.seconds.iloc[-1]),
        "history": {c: history[c].tolist() for c in ("epoch", "loss", "train_acc")},
    }


def noise_experiments(
    dataset: str,
    runs: Sequence[tuple[str, float, int]],
    *,
    train_images: int | None,
    test_images: int | None,
    epochs: int,
    batch_size: int,
    lr: float,
    d: int,
    qk_init: float,
    snapshots: Sequence[int] | None = None,
    **_: Any,
) -> list[dict]:
    """:func:`noise_experiment` for several runs of one dataset at once, trained as one stacked
    model (:func:`lib.batched.fit_stacked`).

    Each run keeps its own noise, initialisation and batch order, so run ``i``'s result is
    :func:`noise_experiment`'s for it up to floating-point rounding (``tests/test_batched.py``
    checks that in float64). ``seconds`` is the wall time of the whole batch (the runs share it).

    Args:
        dataset: a key of :data:`NOISE_DATASETS`.
        runs: ``(kind, level, seed)`` triples (:func:`noise_run_names`).
        train_images, test_images, epochs, batch_size, lr, d, qk_init, snapshots: as
            :func:`noise_experiment`.

    Returns:
        A list of :func:`noise_experiment`'s dicts, one per run, in the order of ``runs``, each
        with ``batched`` (the number of runs trained together).

    Raises:
        ValueError: as :func:`noise_experiment`, and for an empty or malformed ``runs``.

    Source: LHSL (NeurIPS 2025) Appendix B, Figure 2; batched for ``make full`` (Chapter 5).
    """
    from ..batched import fit_stacked

    if not isinstance(runs, (list, tuple)) or not runs:
        raise ValueError(f"runs must be a non-empty list of (kind, level, seed), got {runs!r}")
    prepared = []
    for i, run in enumerate(runs):
        if not isinstance(run, (list, tuple)) or len(run) != 3:
            raise ValueError(f"runs[{i}] must be a (kind, level, seed) triple, got {run!r}")
        kind, level, seed = run
        prepared.append(
            _prepare(dataset, kind, level, seed, train_images, test_images, batch_size, d, qk_init)
        )
    epochs, snapshots = _schedule(epochs, snapshots)
    at: list[dict] = [{} for _ in runs]
    histories = fit_stacked(
        [m for m, _, _ in prepared],
        [b for _, b, _ in prepared],
        epochs=epochs,
        lr=lr,
        seeds=[int(seed) for _, _, seed in runs],
        progress=False,
        on_epoch=(
            (lambda k, m, h: _snapshot(at[k], snapshots, m, h, prepared[k][2]))
            if snapshots
            else None
        ),
    )
    return [
        _measure(model, history, test, dataset, kind, level, int(seed))
        | {"at": at[k], "batched": len(runs)}
        for k, ((model, _, test), history, (kind, level, seed)) in enumerate(
            zip(prepared, histories, runs, strict=True)
        )
    ]


def pilot_settings(dataset: str) -> dict:
    """The stored settings of :func:`noise_pilot` for ``dataset`` (full mode's run settings,
    :data:`PILOT`, the clean run's kind, level and seed)."""
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


def _pilot_compute(dataset: str) -> dict:
    """Train :func:`noise_pilot`'s clean model and record it every epoch."""
    from ..batched import fit_stacked

    settings = pilot_settings(dataset)
    model, batches, test = _prepare(
        dataset, "label", 0.0, 0, *(settings[k] for k in (
            "train_images", "test_images", "batch_size", "d", "qk_init"))
    )  # fmt: skip
    records: list[dict] = []

    def record(_: int, m: PatchAttentionClassifier, h: pd.DataFrame) -> None:
        epoch = int(h.epoch.iloc[-1])
        row: dict[str, Any] = {"epoch": epoch, **m.attention_norms()}
        row["test_acc"] = training.evaluate(m, test) if epoch % PILOT["test_every"] == 0 else None
        records.append(row)

    rule = training.StopRule(PILOT["target"], PILOT["window"], PILOT["min_gain"])
    (history,) = fit_stacked(
        [model],
        [batches],
        epochs=PILOT["max_epochs"],
        lr=settings["lr"],
        seeds=[0],
        stop=rule,
        on_epoch=record,
        progress=False,
    )
    return {
        "dataset": dataset,
        "epochs": len(history),
        "stopped": history.attrs["stopped"],
        "test_acc": training.evaluate(model, test),
        "seconds": float(history.seconds.iloc[-1]),
        "history": {
            "epoch": history.epoch.tolist(),
            "loss": history.loss.tolist(),
            "train_acc": history.train_acc.tolist(),
            **{k: [r[k] for r in records] for k in records[0] if k != "epoch"},
        },
    }


def noise_pilot(dataset: str, *, allow_compute: bool | None = None) -> store.StoredRun:
    """The stored pilot that sets how long the full runs of ``dataset`` train.

    The clean model (no noise, seed 0) in full mode's settings trains (as a batch of one,
    :func:`lib.batched.fit_stacked`) until :class:`lib.training.StopRule` with :data:`PILOT`'s
    target, window and gain fires, or for ``PILOT["max_epochs"]``; every epoch it records the
    attention norms, every ``PILOT["test_every"]`` epochs the clean test accuracy.

    Args:
        dataset: a key of :data:`NOISE_DATASETS`.
        allow_compute: compute a missing or stale pilot (default: outside book builds).

    Returns:
        The :class:`lib.experiments.store.StoredRun`; its ``result`` has ``dataset``, ``epochs``
        (the epochs trained), ``stopped`` (the rule's sentence, or ``None`` at the cap),
        ``test_acc``, ``seconds`` and ``history`` (per epoch: ``epoch``, ``loss``, ``train_acc``,
        the norms of :meth:`~lib.models.PatchAttentionClassifier.attention_norms`, ``test_acc``
        or ``None``).

    Raises:
        ValueError: for an unknown dataset.
        lib.experiments.store.StaleResultError: in a book build whose pilot is missing or stale.

    Source: the book's stopping rule for LHSL Appendix B's experiment (its sources give no
    training length); Chapter 5.
    """
    settings = pilot_settings(dataset)
    if allow_compute is None:
        allow_compute = not runtime.IN_BUILD
    return store.load_or_run(
        "noise",
        f"pilot-{dataset}",
        NOISE_VERSION,
        settings,
        lambda: _pilot_compute(dataset),
        allow_compute=allow_compute,
        device=str(runtime.DEVICE),
    )


def run_epochs(dataset: str, settings: dict, *, allow_compute: bool | None = None) -> dict:
    """``settings`` with ``epochs`` resolved for ``dataset``: a number is kept, ``"pilot"`` becomes
    the epochs of :func:`noise_pilot` (computed first where allowed).

    Raises:
        ValueError: for an unknown dataset or an ``epochs`` that is neither.
        lib.experiments.store.StaleResultError: as :func:`noise_pilot`.
    """
    epochs = settings["epochs"]
    if epochs == "pilot":
        epochs = noise_pilot(dataset, allow_compute=allow_compute).result["epochs"]
    elif isinstance(epochs, str):
        raise ValueError(f"settings['epochs'] must be a number or 'pilot', got {epochs!r}")
    return {**settings, "epochs": epochs}


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


def noise_runs(
    dataset: str,
    mode: str | None = None,
    *,
    allow_compute: bool | None = None,
    at: int | None = None,
) -> pd.DataFrame:
    """Every run of :func:`noise_experiment` for one dataset, both noise kinds, in ``mode``'s
    settings (:func:`noise_run_names`).

    Fast mode computes in place. Full mode stores each run on its own
    (:func:`lib.experiments.store.load_or_run`, run ``<dataset>-<kind>-<level>-seed-<seed>``, keyed
    on :data:`RUN_KEYS`, the dataset, kind, level, seed and :data:`NOISE_VERSION`): a stored run is
    loaded, a missing or stale one computed and stored by ``make full`` (so an interrupted
    ``make full`` resumes at the next run); inside a book build a missing or stale run stops the
    build with one line naming ``make full``. Reading stored runs needs no image files.

    Args:
        dataset: a key of :data:`NOISE_DATASETS`; mode: ``"fast"`` or ``"full"`` (default
            :data:`lib.runtime.MODE`).
        allow_compute: full mode only: compute what is missing (default: outside book builds).
        at: a snapshot epoch of the settings: the rows give the runs as measured then (norms,
            ``entropy``, ``train_acc``, ``test_acc``) instead of at the end; ``None``: the end.

    Returns:
        A DataFrame of the dicts of :func:`noise_experiment` (without ``history`` and ``at``), one
        row per kind, level and seed, with ``epoch`` (when the row was measured); the clean runs
        appear under both kinds. Stored runs carry their
        ``provenance`` in ``DataFrame.attrs["provenance"]`` (a list, one per run).

    Raises:
        ValueError: for an unknown mode or dataset, or an ``at`` that is not a snapshot epoch.
        lib.experiments.store.StaleResultError: in a full-mode build whose stored result is
            missing or stale.

    Source: LHSL Appendix B, Figure 2. Chapter 5 and ``tools/full_mode.py``.
    """
    mode = runtime.MODE if mode is None else mode
    one_of("mode", mode, runtime.MODES)
    one_of("dataset", dataset, NOISE_DATASETS)
    if allow_compute is None:
        allow_compute = not runtime.IN_BUILD
    settings = run_epochs(dataset, NOISE_SETTINGS[mode], allow_compute=allow_compute)
    if at is not None and at not in settings.get("snapshots", []):
        raise ValueError(
            f"at must be one of the snapshot epochs {settings.get('snapshots', [])}, got {at!r}"
        )
    rows, provenance = [], []
    runs = noise_run_names(mode)
    for kind, level, seed in runtime.progress(runs, desc=f"{dataset} noise"):
        if mode == "fast":
            rows.append(noise_experiment(dataset, kind, level, seed, **settings))
            continue
        run, run_settings = noise_run_key(dataset, kind, level, seed, settings)
        stored = store.load_or_run(
            "noise",
            run,
            NOISE_VERSION,
            run_settings,
            # the defaults bind this run's values; mypy infers no type for such a lambda
            lambda kind=kind, level=level, seed=seed: noise_experiment(  # type: ignore[misc]
                dataset, kind, level, seed, **settings
            ),
            allow_compute=allow_compute,
            device=str(runtime.DEVICE),
        )
        rows.append(stored.result)
        provenance.append(stored.provenance)
    rows = [
        {k: v for k, v in r.items() if k not in ("history", "at")}
        | ({"epoch": settings["epochs"]} if at is None else r["at"][str(at)] | {"epoch": at})
        for r in rows
    ]
    clean = [r | {"kind": "input"} for r in rows if r["kind"] == "label" and r["level"] == 0]
    out = pd.DataFrame(rows + clean)
    if provenance:
        out.attrs["provenance"] = provenance
    return out


def _level_and_seed(level: float, seed: int) -> tuple[float, int]:
    """A label-noise ratio in ``[0, 1)`` and a seed ``>= 0``, checked."""
    level = finite_real("level", level, minimum=0.0, maximum=1.0)
    if level >= 1.0:
        raise ValueError(f"level must be a label-noise ratio in [0, 1), got {level!r}")
    return level, positive_int("seed", seed, minimum=0, maximum=2**31)


def memorising_run_key(dataset: str, level: float, seed: int) -> tuple[str, dict]:
    """The stored run's name and settings of one run of the memorising arm
    (:data:`MEMORISING_SETTINGS`): ``memorising-<dataset>-label-<level>-seed-<seed>``.

    Raises:
        ValueError: for a dataset the arm does not run, a ``level`` that is not a label-noise
            ratio in ``[0, 1)`` or a ``seed`` that is not an integer ``>= 0``.
    """
    one_of("dataset", dataset, MEMORISING_SETTINGS["datasets"])
    level, seed = _level_and_seed(level, seed)
    run, settings = noise_run_key(dataset, "label", level, seed, MEMORISING_SETTINGS)
    extra = {k: MEMORISING_SETTINGS[k] for k in ("head_width", "final_lr")}
    return f"memorising-{run}", {**settings, **extra, "arm": "memorising"}


def memorising_runs(dataset: str, *, allow_compute: bool | None = None) -> pd.DataFrame:
    """Every stored run of the memorising arm for ``dataset``: each label-noise ratio and seed of
    :data:`MEMORISING_SETTINGS`, through :func:`lib.experiments.store.load_or_run` as
    :func:`noise_runs` stores its full-mode runs.

    Returns:
        A DataFrame as :func:`noise_runs` returns (label-noise rows only, ``epoch`` the epochs
        trained), with the runs' provenance in ``attrs["provenance"]``.

    Raises:
        ValueError: for an unknown dataset.
        lib.experiments.store.StaleResultError: in a book build whose stored run is missing or
            stale (``make full`` computes it).

    Source: the book's answer to LHSL Appendix B's missing model (Chapter 5).
    """
    one_of("dataset", dataset, NOISE_DATASETS)
    if allow_compute is None:
        allow_compute = not runtime.IN_BUILD
    settings = MEMORISING_SETTINGS
    rows, provenance = [], []
    for _, level, seed in noise_run_names_for(settings):
        run, run_settings = memorising_run_key(dataset, level, seed)
        stored = store.load_or_run(
            "noise",
            run,
            NOISE_VERSION,
            run_settings,
            # the defaults bind this run's values; mypy infers no type for such a lambda
            lambda level=level, seed=seed: noise_experiment(  # type: ignore[misc]
                dataset, "label", level, seed, **settings
            ),
            allow_compute=allow_compute,
            device=str(runtime.DEVICE),
        )
        rows.append({k: v for k, v in stored.result.items() if k not in ("history", "at")})
        provenance.append(stored.provenance)
    out = pd.DataFrame([r | {"epoch": settings["epochs"]} for r in rows])
    out.attrs["provenance"] = provenance
    return out


def factorial_design() -> list[dict[str, int]]:
    """The eight rows of :data:`FACTORIAL`'s design, each a dict factor -> ``-1`` (fast level) or
    ``+1`` (full level), in standard order of the three free factors.

    Source: the book's factorial for LHSL Appendix B's experiment (Chapter 5).
    """
    factors = list(FACTORIAL["factors"])
    free = [f for f in factors if f not in FACTORIAL["generators"]]
    rows = []
    for index in range(2 ** len(free)):
        row = {f: 1 if index >> k & 1 else -1 for k, f in enumerate(free)}
        for f, (a, b) in FACTORIAL["generators"].items():
            row[f] = row[a] * row[b]
        rows.append({f: row[f] for f in factors})
    return rows


def factorial_run_key(
    dataset: str, row: int, level: float, *, allow_compute: bool | None = None
) -> tuple[str, dict]:
    """The stored run's name and settings of design row ``row`` (:func:`factorial_design`) at
    label-noise ratio ``level``: ``factorial-<row>-<dataset>-label-<level>-seed-<seed>``.

    Raises:
        ValueError: for a dataset the factorial does not run, a row outside the design or a
            ``level`` that is not a label-noise ratio in ``[0, 1)``.
        lib.experiments.store.StaleResultError: as :func:`noise_pilot` (a row at the full number
            of epochs reads the dataset's pilot).
    """
    one_of("dataset", dataset, FACTORIAL["datasets"])
    level, _ = _level_and_seed(level, 0)
    design = factorial_design()
    row = positive_int("row", row, minimum=0, maximum=len(design) - 1)
    settings = {f: FACTORIAL["factors"][f][(sign + 1) // 2] for f, sign in design[row].items()} | {
        k: FACTORIAL[k] for k in ("test_images", "qk_init")
    }
    settings = run_epochs(dataset, settings, allow_compute=allow_compute)
    run, run_settings = noise_run_key(dataset, "label", level, FACTORIAL["seed"], settings)
    return f"factorial-{row}-{run}", {**run_settings, "arm": "factorial", "row": row}


def factorial_runs(dataset: str, *, allow_compute: bool | None = None) -> pd.DataFrame:
    """Every stored run of :data:`FACTORIAL` for ``dataset``: a row per design row and level,
    with the design's signs (columns named by factor), ``row`` and :func:`noise_experiment`'s
    measures.

    Raises:
        ValueError: for an unknown dataset.
        lib.experiments.store.StaleResultError: in a book build whose stored run is missing or
            stale (``make full`` computes it).

    Source: the book's factorial for LHSL Appendix B's experiment (Chapter 5).
    """
    one_of("dataset", dataset, NOISE_DATASETS)
    if allow_compute is None:
        allow_compute = not runtime.IN_BUILD
    rows, provenance = [], []
    for row, signs in enumerate(factorial_design()):
        for level in FACTORIAL["levels"]:
            run, settings = factorial_run_key(dataset, row, level, allow_compute=allow_compute)
            stored = store.load_or_run(
                "noise",
                run,
                NOISE_VERSION,
                settings,
                # the defaults bind this run's values; mypy infers no type for such a lambda
                lambda settings=settings: noise_experiment(  # type: ignore[misc]
                    dataset,
                    "label",
                    settings["level"],
                    settings["seed"],
                    **{k: settings[k] for k in RUN_KEYS},
                ),  # fmt: skip
                allow_compute=allow_compute,
                device=str(runtime.DEVICE),
            )
            result = {k: v for k, v in stored.result.items() if k not in ("history", "at")}
            rows.append(signs | {"row": row} | result)
            provenance.append(stored.provenance)
    out = pd.DataFrame(rows)
    out.attrs["provenance"] = provenance
    return out


def noise_response(runs: pd.DataFrame, columns: Sequence[str], by: str) -> pd.Series:
    r"""How strongly the measures respond to label noise, per value of ``by``: the mean over
    ``columns`` of :math:`\log(v_\text{high} / v_\text{low})`, the measure at the highest
    noise level of the group over that at its lowest (natural logarithm; positive where the
    measures rise with the noise, negative where they fall as LHSL report).

    Args:
        runs: one row per run with columns ``level``, ``by`` and ``columns`` (as
            :func:`factorial_runs` or :func:`noise_runs` return them, label flips only), exactly one
            run per group at its lowest and one at its highest level.
        columns: the measures (e.g. the four norms of :math:`W_K` and :math:`W_Q`), positive.
        by: the column that names a group: ``"row"`` for the factorial's design rows, ``"seed"`` to
            pair the runs of one seed.

    Returns:
        A float64 Series indexed by the values of ``by`` (sorted), named ``"response"``.

    Raises:
        ValueError: for ``runs`` not a DataFrame with those columns, an empty ``columns``, a
            group without exactly one run at the lowest and one at the highest level, or a
            measure that is not finite and positive there.

    Source: the book's factorial for LHSL Appendix B's experiment (Chapter 5).
    """
    columns = list(columns) if not isinstance(columns, str) else []
    if not columns:
        raise ValueError(f"columns must be a non-empty sequence of column names, got {columns!r}")
    if not isinstance(runs, pd.DataFrame):
        raise ValueError(f"runs must be a pandas DataFrame, got {type(runs).__name__}")
    missing = [c for c in ("level", by, *columns) if c not in runs.columns]
    if missing:
        raise ValueError(f"runs lacks the columns {missing}")
    low, high = runs.level.min(), runs.level.max()
    if low == high:
        raise ValueError(f"runs must hold two noise levels, got only {low!r}")
    ends = [runs[runs.level == level].set_index(by)[columns] for level in (low, high)]
    for level, end in zip((low, high), ends, strict=True):
        if not end.index.is_unique or set(end.index) != set(ends[0].index) | set(ends[1].index):
            raise ValueError(
                f"every {by} must have exactly one run at level {low!r} and one at {high!r}; "
                f"at level {level!r} the runs are {sorted(end.index.tolist())}"
            )
        values = end.to_numpy(dtype=float)
        if not np.all(np.isfinite(values) & (values > 0)):
            raise ValueError(
                f"the measures {columns} must be finite and positive at level {level!r}"
            )
    ratio = np.log(ends[1].sort_index() / ends[0].sort_index())
    return ratio.mean(axis=1).astype(float).rename("response")


def main_effects(responses: pd.Series) -> pd.Series:
    """The main effect of each factor of :data:`FACTORIAL` on a response per design row: the
    mean response of the rows at the factor's full level less that of the rows at its fast level
    (each a mean of four rows; every main effect is free of the other main effects and aliased
    with two-factor interactions, see :data:`FACTORIAL`).

    Args:
        responses: a float Series indexed by design row ``0 ... 7`` (:func:`noise_response` with
            ``by="row"``).

    Returns:
        A float64 Series indexed by factor name, in :data:`FACTORIAL`'s order, named ``"effect"``.

    Raises:
        ValueError: for a Series whose index is not the design's rows, or non-finite values.

    Source: the book's factorial for LHSL Appendix B's experiment (Chapter 5).
    """
    design = pd.DataFrame(factorial_design())
    if not isinstance(responses, pd.Series) or sorted(responses.index) != list(design.index):
        raise ValueError(
            f"responses must be a Series indexed by the design rows {list(design.index)}, got "
            f"{getattr(responses, 'index', responses)!r}"
        )
    y = as_float_array("responses", responses.sort_index().to_numpy())
    return pd.Series(
        {f: float(y[design[f] > 0].mean() - y[design[f] < 0].mean()) for f in design.columns},
        name="effect",
    )


def effect_yardstick(seed_responses: ArrayLike, *, level: float = 0.95) -> float:
    r"""The size a main effect must pass to count, from the spread of the response across seeds.

    A main effect is a difference of two means of four single-seed responses, so its standard
    error is :math:`s/\sqrt{2}`, with :math:`s` the standard deviation of one response; estimated
    from :math:`k` seeds of a replicated setting, :math:`s` has :math:`k - 1` degrees of freedom,
    and an effect counts when it exceeds :math:`t_{(1+\text{level})/2,\,k-1}\, s/\sqrt{2}`,
    Student's two-sided critical value (its quantile found with mpmath from the regularised
    incomplete beta function).

    Args:
        seed_responses: the response of one setting per seed ``(k,)``, ``k >= 2``
            (:func:`noise_response` with ``by="seed"``).
        level: the two-sided confidence level, in ``(0, 1)``.

    Returns:
        The threshold, a float ``> 0``.

    Raises:
        ValueError: for fewer than two finite responses, responses without spread, or a level
            outside ``(0, 1)``.

    Source: the book's factorial for LHSL Appendix B's experiment (Chapter 5).
    """
    y = as_float_array("seed_responses", seed_responses)
    if y.ndim != 1 or len(y) < 2 or np.ptp(y) == 0:
        raise ValueError(
            f"seed_responses must be 1-D with at least two different values, got {short_repr(y)}"
        )
    level = finite_real("level", level, minimum=0.0, strict=True)
    if level >= 1:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    df = len(y) - 1
    q = mpmath.mpf(1 + level) / 2

    def cdf(t: Any) -> Any:
        return 1 - mpmath.betainc(df / 2, 0.5, 0, df / (df + t * t), regularized=True) / 2

    t = mpmath.findroot(lambda t: cdf(t) - q, mpmath.mpf(2))
    return float(t) * float(np.std(y, ddof=1)) / math.sqrt(2)


def trend_test(
    levels: ArrayLike, values: ArrayLike, *, permutations: int = 20_000, seed: int = 0
) -> tuple[float, float]:
    r"""Spearman's rank correlation of ``values`` with ``levels`` and its one-sided permutation
    p-value for a decline.

    :math:`\rho` is Pearson's correlation of the average ranks (ties share ranks, so replicate runs
    at one level are handled). The p-value is the share of random relabellings (``levels``
    permuted, ``numpy.random.default_rng(seed)``) whose :math:`\rho` is at most the observed one,
    counting the observed labelling itself:
    :math:`(1 + \#\{\rho_\pi \le \rho\})/(1 + \text{permutations})`.

    Args:
        levels: noise levels ``(R,)``, one per run (repeated for seeds).
        values: the measured norms ``(R,)``.
        permutations: random relabellings (>= 100).

    Returns:
        The floats ``(rho, p)``, ``rho`` in ``[-1, 1]`` and ``p`` in ``(0, 1]``.

    Raises:
        ValueError: for arrays of different lengths, fewer than 3 runs, non-finite, complex or
            bool entries, constant ``levels`` or ``values``, too few or too many permutations, or
            more than ``lib.maxaffine.MAX_MATRIX_ENTRIES`` permuted ranks (``permutations * R``).

    Source: the book's trend test for LHSL's "declines monotonically" (Appendix B, Figure 2),
    check C19, Chapter 5.
    """
    x = as_float_array("levels", levels)
    y = as_float_array("values", values)
    if x.ndim != 1 or x.shape != y.shape or len(x) < 3:
        raise ValueError(
            f"levels and values must be 1-D of one length >= 3, got shapes {x.shape} and {y.shape}"
        )
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        raise ValueError("levels and values must not be constant")
    permutations = positive_int("permutations", permutations, minimum=100, maximum=1_000_000)
    require_size(
        f"trend_test: the permuted ranks, {permutations:,} x {len(x)}",
        permutations * len(x),
        MAX_MATRIX_ENTRIES,
        "lib.maxaffine.MAX_MATRIX_ENTRIES",
    )
    rx, ry = pd.Series(x).rank().to_numpy(), pd.Series(y).rank().to_numpy()
    rx, ry = rx - rx.mean(), ry - ry.mean()
    scale = np.sqrt((rx**2).sum() * (ry**2).sum())
    rho = float(rx @ ry / scale)
    rng = np.random.default_rng(positive_int("seed", seed, minimum=0))
    shuffled = rng.permuted(np.broadcast_to(rx, (permutations, len(rx))), axis=1)
    null = shuffled @ ry / scale
    return rho, float((1 + np.sum(null <= rho + 1e-12)) / (1 + permutations))


def sharpness_trends(
    runs: pd.DataFrame, *, entropy: str = "entropy", qk: str = "qk_spectral"
) -> pd.DataFrame:
    r"""Whether attention gets *sharper* as the noise grows, per experiment (dataset and kind of
    noise): the two controls of check C19 that speak to the partition reading directly.

    Smoother attention with noisier data (LHSL's reading of their Figure 2: noise favours a
    smoother partition) means a rising attention entropy and a falling
    :math:`\lVert W_Q^\top W_K\rVert_2`; this tests the opposite direction with
    :func:`trend_test`: the entropy falling, and the norm rising (the test on its negation).

    Args:
        runs: one row per run with columns ``dataset``, ``kind``, ``level`` and the two measures
            (as :func:`noise_runs` returns them, whole or at a snapshot epoch).
        entropy, qk: the names of the entropy and norm columns.

    Returns:
        A DataFrame indexed by ``(dataset, kind)`` with ``entropy p`` (one-sided p for a falling
        entropy), ``entropy change`` (the seed mean at the highest level over that at the lowest,
        less 1), ``QK p`` (for a rising norm) and ``QK change``.

    Raises:
        ValueError: if a column is missing, and as :func:`trend_test`.

    Source: the book's controls of LHSL (NeurIPS 2025) Appendix B's experiment, Chapter 5.
    """
    if not isinstance(runs, pd.DataFrame):
        raise ValueError(f"runs must be a pandas DataFrame, got {type(runs).__name__}")
    missing = [c for c in ("dataset", "kind", "level", entropy, qk) if c not in runs.columns]
    if missing:
        raise ValueError(f"runs lacks the columns {missing}")
    rows = {}
    for (ds, kind), g in runs.groupby(["dataset", "kind"]):
        means = g.groupby("level")[[entropy, qk]].mean()
        rows[ds, kind] = {
            "entropy p": trend_test(g.level, g[entropy])[1],
            "entropy change": float(means[entropy].iloc[-1] / means[entropy].iloc[0] - 1),
            "QK p": trend_test(g.level, -g[qk])[1],
            "QK change": float(means[qk].iloc[-1] / means[qk].iloc[0] - 1),
        }
    return pd.DataFrame(rows).T


def _runs_frame(runs: object, columns: Sequence[str]) -> pd.DataFrame:
    """``runs`` when it is a DataFrame with ``dataset``, ``kind``, ``level`` and ``columns``."""
    if not isinstance(runs, pd.DataFrame):
        raise ValueError(f"runs must be a pandas DataFrame, got {type(runs).__name__}")
    missing = [c for c in ("dataset", "kind", "level", *columns) if c not in runs.columns]
    if missing:
        raise ValueError(f"runs lacks the columns {missing}")
    return runs


def norm_trends(runs: pd.DataFrame, columns: Sequence[str]) -> pd.DataFrame:
    r"""The trend of each measured norm in each experiment (dataset and kind of noise): the trend
    test over all runs, whether the seed means fall at every step, and the net change.

    Args:
        runs: one row per run with columns ``dataset``, ``kind``, ``level`` and ``columns`` (as
            :func:`noise_runs` returns them, renamed as the caller shows them).
        columns: the measures to test (e.g. the norms of :math:`W_K` and :math:`W_Q`), a
            non-empty sequence of column names.

    Returns:
        A DataFrame indexed by ``(dataset, kind, norm)`` with ``rho`` and ``p``
        (:func:`trend_test` of the measure against the level over all runs, every seed),
        ``monotone`` (whether the seed means fall strictly from each level to the next) and
        ``fall`` (the seed mean at the highest level over that at the lowest).

    Raises:
        ValueError: for ``runs`` not a DataFrame with those columns, an empty ``columns``, and
            as :func:`trend_test` (an experiment with fewer than 3 runs or a constant measure).

    Accuracy:
        ``rho`` and ``p`` as :func:`trend_test` (deterministic, seed 0); ``monotone`` is exact
        for the float64 seed means; ``fall`` is one quotient of two float64 means.

    Source: the book's test of LHSL's "declines monotonically" (Appendix B, Figure 2), check
    C19, Chapter 5.
    """
    columns = list(columns) if not isinstance(columns, str) else []
    if not columns:
        raise ValueError(f"columns must be a non-empty sequence of column names, got {columns!r}")
    runs = _runs_frame(runs, columns)
    tables = {}
    for (ds, kind), group in runs.groupby(["dataset", "kind"]):
        means = group.groupby("level")[columns].mean()
        tests = [trend_test(group.level, group[c]) for c in columns]
        tables[ds, kind] = pd.DataFrame(
            {
                "rho": [t[0] for t in tests],
                "p": [t[1] for t in tests],
                "monotone": [bool((np.diff(means[c]) < 0).all()) for c in columns],
                "fall": [float(means[c].iloc[-1] / means[c].iloc[0]) for c in columns],
            },
            index=columns,
        )
    out = pd.concat(tables)
    out.index.names = ["dataset", "kind", "norm"]
    return out


def curves_by_kind(holds: pd.Series, *, nonzero: bool = False) -> dict[str, dict[str, int]]:
    """How many curves of each kind of noise have a property: ``{kind: {"k": ..., "n": ...}}``.

    Args:
        holds: booleans, one per curve, indexed by a MultiIndex with a ``kind`` level (a
            column of :func:`norm_trends` or a test of it, e.g. ``t.fall > 1``).
        nonzero: keep only the kinds where ``k > 0``.

    Returns:
        A dict from kind to ``k`` (the curves where ``holds``) and ``n`` (the curves), Python
        ints, the kinds in the order of :data:`NOISE_KINDS`, then any other in sorted order.

    Raises:
        ValueError: for ``holds`` not a boolean Series with a ``kind`` index level.

    Accuracy:
        Exact counts.

    Source: the counts check C19 reports (Chapter 5).
    """
    if (
        not isinstance(holds, pd.Series)
        or "kind" not in (holds.index.names or [])
        or holds.dtype != bool
    ):
        raise ValueError(
            f"holds must be a boolean Series with a 'kind' index level, got {type(holds).__name__}"
        )
    nonzero = flag("nonzero", nonzero)
    counts = holds.groupby(level="kind").agg(["sum", "size"])
    order = sorted(counts.index, key=lambda k: (NOISE_KINDS + (k,)).index(k))
    return {
        kind: {"k": int(counts.loc[kind, "sum"]), "n": int(counts.loc[kind, "size"])}
        for kind in order
        if not nonzero or counts.loc[kind, "sum"]
    }


def epochs_case(epochs: Mapping[str, int]) -> str:
    """``"same"`` when every dataset trained for the same number of epochs, else
    ``"per_dataset"``: the case of the phrase that states the training length.

    Args:
        epochs: dataset -> epochs (e.g. :func:`run_epochs`' ``epochs`` per dataset), non-empty.

    Returns:
        ``"same"`` or ``"per_dataset"``.

    Raises:
        ValueError: for an empty or non-mapping ``epochs``.

    Accuracy:
        Exact.

    Source: the settings check C19 reports (Chapter 5).
    """
    if not isinstance(epochs, Mapping) or not epochs:
        raise ValueError(f"epochs must be a non-empty mapping dataset -> epochs, got {epochs!r}")
    return "same" if len(set(epochs.values())) == 1 else "per_dataset"


def seed_stats(runs: pd.DataFrame, columns: Sequence[str]) -> pd.DataFrame:
    """The seed mean and standard deviation of each measure per experiment and noise level: the
    points and bars of the chapter's figures of the norms against the noise level.

    Args:
        runs: one row per run with columns ``dataset``, ``kind``, ``level`` and ``columns`` (as
            :func:`noise_runs` returns them, renamed as the caller shows them).
        columns: the measures (e.g. the norms of :math:`W_K` and :math:`W_Q`), a non-empty
            sequence of column names.

    Returns:
        A DataFrame indexed by ``(dataset, kind, level)`` with columns ``(column, "mean")`` and
        ``(column, "std")`` for each of ``columns``, over the runs (seeds) at that level.

    Raises:
        ValueError: for ``runs`` not a DataFrame with those columns, or empty ``columns``.

    Accuracy:
        Exact: pandas' float64 mean and standard deviation (one degree of freedom removed).

    Source: the book's figures of check C19 (LHSL Appendix B's Figure 2 shows the label-flip
    case), Chapter 5.
    """
    columns = list(columns) if not isinstance(columns, str) else []
    if not columns:
        raise ValueError(f"columns must be a non-empty sequence of column names, got {columns!r}")
    runs = _runs_frame(runs, columns)
    return runs.groupby(["dataset", "kind", "level"])[columns].agg(["mean", "std"])
