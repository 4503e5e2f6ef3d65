"""Shared input guards: every public function of ``lib`` validates through these.

One rule for every public function: numbers are real. Arrays (numpy, torch, nested lists) go
through :func:`real_array` or :func:`as_float_array`, which refuse complex, bool, string and
object dtypes; scalars go through :func:`finite_real` or :func:`positive_int`, which refuse
``bool``, complex numbers, ``None``, strings, NaN and infinity; yes/no options go through
:func:`flag`. Builders that allocate or enumerate something whose size follows from their
arguments guard it first with :func:`require_size` against a documented module-level limit.

Each guard raises :class:`ValueError` whose message names the argument and shows the value
(shortened for large arrays), so that a bad call says what was wrong and where.
"""

from __future__ import annotations

import decimal
import math
import numbers
import re
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any, Literal, TypeVar, overload

import numpy as np
import torch
from numpy.typing import ArrayLike

from . import _mkl  # noqa: F401  settles oneMKL's vector-math dispatch before any parallel call

__all__ = [
    "as_float_array",
    "real_array",
    "finite_real",
    "positive_int",
    "flag",
    "function",
    "require_size",
    "capped_comb",
    "real_tensor",
    "short_repr",
    "json_value",
    "one_of",
    "float_dtype",
    "blame",
]


T = TypeVar("T")


def short_repr(value: object, limit: int = 80) -> str:
    """``repr(value)`` cut to ``limit`` characters, for error messages."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def finite_real(
    name: str,
    value: object,
    *,
    minimum: float | None = None,
    strict: bool = False,
    maximum: float | None = None,
) -> float:
    """Return ``value`` as a Python float after checking it is a finite real number.

    Accepts Python and numpy real scalars (``int``, ``float``, ``fractions.Fraction``,
    ``decimal.Decimal``, numpy integers and floats) and 0-d numpy arrays or torch tensors; the
    value is rounded once to the nearest float.

    Raises:
        ValueError: if ``value`` is not a real scalar (``bool``, complex, ``None`` and strings
            are refused), is NaN or infinite (or too large for a float), is below ``minimum``
            (or equal to it when ``strict``) or above ``maximum``.
    """
    if isinstance(value, torch.Tensor | np.ndarray):
        if value.ndim != 0:
            raise ValueError(f"{name} must be a scalar, got an array of shape {tuple(value.shape)}")
        value = value.item()
    if isinstance(value, np.generic):
        value = value.item()  # numpy bool_ becomes bool (refused below), numpy floats stay exact
    if isinstance(value, bool) or not isinstance(value, numbers.Real | decimal.Decimal):
        raise ValueError(f"{name} must be a real number, got {short_repr(value)}")
    try:
        out = float(value)  # a Decimal NaN or infinity becomes the float one, refused below
    except (OverflowError, ValueError):  # a Fraction too large, a signalling Decimal NaN
        raise ValueError(f"{name} must be finite, got {short_repr(value)}") from None
    if not math.isfinite(out):
        raise ValueError(f"{name} must be finite, got {out!r}")
    if minimum is not None and (out < minimum or (strict and out == minimum)):
        relation = ">" if strict else ">="
        raise ValueError(f"{name} must be {relation} {minimum}, got {out!r}")
    if maximum is not None and out > maximum:
        raise ValueError(f"{name} must be <= {maximum}, got {out!r}")
    return out


def positive_int(name: str, value: object, *, minimum: int = 1, maximum: int | None = None) -> int:
    """Return ``value`` as a Python int after checking it is an integer ``>= minimum``.

    Raises:
        ValueError: if ``value`` is not an integer (bools are refused) or lies outside
            ``[minimum, maximum]``.
    """
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an integer, got {short_repr(value)}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value!r}")
    # typeshed's numbers.Integral has __lt__ but no __gt__; every Integral compares with an int
    if maximum is not None and value > maximum:  # type: ignore[operator]
        raise ValueError(f"{name} must be <= {maximum}, got {value!r}")
    return int(value)


@overload
def flag(name: str, value: object, *, allow_none: Literal[False] = False) -> bool: ...
@overload
def flag(name: str, value: object, *, allow_none: bool) -> bool | None: ...


def flag(name: str, value: object, *, allow_none: bool = False) -> bool | None:
    """Return the yes/no option ``value`` as a Python bool (``None`` kept when ``allow_none``).

    Raises:
        ValueError: if ``value`` is not a bool (numpy bools are accepted; 0, 1, strings are not).
    """
    if value is None and allow_none:
        return None
    if not isinstance(value, bool | np.bool_):
        allowed = "True, False or None" if allow_none else "True or False"
        raise ValueError(f"{name} must be {allowed}, got {short_repr(value)}")
    return bool(value)


def function(name: str, value: object, what: str = "callable") -> Callable[..., Any]:
    """Return ``value`` if it is callable.

    Raises:
        ValueError: naming ``name`` otherwise (``None``, strings, arrays: never a TypeError from
            the first call).
    """
    if not callable(value):
        raise ValueError(f"{name} must be {what}, got {short_repr(value)}")
    return value


#: Largest amount of work one call of a sweep may do, in elementary units (a point–centre pair
#: of a lookup, an entry of the pairwise differences for one direction, a lattice entry for one
#: grid): at 20-50 ns a unit on one core of the book's 2-core machine, under a minute (make bench
#: times each guarded sweep and projects it to this limit). The
#: guards of :func:`lib.cross.context_length`, :func:`lib.cross.product_context_length` and
#: :func:`lib.separation.best_direction` bound the product of their sizes by it.
MAX_WORK = 2**30


def require_size(what: str, count: int | float, limit: int, limit_name: str) -> None:
    """Refuse to allocate or enumerate ``count`` items when it exceeds ``limit``.

    ``count`` is computed by the caller without building anything (``math.comb``,
    :func:`capped_comb`, products of sizes; ``math.inf`` for "too many to count");
    ``limit_name`` is the documented module-level constant holding ``limit``.

    Raises:
        ValueError: if ``count > limit``; the message names ``what``, the count and the limit.
    """
    if count > limit:
        if count == math.inf:
            shown = "astronomically large"
        else:
            shown = f"{count:,}" if count < 10**30 else f"about 10^{len(str(count)) - 1}"
        raise ValueError(
            f"{what} would be {shown}, more than the limit {limit_name} = {limit:,}; "
            f"use smaller arguments"
        )


def capped_comb(n: int, k: int, cap: int) -> int | float:
    """``math.comb(n, k)``, or ``math.inf`` when it is far above ``cap`` and slow to compute.

    Exact whenever ``min(k, n - k) <= 64`` (``math.comb`` is then fast for any ``n``) or the
    result is at most ``cap``. Otherwise the binomials ``C(n, i)``, ``i <= min(k, n - k)``,
    grow at least twofold per step, so the loop passes ``cap`` after about ``log2(cap)`` steps
    and ``inf`` is returned: enough for :func:`require_size`, where ``math.comb`` of huge
    arguments would itself take minutes.
    """
    k = min(k, n - k)
    if k < 0:
        return 0
    if k <= 64:
        return math.comb(n, k)
    count = 1
    for i in range(k):
        count = count * (n - i) // (i + 1)  # exactly C(n, i + 1)
        if count > cap:
            return math.inf
    return count


def real_tensor(name: str, value: torch.Tensor, *, min_ndim: int = 1) -> torch.Tensor:
    """Check a torch tensor by :func:`as_float_array`'s rule, keeping it a tensor (and its graph).

    Floating dtypes are kept; integer tensors become float64.

    Raises:
        ValueError: for a complex or bool tensor, fewer than ``min_ndim`` dimensions, no entries,
            or NaN or infinity.
    """
    if value.is_complex():
        raise ValueError(f"{name} must be a real array, not complex: {short_repr(value)}")
    if value.dtype == torch.bool:
        raise ValueError(f"{name} must be a real array, not bool: {short_repr(value)}")
    if not value.is_floating_point():
        value = value.to(torch.float64)
    if value.ndim < min_ndim:
        raise ValueError(
            f"{name} must have at least {min_ndim} dimension(s), got shape {tuple(value.shape)}"
        )
    if value.numel() == 0:
        raise ValueError(f"{name} must not be empty, got shape {tuple(value.shape)}")
    if not all_finite(value):
        raise ValueError(f"{name} must be finite, got {short_repr(value)}")
    return value


def real_array(name: str, value: ArrayLike | torch.Tensor) -> np.ndarray:
    """``value`` (numpy array, torch tensor, nested lists, scalar) as a real numpy array, dtype
    kept.

    Integer and floating dtypes are accepted; torch tensors come back as numpy arrays of the
    same dtype (``bfloat16`` widened exactly to ``float32``). Nothing is checked beyond the
    dtype: no shape, size or finiteness test.

    Raises:
        ValueError: for complex, bool, string or object dtypes, and for input that numpy cannot
            read as one array (ragged lists).
    """
    if isinstance(value, torch.Tensor):
        if value.is_complex():
            raise ValueError(f"{name} must be a real array, not complex: {short_repr(value)}")
        if value.dtype == torch.bool:
            raise ValueError(f"{name} must be a real array, not bool: {short_repr(value)}")
        value = value.detach().cpu()
        if value.dtype == torch.bfloat16:  # no numpy twin: float32 holds every bfloat16 exactly
            value = value.to(torch.float32)
        value = value.numpy()
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError) as exc:  # ragged lists and the like
        raise ValueError(f"{name} must be a real array, got {short_repr(value)}") from exc
    if arr.dtype.kind == "c":
        raise ValueError(f"{name} must be a real array, not complex: {short_repr(value)}")
    if arr.dtype.kind == "b":
        raise ValueError(f"{name} must be a real array, not bool: {short_repr(value)}")
    if arr.dtype.kind not in "iuf":
        raise ValueError(f"{name} must be a real array, got dtype {arr.dtype}: {short_repr(value)}")
    return arr


def as_float_array(
    name: str, value: ArrayLike | torch.Tensor, *, min_ndim: int = 1, finite: bool = True
) -> np.ndarray:
    """Convert array-like ``value`` to a float64 numpy array with ``ndim >= min_ndim``.

    The dtype rule is :func:`real_array`'s. With ``finite`` (the default) NaN and infinity are
    refused; with ``finite=False`` they pass and the caller checks what it allows. The result is
    writable with non-negative strides (a read-only or reversed view is copied), so that
    ``torch.from_numpy`` of it is safe.

    Raises:
        ValueError: if ``value`` cannot be read as a real array (complex, bool, strings,
            objects, ragged lists), has too few dimensions, is empty, or (when ``finite``) holds
            NaN or infinity.
    """
    arr = real_array(name, value)
    if arr.ndim < min_ndim:
        raise ValueError(
            f"{name} must have at least {min_ndim} dimension(s), got shape {arr.shape}"
        )
    if arr.size == 0:
        raise ValueError(f"{name} must not be empty, got shape {arr.shape}")
    arr = arr.astype(np.float64, copy=False)
    if not arr.flags.writeable or any(step < 0 for step in arr.strides):
        # a read-only view (torch.from_numpy of it would be unsafe) or a reversed view
        # (x[::-1]: torch refuses negative strides) becomes a fresh C-ordered copy
        arr = arr.copy()
    if finite and not np.isfinite(arr).all():
        raise ValueError(f"{name} must be finite, got {short_repr(arr)}")
    return arr


def all_finite(t: torch.Tensor) -> bool:
    """True when every entry of the torch tensor ``t`` is finite.

    One reduction instead of an element-wise mask: a NaN or inf anywhere makes the sum NaN or
    inf, so a finite sum proves every entry finite; only when the sum is not finite (a
    non-finite entry, or finite entries whose sum overflows) is the exact test run.
    """
    with torch.no_grad():
        return bool(torch.isfinite(t.sum())) or bool(torch.isfinite(t).all())


def json_value(name: str, value: object) -> Any:
    """``value`` as plain JSON values: numpy and torch scalars become Python numbers, tuples lists.

    Accepts ``None``, bools, strings, integers, finite reals (including 0-d numpy arrays and torch
    tensors), and lists, tuples and dicts with string keys of those, recursively.

    Raises:
        ValueError: naming the place (``name[...]``) of a non-finite number, a key that is not a
            string, or any other type.
    """
    if value is None or isinstance(value, bool | np.bool_ | str):
        return bool(value) if isinstance(value, np.bool_) else value
    if isinstance(value, torch.Tensor | np.ndarray) and value.ndim == 0:
        value = value.item()
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        value = float(value)
        if not math.isfinite(value):
            raise ValueError(f"{name} must be finite, got {value}")
        return value
    if isinstance(value, list | tuple):
        return [json_value(f"{name}[{i}]", v) for i, v in enumerate(value)]
    if isinstance(value, dict):
        bad = [k for k in value if not isinstance(k, str)]
        if bad:
            raise ValueError(f"{name} keys must be strings, got {bad[0]!r}")
        return {k: json_value(f"{name}[{k!r}]", v) for k, v in value.items()}
    raise ValueError(
        f"{name} must hold JSON values (numbers, strings, lists, dicts), got {short_repr(value)}"
    )


def one_of(name: str, value: T, options: Iterable[object]) -> T:
    """``value`` when it is one of ``options`` (strings compared exactly).

    Raises:
        ValueError: naming ``name``, the allowed values and the value, for anything else
            (including unhashable values).
    """
    options = tuple(options)
    try:
        ok = value in options and not isinstance(value, bool)
    except TypeError:
        ok = False
    if not ok:
        raise ValueError(f"{name} must be one of {options}, got {short_repr(value)}")
    return value


def float_dtype(name: str, dtype: object) -> torch.dtype:
    """``dtype`` when it is ``torch.float32`` or ``torch.float64``.

    Raises:
        ValueError: naming ``name`` and the value, for any other dtype or object.
    """
    if dtype not in (torch.float32, torch.float64):
        raise ValueError(f"{name} must be torch.float32 or torch.float64, got {dtype!r}")
    return dtype


@contextmanager
def blame(*names: str) -> Iterator[None]:
    """Name the caller's arguments in a ValueError raised inside the ``with`` block.

    A helper that checks a value derived from an argument names its own variable (``vocab``
    for the tokens of ``X``, ``x`` for the ``points`` of a table row); the caller knows which of
    its arguments the value came from. A message that already names one of ``names`` (as a word
    of its own) passes unchanged; any other is prefixed with them (``"X: vocab must ..."``).

    Raises:
        ValueError: the one raised inside, renamed as above (the original as its cause).
    """
    try:
        yield
    except ValueError as e:
        message = str(e)
        if any(re.search(rf"(?<![\w.]){re.escape(n)}(?!\w)", message) for n in names):
            raise
        raise ValueError(f"{', '.join(names)}: {message}") from e
