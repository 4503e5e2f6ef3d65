r"""The runs of the noise experiment of LHSL Appendix B (Chapter 5): one run trained and measured,
several trained as one stacked model, the pilot that fixes the full runs' length, and the stored
runs of a dataset.

* :func:`noise_experiment` trains one :class:`lib.models.PatchAttentionClassifier` and measures
  its attention norms, entropy and accuracies; :func:`noise_experiments` trains several runs of
  one dataset at once (:func:`lib.training.fit_stacked`, ``make full``);
* :func:`noise_pilot` is the stored pilot and :func:`run_epochs` the epochs it sets;
* :func:`noise_runs` runs every noise level and seed for one dataset: live in fast mode, through
  the stored results (:mod:`lib.experiments.store`) in full mode.

Every function raises :class:`ValueError`, naming the argument, for an unknown dataset, kind or
mode and bad sizes; :class:`lib.experiments.store.StaleResultError` in a book build whose stored
run is missing or stale.

Source: LHSL (NeurIPS 2025) Appendix B, Figure 2 (every setting is the book's own,
:mod:`lib.experiments.noise.settings`). Check C19, Chapter 5, and ``make full``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import torch

from ... import datasets, runtime, training
from ..._validate import one_of, positive_int
from ...models import PatchAttentionClassifier
from .. import store
from .settings import (
    NOISE_DATASETS,
    NOISE_SETTINGS,
    NOISE_VERSION,
    PILOT,
    noise_run_key,
    noise_run_names,
    pilot_settings,
)

__all__ = [
    "noise_experiment",
    "noise_experiments",
    "noise_pilot",
    "run_epochs",
    "noise_runs",
]


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
        dataset: ``"mnist"``, ``"fashion-mnist"`` or ``"cifar10"``
            (:data:`~lib.experiments.noise.settings.NOISE_DATASETS`).
        kind: ``"label"`` or ``"input"``; level: the ratio or the standard deviation.
        seed: seed of the noise, the initialisation and the batch order.
        train_images, test_images, epochs, batch_size, lr, d, qk_init: the settings of
            :data:`~lib.experiments.noise.settings.NOISE_SETTINGS` (``None`` images means the
            whole split; ``epochs`` a number here, :func:`run_epochs` resolves ``"pilot"``; other
            keys are ignored).
        snapshots: epochs (at most ``epochs``) at which the run is also measured on its way.
        head_width: ``None`` (the linear head of
            :data:`~lib.experiments.noise.settings.NOISE_SETTINGS`' model) or the width of a ReLU
            head (:data:`~lib.experiments.noise.memorising.MEMORISING_SETTINGS`).
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
    model (:func:`lib.training.fit_stacked`).

    Each run keeps its own noise, initialisation and batch order, so run ``i``'s result is
    :func:`noise_experiment`'s for it up to floating-point rounding (``tests/unit/test_batched.py``
    checks that in float64). ``seconds`` is the wall time of the whole batch (the runs share it).

    Args:
        dataset: a key of :data:`~lib.experiments.noise.settings.NOISE_DATASETS`.
        runs: ``(kind, level, seed)`` triples
            (:func:`~lib.experiments.noise.settings.noise_run_names`).
        train_images, test_images, epochs, batch_size, lr, d, qk_init, snapshots: as
            :func:`noise_experiment`.

    Returns:
        A list of :func:`noise_experiment`'s dicts, one per run, in the order of ``runs``, each
        with ``batched`` (the number of runs trained together).

    Raises:
        ValueError: as :func:`noise_experiment`, and for an empty or malformed ``runs``.

    Source: LHSL (NeurIPS 2025) Appendix B, Figure 2; batched for ``make full`` (Chapter 5).
    """
    from ...training import fit_stacked

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


def _pilot_compute(dataset: str) -> dict:
    """Train :func:`noise_pilot`'s clean model and record it every epoch."""
    from ...training import fit_stacked

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
    :func:`lib.training.fit_stacked`) until :class:`lib.training.StopRule` with
    :data:`~lib.experiments.noise.settings.PILOT`'s target, window and gain fires, or for
    ``PILOT["max_epochs"]``; every epoch it records the attention norms, every
    ``PILOT["test_every"]`` epochs the clean test accuracy.

    Args:
        dataset: a key of :data:`~lib.experiments.noise.settings.NOISE_DATASETS`.
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


def noise_runs(
    dataset: str,
    mode: str | None = None,
    *,
    allow_compute: bool | None = None,
    at: int | None = None,
) -> pd.DataFrame:
    """Every run of :func:`noise_experiment` for one dataset, both noise kinds, in ``mode``'s
    settings (:func:`~lib.experiments.noise.settings.noise_run_names`).

    Fast mode computes in place. Full mode stores each run on its own
    (:func:`lib.experiments.store.load_or_run`, run ``<dataset>-<kind>-<level>-seed-<seed>``, keyed
    on :data:`~lib.experiments.noise.settings.RUN_KEYS`, the dataset, kind, level, seed and
    :data:`~lib.experiments.noise.settings.NOISE_VERSION`): a stored run is loaded, a missing or
    stale one computed and stored by ``make full`` (so an interrupted ``make full`` resumes at the
    next run); inside a book build a missing or stale run stops the build with one line naming
    ``make full``. Reading stored runs needs no image files.

    Args:
        dataset: a key of :data:`~lib.experiments.noise.settings.NOISE_DATASETS`; mode:
            ``"fast"`` or ``"full"`` (default :data:`lib.runtime.MODE`).
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
