"""lib.book.figures' static figures (its module _static)."""

import numpy as np
import pandas as pd
import pytest

from lib.book import figures
from lib.book.plotting import PALETTE


def _norm_stats():
    """Seed means 2.01, 1.01, 0.01 of "W_K spectral" under label flips; one level of pixel noise."""
    rows = [
        {"dataset": "d", "kind": kind, "level": level, "seed": seed,
         "W_K spectral": 2.0 - i + 0.01 * seed, "W_Q frobenius": 1.0 + 0.01 * seed}
        for kind, levels in (("label", [0.0, 0.2, 0.4]), ("input", [0.5]))
        for i, level in enumerate(levels)
        for seed in range(3)
    ]  # fmt: skip
    norms = ["W_K spectral", "W_Q frobenius"]
    return pd.DataFrame(rows).groupby(["dataset", "kind", "level"])[norms].agg(["mean", "std"])


def test_norm_figure_draws_the_given_means_and_deviations():
    norms = ["W_K spectral", "W_Q frobenius"]
    fig = figures.norm_figure(_norm_stats(), ["d"], norms, lambda kind, ds: f"{kind} on {ds}")
    axes = fig.axes
    assert len(axes) == 2 and [ax.get_xlabel() for ax in axes] == ["label on d", "input on d"]
    # one errorbar per norm and panel, at the seed means
    line = axes[0].containers[0].lines[0]
    np.testing.assert_allclose(np.asarray(line.get_xdata(), dtype=float), [0.0, 0.2, 0.4])
    np.testing.assert_allclose(np.asarray(line.get_ydata(), dtype=float), [2.01, 1.01, 0.01])
    assert line.get_color() == PALETTE["blue"] and line.get_linestyle() == "-"
    dashed = axes[0].containers[1].lines[0]
    assert dashed.get_color() == PALETTE["orange"] and dashed.get_linestyle() == "--"
    assert len(axes[1].containers) == 2
    labels = axes[0].get_legend_handles_labels()[1]
    assert labels == ["W$_K$ spectral", "W$_Q$ frobenius"]
    # a panel without runs stays empty
    fig = figures.norm_figure(_norm_stats(), ["d", "e"], norms, lambda kind, ds: ds)
    assert len(fig.axes) == 4 and not fig.axes[1].containers


def test_norm_figure_refuses_bad_input():
    stats, norms = _norm_stats(), ["W_K spectral"]
    with pytest.raises(ValueError, match=r"indexed by \(dataset, kind, level\)"):
        figures.norm_figure(stats.reset_index(), ["d"], norms, str)
    with pytest.raises(ValueError, match="lacks the columns"):
        figures.norm_figure(stats, ["d"], ["W_V frobenius"], str)
    with pytest.raises(ValueError, match="norms must be a non-empty"):
        figures.norm_figure(stats, ["d"], [], str)
    with pytest.raises(ValueError, match="datasets must be a non-empty"):
        figures.norm_figure(stats, "d", norms, str)
    with pytest.raises(ValueError, match="xlabel must be callable"):
        figures.norm_figure(stats, ["d"], norms, "noise")


def test_pipeline_figure_one_row_on_the_page_a_snake_on_phones():
    """Seven boxes: one row of seven on the page; the phone layout (the figure's
    PHONE_FIGURE) has rows of three, the second running right to left, and fits a phone's
    column with its text at 9 CSS px or more."""
    import base64
    from io import BytesIO

    from PIL import Image

    from lib.book import plotting

    boxes = [(f"box {i}", "layer" if i % 2 else "object") for i in range(7)]
    fig = figures.pipeline_figure(boxes)
    (ax,) = fig.axes
    assert len(ax.patches) == 7 and [t.get_text() for t in ax.texts[:7]] == [b[0] for b in boxes]
    assert len({round(p.get_y(), 6) for p in ax.patches}) == 1  # one row
    phone = getattr(fig, plotting.PHONE_FIGURE)
    (bx,) = phone.axes
    xs = [round(p.get_x(), 6) for p in bx.patches]
    ys = [round(p.get_y(), 6) for p in bx.patches]
    assert len(set(ys)) == 3 and xs[:3] == sorted(xs[:3]) and xs[3:6] == sorted(xs[3:6])[::-1]
    png, metadata = plotting.figure_outputs(fig)
    small = base64.b64decode(metadata["book-phone"])
    width = Image.open(BytesIO(small)).size[0]
    assert width * 9 / plotting.SMALLEST_TEXT_PX <= plotting.PHONE_COLUMN_PX
    assert png == plotting.figure_png(fig)


@pytest.mark.parametrize(
    ("boxes", "per_row", "match"),
    [
        ([("a", "layer")], 1, "boxes must hold at least two boxes, got 1"),
        ([("a", "layer"), ("b", "wire")], 1, "boxes must be"),
        ([("a", "layer"), "b"], 1, "boxes must be"),
        ([("a", "layer"), ("b", "object")], 3, "phone_per_row"),
        ([("a", "layer"), ("b", "object")], 0, "phone_per_row"),
    ],
)
def test_pipeline_figure_refuses_bad_boxes(boxes, per_row, match):
    with pytest.raises(ValueError, match=match):
        figures.pipeline_figure(boxes, per_row)
