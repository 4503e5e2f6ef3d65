"""The website's slider figures of Chapters 1-7 and Chapter 5's noise figure, built from data the
chapters compute.

Each function takes the numbers a chapter has computed with the modules of ``lib`` (nothing
here computes mathematics) and returns the chapter's :class:`~lib.book.interactive.SliderFigure`:
one list of plotly traces per slider position, the axes, the slider's label and the figure's
text description. The chapters keep the construction and its check in view; the trace
dictionaries, which only say how to draw, live here.

* :func:`boltzmann_slider` — Chapter 1, softmax weights and the Boltzmann operator against β;
* :func:`contextual_gamma_slider` — Chapter 2, context ids against the inverse temperature γ;
* :func:`paper_scale_slider` — Chapter 3, the stored paper-scale CoNLL runs epoch by epoch;
* :func:`approx_line_slider` — Chapter 4, K&S's approximator along a line, against the grid;
* :func:`partition_slider` — Chapter 5, a max-affine partition's indicator error against β;
* :func:`context_length_slider` — Chapter 6, the cross-attention lookup against its context
  length;
* :func:`capacity_slider` — Chapter 7, the share of labels training memorizes against the
  feed-forward width, for each number of sequences;
* :func:`lookup_slider` — Chapter 7, the partition a trained lookup layer finds against the
  construction's grid, for each grid side.

Two static figures live here too, for the same reason (matplotlib Figures): :func:`norm_figure`
— Chapter 5, the attention norms' seed means and spreads against the noise level; and
:func:`pipeline_figure` — Chapter 4, the approximator's stages as a row of boxes (on phones, a
snake of rows).

Every function raises :class:`ValueError`, naming the argument, for input of the wrong shape or
length (and :class:`~lib.book.interactive.SliderFigure` for a bad ``default``).

Used by the interactive figure of each of Chapters 1-7 and by Chapter 5's noise figures.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from .._validate import real_array
from .interactive import SliderFigure, stacked_layout
from .plotting import PALETTE

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "pipeline_figure",
    "boltzmann_slider",
    "contextual_gamma_slider",
    "paper_scale_slider",
    "approx_line_slider",
    "partition_slider",
    "norm_figure",
    "context_length_slider",
    "capacity_slider",
    "lookup_slider",
]

#: The bottom panel of a two-panel slider figure (:func:`~lib.book.interactive.stacked_layout`).
_BELOW = {"xaxis": "x2", "yaxis": "y2"}


def _vector(name: str, value: ArrayLike, length: int | None = None) -> np.ndarray:
    """``value`` as a non-empty 1-D real array (dtype kept), of ``length`` entries if given."""
    arr = real_array(name, value)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D array, got shape {arr.shape}")
    if length is not None and len(arr) != length:
        raise ValueError(f"{name} must have {length} entries, got {len(arr)}")
    return arr


def _per_position(name: str, value: Sequence[Any], positions: int) -> list[Any]:
    """``value`` as a list with one entry per slider position."""
    if isinstance(value, str | bytes) or not isinstance(value, Sequence | np.ndarray):
        raise ValueError(f"{name} must be a sequence with one entry per position, got {value!r}")
    if len(value) != positions:
        raise ValueError(
            f"{name} must have one entry per slider position ({positions}), got {len(value)}"
        )
    return list(value)


def boltzmann_slider(
    a: ArrayLike,
    grid: ArrayLike,
    curve: ArrayLike,
    positions: ArrayLike,
    weights: Sequence[ArrayLike],
    values: ArrayLike,
    *,
    default: int,
) -> SliderFigure:
    """Chapter 1's ``fig-boltzmann-temperature-interactive``: softmax weights of a vector and its
    Boltzmann operator, with a slider for the inverse temperature β.

    Top panel: one bar per entry of ``a`` (its softmax weight at the position's β); bottom panel:
    ``curve`` against ``grid``, the current ``(β, values[i])`` marked, and dotted lines at the
    minimum, mean and maximum of ``a``.

    Args:
        a: the vector, shape ``(K,)``, float.
        grid: the inverse temperatures of the curve, shape ``(G,)``.
        curve: ``boltz_β(a)`` at each β of ``grid``, shape ``(G,)``.
        positions: the slider's inverse temperatures, shape ``(P,)``.
        weights: per position, the softmax weights ``σ[β a]``, each of shape ``(K,)``.
        values: per position, ``boltz_β(a)``, shape ``(P,)``.
        default: the position shown first and in the static image.

    Raises:
        ValueError: naming the argument, for arrays that are not 1-D, are empty or disagree in
            length (``curve`` with ``grid``, ``weights`` and ``values`` with ``positions``, each
            weight vector with ``a``).
    """
    a = _vector("a", a)
    grid = _vector("grid", grid)
    curve = _vector("curve", curve, len(grid))
    positions = _vector("positions", positions)
    weights = _per_position("weights", weights, len(positions))
    for i, w in enumerate(weights):
        _vector(f"weights[{i}]", w, len(a))
    values = _vector("values", values, len(positions))
    entries = [f"a{i + 1} = {v:g}" for i, v in enumerate(a)]
    levels = {"min": a.min(), "mean": a.mean(), "max": a.max()}

    def frame(i: int) -> list[dict]:
        marks = [
            {
                "x": grid[[0, -1]],
                "y": [v, v],
                "mode": "lines",
                "name": k,
                "showlegend": False,
                "line": {"color": "#888888", "dash": "dot", "width": 1},
                **_BELOW,
            }
            for k, v in levels.items()
        ]
        return [
            {
                "type": "bar",
                "x": entries,
                "y": weights[i],
                "name": "softmax weight",
                "marker": {"color": PALETTE["sky"]},
            },
            {
                "x": grid,
                "y": curve,
                "mode": "lines",
                "name": "boltz_β(a)",
                "line": {"color": PALETTE["blue"]},
                **_BELOW,
            },
            {
                "x": [positions[i]],
                "y": [values[i]],
                "mode": "markers",
                "name": "current β",
                "marker": {"color": PALETTE["vermillion"], "size": 10},
                **_BELOW,
            },
            *marks,
        ]

    return SliderFigure(
        "boltzmann-beta",
        [frame(i) for i in range(len(positions))],
        positions,
        label="inverse temperature β",
        default=default,
        description="Top: the softmax weights of the five entries of a at the chosen β. Bottom: "
        "boltz_β(a) against β, rising from the minimum of a to its maximum, with a dot at the "
        "chosen β.",
        layout=stacked_layout(
            ({"title": {"text": "entry of a"}}, {"title": {"text": "weight"}, "range": [0, 1.02]}),
            ({"title": {"text": "inverse temperature β"}}, {"title": {"text": "boltz_β(a)"}}),
        ),
        height=560,
    )


def contextual_gamma_slider(
    gammas: ArrayLike,
    ids: Sequence[ArrayLike],
    dot_x: ArrayLike,
    names: Sequence[str],
    hard: ArrayLike,
    gap: tuple[ArrayLike, ArrayLike],
    theorem_gamma: float,
    selected: Sequence[tuple[float, float]],
    *,
    tokens: int,
    default: int,
) -> SliderFigure:
    """Chapter 2's ``fig-contextual-gamma-interactive``: the context ids of every (sequence, query
    token) of the rank-1 layer, with a slider for its inverse temperature γ.

    Top panel: per query token (``tokens`` groups of equal size, in the order of ``dot_x``), one
    dot per sequence at its context id minus the token, with grey dashes at the hardmax values
    ``hard``; bottom panel: the smallest gap between the ids against γ, the theorem's γ dashed and
    the selected γ marked.

    Args:
        gammas: the slider's inverse temperatures, shape ``(P,)``.
        ids: per position, the context ids minus their query tokens, shape ``(S,)`` each, in the
            order of ``dot_x``.
        dot_x: the dots' horizontal positions (query token plus a small offset), shape ``(S,)``.
        names: the sequence each dot belongs to, ``S`` strings (hover text).
        hard: the hardmax layer's ids minus their tokens, shape ``(S,)``.
        gap: ``(γ, log10 smallest gap)``, two arrays of the same shape ``(G,)``, finite.
        theorem_gamma: the theorem's inverse temperature (a dashed vertical line).
        selected: per position, ``(γ, log10 smallest gap)`` of the layer shown; the gap is drawn
            no lower than the curve's minimum (an exact collision has gap ``-inf``).
        tokens: the number of query tokens (groups of dots), a divisor of ``S``.
        default: the position shown first and in the static image.

    Raises:
        ValueError: naming the argument, for arrays of the wrong shape or length, ``tokens``
            that does not divide ``S``, or ``selected`` entries that are not pairs.
    """
    gammas = _vector("gammas", gammas)
    dot_x = _vector("dot_x", dot_x)
    hard = _vector("hard", hard, len(dot_x))
    ids = _per_position("ids", ids, len(gammas))
    ids = [_vector(f"ids[{i}]", v, len(dot_x)) for i, v in enumerate(ids)]
    names = _per_position("names", names, len(dot_x))
    if not isinstance(tokens, int) or tokens < 1 or len(dot_x) % tokens:
        raise ValueError(f"tokens must be a positive divisor of {len(dot_x)}, got {tokens!r}")
    if not isinstance(gap, tuple | list) or len(gap) != 2:
        raise ValueError(f"gap must be a pair (gammas, log10 gaps), got {gap!r}")
    gap_x = _vector("gap[0]", gap[0])
    gap_y = _vector("gap[1]", gap[1], len(gap_x))
    selected = _per_position("selected", selected, len(gammas))
    if any(not isinstance(s, tuple | list) or len(s) != 2 for s in selected):
        raise ValueError("selected must hold one (gamma, log10 gap) pair per position")
    per = len(dot_x) // tokens

    def lower(
        x: ArrayLike, y: ArrayLike, name: str, mode: str = "lines", **style: Any
    ) -> dict[str, Any]:
        """A trace of the lower panel (smallest gap against gamma)."""
        key = "line" if mode == "lines" else "marker"
        return {"x": x, "y": y, "name": name, "mode": mode, **_BELOW, key: style}

    thm = ([theorem_gamma] * 2, [gap_y.min(), gap_y.max()])  # theorem's gamma, dashed
    fixed = [  # the same in every frame
        {
            "x": [v for x in dot_x for v in (x - 0.05, x + 0.05, None)],
            "y": [v for y in hard for v in (y, y, None)],
            "name": "hardmax limit",
            "mode": "lines",
            "line": {"color": "#777777", "width": 3},
        },
        lower(gap_x, gap_y, "smallest gap", color=PALETTE["blue"]),
        lower(*thm, "theorem's γ", color=PALETTE["vermillion"], dash="dash"),
    ]

    def frame(moved: np.ndarray, gamma: float, log10_gap: float) -> list[dict]:
        dots = [
            {"x": dot_x[k : k + per], "y": moved[k : k + per], "text": names[k : k + per]}
            | {"mode": "markers", "marker": {"color": colour, "size": 8}, "showlegend": False}
            for k, colour in zip(range(0, len(dot_x), per), PALETTE.values(), strict=False)
        ]
        here = max(log10_gap, gap_y.min())  # the selected gamma on the gap curve
        mark = lower([gamma], [here], "this γ", "markers", color=PALETTE["sky"], size=11)
        return dots + fixed + [mark]

    # ids holds the arrays _vector returned (typed by the parameter, Sequence[ArrayLike])
    frames = [frame(m, g, lg) for m, (g, lg) in zip(ids, selected, strict=True)]  # type: ignore[arg-type]
    y_lo = min(min(f[k]["y"]) for f in frames for k in range(tokens))
    pad = 0.08 * (max(hard) - y_lo)
    return SliderFigure(
        "contextual-gamma",
        frames,
        gammas,
        label="inverse temperature γ",
        value_format="{:.3g}",
        default=default,
        layout=stacked_layout(
            (
                {"title": {"text": "query token"}, "tickvals": list(range(1, tokens + 1))},
                {"title": {"text": "context id − token"}, "range": [y_lo - pad, max(hard) + pad]},
            ),
            (
                {"title": {"text": "inverse temperature γ"}, "type": "log", "dtick": 1},
                {"title": {"text": "log10 smallest gap"}},
            ),
        ),
        height=560,
        description=(
            "Two stacked panels. Top: for each query token 1 to 5, one dot per three-token "
            "subset of the vocabulary that holds it, at the height of its context id minus the "
            "token, with grey dashes at the value the hardmax layer with the same weights gives. "
            "Bottom: the base-10 logarithm of the smallest distance between all the context ids "
            "against the inverse temperature γ on a logarithmic axis, with a dashed line at the "
            "theorem's γ and a marker at the selected γ. At the smallest γ the dots of one token "
            "are spread out, ordered as the means of their sequences. As γ grows they rise "
            "towards the hardmax dashes and at the largest γ sit on them, the dots of sequences "
            "with the same largest token bunched into one; meanwhile the smallest gap, roughly "
            "level at small γ, falls steeply as γ grows, on through the theorem's γ."
        ),
    )


def _seed_frame(histories: Mapping[Any, pd.DataFrame], column: str) -> pd.DataFrame:
    """Epochs x seeds of ``column``, NaN after a seed's last epoch."""
    return pd.DataFrame(
        {s: h.set_index("epoch")[column] for s, h in histories.items()}
    ).sort_index()


def paper_scale_slider(
    histories: Mapping[str, Mapping[Any, pd.DataFrame]],
    colours: Sequence[str],
    *,
    context_free: float,
    reported: float,
    permutation: float,
) -> SliderFigure:
    """Chapter 3's ``fig-memorization-paper-scale-interactive``: the stored paper-scale CoNLL
    runs, with a slider for the epoch.

    Top panel: per model, the median training error over its seeds against the epoch (log
    scale), a marker at the chosen epoch, and three reference lines at ``1 -`` the context-free,
    reported and permutation accuracies; bottom panel: one bar per model, its seeds' median
    training accuracy at the chosen epoch (a seed that ended earlier counts with its last epoch).
    Up to 48 epochs, evenly spaced from 1 to the longest run, are slider positions; the last is
    the default. Bar labels drop ``"rank 1, "`` and ``", 1 layer"`` from the model names.

    Args:
        histories: model name -> seed -> history, a DataFrame with integer column ``epoch``
            (1, 2, ...) and float column ``train_acc``, one row per epoch.
        colours: one colour per model, in the order of ``histories``.
        context_free: the context-free accuracy ceiling (a thick line at its error).
        reported: the reported accuracy (a dashed line, labelled with its value).
        permutation: the permutation accuracy ceiling (a dotted line).

    Raises:
        ValueError: naming the argument, for no model, a model without runs, a history without
            the columns ``epoch`` and ``train_acc`` or without rows, or a number of colours
            different from the number of models.
    """
    if not isinstance(histories, Mapping) or not histories:
        raise ValueError(f"histories must be a non-empty mapping of models, got {histories!r}")
    for name, group in histories.items():
        if not isinstance(group, Mapping) or not group:
            raise ValueError(f"histories[{name!r}] must be a non-empty mapping of seeds to runs")
        for seed, h in group.items():
            if not isinstance(h, pd.DataFrame) or not {"epoch", "train_acc"} <= set(h) or h.empty:
                raise ValueError(
                    f"histories[{name!r}][{seed!r}] must be a DataFrame with rows and columns "
                    "'epoch' and 'train_acc'"
                )
    if isinstance(colours, str) or len(colours) != len(histories):
        raise ValueError(
            f"colours must hold one colour per model ({len(histories)}), got {colours!r}"
        )
    last = max(len(h) for g in histories.values() for h in g.values())
    marks = np.unique(np.linspace(1, last, min(last, 48)).round().astype(int))
    floors = {
        "context-free": 1 - context_free,
        f"reported {reported:g}": 1 - reported,
        "permutation": 1 - permutation,
    }
    styles = dict(zip(histories, colours, strict=True))
    floor_styles = [
        (PALETTE["vermillion"], "solid", 3),
        ("#888888", "dash", 1),
        ("#888888", "dot", 1),
    ]
    medians = {name: _seed_frame(g, "train_acc").median(axis=1) for name, g in histories.items()}

    def median_at(
        group: Mapping[Any, pd.DataFrame], epoch: int
    ) -> float:  # the seeds' median accuracy at the epoch (or their last epoch)
        return float(np.median([h.train_acc.iloc[min(epoch, len(h)) - 1] for h in group.values()]))

    def frame(epoch: int) -> list[dict]:
        curves = [
            {
                "x": medians[name].index,
                "y": 1 - medians[name].values,
                "mode": "lines",
                "name": name,
                "line": {
                    "color": styles[name],
                    "dash": "dashdot" if name.startswith("full") else "solid",
                },
            }
            for name in histories
        ]
        dots = [
            {
                "x": [epoch],
                "y": [1 - median_at(g, epoch)],
                "mode": "markers",
                "showlegend": False,
                "marker": {"color": styles[name], "size": 9},
            }
            for name, g in histories.items()
        ]
        lines = [
            {
                "x": [1, last],
                "y": [v, v],
                "mode": "lines",
                "name": k,
                "line": {"color": colour, "dash": dash, "width": width},
            }
            for (k, v), (colour, dash, width) in zip(floors.items(), floor_styles, strict=True)
        ]
        bars = {
            "type": "bar",
            "x": [n.removeprefix("rank 1, ").removesuffix(", 1 layer") for n in histories],
            "y": [median_at(g, epoch) for g in histories.values()],
            "marker": {"color": colours},
            "showlegend": False,
            **_BELOW,
        }
        return curves + dots + lines + [bars]

    return SliderFigure(
        "conll-paper-scale",
        [frame(e) for e in marks],
        marks,
        label="epoch",
        value_format="{:d}",
        default=len(marks) - 1,
        description="Top: the median training error over the seeds of the four stored "
        "paper-scale models against the epoch, with the ceilings' floors and the reported "
        "accuracy's error as reference lines, and a marker at the chosen epoch. Bottom: each "
        "model's median training accuracy at that epoch.",
        layout=stacked_layout(
            ({"title": {"text": "epoch"}}, {"title": {"text": "training error"}, "type": "log"}),
            (
                {},
                {
                    "title": {"text": "training accuracy"},
                    "range": [round(context_free - 0.01, 2), 1.0],
                },
            ),
            # the legend's seven entries stack above the plot on a phone: a wider gap keeps
            # the top panel's "epoch" off the lower panel
            gap=0.22,
        ),
        height=600,
    )


def approx_line_slider(
    line: ArrayLike,
    target: ArrayLike,
    cells: Sequence[int],
    runs: Sequence[tuple[ArrayLike, ArrayLike, ArrayLike, ArrayLike, ArrayLike]],
    *,
    default: int,
    summary: str,
) -> SliderFigure:
    """Chapter 4's ``fig-approx-line-interactive``: K&S's approximator along a line through the
    input space, with a slider for the number of cells per axis ``m``.

    Top panel: the target (every 40th point of ``line``, dashed) and the approximation; bottom
    panel: the absolute error, with dots on inputs that have two tokens in one cell and on
    inputs that have a token on a ramp. Both panels' vertical ranges are fixed across positions
    (5 % above the largest output and error).

    Args:
        line: the first token's values of the target curve, shape ``(L,)``.
        target: the target's output at token 1 along ``line``, shape ``(L,)``.
        cells: the slider's numbers of cells per axis, ``P`` integers.
        runs: per position, ``(x, output, error, ramp, duplicate)``: the inputs (first token)
            of shape ``(R,)``, the approximation's output and absolute error there (``(R,)``,
            float), and two boolean masks ``(R,)`` of the inputs with a token on a ramp and with
            two tokens in one cell.
        default: the position shown first and in the static image.
        summary: how the largest errors change with ``m``, ending the text description.

    Raises:
        ValueError: naming the argument, for arrays of the wrong shape or length, masks that are
            not boolean, or an empty ``summary``.
    """
    line = _vector("line", line)
    target = _vector("target", target, len(line))
    cells = list(cells)
    runs = _per_position("runs", runs, len(cells))
    checked = []
    for i, run in enumerate(runs):
        if not isinstance(run, tuple | list) or len(run) != 5:
            raise ValueError(f"runs[{i}] must be (x, output, error, ramp, duplicate)")
        x = _vector(f"runs[{i}] x", run[0])
        model = _vector(f"runs[{i}] output", run[1], len(x))
        err = _vector(f"runs[{i}] error", run[2], len(x))
        masks = [np.asarray(m) for m in run[3:]]
        for what, m in zip(("ramp", "duplicate"), masks, strict=True):
            if m.dtype != bool or m.shape != x.shape:
                raise ValueError(f"runs[{i}] {what} must be a boolean mask of shape {x.shape}")
        checked.append((x, model, err, *masks))
    if not isinstance(summary, str) or not summary.strip():
        raise ValueError(f"summary must be a non-empty string, got {summary!r}")

    def dots(colour: str) -> dict[str, Any]:  # markers in the bottom panel
        return {**_BELOW, "mode": "markers", "marker": {"color": PALETTE[colour]}}

    def frame(
        x: np.ndarray, model: np.ndarray, err: np.ndarray, ramp: np.ndarray, dup: np.ndarray
    ) -> list[dict]:
        blue = {"color": PALETTE["blue"]}
        return [
            {
                "x": line[::40],
                "y": target[::40],
                "name": "target f",
                "line": {"color": PALETTE["vermillion"], "dash": "dash"},
            },
            {"x": x, "y": model, "name": "FF₂ ∘ SA ∘ FF₁", "line": blue},
            {"x": x, "y": err, "name": "|error|", "showlegend": False, "line": blue, **_BELOW},
            {"x": x[dup], "y": err[dup], "name": "two tokens in one cell", **dots("orange")},
            {"x": x[ramp], "y": err[ramp], "name": "a token on a ramp", **dots("green")},
        ]

    frames = [frame(*run) for run in checked]
    along = {"title": {"text": "first token x₁ (x₂ = 0.33, x₃ = 0.81)"}, "range": [0, 1]}
    top = [1.05 * max(frame[k]["y"].max() for frame in frames) for k in (1, 2)]  # fixed y ranges
    return SliderFigure(
        "approx-line",
        frames,
        cells,
        label="cells per axis m",
        default=default,
        description="Top: the target f at token 1 (dashed) and the approximation, a staircase "
        "with one step per cell and a short spike at each grid line, against the first token x₁ "
        "from 0 to 1 with x₂ = 0.33 and x₃ = 0.81. Bottom: the absolute error at token 1, with "
        "dots where a token lies on a ramp (the spikes) and where two tokens share a cell. As "
        f"the number of cells m grows, the steps narrow; {summary}.",
        layout=stacked_layout(
            (
                {**along, "title": {"text": "first token x₁"}},
                {"title": {"text": "output at token 1"}, "range": [0, top[0]]},
            ),
            (along, {"title": {"text": "|error| at token 1"}, "range": [0, top[1]]}),
        ),
        height=580,
    )


def partition_slider(
    betas: ArrayLike,
    pixel_axis: ArrayLike,
    pixel_errors: Sequence[ArrayLike],
    cut_x: ArrayLike,
    cut_weights: Sequence[ArrayLike],
    centres: ArrayLike,
    colours: Sequence[str],
    *,
    default: int,
) -> SliderFigure:
    """Chapter 5's ``fig-maxaffine-partition-interactive``: a max-affine partition of a square,
    with a slider for the inverse temperature β.

    Top panel: a heat map of the indicator error ``‖σ(βy(x)) − E(x)‖₁`` per pixel (rounded to 2
    decimals, colour scale from 0 to ``2 − 2/N``), the cut ``x₂ = 0`` dashed from ``cut_x[0]``
    to ``cut_x[-1]`` and the ``N`` centres in their cells' colours; bottom panel: the ``N``
    softmax weights along the cut (rounded to 2 decimals). The square is
    ``[cut_x[0], cut_x[-1]]²``.

    Args:
        betas: the slider's inverse temperatures, shape ``(P,)``.
        pixel_axis: the pixels' centres along either axis, shape ``(Q,)``.
        pixel_errors: per position, the mean indicator error in each pixel, shape ``(Q, Q)``
            (rows ``x₂``, columns ``x₁``).
        cut_x: the points of the cut, shape ``(C,)``, increasing.
        cut_weights: per position, the softmax weight of each cell along the cut, shape
            ``(N, C)``.
        centres: the cells' centres ``c_i = a_i / 2``, shape ``(N, 2)``.
        colours: the cells' colours, ``N`` plotly colour strings.
        default: the position shown first and in the static image.

    Raises:
        ValueError: naming the argument, for arrays of the wrong shape or length, or a number
            of colours different from the number of centres.
    """
    betas = _vector("betas", betas)
    pixel_axis = _vector("pixel_axis", pixel_axis)
    cut_x = _vector("cut_x", cut_x)
    centres = real_array("centres", centres)
    if centres.ndim != 2 or centres.shape[1] != 2 or not len(centres):
        raise ValueError(f"centres must have shape (N, 2), got {centres.shape}")
    n = len(centres)
    if isinstance(colours, str) or len(colours) != n:
        raise ValueError(f"colours must hold one colour per centre ({n}), got {colours!r}")
    pixel_errors = _per_position("pixel_errors", pixel_errors, len(betas))
    cut_weights = _per_position("cut_weights", cut_weights, len(betas))
    for what, arrays, shape in (
        ("pixel_errors", pixel_errors, (len(pixel_axis), len(pixel_axis))),
        ("cut_weights", cut_weights, (n, len(cut_x))),
    ):
        for i, arr in enumerate(arrays):
            if real_array(f"{what}[{i}]", arr).shape != shape:
                raise ValueError(f"{what}[{i}] must have shape {shape}, got {np.shape(arr)}")
    ends = [cut_x[0], cut_x[-1]]

    def frame(err: Any, weights: Iterable[Any]) -> list[dict]:  # rows of pixel_errors, cut_weights
        """The traces at one beta: heatmap, cut, centres (top), and one weight curve per cell."""
        heat: dict[str, Any] = {
            "type": "heatmap",
            "x": pixel_axis,
            "y": pixel_axis,
            "colorscale": "Viridis",
        }
        heat.update(z=np.round(err, 2), zmin=0)
        heat.update(zmax=2 - 2 / n, name="‖σ − E‖₁")
        heat["colorbar"] = {"title": {"text": "‖σ − E‖₁"}, "len": 0.42, "y": 1, "yanchor": "top"}
        cut: dict[str, Any] = {"x": ends, "y": [0, 0], "mode": "lines", "hoverinfo": "skip"}
        cut["line"] = {"color": "white", "dash": "dash", "width": 1.5}
        ring = {"color": "white", "width": 1.5}
        dots = [
            {"x": [c[0]], "y": [c[1]], "mode": "markers", "hoverinfo": "x+y"}
            | {"marker": {"color": colour, "size": 10, "line": ring}}
            for c, colour in zip(centres, colours, strict=True)
        ]
        curves = [
            {"x": cut_x, "y": np.round(w, 2), "mode": "lines", "name": f"σ{i + 1}"}
            | {"line": {"color": colour}, **_BELOW}
            for i, (w, colour) in enumerate(zip(weights, colours, strict=True))
        ]
        return [heat, cut, *dots, *curves]

    square = (
        {"title": {"text": "x₁"}, "range": ends},
        {"title": {"text": "x₂"}, "range": ends},
    )
    along = (
        {"title": {"text": "x₁ (along the cut x₂ = 0)"}, "range": ends},
        {"title": {"text": "weight σᵢ"}, "range": [0, 1.02]},
    )
    return SliderFigure(
        "maxaffine-partition-beta",
        [frame(e, w) for e, w in zip(pixel_errors, cut_weights, strict=True)],
        betas,
        label="inverse temperature β",
        value_format="{:.3g}",
        default=default,
        layout=stacked_layout(square, along) | {"showlegend": False},
        height=600,
        description=(
            "Two panels, one above the other. Top: a heat map over the square from -1.5 to 1.5 "
            "in both coordinates of the distance between the softmax weights and the partition "
            "indicator, averaged over each pixel, with the seven centres as dots in their cells' "
            "colours and a dashed horizontal line along the cut x2 = 0. Bottom: the seven "
            "softmax weights along that cut, one curve per cell in the same colours. At small "
            "beta the distance is large over most of the square and the weights along the cut "
            "are smooth and spread out; as beta grows the distance collapses onto bright bands "
            "along the cell boundaries, which narrow until they are thinner than a pixel and "
            "fade, and the weights along the cut become steps from 0 to 1 at the boundaries."
        ),
    )


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
            :func:`lib.experiments.noise.seed_stats` returns them.
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
    from ..experiments.noise import NOISE_KINDS
    from . import plotting

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

    from . import plotting

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
    from .._validate import positive_int, short_repr
    from . import plotting

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


def _names(name: str, value: Sequence[str]) -> list[str]:
    """``value`` as a non-empty list of names."""
    names = list(value) if not isinstance(value, str) else []
    if not names:
        raise ValueError(f"{name} must be a non-empty sequence of names, got {value!r}")
    return names


def context_length_slider(
    line: ArrayLike,
    target: ArrayLike,
    sizes: ArrayLike,
    outputs: Sequence[ArrayLike],
    stored: Sequence[tuple[ArrayLike, ArrayLike]],
    sups: ArrayLike,
    *,
    default: int,
    summary: str,
) -> SliderFigure:
    """Chapter 6's ``fig-cross-length-interactive``: the one-dimensional cross-attention lookup,
    with a slider for its context length ``N``.

    Top panel: the target (dashed), the layer's output and the values its context stores;
    bottom panel (log-log): the largest error against ``N`` for every length, for the lengths so
    far, and the current one marked.

    Args:
        line: the inputs, shape ``(L,)``.
        target: the target on ``line``, shape ``(L,)``.
        sizes: the slider's context lengths, ``P`` positive integers, increasing; the last is the
            longest shown (the bottom axis's last tick).
        outputs: per position, the layer's output on ``line``, shape ``(L,)``.
        stored: per position, ``(centres, values)`` of the context tokens, two arrays of shape
            ``(N,)``.
        sups: per position, the largest error on ``line``, shape ``(P,)``.
        default: the position shown first and in the static image.
        summary: how the largest error changes with ``N``, ending the text description.

    Raises:
        ValueError: naming the argument, for arrays of the wrong shape or length, or an empty
            ``summary``.
    """
    line = _vector("line", line)
    target = _vector("target", target, len(line))
    sizes = _vector("sizes", sizes)
    outputs = _per_position("outputs", outputs, len(sizes))
    for i, out in enumerate(outputs):
        _vector(f"outputs[{i}]", out, len(line))
    stored = _per_position("stored", stored, len(sizes))
    for i, pair in enumerate(stored):
        if not isinstance(pair, tuple | list) or len(pair) != 2:
            raise ValueError(f"stored[{i}] must be a pair (centres, values)")
        _vector(f"stored[{i}] values", pair[1], len(_vector(f"stored[{i}] centres", pair[0])))
    sups = _per_position("sups", list(_vector("sups", sups, len(sizes))), len(sizes))
    if not isinstance(summary, str) or not summary.strip():
        raise ValueError(f"summary must be a non-empty string, got {summary!r}")
    blue = {"color": PALETTE["blue"]}
    now = {"color": PALETTE["vermillion"], "size": 10}  # the current length
    styles = {  # trace name: its style
        "target f": {"mode": "lines", "line": {"color": "#777777", "dash": "dash"}},
        "cross-attention": {"mode": "lines", "line": blue},
        "context values f(cᵢ)": {
            "mode": "markers",
            "marker": {"color": PALETTE["orange"], "size": 6},
        },
        "all lengths": {"mode": "lines", "line": {"color": "#999999", "width": 1}, **_BELOW},
        "lengths so far": {"mode": "lines+markers", "line": blue, "marker": {"size": 4}, **_BELOW},
        "current N": {"mode": "markers", "marker": now, **_BELOW},
    }

    def frame(i: int) -> list[dict]:
        data = [
            (line, target),
            (line, outputs[i]),
            stored[i],
            (sizes, sups),
            (sizes[: i + 1], sups[: i + 1]),
            ([sizes[i]], [sups[i]]),
        ]
        return [
            {"x": x, "y": y, "name": k, **s}
            for (x, y), (k, s) in zip(data, styles.items(), strict=True)
        ]

    def axis(title: str, **more: Any) -> dict[str, Any]:
        return {"title": {"text": title}, **more}

    return SliderFigure(
        "cross-length",
        [frame(i) for i in range(len(sizes))],
        sizes,
        label="context length N",
        default=default,
        description="Top: the target sin(πx) on [0, 1] and the output of the cross-attention "
        "lookup whose context holds N tokens, a staircase with one smooth step per token, with "
        "the value each token stores. Bottom: the largest error on the lattice against N on "
        f"log-log axes, with the chosen N marked. As N grows the steps narrow; {summary}.",
        layout=stacked_layout(
            (axis("x"), axis("f(x)", range=[-0.05, 1.1])),
            (
                axis("context length N", type="log", tickvals=[1, 2, 5, 10, 20, sizes[-1]]),
                axis("largest error on the lattice", type="log", tickvals=[0.05, 0.1, 0.2, 0.5, 1]),
            ),
            gap=0.2,
        ),
        height=560,
    )


def capacity_slider(
    widths: ArrayLike,
    sizes: ArrayLike,
    shares: Mapping[str, ArrayLike],
    reach: Mapping[str, ArrayLike],
    *,
    default: int,
    summary: str,
) -> SliderFigure:
    """Chapter 7's ``fig-trained-capacity-interactive``: the share of labels a trained model gets
    right against its feed-forward width, with a slider for the number of sequences ``N``.

    One panel, width on a base-2 logarithmic axis: per attention head, every seed's share
    (dots), their median (line) and the width at which the head's parameter count reaches
    K&S Corollary 1's count (a vertical dotted line).

    Args:
        widths: the feed-forward widths, ``W`` positive numbers, increasing.
        sizes: the slider's numbers of sequences ``N``, ``P`` positive numbers.
        shares: per head (its legend name), the share memorized in ``[0, 1]``, shape
            ``(P, W, S)`` for ``S`` seeds.
        reach: per head (the names of ``shares``), the width at which its count reaches
            Corollary 1's, shape ``(P,)``, positive.
        default: the position shown first and in the static image.
        summary: where the median reaches 1 against the count's width, ending the description.

    Raises:
        ValueError: naming the argument, for arrays of the wrong shape, shares outside
            ``[0, 1]``, heads that differ between ``shares`` and ``reach``, or an empty
            ``summary``.
    """
    widths = _vector("widths", widths)
    sizes = _vector("sizes", sizes)
    if not isinstance(shares, Mapping) or not shares or not isinstance(reach, Mapping):
        raise ValueError("shares and reach must be non-empty mappings from head names")
    if set(shares) != set(reach):
        raise ValueError(
            f"reach must name the heads of shares {sorted(shares)}, got {sorted(reach)}"
        )
    cubes = {}
    for head, cube in shares.items():
        cube = real_array(f"shares[{head!r}]", cube).astype(float)
        shape = cube.shape[:2] if cube.ndim == 3 else None
        if shape != (len(sizes), len(widths)) or not ((cube >= 0) & (cube <= 1)).all():
            raise ValueError(
                f"shares[{head!r}] must hold shares in [0, 1] of shape "
                f"({len(sizes)}, {len(widths)}, seeds), got shape {cube.shape}"
            )
        cubes[head] = (cube, _vector(f"reach[{head!r}]", reach[head], len(sizes)))
    colours = [PALETTE["blue"], PALETTE["orange"], PALETTE["green"]]

    def frame(i: int) -> list[dict]:
        traces = []
        for (head, (cube, w_star)), colour in zip(cubes.items(), colours, strict=False):
            seeds = cube[i]  # (W, S)
            traces += [
                {"x": np.repeat(widths, seeds.shape[1]), "y": seeds.ravel(), "mode": "markers",
                 "name": f"{head}: each seed", "marker": {"color": colour, "size": 5,
                                                        "opacity": 0.5}},
                {"x": widths, "y": np.median(seeds, axis=1), "mode": "lines+markers",
                 "name": f"{head}: median", "line": {"color": colour}},
                {"x": [w_star[i], w_star[i]], "y": [0, 1], "mode": "lines",
                 "name": f"{head}: Corollary 1's count", "line": {"color": colour, "dash": "dot"}},
            ]  # fmt: skip
        return traces

    return SliderFigure(
        "trained-capacity",
        [frame(i) for i in range(len(sizes))],
        sizes,
        label="sequences N",
        default=default,
        description="The share of the N n labels the trained one-layer model gets right against "
        "its feed-forward width, on a logarithmic axis, for each attention head: every seed as "
        "a dot, their median as a line, and a dotted vertical line at the width where the "
        "model's parameter count reaches Corollary 1's count for N sequences. As N grows the "
        f"count's width moves right; {summary}.",
        layout={
            "xaxis": {
                "title": {"text": "feed-forward width"},
                "type": "log",
                "tickvals": list(widths),
            },
            "yaxis": {"title": {"text": "share of labels memorized"}, "range": [0, 1.05]},
        },  # fmt: skip
        height=420,
    )


def lookup_slider(
    sides: ArrayLike,
    pixel_axis: ArrayLike,
    own: Sequence[ArrayLike],
    matched: Sequence[ArrayLike],
    keys: Sequence[ArrayLike],
    *,
    default: int,
    summary: str,
) -> SliderFigure:
    """Chapter 7's ``fig-trained-lookup-interactive``: the cells of a trained lookup layer
    against the construction's ``m x m`` grid on the unit square, with a slider for ``m``.

    One panel: a heat map of the pixels, coloured by the checkerboard parity of the grid cell
    each pixel's learned cell is matched to (0 and 1) where that is the pixel's own grid cell,
    and 2 where it is not (colour scale viridis, 0 to 2); the grid's lines (black, dotted) and
    the learned keys (dots).

    Args:
        sides: the slider's grid sides ``m``, ``P`` positive integers.
        pixel_axis: the pixels' centres along either axis, shape ``(Q,)``, in ``[0, 1]``.
        own, matched: per position, each pixel's grid cell and the grid cell its learned cell is
            matched to (:func:`lib.experiments.learned_lookup.matched_cells`), integers in
            ``[0, m*m)`` of shape ``(Q, Q)``, rows along :math:`x_2`.
        keys: per position, the learned keys, shape ``(K, 2)``.
        default: the position shown first and in the static image.
        summary: how the mismatched share changes with ``m``, ending the description.

    Raises:
        ValueError: naming the argument, for arrays of the wrong shape or length, sides that
            are not positive integers, cells outside ``[0, m*m)``, or an empty ``summary``.
    """
    sides = _vector("sides", sides)
    if not (sides >= 1).all() or not (sides == np.round(sides)).all():
        raise ValueError(f"sides must be positive integers, got {sides.tolist()}")
    pixel_axis = _vector("pixel_axis", pixel_axis)
    if not isinstance(summary, str) or not summary.strip():
        raise ValueError(f"summary must be a non-empty string, got {summary!r}")
    own = _per_position("own", own, len(sides))
    matched = _per_position("matched", matched, len(sides))
    keys = _per_position("keys", keys, len(sides))
    q = len(pixel_axis)
    images = []
    for i, m in enumerate(sides.astype(int)):
        pair = []
        for what, arr in (("own", own[i]), ("matched", matched[i])):
            arr = real_array(f"{what}[{i}]", arr)
            if arr.shape != (q, q) or ((arr < 0) | (arr >= m * m) | (arr != np.round(arr))).any():
                raise ValueError(
                    f"{what}[{i}] must hold cells in [0, {m * m}) of shape ({q}, {q}), "
                    f"got shape {arr.shape}"
                )
            pair.append(arr.astype(int))
        k = real_array(f"keys[{i}]", keys[i])
        if k.ndim != 2 or k.shape[1] != 2:
            raise ValueError(f"keys[{i}] must have shape (K, 2), got {k.shape}")
        images.append((m, *pair, k))

    def frame(m: int, cells: np.ndarray, to: np.ndarray, k: np.ndarray) -> list[dict]:
        parity = (to // m + to % m) % 2
        # the grid's inner lines, vertical then horizontal, as one trace broken by None
        xs = [v for j in range(1, m) for v in (j / m, j / m, None, 0, 1, None)]
        ys = [v for j in range(1, m) for v in (0, 1, None, j / m, j / m, None)]
        return [
            {"type": "heatmap", "x": pixel_axis, "y": pixel_axis, "z": np.where(to == cells,
             parity, 2), "zmin": 0, "zmax": 2, "colorscale": "Viridis", "showscale": False,
             "name": "matched cell (2: another grid cell)"},
            {"x": xs, "y": ys, "mode": "lines", "name": "the construction's grid",
             "line": {"color": "black", "dash": "dot", "width": 1}, "hoverinfo": "skip"},
            {"x": k[:, 0], "y": k[:, 1], "mode": "markers", "name": "learned keys",
             "marker": {"color": PALETTE["vermillion"], "size": 5}},
        ]  # fmt: skip

    square = {"range": [0, 1], "constrain": "domain"}
    return SliderFigure(
        "trained-lookup",
        [frame(*image) for image in images],
        sides,
        label="grid side m",
        default=default,
        description="The unit square, each pixel coloured by the cell of the construction's m "
        "by m grid that its learned cell is matched to: two checkerboard colours where that is "
        "the pixel's own grid cell, yellow where it is another, with the grid's lines dotted "
        f"and the learned keys as dots. {summary}.",
        layout={
            "xaxis": {"title": {"text": "x₁"}, **square},
            "yaxis": {"title": {"text": "x₂"}, "scaleanchor": "x", **square},
        },
        height=480,
    )
