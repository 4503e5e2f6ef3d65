"""Stable outputs: no object reprs or random ids in the built pages, and a second build elsewhere
writes identical files (the unit tests of the helpers are in ``unit/test_stable_outputs.py``)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from test_stable_outputs import unstable_spots

from conftest import ROOT, run_build

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
