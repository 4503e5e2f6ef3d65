"""The book's prose helpers: numbers glued into the text and formatted for it.

* :func:`glue` is ``myst_nb.glue`` with the value coerced to a Python ``int``/``float``/``str``
  (numpy 2 and torch scalars break ``{glue:text}`` format specs) and never displayed;
  :func:`glue_many` glues several at once. Every number in the prose goes through it, read by
  one role, ``{glue:text}``.
* :func:`tenpow` writes :math:`10^x` for an exponent far beyond float64's range;
* :func:`fmt` formats a real number (float, numpy or torch scalar, mpmath ``mpf``) for prose and
  tables; :func:`pretty` formats a DataFrame's float columns with it, and shows truth values as
  ``YES_NO`` says;
* :func:`joined` lists words as prose does (``"a, b and c"``).

Every function raises :class:`ValueError`, naming the argument, for a value it cannot show (an
array for a scalar, NaN or infinity where a number must be finite, a bad key).

Source: the book's own. Used by every chapter, by :mod:`lib.book.checks` (a check's measured
value) and :mod:`lib.book.phrases` (the phrases it glues).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable

import mpmath
import numpy as np
import pandas as pd
import torch

from .._validate import finite_real, positive_int, short_repr
from ..exact import to_mpf
from ..powers_of_ten import pow10_mp
from .registry import _KEY

__all__ = ["fmt", "tenpow", "joined", "glue", "glue_many", "pretty"]


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


#: How a table shows a truth value (:func:`pretty`, :func:`~lib.book.display.number_table`).
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


def tenpow(x: float | str | mpmath.mpf) -> str:
    r""":math:`10^x` written for prose and tables, also far below float64's range: ``"3.16e-1201"``.

    :func:`lib.powers_of_ten.pow10_mp` at 30 digits, formatted as :func:`fmt` formats every number
    of the book (3 significant digits; fixed notation between 1e-3 and 1e4, else scientific).
    Chapter 2 writes Theorem 2's separations, kept as base-10 logarithms, with it.

    Args:
        x: the exponent, as :func:`lib.powers_of_ten.pow10_mp` (``-inf`` gives ``"0"``).

    Returns:
        The text, e.g. ``tenpow(-1200.5) == "3.16e-1201"``, ``tenpow(0.5) == "3.16"``.

    Raises:
        ValueError: as :func:`lib.powers_of_ten.pow10_mp` for ``x``.

    Accuracy:
        The 3 digits shown are those of :math:`10^x` correctly rounded, except where the 30-digit
        power lies within about ``10**-27`` (relative) of a rounding boundary; for every finite
        ``x`` (beyond ``|x| = 10**6`` the mantissa is :math:`10^{x - \lfloor x \rfloor}`, and an
        exponent of 1e300 is written out in full).

    Source: the book's display of Theorem 2's separations (K&S, ICLR 2024), Chapter 2.
    """
    power = pow10_mp(x, 30)
    if power == 0:  # x = -inf
        return fmt(power)
    with mpmath.workdps(30):
        x = x if isinstance(x, mpmath.mpf) else to_mpf("x", x)
        if abs(x) < 10**6:
            return fmt(power)
        # fmt divides by 10**exponent at a few digits, too few for an exponent of millions of
        # digits' worth: split x into its integer part and the mantissa's exponent instead
        exponent = mpmath.floor(x)
        mantissa = float(mpmath.mpf(10) ** (x - exponent))
    if mantissa >= 9.995:  # rounds up to 10.00
        mantissa, exponent = mantissa / 10, exponent + 1
    return f"{mantissa:.2f}e{int(exponent)}"
