r"""The memorising arm of the noise experiment (Chapter 5): a model that can fit the flipped labels,
its settings and its stored runs.

* :data:`MEMORISING_SETTINGS` are the arm's settings (a ReLU head after the attention, a falling
  rate) and :data:`MEMORISING_TARGET` the training accuracy on the noisy labels its runs must
  reach to count as fitting the flips;
* :func:`memorising_run_key` names one stored run of the arm and :func:`memorising_runs` reads
  (or, outside book builds, computes) every run of a dataset.

Every function raises :class:`ValueError`, naming the argument, for a dataset the arm does not
run, a level that is not a label-noise ratio or a bad seed;
:class:`lib.experiments.store.StaleResultError` in a book build whose stored run is missing or
stale.

Source: the book's answer to LHSL Appendix B's missing model (the sources give none; every
setting is the book's own). Chapter 5 and ``make full``.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from ... import runtime
from ..._validate import one_of
from .. import store
from .runs import noise_experiment
from .settings import (
    NOISE_DATASETS,
    NOISE_SEEDS,
    NOISE_VERSION,
    _level_and_seed,
    noise_run_key,
    noise_run_names_for,
)

__all__ = ["MEMORISING_SETTINGS", "MEMORISING_TARGET", "memorising_run_key", "memorising_runs"]

#: The arm whose model can fit the flipped labels. The model of
#: :data:`~lib.experiments.noise.settings.NOISE_SETTINGS` (a linear head after the attention)
#: cannot: at full scale its training accuracy on the noisy labels levels off near the share of
#: labels left clean, so its runs study a model that fits none of the flips. This arm trains the
#: same attention layer with a ReLU head of ``head_width`` units on a seeded subset of
#: ``train_images`` training images (the whole training sets are beyond what such a model
#: memorises within the book's budget), with the rate falling linearly to ``final_lr``, long
#: enough that its training accuracy on the noisy labels reaches :data:`MEMORISING_TARGET` at the
#: largest ratio (a requirement the chapter checks, not a result). Label flips only (the regime in
#: question); every setting is ours.
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
    :func:`~lib.experiments.noise.runs.noise_runs` stores its full-mode runs.

    Returns:
        A DataFrame as :func:`~lib.experiments.noise.runs.noise_runs` returns (label-noise rows
        only, ``epoch`` the epochs trained), with the runs' provenance in ``attrs["provenance"]``.

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
