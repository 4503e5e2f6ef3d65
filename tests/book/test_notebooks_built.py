"""The downloaded notebooks of the built site (the converter's unit tests are in
``ext/test_notebooks.py``)."""

from __future__ import annotations

import json
import re
import time

import jupytext
import nbformat
import pytest
from myst_nb.ext.glue import GLUE_PREFIX
from test_notebooks import FORBIDDEN, chapter_pages, download_pages, downloaded

from book_sphinx import execution
from book_sphinx.notebooks import MACHINERY_NOTE, is_machinery

from conftest import ROOT

#: A check record (lib.book.checks.record's dict) printed as an output.
RECORD_REPR = re.compile(r"\{'id': '[A-Z][0-9][^']*',.*'passed': (True|False|None)", re.S)


@pytest.mark.build
@pytest.mark.parametrize("page", download_pages())
def test_download_is_a_plain_notebook_with_run_instructions(site, page):
    html, nb = downloaded(site, page)
    link = html.select_one("a.btn-download-notebook-button")
    name = page.split("/")[-1]
    assert link["download"] == f"{name}.ipynb"
    assert link.get("target") is None  # saved, not opened as JSON in a new tab
    nbformat.validate(nb)
    assert nb.nbformat == 4 and "jupytext" not in nb.metadata
    markdown = [c.source for c in nb.cells if c.cell_type == "markdown"]
    for text in markdown:
        for bad in FORBIDDEN:
            assert bad not in text, f"{page}: raw MyST {bad!r} in a Markdown cell: {text[:300]}"
        assert not re.search(r"^\([\w-]+\)=\s*$", text, re.M), f"{page}: a MyST target: {text}"
    first = nb.cells[0]
    title = html.select_one("h1").get_text(" ", strip=True).rstrip("#").strip()
    assert first.cell_type == "markdown"
    assert first.source.startswith("# ") and title.split(" ", 1)[-1] in first.source
    assert "`make lab`" in first.source and "pip install --no-deps -e ." in first.source
    assert f"`{page}.md`" in first.source and "`chapters/` as the working directory" in first.source
    source = jupytext.read(ROOT / f"{page}.md")
    cells = [c for c in source.cells if c.cell_type == "code"]
    kept = [f"{MACHINERY_NOTE}\n{c.source}" if is_machinery(c) else c.source for c in cells]
    setup = 1 if nb.cells[1].cell_type == "code" and kept[:1] != [nb.cells[1].source] else 0
    # every code cell in order (after a published notebook's set-up), the machinery collapsed
    code = [c for c in nb.cells if c.cell_type == "code"][setup:]
    assert [c.source for c in code] == kept
    hidden = [c.metadata.get("jupyter", {}).get("source_hidden", False) for c in code]
    assert hidden == [is_machinery(c) for c in cells]
    assert not [
        o
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.get("outputs", [])
        if RECORD_REPR.search(json.dumps(o.get("data", o.get("text", ""))))
    ], f"{page}: a check record printed in the download"


@pytest.mark.build
@pytest.mark.parametrize("page", chapter_pages())
def test_download_reads_exercises_as_the_page_does(site, page):
    """Each exercise box of the page is "**Exercise N.M (title).**" in the download, each
    solution "**Solution to Exercise N.M (title).**", and no exercise label is left as text."""
    html, nb = downloaded(site, page)
    markdown = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    titles = [
        " ".join(t.get_text(" ", strip=True).split())
        for t in html.select("div.exercise > .admonition-title, div.solution > .admonition-title")
    ]
    assert titles, f"{page}: no exercise on the page"
    # the page's inline math \( \) is the notebook's $ $; spacing aside
    flat = "".join(markdown.replace("**", "").split())
    wanted = ["".join(re.sub(r"\\\((.*?)\\\)", r"$\1$", t).split()) for t in titles]
    missing = [t for t in wanted if f"{t}." not in flat]
    assert not missing, f"{page}: headings not in the download: {missing}"
    labels = re.findall(r"^:label: (\S+)", (ROOT / f"{page}.md").read_text(), re.M)
    left = [x for x in labels if re.search(rf"(?<![\w-]){re.escape(x)}(?![\w-])", markdown)]
    assert not left, f"{page}: labels left as text: {left}"


@pytest.mark.build
@pytest.mark.parametrize("page", chapter_pages())
def test_download_shows_the_values_numbers_and_citations_of_the_page(site, page):
    html, nb = downloaded(site, page)
    markdown = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    # the page's quotes are curled by Sphinx's smartquotes (a value's own may be curled too)
    straight = str.maketrans("\u2018\u2019\u201c\u201d", "''\"\"")

    def norm(text: str) -> str:
        return re.sub(r"\s+", " ", text.translate(straight)).strip()

    plain = norm(re.sub(r"\\(.)", r"\1", markdown))
    pasted = [norm(s.get_text()) for s in html.select("span.pasted-text")]
    assert len(pasted) >= 10, f"{page}: only {len(pasted)} glued values on the page"
    missing = [v for v in pasted if v not in plain]
    assert not missing, f"{page}: glued values of the page not in the notebook: {missing[:5]}"
    captions = [
        c.get_text(" ", strip=True)
        for c in html.select("figcaption .caption-number")
        if c.get_text(strip=True)
    ]
    assert captions, f"{page}: no numbered figure"
    for number in captions:  # "Figure 1.2 " on the page, "**Figure 1.2:**" in the notebook
        assert f"**{number.strip()}:**" in markdown, f"{page}: no caption cell for {number}"
    years = [norm(a.get_text()) for a in html.select("a[href^='bibliography.html#']")]
    assert all(year in plain for year in years)  # the citations' years, e.g. "[2024]"


@pytest.mark.build
@pytest.mark.parametrize("page", download_pages())
def test_no_myst_role_left_anywhere_in_the_download(site, page):
    """Not in a Markdown cell, and not in a cell's metadata either (a figure's caption)."""
    text = (site / "_sources" / f"{page}.ipynb").read_text()
    roles = re.findall(r"\{(?:glue(?::\w+)?|eq|numref|ref|doc|prf:ref|cite:[tp]|py:\w+)\}`", text)
    assert not roles, f"{page}: {len(roles)} MyST roles, e.g. {roles[:3]}"


@pytest.mark.build
def test_chapter_one_reads_as_the_page_does(site):
    """Fixed places of Chapter 1: a box, a paper's lemma, a citation, references, an equation."""
    html, nb = downloaded(site, "chapters/01_boltzmann")
    page = re.sub(r"\s+", " ", html.select_one("main").get_text())
    markdown = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    flat = re.sub(r"\s+", " ", markdown)
    assert "**Definition 1.1 (Boltzmann operator, after K&S and Asadi & Littman).**" in flat
    assert "**K&S Lemma 1 (separation by the Boltzmann operator).**" in flat
    for phrase in (
        "Kajitsuka and Sato [2024] build",
        "[Asadi and Littman, 2017]",
        "from the proof of K&S Theorem 2, built in full in Chapter 2.",
        "is strictly increasing (Figure 1.1).",
    ):
        assert phrase in flat
        assert phrase in page
    assert "\\tag{1.1}\n$$\n\nWe check (1.1) with torch" in markdown
    assert "*Proof.*" in markdown and "∎" in markdown


@pytest.mark.build
@pytest.mark.parametrize("page", chapter_pages())
def test_downloaded_chapter_runs_from_chapters_folder(site, page, monkeypatch):
    """Each chapter's download executes with nbclient in the book's environment, from
    ``chapters/``, with the torch threads of the build's kernels (``lib._env.page_plan``) and
    holding as many of the machine's cores (the build's execution slots)."""
    from nbclient import NotebookClient

    from lib import _env

    threads = _env.page_plan()[1]
    monkeypatch.setenv("BOOK_THREADS", str(threads))  # the kernel's, as in the build

    _, nb = downloaded(site, page)
    client = NotebookClient(
        nb,
        timeout=1200,
        kernel_name="python3",
        allow_errors=False,
        resources={"metadata": {"path": str(ROOT / "chapters")}},
    )
    with execution.execution_slot(page, threads):
        start = time.perf_counter()
        client.execute()
        seconds = time.perf_counter() - start
    errors = [
        o
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.get("outputs", [])
        if o.get("output_type") == "error"
    ]
    assert not errors
    assert all(c.get("execution_count") for c in nb.cells if c.cell_type == "code" and c.source)
    # the rerun glues exactly the values the Markdown shows (the chapters are deterministic)
    built = json.loads((ROOT / "_build" / "jupyter_execute" / f"{page}.glue.json").read_text())
    rerun = {
        o["metadata"]["scrapbook"]["name"]: o["data"].get(
            GLUE_PREFIX + "text/plain", o["data"].get("text/plain")
        )
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.get("outputs", [])
        if "scrapbook" in o.get("metadata", {})
    }
    assert set(rerun) == set(built)
    differ = sorted(k for k in built if built[k]["data"].get("text/plain") != rerun[k])
    print(f"{page}: executed in {seconds:.1f} s; {len(differ)}/{len(built)} glued values differ")
    assert "seed" in built and not differ, differ
