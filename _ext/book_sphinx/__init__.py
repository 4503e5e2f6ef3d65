"""The book's own Sphinx extension (build tooling, not part of ``lib``).

Loaded by ``_config.yml`` (``sphinx.local_extensions: {book_sphinx: _ext}``). It keeps every
build honest and every failure legible:

* :mod:`.guard` clears the execution cache when ``lib/``, the pins, ``_config.yml`` or the mode
  change, and clears the HTML and doctrees when the table of contents, the set of pages,
  ``_static/``, ``references.bib`` or this extension change, so an incremental build never
  serves stale pages.
* :mod:`.execution` derives each chapter's cell timeout from its ``budget_seconds`` (a safety
  net: at least ``book_timeout_factor`` x the budget and at least ``book_timeout_floor`` seconds;
  larger in full mode), fails the build with one line naming the chapter, the cell and the cause
  when a cell fails, times out or the kernel dies, fails it when *any* cell (removed and hidden
  ones included) wrote to stderr, and removes a failed chapter's page from the output.
* :mod:`.parallel` executes the chapters several at a time (``BOOK_PAGE_JOBS`` kernels of
  ``BOOK_THREADS`` threads, the cores shared among them) before Sphinx reads them one by one.
* :mod:`.tables` fills the ``checks-table`` and ``budget-table`` directives from what the
  chapters recorded (only the records :mod:`lib.book.checks` wrote are read).
* :mod:`.notebooks` offers each chapter as a notebook that runs in Jupyter: the executed
  notebook with its MyST converted to plain Markdown (glued values, numbers and references as
  the page shows them) and a first cell that says how to run it; the link downloads the file.
* :mod:`.launch` adds Colab and Binder buttons that open the notebooks the book's workflow
  publishes (when the build knows the GitHub repository), their set-up cell, and one zip of
  every notebook.
* :mod:`.pages` drops duplicated script tags and writes the image files of figures pasted from
  another page with ``{glue:any}``.
* :mod:`.interactive` serves plotly.js from the site's own ``_static/`` to the pages that hold
  an interactive figure (:mod:`lib.book.interactive`).
* :mod:`.proofs` shows the papers' statements under the papers' own numbers ("K&S Theorem 2")
  and gives every theorem box unique HTML ids.
* :mod:`.a11y` fixes the theme's and docutils' markup that an accessibility audit flags (labels
  that differ from the visible text, read-out icons, list roles, empty headings, a search form
  without a submit control).
* :mod:`.search` ranks the chapters' search results before the API reference's.
* :mod:`.citations` labels the reference list as the text cites it ("Kajitsuka and Sato, 2024").
* :mod:`.latex` numbers the PDF's theorem boxes and back matter as the site does, and leaves the
  API reference to the site.
* :mod:`.numbering` keeps the stored figure numbers in a rebuild that read no page (Sphinx walks
  every page's doctree for them otherwise: 2 s of a 5 s rebuild).
* :mod:`.phone` serves each wide figure's phone rendition (drawn by ``lib.book.plotting``) to
  narrow screens through ``<picture>``, so figures fit a phone's column instead of scrolling.
* :mod:`.patching` pins each run-time patch of another package (myst-nb, jupyter-cache, nbclient,
  sphinx-proof, Sphinx, sphinx-jupyterbook-latex), each fix of another package's markup (the
  themes, docutils, sphinx-exercise) and each out-of-turn call of another package's handler to
  the version it was written for, all in one table (:data:`.patching.WRITTEN_FOR`): on another
  version the build stops, naming the patch and the upstream issue to check.
"""

from __future__ import annotations

import os
from pathlib import Path

from sphinx.application import Sphinx

from . import (
    a11y,
    citations,
    execution,
    guard,
    interactive,
    latex,
    launch,
    notebooks,
    numbering,
    pages,
    parallel,
    phone,
    proofs,
    search,
    tables,
)

__all__ = ["setup"]


def _writable_mpl_config(app: Sphinx) -> None:
    """Point matplotlib at a writable config folder when the default one is not writable.

    Otherwise every kernel's first ``import matplotlib`` warns on stderr ("Matplotlib created a
    temporary cache directory ..."), which fails the strict build and ends up in the
    downloadable notebooks.
    """
    if os.environ.get("MPLCONFIGDIR"):
        return
    home = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config") / "matplotlib"
    probe = home if home.exists() else home.parent
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    if not os.access(probe, os.W_OK):
        folder = Path(app.outdir).parent / ".matplotlib"
        folder.mkdir(parents=True, exist_ok=True)
        os.environ["MPLCONFIGDIR"] = str(folder)


#: Fonts matplotlib ships (in its ``mpl-data``) that the book's figures and mathtext use.
_OWN_FONTS = frozenset({"DejaVu Sans", "STIXGeneral", "cmr10"})


def _complete_font_list() -> None:
    """Write matplotlib's font list again when it lacks matplotlib's own fonts.

    The list (``fontlist-v<version>.json`` in matplotlib's cache folder) is shared by every
    environment of one matplotlib version on the machine, and matplotlib trusts it once written.
    Written while an environment's ``mpl-data`` was missing (an install under way, a clone being
    deleted), it lacks the bundled fonts, and every kernel's first figure then warns ``findfont:
    Font family ['STIXGeneral'] not found`` on stderr, which fails the strict build. Rebuilt here,
    in the build's own process, before any kernel starts (a kernel that rebuilt it would print
    "Matplotlib is building the font cache" on stderr instead).
    """
    import matplotlib
    from matplotlib import font_manager

    if _OWN_FONTS <= {f.name for f in font_manager.fontManager.ttflist}:
        return
    fresh = font_manager.FontManager()
    cache = (
        Path(matplotlib.get_cachedir()) / f"fontlist-v{font_manager.FontManager.__version__}.json"
    )
    font_manager.json_dump(fresh, cache)


def setup(app: Sphinx) -> dict:
    """Register the guards, the execution checks, the aggregate tables and the page fixes."""
    os.environ["BOOK_BUILD"] = "1"  # lib.runtime.IN_BUILD: progress bars stay silent in kernels
    _writable_mpl_config(app)
    _complete_font_list()
    guard.setup(app)
    execution.setup(app)
    parallel.setup(app)
    tables.setup(app)
    pages.setup(app)
    notebooks.setup(app)
    launch.setup(app)
    proofs.setup(app)
    interactive.setup(app)
    citations.setup(app)
    a11y.setup(app)
    search.setup(app)
    latex.setup(app)
    numbering.setup(app)
    phone.setup(app)
    return {"version": "0.2", "parallel_read_safe": False, "parallel_write_safe": True}
