"""lib.book.figures' slider figures of Chapters 5-7 (its module _chapters_5_7)."""

import numpy as np
import pytest
from test_figures_shared import close

from lib.book import figures


@pytest.fixture
def partition_args():
    betas = np.array([1.0, 10.0])
    pixel_axis = np.array([-1.0, 0.0, 1.0])
    errors = [np.full((3, 3), 0.123), np.arange(9.0).reshape(3, 3) / 10]
    cut_x = np.linspace(-1.5, 1.5, 4)
    weights = [np.full((2, 4), 0.5), np.array([[1.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 1.0]])]
    centres = np.array([[-0.5, 0.25], [0.5, -0.25]])
    return betas, pixel_axis, errors, cut_x, weights, centres, ["#0072b2", "#e69f00"]


def test_partition_slider_heatmap_cut_centres_and_weights(partition_args):
    fig = figures.partition_slider(*partition_args, default=1)
    assert len(fig.frames) == 2 and all(len(f) == 1 + 1 + 2 + 2 for f in fig.frames)
    heat, cut, c1, c2, w1, w2 = fig.frames[0]
    assert heat["type"] == "heatmap" and heat["z"] == [[0.12] * 3] * 3  # rounded to 2 decimals
    assert heat["zmin"] == 0 and heat["zmax"] == 1.0  # 2 - 2/N for N = 2 cells
    assert cut["x"] == [-1.5, 1.5] and cut["y"] == [0, 0]
    assert (c1["x"], c1["y"], c2["x"], c2["y"]) == ([-0.5], [0.25], [0.5], [-0.25])
    assert c1["marker"]["color"] == "#0072b2" and w2["line"]["color"] == "#e69f00"
    assert w1["name"] == "σ1" and w1["y"] == [0.5] * 4 and w1["xaxis"] == "x2"
    assert fig.frames[1][4]["y"] == [1.0, 1.0, 0.0, 0.0]
    assert fig.layout["xaxis"]["range"] == [-1.5, 1.5] and fig.layout["showlegend"] is False
    assert fig.labels == ["1", "10"] and fig.default == 1


def test_partition_slider_refuses_bad_shapes(partition_args):
    betas, pixel_axis, errors, cut_x, weights, centres, colours = partition_args
    with pytest.raises(ValueError, match=r"centres must have shape \(N, 2\)"):
        figures.partition_slider(
            betas, pixel_axis, errors, cut_x, weights, centres[:, :1], colours, default=0
        )
    with pytest.raises(ValueError, match=r"cut_weights\[1\] must have shape \(2, 4\)"):
        figures.partition_slider(
            betas,
            pixel_axis,
            errors,
            cut_x,
            [weights[0], weights[1][:, :3]],
            centres,
            colours,
            default=0,
        )
    with pytest.raises(ValueError, match=r"pixel_errors\[0\] must have shape \(3, 3\)"):
        figures.partition_slider(
            betas,
            pixel_axis,
            [np.zeros((2, 3)), errors[1]],
            cut_x,
            weights,
            centres,
            colours,
            default=0,
        )
    with pytest.raises(ValueError, match="colours must hold one colour per centre"):
        figures.partition_slider(
            betas, pixel_axis, errors, cut_x, weights, centres, colours[:1], default=0
        )


@pytest.fixture
def length_args():
    line = np.linspace(0, 1, 5)
    target = np.sin(np.pi * line)
    sizes = np.arange(1, 4)
    outputs = [np.full(5, 0.5 * k) for k in sizes]
    stored = [((np.arange(k) + 0.5) / k, np.sin(np.pi * (np.arange(k) + 0.5) / k)) for k in sizes]
    sups = [0.5, 0.25, 0.125]
    return line, target, sizes, outputs, stored, sups


def test_context_length_slider_lookup_stored_values_and_errors(length_args):
    line, target, sizes, outputs, stored, sups = length_args
    fig = figures.context_length_slider(*length_args, default=1, summary="it falls")
    assert [t["name"] for t in fig.frames[0]] == [
        "target f",
        "cross-attention",
        "context values f(cᵢ)",
        "all lengths",
        "lengths so far",
        "current N",
    ]
    target_trace, out, values, every, so_far, now = fig.frames[1]
    close(target_trace["y"], target)
    close(out["y"], outputs[1])
    assert values["x"] == [0.25, 0.75] and values["y"] == [pytest.approx(np.sqrt(0.5))] * 2
    assert every["x"] == [1, 2, 3] and every["y"] == sups
    assert so_far["x"] == [1, 2] and so_far["y"] == [0.5, 0.25]
    assert now["x"] == [2] and now["y"] == [0.25] and now["xaxis"] == "x2"
    assert fig.layout["xaxis2"]["tickvals"] == [1, 2, 5, 10, 20, 3]
    assert fig.description.endswith("the steps narrow; it falls.")


def test_context_length_slider_refuses_bad_input(length_args):
    line, target, sizes, outputs, stored, sups = length_args
    with pytest.raises(ValueError, match=r"stored\[2\] values must have 3 entries"):
        figures.context_length_slider(
            line,
            target,
            sizes,
            outputs,
            [*stored[:2], (stored[2][0], stored[2][1][:2])],
            sups,
            default=0,
            summary="s",
        )
    with pytest.raises(ValueError, match=r"outputs\[0\] must have 5 entries"):
        figures.context_length_slider(
            line, target, sizes, [np.zeros(4), *outputs[1:]], stored, sups, default=0, summary="s"
        )
    with pytest.raises(ValueError, match="sups must have 3 entries"):
        figures.context_length_slider(
            line, target, sizes, outputs, stored, sups[:2], default=0, summary="s"
        )
    with pytest.raises(ValueError, match="line must be a non-empty 1-D array"):
        figures.context_length_slider(
            line[:, None], target, sizes, outputs, stored, sups, default=0, summary="s"
        )


def test_capacity_slider_seeds_median_and_the_counts_width():
    widths, sizes = [2, 4, 8], [8, 16]
    cube = np.array([[[0.5, 1.0], [1.0, 1.0], [1.0, 1.0]], [[0.25, 0.5], [0.5, 1.0], [1.0, 1.0]]])
    fig = figures.capacity_slider(
        widths, sizes, {"head": cube}, {"head": [3.0, 6.0]}, default=1, summary="it moves"
    )
    assert fig.labels == ["8", "16"] and fig.description.endswith("moves right; it moves.")
    seeds, median, count = fig.frames[1]
    assert seeds["x"] == [2, 2, 4, 4, 8, 8] and seeds["y"] == [0.25, 0.5, 0.5, 1.0, 1.0, 1.0]
    close(median["y"], [0.375, 0.75, 1.0])
    assert count["x"] == [6.0, 6.0] and count["y"] == [0, 1]
    with pytest.raises(ValueError, match=r"shares\['head'\] must hold shares in \[0, 1\]"):
        figures.capacity_slider(widths, sizes, {"head": cube * 2}, {"head": [3, 6]},
                                default=0, summary="s")  # fmt: skip
    with pytest.raises(ValueError, match="reach must name the heads"):
        figures.capacity_slider(widths, sizes, {"head": cube}, {"other": [3, 6]},
                                default=0, summary="s")  # fmt: skip
    with pytest.raises(ValueError, match=r"reach\['head'\] must have 2 entries"):
        figures.capacity_slider(widths, sizes, {"head": cube}, {"head": [3]},
                                default=0, summary="s")  # fmt: skip


def test_lookup_slider_colours_matched_cells_by_parity_and_the_others_apart():
    """m = 2 on 4 x 4 pixels: a pixel whose learned cell is matched to its own grid cell gets
    the parity of that cell, any other pixel 2; the grid's one inner line each way; the keys."""
    rows, cols = np.indices((4, 4))
    own = (cols // 2) * 2 + rows // 2
    matched = own.copy()
    matched[0, 0] = 3  # one pixel's learned cell lies mostly in the far grid cell
    keys = [[0.25, 0.25], [0.25, 0.75], [0.75, 0.25], [0.8, 0.8]]
    fig = figures.lookup_slider([2], [0.125, 0.375, 0.625, 0.875], [own], [matched], [keys],
                                default=0, summary="it shows")  # fmt: skip
    heat, grid, dots = fig.frames[0]
    z = np.asarray(heat["z"])
    assert z[0, 0] == 2 and z[0, 2] == 1 and z[2, 2] == 0 and (z == 2).sum() == 1
    assert grid["x"] == [0.5, 0.5, None, 0, 1, None] and grid["y"] == [0, 1, None, 0.5, 0.5, None]
    assert dots["x"] == [0.25, 0.25, 0.75, 0.8] and fig.description.endswith("it shows.")
    with pytest.raises(ValueError, match=r"matched\[0\] must hold cells in \[0, 4\)"):
        figures.lookup_slider([2], [0.1, 0.3, 0.6, 0.9], [own], [matched + 4], [keys],
                              default=0, summary="s")  # fmt: skip
    with pytest.raises(ValueError, match="sides must be positive integers"):
        figures.lookup_slider([2.5], [0.1, 0.3, 0.6, 0.9], [own], [matched], [keys],
                              default=0, summary="s")  # fmt: skip
    with pytest.raises(ValueError, match="summary"):
        figures.lookup_slider([2], [0.1, 0.3, 0.6, 0.9], [own], [matched], [keys],
                              default=0, summary=" ")  # fmt: skip
