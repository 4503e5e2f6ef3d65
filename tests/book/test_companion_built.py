"""The built site's exercises: solutions folded and numbered (the checks of the sources are in
``unit/test_companion.py``)."""

from __future__ import annotations

import re

import pytest
from test_companion import CHAPTERS, exercises, solutions
from test_site import soup


@pytest.mark.build
@pytest.mark.parametrize("path", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_built_solutions_are_folded_and_numbered(site, path):
    """On the site each solution is a folded box (sphinx-togglebutton's ``dropdown``) naming its
    exercise by the number the exercise box shows."""
    page = soup(site, f"chapters/{path.stem}")
    boxes = page.select("div.exercise")
    folded = page.select("div.solution")
    assert len(boxes) == len(exercises(path)) and len(folded) == len(solutions(path))
    numbers = {
        re.search(r"Exercise\s+([\d.]+)", b.select_one("p.admonition-title").get_text()).group(1)
        for b in boxes
    }
    for box in folded:
        assert "dropdown" in box["class"]
        title = box.select_one("p.admonition-title").get_text(" ")
        named = re.search(r"Exercise\s+([\d.]+)", title)
        assert named and named.group(1) in numbers, title
