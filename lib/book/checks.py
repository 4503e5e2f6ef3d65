"""Glue numbers into the prose and record each numerical check for the claims page.

Vocabulary, one meaning per word:

* a *claim* is what a paper states (the ``claim`` text of an entry in ``checks.toml``);
* a *check* is the book's computation that tests a claim, and its record (an id such as C1, the
  measured value, pass or fail, the verdict); functions that run or record a check say "check";
* an *input guard* refuses a bad argument with a ``ValueError`` and is never called a check:
  ``require_*`` when it returns nothing (``lib._validate.require_size``), ``as_*`` when it
  returns the argument converted (``lib._validate.as_float_array``).

* :func:`glue` is ``myst_nb.glue`` with the value coerced to a Python ``int``/``float``/``str``
  (numpy 2 and torch scalars break ``{glue:text}`` format specs) and never displayed.
* :func:`~lib.book.registry.registry` reads the book's registry of checks,
  ``lib/book/checks.toml``: each check's fixed text once (claim, expected value, kind, basis,
  scale, threshold source, section, verdict words). A check is a *test* (it could fail if the
  statement were false; its threshold comes from the statement or a derivation) or a
  *demonstration* (it holds by definition, construction or arithmetic; shown, never counted as
  support).
* :func:`record` turns one measurement of a registered check (C1-C19, the checks of the papers'
  statements, or a check the book adds, B<chapter>.<k>) into a glued record ``check-<id>``; the
  book's Sphinx extension (``_ext/book_sphinx``) collects every record of every chapter into the
  ``checks-table`` of ``chapters/claims.md``, with :func:`~lib.book.registry.tally` above it, so
  nothing is retyped.
  :func:`not_run` records a check that could not run on this machine.
* :func:`checks_table` shows the checks recorded so far in this kernel, for a chapter's summary.

Used by every chapter.
"""

from __future__ import annotations

import json
import math
import numbers
import re
import string
from collections.abc import Iterable, Sequence
from typing import Any

import mpmath
import numpy as np
import pandas as pd
import torch

from .. import _env
from .._constants import CHECK_PREFIX
from .._validate import finite_real, flag, positive_int, short_repr

# The registry's names, re-exported for the chapters (documented in lib.book.registry).
from .registry import _KEY
from .registry import BASES as BASES
from .registry import CONTRADICTED as CONTRADICTED
from .registry import KINDS as KINDS
from .registry import REGISTRY_FILE as REGISTRY_FILE
from .registry import SCALES as SCALES
from .registry import counterpart_of as counterpart_of
from .registry import registry as registry
from .registry import status as status
from .registry import tally as tally

__all__ = [
    "fmt",
    "joined",
    "glue",
    "glue_many",
    "pretty",
    "record",
    "not_run",
    "checks_table",
    "HtmlTable",
    "number_table",
    "markdown_table",
    "CHECK_PREFIX",
    "FORCE_FAIL",
]

_RECORDED: dict[str, dict] = {}


def _scalar(name: str, value: object) -> bool | int | float | str:
    """Python int/float/str for glue; refuses arrays, NaN-free checks are the caller's job."""
    if isinstance(value, torch.Tensor | np.ndarray | np.generic):
        if np.ndim(value) != 0:
            raise ValueError(f"{name} must be a scalar, got shape {tuple(np.shape(value))}")
        value = value.item()
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if isinstance(value, mpmath.mpf):  # float() would silently flush 1e-488 to 0.0
        raise ValueError(f"{name} is an mpmath number; format it with lib.book.checks.fmt first")
    if isinstance(value, str):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    raise ValueError(
        f"{name} must be a Python/numpy/torch real scalar or a string, got {short_repr(value)}"
    )


def joined(words: Iterable[str]) -> str:
    """Words as prose lists them: ``"a"``, ``"a and b"``, ``"a, b and c"`` (no serial comma).

    Args:
        words: an iterable of strings, at least one.

    Raises:
        ValueError: if ``words`` is empty or holds something other than a string.

    Used by the chapters' glued sentences (Chapters 3 and 5).
    """
    words = list(words)
    if not words or not all(isinstance(w, str) for w in words):
        raise ValueError(f"words must be one or more strings, got {words!r}")
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def fmt(x: float | np.generic | torch.Tensor | mpmath.mpf, digits: int = 3) -> str:
    """Format a real number (float, int, numpy/torch scalar or mpmath mpf) for prose and tables.

    Numbers between 1e-3 and 1e4 in absolute value get ``digits`` significant digits in fixed
    notation; others use scientific notation ``1.23e-35`` (also below float64's range, for mpf).

    Raises:
        ValueError: if ``x`` is not a finite real scalar or ``digits < 1``.
    """
    digits = positive_int("digits", digits, maximum=50)
    if isinstance(x, mpmath.mpf):
        if not mpmath.isfinite(x):
            raise ValueError(f"x must be finite, got {x}")
        if x == 0:
            return "0"
        with mpmath.workdps(digits + 5):
            exponent = int(mpmath.floor(mpmath.log10(abs(x))))
            mantissa = x / mpmath.mpf(10) ** exponent
            if abs(float(mantissa)) >= 10 - 0.5 * 10 ** (1 - digits):  # rounds up to 10.0
                mantissa, exponent = mantissa / 10, exponent + 1
        if -3 <= exponent < 4:
            return fmt(float(x), digits)
        return f"{float(mantissa):.{digits - 1}f}e{exponent}"
    x = _scalar("x", x)
    if isinstance(x, str | bool):
        raise ValueError(f"x must be a number, got {short_repr(x)}")
    if isinstance(x, int) and abs(x) < 10**6:
        return str(x)
    x = finite_real("x", x)
    if x == 0:
        return "0"
    fixed = f"{x:.{digits}g}"
    if 1e-3 <= abs(x) < 1e4 and "e" not in fixed:
        return fixed
    return f"{x:.{digits - 1}e}".replace("e-0", "e-").replace("e+0", "e").replace("e+", "e")


def glue(key: str, value: float | str | np.generic | torch.Tensor) -> None:
    """Glue ``value`` under ``key`` for ``{glue:text}`` roles, without displaying it.

    Args:
        key: letters, digits, ``_``, ``.``, ``-``; no ``:`` (myst-nb splits on it).
        value: a Python/numpy/torch real scalar (stored as ``int`` or ``float``) or a string.

    Raises:
        ValueError: for a bad key, a non-scalar value, NaN or infinity.
    """
    from myst_nb import glue as _glue

    if not isinstance(key, str) or not _KEY.fullmatch(key):
        raise ValueError(f"key must match {_KEY.pattern}, got {short_repr(key)}")
    value = _scalar(f"value for {key!r}", value)
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"value for {key!r} must be finite, got {value!r}")
    _glue(key, value, display=False)


def glue_many(**values: float | str | np.generic | torch.Tensor) -> None:
    """:func:`glue` each keyword argument under its name: ``glue_many(c1_err=err, n=7)``."""
    for key, value in values.items():
        glue(key, value)


#: How a table shows a truth value (:func:`pretty`, :func:`number_table`).
YES_NO = {True: "yes", False: "no"}


def pretty(table: pd.DataFrame, digits: int = 3, missing: str = "—") -> pd.DataFrame:
    """A copy of ``table`` with every float column formatted by :func:`fmt`, for display.

    Bool columns and index levels read "yes" and "no" (``YES_NO``); integer and text columns
    are left as they are; a missing value (NaN) is shown as ``missing`` (default ``"—"``), any
    other non-finite float raises.

    Raises:
        ValueError: if ``table`` is not a DataFrame, or a float column holds an infinity.
    """
    if not isinstance(table, pd.DataFrame):
        raise ValueError(f"table must be a pandas DataFrame, got {type(table).__name__}")
    out = table.copy()
    if isinstance(out.index, pd.MultiIndex):
        out.index = out.index.set_levels(
            [
                level.map(YES_NO) if pd.api.types.is_bool_dtype(level) else level
                for level in out.index.levels
            ]
        )
    elif pd.api.types.is_bool_dtype(out.index):
        out.index = out.index.map(YES_NO)
    for col in out.columns:
        if pd.api.types.is_bool_dtype(out[col]):
            out[col] = out[col].map(YES_NO)
        elif pd.api.types.is_float_dtype(out[col]):
            out[col] = out[col].map(lambda v: missing if np.isnan(v) else fmt(v, digits))
    return out


def _as_text(name: str, value: object) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, mpmath.mpf):
        return fmt(value)
    value = _scalar(name, value)
    if isinstance(value, bool):
        raise ValueError(f"{name} must be a number or a string, got {value!r}")
    return fmt(value)


#: The name of the environment variable that lists (comma-separated) the check ids whose result
#: is forced to "fail", for the test that the prose and the claims page follow the recorded result.
FORCE_FAIL = "BOOK_FORCE_FAIL"


def _forced(check_id: str) -> bool:
    forced = _env.read(FORCE_FAIL)
    return isinstance(forced, tuple) and check_id in forced


def _registered(check_id: str) -> dict:
    if not isinstance(check_id, str) or check_id not in registry():
        raise ValueError(
            f"check_id {short_repr(check_id)} is not registered in {REGISTRY_FILE.name}"
        )
    return registry()[check_id]


def _fill(check_id: str, name: str, template: str, fields: dict) -> str:
    try:
        return template.format(**fields)
    except KeyError as err:
        raise ValueError(
            f"{check_id}: the registry's {name} needs the field {err.args[0]!r}; pass it to record"
        ) from None


def record(
    check_id: str,
    measured: float | str | np.generic | torch.Tensor | mpmath.mpf,
    passed: bool | np.bool_,
    *,
    scale: str | None = None,
    **fields: Any,
) -> dict:
    """Record one check for the claims page and glue it as ``check-<check_id>``.

    The check's fixed text (claim, expected, source, kind, basis, threshold, verdict words) is
    registered once in :data:`~lib.book.registry.REGISTRY_FILE`; the chapter supplies only its
    measurement, the outcome, and the values the registered templates name (``{name}`` or
    ``{name:.3f}``). Prose verdicts are glued from the outcome, so that they follow the
    measurement (and a forced failure, see :data:`FORCE_FAIL`).

    Args:
        check_id: a registered id, e.g. ``"C3"`` (a check of a paper's statement) or ``"B1.2"``
            (one a chapter adds); ``"C19.mnist"`` for a registered variant.
        measured: what the chapter computed: a number (formatted with :func:`fmt`) or a string.
        passed: whether the measurement meets the registered expectation, computed by the chapter
            from a measurement made independently of the claim (a Python or numpy bool).
        scale: the scale, where the registry lists several (a key of
            :data:`~lib.book.registry.SCALES`).
        **fields: the values the registry's templates of this check name; every one of them,
            and no other.

    Returns:
        The record as a dict (``id, section, kind, basis, scale, claim, expected, threshold, why,
        source, measured, passed``); ``passed`` is ``False`` whatever the measurement when the
        id is listed in the environment variable ``BOOK_FORCE_FAIL`` (a test of the book's
        honesty). ``verdict-<check_id>`` is glued with the registered verdict for the outcome.

    Raises:
        ValueError: for an unregistered id, a ``passed`` that is not a bool, a scale the registry
            does not list for this check, or a field missing from or unknown to its templates.
    """
    entry = _entry(check_id, _as_text("measured", measured), scale, fields)
    passed = flag("passed", passed)
    return _store(entry | {"passed": bool(passed) and not _forced(check_id)})


def _entry(
    check_id: str, measured: str, scale: str | None, fields: dict, verdict: bool = True
) -> dict:
    spec = _registered(check_id)
    if scale is None:
        if len(spec["scale"]) != 1:
            raise ValueError(f"{check_id}: scale must be one of {spec['scale']}, got None")
        scale = spec["scale"][0]
    elif scale not in spec["scale"]:
        raise ValueError(
            f"{check_id}: scale must be one of {spec['scale']}, got {short_repr(scale)}"
        )
    used = set()
    for name in ("claim", "expected", *(("verdict",) if "verdict" in spec else ())):
        texts = spec[name] if name == "verdict" else [spec[name]]
        for text in texts:
            used |= {f for _, f, _, _ in string.Formatter().parse(text) if f}
    unknown = sorted(set(fields) - used)
    if unknown:
        raise ValueError(f"{check_id}: fields {unknown} are not named by its registered text")
    return {
        "id": check_id,
        "section": spec["section"],
        "kind": spec["kind"],
        "basis": spec["basis"],
        "scale": scale,
        "claim": _fill(check_id, "claim", spec["claim"], fields),
        "expected": _fill(check_id, "expected", spec["expected"], fields),
        "threshold": spec.get("threshold", ""),
        "why": spec["why"],
        "source": spec["source"],
        "measured": measured,
        "_verdict": (
            None
            if "verdict" not in spec or not verdict
            else tuple(_fill(check_id, "verdict", v, fields) for v in spec["verdict"])
        ),
    }


def _store(entry: dict) -> dict:
    verdict = entry.pop("_verdict", None)
    _RECORDED[entry["id"]] = entry
    glue(CHECK_PREFIX + entry["id"], json.dumps(entry, ensure_ascii=False))
    if verdict is not None and entry["passed"] is not None:
        glue(f"verdict-{entry['id']}", verdict[0] if entry["passed"] else verdict[1])
    return entry


def not_run(check_id: str, reason: str, *, scale: str | None = None, **fields: Any) -> dict:
    """Record a registered check that could not run on this machine (a dataset is missing).

    The claims page shows it with the status "not run" and ``reason`` as its measured value,
    never as a pass; the build prints one line per such check. A registered check that no
    chapter records at all is listed as "not run" too.

    Args:
        check_id, scale, fields: as for :func:`record`.
        reason: why it did not run, one sentence (e.g. which package is missing).

    Returns:
        The record as a dict (``passed`` is ``None``); ``verdict-<check_id>`` is glued as
        "did not run (<reason>)".

    Raises:
        ValueError: as :func:`record`, and for an empty ``reason``.
    """
    if not isinstance(reason, str) or not reason.strip():
        raise ValueError(f"reason must be a non-empty string, got {short_repr(reason)}")
    entry = _entry(check_id, f"not run: {reason.strip()}", scale, fields, verdict=False)
    entry = _store(entry | {"passed": None})
    glue(f"verdict-{check_id}", f"did not run ({reason.strip()})")
    return entry


class HtmlTable:
    """A DataFrame shown with fixed HTML table classes, and nothing random in its output.

    pandas' ``Styler`` writes a random ``T_xxxxx`` id into its HTML and an object repr with a
    memory address into the notebook's plain-text output, so every build changed files that had
    not changed. This shows ``frame.to_html(classes=...)`` and ``frame.to_string()`` instead.

    Args:
        frame: the table to show, as it should read (format numbers first: :func:`pretty`,
            :func:`number_table`).
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


def checks_table() -> HtmlTable:
    """The checks :func:`record`-ed in this kernel so far, one row each, in recording order.

    Returns:
        An :class:`HtmlTable` over a DataFrame indexed by check id with three columns, so that
        it fits beside a chapter's text: ``Status`` (a demonstration that holds is "shown"),
        ``Claim`` (the claim, then what was expected, with its basis in brackets, the scale
        and the source) and ``Measured``. The table classes are ``dataframe checks-table`` (the
        book's stylesheet lets the sentences wrap and gives the claim room); the header's
        corner reads ``Check`` (the columns' name), so that the header is one row. ``.data``
        is the DataFrame.
    """
    columns = ["Status", "Claim", "Measured"]
    recorded = list(_RECORDED.values())
    rows = {
        e["id"]: {
            "Status": status(e, counterpart_of(e, recorded)),
            "Claim": f"{e['claim']}. Expected: {e['expected']} ({e['basis']}). Scale: "
            f"{e['scale']}. Source: {e['source']}.",
            "Measured": e["measured"],
        }
        for e in _RECORDED.values()
    }
    frame = pd.DataFrame.from_dict(rows, orient="index", columns=columns)
    return HtmlTable(frame.rename_axis(columns="Check"), "dataframe checks-table")
