"""The book's pages keep to syntax Jupyter Book 2 (mystmd) already reads, apart from a fixed list.

Jupyter Book 1 is in maintenance; a move to 2.x (CONTRIBUTING.md, "A move to Jupyter Book 2")
would have to replace every role and directive mystmd does not read. This test lists the roles
and directives the pages use and fails when one outside mystmd's set appears that is not in
:data:`SPHINX_ONLY` (or when an entry there is no longer used, so that the list stays true).

``MYSTMD_ROLES`` and ``MYSTMD_DIRECTIVES`` are the names (and aliases) registered by mystmd's
``packages/myst-roles``, ``myst-directives``, ``myst-ext-proof`` and ``myst-ext-exercise`` at
commit 1ad857c (August 2026), limited to those a book like this one could use.
"""

from __future__ import annotations

import re

from conftest import ROOT

#: Roles mystmd reads (myst-roles: reference.ts, cite.ts, math.ts, doc.ts, download.ts, ...).
MYSTMD_ROLES = frozenset(
    {"ref", "eq", "numref", "prf:ref", "proof:ref", "cite", "cite:p", "cite:t", "doc",
     "download", "math", "sub", "sup", "term", "abbr", "kbd", "u", "del", "sc", "span"}
)  # fmt: skip
#: Directives mystmd reads (myst-directives, myst-ext-proof's kinds, myst-ext-exercise).
MYSTMD_DIRECTIVES = frozenset(
    {"code-cell", "code", "code-block", "math", "figure", "image", "table", "list-table",
     "csv-table", "raw", "bibliography", "admonition", "note", "warning", "tip", "important",
     "dropdown", "include", "embed", "exercise", "exercise-start", "exercise-end", "solution",
     "solution-start", "solution-end"}
    | {f"prf:{kind}" for kind in (
        "proof", "axiom", "lemma", "definition", "criterion", "remark", "conjecture",
        "corollary", "algorithm", "example", "property", "observation", "proposition",
        "assumption", "theorem")}
)  # fmt: skip

#: What the pages use that only Sphinx reads, each with what a move to mystmd would do with it.
SPHINX_ONLY = {
    "role glue:text": "myst-nb's glue: each number in prose; mystmd's inline {eval} expressions "
    "(every value is glued by lib.book.prose.glue, so one script can rewrite them)",
    "role py:func": "autodoc cross-reference to the API page: a plain link to the API page",
    "role py:class": "autodoc cross-reference to the API page: a plain link to the API page",
    "role py:mod": "autodoc cross-reference to the API page: a plain link to the API page",
    "role py:data": "autodoc cross-reference to the API page: a plain link to the API page",
    "directive eval-rst": "the API page's autodoc: mystmd has no autodoc; a page generated from "
    "the docstrings before the build",
    "directive nb-exec-table": "myst-nb's execution statistics: a table the build writes",
    "directive checks-table": "the book's own directive (_ext/book_sphinx): a Markdown table "
    "generated from lib/book/checks.toml before the build",
    "directive budget-table": "the book's own directive (_ext/book_sphinx): a Markdown table "
    "generated from the chapters' budgets before the build",
    "directive mutation-table": "the book's own directive (_ext/book_sphinx): a Markdown table "
    "generated from results/mutation/last.json before the build",
}

_ROLE = re.compile(r"\{([A-Za-z][\w:+.-]*)\}`")
_DIRECTIVE = re.compile(r"^\s*(?:`{3,}|:{3,})\{([A-Za-z][\w:+.-]*)\}", re.MULTILINE)


def pages() -> list:
    toc = (ROOT / "_toc.yml").read_text()
    names = ["intro", *re.findall(r"file:\s*(\S+)", toc)]
    return [ROOT / f"{name}.md" for name in dict.fromkeys(names)]


def used() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for path in pages():
        text = path.read_text()
        for kind, pattern in (("role", _ROLE), ("directive", _DIRECTIVE)):
            for name in pattern.findall(text):
                found.setdefault(f"{kind} {name}", []).append(path.name)
    return found


def test_the_scanner_finds_roles_and_directives_in_both_fence_styles():
    text = "A {glue:text}`x` and {numref}`fig-a`.\n```{code-cell} ipython3\n```\n:::{prf:theorem}\n"
    assert _ROLE.findall(text) == ["glue:text", "numref"]
    assert _DIRECTIVE.findall(text) == ["code-cell", "prf:theorem"]


def test_every_page_of_the_toc_is_scanned():
    assert all(path.is_file() for path in pages())
    assert len(pages()) >= 14  # introduction, seven chapters, atlas, epilogue and the back pages


def test_pages_use_no_sphinx_only_syntax_beyond_the_listed_set():
    found = used()
    reads = {"role": MYSTMD_ROLES, "directive": MYSTMD_DIRECTIVES}
    sphinx_only = {name for name in found if name.split(" ", 1)[1] not in reads[name.split()[0]]}
    new = sorted(sphinx_only - set(SPHINX_ONLY))
    assert not new, {name: sorted(set(found[name])) for name in new}  # mystmd cannot read these
    stale = sorted(set(SPHINX_ONLY) - sphinx_only)
    assert not stale, f"no page uses these any more: drop them from SPHINX_ONLY: {stale}"


def test_every_prose_number_is_glued_through_the_one_helper():
    """A rewrite of glue into mystmd's {eval} needs one place that glues: lib.book.prose."""
    for path in pages():
        text = path.read_text()
        assert "myst_nb" not in text, path.name  # no direct myst_nb.glue in a chapter
        assert not re.search(r"\{glue:(?!text\})[a-z]*\}`", text), path.name  # no glue:any etc.
