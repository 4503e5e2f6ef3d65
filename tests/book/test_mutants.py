"""`make mutate`'s quick subset, on every `make test`: the mutants marked ``quick`` in
tools/mutants.toml, each planted in a scratch copy of lib, are caught by the test of the ledger
that was tightened to catch them (Chapter 1, executed as a reader's Jupyter runs it). The whole
table runs in `make mutate` (nightly); its last outcome is on the claims page."""

from __future__ import annotations

import importlib.util
import sys
import tempfile
from pathlib import Path

import pytest

from book_sphinx.execution import execution_slot

from conftest import ROOT

pytestmark = pytest.mark.build
_spec = importlib.util.spec_from_file_location("mutate", ROOT / "tools" / "mutate.py")
mutate = importlib.util.module_from_spec(_spec)
sys.modules["mutate"] = mutate  # its dataclasses look their module up by name
_spec.loader.exec_module(mutate)

#: The test each quick mutant must fail (what the review found passing with it in place).
EXPECTED = {
    "lse-as-max": "B1.3",  # a maximum is a non-expansion too: B1.3 checks the identity with mm
    "boltz-mp-ignores-beta": "C2",  # the exact operator at beta != 1
    "lemma1-check-log-not-squared": "B1.2",  # exact decisions against the table's columns
}


def test_the_quick_mutants_are_caught_by_the_tests_tightened_for_them():
    quick = [m for m in mutate.mutants() if m.quick]
    assert {m.id for m in quick} == set(EXPECTED)
    with tempfile.TemporaryDirectory(prefix="book-mutate-") as tmp:
        copy = mutate.scratch_copy(Path(tmp))
        with execution_slot("the quick mutants"):
            failing = mutate.baseline(copy, {c for m in quick for c in m.chapters}, timeout=900)
            rows = [mutate.run_mutant(m, copy, 900, failing) for m in quick]
    for row in rows:
        assert row["outcome"] == "caught", row
        assert EXPECTED[row["id"]] in row["failed_checks"], row
