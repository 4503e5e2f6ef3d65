"""Per-page fixes of the HTML output.

* Repeated ``<script>`` entries are dropped (a duplicate of sphinx-thebe's inline configuration
  is a JavaScript ``SyntaxError`` in the browser console).
* A figure pasted from another page with ``{glue:any}`key` `` and ``:doc:`` shows its image:
  the pinned myst-nb computes the image's path under ``_images/`` but does not write the file;
  this module writes it.
* The stylesheets and scripts that extensions copy into ``_static/`` only when the build ends
  (myst-nb's ``mystnb.<hash>.css``, sphinx-proof's ``proof.css``, the offline MathJax, the
  book's ``plotly.min.js``) are copied before the pages are written too, so that every page links
  each with its ``?v=<checksum>`` (Sphinx adds it only for a file it finds) and two builds of the
  same sources write the same pages. These calls into other packages' handlers
  (:data:`LATE_ASSETS`) are checked like the patches.

* pydata-sphinx-theme's Font Awesome script (``scripts/fontawesome.js``, 1.5 MB, a third of a
  chapter's first load) is dropped from every page (:func:`drop_fontawesome_js`): the theme's
  stylesheet already holds Font Awesome's classes and webfonts, which draw every standard icon;
  the script only turns them into inline SVG and serves custom icons, which the book has none of.

* In the theme's default mode, ``auto``, the page is painted light until the theme's deferred
  script reads the reader's colour preference: a reader in dark mode saw a white flash on every
  page. A script in the page's head (:data:`EARLY_THEME`) resolves ``auto`` before the first paint
  (pydata-sphinx-theme issue 1857).

Two patches, each applied after :func:`.patching.require_version` has checked the version it was
written for (:data:`.patching.WRITTEN_FOR`, "pinned" below): myst-nb's ``generate_any_nodes``
(:func:`_generate_any_nodes`) and the rendering of the HTML builder's templates
(:func:`_wrap_render`). The same check guards the handlers :func:`_copy_late_assets` calls and the
theme's markup that :func:`drop_fontawesome_js` matches.
"""

from __future__ import annotations

import re
from binascii import a2b_base64
from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx

from .patching import NO_ISSUE, require_version

#: The theme's ``<script>`` of its Font Awesome script, written by the template
#: :data:`FONTAWESOME_TARGET` of the pinned pydata-sphinx-theme.
_FONTAWESOME_JS = re.compile(
    r'\s*<script defer src="[^"]*_static/scripts/fontawesome\.js[^"]*"></script>'
)
FONTAWESOME_TARGET = "pydata_sphinx_theme/theme/pydata_sphinx_theme/static/webpack-macros.html"
FONTAWESOME_ISSUE = "https://github.com/pydata/pydata-sphinx-theme/issues/2379"
#: The other packages' ``build-finished`` handlers that :func:`_copy_late_assets` calls when the
#: builder starts, as ``(distribution, handler)``; each handler is called as ``handler(app,
#: None)``, as Sphinx calls it after a build without error.
LATE_ASSETS = (
    ("myst-nb", "myst_nb.sphinx_ext.add_global_html_resources"),
    ("sphinx-proof", "sphinx_proof.copy_asset_files"),
    ("sphinx-exercise", "sphinx_exercise.copy_asset_files"),
    ("sphinx-mathjax-offline", "sphinx-mathjax-offline.copy_mathjax_files"),
)
LATE_ASSETS_ISSUE = "https://github.com/sphinx-doc/sphinx/pull/11415"
#: What each patch replaces, and the upstream issue it works around.
GLUE_TARGET = "myst_nb.ext.glue.crossref.generate_any_nodes"
GLUE_ISSUE = "https://github.com/executablebooks/MyST-NB/pull/675"
RENDER_TARGET = "sphinx.jinja2glue.BuiltinTemplateLoader.render"
RENDER_ISSUE = (
    f"{NO_ISSUE} (searched sphinx-doc/sphinx for an event that hands an extension the rendered "
    "HTML of a page)"
)


def _dedupe_scripts(app: Sphinx, pagename: str, templatename: str, context: dict, doctree) -> None:
    """Drop repeated ``<script>`` entries from a page (sphinx-thebe can register its inline one
    twice)."""
    scripts = context.get("script_files")
    if not scripts:
        return
    seen, unique = set(), []
    for js in scripts:
        attributes = getattr(js, "attributes", {}) or {}
        filename = getattr(js, "filename", js) or ""  # inline scripts come as None and as ""
        key = (str(filename), tuple(sorted((k, str(v)) for k, v in attributes.items())))
        if key not in seen:
            seen.add(key)
            unique.append(js)
    context["script_files"] = unique


def _generate_any_nodes(original):
    """myst-nb's ``generate_any_nodes``, plus the image file that a ``{glue:any}`` paste of
    another page's image links to.

    Why: the pinned myst-nb gives such a paste an image node whose URI is
    ``_images/<sha256>.<ext>`` but writes no file there (the page that glued the figure writes its
    copy under ``jupyter_execute``), so the pasted figure was a broken image. Source:
    https://github.com/executablebooks/MyST-NB/pull/675 (merged, and in the pinned release: image
    pastes from other pages "figure out the existing uri" instead of writing the image again; the
    review asked how that works for Markdown notebooks, which store no outputs).
    """

    def generate_any_nodes(node, output, priority_list, builder, env):
        made = original(node, output, priority_list, builder, env)
        for image in (n for n in made if isinstance(n, nodes.image)):
            mime = next(
                (
                    m
                    for m in priority_list
                    if m in output["data"] and m.startswith(("image/", "application/pdf"))
                ),
                None,
            )
            if mime is None:
                continue
            path = (Path(builder.outdir) / env.docname).parent / image["uri"]
            path = path.resolve()
            path.parent.mkdir(parents=True, exist_ok=True)
            if not path.exists():
                path.write_bytes(a2b_base64(output["data"][mime]))
        return made

    generate_any_nodes.__wrapped__ = original
    return generate_any_nodes


def _patch_pasted_images() -> None:
    """Install :func:`_generate_any_nodes` in myst-nb's glue cross-reference module (once)."""
    from myst_nb.ext.glue import crossref

    if not hasattr(crossref.generate_any_nodes, "__wrapped__"):
        crossref.generate_any_nodes = _generate_any_nodes(crossref.generate_any_nodes)


def _handler(target: str):
    """The function a dotted ``target`` of :data:`LATE_ASSETS` names (its module imported)."""
    import importlib

    module, name = target.rsplit(".", 1)
    return getattr(importlib.import_module(module), name)


def _copy_late_assets(app: Sphinx) -> None:
    """Copy the static files extensions copy at ``build-finished`` now, before any page.

    Sphinx versions a stylesheet's link (``exercise.css?v=…``) only when the file is already in
    ``_static`` as the page is written; a file that arrives at ``build-finished`` leaves the first
    build's pages with bare links and a later build's rewritten pages with versioned ones, so that
    the same page's bytes would depend on which build wrote it. So the handlers of
    :data:`LATE_ASSETS` (myst-nb's ``add_global_html_resources``, sphinx-proof's and
    sphinx-exercise's ``copy_asset_files``, sphinx-mathjax-offline's ``copy_mathjax_files``, each
    connected upstream to ``build-finished``) are called here too, as Sphinx would call them after a
    build without error, and so is the book's own :func:`.interactive.copy_plotly`. Calling them
    out of turn relies on what the pinned versions do (copy files into ``_static`` and nothing
    else), so :func:`setup` checks each version with :func:`.patching.require_version`. Source:
    https://github.com/sphinx-doc/sphinx/pull/11415 (merged: Sphinx adds a local file's checksum
    to its link, and only for a file it finds in the output folder).
    """
    if app.builder.format != "html":
        return
    from . import interactive

    Path(app.outdir, "_static").mkdir(parents=True, exist_ok=True)
    for _, target in LATE_ASSETS:
        _handler(target)(app, None)
    interactive.copy_plotly(app, None)


def add_page_filter(app: Sphinx, page_filter) -> None:
    """Have ``page_filter(html, context) -> html`` edit every page right after it is rendered.

    For markup that the theme's templates write and no configuration reaches (the notebook
    download link, accessibility fixes). Filters run in the order they were added.

    Raises:
        ValueError: if ``page_filter`` is not callable.
    """
    if not callable(page_filter):
        raise ValueError(f"page_filter must be callable, got {page_filter!r}")
    app.__dict__.setdefault("book_page_filters", []).append(page_filter)


#: Run in the head, before the first paint: the theme's own inline script has set ``data-mode``
#: to the reader's stored mode (``light``, ``dark`` or ``auto``, the default) and ``data-theme``
#: to ``auto``; the theme becomes the mode at once, ``auto`` resolved by the reader's colour
#: preference, as the theme's deferred script would make it later. Source:
#: https://github.com/pydata/pydata-sphinx-theme/issues/1857 (open: "Website Flashes White in Dark
#: Mode").
EARLY_THEME = (
    "(function () {"
    " var html = document.documentElement, mode = html.dataset.mode;"
    " if (html.dataset.theme === 'auto' || !html.dataset.theme) {"
    "  html.dataset.theme = mode === 'dark' || mode === 'light' ? mode"
    "   : window.matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';"
    " }"
    "})();"
)


def drop_fontawesome_js(html: str, context: dict | None = None) -> str:
    """``html`` without pydata-sphinx-theme's ``<script>`` of ``scripts/fontawesome.js``.

    Why: the theme loads Font Awesome twice, as its stylesheet's classes and webfonts and as a
    1.5 MB script that rewrites every icon into inline SVG (and registers custom icons). The
    webfonts draw the standard icons the book shows; the book defines no custom icon. Source:
    https://github.com/pydata/pydata-sphinx-theme/issues/2379 (open; the fix proposed there,
    https://github.com/pydata/pydata-sphinx-theme/pull/2494, renders standard icons from CSS
    and webfonts in the same way).
    """
    return _FONTAWESOME_JS.sub("", html)  # markup of the pinned theme, checked at setup() (and
    # the site test test_no_page_loads_the_font_awesome_script fails if the markup changes)


def _wrap_render(app: Sphinx) -> None:
    """Wrap the builder's template rendering once, to apply :func:`add_page_filter`'s filters.

    Why: the pinned Sphinx hands extensions a page's template context (``html-page-context``) but
    no event carries the rendered HTML, and the theme's templates write the markup the filters
    fix. Only this builder's template loader is wrapped, not Sphinx's class. (Sphinx's
    ``template_bridge`` setting could name a loader class of the book's own instead.) Source: no
    upstream issue found (searched sphinx-doc/sphinx for an event that hands an extension the
    rendered HTML of a page).
    """
    templates = getattr(app.builder, "templates", None)
    filters = app.__dict__.get("book_page_filters", [])
    if templates is None or not filters or hasattr(templates.render, "__wrapped__"):
        return
    original = templates.render

    def render(template: str, context: dict) -> str:
        html = original(template, context)
        if template.endswith(".html"):
            for page_filter in filters:
                html = page_filter(html, context)
        return html

    render.__wrapped__ = original
    templates.render = render


def setup(app: Sphinx) -> None:
    require_version("myst-nb", target=GLUE_TARGET, issue=GLUE_ISSUE)
    require_version("sphinx", target=RENDER_TARGET, issue=RENDER_ISSUE)
    require_version("pydata-sphinx-theme", target=FONTAWESOME_TARGET, issue=FONTAWESOME_ISSUE)
    for distribution, target in LATE_ASSETS:
        require_version(distribution, target=target, issue=LATE_ASSETS_ISSUE)
    add_page_filter(app, drop_fontawesome_js)
    app.add_js_file(None, body=EARLY_THEME, priority=1)
    _patch_pasted_images()
    app.connect("builder-inited", _wrap_render)
    app.connect("builder-inited", _copy_late_assets)
    app.connect("html-page-context", _dedupe_scripts, priority=900)
