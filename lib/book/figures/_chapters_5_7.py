"""The slider figures of Chapters 5-7 (LHSL's max-affine partition and cross-attention lookup,
and the book's trained models), built from the numbers the chapters compute; re-exported by
:mod:`lib.book.figures`.

* :func:`partition_slider` — Chapter 5, a max-affine partition's indicator error against β;
* :func:`context_length_slider` — Chapter 6, the cross-attention lookup against its context
  length;
* :func:`capacity_slider` — Chapter 7, the share of labels training memorizes against the
  feed-forward width, for each number of sequences;
* :func:`lookup_slider` — Chapter 7, the partition a trained lookup layer finds against the
  construction's grid, for each grid side.

Every function raises :class:`ValueError`, naming the argument, for input of the wrong shape or
length (and :class:`~lib.book.interactive.SliderFigure` for a bad ``default``).

Source: the book's own figures of LHSL (NeurIPS 2025), Chapters 5 and 6, and of Chapter 7's
trained models (K&S Corollary 1's count, LHSL's lookup).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ..._validate import real_array
from ..interactive import SliderFigure, stacked_layout
from ..plotting import PALETTE
from ._shared import _BELOW, _per_position, _require_summary, _vector

__all__ = [
    "partition_slider",
    "context_length_slider",
    "capacity_slider",
    "lookup_slider",
]


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
    betas, pixel_axis, cut_x, centres, pixel_errors, cut_weights = _checked_partition_args(
        betas, pixel_axis, pixel_errors, cut_x, cut_weights, centres, colours
    )
    n = len(centres)
    ends = [cut_x[0], cut_x[-1]]
    frames = [
        _partition_frame(e, w, pixel_axis, cut_x, centres, colours, n, ends)
        for e, w in zip(pixel_errors, cut_weights, strict=True)
    ]
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
        frames,
        betas,
        label="inverse temperature β",
        value_format="{:.3g}",
        default=default,
        layout=stacked_layout(square, along) | {"showlegend": False},
        height=600,
        description=_PARTITION_DESCRIPTION,
    )


#: The text description of :func:`partition_slider`'s figure.
_PARTITION_DESCRIPTION = (
    "Two panels, one above the other. Top: a heat map over the square from -1.5 to 1.5 "
    "in both coordinates of the distance between the softmax weights and the partition "
    "indicator, averaged over each pixel, with the seven centres as dots in their cells' "
    "colours and a dashed horizontal line along the cut x2 = 0. Bottom: the seven "
    "softmax weights along that cut, one curve per cell in the same colours. At small "
    "beta the distance is large over most of the square and the weights along the cut "
    "are smooth and spread out; as beta grows the distance collapses onto bright bands "
    "along the cell boundaries, which narrow until they are thinner than a pixel and "
    "fade, and the weights along the cut become steps from 0 to 1 at the boundaries."
)


def _checked_partition_args(
    betas: ArrayLike,
    pixel_axis: ArrayLike,
    pixel_errors: Sequence[ArrayLike],
    cut_x: ArrayLike,
    cut_weights: Sequence[ArrayLike],
    centres: ArrayLike,
    colours: Sequence[str],
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, list[Any], list[Any]]:
    """:func:`partition_slider`'s arguments checked: ``betas``, ``pixel_axis``, ``cut_x`` and
    ``centres`` as arrays, ``pixel_errors`` and ``cut_weights`` as lists of one per position."""
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
    return betas, pixel_axis, cut_x, centres, pixel_errors, cut_weights


def _partition_frame(
    err: Any,
    weights: Iterable[Any],
    pixel_axis: np.ndarray,
    cut_x: np.ndarray,
    centres: np.ndarray,
    colours: Sequence[str],
    n: int,
    ends: list[Any],
) -> list[dict]:  # rows of pixel_errors, cut_weights
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
    line, target, sizes, outputs, stored, sups = _checked_length_args(
        line, target, sizes, outputs, stored, sups
    )
    _require_summary(summary)
    styles = _length_styles()
    return SliderFigure(
        "cross-length",
        [
            _length_frame(i, line, target, outputs, stored, sizes, sups, styles)
            for i in range(len(sizes))
        ],
        sizes,
        label="context length N",
        default=default,
        description="Top: the target sin(πx) on [0, 1] and the output of the cross-attention "
        "lookup whose context holds N tokens, a staircase with one smooth step per token, with "
        "the value each token stores. Bottom: the largest error on the lattice against N on "
        f"log-log axes, with the chosen N marked. As N grows the steps narrow; {summary}.",
        layout=stacked_layout(
            (_axis("x"), _axis("f(x)", range=[-0.05, 1.1])),
            (
                _axis("context length N", type="log", tickvals=[1, 2, 5, 10, 20, sizes[-1]]),
                _axis(
                    "largest error on the lattice", type="log", tickvals=[0.05, 0.1, 0.2, 0.5, 1]
                ),
            ),
            gap=0.2,
        ),
        height=560,
    )


def _checked_length_args(
    line: ArrayLike,
    target: ArrayLike,
    sizes: ArrayLike,
    outputs: Sequence[ArrayLike],
    stored: Sequence[tuple[ArrayLike, ArrayLike]],
    sups: ArrayLike,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[Any], list[Any], list[Any]]:
    """:func:`context_length_slider`'s arrays checked: ``line``, ``target`` and ``sizes`` as
    arrays, ``outputs``, ``stored`` and ``sups`` as lists of one per position."""
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
    return line, target, sizes, outputs, stored, sups


def _length_styles() -> dict[str, dict[str, Any]]:
    """The style of each trace of :func:`context_length_slider`, by the trace's name."""
    blue = {"color": PALETTE["blue"]}
    now = {"color": PALETTE["vermillion"], "size": 10}  # the current length
    return {  # trace name: its style
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


def _length_frame(
    i: int,
    line: np.ndarray,
    target: np.ndarray,
    outputs: list[Any],
    stored: list[Any],
    sizes: np.ndarray,
    sups: list[Any],
    styles: dict[str, dict[str, Any]],
) -> list[dict]:
    """The traces of :func:`context_length_slider` at position ``i``, styled by ``styles``."""
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


def _axis(title: str, **more: Any) -> dict[str, Any]:
    return {"title": {"text": title}, **more}


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
    cubes = _checked_cubes(shares, reach, len(sizes), len(widths))
    return SliderFigure(
        "trained-capacity",
        [_capacity_frame(i, cubes, widths) for i in range(len(sizes))],
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


def _checked_cubes(
    shares: Mapping[str, ArrayLike], reach: Mapping[str, ArrayLike], sizes: int, widths: int
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """:func:`capacity_slider`'s ``shares`` and ``reach`` checked: per head, its shares as a float
    array ``(sizes, widths, seeds)`` and its widths of Corollary 1's count ``(sizes,)``."""
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
        if shape != (sizes, widths) or not ((cube >= 0) & (cube <= 1)).all():
            raise ValueError(
                f"shares[{head!r}] must hold shares in [0, 1] of shape "
                f"({sizes}, {widths}, seeds), got shape {cube.shape}"
            )
        cubes[head] = (cube, _vector(f"reach[{head!r}]", reach[head], sizes))
    return cubes


#: The colours of :func:`capacity_slider`'s heads, in the order of its ``shares``.
_HEAD_COLOURS = [PALETTE["blue"], PALETTE["orange"], PALETTE["green"]]


def _capacity_frame(
    i: int, cubes: dict[str, tuple[np.ndarray, np.ndarray]], widths: np.ndarray
) -> list[dict]:
    """The traces of :func:`capacity_slider` at position ``i``: per head, every seed's share,
    their median and the width of Corollary 1's count."""
    traces = []
    for (head, (cube, w_star)), colour in zip(cubes.items(), _HEAD_COLOURS, strict=False):
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
    _require_summary(summary)
    images = _checked_images(sides, len(pixel_axis), own, matched, keys)
    square = {"range": [0, 1], "constrain": "domain"}
    return SliderFigure(
        "trained-lookup",
        [_lookup_frame(m, cells, to, k, pixel_axis) for m, cells, to, k in images],
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


def _checked_images(
    sides: np.ndarray,
    q: int,
    own: Sequence[ArrayLike],
    matched: Sequence[ArrayLike],
    keys: Sequence[ArrayLike],
) -> list[tuple[Any, ...]]:
    """:func:`lookup_slider`'s cells and keys checked: per position ``(m, own, matched, keys)``,
    the cells as integer arrays ``(q, q)`` and the keys as an array ``(K, 2)``."""
    own = _per_position("own", own, len(sides))
    matched = _per_position("matched", matched, len(sides))
    keys = _per_position("keys", keys, len(sides))
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
    return images


def _lookup_frame(
    m: int, cells: np.ndarray, to: np.ndarray, k: np.ndarray, pixel_axis: np.ndarray
) -> list[dict]:
    """The traces of :func:`lookup_slider` for the grid side ``m``: the pixels' matched cells,
    the grid's lines and the learned keys ``k``."""
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
