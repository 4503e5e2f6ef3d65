"""The slider figures of Chapters 1-4 (Kajitsuka & Sato's constructions and experiments), built
from the numbers the chapters compute; re-exported by :mod:`lib.book.figures`.

* :func:`boltzmann_slider` — Chapter 1, softmax weights and the Boltzmann operator against β;
* :func:`contextual_gamma_slider` — Chapter 2, context ids against the inverse temperature γ;
* :func:`paper_scale_slider` — Chapter 3, the stored paper-scale CoNLL runs epoch by epoch;
* :func:`approx_line_slider` — Chapter 4, K&S's approximator along a line, against the grid.

Every function raises :class:`ValueError`, naming the argument, for input of the wrong shape or
length (and :class:`~lib.book.interactive.SliderFigure` for a bad ``default``).

Source: the book's own figures of K&S (ICLR 2024), Chapters 1-4.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from ..interactive import SliderFigure, stacked_layout
from ..plotting import PALETTE
from ._shared import _BELOW, _per_position, _require_summary, _vector

__all__ = [
    "boltzmann_slider",
    "contextual_gamma_slider",
    "paper_scale_slider",
    "approx_line_slider",
]


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
    frames = [
        _boltzmann_frame(entries, weights[i], grid, curve, positions[i], values[i], levels)
        for i in range(len(positions))
    ]
    return SliderFigure(
        "boltzmann-beta",
        frames,
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


def _boltzmann_frame(
    entries: list[str],
    weight: Any,
    grid: np.ndarray,
    curve: np.ndarray,
    beta: Any,
    value: Any,
    levels: dict[str, Any],
) -> list[dict]:
    """The traces of :func:`boltzmann_slider` at one β: the softmax ``weight`` per entry (top);
    the curve, the current ``(β, value)`` and dotted lines at the ``levels`` of ``a`` (bottom)."""
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
            "y": weight,
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
            "x": [beta],
            "y": [value],
            "mode": "markers",
            "name": "current β",
            "marker": {"color": PALETTE["vermillion"], "size": 10},
            **_BELOW,
        },
        *marks,
    ]


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
    gammas, dot_x, hard, arrays, names, gap_x, gap_y, selected = _checked_gamma_args(
        gammas, ids, dot_x, names, hard, gap, selected, tokens
    )
    per = len(dot_x) // tokens
    fixed = _gamma_fixed(dot_x, hard, gap_x, gap_y, theorem_gamma)  # the same in every frame
    frames = [
        _gamma_frame(m, g, lg, dot_x, names, per, fixed, gap_y)
        for m, (g, lg) in zip(arrays, selected, strict=True)
    ]
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
        description=_GAMMA_DESCRIPTION,
    )


#: The text description of :func:`contextual_gamma_slider`'s figure.
_GAMMA_DESCRIPTION = (
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
)


def _checked_gamma_args(
    gammas: ArrayLike,
    ids: Sequence[ArrayLike],
    dot_x: ArrayLike,
    names: Sequence[str],
    hard: ArrayLike,
    gap: tuple[ArrayLike, ArrayLike],
    selected: Sequence[tuple[float, float]],
    tokens: int,
) -> tuple[
    np.ndarray,
    np.ndarray,
    np.ndarray,
    list[np.ndarray],
    list[Any],
    np.ndarray,
    np.ndarray,
    list[Any],
]:
    """:func:`contextual_gamma_slider`'s arguments checked: ``gammas``, ``dot_x``, ``hard``, the
    ``ids`` arrays, ``names``, the gap curve's two arrays and ``selected``."""
    gammas = _vector("gammas", gammas)
    dot_x = _vector("dot_x", dot_x)
    hard = _vector("hard", hard, len(dot_x))
    ids = _per_position("ids", ids, len(gammas))
    arrays = [_vector(f"ids[{i}]", v, len(dot_x)) for i, v in enumerate(ids)]
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
    return gammas, dot_x, hard, arrays, names, gap_x, gap_y, selected


def _lower(
    x: ArrayLike, y: ArrayLike, name: str, mode: str = "lines", **style: Any
) -> dict[str, Any]:
    """A trace of the lower panel (smallest gap against gamma)."""
    key = "line" if mode == "lines" else "marker"
    return {"x": x, "y": y, "name": name, "mode": mode, **_BELOW, key: style}


def _gamma_fixed(
    dot_x: np.ndarray,
    hard: np.ndarray,
    gap_x: np.ndarray,
    gap_y: np.ndarray,
    theorem_gamma: float,
) -> list[dict]:
    """The traces of :func:`contextual_gamma_slider` that every γ shows: the hardmax values
    (top), the smallest gap against γ and the theorem's γ (bottom)."""
    thm = ([theorem_gamma] * 2, [gap_y.min(), gap_y.max()])  # theorem's gamma, dashed
    return [
        {
            "x": [v for x in dot_x for v in (x - 0.05, x + 0.05, None)],
            "y": [v for y in hard for v in (y, y, None)],
            "name": "hardmax limit",
            "mode": "lines",
            "line": {"color": "#777777", "width": 3},
        },
        _lower(gap_x, gap_y, "smallest gap", color=PALETTE["blue"]),
        _lower(*thm, "theorem's γ", color=PALETTE["vermillion"], dash="dash"),
    ]


def _gamma_frame(
    moved: np.ndarray,
    gamma: float,
    log10_gap: float,
    dot_x: np.ndarray,
    names: list[Any],
    per: int,
    fixed: list[dict],
    gap_y: np.ndarray,
) -> list[dict]:
    """The traces of :func:`contextual_gamma_slider` at one γ: the dots of each query token's
    ``per`` sequences at their ids ``moved``, the ``fixed`` traces and this γ on the gap curve."""
    dots = [
        {"x": dot_x[k : k + per], "y": moved[k : k + per], "text": names[k : k + per]}
        | {"mode": "markers", "marker": {"color": colour, "size": 8}, "showlegend": False}
        for k, colour in zip(range(0, len(dot_x), per), PALETTE.values(), strict=False)
    ]
    here = max(log10_gap, gap_y.min())  # the selected gamma on the gap curve
    mark = _lower([gamma], [here], "this γ", "markers", color=PALETTE["sky"], size=11)
    return dots + fixed + [mark]


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
    _check_histories(histories, colours)
    last = max(len(h) for g in histories.values() for h in g.values())
    marks = np.unique(np.linspace(1, last, min(last, 48)).round().astype(int))
    floors = {
        "context-free": 1 - context_free,
        f"reported {reported:g}": 1 - reported,
        "permutation": 1 - permutation,
    }
    styles = dict(zip(histories, colours, strict=True))
    medians = {name: _seed_frame(g, "train_acc").median(axis=1) for name, g in histories.items()}
    frames = [
        _paper_scale_frame(e, histories, colours, styles, medians, floors, last) for e in marks
    ]
    return SliderFigure(
        "conll-paper-scale",
        frames,
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


def _check_histories(
    histories: Mapping[str, Mapping[Any, pd.DataFrame]], colours: Sequence[str]
) -> None:
    """Refuse :func:`paper_scale_slider`'s ``histories`` and ``colours`` unless they hold runs
    with the columns it reads, and one colour per model."""
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


def _median_at(
    group: Mapping[Any, pd.DataFrame], epoch: int
) -> float:  # the seeds' median accuracy at the epoch (or their last epoch)
    return float(np.median([h.train_acc.iloc[min(epoch, len(h)) - 1] for h in group.values()]))


#: The reference lines of :func:`paper_scale_slider`: colour, dash and width, in the order of
#: its floors (context-free, reported, permutation).
_FLOOR_STYLES = [
    (PALETTE["vermillion"], "solid", 3),
    ("#888888", "dash", 1),
    ("#888888", "dot", 1),
]


def _paper_scale_frame(
    epoch: int,
    histories: Mapping[str, Mapping[Any, pd.DataFrame]],
    colours: Sequence[str],
    styles: dict[str, str],
    medians: dict[str, pd.Series],
    floors: dict[str, float],
    last: int,
) -> list[dict]:
    """The traces of :func:`paper_scale_slider` at one epoch: each model's median error curve and
    its value at ``epoch``, the reference lines at the ``floors`` (top), the bars (bottom)."""
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
            "y": [1 - _median_at(g, epoch)],
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
        for (k, v), (colour, dash, width) in zip(floors.items(), _FLOOR_STYLES, strict=True)
    ]
    bars = {
        "type": "bar",
        "x": [n.removeprefix("rank 1, ").removesuffix(", 1 layer") for n in histories],
        "y": [_median_at(g, epoch) for g in histories.values()],
        "marker": {"color": colours},
        "showlegend": False,
        **_BELOW,
    }
    return curves + dots + lines + [bars]


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
    checked = [_checked_run(i, run) for i, run in enumerate(runs)]
    _require_summary(summary)
    frames = [
        _approx_frame(x, model, err, ramp, dup, line, target)
        for x, model, err, ramp, dup in checked
    ]
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


def _checked_run(i: int, run: Any) -> tuple[np.ndarray, ...]:
    """Run ``i`` of :func:`approx_line_slider` checked: ``(x, output, error, ramp, duplicate)``."""
    if not isinstance(run, tuple | list) or len(run) != 5:
        raise ValueError(f"runs[{i}] must be (x, output, error, ramp, duplicate)")
    x = _vector(f"runs[{i}] x", run[0])
    model = _vector(f"runs[{i}] output", run[1], len(x))
    err = _vector(f"runs[{i}] error", run[2], len(x))
    masks = [np.asarray(m) for m in run[3:]]
    for what, m in zip(("ramp", "duplicate"), masks, strict=True):
        if m.dtype != bool or m.shape != x.shape:
            raise ValueError(f"runs[{i}] {what} must be a boolean mask of shape {x.shape}")
    return (x, model, err, *masks)


def _dots(colour: str) -> dict[str, Any]:  # markers in the bottom panel
    return {**_BELOW, "mode": "markers", "marker": {"color": PALETTE[colour]}}


def _approx_frame(
    x: np.ndarray,
    model: np.ndarray,
    err: np.ndarray,
    ramp: np.ndarray,
    dup: np.ndarray,
    line: np.ndarray,
    target: np.ndarray,
) -> list[dict]:
    """The traces of :func:`approx_line_slider` at one ``m``: the target and the approximation
    (top), the error and the inputs with a token on a ramp or two tokens in one cell (bottom)."""
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
        {"x": x[dup], "y": err[dup], "name": "two tokens in one cell", **_dots("orange")},
        {"x": x[ramp], "y": err[ramp], "name": "a token on a ramp", **_dots("green")},
    ]
