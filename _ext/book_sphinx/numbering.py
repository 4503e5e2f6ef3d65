"""A rebuild that reads no page keeps its figure numbers instead of walking every page again.

With ``numfig`` on, the pinned Sphinx (:data:`.patching.WRITTEN_FOR`) renumbers every figure,
table, equation and box after each read phase, even one that read no page
(``TocTreeCollector.get_updated_docs`` calls ``assign_figure_numbers``), and that walk unpickles
every page's doctree: about 2 s of a 5 s rebuild with nothing changed, most of it the API
reference's 12 MB doctree (sphinx-doc/sphinx issue 11908 traces the walk; other projects turned
``numfig`` off for it). When this build read no page and removed none, and the stored numbers
were assigned for the same kind of output (the site and the PDF share one environment, and
:mod:`.latex` renumbers the boxes for the PDF), no number can change, so the walk is skipped and
the stored numbers stand. In any other build Sphinx's own function runs unchanged.

One patch, applied after :func:`.patching.require_version` has checked the version it was written
for: :func:`_assign_figure_numbers` wraps ``assign_figure_numbers``.
"""

from __future__ import annotations

import functools

from sphinx.application import Sphinx

from .patching import require_version

TARGET = "sphinx.environment.collectors.toctree.TocTreeCollector.assign_figure_numbers"
ISSUE = "https://github.com/sphinx-doc/sphinx/issues/11908"
#: The environment attribute (pickled with it) that names the output format whose numbers it holds.
FORMAT_ATTR = "book_numbers_for"
#: The application attribute that says whether this build read or removed a page (``None`` until
#: Sphinx has decided what to read).
CHANGED_ATTR = "book_pages_changed"


def numbers_current(app: Sphinx, env) -> bool:
    """True when the figure numbers stored with ``env`` are those this build would assign: no page
    read or removed in this build, and the numbers assigned for ``app.builder.format``."""
    changed = getattr(app, CHANGED_ATTR, None)
    return changed is False and getattr(env, FORMAT_ATTR, None) == app.builder.format


def _assign_figure_numbers(original):
    @functools.wraps(original)
    def assign_figure_numbers(self, env) -> list[str]:
        if env.app is not None and numbers_current(env.app, env):
            return []
        return original(self, env)

    return assign_figure_numbers


def _start(app: Sphinx) -> None:
    setattr(app, CHANGED_ATTR, None)


def _purged(app: Sphinx, env, docname: str) -> None:
    setattr(app, CHANGED_ATTR, True)


def _before_read(app: Sphinx, env, docnames: list[str]) -> None:
    # env-purge-doc for the removed pages fires before this event.
    setattr(app, CHANGED_ATTR, bool(getattr(app, CHANGED_ATTR, None)) or bool(docnames))


def _numbered(app: Sphinx, env) -> list[str]:
    """Record the output format the environment's numbers now hold (after :mod:`.latex`)."""
    setattr(env, FORMAT_ATTR, app.builder.format)
    return []


def setup(app: Sphinx) -> None:
    require_version("sphinx", target=TARGET, issue=ISSUE)
    from sphinx.environment.collectors.toctree import TocTreeCollector

    if not hasattr(TocTreeCollector.assign_figure_numbers, "__wrapped__"):
        TocTreeCollector.assign_figure_numbers = _assign_figure_numbers(
            TocTreeCollector.assign_figure_numbers
        )
    app.connect("builder-inited", _start)
    app.connect("env-purge-doc", _purged)
    app.connect("env-before-read-docs", _before_read, priority=999)  # after any that edit the list
    app.connect("env-get-updated", _numbered, priority=950)  # after .latex and .guard (900)
