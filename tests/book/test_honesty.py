"""The prose follows the computation: a check forced to fail changes its verdict and its claims row.

Every check a chapter records glues its prose verdict as ``verdict-<id>`` from the record's result
(``lib.book.checks.record(..., verdict=...)``). Chapter 1 is executed twice in fresh kernels,
once as usual and once with every one of its checks forced to fail (``BOOK_FORCE_FAIL``): every
record must then say FAIL, and every verdict sentence must change.
"""

from __future__ import annotations

import json

import pytest
from test_determinism import glued_values

from conftest import ROOT

pytestmark = pytest.mark.build
CHAPTER = ROOT / "chapters" / "01_boltzmann.md"


def records(glued: dict) -> dict:
    import ast

    return {
        k[len("check-") :]: json.loads(ast.literal_eval(v))
        for k, v in glued.items()
        if k.startswith("check-")
    }


def test_forced_failure_flips_every_verdict_and_claims_row(monkeypatch):
    monkeypatch.setenv("BOOK_BUILD", "1")
    normal = glued_values(CHAPTER)
    checks = records(normal)
    assert len(checks) >= 5 and all(r["passed"] for r in checks.values())
    verdicts = {k[len("verdict-") :] for k in normal if k.startswith("verdict-")}
    assert verdicts == set(checks), (
        "every check of the chapter states its outcome through verdict-<id>"
    )
    text = CHAPTER.read_text()
    assert all(f"verdict-{check}" in text for check in checks), "every verdict is used in the prose"

    monkeypatch.setenv("BOOK_FORCE_FAIL", ",".join(checks))
    forced = glued_values(CHAPTER)
    assert all(r["passed"] is False for r in records(forced).values())
    for check in checks:
        assert forced[f"verdict-{check}"] != normal[f"verdict-{check}"], check
    numbers = {
        k for k, v in normal.items() if not k.startswith(("check-", "verdict-")) and _number(v)
    }
    assert {k: forced[k] for k in numbers} == {k: normal[k] for k in numbers}, (
        "forcing changes no measurement"
    )


def _number(text: str) -> bool:
    import ast

    try:
        return isinstance(ast.literal_eval(text), int | float)
    except (ValueError, SyntaxError):
        return False
