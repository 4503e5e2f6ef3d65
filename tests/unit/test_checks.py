"""lib.book.checks: glue coercion, number formatting and check records."""

import json
import re

import mpmath
import numpy as np
import pandas as pd
import pytest
import torch

from lib.book import checks

from conftest import ROOT


@pytest.fixture
def glued(monkeypatch):
    store = {}
    import myst_nb

    monkeypatch.setattr(
        myst_nb, "glue", lambda key, value, display=True: store.__setitem__(key, (value, display))
    )
    checks._RECORDED.clear()
    yield store
    checks._RECORDED.clear()


def test_glue_coerces_to_python_scalars(glued):
    checks.glue("a", np.float64(1.5))
    checks.glue("b", np.int64(3))
    checks.glue("c", torch.tensor(2.5))
    checks.glue("d", "text")
    checks.glue_many(e=np.float32(0.25), f=7)
    assert glued["a"] == (1.5, False) and type(glued["a"][0]) is float
    assert type(glued["b"][0]) is int and glued["b"][0] == 3
    assert type(glued["c"][0]) is float
    assert glued["d"][0] == "text"
    assert glued["e"][0] == 0.25 and glued["f"][0] == 7


@pytest.mark.parametrize(
    "key, value, match",
    [
        ("bad:key", 1.0, "key must match"),
        ("", 1.0, "key must match"),
        ("x", np.array([1.0, 2.0]), "scalar"),
        ("x", float("nan"), "finite"),
        ("x", mpmath.mpf(1), "format it with lib.book.checks.fmt"),
        ("x", [1, 2], "real scalar"),
    ],
)
def test_glue_rejects(glued, key, value, match):
    with pytest.raises(ValueError, match=match):
        checks.glue(key, value)


def test_fmt():
    assert checks.fmt(0.052180722) == "0.0522"
    assert checks.fmt(2.0674987e-9) == "2.07e-9"
    assert checks.fmt(1.5e12) == "1.50e12"
    assert checks.fmt(12) == "12"
    assert checks.fmt(0.0) == "0"
    assert checks.fmt(np.float64(3.14159), digits=2) == "3.1"
    with mpmath.workdps(600):
        tiny = mpmath.mpf("3.38e-488")
    assert checks.fmt(tiny) == "3.38e-488"
    with pytest.raises(ValueError):
        checks.fmt("1.0")
    with pytest.raises(ValueError, match="digits must be >= 1"):
        checks.fmt(1.0, digits=0)


def test_record_fills_the_registered_text_and_glues_json(glued, registry):
    entry = checks.record("T1", 0.5, np.bool_(True), bound=2.25)
    value, display = glued["check-T1"]
    assert display is False and json.loads(value) == entry
    assert entry == {
        "id": "T1",
        "section": "sec-a",
        "kind": "test",
        "basis": "paper",
        "scale": "sampled",
        "claim": "gap above 2.2 in {all} cases",
        "expected": "<= 1",
        "threshold": "the statement",
        "why": "measured independently",
        "source": "K&S Thm 2",
        "measured": "0.5",
        "passed": True,
    }
    assert glued["verdict-T1"][0] == "holds at 2.25"
    checks.record("D1", "text", False, scale="exact")
    checks.not_run("V.x", "no data here", where="MNIST")
    table = checks.checks_table()
    assert list(table.data.index) == ["T1", "D1", "V.x"]
    assert list(table.data.columns) == ["Status", "Claim", "Measured"]  # fits beside the text
    assert list(table.data.Status) == ["pass", "FAIL", "not run"]
    expected = [c.split(". Expected: ")[1].split(". Scale")[0] for c in table.data.Claim]
    assert expected == ["<= 1 (paper)", "0 (definition)", "p < 0.05 (paper)"]
    assert table.data.loc["T1", "Claim"].endswith("Scale: sampled. Source: K&S Thm 2.")
    assert table.data.loc["V.x", "Measured"] == "not run: no data here"
    assert glued["verdict-V.x"][0] == "did not run (no data here)"
    html = table._repr_html_()
    assert 'class="dataframe checks-table"' in html and "T_" not in html and "0x" not in repr(table)
    assert json.loads(glued["check-V.x"][0])["passed"] is None


def test_record_follows_a_forced_failure(glued, registry, monkeypatch):
    """BOOK_FORCE_FAIL lists checks whose record must say FAIL whatever was measured."""
    monkeypatch.setenv("BOOK_FORCE_FAIL", "D1, T1")
    assert checks.record("T1", 1.0, True, bound=1)["passed"] is False
    assert checks.record("V.y", 1.0, True, where="w")["passed"] is True
    assert json.loads(glued["check-T1"][0])["passed"] is False
    assert glued["verdict-T1"][0] == "fails at 1"


@pytest.mark.parametrize(
    "args, kwargs, match",
    [
        (("T 1", 1.0, True), {}, "not registered"),
        (("C404", 1.0, True), {}, "not registered"),
        (("T1", 1.0, 1), {"bound": 1}, "passed must be True or False"),
        (("T1", [1, 2], True), {"bound": 1}, "measured must be"),
        (("T1", 1.0, True), {"bound": 1, "scale": "exact"}, "scale must be one of"),
        (("D1", 1.0, True), {}, "scale must be one of"),
        (("T1", 1.0, True), {}, "needs the field 'bound'"),
        (("T1", 1.0, True), {"bound": 1, "extra": 2}, "not named by its registered text"),
        (("T1", float("nan"), True), {"bound": 1}, "finite"),
    ],
)
def test_record_rejects(glued, registry, args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        checks.record(*args, **kwargs)


def test_pretty_formats_float_columns_only():
    t = pd.DataFrame({"n": [2, 3], "gap": [0.0522, 2.07e-9], "ok": [True, False], "s": ["a", "b"]})
    out = checks.pretty(t)
    assert list(out.gap) == ["0.0522", "2.07e-9"]
    assert list(out.n) == [2, 3] and list(out.ok) == ["yes", "no"]  # words, not Python's bools
    keyed = checks.pretty(t.set_index(["n", "ok"]))
    assert list(keyed.index) == [(2, "yes"), (3, "no")]
    assert list(checks.pretty(t.set_index("ok")).index) == ["yes", "no"]
    with pytest.raises(ValueError, match="DataFrame"):
        checks.pretty([1, 2])


def test_fmt_rounding_edges_and_non_finite():
    assert checks.fmt(9999.9) == "1.00e4"
    assert checks.fmt(-9999.96) == "-1.00e4"
    assert checks.fmt(mpmath.mpf("9999.9")) == "1.00e4"
    assert checks.fmt(mpmath.mpf(1e10)) == "1.00e10"
    for bad in (float("nan"), float("inf"), 10**400):
        with pytest.raises(ValueError):
            checks.fmt(bad)


def test_keys_with_trailing_newline_refused(glued):
    with pytest.raises(ValueError, match="key must match"):
        checks.glue("k\n", 1)
    with pytest.raises(ValueError, match="not registered"):
        checks.record("C1\n", 1.0, True)


def test_pretty_shows_missing_values_and_rejects_infinities():
    t = pd.DataFrame({"x": [1.5e-20, np.nan]})
    assert checks.pretty(t)["x"].tolist() == ["1.50e-20", "—"]
    assert checks.pretty(t, missing="n/a")["x"].tolist()[1] == "n/a"
    with pytest.raises(ValueError, match="finite"):
        checks.pretty(pd.DataFrame({"x": [np.inf]}))


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


def test_phone_card_labels_follow_the_checks_table_columns(glued):
    """On a phone each row of a chapter's check table is a card whose labels come from the
    stylesheet: they must name the columns in the order checks_table gives them."""
    css = (ROOT / "_static" / "book.css").read_text()
    labels = dict(
        re.findall(
            r'table\.checks-table td:nth-of-type\((\d+)\)::before \{ content: "([\w, ]+)"', css
        )
    )
    columns = list(checks.checks_table().data.columns)
    assert [labels[str(i)] for i in range(1, len(labels) + 1)] == columns
    assert "<th>Check</th>" in checks.checks_table()._repr_html_()  # one header row
    assert "| Check | Status | Claim | Measured |" in checks.checks_table()._repr_markdown_()
    assert re.search(r'table\.checks-table tbody th::before \{ content: "Check"', css)


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


def test_joined_lists_words_as_prose():
    assert checks.joined(["a"]) == "a"
    assert checks.joined(iter(["a", "b"])) == "a and b"
    assert checks.joined(["a", "b", "c"]) == "a, b and c"
    for bad in ([], ["a", 1]):
        with pytest.raises(ValueError, match="words"):
            checks.joined(bad)
