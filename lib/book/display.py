"""How the book shows a DataFrame: the same HTML and text in every build, a MyST table in the PDF.

pandas' ``Styler`` writes a random ``T_xxxxx`` id into its HTML and an object repr with a memory
address into the notebook's plain text, so every build changed files that had not changed.

* :class:`HtmlTable` shows a DataFrame with fixed HTML table classes, its plain text and, for
  the book's PDF, the same cells as a MyST table (:func:`markdown_table`);
* :func:`number_table` formats a DataFrame's numbers once, as strings, and shows them as an
  :class:`HtmlTable` (the book's replacement for ``frame.style.format(...)``);
* :func:`markdown_table` writes a DataFrame as a MyST ``{table}``, with column widths from its
  text and its inline mathematics typeset.

Every function raises :class:`ValueError`, naming the argument, for a ``frame`` that is not a
DataFrame and for bad names or formats.

Source: the book's own. Used by the chapters' tables (Chapter 3's :func:`number_table`), by
:func:`lib.book.checks.checks_table` and by :mod:`lib.book.plotting` (the PDF's tables).
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from .._validate import positive_int, short_repr
from .prose import YES_NO

__all__ = ["HtmlTable", "number_table", "markdown_table"]


class HtmlTable:
    """A DataFrame shown with fixed HTML table classes, and nothing random in its output.

    pandas' ``Styler`` writes a random ``T_xxxxx`` id into its HTML and an object repr with a
    memory address into the notebook's plain-text output, so every build changed files that had
    not changed. This shows ``frame.to_html(classes=...)`` and ``frame.to_string()`` instead.

    Args:
        frame: the table to show, as it should read (format numbers first:
            :func:`~lib.book.prose.pretty`, :func:`number_table`).
        classes: the HTML table classes, space-separated (``"dataframe"`` is always there).
        table_id: the HTML ``id`` of the table, or ``None`` for none.
    """

    def __init__(
        self, frame: pd.DataFrame, classes: str = "dataframe", table_id: str | None = None
    ) -> None:
        if not isinstance(frame, pd.DataFrame):
            raise ValueError(f"frame must be a pandas DataFrame, got {type(frame).__name__}")
        self.data, self.classes, self.table_id = frame, classes, table_id

    def _repr_html_(self) -> str:
        extra = [
            c for c in self.classes.split() if c != "dataframe"
        ]  # pandas adds "dataframe" itself
        return self.data.to_html(classes=extra, border=0, escape=True, table_id=self.table_id)

    def _repr_markdown_(self) -> str:
        """The same cells as a MyST table (:func:`markdown_table`), for the book's PDF."""
        return markdown_table(self.data)

    def __repr__(self) -> str:
        return self.data.to_string()


def markdown_table(frame: pd.DataFrame) -> str:
    r"""A DataFrame as a MyST table, for what cannot show HTML: the book's PDF (the LaTeX builder
    takes ``text/markdown`` over plain text; ``nb_render_markdown_format: myst``).

    A ``{table}`` directive around a pipe table: class ``longtable``, so that a tall table breaks
    across pages, and column widths from each column's text (``_column_widths``). Inline
    mathematics in a label or cell, ``\(...\)`` as MathJax reads it on the website, is typeset;
    every other character shows as text. The levels of a MultiIndex are joined by spaces; the
    corner cell holds the index's names, or else the columns' name.

    Raises:
        ValueError: if ``frame`` is not a DataFrame.
    """
    if not isinstance(frame, pd.DataFrame):
        raise ValueError(f"frame must be a pandas DataFrame, got {type(frame).__name__}")

    def cell(value: object) -> str:
        return _markdown_cell(" ".join(str(value).split())) or " "

    def label(value: object) -> str:
        return " ".join(map(str, value)) if isinstance(value, tuple) else str(value)

    corner = " ".join(str(n) for n in frame.index.names if n is not None) or str(
        frame.columns.name or ""
    )
    header = [corner, *map(label, frame.columns)]
    rows = [
        [label(index), *row]
        for index, row in zip(frame.index, frame.itertuples(index=False), strict=True)
    ]
    columns = list(zip(header, *rows, strict=True))
    widths = _column_widths(columns)
    lines = [
        "```{table}",
        ":class: longtable",
        ":widths: " + " ".join(map(str, widths)),
        "",
        "| " + " | ".join(cell(h) for h in header) + " |",
        "|" + "---|" * len(header),
        *("| " + " | ".join(cell(v) for v in row) + " |" for row in rows),
        "```",
    ]
    return "\n".join(lines)


_TABLE_NAME = re.compile(r"[a-z][a-z0-9-]{0,59}")


def _shown(value: object) -> str:
    """About the characters a cell shows: in its mathematics ``\\(...\\)`` a TeX command such as
    ``\\lVert`` counts as one symbol, and braces, ``^`` and ``_`` as none."""
    return _INLINE_MATH.sub(
        lambda m: re.sub(r"[{}^_ ]", "", re.sub(r"\\[a-zA-Z]+", "x", m.group(1))), str(value)
    )


#: Characters of a table column's width that LaTeX spends on the cell's padding (2 x 6 pt).
_CELL_PADDING = 3


def _column_widths(columns: Iterable[Sequence[object]], line: int = 100) -> list[int]:
    """Relative widths of a table's columns for the PDF, in characters.

    Each column gets at least the longest word of its header and cells, plus one (a header wraps
    between words, a word does not wrap), plus :data:`_CELL_PADDING` (LaTeX pads each cell by
    ``\\tabcolsep`` on both sides, inside the width it is given), and asks for up to its median
    cell length (at most 40). When the asks exceed a ``line`` of characters, only the part above
    the minimum shrinks, in proportion, so short columns (status, scale) keep room for their
    words and long ones (claims) wrap.

    Args:
        columns: one sequence per column, header first, then the cells (any values; ``str``).
        line: the characters a line of the page holds.
    """
    floors, asks = [], []
    for header, *cells in columns:
        texts = [_shown(v) for v in cells]
        word = max((len(w) for t in texts for w in t.split()), default=0)
        head = max((len(w) for w in _shown(header).split()), default=0)
        floor = min(40, max(4, head + 1, word + 1)) + _CELL_PADDING
        floors.append(floor)
        asks.append(max(floor, min(40, int(np.median([len(t) for t in texts] or [0])))))
    spare, extra = line - sum(floors), sum(asks) - sum(floors)
    if extra <= 0 or spare >= extra:
        return asks
    share = max(spare, 0) / extra
    return [f + round((a - f) * share) for f, a in zip(floors, asks, strict=True)]


#: Characters a Markdown (MyST) table cell escapes with a backslash to show them as text.
_MARKDOWN_SPECIAL = re.compile(r"[\\`*_{}\[\]<>()#+!|$~]")

#: Inline mathematics in a table's cells and labels, written as in the HTML: ``\(\delta_w\)``.
_INLINE_MATH = re.compile(r"\\\((.+?)\\\)")


def _markdown_cell(text: str) -> str:
    r"""A table cell's text as MyST: inline mathematics ``\(...\)`` becomes ``$...$`` (typeset
    in the PDF as in the HTML, where MathJax reads ``\(...\)``), everything else is escaped to
    show as text."""
    out, last = [], 0
    for match in _INLINE_MATH.finditer(text):
        out.append(_MARKDOWN_SPECIAL.sub(r"\\\g<0>", text[last : match.start()]))
        out.append("$" + match.group(1).replace("|", "\\vert ") + "$")
        last = match.end()
    out.append(_MARKDOWN_SPECIAL.sub(r"\\\g<0>", text[last:]))
    return "".join(out)


def _cell(value: object, spec: str, missing: str) -> str:
    if value is None or (isinstance(value, numbers.Real) and math.isnan(value)):
        return missing
    if isinstance(value, bool | np.bool_):
        return YES_NO[bool(value)]
    if not isinstance(value, numbers.Real):
        return str(value)
    return format(value, spec)


def number_table(
    frame: pd.DataFrame,
    name: str,
    formats: dict | None = None,
    *,
    digits: int = 0,
    missing: str = "—",
) -> HtmlTable:
    """``frame`` with its numbers formatted, shown the same way in every build.

    The book's replacement for ``frame.style.format(...)``: pandas' ``Styler`` gives its HTML a
    random ``T_xxxxx`` id and the notebook's plain text a ``<... Styler object at 0x...>`` repr,
    so every build rewrote pages whose content had not changed. This formats the cells as
    strings once, and the HTML (``<table id="table-<name>" class="dataframe">``) and the plain
    text (the formatted DataFrame's ``to_string()``) show the same strings. Used by the tables
    of Chapter 3.

    Args:
        frame: a DataFrame of any shape; its index and column labels are kept.
        name: the table's name, ``[a-z][a-z0-9-]*`` (at most 60 characters); the HTML id is
            ``table-<name>``.
        formats: column label -> Python format spec (``".4f"``, ``",d"``) for that column's
            numbers; by default none.
        digits: decimals of the numbers of every other column, with thousands separators
            (``",.{digits}f"``); bools and text are shown as they are.
        missing: what a missing value (``None``, NaN) shows, in every column.

    Returns:
        An :class:`HtmlTable` whose ``.data`` is the DataFrame of formatted strings.

    Raises:
        ValueError: naming the argument, if ``frame`` is not a DataFrame, ``name`` is not a
            valid name, ``formats`` is not a mapping of columns of ``frame`` to format specs
            that format that column's numbers, ``digits`` is not an integer in ``[0, 20]``,
            or ``missing`` is not a string.
    """
    if not isinstance(frame, pd.DataFrame):
        raise ValueError(f"frame must be a pandas DataFrame, got {type(frame).__name__}")
    if not isinstance(name, str) or not _TABLE_NAME.fullmatch(name):
        raise ValueError(f"name must match {_TABLE_NAME.pattern}, got {short_repr(name)}")
    formats = {} if formats is None else formats
    if not isinstance(formats, dict):
        raise ValueError(
            f"formats must be a dict of column -> format spec, got {short_repr(formats)}"
        )
    digits = positive_int("digits", digits, minimum=0, maximum=20)
    if not isinstance(missing, str):
        raise ValueError(f"missing must be a string, got {short_repr(missing)}")
    unknown = [c for c in formats if c not in frame.columns]
    if unknown:
        raise ValueError(f"formats names columns that frame lacks: {short_repr(unknown)}")
    out = pd.DataFrame(index=frame.index, columns=frame.columns, dtype=object)
    for i, column in enumerate(frame.columns):
        spec = formats.get(column, f",.{digits}f")
        if not isinstance(spec, str):
            raise ValueError(
                f"formats[{column!r}] must be a format spec string, got {short_repr(spec)}"
            )
        try:
            out.iloc[:, i] = [_cell(v, spec, missing) for v in frame.iloc[:, i]]
        except (ValueError, TypeError) as err:
            raise ValueError(
                f"formats[{column!r}] = {spec!r} cannot format its column: {err}"
            ) from None
    return HtmlTable(out, "dataframe", table_id=f"table-{name}")
