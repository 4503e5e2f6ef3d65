r"""The book's tests of the noise experiment's trends (check C19, Chapter 5): does a norm fall as
the noise grows, does attention get sharper, and the seed means the figures draw.

* :func:`trend_test` is the book's test of a decline (Spearman's rank correlation with a
  one-sided permutation p-value); :func:`norm_trends` applies it to every norm of every
  experiment and :func:`sharpness_trends` to the attention's entropy and
  :math:`\lVert W_Q^\top W_K\rVert_2`;
* :func:`curves_by_kind` counts the curves that do something per kind of noise,
  :func:`epochs_case` says whether every dataset trained for the same number of epochs, and
  :func:`seed_stats` gives the seed means and spreads of the norms per noise level (which
  :func:`lib.book.figures.norm_figure` draws).

Every function raises :class:`ValueError`, naming the argument, for runs without the columns it
reads, and :func:`trend_test`'s errors for too few runs or a constant measure.

Source: the book's test of LHSL's "declines monotonically" (NeurIPS 2025, Appendix B, Figure 2)
and its controls, check C19, Chapter 5.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from ..._geometry import MAX_MATRIX_ENTRIES
from ..._validate import as_float_array, flag, positive_int, require_size
from .settings import NOISE_KINDS

__all__ = [
    "trend_test",
    "sharpness_trends",
    "norm_trends",
    "curves_by_kind",
    "epochs_case",
    "seed_stats",
]


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
            (as :func:`~lib.experiments.noise.runs.noise_runs` returns them, whole or at a
            snapshot epoch).
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
            :func:`~lib.experiments.noise.runs.noise_runs` returns them, renamed as the caller
            shows them).
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
        ints, the kinds in the order of :data:`~lib.experiments.noise.settings.NOISE_KINDS`,
        then any other in sorted order.

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
        epochs: dataset -> epochs (e.g. :func:`~lib.experiments.noise.runs.run_epochs`'
            ``epochs`` per dataset), non-empty.

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
            :func:`~lib.experiments.noise.runs.noise_runs` returns them, renamed as the caller
            shows them).
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
