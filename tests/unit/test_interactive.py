"""lib.book.interactive: the slider figures' HTML, data, static fallback and input checks."""

import base64
import json
import re

import numpy as np
import pytest
import torch
from bs4 import BeautifulSoup

from lib.book import interactive


def softmax_frames(a, betas):
    return [
        [
            {"type": "bar", "x": list(range(len(a))), "y": torch.softmax(b * a, 0).numpy()},
            {"x": [b], "y": [float(b)], "mode": "markers", "xaxis": "x2", "yaxis": "y2"},
        ]
        for b in betas
    ]


@pytest.fixture
def figure():
    a = torch.tensor([0.0, 1.0, 3.0], dtype=torch.float64)
    betas = [0.0, 0.5, 1.0, 2.0]
    return interactive.SliderFigure(
        "softmax-test",
        softmax_frames(a, betas),
        betas,
        label="β",
        description="Softmax weights of three entries at the chosen β.",
        default=2,
        layout=interactive.stacked_layout(({}, {}), ({}, {})),
    )


def test_html_holds_every_frame_an_accessible_slider_and_no_external_script(figure):
    soup = BeautifulSoup(figure.to_html(), "html.parser")
    box = soup.select_one("div.book-interactive")
    assert box["id"] == "interactive-softmax-test" and box["data-default"] == "2"
    slider = box.select_one("input[type=range]")
    assert (slider["min"], slider["max"], slider["value"]) == ("0", "3", "2")
    label = box.select_one(f"label[for={slider['id']}]")
    assert label is not None and label.get_text().startswith("β: ")
    assert slider["aria-valuetext"] == "β 1"
    assert box.select_one(".book-interactive-controls").has_attr("hidden")  # shown by the script
    assert box.select_one(".book-interactive-plot")["aria-label"] == figure.description
    assert not soup.select("script[src]") and "http" not in figure.to_html()
    data = json.loads(box.select_one("script.book-interactive-data").string)
    assert data["labels"] == ["0", "0.5", "1", "2"]
    weights = [frame[0]["y"] for frame in data["frames"]]
    e = np.exp([0.0, 1.0, 3.0])
    assert weights[2] == pytest.approx(e / e.sum(), rel=1e-5)  # 6 significant digits kept
    assert weights[0] == pytest.approx([1 / 3] * 3, rel=1e-5)
    assert data["frames"][0][0]["y"][0] == 0.333333


def test_static_image_is_the_default_frame(figure):
    png = base64.b64decode(figure.png_base64())
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    fig = figure.static_figure()
    bars = [p.get_height() for p in fig.axes[0].patches]
    e = np.exp([0.0, 1.0, 3.0])
    assert bars == pytest.approx(e / e.sum(), rel=1e-5)  # beta = 1, the default
    assert fig.axes[1].lines[0].get_ydata().tolist() == [1.0]
    fig.canvas.draw()  # the two panels are stacked as on the website: one caption fits both
    top, bottom = (ax.get_position() for ax in fig.axes[:2])
    assert top.y0 > bottom.y1 and abs(top.x0 - bottom.x0) < 0.1
    bundle = figure._repr_mimebundle_()
    assert set(bundle) == {"text/html", "image/png", "text/plain"}
    assert bundle["image/png"] in bundle["text/html"]  # the same image inside the HTML


def test_stacked_layout_puts_two_panels_one_above_the_other():
    layout = interactive.stacked_layout(({"title": "x"}, {}), ({}, {"type": "log"}), gap=0.2)
    assert layout["yaxis"]["domain"] == pytest.approx([0.6, 1.0])
    assert layout["yaxis2"]["domain"] == pytest.approx([0.0, 0.4])
    assert layout["xaxis2"]["anchor"] == "y2" and layout["yaxis2"]["type"] == "log"
    with pytest.raises(ValueError, match="one or two panels"):
        interactive.stacked_layout()
    with pytest.raises(ValueError, match="gap"):
        interactive.stacked_layout(({}, {}), gap=0.5)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"name": "Bad Name"}, "name must be"),
        ({"frames": []}, "frames must be a non-empty"),
        ({"values": [1.0]}, "one entry per frame: 1 values for 2 frames"),
        ({"frames": [[{"x": [0], "y": [0]}], []]}, "same number of traces"),
        ({"frames": [[{"type": "pie"}], [{"type": "pie"}]]}, r"\['type'\] must be one of"),
        ({"frames": [[{"x": [0], "y": [np.nan]}]] * 2}, "non-finite"),
        ({"default": 2}, "default"),
        ({"label": " "}, "label must be a non-empty string"),
        ({"description": None}, "description must be a non-empty string"),
        ({"value_format": "{:d}"}, "value_format"),
    ],
)
def test_bad_input_is_refused_naming_the_argument(kwargs, message):
    args = {
        "name": "ok",
        "frames": [[{"x": [0], "y": [0]}], [{"x": [0], "y": [1]}]],
        "values": [0.5, 1.5],
        "label": "β",
        "description": "d",
    } | kwargs
    with pytest.raises(ValueError, match=message):
        interactive.SliderFigure(**args)


def test_frames_beyond_the_size_limit_are_refused():
    big = np.zeros(interactive.MAX_FRAME_NUMBERS // 2 + 1)
    with pytest.raises(ValueError, match=re.escape("MAX_FRAME_NUMBERS")):
        interactive.SliderFigure("big", [[{"x": big, "y": big}]], [1], label="n", description="d")
