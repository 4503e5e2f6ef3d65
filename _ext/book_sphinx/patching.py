"""Run-time patches of other packages, each pinned to the version it was written for.

Where no configuration reaches, this extension replaces or wraps a few functions of myst-nb,
jupyter-cache, nbclient, sphinx-proof, Sphinx and sphinx-jupyterbook-latex (the modules that do it
say what and why, and cite the upstream issue each patch works around). A patch is written against
one version of the code it replaces; run against another, it can fail in ways that look like the
book's own faults, or silently undo an upstream fix. So every patch site calls
:func:`require_version` when the patch is applied (at ``setup()``): on any other installed version
the build stops with one line that names the patch, the version it was written for, the installed
one and the issue to check. The pins are those of ``requirements.txt`` and ``requirements.lock``.

Every call is recorded in :data:`REGISTRY` (the unit tests check that each patch site is listed,
with the upstream issue it works around, or the explicit :data:`NO_ISSUE` marker saying where the
search for one ended).
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import re

__all__ = ["NO_ISSUE", "REGISTRY", "Patch", "require_version"]

#: How a patch without an upstream issue says so: ``"no upstream issue found (searched <tracker>
#: for <what>)"``.
NO_ISSUE = "no upstream issue found"
_ISSUE_URL = re.compile(r"https://github\.com/[\w.-]+/[\w.-]+/(issues|pull)/\d+")


@dataclasses.dataclass(frozen=True)
class Patch:
    """One patched target and one distribution whose version it was written for."""

    #: The dotted name of what is replaced or wrapped, e.g.
    #: ``"myst_nb.sphinx_.create_nb_reader"``.
    target: str
    #: The distribution (as pip names it) whose code the patch depends on, e.g. ``"myst-nb"``.
    distribution: str
    #: The exact version the patch was written for (the pin of ``requirements.lock``).
    version: str
    #: The upstream issue or pull request (a GitHub URL), or the :data:`NO_ISSUE` marker.
    issue: str


#: Every ``(target, distribution)`` a patch site has required, in the order of the calls.
REGISTRY: dict[tuple[str, str], Patch] = {}


def require_version(distribution: str, expected: str, *, target: str, issue: str) -> str:
    """Check that ``distribution`` is installed at ``expected``, the version a patch is written for.

    Call it where the patch is applied, once per distribution the patch depends on; the call is
    recorded in :data:`REGISTRY` whether or not the check passes.

    Args:
        distribution: the distribution's name, as in ``requirements.lock`` (``"myst-nb"``).
        expected: the exact version the patch was written for (``"1.4.0"``).
        target: the dotted name of what the patch replaces or wraps.
        issue: the upstream issue or pull request the patch works around
            (``https://github.com/owner/repo/issues/N`` or ``.../pull/N``), or
            ``"no upstream issue found (searched <tracker> for <what>)"``.

    Returns:
        The installed version (equal to ``expected``).

    Raises:
        ValueError: if ``issue`` is neither a GitHub issue or pull request URL nor the
            :data:`NO_ISSUE` marker with what was searched, or ``target`` is empty.
        RuntimeError: if the installed version differs from ``expected`` or the distribution is
            not installed: "book_sphinx patches <target> written for <distribution> <expected>;
            installed <found>: check <issue> and update the patch" ("none" when not installed).
    """
    if not target.strip():
        raise ValueError("target must name what the patch replaces, got ''")
    if not (_ISSUE_URL.fullmatch(issue) or issue.startswith(NO_ISSUE + " (searched ")):
        raise ValueError(
            f"issue must be a GitHub issue or pull request URL or {NO_ISSUE!r} followed by "
            f"'(searched <tracker> for <what>)', got {issue!r}"
        )
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
