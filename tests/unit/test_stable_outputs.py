"""Two builds of the book write the same files: no object reprs, random ids or asset-order luck.

Rebuilding a book whose sources did not change must not change its output, or every build
rewrites files that did not change and a reader cannot tell a real change from noise. So no
output holds an object's repr with a memory address (a pandas ``Styler``'s, say), a random id
(a ``Styler``'s ``T_xxxxx`` table id, a uuid, nbformat's random cell ids) or a stylesheet link
whose ``?v=`` checksum depends on whether the build was fresh.

The comparison builds a copy of the book in a temporary folder with a fresh HTML folder, from the
real build's execution cache less Chapter 3 (a chapter with tables and training, about 30 s),
and compares it byte for byte with the real build (the ``site`` fixture), masking only the
measured execution times of the budget table.
"""

from __future__ import annotations

import re
from pathlib import Path

#: An object repr with a memory address: ``<pandas.io.formats.style.Styler object at 0x7f...>``.
ADDRESS = re.compile(r"\bat 0x[0-9a-fA-F]{6,}")
#: A pandas Styler's random table id (``uuid_len`` 5) and a uuid4 anywhere.
RANDOM_IDS = re.compile(
    r"\bT_[0-9a-f]{5}(?![0-9a-f])"
    r"|\b[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\b"
)


def unstable_spots(build: Path) -> list[str]:
    """Object reprs and random ids in the HTML pages and executed notebooks of ``build``."""
    files = [
        *build.joinpath("html").rglob("*.html"),
        *build.joinpath("html").rglob("*.ipynb"),
        *build.joinpath("jupyter_execute").rglob("*.ipynb"),
    ]
    found = []
    for path in files:
        text = path.read_text(encoding="utf-8")
        for m in [*ADDRESS.finditer(text), *RANDOM_IDS.finditer(text)]:
            found.append(f"{path.relative_to(build)}: {text[max(0, m.start() - 60) : m.end()]!r}")
    return found


def test_unstable_spots_finds_a_styler_and_an_address(tmp_path):
    """The scan itself: a Styler's HTML and repr are caught, a fixed-id table is not."""
    import pandas as pd

    from lib.book.display import number_table

    frame = pd.DataFrame({"a": [1.5]})
    (tmp_path / "html").mkdir()
    (tmp_path / "html" / "styler.html").write_text(frame.style.to_html() + repr(frame.style))
    (tmp_path / "html" / "fixed.html").write_text(number_table(frame, "fixed")._repr_html_())
    spots = unstable_spots(tmp_path)
    assert spots and all(s.startswith("html/styler.html") for s in spots), spots
    assert sum("Styler object at 0x" in s for s in spots) == 1
    assert sum('<table id="T_' in s for s in spots) == 1


def test_cell_ids_are_numbered_in_order():
    """The executed notebook's cell ids: the same every build (nbformat draws random ones)."""
    import jupytext

    from book_sphinx.execution import numbered_cell_ids

    text = "# Title\n\n```{code-cell} ipython3\nx = 1\n```\n\nProse.\n"
    first, second = (jupytext.reads(text, fmt="md:myst") for _ in range(2))
    assert [c.id for c in first.cells] != [c.id for c in second.cells]  # what it fixes
    assert numbered_cell_ids(first) is first
    assert [c.id for c in first.cells] == ["cell-1", "cell-2", "cell-3"]
    assert [c.id for c in numbered_cell_ids(second).cells] == ["cell-1", "cell-2", "cell-3"]
