r"""The factorial of the noise experiment (Chapter 5): which of the settings in which fast and full
mode differ turns the norms' response to label noise around, and its analysis.

* :data:`FACTORIAL` is the design (a 2^(5-2) fraction of the five settings, two label-noise
  levels, one seed), :func:`factorial_design` its eight rows, :func:`factorial_run_key` the name
  and settings of one stored run and :func:`factorial_runs` every stored run of a dataset;
* :func:`noise_response` measures how strongly the norms respond to label noise per design row
  (or seed), :func:`main_effects` gives each factor's main effect on it and
  :func:`effect_yardstick` the size an effect must pass to count, from the spread across seeds.

Every function raises :class:`ValueError`, naming the argument, for an unknown dataset, a row
outside the design, or runs and responses it cannot read;
:class:`lib.experiments.store.StaleResultError` in a book build whose stored run is missing or
stale.

Source: the book's factorial for LHSL Appendix B's experiment (Chapter 5); Student's t quantile
from the regularised incomplete beta function (mpmath).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import mpmath
import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from ... import runtime
from ..._validate import as_float_array, finite_real, one_of, positive_int, short_repr
from .. import store
from .runs import noise_experiment, run_epochs
from .settings import NOISE_DATASETS, NOISE_VERSION, RUN_KEYS, _level_and_seed, noise_run_key

__all__ = [
    "FACTORIAL",
    "factorial_design",
    "factorial_run_key",
    "factorial_runs",
    "noise_response",
    "main_effects",
    "effect_yardstick",
]

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
        lib.experiments.store.StaleResultError: as :func:`~lib.experiments.noise.runs.noise_pilot`
            (a row at the full number of epochs reads the dataset's pilot).
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
    with the design's signs (columns named by factor), ``row`` and
    :func:`~lib.experiments.noise.runs.noise_experiment`'s measures.

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
            :func:`factorial_runs` or :func:`~lib.experiments.noise.runs.noise_runs` return them,
            label flips only), exactly one run per group at its lowest and one at its highest
            level.
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
