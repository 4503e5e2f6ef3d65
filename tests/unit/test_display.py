"""lib.book.display: tables shown the same in every build, in HTML, text and MyST."""

import re

import numpy as np
import pandas as pd
import pytest

from lib.book import checks


def _runs_table():
    """Chapter 3's run summary in miniature: an int column, epochs with a gap, accuracies."""
    return pd.DataFrame(
        {
            "parameters": [20481, 1234567],
            "first epoch past halfway": [3.0, np.nan],
            "train accuracy": [0.912345, 0.5],
        },
        index=["rank 1, 1 layer", "full rank, 1 layer"],
    )


def test_number_table_formats_cells_and_shows_them_the_same_in_html_and_text():
    table = checks.number_table(
        _runs_table(), "conll-runs", {"train accuracy": ".4f"}, missing="not reached"
    )
    assert table.data.loc["rank 1, 1 layer"].tolist() == ["20,481", "3", "0.9123"]
    assert table.data.loc["full rank, 1 layer"].tolist() == ["1,234,567", "not reached", "0.5000"]
    html = table._repr_html_()
    assert html.startswith('<table class="dataframe" id="table-conll-runs">')
    assert "<td>1,234,567</td>" in html and "<td>not reached</td>" in html
    assert repr(table).splitlines()[1].split()[-3:] == ["20,481", "3", "0.9123"]
    assert checks.number_table(_runs_table(), "x", digits=2).data.iloc[0, 2] == "0.91"


def test_number_table_output_is_the_same_in_every_call_with_no_address_or_random_id():
    """The reason it exists: a Styler's HTML has a random T_xxxxx id and its text an address."""
    first = checks.number_table(_runs_table(), "conll-runs", {"train accuracy": ".4f"})
    second = checks.number_table(_runs_table(), "conll-runs", {"train accuracy": ".4f"})
    assert first._repr_html_() == second._repr_html_() and repr(first) == repr(second)
    assert "0x" not in repr(first) and "T_" not in first._repr_html_()
    assert "Styler" not in repr(first) and "Styler" not in first._repr_html_()
    # what it replaces differs between two calls
    styled = [_runs_table().style.format(precision=0)._repr_html_() for _ in range(2)]
    assert styled[0] != styled[1]


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"frame": [[1, 2]]}, "frame must be a pandas DataFrame"),
        ({"name": "Bad Name"}, "name must match"),
        ({"name": 3}, "name must match"),
        ({"formats": [".4f"]}, "formats must be a dict"),
        ({"formats": {"no such column": ".4f"}}, "formats names columns that frame lacks"),
        ({"formats": {"train accuracy": 4}}, "formats['train accuracy'] must be a format spec"),
        ({"formats": {"train accuracy": "d"}}, "formats['train accuracy'] = 'd' cannot format"),
        ({"digits": -1}, "digits must be >= 0, got -1"),
        ({"digits": 1.5}, "digits must be an integer"),
        ({"missing": None}, "missing must be a string, got None"),
    ],
)
def test_number_table_rejects_bad_arguments_naming_them(kwargs, message):
    args = {"frame": _runs_table(), "name": "conll-runs"} | kwargs
    with pytest.raises(ValueError) as err:
        checks.number_table(**args)
    assert message in str(err.value)


def test_html_table_markdown_shows_the_same_cells_as_text():
    """The PDF's form of a table: a pipe table whose cells read back as the DataFrame's text."""
    from markdown_it import MarkdownIt

    frame = pd.DataFrame(
        {"claim": ["a|b holds", "$x_1$ and *y*"], "measured": [0.5, "n\nm"]},
        index=pd.Index(["C1", "C2"], name="check"),
    )
    table = checks.HtmlTable(frame)
    lines = table._repr_markdown_().splitlines()
    # a longtable (it may break across PDF pages); widths: the longest word of header and cells
    # + 1, + 3 of padding, or the median cell if longer: check 9 ("check"), claim 11 (median of 9
    # and 13), measured 12 ("measured")
    assert lines[:4] == ["```{table}", ":class: longtable", ":widths: 9 11 12", ""]
    assert lines[4:6] == ["| check | claim | measured |", "|---|---|---|"]
    assert lines[6] == "| C1 | a\\|b holds | 0.5 |" and lines[-1] == "```"
    long = checks.HtmlTable(pd.DataFrame({"x": [1, 2]}, index=["C19.full.fashion-mnist", "C2"]))
    assert long._repr_markdown_().splitlines()[2] == ":widths: 26 7"  # a word cannot wrap
    # past a line (100 characters), only what the long columns ask above their floor shrinks
    # floors 7 10 9 10 12 (48), asks 7 10 40 40 40 (137): each long column keeps its floor plus
    # (ask - floor) * 52 / 89, rounded: 9 + 18, 10 + 18, 12 + 16
    wide = pd.DataFrame(
        {"status": ["pass"], "claim": ["w " * 60], "source": ["v " * 60], "expected": ["x " * 60]}
    )
    assert checks.HtmlTable(wide)._repr_markdown_().splitlines()[2] == ":widths: 7 10 27 28 28"
    html = MarkdownIt("commonmark").enable("table").render("\n".join(lines[4:-1]))
    cells = re.findall(r"<td>(.*?)</td>", html)
    assert cells == ["C1", "a|b holds", "0.5", "C2", "$x_1$ and *y*", "n m"]


def test_markdown_table_typesets_inline_maths_and_escapes_the_rest():
    r"""``\(...\)`` in a label or cell (what MathJax reads on the website) becomes ``$...$`` in
    the PDF's MyST table, a bar inside it ``\vert``; text around it stays text; a MultiIndex's
    names head the index column."""
    from markdown_it import MarkdownIt

    frame = pd.DataFrame(
        {r"\(\lVert W_K\rVert_F\)": [1.5], "a_b": [r"\(|x|\) is 2 * 3"], "ok": [True]},
        index=pd.MultiIndex.from_tuples([("MNIST", "label")], names=["dataset", "noise"]),
    )
    lines = checks.markdown_table(checks.pretty(frame)).splitlines()
    assert lines[4] == "| dataset noise | $\\lVert W_K\\rVert_F$ | a\\_b | ok |"
    assert lines[6] == "| MNIST label | 1.5 | $\\vert x\\vert $ is 2 \\* 3 | yes |"
    # widths count what a cell shows: the norm's header is 5 symbols, not 18 characters
    assert lines[2] == ":widths: 11 9 12 7"
    html = MarkdownIt("commonmark").enable("table").render("\n".join(lines[4:-1]))
    assert re.findall(r"<td>(.*?)</td>", html)[2] == "$\\vert x\\vert $ is 2 * 3"
    with pytest.raises(ValueError, match="frame must be a pandas DataFrame"):
        checks.markdown_table([1])
