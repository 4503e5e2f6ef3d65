"""plotly.js for the book's interactive figures (:mod:`lib.book.interactive`), served from the site.

The book's figures use three trace types (``lib.book.interactive.TRACE_TYPES``: scatter, bar,
heatmap), all in plotly.js's *cartesian* partial bundle, which weighs 1.5 MB against the full
bundle's 4.8 MB. That bundle is kept in this package (``static/plotly-cartesian.min.js``, with its
MIT licence beside it), byte for byte as npm's ``plotly.js-cartesian-dist-min`` 4.1.1 ships it
(:data:`PLOTLY_SHA256`; the same plotly.js version the pinned ``plotly`` Python package bundles),
so that a build needs neither Node nor the network. It is copied, with the book's
``book-interactive.js``, into the site's ``_static/`` when the HTML is written. Only the pages
that hold an interactive figure load ``book-interactive.js``, and it fetches plotly.js only when a
figure comes within a screen of the viewport: a chapter's first load is then about 1.5 MB lighter,
and a reader who never scrolls to the figure never downloads it (the figure's static image shows
until then, and in print). (``book-interactive.js`` lives here, not in
the project's ``_static/``, because Jupyter Book adds every script found there to every page.)
Nothing comes from a CDN: the site works opened from disk with the network off.

To update: ``npm pack plotly.js-cartesian-dist-min@<version>``, copy ``plotly-cartesian.min.js``
and ``LICENSE`` from the tarball, and record the file's SHA-256 in :data:`PLOTLY_SHA256`.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

from sphinx.application import Sphinx

__all__ = [
    "PLOTLY_JS",
    "PLOTLY_SHA256",
    "PLOTLY_VERSION",
    "SCRIPTS",
    "copy_plotly",
    "plotly_js_source",
    "setup",
]

#: The file name of plotly.js (the cartesian partial bundle) in the site's ``_static/``.
PLOTLY_JS = "plotly-cartesian.min.js"
#: The npm release of ``plotly.js-cartesian-dist-min`` kept in ``static/``.
PLOTLY_VERSION = "4.1.1"
#: SHA-256 of ``static/plotly-cartesian.min.js`` as the npm tarball of :data:`PLOTLY_VERSION`
#: holds it (tarball integrity sha512-o8GrFeusncwBIxbBynRJpY4pkgVB6caM+JLpwrLYbbsO7dZ8FJ+SVN2Fr+L7k
#: iG/Z6w4P5O0Jus/Qr5EefHVeg==).
PLOTLY_SHA256 = "79542150855a52c567260e3137095dbe2b744e6d702a5cabe67da246942fba7a"
#: The scripts of ``static/`` copied into the site: plotly.js, and the book's script, which a page
#: with an interactive figure loads and which fetches plotly.js when a figure nears the viewport.
SCRIPTS = (PLOTLY_JS, "book-interactive.js")
_STATIC = Path(__file__).resolve().parent / "static"
_MARKER = 'class="book-interactive"'


def plotly_js_source() -> Path:
    """The cartesian partial bundle of plotly.js kept in this package, checked against its record.

    Raises:
        FileNotFoundError: when the file is missing.
        ValueError: when its SHA-256 is not :data:`PLOTLY_SHA256` (an edited or truncated copy).
    """
    path = _STATIC / PLOTLY_JS
    if not path.is_file():
        raise FileNotFoundError(f"the book's plotly.js bundle is missing: {path}")
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != PLOTLY_SHA256:
        raise ValueError(f"{path} has SHA-256 {digest}, not the recorded {PLOTLY_SHA256}")
    return path


def _scripts(app: Sphinx, pagename: str, templatename: str, context: dict, doctree) -> None:
    """A page with an interactive figure loads ``book-interactive.js``, which fetches plotly.js
    (named in its ``data-plotly``) only when a figure comes near the viewport."""
    if _MARKER in (context.get("body") or ""):
        app.add_js_file(
            "book-interactive.js",
            priority=600,
            loading_method="defer",
            **{"data-plotly": PLOTLY_JS},
        )


def copy_plotly(app: Sphinx, exception) -> None:
    """Copy plotly.js and ``book-interactive.js`` into the HTML output's ``_static/`` (at
    ``build-finished``, and earlier: :mod:`.pages`)."""
    if exception is None and app.builder.format == "html":
        static = Path(app.outdir, "_static")
        static.mkdir(parents=True, exist_ok=True)
        for name in SCRIPTS:
            source = plotly_js_source() if name == PLOTLY_JS else _STATIC / name
            target = static / name
            if not target.is_file() or target.read_bytes() != source.read_bytes():
                shutil.copyfile(source, target)


def setup(app: Sphinx) -> None:
    app.connect("html-page-context", _scripts)
    app.connect("build-finished", copy_plotly)
