"""lib.book.figures' slider figures of Chapters 1-4 (its module _chapters_1_4)."""

import numpy as np
import pytest
import torch
from test_figures_shared import close, history

from lib.book import figures, interactive
from lib.book.plotting import PALETTE


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
