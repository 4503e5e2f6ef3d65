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


def test_book_js_uses_the_smallest_text_size_of_lib_plotting():
    """_static/book.js sizes figures on phones from the constant lib.book.plotting renders with."""
    import re
    from pathlib import Path

    script = (Path(__file__).resolve().parents[2] / "_static" / "book.js").read_text()
    pt, dpi = re.search(r"const SMALLEST_TEXT_PX = ([\d.]+) / 72 \* (\d+);", script).groups()
    assert float(pt) / 72 * int(dpi) == plotting.SMALLEST_TEXT_PX
    assert int(dpi) == plotting.PNG_DPI
