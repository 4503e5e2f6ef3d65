"""Glue numbers into the prose and record each numerical check for the claims page.

* :func:`glue` is ``myst_nb.glue`` with the value coerced to a Python ``int``/``float``/``str``
  (numpy 2 and torch scalars break ``{glue:text}`` format specs) and never displayed.
* :func:`record` turns one check (C1-C19, the checks planned with the book, or a check the book
  adds) into a glued record ``claim-<id>``; the book's Sphinx extension (``_ext/book_sphinx``)
  collects every record of every chapter into the ``claims-table`` of ``chapters/claims.md``, so
  nothing is retyped. :func:`not_run` records a check that could not run on this machine.
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
from ._validate import finite_real, positive_int, short_repr

__all__ = ["fmt", "glue", "glue_many", "pretty", "record", "not_run", "checks_table", "CLAIM_PREFIX"]

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
    raise ValueError(f"{name} must be a Python/numpy/torch real scalar or a string, got {short_repr(value)}")


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


def record(check_id: str, claim: str, measured, expected, passed, *, source: str) -> dict:
    """Record one numerical check for the claims page and glue it as ``claim-<check_id>``.

    Args:
        check_id: e.g. ``"C3"`` (a check planned with the book) or ``"B1.2"`` (one a chapter adds).
        claim: the statement checked, one sentence, in the book's words.
        measured: what the chapter computed: a number (formatted with :func:`fmt`) or a string.
        expected: what the paper (or the book's derivation) predicts, as a number or a string such as
            ``"<= 1e-12"``.
        passed: whether the measurement meets the expectation, computed by the chapter.
        source: paper and statement, e.g. ``"K&S Lemma 1"``.

    Returns:
        The record as a dict (``id, source, claim, measured, expected, passed``).

    Raises:
        ValueError: for an empty or malformed ``check_id``, empty ``claim``/``source``, or a
            ``passed`` that is not a bool.
    """
    entry = _entry(check_id, claim, measured, expected, source)
    if not isinstance(passed, bool | np.bool_):
        raise ValueError(f"passed must be a bool, got {short_repr(passed)}")
    return _store(entry | {"passed": bool(passed)})


def _entry(check_id, claim, measured, expected, source) -> dict:
    if not isinstance(check_id, str) or not _KEY.fullmatch(check_id):
        raise ValueError(f"check_id must match {_KEY.pattern}, got {short_repr(check_id)}")
    for name, text in (("claim", claim), ("source", source)):
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"{name} must be a non-empty string, got {short_repr(text)}")
    return {"id": check_id, "source": source.strip(), "claim": claim.strip(),
            "measured": _as_text("measured", measured), "expected": _as_text("expected", expected)}


def _store(entry: dict) -> dict:
    _RECORDED[entry["id"]] = entry
    glue(CLAIM_PREFIX + entry["id"], json.dumps(entry, ensure_ascii=False))
    return entry


def not_run(check_id: str, claim: str, reason: str, *, source: str) -> dict:
    """Record a check that could not run on this machine (a dataset is missing), for the claims page.

    The claims table shows it with the status "not run" and ``reason`` as its measured value,
    never as a pass; the build prints one line per such check.

    Args:
        check_id, claim, source: as for :func:`record`.
        reason: why it did not run, one sentence (e.g. which package is missing).

    Returns:
        The record as a dict (``passed`` is ``None``).

    Raises:
        ValueError: as :func:`record`, and for an empty ``reason``.
    """
    if not isinstance(reason, str) or not reason.strip():
        raise ValueError(f"reason must be a non-empty string, got {short_repr(reason)}")
    return _store(_entry(check_id, claim, f"not run: {reason.strip()}", "-", source) | {"passed": None})


def checks_table():
    """The checks :func:`record`-ed in this kernel so far, one row each, in recording order.

    Returns:
        A pandas ``Styler`` over a DataFrame indexed by check id (columns status, measured,
        expected, claim, source), with the table classes ``dataframe checks-table`` so that the
        book's stylesheet lets the sentences wrap. ``.data`` is the DataFrame.
    """
    columns = ["check", "status", "measured", "expected", "claim", "source"]
    rows = [
        {
            "check": e["id"],
            "status": {True: "pass", False: "FAIL", None: "not run"}[e["passed"]],
            "measured": e["measured"],
            "expected": e["expected"],
            "claim": e["claim"],
            "source": e["source"],
        }
        for e in _RECORDED.values()
    ]
    table = pd.DataFrame(rows, columns=columns).set_index("check")
    return table.style.set_table_attributes('class="dataframe checks-table"')
