"""lib.book.checks: glue coercion, number formatting and check records."""

import json
import re

import numpy as np
import pytest

from lib.book import checks

from conftest import ROOT


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
