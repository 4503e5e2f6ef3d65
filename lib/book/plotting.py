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
    "phone_png",
    "figure_outputs",
    "PHONE_COLUMN_PX",
    "PHONE_FIGURE",
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

#: Width in CSS px that a figure may take on a 390 px phone (the text column, 358 px there, less
#: a margin). A figure that could not fit it with its text at 9 CSS px or more gets a narrower
#: rendition for phones (:func:`phone_png`).
PHONE_COLUMN_PX = 340

#: The attribute of a Figure that holds its own layout for phones (:func:`figure_outputs`).
PHONE_FIGURE = "book_phone_figure"

#: Smallest size in CSS px of figure text on a phone (``_static/book.js``, the browser check).
MIN_TEXT_CSS_PX = 9

#: Path of the book's matplotlib style sheet, ``book.mplstyle`` in the ``lib`` package.
#:
#: :meta hide-value:
STYLE = str(resources.files("lib.book") / "book.mplstyle")


def use_style() -> None:
    """Apply ``lib/book/book.mplstyle`` and, inside IPython, show figures as PNG at 150 dpi.

    Also lets pandas show table cells in full (``display.max_colwidth``), since the book's tables
    hold sentences (claims) as well as numbers, and gives every DataFrame a ``text/markdown``
    form (:func:`lib.book.display.markdown_table`), which the PDF prints as a table. Safe to call
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
    formatters["image/png"].for_type(Figure, figure_outputs)
    # A DataFrame shown as it is also gets a MyST table, which the PDF prints as a table (its
    # text/plain would print as monospace text); the website keeps pandas' HTML.
    from lib.book.display import markdown_table

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
    return _png(fig, smallest_text_pt(fig))


def _png(fig: Figure, smallest: float) -> bytes:
    """``fig`` as PNG bytes whose smallest text (``smallest`` pt) is at least
    :data:`SMALLEST_TEXT_PX` image pixels high (:func:`figure_png`)."""
    import io
    import math

    buffer = io.BytesIO()
    fig.savefig(
        buffer,
        format="png",
        dpi=_dpi(smallest),
        bbox_inches="tight",
        metadata={"Book-Smallest-Text-Pt": "none" if math.isnan(smallest) else f"{smallest:g}"},
    )
    return buffer.getvalue()


def _dpi(smallest: float) -> int:
    """The resolution :func:`figure_png` renders a figure whose smallest text is ``smallest``
    pt at: :data:`PNG_DPI`, or finer so that the text is :data:`SMALLEST_TEXT_PX` pixels high."""
    import math

    if not math.isnan(smallest) and smallest / 72 * PNG_DPI < SMALLEST_TEXT_PX:
        return math.ceil(SMALLEST_TEXT_PX * 72 / smallest)
    return PNG_DPI


def _png_width(png: bytes) -> int:
    """The width in pixels of a PNG file (its header's IHDR chunk)."""
    return int.from_bytes(png[16:20], "big")


def phone_png(fig: Figure) -> bytes | None:
    """A rendition of ``fig`` for phones, or ``None`` when the figure already fits one.

    A page shows a figure no narrower than ``9 / SMALLEST_TEXT_PX`` of its pixel width on a
    phone (``_static/book.js``), so that its smallest text stays at 9 CSS px. A full-width figure
    is then wider than a phone's column and would scroll sideways.

    This renders the same figure again (:func:`figure_png`: same fonts, same resolution rule) at
    a narrower width in inches, the height unchanged, until its PNG fits
    :data:`PHONE_COLUMN_PX` at that scale; constrained layout lays the axes out again for the
    narrower canvas, and a legend of more than two columns gets two, then one.

    A layout is kept only when it lays no more labels on each other
    than the figure has (axis labels, titles, annotations and legends against each other and
    against the other panels' tick labels). When the panels cannot be that narrow side by side,
    a grid of panels is drawn as one column, row by row (each panel 0.8 of its height). The
    figure's size, legends and panel positions are restored.

    Args:
        fig: a :class:`matplotlib.figure.Figure`.

    Returns:
        The phone rendition's PNG bytes, whose pixel width times ``9 / SMALLEST_TEXT_PX`` is at
        most :data:`PHONE_COLUMN_PX`; or ``None`` when :func:`figure_png` already fits, or when
        no layout tried fits without collapsing (matplotlib warns) or laying labels on each
        other; the page then lets the full-width figure scroll sideways in its box.

    Raises:
        ValueError: if ``fig`` is not a matplotlib Figure.

    Used through :func:`figure_outputs` for every figure of every chapter; the book's Sphinx
    extension (``_ext/book_sphinx/phone.py``) serves it to narrow screens.
    """
    smallest = smallest_text_pt(fig)
    return _phone(fig, smallest, _png(fig, smallest))


def _phone(fig: Figure, smallest: float, png: bytes) -> bytes | None:
    """:func:`phone_png` given the figure's smallest text (pt) and its :func:`figure_png`."""
    from matplotlib.legend import Legend

    target = PHONE_COLUMN_PX * SMALLEST_TEXT_PX / MIN_TEXT_CSS_PX  # PNG pixels
    if _png_width(png) <= target:
        return None
    width_in, height_in = (float(v) for v in fig.get_size_inches())
    start = width_in * target / _png_width(png)  # the narrowing's first try, in inches
    drawn: list[Any] = fig.findobj(Legend)  # their column boxes are matplotlib's own
    legends = [(g, list(g._legend_handle_box.get_children())) for g in drawn]
    legends = [(g, columns) for g, columns in legends if len(columns) > 1]
    specs = [(ax, ax.get_subplotspec()) for ax in fig.axes]
    crowded = _collisions(fig)  # overlapping labels the figure itself has
    try:
        # a legend of many columns is as wide as the figure: two columns, then one; then the
        # panels one above the other, each 0.8 of its height, with two columns, then one
        phone, grid = None, None
        for stack, ncols in ((False, 2), (False, 1), (True, 2), (True, 1)):
            if stack and grid is None:
                grid = _stack(fig)
                if grid is None:
                    break
            if ncols == 1 and not legends:
                continue
            for legend, _ in legends:
                _legend_columns(legend, ncols)
            height = height_in * grid[1] * 0.8 if stack and grid else height_in
            phone = _narrowed(fig, smallest, target, start, height)
            if phone is not None and _collisions(fig) > crowded:
                phone = None  # labels that the narrower layout laid on each other
            if phone is not None:
                break
        return phone
    finally:
        fig.set_size_inches(width_in, height_in)
        for legend, columns in legends:
            legend._legend_handle_box._children = columns
        for ax, spec in specs:
            if spec is not None:
                ax.set_subplotspec(spec)


def _collisions(fig: Figure) -> int:
    """How many pairs of the figure's labels overlap or come within 2 pixels, as laid out at its
    present size: axis labels, titles, annotations, figure texts and legends (each legend as one
    box) against each other; legends against every tick label, and axis labels, titles and
    annotations against the tick labels of the other panels."""
    from matplotlib.legend import Legend
    from matplotlib.text import Text

    fig.draw_without_rendering()
    legends: list[Any] = fig.findobj(Legend)
    inside = {id(t) for g in legends for t in g.findobj(Text)}
    boxes = [g.get_window_extent() for g in legends]
    owners: list[Any] = ["legend"] * len(boxes)  # a legend may cover no tick label at all
    ticks = []
    for ax in fig.axes:
        texts = [ax.xaxis.label, ax.yaxis.label, ax.title, *ax.texts]
        for t in texts:
            if id(t) not in inside and _shown(t):
                boxes.append(t.get_window_extent())
                owners.append(ax)
        for axis, (lo, hi) in ((ax.xaxis, ax.get_xlim()), (ax.yaxis, ax.get_ylim())):
            low, high = min(lo, hi), max(lo, hi)
            for tick in axis.get_major_ticks():
                if low <= tick.get_loc() <= high and _shown(tick.label1):
                    ticks.append((tick.label1.get_window_extent(), ax))
    loose: list[Any] = [*fig.texts, getattr(fig, "_suptitle", None)]
    for text in loose:
        if text is not None and _shown(text):
            boxes.append(text.get_window_extent())
            owners.append(None)
    near = [b.padded(1) for b in boxes]  # labels closer than 2 pixels run into each other
    count = sum(
        near[i].overlaps(near[j]) for i in range(len(boxes)) for j in range(i + 1, len(boxes))
    )
    count += sum(
        box.overlaps(near[i])
        for box, ax in ticks
        for i in range(len(boxes))
        if owners[i] is not ax and owners[i] is not None
    )
    return count


def _legend_columns(legend: Any, ncols: int) -> None:
    """Lay a drawn legend's entries out in ``ncols`` columns, in their order.

    matplotlib builds a legend's columns when the legend is made (``Legend._init_legend_box``,
    matplotlib 3.11) and ``Legend.set_ncols`` only records the number, so this packs the entries
    it built into new columns as that function does; :func:`_phone` puts the old ones back.
    """
    import numpy as np
    from matplotlib.offsetbox import VPacker

    box = legend._legend_handle_box
    entries = [entry for column in box.get_children() for entry in column.get_children()]
    old = box.get_children()[0]
    box._children = [
        VPacker(pad=0, sep=old.sep, align=old.align, children=[entries[i] for i in part])
        for part in np.array_split(np.arange(len(entries)), ncols)
        if len(part)
    ]


def _narrowed(
    fig: Figure, smallest: float, target: float, width_in: float, height_in: float
) -> bytes | None:
    """``fig`` drawn ``height_in`` inches high and narrow enough for its PNG to be at most
    ``target`` pixels wide (the first try ``width_in`` inches wide), or ``None`` when it cannot
    be: constrained layout gives up (the axes would collapse), or a part of fixed width keeps
    the PNG wider."""
    import warnings

    dpi = _dpi(smallest)
    pad = 2 * float(mpl.rcParams["savefig.pad_inches"])
    inches = width_in
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(8):
            fig.set_size_inches(inches, height_in)
            fig.draw_without_rendering()  # lays the figure out, without rasterizing it
            if caught:
                return None
            width = (fig.get_tightbbox().width + pad) * dpi  # what savefig's tight box gives
            if width <= 0.995 * target:
                png = _png(fig, smallest)  # one render, at the width found
                if caught:
                    return None
                if _png_width(png) <= target:
                    return png
                width = _png_width(png)
            inches *= 0.98 * target / width
    return None


def _stack(fig: Figure) -> tuple[int, int] | None:
    """Put a figure's grid of panels in one column, row by row (a twin axes stays with its
    panel); the grid's ``(nrows, ncols)``, or ``None`` when the panels are not single cells of
    one grid of two columns or more."""
    panels = [(ax, spec) for ax in fig.axes if (spec := ax.get_subplotspec()) is not None]
    grids = {id(spec.get_gridspec()) for _, spec in panels}
    if len(panels) < 2 or len(grids) != 1:
        return None
    nrows, ncols = panels[0][1].get_gridspec().get_geometry()
    cells = [spec.get_topmost_subplotspec() for _, spec in panels]
    if ncols < 2 or any(c.num1 != c.num2 for c in cells):
        return None
    column = fig.add_gridspec(nrows * ncols, 1)
    for (ax, _), cell in zip(panels, cells, strict=True):
        ax.set_subplotspec(column[cell.num1, 0])
    return nrows, ncols


def figure_outputs(fig: Figure) -> bytes | tuple[bytes, dict[str, str]]:
    """IPython's ``image/png`` form of a figure: :func:`figure_png`, with :func:`phone_png`'s
    rendition (base64) as the output's metadata ``book-phone`` when there is one.

    Args:
        fig: a :class:`matplotlib.figure.Figure`.

    Returns:
        The PNG bytes, or ``(png bytes, {"book-phone": base64 text})``, the form of a formatter
        that returns metadata.

    Raises:
        ValueError: if ``fig`` is not a matplotlib Figure.

    A figure whose layout cannot be narrowed (a diagram of boxes in a row) may carry its own
    layout for phones, a second Figure, as its attribute :data:`PHONE_FIGURE`; that one is
    rendered instead of :func:`phone_png`'s.

    Registered by :func:`use_style`; read by the book's Sphinx extension
    (``_ext/book_sphinx/phone.py``).
    """
    import base64

    smallest = smallest_text_pt(fig)
    png = _png(fig, smallest)
    own = getattr(fig, PHONE_FIGURE, None)
    if isinstance(own, Figure):  # the figure's own layout for phones
        phone: bytes | None = _png(own, smallest_text_pt(own))
    else:
        phone = _phone(fig, smallest, png)
    if phone is None:
        return png
    return png, {"book-phone": base64.b64encode(phone).decode("ascii")}


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
