"""Glue numbers into the prose and record each numerical check for the claims page.

* :func:`glue` is ``myst_nb.glue`` with the value coerced to a Python ``int``/``float``/``str``
  (numpy 2 and torch scalars break ``{glue:text}`` format specs) and never displayed.
* :func:`record` turns one check (C1-C19, the checks of the papers' statements, or a check the
  book adds, B<chapter>.<k>) into a glued record ``claim-<id>``; the book's Sphinx extension
  (``_ext/book_sphinx``) collects every record of every chapter into the ``claims-table`` of
  ``chapters/claims.md``, so nothing is retyped. :func:`not_run` records a check that could not
  run on this machine.
* :func:`checks_table` shows the checks recorded so far in this kernel, for a chapter's summary.

Used by every chapter.
"""

from __future__ import annotations

import json
import math
import numbers
import re

import mpmath
import numpy as np
import pandas as pd
import torch

from ._constants import CLAIM_PREFIX
from ._validate import finite_real, flag, positive_int, short_repr

__all__ = [
    "fmt",
    "glue",
    "glue_many",
    "pretty",
    "record",
    "not_run",
    "checks_table",
    "HtmlTable",
    "number_table",
    "CLAIM_PREFIX",
    "SCALES",
    "BASES",
    "FORCE_FAIL",
]

_KEY = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]*")
_RECORDED: dict[str, dict] = {}


def _scalar(name: str, value):
    """Python int/float/str for glue; refuses arrays, NaN-free checks are the caller's job."""
    if isinstance(value, torch.Tensor | np.ndarray | np.generic):
        if np.ndim(value) != 0:
            raise ValueError(f"{name} must be a scalar, got shape {tuple(np.shape(value))}")
        value = value.item()
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if isinstance(value, mpmath.mpf):  # float() would silently flush 1e-488 to 0.0
        raise ValueError(f"{name} is an mpmath number; format it with lib.claims.fmt first")
    if isinstance(value, str):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    raise ValueError(
        f"{name} must be a Python/numpy/torch real scalar or a string, got {short_repr(value)}"
    )


def fmt(x, digits: int = 3) -> str:
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


def glue(key: str, value) -> None:
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


def glue_many(**values) -> None:
    """:func:`glue` each keyword argument under its name: ``glue_many(c1_err=err, n=7)``."""
    for key, value in values.items():
        glue(key, value)


def pretty(table: pd.DataFrame, digits: int = 3, missing: str = "—") -> pd.DataFrame:
    """A copy of ``table`` with every float column formatted by :func:`fmt`, for display.

    Integer, bool and text columns are left as they are; a missing value (NaN) is shown as
    ``missing`` (default ``"—"``), any other non-finite float raises.

    Raises:
        ValueError: if ``table`` is not a DataFrame, or a float column holds an infinity.
    """
    if not isinstance(table, pd.DataFrame):
        raise ValueError(f"table must be a pandas DataFrame, got {type(table).__name__}")
    out = table.copy()
    for col in out.columns:
        if pd.api.types.is_float_dtype(out[col]):
            out[col] = out[col].map(lambda v: missing if np.isnan(v) else fmt(v, digits))
    return out


def _as_text(name: str, value) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, mpmath.mpf):
        return fmt(value)
    value = _scalar(name, value)
    if isinstance(value, bool):
        raise ValueError(f"{name} must be a number or a string, got {value!r}")
    return fmt(value)


#: At which scale a check ran, shown in the claims table.
SCALES = {
    "exact": (
        "a computation on constructed inputs, in exact or float arithmetic; no dataset, no sampling"
    ),
    "sampled": "random inputs or draws, seeded; no dataset",
    "fast subset": (
        "a subset of a dataset, trained live in the book's fast mode: a proxy of the paper's run"
    ),
    "full data": "the whole dataset, trained live",
    "stored full data": (
        "the whole dataset at the book's full-mode settings, computed by make full and stored with "
        "its provenance (the papers' own settings are unknown)"
    ),
}

#: What a check's "expected" value is.
BASES = {
    "paper": (
        "the paper's own statement or number (as the sources give it; see Sources and certainty)"
    ),
    "derivation": "a closed form or bound the book derives on the page",
    "definition": "a property that holds by construction; the check tests the code, not the paper",
    "reconstruction": (
        "the book's reconstruction of a statement whose exact form the sources do not give"
    ),
    "earlier run": (
        "a threshold set from the book's own earlier measurement, kept as a regression reference"
    ),
}

#: The name of the environment variable that lists (comma-separated) the check ids whose result
#: is forced to "fail", for the test that the prose and the claims page follow the recorded result.
FORCE_FAIL = "BOOK_FORCE_FAIL"


def _forced(check_id: str) -> bool:
    import os

    return check_id in {c.strip() for c in os.environ.get(FORCE_FAIL, "").split(",") if c.strip()}


def record(
    check_id: str,
    claim: str,
    measured,
    expected,
    passed,
    *,
    source: str,
    scale: str,
    basis: str,
    verdict: tuple[str, str] | None = None,
) -> dict:
    """Record one numerical check for the claims page and glue it as ``claim-<check_id>``.

    Prose verdicts about the check are glued from the returned record's ``"passed"``, so that they
    follow the measurement (and a forced failure, see :data:`FORCE_FAIL`).

    Args:
        check_id: e.g. ``"C3"`` (a check of a paper's statement) or ``"B1.2"`` (one a chapter adds).
        claim: the statement checked, one sentence, in the book's words.
        measured: what the chapter computed: a number (formatted with :func:`fmt`) or a string.
        expected: what the check compares the measurement with, as a number or a string such as
            ``"<= 1e-12"``.
        passed: whether the measurement meets the expectation, computed by the chapter from a
            measurement made independently of the claim.
        source: paper and statement, e.g. ``"K&S Lemma 1"``.
        scale: a key of :data:`SCALES` (``"exact"``, ``"sampled"``, ``"fast subset"``,
            ``"full data"``, ``"stored full data"``).
        basis: a key of :data:`BASES`: what ``expected`` is (``"paper"``, ``"derivation"``,
            ``"definition"``, ``"reconstruction"``, ``"earlier run"``).
        verdict: ``(if_passed, if_failed)``: the prose for the outcome, glued as
            ``verdict-<check_id>`` (use it as ``{glue:text}`verdict-C3```), so that no sentence
            states an outcome the record does not.

    Returns:
        The record as a dict (``id, source, claim, measured, expected, passed, scale, basis``);
        ``passed`` is ``False`` whatever the measurement when the id is listed in the
        environment variable ``BOOK_FORCE_FAIL`` (a test of the book's honesty).

    Raises:
        ValueError: for an empty or malformed ``check_id``, empty ``claim``/``source``, a
            ``passed`` that is not a bool, or an unknown ``scale`` or ``basis``.
    """
    entry = _entry(check_id, claim, measured, expected, source, scale, basis)
    passed = flag("passed", passed)
    if verdict is not None and (
        not isinstance(verdict, tuple)
        or len(verdict) != 2
        or not all(isinstance(v, str) and v.strip() for v in verdict)
    ):
        raise ValueError(
            "verdict must be a pair of non-empty strings (if passed, if failed), "
            f"got {short_repr(verdict)}"
        )
    entry = _store(entry | {"passed": bool(passed) and not _forced(check_id)})
    if verdict is not None:
        glue(f"verdict-{check_id}", verdict[0] if entry["passed"] else verdict[1])
    return entry


def _entry(check_id, claim, measured, expected, source, scale, basis) -> dict:
    if not isinstance(check_id, str) or not _KEY.fullmatch(check_id):
        raise ValueError(f"check_id must match {_KEY.pattern}, got {short_repr(check_id)}")
    for name, text in (("claim", claim), ("source", source)):
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"{name} must be a non-empty string, got {short_repr(text)}")
    for name, value, allowed in (("scale", scale, SCALES), ("basis", basis, BASES)):
        if not isinstance(value, str) or value not in allowed:
            raise ValueError(f"{name} must be one of {sorted(allowed)}, got {short_repr(value)}")
    return {
        "id": check_id,
        "source": source.strip(),
        "claim": claim.strip(),
        "measured": _as_text("measured", measured),
        "expected": _as_text("expected", expected),
        "scale": scale,
        "basis": basis,
    }


def _store(entry: dict) -> dict:
    _RECORDED[entry["id"]] = entry
    glue(CLAIM_PREFIX + entry["id"], json.dumps(entry, ensure_ascii=False))
    return entry


def not_run(check_id: str, claim: str, reason: str, *, source: str, scale: str, basis: str) -> dict:
    """Record a check that could not run on this machine (a dataset is missing), for the claims
    page.

    The claims table shows it with the status "not run" and ``reason`` as its measured value,
    never as a pass; the build prints one line per such check.

    Args:
        check_id, claim, source, scale, basis: as for :func:`record`.
        reason: why it did not run, one sentence (e.g. which package is missing).

    Returns:
        The record as a dict (``passed`` is ``None``); ``verdict-<check_id>`` is glued as
        "did not run (<reason>)".

    Raises:
        ValueError: as :func:`record`, and for an empty ``reason``.
    """
    if not isinstance(reason, str) or not reason.strip():
        raise ValueError(f"reason must be a non-empty string, got {short_repr(reason)}")
    entry = _store(
        _entry(check_id, claim, f"not run: {reason.strip()}", "-", source, scale, basis)
        | {"passed": None}
    )
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
    ):
        if not isinstance(frame, pd.DataFrame):
            raise ValueError(f"frame must be a pandas DataFrame, got {type(frame).__name__}")
        self.data, self.classes, self.table_id = frame, classes, table_id

    def _repr_html_(self) -> str:
        extra = [
            c for c in self.classes.split() if c != "dataframe"
        ]  # pandas adds "dataframe" itself
        return self.data.to_html(classes=extra, border=0, escape=True, table_id=self.table_id)

    def _repr_markdown_(self) -> str:
        """The same cells as a MyST table, for what cannot show HTML: the book's PDF (the LaTeX
        builder takes ``text/markdown`` over plain text; ``nb_render_markdown_format: myst``).

        A ``{table}`` directive around a pipe table: class ``longtable``, so that a tall table
        breaks across pages, and column widths from each column's text (:func:`_column_widths`).
        """
        frame = self.data

        def cell(value) -> str:
            text = " ".join(str(value).split())
            return _MARKDOWN_SPECIAL.sub(r"\\\g<0>", text) or " "

        def label(value) -> str:
            return " ".join(map(str, value)) if isinstance(value, tuple) else str(value)

        header = [frame.index.name or "", *map(label, frame.columns)]
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

    def __repr__(self) -> str:
        return self.data.to_string()


_TABLE_NAME = re.compile(r"[a-z][a-z0-9-]{0,59}")


def _column_widths(columns, line: int = 100) -> list[int]:
    """Relative widths of a table's columns for the PDF, in characters.

    Each column gets at least its header or its longest word, plus one (words do not wrap in a
    table cell), and asks for up to its median cell length (at most 40). When the asks exceed a
    ``line`` of characters, only the part above the minimum shrinks, in proportion, so short
    columns (status, scale) keep room for their words and long ones (claims) wrap.

    Args:
        columns: one sequence per column, header first, then the cells (any values; ``str``).
        line: the characters a line of the page holds.
    """
    floors, asks = [], []
    for header, *cells in columns:
        texts = [str(v) for v in cells]
        word = max((len(w) for t in texts for w in t.split()), default=0)
        floor = min(40, max(4, len(str(header)) + 1, word + 1))
        floors.append(floor)
        asks.append(max(floor, min(40, int(np.median([len(t) for t in texts] or [0])))))
    spare, extra = line - sum(floors), sum(asks) - sum(floors)
    if extra <= 0 or spare >= extra:
        return asks
    share = max(spare, 0) / extra
    return [f + round((a - f) * share) for f, a in zip(floors, asks, strict=True)]


#: Characters a Markdown (MyST) table cell escapes with a backslash to show them as text.
_MARKDOWN_SPECIAL = re.compile(r"[\\`*_{}\[\]<>()#+!|$~]")


def _cell(value, spec: str, missing: str) -> str:
    if value is None or (isinstance(value, numbers.Real) and math.isnan(value)):
        return missing
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Real):
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
        An :class:`HtmlTable` over a DataFrame indexed by check id (columns status, scale,
        measured, expected, claim, source; ``expected`` says what it is in brackets), with the
        table classes ``dataframe checks-table`` so that the book's stylesheet lets the sentences
        wrap. ``.data`` is the DataFrame.
    """
    columns = ["check", "status", "scale", "measured", "expected", "claim", "source"]
    rows = [
        {
            "check": e["id"],
            "status": {True: "pass", False: "FAIL", None: "not run"}[e["passed"]],
            "scale": e["scale"],
            "measured": e["measured"],
            "expected": f"{e['expected']} ({e['basis']})",
            "claim": e["claim"],
            "source": e["source"],
        }
        for e in _RECORDED.values()
    ]
    return HtmlTable(
        pd.DataFrame(rows, columns=columns).set_index("check"), "dataframe checks-table"
    )
