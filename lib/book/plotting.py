"""One figure style for the whole book: ``use_style()``, the palette, named widths.

Figures are :class:`matplotlib.figure.Figure` objects made by :func:`figure` (not pyplot), shown
by ending a cell with the figure. :func:`use_style` registers the PNG formatter with IPython
itself, so figures appear in the built book whatever ``MPLBACKEND`` says (``Agg`` included) and
are never shown twice.

Used by every chapter's set-up cell and plotting cells.
"""

from __future__ import annotations

from collections.abc import Iterable
from importlib import resources
from typing import TYPE_CHECKING, Any

import matplotlib as mpl
import matplotlib.style
import matplotlib.ticker
from matplotlib.figure import Figure

from .._validate import finite_real, positive_int, short_repr

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.text import Text
    from numpy.typing import ArrayLike

__all__ = [
    "PALETTE",
    "WIDTHS",
    "STYLE",
    "PNG_DPI",
    "SMALLEST_TEXT_PX",
    "use_style",
    "figure",
    "figure_png",
    "smallest_text_pt",
    "rate_axes",
]

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

#: Resolution of the book's PNG figures, dots per inch (raised for figures with small text).
PNG_DPI = 150

#: Height in image pixels of the smallest text of every PNG figure (the style's smallest size,
#: the legends' 8.5 pt, at :data:`PNG_DPI`). A page shows a figure at no less than
#: ``9 / SMALLEST_TEXT_PX`` of its pixel width on a phone (``_static/book.js``), so its text is
#: never under 9 CSS px there.
SMALLEST_TEXT_PX = 8.5 / 72 * PNG_DPI

#: Path of the book's matplotlib style sheet, ``book.mplstyle`` in the ``lib`` package.
#:
#: :meta hide-value:
STYLE = str(resources.files("lib.book") / "book.mplstyle")


def use_style() -> None:
    """Apply ``lib/book/book.mplstyle`` and, inside IPython, show figures as PNG at 150 dpi.

    Also lets pandas show table cells in full (``display.max_colwidth``), since the book's tables
    hold sentences (claims) as well as numbers, and gives every DataFrame a ``text/markdown``
    form (:func:`lib.book.checks.markdown_table`), which the PDF prints as a table. Safe to call
    twice. Outside IPython it only sets the styles.
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
    formatters = shell.display_formatter.formatters
    formatters["image/png"].for_type(Figure, figure_png)
    # A DataFrame shown as it is also gets a MyST table, which the PDF prints as a table (its
    # text/plain would print as monospace text); the website keeps pandas' HTML.
    from lib.book.checks import markdown_table

    formatters["text/markdown"].for_type(pd.DataFrame, markdown_table)
    for mime in ("image/svg+xml", "application/pdf", "image/jpeg"):
        formatters[mime].pop(Figure, None)


def smallest_text_pt(fig: Figure) -> float:
    """The size in points of the smallest non-empty visible text of ``fig`` (after a layout pass).

    Args:
        fig: a :class:`matplotlib.figure.Figure`.

    Returns:
        The smallest font size in pt, or ``nan`` when the figure has no text.

    Raises:
        ValueError: if ``fig`` is not a matplotlib Figure.
    """
    import math

    from matplotlib.text import Text

    if not isinstance(fig, Figure):
        raise ValueError(f"fig must be a matplotlib Figure, got {short_repr(fig)}")
    fig.draw_without_rendering()  # tick labels exist only after a draw
    sizes = [t.get_fontsize() for t in fig.findobj(Text) if _shown(t)]
    # a drawn text's size is in points (a float); the stub also allows a name such as "small"
    return min(sizes) if sizes else math.nan  # type: ignore[return-value]


def _shown(text: Text) -> bool:
    """A text counts when it is visible, non-empty and takes up room on the canvas."""
    if not (text.get_visible() and text.get_text().strip()):
        return False
    box = text.get_window_extent()
    return box.width > 0 and box.height > 0


def figure_png(fig: Figure) -> bytes:
    """``fig`` as the book's PNG: tight bounding box, white background, text readable on phones.

    Rendered at :data:`PNG_DPI`, or at a higher resolution when the figure's smallest text is under
    8.5 pt, so that the smallest text is always at least :data:`SMALLEST_TEXT_PX` image pixels
    high. The PNG records that size as the text chunk ``Book-Smallest-Text-Pt`` (points), which
    the browser check reads to verify the text size a phone shows.

    Args:
        fig: a :class:`matplotlib.figure.Figure`.

    Returns:
        The PNG file's bytes.

    Raises:
        ValueError: if ``fig`` is not a matplotlib Figure.

    Used by IPython (through :func:`use_style`) for every figure of every chapter.
    """
    import io
    import math

    smallest = smallest_text_pt(fig)
    dpi = PNG_DPI
    if not math.isnan(smallest) and smallest / 72 * PNG_DPI < SMALLEST_TEXT_PX:
        dpi = math.ceil(SMALLEST_TEXT_PX * 72 / smallest)
    buffer = io.BytesIO()
    fig.savefig(
        buffer,
        format="png",
        dpi=dpi,
        bbox_inches="tight",
        metadata={"Book-Smallest-Text-Pt": "none" if math.isnan(smallest) else f"{smallest:g}"},
    )
    return buffer.getvalue()


def figure(
    width: str = "full", aspect: float = 0.45, *, nrows: int = 1, ncols: int = 1, **subplot_kw: Any
) -> tuple[Figure, Any]:
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


def rate_axes(
    ax: Axes,
    ticks: ArrayLike,
    *,
    xlabel: str,
    ylabel: str,
    slope: float | None = None,
    through: ArrayLike | None = None,
    tick_labels: Iterable[str] | None = None,
    reference_label: str | None = None,
) -> Axes:
    """Make ``ax`` a log-log rate plot: ticks at ``ticks`` labelled as written, optional reference
    slope.

    The chapters plot an error (or a size) against a grid size or an accuracy on log-log axes to
    read off a rate; this is that plot's common part. The reference line of ``slope`` passes through
    the point ``through = (x, y)``, spans the ticks, and is drawn grey and below the data.

    Args:
        ax: a matplotlib Axes.
        ticks: the x positions to label (e.g. the grid sizes ``m``), all positive.
        xlabel, ylabel: the axis labels.
        slope: the reference line's log-log slope (``None``: no line).
        through: ``(x, y)`` the reference line passes through (required with ``slope``).
        tick_labels: the tick texts (default ``f"{t:g}"``).
        reference_label: the legend entry of the line (default ``"slope <slope>"``).

    Returns:
        The Axes.

    Raises:
        ValueError: for non-positive or non-finite ticks, a slope without ``through``, a
            ``through`` point that is not two positive finite numbers, or labels of another length.

    Used in Chapters 5 and 6 and the epilogue.
    """
    import numpy as np

    from .._validate import as_float_array

    t = as_float_array("ticks", ticks)
    if t.ndim != 1 or (t <= 0).any():
        raise ValueError(f"ticks must be positive numbers, got {short_repr(ticks)}")
    labels = [f"{v:g}" for v in t] if tick_labels is None else list(tick_labels)
    if len(labels) != len(t):
        raise ValueError(f"tick_labels must have one label per tick ({len(t)}), got {len(labels)}")
    if slope is not None:
        slope = finite_real("slope", slope)
        # through=None with a slope is refused there, naming through
        x0, y0 = (float(v) for v in as_float_array("through", through))  # type: ignore[arg-type]
        if x0 <= 0 or y0 <= 0:
            raise ValueError(
                f"through must be a point with positive coordinates, got {short_repr(through)}"
            )
        xs = np.geomspace(t.min(), t.max(), 50)
        ax.plot(
            xs,
            y0 * (xs / x0) ** slope,
            color="#999999",
            lw=3,
            alpha=0.4,
            zorder=0,
            label=reference_label if reference_label is not None else f"slope ${slope:g}$",
        )
    ax.set(xscale="log", yscale="log", xlabel=xlabel, ylabel=ylabel)
    ax.set_xticks(t, labels)
    ax.xaxis.set_minor_formatter(mpl.ticker.NullFormatter())
    return ax
