"""The PDF (``make pdf``) numbered and laid out like the website.

* **One numbering.** sphinx-jupyterbook-latex sets ``numfig_secnum_depth = 2`` for a book with
  parts (so that LaTeX numbers figures per chapter), and so the numbers Sphinx computes itself,
  those of sphinx-proof's theorem boxes and of the references to them, counted per *section* in
  the PDF ("Proposition 1.3.2") and per chapter on the site ("Proposition 1.2"). For the LaTeX
  builder the boxes are renumbered per chapter, in the order of the page, as on the site.
  Figures, tables and equations LaTeX numbers itself, per chapter, as the site does.
* **Back matter.** The site numbers the chapters of the first part only; the pages after it are
  unnumbered, and their figures and tables are numbered 1, 2, ... across them. The preamble
  (``book_latex_backmatter``, added by this module) does the same from the PDF's second part on.
* **Wide tables in a smaller type.** A table of :data:`WIDE_TABLE` columns or more (the
  chapters' tables of runs and lattices have up to 12) crushed its columns at the PDF's text
  width, breaking numbers and words mid-way; it is set in ``footnotesize``, and one of
  :data:`VERY_WIDE_TABLE` or more in ``scriptsize`` (:func:`_small_wide_tables`).
* **Pages left to the site.** ``book_site_only_pages`` (the API reference: 90-odd pages of
  docstrings in print) keep their title in the PDF and a paragraph that points to the site;
  references to them from the chapters become plain text.

One patch: sphinx-jupyterbook-latex's LaTeX visitor of the introduction's headings is replaced
(:func:`_visit_root_header`), after :func:`.patching.require_version` has checked the version it
was written for.
"""

from __future__ import annotations

from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx

from .patching import NO_ISSUE, require_version

__all__ = ["setup"]

#: What the patch replaces, and the upstream issue it works around.
HEADER_TARGET = "sphinx_jupyterbook_latex.nodes.visit_RootHeader"
HEADER_ISSUE = (
    f"{NO_ISSUE} (searched executablebooks/sphinx-jupyterbook-latex for RootHeader headings left "
    "alone at the foot of a page)"
)


def _renumber_boxes(app: Sphinx, env) -> list[str]:
    """In the LaTeX build, number each kind of theorem box, and the exercises, per chapter, in
    the page's order: ``(chapter, section, k)`` becomes ``(chapter, i)``, the site's number. Runs
    after Sphinx has assigned the numbers (``env-get-updated``, later priority); asks no page to
    be rewritten."""
    if app.builder.format != "latex":
        return []
    from sphinx_proof.proof_type import PROOF_TYPES

    # sphinx-exercise's exercise boxes are numbered the same way (its enumerable node "exercise").
    for numbers in env.toc_fignumbers.values():
        for kind in (*PROOF_TYPES, "exercise"):
            boxes = numbers.get(kind)
            if boxes:
                chapter = next(iter(boxes.values()))[:1]
                numbers[kind] = {label: (*chapter, i) for i, label in enumerate(boxes, start=1)}
    return []


#: LaTeX for the preamble. From the second part on (the pages after the chapters), chapters and
#: sections are unnumbered and figures and tables are numbered 1, 2, ... across those pages, as
#: on the site. The bibliography's list follows the page's own title (Sphinx's environment would
#: open a second chapter, "Bibliography", on a new page after an empty one). The introduction's
#: pages, after the table of contents, carry the book's title as their running head, not
#: "CONTENTS".
BACKMATTER = r"""
\newcounter{bookpart}
\let\bookoriginalpart\part
\renewcommand\part{\stepcounter{bookpart}\ifnum\value{bookpart}=2\relax\bookbackmatter\fi
  \bookoriginalpart}
\newcommand\bookbackmatter{\setcounter{secnumdepth}{-1}\setcounter{figure}{0}%
  \setcounter{table}{0}\renewcommand\thefigure{\arabic{figure}}%
  \renewcommand\thetable{\arabic{table}}}
\renewenvironment{sphinxthebibliography}[1]{\def\chapter*##1{}\begin{thebibliography}{#1}}%
  {\end{thebibliography}}
\let\bookcontents\sphinxtableofcontents
\renewcommand\sphinxtableofcontents{\bookcontents\markboth{\booktitle}{\booktitle}}
"""


def _backmatter(app: Sphinx, config) -> None:
    elements = config.latex_elements
    title = config.book_running_head.replace("&", r"\&")
    elements["preamble"] = (
        elements.get("preamble", "") + rf"\newcommand\booktitle{{{title}}}" + BACKMATTER
    )


def _visit_root_header(self, node) -> None:
    r"""sphinx-jupyterbook-latex's LaTeX visit of a ``RootHeader``, after ``\needspace``.

    Why: the pinned sphinx-jupyterbook-latex (:data:`.patching.WRITTEN_FOR`) sets the
    introduction's headings as large bold lines, not sections, so LaTeX may leave one alone at the
    foot of a page; asking for eight lines of room first keeps each with its text. Source: no
    upstream issue found (searched executablebooks/sphinx-jupyterbook-latex for RootHeader
    headings left alone at the foot of a page).
    """
    from sphinx_jupyterbook_latex import nodes as jbl

    self.body.append("\n\\needspace{8\\baselineskip}\n")
    jbl.visit_RootHeader(self, node)


def _keep_root_headings_with_text(app: Sphinx) -> None:
    r"""The introduction's headings (sphinx-jupyterbook-latex sets them as large bold lines, not
    sections) never end a page: each asks for eight lines of room first (``\needspace``)."""
    if app.builder.format != "latex":
        return
    from sphinx_jupyterbook_latex import nodes as jbl

    app.add_node(jbl.RootHeader, override=True, latex=(_visit_root_header, jbl.depart_RootHeader))


def _leave_to_site(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """In the PDF's assembled tree, replace each site-only page's body by a pointer to the site
    and turn links into it into their text."""
    if app.builder.format != "latex":
        return
    pages = set(app.config.book_site_only_pages)
    for start in list(doctree.findall(addnodes.start_of_file)):
        page = start.get("docname")
        if page not in pages:
            continue
        section = next(iter(start.findall(nodes.section)), None)
        if section is None:
            continue
        title = section.next_node(nodes.title)
        for child in list(section.children):
            if child is not title:
                section.remove(child)
        section += nodes.paragraph(
            "",
            "This page is part of the book's website only: in print its "
            f"{app.config.book_site_only_what.get(page, 'text')} would fill many pages. Build the "
            f"website with make book and open _build/html/{page}.html.",
        )
    for ref in list(doctree.findall(nodes.reference)):
        uri = ref.get("refuri", "")
        if any(uri == f"%{p}" or uri.startswith(f"%{p}#") for p in pages):
            ref.replace_self(ref.children)


#: Tables of this many columns or more are set in ``\footnotesize`` in the PDF.
WIDE_TABLE = 8
#: Tables of this many columns or more are set in ``\scriptsize`` in the PDF.
VERY_WIDE_TABLE = 10


def table_columns(table: nodes.table) -> int:
    """The number of columns of a docutils table (its first ``tgroup``'s ``cols``)."""
    group = next(iter(table.findall(nodes.tgroup)), None)
    return int(group["cols"]) if group is not None else 0


def _small_wide_tables(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """For the PDF: wrap each table of :data:`WIDE_TABLE` columns or more in a group set in a
    smaller type (LaTeX raw nodes before and after it; the site is untouched)."""
    if app.builder.format != "latex":
        return
    for table in list(doctree.findall(nodes.table)):
        columns = table_columns(table)
        if columns < WIDE_TABLE or table.parent is None:
            continue
        size = "\\scriptsize" if columns >= VERY_WIDE_TABLE else "\\footnotesize"
        index = table.parent.index(table)
        table.parent.insert(index + 1, nodes.raw("", "\\endgroup\n", format="latex"))
        table.parent.insert(index, nodes.raw("", f"\\begingroup{size}\n", format="latex"))


def setup(app: Sphinx) -> None:
    require_version("sphinx-jupyterbook-latex", target=HEADER_TARGET, issue=HEADER_ISSUE)
    app.add_config_value("book_site_only_pages", ["chapters/api"], "env")
    app.add_config_value("book_site_only_what", {"chapters/api": "API reference of lib"}, "env")
    app.connect("env-get-updated", _renumber_boxes, priority=900)
    app.add_config_value("book_running_head", "One layer is enough", "env")
    app.connect("config-inited", _backmatter)
    app.connect("builder-inited", _keep_root_headings_with_text, priority=900)
    app.connect("doctree-resolved", _leave_to_site)
    app.connect("doctree-resolved", _small_wide_tables)
