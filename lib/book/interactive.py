"""Interactive figures for the website: a plot and a slider, every position computed by ``lib``.

A chapter computes the figure's data at every slider position when the book is built (one
*frame* per position: a list of plotly traces) and returns a :class:`SliderFigure`. On the
website the book's script (``_ext/book_sphinx/static/book-interactive.js``, served from the site's
``_static/``) draws the frame the slider selects with plotly.js, which the book serves from its own
static files too: no kernel, no server and no network are needed, and the figure is exact at every
position because nothing is interpolated in the browser. The slider is an HTML
``<input type="range">`` with a label and a spoken value, so it works from the keyboard (arrow
keys, Home, End) and with assistive technology, which plotly's own SVG sliders do not.

Where no script runs — the downloaded notebook, print, the LaTeX/PDF builders — the same output
carries a static PNG of the default position, drawn with matplotlib from the same traces.

Used by one figure in each of Chapters 1-7, through :mod:`lib.book.figures`.
"""

from __future__ import annotations

import base64
import html
import io
import json
import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from .._validate import positive_int, short_repr

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["SliderFigure", "stacked_layout", "MAX_FRAME_NUMBERS", "TRACE_TYPES"]

#: Trace types the static fallback can draw (plotly's names).
TRACE_TYPES = ("scatter", "bar", "heatmap")
#: The most numbers all frames together may hold, about 1 MB of JSON at the 6 digits kept; a
#: chapter page, figures included, must stay under 2 MB.
MAX_FRAME_NUMBERS = 150_000
_NAME = re.compile(r"[a-z][a-z0-9-]{0,59}")
_DIGITS = 6


def _compact(value: Any, where: str) -> tuple[Any, int]:
    """Lists of floats rounded to 6 significant digits (JSON size), arrays to lists; counts the
    numbers."""
    out: Any  # a dict or a list, as value is
    if isinstance(value, dict):
        out, n = {}, 0
        for key, item in value.items():
            out[key], k = _compact(item, f"{where}.{key}")
            n += k
        return out, n
    if isinstance(value, list | tuple) or hasattr(value, "__array__"):  # arrays, Series, tensors
        array = np.asarray(value)
        if array.dtype.kind in "fiu":
            if array.dtype.kind == "f" and not np.all(np.isfinite(array)):
                raise ValueError(f"{where} holds non-finite values")
            if array.dtype.kind == "f":
                array = np.vectorize(lambda v: float(f"{v:.{_DIGITS}g}"), otypes=[float])(array)
            return array.tolist(), int(array.size)
        out = [_compact(item, f"{where}[{i}]") for i, item in enumerate(value)]
        return [o for o, _ in out], sum(k for _, k in out)
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float):
        if not np.isfinite(value):
            raise ValueError(f"{where} is {value}")
        return float(f"{value:.{_DIGITS}g}"), 1
    return value, 0


class SliderFigure:
    """A plotly figure with one slider; its output shows interactively on the website and as a
    static PNG of the default position elsewhere.

    Args:
        name: the figure's id on the page (lower-case letters, digits, ``-``; unique per page).
        frames: one list of traces per slider position, each trace a dict in plotly's schema
            (``type`` one of :data:`TRACE_TYPES`, default ``"scatter"``; ``x``, ``y`` (and ``z``
            for a heatmap) as arrays or lists; ``name``, ``mode``, ``line``, ``marker``,
            ``xaxis``/``yaxis`` ``"x2"``/``"y2"`` for a second panel). Every frame must have the
            same number of traces.
        values: the slider's value at each position (numbers), same length as ``frames``.
        label: what the slider sets, e.g. ``"inverse temperature β"``.
        value_format: format of a value in the label and in what a screen reader says
            (``"{:g}"``).
        default: the position shown first and in the static image.
        layout: plotly layout (axis titles, ranges, ``xaxis2``/``yaxis2`` domains for two panels);
            fonts and colours follow the page's light or dark theme.
        description: a text description of what the figure shows and how it changes along the
            slider: the plot's ``aria-label``, the static image's alt text and the notebook's
            plain-text output.
        height: plot height in CSS pixels (the width follows the column).

    Raises:
        ValueError: for a bad name, no frames, frames and values of different lengths, frames
            with different trace counts, an unknown trace type, non-finite data, a default out
            of range, an empty label or description, or more than :data:`MAX_FRAME_NUMBERS`
            numbers in all frames.
    """

    def __init__(
        self,
        name: str,
        frames: Sequence[Sequence[dict]],
        values: Iterable[float],
        *,
        label: str,
        description: str,
        value_format: str = "{:g}",
        default: int = 0,
        layout: dict | None = None,
        height: int = 380,
    ) -> None:
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise ValueError(
                "name must be lower-case letters, digits and '-' (up to 60), "
                f"got {short_repr(name)}"
            )
        if not isinstance(frames, Sequence) or isinstance(frames, str) or not len(frames):
            raise ValueError(
                f"frames must be a non-empty list of trace lists, got {short_repr(frames)}"
            )
        values = list(values)
        if len(values) != len(frames):
            raise ValueError(
                f"values must have one entry per frame: {len(values)} values for "
                f"{len(frames)} frames"
            )
        counts = {len(f) if isinstance(f, Sequence) else -1 for f in frames}
        if len(counts) != 1 or counts == {-1} or counts == {0}:
            raise ValueError(
                "every frame must be a non-empty list with the same number of traces, "
                f"got counts {sorted(counts)}"
            )
        for i, frame in enumerate(frames):
            for j, trace in enumerate(frame):
                if not isinstance(trace, dict):
                    raise ValueError(f"frames[{i}][{j}] must be a dict, got {short_repr(trace)}")
                kind = trace.get("type", "scatter")
                if kind not in TRACE_TYPES:
                    raise ValueError(
                        f"frames[{i}][{j}]['type'] must be one of {TRACE_TYPES}, got {kind!r}"
                    )
        for what, text in (("label", label), ("description", description)):
            if not isinstance(text, str) or not text.strip():
                raise ValueError(f"{what} must be a non-empty string, got {short_repr(text)}")
        self.default = positive_int("default", default, minimum=0, maximum=len(frames) - 1)
        self.height = positive_int("height", height, minimum=200, maximum=1200)
        self.name, self.label, self.description = name, label, description
        try:
            self.labels = [value_format.format(v) for v in values]
        except (ValueError, TypeError, IndexError, KeyError) as exc:
            raise ValueError(
                f"value_format {value_format!r} cannot format the values: {exc}"
            ) from None
        self.values = values
        self.frames, numbers = _compact([list(f) for f in frames], "frames")
        if numbers > MAX_FRAME_NUMBERS:
            raise ValueError(
                f"the frames hold {numbers:,} numbers, more than MAX_FRAME_NUMBERS "
                f"({MAX_FRAME_NUMBERS:,}); use fewer positions or points"
            )
        self.layout, _ = _compact(dict(layout or {}), "layout")

    # -- the website ---------------------------------------------------------------------------
    def to_html(self) -> str:
        """The HTML of the figure: the static image, the plot's container, the slider and the
        frames as JSON (no script: ``book-interactive.js`` finds it by its class)."""
        data = {
            "frames": self.frames,
            "labels": self.labels,
            "layout": self.layout,
            "height": self.height,
        }
        text = json.dumps(data, separators=(",", ":"), allow_nan=False).replace("</", "<\\/")
        fid = f"interactive-{self.name}"
        alt = html.escape(self.description, quote=True)
        return (
            f'<div class="book-interactive" id="{fid}" data-default="{self.default}">'
            f'<img class="book-interactive-static" alt="{alt}" '
            f'src="data:image/png;base64,{self.png_base64()}">'
            f'<div class="book-interactive-plot" role="img" aria-label="{alt}" hidden></div>'
            f'<div class="book-interactive-controls" hidden>'
            f'<label for="{fid}-slider">{html.escape(self.label)}: '
            f'<output id="{fid}-value" for="{fid}-slider">{html.escape(self.labels[self.default])}'
            f"</output></label>"
            f'<input type="range" id="{fid}-slider" min="0" max="{len(self.frames) - 1}" step="1" '
            f'value="{self.default}" aria-valuetext="{html.escape(self.label)} '
            f'{html.escape(self.labels[self.default])}"></div>'
            f'<script type="application/json" class="book-interactive-data">{text}</script>'
            f"</div>"
        )

    # -- everywhere else -------------------------------------------------------------------------
    def static_figure(self, index: int | None = None) -> Figure:
        """A matplotlib figure of one position (default: ``default``), drawn from the same
        traces: lines and markers, bars and heatmaps, one panel or two stacked as on the
        website."""
        from . import plotting

        index = self.default if index is None else index
        index = positive_int("index", index, minimum=0, maximum=len(self.frames) - 1)
        two = any(t.get("xaxis") == "x2" for t in self.frames[index])
        # two panels one above the other, as on the website (stacked_layout), so that one
        # caption ("top ... bottom") is true of the live figure and of this image
        fig, axes = plotting.figure("full", 0.75 if two else 0.42, nrows=2 if two else 1)
        axes = list(np.atleast_1d(axes))
        for trace in self.frames[index]:
            ax = axes[1 if trace.get("xaxis") == "x2" else 0]
            kind = trace.get("type", "scatter")
            colour = (trace.get("line") or trace.get("marker") or {}).get("color")
            label = trace.get("name") if trace.get("showlegend", True) else None
            if kind == "heatmap":
                z = np.asarray(trace["z"], dtype=float)
                x, y = np.asarray(trace["x"]), np.asarray(trace["y"])
                ax.imshow(
                    z,
                    origin="lower",
                    extent=(x.min(), x.max(), y.min(), y.max()),
                    aspect="auto",
                    cmap="viridis",
                    vmin=trace.get("zmin"),
                    vmax=trace.get("zmax"),
                )
            elif kind == "bar":
                ax.bar(trace["x"], trace["y"], color=colour, label=label)
            else:
                mode = trace.get("mode", "lines")
                dash = {"dash": "--", "dot": ":", "dashdot": "-."}.get(
                    (trace.get("line") or {}).get("dash"),  # type: ignore[arg-type]  # None: "-"
                    "-",
                )
                style = ("o" if "markers" in mode else "") + (dash if "lines" in mode else "")
                ax.plot(trace["x"], trace["y"], style, color=colour, label=label, ms=4)
        for ax, suffix in zip(axes, ("", "2"), strict=False):
            xa, ya = self.layout.get(f"xaxis{suffix}", {}), self.layout.get(f"yaxis{suffix}", {})
            ax.set(xlabel=_title(xa), ylabel=_title(ya))
            if xa.get("type") == "log":
                ax.set_xscale("log")
            if ya.get("type") == "log":
                ax.set_yscale("log")
            if xa.get("range") and xa.get("type") != "log":
                ax.set_xlim(*xa["range"])
            if ya.get("range") and ya.get("type") != "log":
                ax.set_ylim(*ya["range"])
            if ax.get_legend_handles_labels()[1]:
                ax.legend(fontsize=7)
        fig.suptitle(f"{self.label} = {self.labels[index]}", fontsize=9)
        return fig

    def png_base64(self) -> str:
        """The static image of the default position, PNG, base64."""
        import matplotlib.pyplot as plt

        fig = self.static_figure()
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
        plt.close(fig)
        return base64.b64encode(buffer.getvalue()).decode("ascii")

    def _repr_mimebundle_(self, include: object = None, exclude: object = None) -> dict[str, str]:
        return {
            "text/html": self.to_html(),
            "image/png": self.png_base64(),
            "text/plain": f"Interactive figure: {self.description}",
        }


def stacked_layout(*panels: tuple[dict, dict], gap: float = 0.16) -> dict:
    """A plotly layout with the panels one above the other (readable on a phone's narrow column):
    ``panels`` are ``(xaxis, yaxis)`` dicts, top first; the first panel's traces use ``x``/``y``,
    the second's ``x2``/``y2``.

    Raises:
        ValueError: for no panel, more than two, or a gap outside ``[0, 0.5)``.
    """
    if not 1 <= len(panels) <= 2:
        raise ValueError(f"stacked_layout takes one or two panels, got {len(panels)}")
    if not 0 <= gap < 0.5:
        raise ValueError(f"gap must lie in [0, 0.5), got {gap!r}")
    height = (1 - gap * (len(panels) - 1)) / len(panels)
    layout = {}
    for i, (xaxis, yaxis) in enumerate(panels):
        suffix = "" if i == 0 else str(i + 1)
        top = 1 - i * (height + gap)
        layout[f"xaxis{suffix}"] = {**xaxis, "anchor": f"y{suffix}", "domain": [0, 1]}
        layout[f"yaxis{suffix}"] = {**yaxis, "anchor": f"x{suffix}", "domain": [top - height, top]}
    return layout


def _title(axis: dict) -> str | None:
    title = axis.get("title")
    if isinstance(title, dict):
        title = title.get("text")
    return re.sub(r"<[^>]+>", "", title) if isinstance(title, str) else None
