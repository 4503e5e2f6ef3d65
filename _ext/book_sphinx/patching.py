"""Run-time patches of other packages, each pinned to the version it was written for.

Where no configuration reaches, this extension replaces or wraps a few functions of myst-nb,
jupyter-cache, nbclient, sphinx-proof, Sphinx and sphinx-jupyterbook-latex (the modules that do it
say what and why, and cite the upstream issue each patch works around), calls other packages'
event handlers out of turn (:mod:`.pages` copies their late static files before the pages are
written), and rewrites markup the themes, docutils and sphinx-exercise write (:mod:`.a11y`, and
:mod:`.pages`' Font Awesome script). Each is written against one version of the code it depends
on; run against another, it can fail in ways that look like the book's own faults, silently undo
an upstream fix, or, for a regular expression over markup, silently stop matching. So every such
site calls :func:`require_version` when it is applied (at ``setup()``): on any other installed
version the build stops with one line that names the patch, the version it was written for, the
installed one and the issue to check.

:data:`WRITTEN_FOR` is the one place the extension writes those versions: every
:func:`require_version` reads it (tests/unit/test_patches.py checks that it agrees with
``requirements.txt`` and the lock files, and that no other module of the extension writes a
version number of a package).

Every call is recorded in :data:`REGISTRY` (the unit tests check that each patch site is listed,
with the upstream issue it works around, or the explicit :data:`NO_ISSUE` marker saying where the
search for one ended).
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import re

__all__ = ["NO_ISSUE", "REGISTRY", "WRITTEN_FOR", "Patch", "require_version"]

#: How a patch without an upstream issue says so: ``"no upstream issue found (searched <tracker>
#: for <what>)"``.
NO_ISSUE = "no upstream issue found"
_ISSUE_URL = re.compile(r"https://github\.com/[\w.-]+/[\w.-]+/(issues|pull)/\d+")

#: For each distribution (as pip names it) that a patch, a markup fix or an out-of-turn call of
#: its handlers depends on, the exact version they were written for: the pins of
#: ``requirements.lock``.
WRITTEN_FOR: dict[str, str] = {
    "docutils": "0.21.2",  # a11y: the bibliography's roles (HTML writer)
    "jupyter-cache": "1.0.1",  # execution: dead kernels, the cache key, cached tags
    "myst-nb": "1.4.0",  # execution, pages, phone, a11y; pages' late static file
    "nbclient": "0.11.0",  # execution: the kernel's clean-up
    "pydata-sphinx-theme": "0.17.1",  # a11y: search button, search form, icons; pages: script
    "sphinx": "7.4.7",  # pages: template rendering; numbering: figure numbers
    "sphinx-book-theme": "1.3.0",  # a11y: icons, the print-only heading
    "sphinx-exercise": "1.2.1",  # a11y: repeated ids; pages' late static file
    "sphinx-jupyterbook-latex": "1.0.0",  # latex: the introduction's headings
    "sphinx-mathjax-offline": "0.0.2",  # pages' late static files
    "sphinx-proof": "0.4.0",  # proofs: unnumbered boxes; pages' late static file
}


@dataclasses.dataclass(frozen=True)
class Patch:
    """One patched target and one distribution whose version it was written for."""

    #: The dotted name of what is replaced, wrapped or called, e.g.
    #: ``"myst_nb.sphinx_.create_nb_reader"``; for a fix of markup, the function that writes it
    #: or the template's path in the installed package, e.g.
    #: ``"pydata_sphinx_theme/theme/pydata_sphinx_theme/components/search-field.html"``.
    target: str
    #: The distribution (as pip names it) whose code the patch depends on, e.g. ``"myst-nb"``.
    distribution: str
    #: The exact version the patch was written for (:data:`WRITTEN_FOR`).
    version: str
    #: The upstream issue or pull request (a GitHub URL), or the :data:`NO_ISSUE` marker.
    issue: str


#: Every ``(target, distribution)`` a patch site has required, in the order of the calls.
REGISTRY: dict[tuple[str, str], Patch] = {}


def require_version(distribution: str, *, target: str, issue: str) -> str:
    """Check that ``distribution`` is installed at the version a patch was written for.

    Call it where the patch is applied, once per distribution the patch depends on; the version is
    :data:`WRITTEN_FOR`'s. The call is recorded in :data:`REGISTRY` whether or not the check
    passes.

    Args:
        distribution: the distribution's name, as in ``requirements.lock`` (``"myst-nb"``); a key
            of :data:`WRITTEN_FOR`.
        target: the dotted name of what the patch replaces, wraps or calls, or the template whose
            markup it rewrites (:attr:`Patch.target`).
        issue: the upstream issue or pull request the patch works around
            (``https://github.com/owner/repo/issues/N`` or ``.../pull/N``), or
            ``"no upstream issue found (searched <tracker> for <what>)"``.

    Returns:
        The installed version (equal to ``WRITTEN_FOR[distribution]``).

    Raises:
        ValueError: if ``distribution`` is not in :data:`WRITTEN_FOR`, ``issue`` is neither a
            GitHub issue or pull request URL nor the :data:`NO_ISSUE` marker with what was
            searched, or ``target`` is empty.
        RuntimeError: if the installed version differs from the one written for or the
            distribution is not installed: "book_sphinx patches <target> written for
            <distribution> <version>; installed <found>: check <issue> and update the patch"
            ("none" when not installed).
    """
    if not target.strip():
        raise ValueError("target must name what the patch replaces, got ''")
    if distribution not in WRITTEN_FOR:
        raise ValueError(
            f"{distribution!r} is not in book_sphinx.patching.WRITTEN_FOR: add the version the "
            f"patch of {target} was written for (its pin in requirements.lock)"
        )
    if not (_ISSUE_URL.fullmatch(issue) or issue.startswith(NO_ISSUE + " (searched ")):
        raise ValueError(
            f"issue must be a GitHub issue or pull request URL or {NO_ISSUE!r} followed by "
            f"'(searched <tracker> for <what>)', got {issue!r}"
        )
    expected = WRITTEN_FOR[distribution]
    REGISTRY[(target, distribution)] = Patch(target, distribution, expected, issue)
    try:
        found = importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        found = "none"
    if found != expected:
        check = f"check {issue}" if _ISSUE_URL.fullmatch(issue) else f"{issue}: check upstream"
        raise RuntimeError(
            f"book_sphinx patches {target} written for {distribution} {expected}; installed "
            f"{found}: {check} and update the patch"
        )
    return found
