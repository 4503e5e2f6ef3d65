"""Shared input checks: every public function of ``lib`` validates through these.

Each check raises :class:`ValueError` whose message names the argument and shows the value
(shortened for large arrays), so that a bad call says what was wrong and where.
"""

from __future__ import annotations

import math
import numbers

import numpy as np
import torch

__all__ = [
    "as_float_array",
    "finite_real",
    "positive_int",
    "short_repr",
]


def short_repr(value, limit: int = 80) -> str:
    """``repr(value)`` cut to ``limit`` characters, for error messages."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def finite_real(name: str, value, *, minimum: float | None = None, strict: bool = False,
                maximum: float | None = None) -> float:
    """Return ``value`` as a Python float after checking it is a finite real number.

    Accepts Python and numpy real scalars and 0-d numpy arrays or torch tensors.

    Raises:
        ValueError: if ``value`` is not a real scalar, is NaN or infinite (or too large for a
            float), is below ``minimum`` (or equal to it when ``strict``) or above ``maximum``.
    """
    if isinstance(value, torch.Tensor | np.ndarray):
        if value.ndim != 0:
            raise ValueError(f"{name} must be a scalar, got an array of shape {tuple(value.shape)}")
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a real number, got {short_repr(value)}")
    try:
        out = float(value)
    except OverflowError:
        raise ValueError(f"{name} must be finite, got {short_repr(value)}") from None
    if not math.isfinite(out):
        raise ValueError(f"{name} must be finite, got {out!r}")
    if minimum is not None and (out < minimum or (strict and out == minimum)):
        relation = ">" if strict else ">="
        raise ValueError(f"{name} must be {relation} {minimum}, got {out!r}")
    if maximum is not None and out > maximum:
        raise ValueError(f"{name} must be <= {maximum}, got {out!r}")
    return out


def positive_int(name: str, value, *, minimum: int = 1, maximum: int | None = None) -> int:
    """Return ``value`` as a Python int after checking it is an integer ``>= minimum``.

    Raises:
        ValueError: if ``value`` is not an integer (bools are refused) or lies outside
            ``[minimum, maximum]``.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an integer, got {short_repr(value)}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value!r}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be <= {maximum}, got {value!r}")
    return int(value)


def as_float_array(name: str, value, *, min_ndim: int = 1) -> np.ndarray:
    """Convert array-like ``value`` to a finite float64 numpy array with ``ndim >= min_ndim``.

    Raises:
        ValueError: if ``value`` cannot be read as a real array, has too few dimensions, is
            empty, or holds NaN or infinity.
    """
    if isinstance(value, torch.Tensor):
        if value.is_complex():
            raise ValueError(f"{name} must be real, got a complex tensor")
        # bfloat16/float16 have no numpy twin: widen to float64 first
        value = value.detach().to("cpu", torch.float64).numpy()
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError) as exc:  # ragged lists and the like
        raise ValueError(f"{name} must be a real array, got {short_repr(value)}") from exc
    if arr.dtype.kind == "c":
        raise ValueError(f"{name} must be real, got a complex array")
    if arr.dtype.kind not in "biuf":
        raise ValueError(f"{name} must be a real array, got dtype {arr.dtype}: {short_repr(value)}")
    if arr.ndim < min_ndim:
        raise ValueError(f"{name} must have at least {min_ndim} dimension(s), got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} must not be empty, got shape {arr.shape}")
    arr = arr.astype(np.float64, copy=False)
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} must be finite, got {short_repr(arr)}")
    return arr


def all_finite(t) -> bool:
    """True when every entry of the torch tensor ``t`` is finite.

    One reduction instead of an element-wise mask: a NaN or inf anywhere makes the sum NaN or
    inf, so a finite sum proves every entry finite; only when the sum is not finite (a
    non-finite entry, or finite entries whose sum overflows) is the exact test run.
    """
    with torch.no_grad():
        return bool(torch.isfinite(t.sum())) or bool(torch.isfinite(t).all())
