"""MyST Markdown to Jupyter Markdown, with the values and references of a finished build.

The conversion behind the downloadable notebooks (:mod:`.notebooks`): :func:`render_role` turns
one role (``{glue:text}``, ``{numref}``, ``{cite:t}``, ``{py:func}``, ...) into the text the HTML
page shows, and :func:`convert_markdown` a Markdown cell (roles, theorem-like and exercise boxes,
proofs, admonitions, ``{math}``, code, ``(label)=`` targets), asking a :class:`Resolver` what the
build knows (:class:`.notebooks.SphinxResolver` answers from the Sphinx environment, the tests
from dictionaries). How each construct degrades is described in :mod:`.notebooks`.

Source: the book's own; myst-nb's glue roles and formats (``myst_nb.ext.glue``) are what it
reproduces.
"""

from __future__ import annotations

import re

__all__ = ["Resolver", "render_role", "convert_markdown", "split_role"]

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


def split_role(text: str) -> tuple[str | None, str]:
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
    title, target = split_role(content)
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
