"""lib.book.figures: the chapters' slider figures hold the data they are given, trace by trace."""

import numpy as np
import pandas as pd
import pytest
import torch

from lib.book import figures, interactive
from lib.book.plotting import PALETTE


def close(a, b):
    """The frames keep 6 significant digits (lib.book.interactive)."""
    np.testing.assert_allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float), rtol=1e-5)


# -- Chapter 1 --------------------------------------------------------------------------------


@pytest.fixture
def boltzmann_args():
    a = np.array([-2.0, -1.0, 0.5, 1.0, 2.5])
    positions = np.array([-1.0, 0.0, 1.0])
    weights = [torch.softmax(torch.as_tensor(b * a), dim=0).numpy() for b in positions]
    values = [float(w @ a) for w in weights]
    grid = np.linspace(-6, 6, 5)
    curve = [float(torch.softmax(torch.as_tensor(b * a), 0).numpy() @ a) for b in grid]
    return a, grid, curve, positions, weights, values


def test_boltzmann_slider_one_bar_per_entry_the_curve_and_the_current_beta(boltzmann_args):
    a, grid, curve, positions, weights, values = boltzmann_args
    fig = figures.boltzmann_slider(a, grid, curve, positions, weights, values, default=2)
    assert isinstance(fig, interactive.SliderFigure)
    assert fig.name == "boltzmann-beta" and fig.default == 2 and fig.labels == ["-1", "0", "1"]
    assert len(fig.frames) == 3 and all(len(f) == 6 for f in fig.frames)
    bars, line, now, *marks = fig.frames[2]
    assert bars["type"] == "bar" and bars["x"] == [f"a{i + 1} = {v:g}" for i, v in enumerate(a)]
    close(bars["y"], weights[2])
    assert sum(bars["y"]) == pytest.approx(1.0, abs=1e-5)
    close(line["x"], grid)
    close(line["y"], curve)
    assert now["x"] == [1.0] and now["y"] == [pytest.approx(values[2], rel=1e-5)]
    assert [m["name"] for m in marks] == ["min", "mean", "max"]
    assert [m["y"][0] for m in marks] == [-2.0, 0.2, 2.5] and marks[0]["x"] == [-6.0, 6.0]
    assert {t.get("xaxis") for t in (line, now, *marks)} == {"x2"} and "xaxis" not in bars


def test_boltzmann_slider_refuses_weights_and_curves_of_the_wrong_length(boltzmann_args):
    a, grid, curve, positions, weights, values = boltzmann_args
    with pytest.raises(ValueError, match="weights must have one entry per slider position"):
        figures.boltzmann_slider(a, grid, curve, positions, weights[:2], values, default=0)
    with pytest.raises(ValueError, match=r"weights\[1\] must have 5 entries"):
        figures.boltzmann_slider(
            a, grid, curve, positions, [weights[0], weights[1][:4], weights[2]], values, default=0
        )
    with pytest.raises(ValueError, match="curve must have 5 entries"):
        figures.boltzmann_slider(a, grid, curve[:3], positions, weights, values, default=0)
    with pytest.raises(ValueError, match="default"):
        figures.boltzmann_slider(a, grid, curve, positions, weights, values, default=3)


# -- Chapter 2 --------------------------------------------------------------------------------


@pytest.fixture
def gamma_args():
    gammas = np.array([0.1, 1.0])
    dot_x = np.array([0.8, 1.2, 1.8, 2.2])
    ids = [np.array([0.1, 0.2, -0.3, 0.4]), np.array([0.5, 0.6, 0.7, 0.8])]
    names = ["{1, 2}", "{1, 3}", "{1, 2}", "{2, 3}"]
    hard = np.array([1.0, 2.0, 0.0, 1.0])
    gap = (np.array([0.1, 1.0, 10.0]), np.array([-1.0, -2.0, -5.0]))
    selected = [(0.1, -1.0), (1.0, -np.inf)]  # an exact collision at gamma = 1
    return gammas, ids, dot_x, names, hard, gap, 3.0, selected


def test_contextual_gamma_slider_groups_dots_by_token_and_clips_a_collision(gamma_args):
    fig = figures.contextual_gamma_slider(*gamma_args, tokens=2, default=1)
    gammas, ids, dot_x, names, hard, gap, _, _ = gamma_args
    assert len(fig.frames) == 2 and all(len(f) == 2 + 3 + 1 for f in fig.frames)
    first, second, dashes, curve, theorem, mark = fig.frames[0]
    assert first["x"] == [0.8, 1.2] and first["y"] == [0.1, 0.2] and first["text"] == names[:2]
    assert second["marker"]["color"] == PALETTE["orange"] and second["y"] == [-0.3, 0.4]
    assert dashes["x"] == [0.75, 0.85, None, 1.15, 1.25, None, 1.75, 1.85, None, 2.15, 2.25, None]
    assert dashes["y"][::3] == [1.0, 2.0, 0.0, 1.0]
    assert curve["y"] == [-1.0, -2.0, -5.0] and theorem["x"] == [3.0, 3.0]
    assert theorem["y"] == [-5.0, -1.0] and theorem["line"]["dash"] == "dash"
    assert mark["x"] == [0.1] and mark["y"] == [-1.0]
    assert fig.frames[1][-1]["y"] == [-5.0]  # -inf is drawn at the curve's lowest point
    y_range = fig.layout["yaxis"]["range"]
    pad = 0.08 * (2.0 - -0.3)
    assert y_range == [pytest.approx(-0.3 - pad), pytest.approx(2.0 + pad)]
    assert fig.layout["xaxis"]["tickvals"] == [1, 2] and fig.labels == ["0.1", "1"]


def test_contextual_gamma_slider_refuses_bad_groups_and_lengths(gamma_args):
    with pytest.raises(ValueError, match="tokens must be a positive divisor of 4"):
        figures.contextual_gamma_slider(*gamma_args, tokens=3, default=0)
    args = list(gamma_args)
    args[1] = [gamma_args[1][0], gamma_args[1][1][:3]]
    with pytest.raises(ValueError, match=r"ids\[1\] must have 4 entries"):
        figures.contextual_gamma_slider(*args, tokens=2, default=0)
    args = list(gamma_args)
    args[7] = [(0.1, -1.0)]
    with pytest.raises(ValueError, match="selected must have one entry per slider position"):
        figures.contextual_gamma_slider(*args, tokens=2, default=0)


# -- Chapter 3 --------------------------------------------------------------------------------


def history(accuracies):
    return pd.DataFrame({"epoch": range(1, len(accuracies) + 1), "train_acc": accuracies})


@pytest.fixture
def paper_runs():
    return {
        "rank 1, 1 layer": {0: history([0.5, 0.75, 0.875]), 1: history([0.5, 0.625])},
        "full rank, 1 layer": {0: history([0.75, 1.0, 1.0])},
    }


def test_paper_scale_slider_medians_floors_and_bars(paper_runs):
    colours = [PALETTE["blue"], PALETTE["green"]]
    fig = figures.paper_scale_slider(
        paper_runs, colours, context_free=0.5, reported=0.9872, permutation=0.25
    )
    assert list(fig.values) == [1, 2, 3] and fig.labels == ["1", "2", "3"] and fig.default == 2
    frame = fig.frames[2]
    assert len(frame) == 2 + 2 + 3 + 1
    rank1, full = frame[:2]
    assert rank1["x"] == [1, 2, 3] and rank1["y"] == [0.5, 0.3125, 0.125]
    assert full["line"] == {"color": PALETTE["green"], "dash": "dashdot"}
    assert frame[2]["x"] == [3] and frame[2]["y"] == [pytest.approx(1 - 0.75)]  # seed 1 ended
    assert [t["name"] for t in frame[4:7]] == ["context-free", "reported 0.9872", "permutation"]
    assert [t["y"][0] for t in frame[4:7]] == [0.5, pytest.approx(0.0128), 0.75]
    assert frame[4]["x"] == [1, 3]
    bars = frame[7]
    assert (
        bars["type"] == "bar" and bars["x"] == ["1 layer", "full rank"] and bars["y"] == [0.75, 1.0]
    )
    assert bars["marker"]["color"] == colours
    assert fig.layout["yaxis2"]["range"] == [0.49, 1.0]


def test_paper_scale_slider_refuses_bad_histories_and_colours(paper_runs):
    kwargs = {"context_free": 0.5, "reported": 0.9872, "permutation": 0.25}
    with pytest.raises(ValueError, match="colours must hold one colour per model"):
        figures.paper_scale_slider(paper_runs, ["#000000"], **kwargs)
    paper_runs["full rank, 1 layer"][0] = paper_runs["full rank, 1 layer"][0].drop(
        columns="train_acc"
    )
    with pytest.raises(ValueError, match=r"histories\['full rank, 1 layer'\]\[0\]"):
        figures.paper_scale_slider(paper_runs, ["#000000", "#ffffff"], **kwargs)
    with pytest.raises(ValueError, match="histories must be a non-empty mapping"):
        figures.paper_scale_slider({}, [], **kwargs)


# -- Chapter 4 --------------------------------------------------------------------------------


@pytest.fixture
def line_runs():
    x = np.linspace(0, 1, 5)
    runs = []
    for m in (2, 3):
        model = x * m / 4
        err = np.abs(model - x / 2)
        runs.append((x, model, err, x > 0.7, np.isclose(x, 0.25)))
    return np.linspace(0, 1, 81), np.linspace(0, 1, 81) / 2, [2, 3], runs


def test_approx_line_slider_target_output_error_and_bad_sets(line_runs):
    line, target, cells, runs = line_runs
    fig = figures.approx_line_slider(line, target, cells, runs, default=1, summary="it falls")
    assert fig.labels == ["2", "3"] and fig.description.endswith("the steps narrow; it falls.")
    target_trace, model, err, dup, ramp = fig.frames[1]
    assert target_trace["x"] == [0.0, 0.5, 1.0] and target_trace["y"] == [0.0, 0.25, 0.5]
    close(model["y"], runs[1][1])
    close(err["y"], runs[1][2])
    assert dup["x"] == [0.25] and ramp["x"] == [0.75, 1.0]
    assert dup["xaxis"] == ramp["xaxis"] == err["xaxis"] == "x2" and "xaxis" not in model
    assert fig.layout["yaxis"]["range"] == [0, pytest.approx(1.05 * 0.75)]  # largest output
    assert fig.layout["yaxis2"]["range"] == [0, pytest.approx(1.05 * 0.25)]  # largest error


def test_approx_line_slider_refuses_bad_masks_and_lengths(line_runs):
    line, target, cells, runs = line_runs
    x, model, err, ramp, dup = runs[0]
    with pytest.raises(ValueError, match=r"runs\[0\] ramp must be a boolean mask"):
        figures.approx_line_slider(
            line, target, cells, [(x, model, err, ramp * 1.0, dup), runs[1]], default=0, summary="s"
        )
    with pytest.raises(ValueError, match="runs must have one entry per slider position"):
        figures.approx_line_slider(line, target, cells, runs[:1], default=0, summary="s")
    with pytest.raises(ValueError, match="target must have 81 entries"):
        figures.approx_line_slider(line, target[:5], cells, runs, default=0, summary="s")
    with pytest.raises(ValueError, match="summary"):
        figures.approx_line_slider(line, target, cells, runs, default=0, summary=" ")


# -- Chapter 5 --------------------------------------------------------------------------------


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


# -- Chapter 6 --------------------------------------------------------------------------------


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


# -- Chapter 7 --------------------------------------------------------------------------------


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
