"""Accessibility fixes of the theme's and docutils' HTML that no configuration reaches.

An accessibility engine (axe-core, run on every page by the browser check) found, in markup the
book does not write itself:

* myst-nb's "Show code cell source" toggles and pydata-sphinx-theme's search buttons carry an
  ``aria-label`` that differs from their visible text (WCAG 2.5.3 "label in name"): the label is
  dropped, so the visible text is the name;
* decorative Font Awesome icons inside labelled buttons are read out: they get ``aria-hidden``;
* docutils gives the bibliography ``role="list"`` with ``role="doc-biblioentry"`` children
  (deprecated, and not list items): they become ``role="listitem"``;
* the index pages (general index, module index, proof index) open with an empty ``<h1>``;
* the search dialog's form has no submit control: a visually hidden "Search" button is added;
* sphinx-exercise 1.2.1 gives every exercise's body the id ``exercise-content`` and every
  solution's ``solution-content`` (an id must be unique in a page): the second and later ones are
  numbered (:data:`REPEATED_IDS`; no upstream issue found, searched executablebooks/sphinx-exercise
  for duplicate ids).

Each fix is a text substitution of the rendered page (:data:`FIXES`), applied right after
rendering (:func:`.pages.add_page_filter`, as the notebook download link of :mod:`.notebooks`);
:func:`fix_html` is the function, unit-tested on the markup the theme writes.
"""

from __future__ import annotations

import re

from sphinx.application import Sphinx

from .pages import add_page_filter

#: ``(pattern, replacement)`` pairs, applied in order by :func:`fix_html`.
FIXES: list[tuple[re.Pattern, str]] = [
    (re.compile(r'<summary aria-label="Toggle hidden content">'), "<summary>"),
    (
        re.compile(r'(<button class="btn search-button-field[^"]*"[^>]*?) aria-label="Search"'),
        r"\1",
    ),
    (
        re.compile(r'<(i|span) class="([^"]*\bfa(?:-[a-z-]+)?\b[^"]*)"(?![^>]*aria-hidden)'),
        r'<\1 class="\2" aria-hidden="true"',
    ),
    (  # a decorative icon's title would become an SVG <title>, read as the control's text
        re.compile(r'(<i class="[^"]*\bfa-[^"]*" aria-hidden="true"[^>]*?)\s+title="[^"]*"'),
        r"\1",
    ),
    (re.compile(r'role="doc-biblioentry"'), 'role="listitem"'),
    (re.compile(r"<h1>\s*</h1>\s*"), ""),
    (
        re.compile(
            r'(<form class="bd-search[^>]*>)((?:(?!</form>|type="submit").)*?)(</form>)', re.S
        ),
        r'\1\2  <button type="submit" class="visually-hidden">Search</button>\n\3',
    ),
]


#: Ids that a page repeats by construction: the second occurrence becomes ``<id>-2``, and so on.
REPEATED_IDS = ("exercise-content", "solution-content")


def _number_repeats(html: str, name: str) -> str:
    count = 0

    def number(match: re.Match) -> str:
        nonlocal count
        count += 1
        return match.group(0) if count == 1 else f'id="{name}-{count}"'

    return re.sub(rf'id="{re.escape(name)}"', number, html)


def fix_html(html: str) -> str:
    """Apply :data:`FIXES` to one rendered page; idempotent.

    Args:
        html: the page's HTML text.

    Returns:
        The fixed HTML text.

    Raises:
        ValueError: if ``html`` is not a string.
    """
    if not isinstance(html, str):
        raise ValueError(f"html must be the page's HTML text (a str), got {type(html).__name__}")
    for pattern, replacement in FIXES:
        html = pattern.sub(replacement, html)
    for name in REPEATED_IDS:
        html = _number_repeats(html, name)
    return html


def setup(app: Sphinx) -> None:
    add_page_filter(app, lambda html, context: fix_html(html))
