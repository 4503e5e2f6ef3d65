"""Unit tests of the book's Sphinx extension (_ext/book_sphinx): fingerprints, timeouts, failure
lines.

Its behaviour inside real builds is tested on temporary books in test_build_strict.py.
"""

from __future__ import annotations

import signal

import pytest

from book_sphinx import execution, guard
from lib import _env


def test_inputs_hash_follows_lib_pins_config_and_needs_a_folder(tmp_path):
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "a.py").write_text("x = 1\n")
    h1 = guard.inputs_hash(tmp_path)
    assert guard.inputs_hash(tmp_path) == h1  # a pure function of the files
    (tmp_path / "lib" / "a.py").write_text("x = 2\n")
    h2 = guard.inputs_hash(tmp_path)
    assert h2 != h1
    (tmp_path / "requirements.txt").write_text("numpy==2.4.6\n")
    h3 = guard.inputs_hash(tmp_path)
    assert h3 not in (h1, h2)
    (tmp_path / "requirements.lock").write_text("numpy==2.4.6\npandas==3.1.1\n")
    h3b = guard.inputs_hash(tmp_path)  # what make installs: the lock of every transitive version
    assert h3b not in (h1, h2, h3)
    h3 = h3b
    (tmp_path / "chapters").mkdir()
    (tmp_path / "chapters" / "c.md").write_text("# A chapter\n")
    assert (
        guard.inputs_hash(tmp_path) == h3
    )  # chapters are jupyter-cache's business, not this hash's
    (tmp_path / "results" / "conll").mkdir(parents=True)
    (tmp_path / "results" / "conll" / "run.json").write_text("{}")
    h4 = guard.inputs_hash(tmp_path)  # a stored result a chapter shows
    assert h4 != h3
    (tmp_path / "results" / "mutation").mkdir()
    (tmp_path / "results" / "mutation" / "last.json").write_text("{}")
    assert guard.inputs_hash(tmp_path) == h4  # make mutate's outcome: no executed page reads it
    for bad in (None, 123, "", tmp_path / "missing"):
        with pytest.raises(ValueError, match="root must be an existing folder"):
            guard.inputs_hash(bad)


@pytest.mark.parametrize("name", guard.ENV_INPUTS)
def test_inputs_hash_follows_the_environment_lib_reads(tmp_path, monkeypatch, name):
    (tmp_path / "lib").mkdir()
    for other in guard.ENV_INPUTS:
        monkeypatch.delenv(other, raising=False)
    before = guard.inputs_hash(tmp_path)
    monkeypatch.setenv(name, _valid_value(name, tmp_path))
    assert guard.inputs_hash(tmp_path) != before


def _valid_value(name, tmp_path):
    """A value of ``name`` that lib._env accepts and that differs from unset."""
    folder = tmp_path / name.lower()
    folder.mkdir()
    files = {
        "BOOK_FASHION_MNIST": _env._FASHION_FILES,
        "BOOK_CIFAR10": _env._CIFAR_FILES,
    }.get(name, ())
    for f in files:
        (folder / f).write_bytes(b"")
    return {
        "BOOK_MODE": "full",
        "BOOK_THREADS": "1",
        "BOOK_DEVICE": "cpu",
        "BOOK_FORCE_FAIL": sorted(_env.check_ids())[0],
    }.get(name, str(folder))


def test_inputs_hash_follows_optional_data(tmp_path, monkeypatch):
    monkeypatch.delenv("BOOK_MODE", raising=False)
    (tmp_path / "lib").mkdir()
    before = guard.inputs_hash(tmp_path)
    monkeypatch.setenv("BOOK_MODE", "fast")
    assert guard.inputs_hash(tmp_path) == before  # unset means fast
    marker = tmp_path / "_data" / "fashion-mnist" / "train-images-idx3-ubyte.gz"
    marker.parent.mkdir(parents=True)
    marker.write_bytes(b"")
    assert guard.inputs_hash(tmp_path) != before  # Chapter 5 must re-run when Fashion-MNIST arrives


def test_site_hash_follows_toc_and_page_names_not_page_contents(tmp_path):
    (tmp_path / "_toc.yml").write_text("root: intro\n")
    (tmp_path / "chapters").mkdir()
    (tmp_path / "chapters" / "a.md").write_text("# A\n")
    h1 = guard.site_hash(tmp_path)
    (tmp_path / "chapters" / "a.md").write_text("# A, edited\n")
    assert guard.site_hash(tmp_path) == h1  # an edit is Sphinx's incremental business
    (tmp_path / "chapters" / "a.md").rename(tmp_path / "chapters" / "b.md")
    h2 = guard.site_hash(tmp_path)
    assert h2 != h1
    (tmp_path / "_toc.yml").write_text("root: intro\nchapters: []\n")
    h3 = guard.site_hash(tmp_path)
    assert h3 not in (h1, h2)
    (tmp_path / "_static").mkdir()
    (tmp_path / "_static" / "book.css").write_text("p { color: red; }\n")
    h4 = guard.site_hash(tmp_path)
    assert h4 not in (h1, h2, h3)  # Sphinx copies _static only with a rewritten page
    (tmp_path / "references.bib").write_text("@misc{a, title={A}}\n")
    assert guard.site_hash(tmp_path) not in (h1, h2, h3, h4)
    (tmp_path / "_build").mkdir()
    (tmp_path / "_build" / "x.md").write_text("output\n")
    (tmp_path / ".venv").mkdir()
    (tmp_path / ".venv" / "y.md").write_text("site-packages\n")
    assert guard.site_hash(tmp_path) == guard.site_hash(tmp_path)


def test_site_hash_follows_the_files_the_extension_serves(tmp_path, monkeypatch):
    """A change of the extension's static files (its scripts, the search scorer that Sphinx
    writes into language_data.js) rebuilds the site, as a change of its code does; its bytecode
    cache does not."""
    extension = tmp_path / "ext"
    (extension / "static").mkdir(parents=True)
    (extension / "guard.py").write_text("x = 1\n")
    (extension / "static" / "search.js").write_text("var Scorer = {};\n")
    monkeypatch.setattr(guard, "_HERE", extension)
    (tmp_path / "_toc.yml").write_text("root: intro\n")
    h1 = guard.site_hash(tmp_path)
    (extension / "static" / "search.js").write_text("var Scorer = {score: r => r[4]};\n")
    h2 = guard.site_hash(tmp_path)
    assert h2 != h1
    (extension / "guard.py").write_text("x = 2\n")
    h3 = guard.site_hash(tmp_path)
    assert h3 not in (h1, h2)
    (extension / "__pycache__").mkdir()
    (extension / "__pycache__" / "guard.cpython-311.pyc").write_bytes(b"\0")
    assert guard.site_hash(tmp_path) == h3


class Config:
    book_timeout_factor, book_timeout_floor = 4, 300
    book_full_timeout_factor, book_full_timeout_floor = 20, 1800


@pytest.mark.parametrize(
    "budget, mode, explicit, expected",
    [
        (60, "fast", None, 300),
        (120, "fast", None, 480),
        (90, "full", None, 1800),
        (120, "full", None, 2400),
        (60, "fast", 2, 2),
        (60, "full", 5000, 5000),
        (None, "fast", None, None),
        (None, "fast", 7, 7),
    ],
)
def test_cell_timeout_is_a_safety_net(budget, mode, explicit, expected):
    assert execution.cell_timeout(Config, budget, mode, explicit) == expected


@pytest.mark.parametrize(
    "code, words",
    [
        (-signal.SIGKILL, "out-of-memory"),
        (-signal.SIGABRT, "SIGABRT"),
        (-signal.SIGSEGV, "SIGSEGV"),
        (-signal.SIGUSR1, "SIGUSR1"),
        (3, "exited with status 3"),
        (None, "unknown"),
    ],
)
def test_dead_kernel_cause_names_the_signal(code, words):
    from nbclient.exceptions import DeadKernelError

    err = DeadKernelError("Kernel died")
    err.book_exit = code
    assert words in execution.describe_failure(err, 300)


def test_failure_lines_for_a_cell_error_and_a_timeout():
    from nbclient.exceptions import CellExecutionError, CellTimeoutError

    err = CellExecutionError("traceback text", "ZeroDivisionError", "division by zero\nmore")
    assert execution.describe_failure(err, 300) == "ZeroDivisionError: division by zero"
    line = execution.describe_failure(CellTimeoutError("slow"), 480)
    assert line.startswith("the cell ran past its timeout of 480 s (a safety net")
    assert "BOOK_TIMEOUT_SCALE=2" in line and "Troubleshooting" in line


def test_execution_slot_lets_one_chapter_execute_at_a_time(tmp_path, monkeypatch):
    """While one build holds the machine-wide slot, another waits until it is released."""
    import threading

    monkeypatch.setenv("BOOK_EXECUTION_LOCK", str(tmp_path / "slot.lock"))
    order, held, trying = [], threading.Event(), threading.Event()

    def first_build():
        with execution.execution_slot("chapter A"):
            held.set()
            trying.wait(5)
            threading.Event().wait(0.3)  # the other build is blocked meanwhile
            order.append("A done")

    worker = threading.Thread(target=first_build)
    worker.start()
    held.wait(5)
    trying.set()
    with execution.execution_slot("chapter B"):
        order.append("B starts")
    worker.join(5)
    assert order == ["A done", "B starts"]
    with execution.execution_slot():  # free again: taken at once
        assert (tmp_path / "slot.lock").exists()


def test_execution_slot_shares_the_cores_and_never_hands_out_more(tmp_path, monkeypatch):
    """Two kernels of one thread each hold a 2-core machine at once; a third waits until one
    ends, and a kernel that needs every core waits until both have."""
    import threading

    monkeypatch.setenv("BOOK_EXECUTION_LOCK", str(tmp_path / "slot.lock"))
    monkeypatch.setattr(execution.os, "cpu_count", lambda: 2)
    events, both_in, release = [], threading.Barrier(3), threading.Event()

    def kernel(name):
        with execution.execution_slot(name, threads=1):
            events.append(f"{name} in")
            both_in.wait(5)  # both one-thread kernels hold a core at the same time
            release.wait(5)
            events.append(f"{name} out")

    workers = [threading.Thread(target=kernel, args=(n,)) for n in ("A", "B")]
    for w in workers:
        w.start()
    both_in.wait(5)
    waiting = []

    def third():
        with execution.execution_slot("C", threads=1):
            waiting.append("C in")

    late = threading.Thread(target=third)
    late.start()
    late.join(0.6)
    assert waiting == []  # both cores are held
    release.set()
    late.join(5)
    for w in workers:
        w.join(5)
    assert waiting == ["C in"]
    assert sorted(events[:2]) == ["A in", "B in"]
    assert (tmp_path / "slot.lock").exists() and (tmp_path / "slot.lock.1").exists()


def _bib_entry(key, authors, year="2024"):
    from pybtex.database import Entry, Person

    entry = Entry("article", fields={"title": "T", "year": year} if year else {"title": "T"})
    entry.key = key
    for name in authors:
        entry.add_person(Person(name), "author")
    return entry


def test_reference_list_labels_read_as_the_text_cites():
    from book_sphinx import citations

    one = _bib_entry("z", ["Zhang, Chiyuan"], "2017")
    two = _bib_entry("k", ["Kajitsuka, Tokio", "Sato, Issei"])
    many = _bib_entry("l", ["Liu, Hude", "Hu, Jerry", "Song, Zhao"], "2025")
    particle = _bib_entry("t", ["Tjong Kim Sang, Erik F.", "De Meulder, Fien"], "2003")
    undated = _bib_entry("u", ["Doe, Jane"], None)
    labels = [citations.author_year_label(e) for e in (one, two, many, particle, undated)]
    assert labels == [
        "Zhang, 2017",
        "Kajitsuka and Sato, 2024",
        "Liu et al., 2025",
        "Tjong Kim Sang and De Meulder, 2003",
        "Doe, n.d.",
    ]
    twins = [_bib_entry("a", ["Liu, Hude", "Hu, J", "S, Z"], "2025"), many]
    assert list(citations.AuthorYearLabels().format_labels(twins)) == [
        "Liu et al., 2025a",
        "Liu et al., 2025b",
    ]
    with pytest.raises(ValueError, match="'nobody' has no author or editor"):
        citations.author_year_label(_bib_entry("nobody", []))


def test_accessibility_fixes_of_the_theme_markup():
    from book_sphinx import a11y

    page = (
        '<summary aria-label="Toggle hidden content">\n<p>Show code cell source</p></summary>'
        '<button class="btn search-button-field search-button__button pst-js-only" title="Search"'
        ' aria-label="Search" data-bs-toggle="tooltip"> <i class="fa-solid fa-magnifying-glass">'
        "</i> <span>Search</span></button>"
        '<button class="theme-switch-button" aria-label="Color mode"><i class="theme-switch'
        ' fa-solid fa-sun fa-lg" data-mode="light" title="Light"></i></button>'
        '<div role="list" class="citation-list"><div class="citation" role="doc-biblioentry">'
        "</div></div><h1></h1>\n<h1>Index</h1>"
        '<form class="bd-search d-flex" action="search.html" method="get">\n'
        '  <input type="search" name="q"/>\n</form>'
    )
    fixed = a11y.fix_html(page)
    assert "<summary>\n<p>Show code cell source" in fixed
    assert 'aria-label="Search"' not in fixed and 'title="Search"' in fixed
    assert '<i class="fa-solid fa-magnifying-glass" aria-hidden="true">' in fixed
    assert 'aria-label="Color mode"' in fixed  # a label with no visible text stays
    assert 'fa-sun fa-lg" aria-hidden="true" data-mode="light"></i>' in fixed  # no title
    assert 'role="listitem"' in fixed and "doc-biblioentry" not in fixed
    assert "<h1></h1>" not in fixed and "<h1>Index</h1>" in fixed
    assert fixed.count('<button type="submit" class="visually-hidden">Search</button>') == 1
    assert fixed.index('type="submit"') < fixed.index("</form>")
    assert a11y.fix_html(fixed) == fixed  # idempotent
    with pytest.raises(ValueError, match="html must be"):
        a11y.fix_html(b"<html>")


def test_page_filters_edit_each_rendered_page_in_order():
    from types import SimpleNamespace

    from book_sphinx import pages

    templates = SimpleNamespace(render=lambda template, context: f"<p>{context['x']}</p>")
    app = SimpleNamespace(builder=SimpleNamespace(templates=templates))
    pages.add_page_filter(app, lambda html, context: html.replace("<p>", "<p class='a'>"))
    pages.add_page_filter(app, lambda html, context: html + context["x"])
    pages._wrap_render(app)
    pages._wrap_render(app)  # wrapped once only
    assert templates.render("page.html", {"x": "1"}) == "<p class='a'>1</p>1"
    assert templates.render("searchindex.js", {"x": "2"}) == "<p>2</p>"  # pages only
    with pytest.raises(ValueError, match="page_filter must be callable"):
        pages.add_page_filter(app, "not a function")


def test_a_forced_failure_build_has_inputs_of_its_own(tmp_path, monkeypatch):
    (tmp_path / "lib").mkdir()
    monkeypatch.delenv("BOOK_FORCE_FAIL", raising=False)
    ordinary = guard.inputs_hash(tmp_path)
    monkeypatch.setenv("BOOK_FORCE_FAIL", "C1")
    assert guard.inputs_hash(tmp_path) != ordinary  # it can neither reuse nor poison the cache


def test_a_killed_build_does_not_clear_the_next_builds_cache(tmp_path, monkeypatch):
    from types import SimpleNamespace

    for name in guard.ENV_INPUTS:
        monkeypatch.delenv(name, raising=False)
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "a.py").write_text("x = 1\n")
    build = tmp_path / "_build"
    app = SimpleNamespace(
        outdir=str(build / "html"), srcdir=str(tmp_path), doctreedir=str(build / ".doctrees")
    )
    config = SimpleNamespace(nb_execution_cache_path="")
    cache = build / ".jupyter_cache"
    cache.mkdir(parents=True)
    (cache / "stale").write_text("from unknown inputs")
    # no record of the inputs: the cache is cleared, the stamp written
    guard._clear_stale(app, config)
    assert not cache.exists()
    assert (build / guard.INPUTS_STAMP).read_text().strip() == guard.inputs_hash(tmp_path)
    cache.mkdir()
    (cache / "chapter").write_text("executed by the build that is then killed")
    guard._clear_stale(app, config)  # the next build, same inputs, no _write in between
    assert (cache / "chapter").is_file()
    (tmp_path / "lib" / "a.py").write_text("x = 2\n")
    guard._clear_stale(app, config)  # lib changed: cleared again
    assert not cache.exists()


def test_shadowed_sources_ignores_a_notebook_beside_its_chapter(tmp_path):
    (tmp_path / "chapters").mkdir()
    (tmp_path / "chapters" / "01_a.md").write_text("# A\n")
    assert guard.shadowed_sources(tmp_path) == {}
    (tmp_path / "chapters" / "01_a.ipynb").write_text("{}")
    assert guard.shadowed_sources(tmp_path) == {"chapters/01_a.ipynb": "chapters/01_a.md"}
    assert guard._source_pages(tmp_path) == ["chapters/01_a.md"]
    (tmp_path / "chapters" / "02_b.ipynb").write_text("{}")
    (tmp_path / "chapters" / "02_b.rst").write_text("B\n=\n")
    with pytest.raises(ValueError, match=r"chapters/02_b\.\w+ and chapters/02_b\.\w+ are two"):
        guard.shadowed_sources(tmp_path)


def test_cache_damage_names_an_unreadable_database(tmp_path):
    import sqlite3

    assert guard.cache_damage(tmp_path) is None  # no cache yet
    db = tmp_path / "global.db"
    with sqlite3.connect(db) as connection:
        connection.execute("create table t (x)")
    assert guard.cache_damage(tmp_path) is None
    db.write_bytes(b"this is not a database" * 100)
    assert "DatabaseError" in guard.cache_damage(tmp_path)


class _App:
    def __init__(self, outdir, doctreedir):
        self.outdir, self.doctreedir, self.statuscode = str(outdir), str(doctreedir), 0
        self._book_set_aside, self._book_stamps = True, {}


def test_a_site_set_aside_comes_back_when_the_build_crashes(tmp_path):
    site = tmp_path / "html"
    site.mkdir()
    (site / "index.html").write_text("the old site")
    guard._set_aside(site)
    assert not any(site.iterdir()) and (tmp_path / "html.previous" / "index.html").is_file()
    (site / "partial.html").write_text("half a page")
    guard._write(_App(site, tmp_path / "doctrees"), IndexError("two sources"))
    assert sorted(p.name for p in site.iterdir()) == ["index.html"]
    assert (site / "index.html").read_text() == "the old site"
    assert not (tmp_path / "html.previous").exists()


def test_a_site_set_aside_is_dropped_when_the_build_completes(tmp_path):
    site = tmp_path / "html"
    site.mkdir()
    (site / "index.html").write_text("the old site")
    guard._set_aside(site)
    (site / "index.html").write_text("the new site")
    guard._write(_App(site, tmp_path / "doctrees"), None)
    assert (site / "index.html").read_text() == "the new site"
    assert not (tmp_path / "html.previous").exists()


def test_a_site_left_aside_by_a_killed_build_is_kept(tmp_path):
    """A killed build never put the site back: the next set-aside keeps that complete site."""
    site, previous = tmp_path / "html", tmp_path / "html.previous"
    previous.mkdir()
    (previous / "index.html").write_text("the last complete site")
    site.mkdir()
    (site / "partial.html").write_text("half a page")
    guard._set_aside(site)
    assert not any(site.iterdir())
    assert (previous / "index.html").read_text() == "the last complete site"


def _lib_imports() -> set[str]:
    """Every lib module the extension imports, at the top of a file or inside a function."""
    import ast

    from conftest import ROOT

    found = set()
    for path in (ROOT / "_ext" / "book_sphinx").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                found |= {a.name for a in node.names if a.name.split(".")[0] == "lib"}
            elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "lib":
                for alias in node.names:  # `from lib.book import checks` imports a module
                    sub = f"{node.module}.{alias.name}"
                    is_module = (ROOT / (sub.replace(".", "/") + ".py")).exists()
                    found.add(sub if is_module else node.module)
    return found


def test_the_extension_loads_no_torch():
    """A rebuild with nothing changed runs the extension and the claims page's registry only:
    neither may import torch, numpy or pandas (torch alone costs about 1.5 s of a warm build)."""
    import subprocess
    import sys

    from conftest import ROOT

    modules = sorted(_lib_imports())
    assert "lib.book.registry" in modules and "lib._env" in modules
    code = (
        "import importlib, pkgutil, sys; sys.path.insert(0, '_ext'); import book_sphinx;"
        "[importlib.import_module(f'book_sphinx.{m.name}') "
        "for m in pkgutil.iter_modules(book_sphinx.__path__)];"
        f"[importlib.import_module(m) for m in {modules!r}];"
        "from lib.book import registry; assert registry.registry();"
        "print(sorted(m for m in ('torch', 'numpy', 'pandas', 'mpmath') if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "[]", modules


def test_the_font_awesome_script_is_dropped_and_nothing_else():
    from book_sphinx import pages

    head = (
        "<head>\n  <!-- So that users can add custom icons -->\n"
        '  <script defer src="../_static/scripts/fontawesome.js?digest=55c26ed414f5f8a31ebb">'
        "</script>\n"
        '  <link rel="preload" as="script" href="../_static/scripts/bootstrap.js" />\n</head>'
    )
    out = pages.drop_fontawesome_js(head)
    assert "fontawesome.js" not in out and "bootstrap.js" in out
    assert pages.drop_fontawesome_js(out) == out


def test_the_plotly_bundle_is_the_recorded_one(tmp_path, monkeypatch):
    import hashlib

    from book_sphinx import interactive

    source = interactive.plotly_js_source()
    assert hashlib.sha256(source.read_bytes()).hexdigest() == interactive.PLOTLY_SHA256
    head = source.read_bytes()[:200].decode()
    assert f"plotly.js (cartesian - minified) v{interactive.PLOTLY_VERSION}" in head
    bad = tmp_path / interactive.PLOTLY_JS
    bad.write_bytes(source.read_bytes()[:-1])
    monkeypatch.setattr(interactive, "_STATIC", tmp_path)
    with pytest.raises(ValueError, match="not the recorded"):
        interactive.plotly_js_source()
    bad.unlink()
    with pytest.raises(FileNotFoundError, match="missing"):
        interactive.plotly_js_source()


def test_repeated_exercise_ids_are_numbered():
    from book_sphinx import a11y

    html = '<section id="exercise-content"></section>' * 3 + '<section id="solution-content">'
    fixed = a11y.fix_html(html)
    assert fixed.count('id="exercise-content"') == 1
    assert 'id="exercise-content-2"' in fixed and 'id="exercise-content-3"' in fixed
    assert 'id="solution-content"' in fixed
    assert a11y.fix_html(fixed) == fixed


def _table(columns: int):
    from docutils import nodes

    group = nodes.tgroup(cols=columns)
    group += [nodes.colspec(colwidth=1) for _ in range(columns)]
    return nodes.table("", group)


@pytest.mark.parametrize(
    ("columns", "size"), [(4, None), (7, None), (8, "footnotesize"), (11, "scriptsize")]
)
def test_pdf_sets_wide_tables_in_a_smaller_type(columns, size):
    """The PDF sets a table of 8 or 9 columns in footnotesize and one of 10 or more in
    scriptsize, in a group closed after the table; the site's doctree is left alone."""
    from types import SimpleNamespace

    from docutils import nodes
    from docutils.utils import new_document

    from book_sphinx import latex

    for fmt in ("html", "latex"):
        doctree = new_document("x")
        section = nodes.section()
        doctree += section
        table = _table(columns)
        section += [nodes.paragraph(text="before"), table, nodes.paragraph(text="after")]
        app = SimpleNamespace(builder=SimpleNamespace(format=fmt))
        latex._small_wide_tables(app, doctree, "x")
        raws = [(c.astext(), c["format"]) for c in section.children if isinstance(c, nodes.raw)]
        if fmt == "html" or size is None:
            assert raws == []
        else:
            assert raws == [(f"\\begingroup\\{size}\n", "latex"), ("\\endgroup\n", "latex")]
            at = section.index(table)
            assert isinstance(section[at - 1], nodes.raw) and isinstance(section[at + 1], nodes.raw)
    assert latex.table_columns(_table(columns)) == columns


def test_a_font_list_without_matplotlibs_own_fonts_is_written_again(tmp_path, monkeypatch):
    """A font list written while matplotlib's mpl-data was missing lacks its own fonts (every
    kernel would then warn "findfont" on stderr): the build writes it again; a complete list is
    left as it is."""
    import matplotlib
    from matplotlib import font_manager

    import book_sphinx

    cache = tmp_path / f"fontlist-v{font_manager.FontManager.__version__}.json"
    monkeypatch.setattr(matplotlib, "get_cachedir", lambda: str(tmp_path))
    book_sphinx._complete_font_list()  # the list matplotlib loaded is complete
    assert not cache.exists()
    own = book_sphinx._OWN_FONTS
    partial = [f for f in font_manager.fontManager.ttflist if f.name not in own]
    monkeypatch.setattr(font_manager.fontManager, "ttflist", partial)
    book_sphinx._complete_font_list()
    assert own <= {f.name for f in font_manager.json_load(cache).ttflist}
