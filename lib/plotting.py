"""One figure style for the whole book: ``use_style()``, the palette, named widths.

Figures are :class:`matplotlib.figure.Figure` objects made by :func:`figure` (not pyplot), shown
by ending a cell with the figure. :func:`use_style` registers the PNG formatter with IPython
itself, so figures appear in the built book whatever ``MPLBACKEND`` says (``Agg`` included) and
are never shown twice.

Used by every chapter's set-up cell and plotting cells.
"""

from __future__ import annotations

from importlib import resources

import matplotlib as mpl
import matplotlib.style
from matplotlib.figure import Figure

from ._validate import finite_real, positive_int, short_repr

__all__ = ["PALETTE", "WIDTHS", "STYLE", "use_style", "figure"]

#: Okabe & Ito colour-blind-safe colours, by name.
PALETTE = {
    "blue": "#0072B2",
    "orange": "#E69F00",
    "green": "#009E73",
    "vermillion": "#D55E00",
    "purple": "#CC79A7",
    "sky": "#56B4E9",
    "yellow": "#F0E442",
    "black": "#000000",
}

#: Figure widths in inches (the text column is about 6.8 in wide).
WIDTHS = {"full": 6.8, "wide": 6.8, "half": 3.4, "third": 2.3}

#: Path of the book's matplotlib style sheet.
STYLE = str(resources.files("lib") / "book.mplstyle")


def use_style() -> None:
    """Apply ``lib/book.mplstyle`` and, inside IPython, show figures as PNG at 150 dpi.

    Also lets pandas show table cells in full (``display.max_colwidth``), since the book's tables
    hold sentences (claims) as well as numbers. Safe to call twice. Outside IPython it only sets
    the styles.
    """
    import pandas as pd

    mpl.style.use(STYLE)
    pd.set_option("display.max_colwidth", None)
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython ships with the book's environment
        return
    shell = get_ipython()
    if shell is None:
        return
    from IPython.core.pylabtools import select_figure_formats

    select_figure_formats(shell, {"png"}, dpi=150, bbox_inches="tight")


def figure(width: str = "full", aspect: float = 0.45, *, nrows: int = 1, ncols: int = 1, **subplot_kw):
    """A new constrained-layout :class:`~matplotlib.figure.Figure` and its axes.

    Args:
        width: a key of :data:`WIDTHS` (``"full"``, ``"half"``, ``"third"``).
        aspect: height / width, between 0.05 and 5.
        nrows, ncols: the grid of axes, at most 12 each.
        **subplot_kw: passed to ``Figure.subplots`` (e.g. ``sharey=True``).

    Returns:
        ``(fig, axes)`` as ``Figure.subplots`` returns them (a single Axes for a 1x1 grid).

    Raises:
        ValueError: for an unknown ``width``, an ``aspect`` outside [0.05, 5] or a grid size
            outside [1, 12].
    """
    if not isinstance(width, str) or width not in WIDTHS:
        raise ValueError(f"width must be one of {sorted(WIDTHS)}, got {short_repr(width)}")
    aspect = finite_real("aspect", aspect, minimum=0.05, maximum=5.0)
    nrows = positive_int("nrows", nrows, maximum=12)
    ncols = positive_int("ncols", ncols, maximum=12)
    w = WIDTHS[width]
    fig = Figure(figsize=(w, w * aspect), layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=True, **subplot_kw)
    return fig, axes
