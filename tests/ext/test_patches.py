"""The run-time patches of the book's Sphinx extension (_ext/book_sphinx), against upstream.

Each patch is shown next to the upstream behaviour it corrects (the original function, called on a
tiny input, still does the wrong thing; the patched one does the right thing), and each patch site
is shown to pin the version it was written for (book_sphinx.patching.require_version, reading the
one table book_sphinx.patching.WRITTEN_FOR), with the upstream issue it works around. The markup
fixes of book_sphinx.a11y and the calls of other packages' handlers in book_sphinx.pages go
through the same check, and are shown to be refused on another version.
"""

from __future__ import annotations

import base64
import hashlib
import importlib
import importlib.metadata
import re
from pathlib import Path
from types import SimpleNamespace

import nbformat
import pytest
from docutils import nodes

from book_sphinx import a11y, execution, latex, numbering, pages, patching, phone, proofs

ROOT = Path(__file__).resolve().parents[2]
KERNELSPEC = {"name": "python3", "display_name": "Python 3", "language": "python"}
ISSUE_URL = re.compile(r"https://github\.com/[\w.-]+/[\w.-]+/(issues|pull)/\d+")
PST = "pydata_sphinx_theme/theme/pydata_sphinx_theme"
SBT = "sphinx_book_theme/theme/sphinx_book_theme"
#: Every target the extension patches, rewrites the markup of, or calls out of turn, and the
#: distributions each pins.
PATCHED = {
    "myst_nb.core.execute.cache.single_nb_execution": {"jupyter-cache", "myst-nb"},
    "jupyter_cache.cache.main.JupyterCacheBase.create_hashed_notebook": {"jupyter-cache"},
    "jupyter_cache.cache.main.JupyterCacheBase.merge_match_into_notebook": {"jupyter-cache"},
    "nbclient.client.NotebookClient._async_cleanup_kernel": {"nbclient"},
    "myst_nb.core.execute.cache.NotebookClientCache.start_client": {"myst-nb"},
    "myst_nb.sphinx_.create_nb_reader": {"myst-nb"},
    "myst_nb.ext.glue.crossref.generate_any_nodes": {"myst-nb"},
    "sphinx_proof.domain.ProofDomain.resolve_xref": {"sphinx-proof"},
    "sphinx_proof.nodes.depart_unenumerable_node": {"sphinx-proof"},
    "sphinx.jinja2glue.BuiltinTemplateLoader.render": {"sphinx"},
    "sphinx.environment.collectors.toctree.TocTreeCollector.assign_figure_numbers": {"sphinx"},
    "sphinx_jupyterbook_latex.nodes.visit_RootHeader": {"sphinx-jupyterbook-latex"},
    "myst_nb.core.render.NbElementRenderer.render_image": {"myst-nb"},
    # a11y: the markup its regular expressions match
    "myst_nb.sphinx_.visit_HideCellInput": {"myst-nb"},
    f"{PST}/components/search-button-field.html": {"pydata-sphinx-theme"},
    f"{PST}/components": {"pydata-sphinx-theme"},
    f"{SBT}/components": {"sphinx-book-theme"},
    f"{PST}/components/theme-switcher.html": {"pydata-sphinx-theme"},
    "docutils.writers._html_base.HTMLTranslator.visit_citation": {"docutils"},
    f"{SBT}/layout.html": {"sphinx-book-theme"},
    f"{PST}/components/search-field.html": {"pydata-sphinx-theme"},
    "sphinx_exercise.directive.ExerciseDirective.run": {"sphinx-exercise"},
    "sphinx_exercise.directive.SolutionDirective.run": {"sphinx-exercise"},
    "sphinx_exercise.transforms.MergeGatedSolutions.apply": {"sphinx-exercise"},
    # pages: the theme's Font Awesome script, and the handlers called before the pages
    f"{PST}/static/webpack-macros.html": {"pydata-sphinx-theme"},
    "myst_nb.sphinx_ext.add_global_html_resources": {"myst-nb"},
    "sphinx_proof.copy_asset_files": {"sphinx-proof"},
    "sphinx_exercise.copy_asset_files": {"sphinx-exercise"},
    "sphinx-mathjax-offline.copy_mathjax_files": {"sphinx-mathjax-offline"},
}
MYST_PAGE = """\
---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---

```{code-cell} ipython3
x = 1
```

Some text.

```{code-cell} ipython3
y = 2
```
"""


class RecordingApp:
    """Stands in for Sphinx's application at ``setup()``: every method call is recorded."""

    def __init__(self, outdir: Path):
        self.outdir = str(outdir)
        self.calls: list[tuple[str, tuple, dict]] = []

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)

        def call(*args, **kwargs):
            self.calls.append((name, args, kwargs))
            return {}

        return call


class QuietLogger:
    """myst-nb's logger interface, silent."""

    def __getattr__(self, name: str):
        return lambda *args, **kwargs: None


def _notebook(*sources: str, tags: tuple[str, ...] = ()) -> nbformat.NotebookNode:
    notebook = nbformat.v4.new_notebook(metadata={"kernelspec": dict(KERNELSPEC)})
    notebook.cells = [
        nbformat.v4.new_code_cell(source, metadata={"tags": list(tags)} if tags else {})
        for source in sources
    ]
    return notebook


def _lock_pins() -> dict[str, str]:
    """``{normalized name: version}`` of requirements.lock."""
    pins = {}
    for line in (ROOT / "requirements.lock").read_text().splitlines():
        match = re.match(r"^([A-Za-z0-9_.-]+)==([^\s;#]+)", line.strip())
        if match:
            pins[re.sub(r"[-_.]+", "-", match.group(1)).lower()] = match.group(2)
    return pins


def _resolve(dotted: str):
    """The object a dotted name names (the longest importable module, then attributes), or the
    path of a template (``package/path/in/it.html``) or folder of an installed package."""
    if "/" in dotted:
        package, rest = dotted.split("/", 1)
        return Path(importlib.import_module(package).__file__).parent / rest
    parts = dotted.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            found = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for name in parts[cut:]:
            found = getattr(found, name)
        return found
    raise ImportError(dotted)


# --- the version guard ------------------------------------------------------------------------


def test_require_version_reads_the_table_passes_on_it_and_fails_loudly_on_another(monkeypatch):
    monkeypatch.setattr(patching, "REGISTRY", {})
    issue = "https://github.com/executablebooks/MyST-NB/pull/519"
    written = patching.WRITTEN_FOR["myst-nb"]
    installed = importlib.metadata.version("myst-nb")
    assert written == installed == _lock_pins()["myst-nb"]
    assert patching.require_version("myst-nb", target="myst_nb.x", issue=issue) == installed
    assert patching.REGISTRY == {
        ("myst_nb.x", "myst-nb"): patching.Patch("myst_nb.x", "myst-nb", written, issue)
    }

    # the version checked is the table's: a table that differs from what is installed refuses
    monkeypatch.setitem(patching.WRITTEN_FOR, "myst-nb", "0.9.0")
    with pytest.raises(RuntimeError) as raised:
        patching.require_version("myst-nb", target="myst_nb.x", issue=issue)
    assert str(raised.value) == (
        f"book_sphinx patches myst_nb.x written for myst-nb 0.9.0; installed {installed}: "
        f"check {issue} and update the patch"
    )
    assert patching.REGISTRY[("myst_nb.x", "myst-nb")].version == "0.9.0"
    monkeypatch.setitem(patching.WRITTEN_FOR, "myst-nb", written)

    monkeypatch.setattr(importlib.metadata, "version", lambda name: "99.0.0")
    with pytest.raises(RuntimeError) as raised:
        patching.require_version("myst-nb", target="myst_nb.x", issue=issue)
    assert str(raised.value) == (
        f"book_sphinx patches myst_nb.x written for myst-nb {written}; installed 99.0.0: "
        f"check {issue} and update the patch"
    )
    marker = "no upstream issue found (searched executablebooks/MyST-NB for x)"
    with pytest.raises(RuntimeError, match=re.escape(f"installed 99.0.0: {marker}: check")):
        patching.require_version("myst-nb", target="myst_nb.y", issue=marker)

    def missing(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", missing)
    with pytest.raises(RuntimeError, match=f"written for myst-nb {written}; installed none: check"):
        patching.require_version("myst-nb", target="myst_nb.x", issue=issue)
    for bad in ("see the tracker", "https://github.com/executablebooks/MyST-NB/issues/", ""):
        with pytest.raises(ValueError, match="issue must be a GitHub issue or pull request URL"):
            patching.require_version("myst-nb", target="myst_nb.x", issue=bad)
    with pytest.raises(ValueError, match="target must name"):
        patching.require_version("myst-nb", target=" ", issue=issue)
    with pytest.raises(ValueError, match="'sphinx-design' is not in book_sphinx.patching"):
        patching.require_version("sphinx-design", target="sphinx_design.x", issue=issue)


def test_every_patch_site_pins_the_locked_version_and_names_its_issue(tmp_path, monkeypatch):
    from jupyter_cache.cache.main import JupyterCacheBase
    from myst_nb import sphinx_
    from myst_nb.core.execute import cache
    from myst_nb.core.render import NbElementRenderer
    from myst_nb.ext.glue import crossref
    from sphinx.environment.collectors.toctree import TocTreeCollector
    from sphinx_proof.domain import ProofDomain
    from sphinx_proof.nodes import depart_unenumerable_node, unenumerable_node

    import book_sphinx

    installed = (
        (cache, "single_nb_execution"),
        (cache.NotebookClientCache, "start_client"),
        (sphinx_, "create_nb_reader"),
        (crossref, "generate_any_nodes"),
        (ProofDomain, "resolve_xref"),
        (JupyterCacheBase, "create_hashed_notebook"),
        (JupyterCacheBase, "merge_match_into_notebook"),
        (TocTreeCollector, "assign_figure_numbers"),
        (NbElementRenderer, "render_image"),
    )
    for owner, name in installed:  # setup() patches them: put back as they were after the test
        monkeypatch.setattr(owner, name, getattr(owner, name))
    monkeypatch.setattr(patching, "REGISTRY", {})
    monkeypatch.setattr(execution, "_APP", execution._APP)  # setup() sets it: restored after
    monkeypatch.setenv("MPLCONFIGDIR", str(tmp_path))
    monkeypatch.setenv("BOOK_BUILD", "1")  # setup() sets it: restored after
    app = RecordingApp(tmp_path / "html")
    book_sphinx.setup(app)

    required: dict[str, set[str]] = {}
    for target, distribution in patching.REGISTRY:
        required.setdefault(target, set()).add(distribution)
    assert required == PATCHED
    # every version of the table is checked by some site, and no site checks one outside it
    assert {patch.distribution for patch in patching.REGISTRY.values()} == set(patching.WRITTEN_FOR)
    pins = _lock_pins()
    for patch in patching.REGISTRY.values():
        assert patch.version == patching.WRITTEN_FOR[patch.distribution], patch
        assert patch.version == pins[patch.distribution], patch
        assert ISSUE_URL.fullmatch(patch.issue) or re.fullmatch(
            r"no upstream issue found \(searched [\w.-]+/[\w.-]+ for .+\)", patch.issue
        ), patch
        found = _resolve(patch.target)
        assert callable(found) or (isinstance(found, Path) and found.exists()), patch.target
    for owner, name in installed:  # in place, each keeping the upstream function it wraps
        assert callable(getattr(owner, name).__wrapped__), name
    (override,) = [
        kwargs
        for name, args, kwargs in app.calls
        if name == "add_node" and args[0] is unenumerable_node and kwargs.get("override")
    ]
    for builder in ("html", "latex"):
        assert override[builder][1].__wrapped__ is depart_unenumerable_node


def _version_literals(text: str) -> list[str]:
    """The versions of a patched distribution that ``text`` writes: any version of
    patching.WRITTEN_FOR's, quoted or not, and any version number after a patched distribution's
    name (``myst-nb 1.3.0``, ``Sphinx 7.1``, ``sphinx_proof==0.5``, ``sphinx-proof's 0.4``)."""
    found = []
    for version in set(patching.WRITTEN_FOR.values()):
        found += re.findall(rf"(?<![\w.]){re.escape(version)}(?![\w]|\.\d)", text)
    for name in patching.WRITTEN_FOR:
        spelled = r"[-_ ]?".join(re.escape(part) for part in re.split(r"[-_]", name))
        found += [
            match.group(0)
            for match in re.finditer(
                rf"(?<![\w-]){spelled}(?:'s)?[\s=<>~v]*\d+\.\d+(?:\.\d+)*", text, re.I
            )
        ]
    return found


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ('MYST_NB = "1.4.0"', True),  # the table's version, as a constant
        ("Why: myst-nb 1.3.0 drops", True),  # another version, after the name
        ("wraps MyST-NB 1.4's render_image", True),
        ("the pinned Sphinx 7.1 adds", True),
        ("sphinx_proof==0.5.1", True),
        ("pydata-sphinx-theme's 0.16 wrote", True),
        ('WCAG 2.5.3 "label in name"', False),
        ('("Proposition 1.3.2")', False),
        ('PLOTLY_VERSION = "4.1.1"', False),  # plotly.js: a file served, no patch
        ("sphinx-doc/sphinx issue 11908", False),
        ("the pinned myst-nb (patching.WRITTEN_FOR)", False),
    ],
)
def test_version_literals_finds_a_patched_packages_version_and_nothing_else(text, found):
    assert bool(_version_literals(text)) is found, _version_literals(text)


def test_no_module_of_the_extension_but_patching_writes_a_patched_packages_version():
    """The versions the patches, markup fixes and handler calls were written for are written once,
    in patching.WRITTEN_FOR: a module (code, comment or docstring) that writes one of them, or any
    version number after a patched distribution's name, would drift from the table."""
    folder = ROOT / "_ext" / "book_sphinx"
    modules = sorted(folder.glob("*.py"))
    assert len(modules) > 10 and folder / "patching.py" in modules
    written = {
        path.name: _version_literals(path.read_text())
        for path in modules
        if path.name != "patching.py"
    }
    assert {name: found for name, found in written.items() if found} == {}
    # and the table itself is where they are
    assert len(_version_literals((folder / "patching.py").read_text())) >= len(patching.WRITTEN_FOR)


# --- markup fixes and other packages' handlers, under the same check ---------------------------


def _installed_but(distribution: str, version: str):
    """importlib.metadata.version as installed, except ``distribution`` at ``version``."""
    real = importlib.metadata.version

    def version_of(name):
        return version if name == distribution else real(name)

    return version_of


A11Y_SOURCES = sorted(
    {source for fix in a11y.FIXES for source in fix.sources} | set(a11y.REPEATED_IDS_SOURCES)
)


@pytest.mark.parametrize("distribution", sorted({distribution for distribution, _ in A11Y_SOURCES}))
def test_a11y_fixes_are_refused_on_another_version_of_the_markup_they_match(
    tmp_path, monkeypatch, distribution
):
    """Each regular expression of book_sphinx.a11y matches one version of another package's
    markup: on any other version a11y.setup() raises, as a patch's check does, and adds no page
    filter; on the table's versions it checks every source and adds the filter."""
    monkeypatch.setattr(patching, "REGISTRY", {})
    app = RecordingApp(tmp_path)
    a11y.setup(app)
    assert len(app.__dict__["book_page_filters"]) == 1
    assert set(patching.REGISTRY) == {(target, dist) for dist, target in A11Y_SOURCES}

    monkeypatch.setattr(patching, "REGISTRY", {})
    monkeypatch.setattr(importlib.metadata, "version", _installed_but(distribution, "99.0"))
    app = RecordingApp(tmp_path)
    checked = [target for fix in a11y.FIXES for dist, target in fix.sources if dist == distribution]
    checked += [target for dist, target in a11y.REPEATED_IDS_SOURCES if dist == distribution]
    with pytest.raises(RuntimeError) as raised:
        a11y.setup(app)
    assert str(raised.value).startswith(
        f"book_sphinx patches {checked[0]} written for {distribution} "
        f"{patching.WRITTEN_FOR[distribution]}; installed 99.0: "
    )
    assert "book_page_filters" not in app.__dict__  # refused: the page is left as rendered


@pytest.mark.parametrize(("distribution", "handler"), pages.LATE_ASSETS)
def test_late_asset_handlers_are_refused_on_another_version(
    tmp_path, monkeypatch, distribution, handler
):
    """pages._copy_late_assets calls other packages' build-finished handlers when the builder
    starts: each is checked at pages.setup(), and on another version setup() raises before
    connecting anything."""
    monkeypatch.setattr(patching, "REGISTRY", {})
    from myst_nb.ext.glue import crossref

    monkeypatch.setattr(crossref, "generate_any_nodes", crossref.generate_any_nodes)
    app = RecordingApp(tmp_path)
    pages.setup(app)
    assert patching.REGISTRY[(handler, distribution)] == patching.Patch(
        handler, distribution, patching.WRITTEN_FOR[distribution], pages.LATE_ASSETS_ISSUE
    )
    assert ("connect", ("builder-inited", pages._copy_late_assets), {}) in app.calls

    monkeypatch.setattr(patching, "REGISTRY", {})
    monkeypatch.setattr(importlib.metadata, "version", _installed_but(distribution, "99.0"))
    app = RecordingApp(tmp_path)
    with pytest.raises(RuntimeError) as raised:
        pages.setup(app)
    written = patching.WRITTEN_FOR[distribution]
    assert f" written for {distribution} {written}; installed 99.0: " in str(raised.value)
    if distribution != "myst-nb":  # myst-nb's glue patch is checked, and refused, first
        assert str(raised.value).startswith(f"book_sphinx patches {handler} written for")
    assert app.calls == []  # nothing connected: no handler is called out of turn
    assert "book_page_filters" not in app.__dict__


def test_late_assets_are_copied_by_the_checked_handlers_alone(tmp_path, monkeypatch):
    """What _copy_late_assets calls is pages.LATE_ASSETS (the list setup() checks), in order, as
    Sphinx calls a build-finished handler after a build without error; then the book's plotly."""
    from book_sphinx import interactive

    called = []
    for _, handler in pages.LATE_ASSETS:
        module, name = handler.rsplit(".", 1)
        monkeypatch.setattr(
            importlib.import_module(module),
            name,
            lambda app, exc, handler=handler: called.append((handler, exc)),
        )
    monkeypatch.setattr(interactive, "copy_plotly", lambda app, exc: called.append(("plotly", exc)))
    app = SimpleNamespace(builder=SimpleNamespace(format="html"), outdir=str(tmp_path))
    pages._copy_late_assets(app)
    assert called == [(handler, None) for _, handler in pages.LATE_ASSETS] + [("plotly", None)]
    assert (tmp_path / "_static").is_dir()
    called.clear()
    pages._copy_late_assets(SimpleNamespace(builder=SimpleNamespace(format="latex")))
    assert called == []


# --- phone renditions of figures (book_sphinx.phone) --------------------------------------------


def _image_output(metadata: dict):
    png = b"\x89PNG desktop"
    return SimpleNamespace(
        mime_type="image/png",
        content=base64.b64encode(png).decode(),
        output_metadata={"image/png": metadata},
    )


def test_phone_rendition_is_written_and_recorded_on_the_image_node():
    """myst-nb's render_image keeps only width and height of an image's output metadata; the
    wrapped one writes the phone PNG beside it, registers it with the page's images and records
    it on the node. An output without one is rendered as upstream renders it."""
    written, added = {}, []

    def write_file(path, content, overwrite=False, exists_ok=False):
        written[path[0]] = content
        return f"/_build/jupyter_execute/{path[0]}"

    env = SimpleNamespace(
        docname="chapters/x",
        relfn2path=lambda uri, docname: (uri.lstrip("/"), "/abs" + uri),
        images=SimpleNamespace(add_file=lambda doc, rel: added.append((doc, rel))),
    )
    renderer = SimpleNamespace(write_file=write_file, renderer=SimpleNamespace(sphinx_env=env))

    def upstream(self, data):
        return [nodes.image(uri="/_build/jupyter_execute/desktop.png")]

    render = phone._render_image(upstream)
    plain = render(renderer, _image_output({"width": "300"}))
    assert phone.ATTR not in plain[0] and not written and not added
    small = b"\x89PNG phone"
    name = hashlib.sha256(small).hexdigest() + ".png"
    (node,) = render(renderer, _image_output({phone.KEY: base64.b64encode(small).decode()}))
    assert written == {name: small}
    assert node[phone.ATTR] == f"_build/jupyter_execute/{name}"
    assert added == [("chapters/x", f"_build/jupyter_execute/{name}")]
    assert render.__wrapped__ is upstream


def test_phone_rendition_is_a_picture_source_on_narrow_screens():
    """The HTML writer's image becomes ``<picture>`` with the phone PNG as the narrow screens'
    source, and the builder copies it to _images; an image without one is written unchanged."""

    class Writer:
        def __init__(self):
            self.body = []
            self.builder = SimpleNamespace(
                env=SimpleNamespace(images={"p/phone.png": ({"x"}, "phone1.png")}),
                images={},
                imgpath="../_images",
            )

        def visit_image(self, node):
            self.body.append("<img>")

        def depart_image(self, node):
            self.body.append("|")

    writer = Writer()
    node = nodes.image(uri="desktop.png")
    node[phone.ATTR] = "p/phone.png"
    phone.visit_image(writer, node)
    phone.depart_image(writer, node)
    assert writer.body == [
        '<picture><source media="(max-width: 760px)" srcset="../_images/phone1.png">',
        "<img>",
        "|",
        "</picture>",
    ]
    assert writer.builder.images == {"p/phone.png": "phone1.png"}
    writer = Writer()
    plain = nodes.image(uri="desktop.png")
    phone.visit_image(writer, plain)
    phone.depart_image(writer, plain)
    assert writer.body == ["<img>", "|"] and writer.builder.images == {}


def test_phone_media_is_the_width_of_book_css_phone_layout():
    css = (ROOT / "_static" / "book.css").read_text()
    assert f"@media {phone.MEDIA}" in css


def _numbering_env(fmt: str | None, events: list[tuple]):
    """A stand-in build: an application whose builder writes ``fmt``, an environment holding
    numbers assigned for ``fmt``, and the read-phase events of ``events`` already fired."""
    app = SimpleNamespace(builder=SimpleNamespace(format="html"))
    env = SimpleNamespace(app=app, walked=[])
    if fmt is not None:
        setattr(env, numbering.FORMAT_ATTR, fmt)
    numbering._start(app)
    for event, *args in events:
        getattr(numbering, event)(app, env, *args)
    return app, env


@pytest.mark.parametrize(
    ("fmt", "events", "walks"),
    [
        ("html", [("_before_read", [])], False),  # nothing read: the stored numbers stand
        ("html", [("_before_read", ["chapters/one"])], True),  # a page read
        ("html", [("_purged", "chapters/gone"), ("_before_read", [])], True),  # a page removed
        ("latex", [("_before_read", [])], True),  # numbers held are the PDF's
        (None, [("_before_read", [])], True),  # an environment of an earlier build
        ("html", [], True),  # read phase not reached: Sphinx decides
    ],
)
def test_sphinx_walks_every_page_for_figure_numbers_and_the_patch_only_when_one_can_change(
    fmt, events, walks
):
    from sphinx.environment.collectors.toctree import TocTreeCollector

    def walk_every_page(self, env):  # stands in for Sphinx's walk: records that it ran
        env.walked.append(True)
        return ["chapters/one"]

    app, env = _numbering_env(fmt, events)
    assert walk_every_page(None, env) and env.walked  # the upstream behaviour: it always walks
    env.walked.clear()
    patched = numbering._assign_figure_numbers(walk_every_page)
    assert patched(TocTreeCollector(), env) == (["chapters/one"] if walks else [])
    assert bool(env.walked) is walks
    assert numbering._numbered(app, env) == []
    assert getattr(env, numbering.FORMAT_ATTR) == "html"  # what the numbers now hold


# --- execution.py: jupyter-cache, nbclient and myst-nb -------------------------------------------


def test_a_dead_kernel_escapes_jupyter_cache_and_the_patch_names_its_cell_and_exit(
    tmp_path, monkeypatch
):
    from jupyter_cache.executors.utils import single_nb_execution as upstream
    from nbclient.exceptions import DeadKernelError

    monkeypatch.setenv("BOOK_EXECUTION_LOCK", str(tmp_path / "lock"))
    cells = ("x = 1", "import os\nos._exit(3)", "y = 2")
    with pytest.raises(DeadKernelError):  # upstream: out of the build, as a traceback
        upstream(_notebook(*cells), cwd=str(tmp_path), timeout=60, allow_errors=False)

    result = execution._patched_run(upstream)(
        _notebook(*cells), cwd=str(tmp_path), timeout=60, allow_errors=False
    )
    assert isinstance(result.err, DeadKernelError)
    assert result.err.book_cell == 1  # the second cell
    assert result.err.book_exit == 3  # read from the kernel's process before clean-up
    assert result.exc_string == (
        "the kernel exited with status 3 (sys.exit() or os._exit() in a cell?)"
    )


def _fake_app(docname: str = "chapters/page"):
    config = SimpleNamespace(
        book_timeout_factor=4,
        book_timeout_floor=300,
        book_full_timeout_factor=20,
        book_full_timeout_floor=1800,
    )
    return SimpleNamespace(env=SimpleNamespace(docname=docname), config=config, _book_failed=set())


def _cached_client(tmp_path, executed, given):
    """myst-nb's cache client for ``given``, with ``executed`` in a fresh jupyter-cache."""
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn
    from myst_nb.core.config import NbParserConfig
    from myst_nb.core.execute.cache import NotebookClientCache

    page = tmp_path / "page.md"
    folder = tmp_path / "cache"
    get_cache(str(folder)).cache_notebook_bundle(
        CacheBundleIn(executed, str(page)), check_validity=False, overwrite=True
    )
    config = NbParserConfig(execution_mode="cache", execution_cache_path=str(folder))
    return NotebookClientCache(given, page, config, QuietLogger())


def _upstream_start():
    from myst_nb.core.execute.cache import NotebookClientCache

    start = NotebookClientCache.start_client
    return getattr(start, "__wrapped__", start)


def _upstream(name):
    from jupyter_cache.cache.main import JupyterCacheBase

    method = getattr(JupyterCacheBase, name)
    return getattr(method, "__wrapped__", method)


def test_jupyter_cache_hashes_display_tags_and_the_patch_only_execution_tags(tmp_path):
    from jupyter_cache import get_cache

    cache = get_cache(str(tmp_path / "cache"))
    upstream = _upstream("create_hashed_notebook")
    patched = execution._patched_hash(upstream)

    def digests(hash_):
        return [
            hash_(cache, _notebook("x = 1", tags=tags))[1]
            for tags in ((), ("remove-input",), ("hide-output", "remove-stderr"))
            + (("raises-exception",), ("raises-exception", "remove-input"), ("skip-execution",))
        ]

    plain, remove, hide, raises, raises_remove, skip = digests(upstream)
    assert len({plain, remove, hide}) == 3  # upstream: a display tag re-executes the chapter
    plain, remove, hide, raises, raises_remove, skip = digests(patched)
    assert plain == remove == hide  # the patch: display tags do not change the key
    assert raises == raises_remove and len({plain, raises, skip}) == 3  # execution tags do
    given = _notebook("x = 1", tags=("remove-input",))
    out, _ = patched(cache, given)
    assert out.cells[0].metadata["tags"] == ["remove-input"]  # the notebook itself is kept
    assert execution.execution_view(given).cells[0].metadata == {}
    assert given.cells[0].metadata["tags"] == ["remove-input"]  # and not edited in place


def test_jupyter_cache_merges_the_cached_tags_and_the_patch_keeps_the_pages(tmp_path):
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn
    from jupyter_cache.cache.main import JupyterCacheBase

    executed = _notebook("print(1)", tags=("hide-output",))
    executed.cells[0].execution_count = 1
    cache = get_cache(str(tmp_path / "cache"))
    hashed = execution._patched_hash(_upstream("create_hashed_notebook"))
    original = JupyterCacheBase.create_hashed_notebook
    try:
        JupyterCacheBase.create_hashed_notebook = hashed  # as in a build
        cache.cache_notebook_bundle(
            CacheBundleIn(executed, str(tmp_path / "page.md")), check_validity=False
        )
        given = _notebook("print(1)", tags=("remove-input",))
        _, upstream = _upstream("merge_match_into_notebook")(cache, given)
        assert upstream.cells[0].metadata["tags"] == ["hide-output"]  # the old tags
        _, merged = execution._patched_merge(_upstream("merge_match_into_notebook"))(cache, given)
    finally:
        JupyterCacheBase.create_hashed_notebook = original
    assert merged.cells[0].metadata == {"tags": ["remove-input"]}
    assert merged.cells[0].execution_count == 1  # the cached cell, with the page's tags


def test_myst_nb_writes_a_cached_page_without_its_outputs_and_the_patch_keeps_them(
    tmp_path, monkeypatch
):
    executed = _notebook("print(1)")
    executed.cells[0].execution_count = 1
    executed.cells[0].outputs = [
        nbformat.from_dict({"output_type": "stream", "text": "1\n", "name": "stdout"})
    ]

    given = _notebook("print(1)")
    client = _cached_client(tmp_path, executed, given)
    _upstream_start()(client)
    assert client.notebook is not given  # the outputs went into a copy, which myst-nb renders
    assert client.notebook.cells[0].outputs[0]["text"] == "1\n"
    assert given.cells[0].outputs == []  # and this one, without them, is what it writes

    app = _fake_app()
    monkeypatch.setattr(execution, "_APP", app)
    monkeypatch.delenv("BOOK_MODE", raising=False)
    given = _notebook("print(1)")
    client = _cached_client(tmp_path, executed, given)
    execution._patched_start(_upstream_start())(client)
    assert client.notebook is given
    assert given.cells[0].outputs == [{"name": "stdout", "output_type": "stream", "text": "1\n"}]
    assert list(given.cells[0].outputs[0]) == ["name", "output_type", "text"]  # keys sorted
    assert client.exec_metadata["succeeded"] is True
    assert app._book_failed == set()


def test_myst_nb_never_sees_stderr_of_a_removed_cell_and_the_patch_fails_the_chapter(
    tmp_path, monkeypatch
):
    from markdown_it.renderer import RendererHTML
    from myst_nb.core.nb_to_tokens import notebook_to_tokens
    from myst_parser.config.main import MdParserConfig
    from myst_parser.parsers.mdit import create_md_parser

    executed = _notebook("import sys\nsys.stderr.write('careful')", tags=("remove-cell",))
    executed.cells[0].outputs = [
        nbformat.from_dict({"output_type": "stream", "name": "stderr", "text": "careful"})
    ]
    given = _notebook("import sys\nsys.stderr.write('careful')", tags=("remove-cell",))
    # upstream: myst-nb checks stderr (nb_output_stderr) while rendering, and a removed cell
    # never becomes a token to render
    parser = create_md_parser(MdParserConfig(), RendererHTML)
    tokens = notebook_to_tokens(executed, parser, {}, QuietLogger())
    assert not [t for t in tokens if t.type.startswith("nb_cell_code")]

    app = _fake_app("chapters/page")
    monkeypatch.setattr(execution, "_APP", app)
    monkeypatch.delenv("BOOK_MODE", raising=False)
    client = _cached_client(tmp_path, executed, given)
    execution._patched_start(_upstream_start())(client)
    assert app._book_failed == {"chapters/page"}


def test_myst_nb_reads_random_cell_ids_and_the_patch_numbers_them():
    from myst_nb.core.config import NbParserConfig
    from myst_nb.core.read import create_nb_reader as upstream
    from myst_parser.config.main import MdParserConfig

    args = ("chapters/page.md", MdParserConfig(), NbParserConfig(), MYST_PAGE)
    first, second = (upstream(*args).read(MYST_PAGE) for _ in range(2))
    ids = [cell.id for cell in first.cells]
    assert [cell.cell_type for cell in first.cells] == ["code", "markdown", "code"]
    assert len(set(ids)) == 3
    assert ids != [cell.id for cell in second.cells]  # new random ids on every read

    patched = execution._patched_reader(upstream)
    for _ in range(2):
        read = patched(*args).read(MYST_PAGE)
        assert [cell.id for cell in read.cells] == ["cell-1", "cell-2", "cell-3"]
        assert [cell.source for cell in read.cells] == [c.source for c in first.cells]
    assert patched("notes.md", MdParserConfig(), NbParserConfig(), "# Plain Markdown\n") is None


# --- pages.py: myst-nb's glue and Sphinx's template rendering ------------------------------------


def test_myst_nb_links_a_pasted_image_it_never_writes_and_the_patch_writes_it(tmp_path):
    from myst_nb.ext.glue.crossref import generate_any_nodes

    upstream = getattr(generate_any_nodes, "__wrapped__", generate_any_nodes)
    image = b"\x89PNG\r\n\x1a\n not really a picture"
    output = {"data": {"image/png": base64.b64encode(image).decode()}}
    builder = SimpleNamespace(outdir=str(tmp_path / "html"), imagedir="_images")
    env = SimpleNamespace(docname="chapters/second")
    written = tmp_path / "html" / "_images" / f"{hashlib.sha256(image).hexdigest()}.png"

    made = upstream(None, output, ["image/png"], builder, env)
    assert [node["uri"] for node in made] == [f"../_images/{written.name}"]
    assert not written.exists()  # upstream: a broken image on the page that pastes it

    made = pages._generate_any_nodes(upstream)(None, output, ["image/png"], builder, env)
    assert [node["uri"] for node in made] == [f"../_images/{written.name}"]
    assert written.read_bytes() == image


def test_sphinx_hands_no_rendered_page_to_extensions_and_the_patch_filters_it(tmp_path):
    from sphinx.builders import html

    recorder = RecordingApp(tmp_path)
    html.setup(recorder)
    events = sorted(args[0] for name, args, _ in recorder.calls if name == "add_event")
    assert events == ["html-collect-pages", "html-page-context"]  # a context, never the HTML

    templates = SimpleNamespace(render=lambda template, context: "<h1> </h1><p>text</p>")
    app = SimpleNamespace(builder=SimpleNamespace(templates=templates))
    pages.add_page_filter(app, lambda page, context: page.replace("<h1> </h1>", ""))
    pages._wrap_render(app)
    assert templates.render("page.html", {}) == "<p>text</p>"
    assert templates.render.__wrapped__("page.html", {}) == "<h1> </h1><p>text</p>"


# --- proofs.py: sphinx-proof ------------------------------------------------------------------


def _xref_call(target: str):
    from sphinx.addnodes import pending_xref

    env = SimpleNamespace(
        proof_list={
            "ks-thm-2": {
                "docname": "chapters/two",
                "nonumber": True,
                "realtype": "theorem",
                "countertype": "theorem",
            },
            "prop-tau": {
                "docname": "chapters/two",
                "nonumber": False,
                "realtype": "proposition",
                "countertype": "proposition",
            },
        },
        toc_fignumbers={"chapters/two": {"proposition": {"prop-tau": (2, 3)}}},
        book_proof_titles={"ks-thm-2": ("chapters/two", "K&S Theorem 2")},
    )
    builder = SimpleNamespace(get_relative_uri=lambda source, target: "two.html")
    node = pending_xref("", refdomain="prf", reftype="ref", reftarget=target)
    domain = SimpleNamespace(name="prf")
    return (domain, env, "chapters/one", builder, "ref", target, node, nodes.inline(target, target))


def test_sphinx_proof_refers_to_an_unnumbered_box_by_its_type_alone_and_the_patch_by_its_label():
    from sphinx_proof.domain import ProofDomain

    upstream = getattr(ProofDomain.resolve_xref, "__wrapped__", ProofDomain.resolve_xref)
    patched = proofs._resolve_xref(upstream)
    assert upstream(*_xref_call("ks-thm-2")).astext() == "Theorem "  # type, no number
    assert patched(*_xref_call("ks-thm-2")).astext() == "K&S Theorem 2"
    made = patched(*_xref_call("ks-thm-2"))
    assert made["refuri"] == "two.html#ks-thm-2"
    # the book's own numbered boxes keep sphinx-proof's text
    assert upstream(*_xref_call("prop-tau")).astext() == "Proposition 2.3"
    assert patched(*_xref_call("prop-tau")).astext() == "Proposition 2.3"


def test_sphinx_proof_puts_the_type_before_a_papers_title_and_the_patch_does_not():
    from sphinx_proof.nodes import depart_unenumerable_node, unenumerable_node

    def box(paper: bool):
        made = unenumerable_node(realtype="theorem", ids=["ks-thm-2"])
        if paper:
            made["book_paper"] = True
        return made

    def html_body():
        return ['<div class="admonition">', '<p class="admonition-title" id="ks-thm-2">', "x"]

    upstream, patched = SimpleNamespace(body=html_body()), SimpleNamespace(body=html_body())
    depart_unenumerable_node(upstream, box(paper=True))
    proofs._depart_unenumerable(depart_unenumerable_node)(patched, box(paper=True))
    assert '<span class="caption-number">Theorem </span>' in upstream.body
    assert patched.body == [*html_body(), "</div>"]
    # a box that is not a paper's keeps sphinx-proof's markup
    ordinary = SimpleNamespace(body=html_body())
    proofs._depart_unenumerable(depart_unenumerable_node)(ordinary, box(paper=False))
    assert ordinary.body == upstream.body


# --- latex.py: sphinx-jupyterbook-latex ------------------------------------------------------


def test_jupyterbook_latex_lets_a_root_heading_end_a_page_and_the_patch_asks_for_room():
    from sphinx_jupyterbook_latex.nodes import RootHeader, visit_RootHeader

    def heading():
        made = RootHeader(level=2)
        made += nodes.Text("Reading guide")
        return made

    upstream, patched = SimpleNamespace(body=[]), SimpleNamespace(body=[])
    visit_RootHeader(upstream, heading())
    latex._visit_root_header(patched, heading())
    assert upstream.body == []
    assert patched.body == ["\n\\needspace{8\\baselineskip}\n"]
