"""plotly.js for the book's interactive figures (:mod:`lib.book.interactive`), served from the site.

The JavaScript of the installed ``plotly`` package (pinned in the requirements) is copied once
into the site's ``_static/`` when the HTML is written, and loaded, with the book's
``book-interactive.js``, only by the pages that hold an interactive figure. Nothing comes from a
CDN: the site works opened from disk with the network off.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from sphinx.application import Sphinx

__all__ = ["PLOTLY_JS", "copy_plotly", "plotly_js_source", "setup"]

#: The file name of plotly.js in the site's ``_static/``.
PLOTLY_JS = "plotly.min.js"
_MARKER = 'class="book-interactive"'


def plotly_js_source() -> Path:
    """The minified plotly.js shipped inside the installed ``plotly`` Python package.

    Raises:
        FileNotFoundError: when the package or its bundled JavaScript is missing.
    """
    import plotly

    path = Path(plotly.__file__).resolve().parent / "package_data" / PLOTLY_JS
    if not path.is_file():
        raise FileNotFoundError(f"plotly {plotly.__version__} ships no {path}")
    return path


def _scripts(app: Sphinx, pagename: str, templatename: str, context: dict, doctree) -> None:
    if _MARKER in (context.get("body") or ""):
        app.add_js_file(PLOTLY_JS, priority=600, loading_method="defer")
        app.add_js_file("book-interactive.js", priority=601, loading_method="defer")


def copy_plotly(app: Sphinx, exception) -> None:
    """Copy plotly.js into the HTML output's ``_static/`` (at ``build-finished``, and earlier:
    :mod:`.pages`)."""
    if exception is None and app.builder.format == "html":
        static = Path(app.outdir, "_static")
        static.mkdir(parents=True, exist_ok=True)
        target = static / PLOTLY_JS
        source = plotly_js_source()
        if not target.is_file() or target.stat().st_size != source.stat().st_size:
            shutil.copyfile(source, target)


def setup(app: Sphinx) -> None:
    app.connect("html-page-context", _scripts)
    app.connect("build-finished", copy_plotly)
