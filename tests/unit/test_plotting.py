"""lib.book.plotting: style, palette, figures; figures render as PNG in IPython, any backend."""

import matplotlib as mpl
import pytest
from matplotlib.colors import to_rgb
from matplotlib.figure import Figure

from lib.book import plotting


def test_style_and_palette():
    plotting.use_style()
    assert mpl.rcParams["figure.facecolor"] == "white"
    assert mpl.rcParams["savefig.facecolor"] == "white"
    cycle = [to_rgb(c) for c in mpl.rcParams["axes.prop_cycle"].by_key()["color"]]
    assert cycle[0] == to_rgb(plotting.PALETTE["blue"])
    assert len(set(plotting.PALETTE.values())) == len(plotting.PALETTE)


def test_figure_sizes_and_errors():
    fig, ax = plotting.figure("half", 0.5)
    assert isinstance(fig, Figure)
    assert tuple(fig.get_size_inches()) == pytest.approx(
        (plotting.WIDTHS["half"], plotting.WIDTHS["half"] * 0.5)
    )
    fig, axes = plotting.figure("full", ncols=2)
    assert len(axes) == 2
    with pytest.raises(ValueError, match="width must be one of"):
        plotting.figure("huge")
    with pytest.raises(ValueError, match="aspect must be >= 0.05"):
        plotting.figure("full", 0)
    with pytest.raises(ValueError, match="ncols must be >= 1"):
        plotting.figure("full", ncols=0)


def test_png_formatter_registered_under_agg(monkeypatch):
    """Under MPLBACKEND=Agg, IPython must still render a Figure as PNG after use_style()."""
    from IPython.core.interactiveshell import InteractiveShell

    mpl.use("Agg")
    shell = InteractiveShell.instance()
    plotting.use_style()
    fig, ax = plotting.figure("third")
    ax.plot([0, 1], [0, 1])
    data, _ = shell.display_formatter.format(fig)
    assert data["image/png"][:8] == b"\x89PNG\r\n\x1a\n" or data["image/png"].startswith("iVBOR")


def test_rate_axes_log_scales_ticks_and_reference_slope():
    import numpy as np

    fig, ax = plotting.figure("half")
    plotting.rate_axes(ax, [4, 8, 16], xlabel="m", ylabel="error", slope=-1, through=(1, 2.0))
    assert ax.get_xscale() == ax.get_yscale() == "log"
    assert list(ax.get_xticks()) == [4, 8, 16] and [t.get_text() for t in ax.get_xticklabels()] == [
        "4",
        "8",
        "16",
    ]
    (line,) = ax.get_lines()
    x, y = line.get_data()
    assert x[0] == 4 and x[-1] == 16
    np.testing.assert_allclose(y, 2.0 / x)  # slope -1 through (1, 2)
    assert line.get_label() == "slope $-1$" and line.get_zorder() == 0
    fig2, bx = plotting.figure("half")
    plotting.rate_axes(bx, [0.5, 0.1], xlabel="x", ylabel="y", tick_labels=["a", "b"])
    assert not bx.get_lines() and [t.get_text() for t in bx.get_xticklabels()] == ["a", "b"]
    for kwargs, match in [
        ({"ticks": [0, 1]}, "ticks must be positive"),
        ({"slope": -1}, "through"),
        ({"slope": -1, "through": (0, 1)}, "positive coordinates"),
        ({"tick_labels": ["x"]}, "one label per tick"),
    ]:
        args = {"ticks": [1, 2], "xlabel": "x", "ylabel": "y"} | kwargs
        with pytest.raises(ValueError, match=match):
            plotting.rate_axes(bx, args.pop("ticks"), **args)


def test_figure_png_keeps_the_smallest_text_legible_and_records_it():
    from io import BytesIO

    from PIL import Image

    fig, ax = plotting.figure("full", 0.4)
    ax.plot([0, 1], [0, 1], label="a line")
    ax.set_xlabel("x")
    ax.legend(fontsize=8.5)
    assert plotting.smallest_text_pt(fig) == 8.5
    png = Image.open(BytesIO(plotting.figure_png(fig)))
    assert png.text["Book-Smallest-Text-Pt"] == "8.5"
    assert round(png.info["dpi"][0]) == plotting.PNG_DPI  # 8.5 pt at 150 dpi: no change
    ax.legend(fontsize=6)  # smaller text: a finer raster keeps it 8.5 / 72 * 150 px high
    assert plotting.smallest_text_pt(fig) == 6
    png = Image.open(BytesIO(plotting.figure_png(fig)))
    assert png.text["Book-Smallest-Text-Pt"] == "6"
    dpi = png.info["dpi"][0]
    assert round(dpi) == 213  # ceil(8.5 * 150 / 6)
    assert 6 / 72 * dpi >= plotting.SMALLEST_TEXT_PX
    ax.set_xlabel("")
    ax.text(0.5, 0.5, "   ", fontsize=3)  # blank text is not text a reader sees
    assert plotting.smallest_text_pt(fig) == 6
    with pytest.raises(ValueError, match="fig must be a matplotlib Figure"):
        plotting.figure_png("not a figure")


def test_use_style_shows_figures_through_figure_png():
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    try:
        plotting.use_style()
        fig, ax = plotting.figure("half")
        ax.plot([0, 1])
        data, _ = shell.display_formatter.format(fig)
        assert set(data) == {"image/png", "text/plain"}
        assert data["image/png"] == plotting.figure_png(fig)  # bytes; IPython encodes them
    finally:
        InteractiveShell.clear_instance()


def _text_css_px(png_bytes: bytes, shown: float) -> float:
    """CSS px of the smallest text of a book PNG shown ``shown`` CSS px wide (what the browser
    check computes from the same PNG text chunk)."""
    from io import BytesIO

    from PIL import Image

    png = Image.open(BytesIO(png_bytes))
    pt = float(png.text["Book-Smallest-Text-Pt"])
    return pt / 72 * png.info["dpi"][0] * shown / png.size[0]


@pytest.mark.parametrize("legend_pt", [8.5, 6.0])
def test_phone_png_fits_a_phone_column_with_legible_text(legend_pt):
    """A full-width figure cannot show its text at 9 CSS px in a phone's column; its phone
    rendition can: at the column's width its smallest text is at least 9 CSS px, measured from
    the PNG itself. The figure keeps its size, and the desktop PNG is unchanged."""
    from io import BytesIO

    from PIL import Image

    fig, axes = plotting.figure("full", 0.42, ncols=2)
    for ax in axes:
        ax.plot([0, 1], [0, 1], label="a line")
        ax.set(xlabel="inverse temperature", ylabel="value")
    axes[0].legend(fontsize=legend_pt)
    desktop = plotting.figure_png(fig)
    column = plotting.PHONE_COLUMN_PX
    assert _text_css_px(desktop, column) < 9  # the desktop figure, fitted, is too small to read
    phone = plotting.phone_png(fig)
    assert phone is not None
    width = Image.open(BytesIO(phone)).size[0]
    # shown at the width book.js allows (its text at 9 px), the rendition fits the column
    assert width * 9 / plotting.SMALLEST_TEXT_PX <= column
    assert _text_css_px(phone, column) >= 9
    assert Image.open(BytesIO(phone)).text["Book-Smallest-Text-Pt"] == f"{legend_pt:g}"
    assert tuple(fig.get_size_inches()) == (6.8, 6.8 * 0.42)
    assert plotting.figure_png(fig) == desktop


def test_phone_png_stacks_a_row_of_panels_that_cannot_be_narrow_side_by_side():
    """Four panels side by side collapse at a phone's width: the rendition draws them one above
    the other (taller than wide), fits the column with 9 CSS px text, and leaves the figure's
    panels where they were."""
    from io import BytesIO

    from PIL import Image

    fig, axes = plotting.figure("full", 0.35, ncols=4)
    for ax in axes:
        ax.plot([0, 1], [0, 1e5], label="a line")
        ax.set(xlabel="inverse temperature", ylabel="a rather long label")
    axes[0].legend(fontsize=7)
    bx = axes[1]
    bx.plot([0, 1], [1e5, 0], label="another line")
    bx.plot([0, 1], [5e4, 5e4], label="a third line")
    legend = bx.legend(ncols=3, fontsize=7)
    specs = [ax.get_subplotspec() for ax in axes]
    desktop = plotting.figure_png(fig)
    phone = plotting.phone_png(fig)
    width, height = Image.open(BytesIO(phone)).size
    assert height > 2 * width  # four rows
    assert _text_css_px(phone, plotting.PHONE_COLUMN_PX) >= 9
    assert width * 9 / plotting.SMALLEST_TEXT_PX <= plotting.PHONE_COLUMN_PX
    assert all(ax.get_subplotspec() is spec for ax, spec in zip(axes, specs, strict=True))
    assert len(legend._legend_handle_box.get_children()) == 3  # its three columns, back
    assert plotting.figure_png(fig) == desktop


def test_phone_png_lays_a_wide_legend_out_in_fewer_columns():
    """A figure legend of four long entries in four columns is wider than a phone's column
    whatever the panels do: the rendition packs it in two columns (or one), fits, and the
    figure keeps its four."""
    from io import BytesIO

    from PIL import Image

    fig, ax = plotting.figure("full", 0.4)
    for k in range(4):
        ax.plot([0, 1], [k, k + 1], label=f"a long legend entry number {k}")
    legend = fig.legend(loc="outside lower center", ncols=4, fontsize=7)
    desktop = plotting.figure_png(fig)
    phone = plotting.phone_png(fig)
    assert phone is not None
    width = Image.open(BytesIO(phone)).size[0]
    assert width * 9 / plotting.SMALLEST_TEXT_PX <= plotting.PHONE_COLUMN_PX
    assert _text_css_px(phone, plotting.PHONE_COLUMN_PX) >= 9
    assert len(legend._legend_handle_box.get_children()) == 4
    assert plotting.figure_png(fig) == desktop


def test_phone_png_does_not_lay_labels_on_each_other():
    """Two panels whose long axis labels would run into each other side by side at a phone's
    width (they fit the narrower canvas, but overlap) are drawn one above the other instead;
    the desktop figure has no overlapping labels, and neither has the rendition."""
    from io import BytesIO

    from PIL import Image

    fig, axes = plotting.figure("full", 0.62, nrows=2, ncols=2, sharex="row")
    names = ["label-flip ratio of the MNIST runs", "label-flip ratio of Fashion-MNIST"] * 2
    for ax, name in zip(axes.ravel(), names, strict=True):
        ax.plot([0, 0.5], [0, 1])
        ax.set_xlabel(name)
    assert plotting._collisions(fig) == 0
    phone = plotting.phone_png(fig)
    width, height = Image.open(BytesIO(phone)).size
    assert height > 1.5 * width  # four panels in one column (side by side: 0.62 of it)
    assert plotting._collisions(fig) == 0  # restored
    axes[0, 0].annotate("here", (0.1, 0.5))
    axes[0, 0].annotate("there", (0.1, 0.5))
    assert plotting._collisions(fig) == 1


def test_phone_png_is_none_for_a_figure_that_fits():
    fig, ax = plotting.figure("half", 0.8)
    ax.plot([0, 1])
    assert plotting.phone_png(fig) is None
    assert plotting.figure_outputs(fig) == plotting.figure_png(fig)
    with pytest.raises(ValueError, match="fig must be a matplotlib Figure"):
        plotting.phone_png("not a figure")


def test_figure_outputs_carries_the_phone_rendition_as_metadata():
    import base64

    from IPython.core.interactiveshell import InteractiveShell

    fig, ax = plotting.figure("full", 0.4)
    ax.plot([0, 1])
    ax.set_xlabel("x")
    png, metadata = plotting.figure_outputs(fig)
    assert png == plotting.figure_png(fig)
    assert base64.b64decode(metadata["book-phone"]) == plotting.phone_png(fig)
    shell = InteractiveShell.instance()
    try:
        plotting.use_style()
        data, md = shell.display_formatter.format(fig)
        assert data["image/png"] == png
        assert md["image/png"]["book-phone"] == metadata["book-phone"]
    finally:
        InteractiveShell.clear_instance()


def test_book_js_uses_the_smallest_text_size_of_lib_plotting():
    """_static/book.js sizes figures on phones from the constant lib.book.plotting renders with."""
    import re
    from pathlib import Path

    script = (Path(__file__).resolve().parents[2] / "_static" / "book.js").read_text()
    pt, dpi = re.search(r"const SMALLEST_TEXT_PX = ([\d.]+) / 72 \* (\d+);", script).groups()
    assert float(pt) / 72 * int(dpi) == plotting.SMALLEST_TEXT_PX
    assert int(dpi) == plotting.PNG_DPI
