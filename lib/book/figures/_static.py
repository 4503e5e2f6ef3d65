"""The static (matplotlib) figures built from the chapters' data; re-exported by
:mod:`lib.book.figures`.

* :func:`norm_figure` — Chapter 5, the attention norms' seed means and spreads against the noise
  level;
* :func:`pipeline_figure` — Chapter 4, the approximator's stages as a row of boxes (on phones, a
  snake of rows).

Every function raises :class:`ValueError`, naming the argument, for input of the wrong shape,
length or kind.

Source: the book's own figures of K&S (ICLR 2024) Chapter 4 and of LHSL (NeurIPS 2025)
Appendix B, Chapter 5.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ..plotting import PALETTE
from ._shared import _names

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["norm_figure", "pipeline_figure"]


def norm_figure(
    stats: pd.DataFrame,
    datasets: Sequence[str],
    norms: Sequence[str],
    xlabel: Callable[[str, str], str],
) -> Figure:
    """Chapter 5's ``fig-maxaffine-noise`` and ``fig-maxaffine-noise-full``: the norms against
    the noise level, kinds of noise by rows (label flips, then pixel noise), datasets by
    columns; seed means with bars of one standard deviation, as given.

    Spectral norms are blue and Frobenius norms orange (by whether a name holds
    ``"spectral"``); :math:`W_K` solid and the others dashed (by whether it starts with
    ``"W_K"``); a name ``"W_K spectral"`` is labelled :math:`W_K` spectral. A panel whose
    dataset and kind ``stats`` lacks is left empty.

    Args:
        stats: seed means and standard deviations indexed by ``(dataset, kind, level)`` with
            columns ``(norm, "mean")`` and ``(norm, "std")``, as
            :func:`lib.experiments.noise.trends.seed_stats` returns them.
        datasets: the datasets to draw, one column each.
        norms: the norms to draw.
        xlabel: ``xlabel(kind, dataset)``, the label of the noise axis of that panel.

    Returns:
        A matplotlib Figure (:func:`lib.book.plotting.figure`, full width).

    Raises:
        ValueError: for ``stats`` not a DataFrame of that shape, empty ``datasets`` or
            ``norms``, or a non-callable ``xlabel``.

    Source: the book's figures of check C19 (LHSL Appendix B's Figure 2 shows the label-flip
    case), Chapter 5.
    """
    from ...experiments.noise.settings import NOISE_KINDS
    from .. import plotting

    norms, datasets = _names("norms", norms), _names("datasets", datasets)
    if not isinstance(stats, pd.DataFrame) or list(stats.index.names) != [
        "dataset",
        "kind",
        "level",
    ]:
        raise ValueError("stats must be a DataFrame indexed by (dataset, kind, level)")
    missing = [(n, s) for n in norms for s in ("mean", "std") if (n, s) not in stats.columns]
    if missing:
        raise ValueError(f"stats lacks the columns {missing}")
    if not callable(xlabel):
        raise ValueError(f"xlabel must be callable (kind, dataset) -> str, got {xlabel!r}")
    fig, axes = plotting.figure("full", 0.62, nrows=2, ncols=len(datasets), sharex="row")
    # one column per dataset
    axes = np.asarray(axes).reshape(2, len(datasets))
    for col, ds in enumerate(datasets):
        for row, kind in enumerate(NOISE_KINDS):
            ax = axes[row, col]
            if (ds, kind) in stats.index.droplevel("level"):
                panel = stats.xs((ds, kind), level=("dataset", "kind"))
                for norm in norms:
                    ax.errorbar(
                        panel.index,
                        panel[norm]["mean"],
                        yerr=panel[norm]["std"],
                        color=PALETTE["blue"] if "spectral" in norm else PALETTE["orange"],
                        marker="o",
                        ms=3,
                        capsize=2,
                        lw=1,
                        ls="-" if norm.startswith("W_K") else "--",
                        label=norm.replace("_", "$_").replace(" ", "$ ", 1),
                    )
            ax.set(xlabel=xlabel(kind, ds), ylabel="norm" if col == 0 else None, ylim=(0, None))
    axes[0, 0].legend(fontsize=7, ncols=2, loc="lower left")
    return fig


def _pipeline_axes(
    boxes: Sequence[tuple[str, str]], per_row: int, width: str, aspect: float
) -> Figure:
    """Draw ``boxes`` (text, ``"layer"`` or ``"object"``) as rows of ``per_row`` boxes joined by
    arrows, every other row running right to left (a snake); the figure."""
    from matplotlib import patches

    from .. import plotting

    fig, ax = plotting.figure(width, aspect)
    step, rows = 1.45, -(-len(boxes) // per_row)
    centres = []
    for i, (text, kind) in enumerate(boxes):
        row, place = divmod(i, per_row)
        column = place if row % 2 == 0 else per_row - 1 - place
        x, y = column * step, (rows - 1 - row) * 1.5
        centres.append((x + 0.6, y + 0.5))
        colour = PALETTE["sky"] if kind == "layer" else "#f2f2f2"
        ax.add_patch(
            patches.FancyBboxPatch(
                (x, y),
                1.2,
                1,
                boxstyle="round,pad=0.05",
                facecolor=colour,
                edgecolor="#333333",
                linewidth=0.8,
            )
        )
        ax.text(x + 0.6, y + 0.5, text, ha="center", va="center", fontsize=8)
    arrow = {"arrowstyle": "->", "color": "#333333"}
    for i in range(1, len(boxes)):
        (x0, y0), (x1, y1) = centres[i - 1], centres[i]
        if y0 == y1:  # along a row, from the edge of one box to the next
            sign = 1 if x1 > x0 else -1
            start, end = (x0 + sign * 0.63, y0), (x1 - sign * 0.65, y1)
        else:  # down to the next row
            start, end = (x0, y0 - 0.58), (x1, y1 + 0.6)
        ax.annotate("", xy=end, xytext=start, arrowprops=arrow)
    ax.set(xlim=(-0.15, (per_row - 1) * step + 1.3), ylim=(-0.15, (rows - 1) * 1.5 + 1.15))
    ax.axis("off")
    return fig


def pipeline_figure(boxes: Sequence[tuple[str, str]], phone_per_row: int = 3) -> Figure:
    """A row of boxes joined by arrows (Chapter 4's pipeline), with its own layout for phones.

    Args:
        boxes: ``(text, kind)`` per box, left to right; ``kind`` is ``"layer"`` (drawn sky blue)
            or ``"object"`` (light grey); at least two.
        phone_per_row: boxes per row of the phone layout (a snake: every other row runs right
            to left), between 1 and the number of boxes.

    Returns:
        A matplotlib Figure, full width, the boxes in one row; its attribute
        :data:`lib.book.plotting.PHONE_FIGURE` holds the phone layout (half width, rows of
        ``phone_per_row``), which :func:`lib.book.plotting.figure_outputs` renders for phones.

    Raises:
        ValueError: for fewer than two boxes, a box that is not a ``(text, kind)`` pair of a
            known kind, or ``phone_per_row`` outside its range.
    """
    from ..._validate import positive_int, short_repr
    from .. import plotting

    boxes = list(boxes)
    if len(boxes) < 2:
        raise ValueError(f"boxes must hold at least two boxes, got {len(boxes)}")
    for box in boxes:
        if not (
            isinstance(box, tuple)
            and len(box) == 2
            and isinstance(box[0], str)
            and box[1] in ("layer", "object")
        ):
            raise ValueError(
                f"boxes must be (text, 'layer' or 'object') pairs, got {short_repr(box)}"
            )
    phone_per_row = positive_int("phone_per_row", phone_per_row, maximum=len(boxes))
    fig = _pipeline_axes(boxes, len(boxes), "full", 0.22)
    rows = -(-len(boxes) // phone_per_row)
    phone = _pipeline_axes(boxes, phone_per_row, "half", 0.27 * rows)
    setattr(fig, plotting.PHONE_FIGURE, phone)
    return fig
