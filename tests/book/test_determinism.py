"""Executing a chapter twice in fresh kernels gives identical glued values.

Each execution holds the machine-wide execution lock of the book's builds, as a build's chapter
does: two kernels at once oversubscribe a 2-core machine (a Chapter 5 cell of 25 s passed a
300 s timeout while a build ran beside this test)."""

from __future__ import annotations

import jupytext
import pytest
from nbclient import NotebookClient

from book_sphinx.execution import execution_slot

from conftest import ROOT

pytestmark = pytest.mark.build
CHAPTERS = sorted((ROOT / "chapters").glob("[0-9][0-9]_*.md"))


def glued_values(path) -> dict:
    nb = jupytext.read(path)
    client = NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    )
    with execution_slot(f"the determinism test of {path.stem}"):
        client.execute()
    out = {}
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            key = output.get("metadata", {}).get("scrapbook", {}).get("name")
            if key:  # outside myst-nb the mime types carry scrapbook's prefix
                out[key] = next(v for k, v in output["data"].items() if k.endswith("text/plain"))
    return out


@pytest.mark.parametrize("path", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_two_runs_identical(path, monkeypatch):
    monkeypatch.setenv("BOOK_BUILD", "1")  # as in a build: no progress bars
    first, second = glued_values(path), glued_values(path)
    assert len(first) >= 20
    assert first == second
