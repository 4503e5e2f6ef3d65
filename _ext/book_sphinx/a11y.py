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
* sphinx-exercise gives every exercise's body the id ``exercise-content`` and every solution's
  ``solution-content`` (an id must be unique in a page): the second and later ones are numbered
  (:data:`REPEATED_IDS`).

Each fix is a text substitution of the rendered page (:data:`FIXES`), applied right after
rendering (:func:`.pages.add_page_filter`, as the notebook download link of :mod:`.notebooks`);
:func:`fix_html` is the function, unit-tested on the markup the theme writes.

A regular expression over another package's markup is written against one version of it: a later
template can stop matching, and the fix is silently lost. So each fix names the markup it matches
(:attr:`Fix.sources`: the distribution, and the template or function that writes it) and the
upstream issue, and :func:`setup` checks each version with :func:`.patching.require_version`, as
for the patches: on a version other than :data:`.patching.WRITTEN_FOR`'s the build stops.
"""

from __future__ import annotations

import dataclasses
import re

from sphinx.application import Sphinx

from .pages import add_page_filter
from .patching import NO_ISSUE, require_version

_PST = "pydata_sphinx_theme/theme/pydata_sphinx_theme"
_SBT = "sphinx_book_theme/theme/sphinx_book_theme"


@dataclasses.dataclass(frozen=True)
class Fix:
    """One substitution of the rendered page, and the markup it was written against."""

    pattern: re.Pattern
    replacement: str
    #: ``(distribution, target)`` for each package whose markup :attr:`pattern` matches: the
    #: function that writes it (a dotted name) or the template (its path in the installed
    #: package), as :func:`.patching.require_version` takes them.
    sources: tuple[tuple[str, str], ...]
    #: The upstream issue or pull request, or the :data:`.patching.NO_ISSUE` marker.
    issue: str


#: The fixes :func:`fix_html` applies, in order.
FIXES: list[Fix] = [
    Fix(
        re.compile(r'<summary aria-label="Toggle hidden content">'),
        "<summary>",
        (("myst-nb", "myst_nb.sphinx_.visit_HideCellInput"),),
        f"{NO_ISSUE} (searched executablebooks/MyST-NB for the aria-label of a hidden cell's "
        "summary)",
    ),
    Fix(
        re.compile(r'(<button class="btn search-button-field[^"]*"[^>]*?) aria-label="Search"'),
        r"\1",
        (("pydata-sphinx-theme", f"{_PST}/components/search-button-field.html"),),
        f"{NO_ISSUE} (searched pydata/pydata-sphinx-theme for a search button's aria-label that "
        "differs from its text)",
    ),
    Fix(
        re.compile(r'<(i|span) class="([^"]*\bfa(?:-[a-z-]+)?\b[^"]*)"(?![^>]*aria-hidden)'),
        r'<\1 class="\2" aria-hidden="true"',
        (
            ("pydata-sphinx-theme", f"{_PST}/components"),
            ("sphinx-book-theme", f"{_SBT}/components"),
        ),
        f"{NO_ISSUE} (searched pydata/pydata-sphinx-theme for aria-hidden on decorative Font "
        "Awesome icons, and sphinx-book-theme's tracker likewise)",
    ),
    Fix(  # a decorative icon's title would become an SVG <title>, read as the control's text
        re.compile(r'(<i class="[^"]*\bfa-[^"]*" aria-hidden="true"[^>]*?)\s+title="[^"]*"'),
        r"\1",
        (("pydata-sphinx-theme", f"{_PST}/components/theme-switcher.html"),),
        "https://github.com/pydata/pydata-sphinx-theme/pull/1924",
    ),
    Fix(
        re.compile(r'role="doc-biblioentry"'),
        'role="listitem"',
        (("docutils", "docutils.writers._html_base.HTMLTranslator.visit_citation"),),
        f"{NO_ISSUE} (searched w3c/dpub-aria for doc-biblioentry, deprecated by its pull request "
        "22; docutils' own tracker, on SourceForge, was not searched)",
    ),
    Fix(
        re.compile(r"<h1>\s*</h1>\s*"),
        "",
        (("sphinx-book-theme", f"{_SBT}/layout.html"),),
        f"{NO_ISSUE} (searched executablebooks/sphinx-book-theme for the empty print-only "
        "heading of a page without a title)",
    ),
    Fix(
        re.compile(
            r'(<form class="bd-search[^>]*>)((?:(?!</form>|type="submit").)*?)(</form>)', re.S
        ),
        r'\1\2  <button type="submit" class="visually-hidden">Search</button>\n\3',
        (("pydata-sphinx-theme", f"{_PST}/components/search-field.html"),),
        f"{NO_ISSUE} (searched pydata/pydata-sphinx-theme for a submit control of the search form)",
    ),
]


#: Ids that a page repeats by construction: the second occurrence becomes ``<id>-2``, and so on.
REPEATED_IDS = ("exercise-content", "solution-content")
#: Where :data:`REPEATED_IDS` are written, as :attr:`Fix.sources`.
REPEATED_IDS_SOURCES = (
    ("sphinx-exercise", "sphinx_exercise.directive.ExerciseDirective.run"),
    ("sphinx-exercise", "sphinx_exercise.directive.SolutionDirective.run"),
    ("sphinx-exercise", "sphinx_exercise.transforms.MergeGatedSolutions.apply"),
)
REPEATED_IDS_ISSUE = f"{NO_ISSUE} (searched executablebooks/sphinx-exercise for duplicate ids)"


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
    for fix in FIXES:
        html = fix.pattern.sub(fix.replacement, html)
    for name in REPEATED_IDS:
        html = _number_repeats(html, name)
    return html


def setup(app: Sphinx) -> None:
    for fix in FIXES:
        for distribution, target in fix.sources:
            require_version(distribution, target=target, issue=fix.issue)
    for distribution, target in REPEATED_IDS_SOURCES:
        require_version(distribution, target=target, issue=REPEATED_IDS_ISSUE)
    add_page_filter(app, lambda html, context: fix_html(html))
