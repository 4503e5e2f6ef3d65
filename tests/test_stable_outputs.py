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

import json
import re
import shutil
from pathlib import Path

import pytest

from conftest import ROOT, run_build

#: An object repr with a memory address: ``<pandas.io.formats.style.Styler object at 0x7f...>``.
ADDRESS = re.compile(r"\bat 0x[0-9a-fA-F]{6,}")
#: A pandas Styler's random table id (``uuid_len`` 5) and a uuid4 anywhere.
RANDOM_IDS = re.compile(
    r"\bT_[0-9a-f]{5}(?![0-9a-f])"
    r"|\b[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\b"
)
#: What two honest builds may differ in: when and for how long each chapter executed, on the
#: reproducibility page (the budget table and myst-nb's execution report).
TIMINGS = (
    (re.compile(rb'(<td class="col-execution"><p>)[0-9.]+(</p></td>)'), rb"\1\2"),
    (
        re.compile(
            rb"(<td><p>)\d{4}-\d\d-\d\d \d\d:\d\d(</p></td>\s*<td><p>\w+</p></td>\s*<td><p>)"
            rb"[0-9.]+(</p></td>)"
        ),
        rb"\1\2\3",
    ),
)
TIMING_PAGE = "chapters/reproducibility"
#: A chapter with tables and trained models; its cache entry is dropped so the copy re-runs it.
RERUN = "chapters/03_memorization.md"
#: Not copied: the build, environments, caches, data (linked instead: its presence is an input).
NOT_COPIED = {"_build", ".git", "node_modules", "_data"}


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

    from lib.claims import number_table

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


def _copy_book(target: Path) -> None:
    """The book's sources and its execution cache, less the cache entry of :data:`RERUN`."""
    from jupyter_cache import get_cache

    def ignore(folder, names):
        top = Path(folder) == ROOT
        return [
            n
            for n in names
            if (top and (n in NOT_COPIED or n.startswith(".venv")))
            or n in {"__pycache__", ".pytest_cache", ".ruff_cache", ".ipynb_checkpoints"}
            or n.endswith(".egg-info")
        ]

    shutil.copytree(ROOT, target, ignore=ignore, symlinks=True)
    if (ROOT / "_data").exists():  # unpacked datasets, read only; their presence is an input
        (target / "_data").symlink_to(ROOT / "_data")
    (target / "_build").mkdir()
    shutil.copytree(ROOT / "_build" / ".jupyter_cache", target / "_build" / ".jupyter_cache")
    shutil.copy(ROOT / "_build" / ".jupyter_cache.inputs-sha256", target / "_build")
    cache = get_cache(target / "_build" / ".jupyter_cache")
    dropped = [r.pk for r in cache.list_cache_records() if r.uri.endswith(RERUN)]
    assert dropped, [r.uri for r in cache.list_cache_records()]
    for pk in dropped:  # the cache also keeps the records of earlier versions of the chapter
        cache.remove_cache(pk)


def _files(folder: Path) -> dict[str, Path]:
    return {p.relative_to(folder).as_posix(): p for p in folder.rglob("*") if p.is_file()}


@pytest.mark.build
def test_no_object_reprs_or_random_ids_in_pages_and_notebooks(site):
    build = site.parent
    spots = unstable_spots(build)
    assert not spots, f"{len(spots)} object reprs or random ids, e.g. {spots[:5]}"
    for path in build.joinpath("jupyter_execute").rglob("*.ipynb"):
        ids = [c.get("id") for c in json.loads(path.read_text())["cells"]]
        assert ids == [f"cell-{i}" for i in range(1, len(ids) + 1)], (path.name, ids[:3])


@pytest.mark.build
def test_a_second_build_elsewhere_writes_identical_html_and_notebooks(site, tmp_path):
    """A fresh build of a copy, re-running Chapter 3, gives byte-identical files."""
    copy = tmp_path / "book"
    _copy_book(copy)
    result = run_build(copy, env={"PYTHONPATH": str(copy)}, timeout=900)
    assert result.returncode == 0, result.stdout[-4000:]
    assert f"{RERUN}: Executing notebook" in result.stdout, "Chapter 3 was not re-executed"
    first, second = site.parent, copy / "_build"
    for folder in ("html", "jupyter_execute"):
        old, new = _files(first / folder), _files(second / folder)
        # an incremental build may keep files of earlier builds (old image hashes); every file
        # the fresh build writes must be there, and every page
        assert {p for p in old if p.endswith(".html")} == {p for p in new if p.endswith(".html")}
        differ = [
            name
            for name, path in sorted(new.items())
            if name not in old or _masked(old[name]) != _masked(path)
        ]
        assert not differ, (
            f"{folder}: {differ[:10]} differ; first: {_first_change(old, new, differ)}"
        )


def _masked(path: Path) -> bytes:
    """The file's bytes less :data:`TIMINGS`; in the search index, the numbers of the timing
    page (its times and dates are words there too), the words that no page holds any more (an
    incremental build keeps them, with an empty list of pages) and the index entries (Sphinx
    7.4's incremental build drops those of the pages it does not rewrite; a clean build has
    them all)."""
    data = path.read_bytes()
    if path.suffix == ".html":
        for pattern, keep in TIMINGS:
            data = pattern.sub(keep, data)
    elif path.name == "searchindex.js":
        prefix, _, rest = data.decode().partition("(")
        index = json.loads(rest.rstrip().removesuffix(")"))
        page = index["docnames"].index(TIMING_PAGE)
        for term, docs in list(index["terms"].items()):
            if term.replace(".", "").isdigit():
                kept = [d for d in ([docs] if isinstance(docs, int) else docs) if d != page]
                index["terms"][term] = kept
        index["terms"] = {term: docs for term, docs in index["terms"].items() if docs != []}
        index.pop("indexentries", None)
        data = (prefix + json.dumps(index, sort_keys=True)).encode()
    return data


def _first_change(old: dict, new: dict, differ: list[str]) -> str:
    name = differ[0]
    if name not in old:
        return f"{name} is new"
    a, b = _masked(old[name]).splitlines(), _masked(new[name]).splitlines()
    line = next(
        (i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b))
    )
    return f"{name} line {line + 1}: {a[line : line + 1]!r:.300} != {b[line : line + 1]!r:.300}"
