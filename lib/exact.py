"""Arbitrary-precision (mpmath) versions of the book's quantities.

The separations K&S Lemma 1 and Theorem 2 promise are exponentially small; float64 reports
false collisions long before they vanish. These functions evaluate the same formulas at a
chosen number of decimal digits ``dps``. Inputs are converted exactly: a Python or numpy float
becomes the mpf with the same binary value, a string such as ``"0.2"`` is read as the decimal.

mpmath is the library; this module only writes the formulas of the papers with it.
Used in Chapter 1 (Lemma 1) and Chapter 2 (context ids).
"""

from __future__ import annotations

import numbers

import mpmath
import numpy as np
import torch

from ._validate import positive_int, short_repr

__all__ = ["MAX_DPS", "to_mpf", "boltz_mp", "min_gap"]

#: Largest working precision (decimal digits) the book's functions accept; beyond it a single
#: evaluation would take minutes to hours.
MAX_DPS = 100_000


def to_mpf(name: str, value) -> mpmath.mpf:
    """Convert a real scalar (float, int, numpy scalar, decimal string or mpf) to an mpf.

    Raises:
        ValueError: if ``value`` is not a real number or is NaN or infinite.
    """
    if isinstance(value, torch.Tensor | np.ndarray):
        if value.ndim != 0:
            raise ValueError(f"{name} must be a scalar, got shape {tuple(value.shape)}")
        value = value.item()
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, numbers.Rational) and not isinstance(value, numbers.Integral):
        return mpmath.mpf(value.numerator) / value.denominator
    if isinstance(value, bool) or not isinstance(value, numbers.Real | str | mpmath.mpf):
        raise ValueError(f"{name} must be a real number, got {short_repr(value)}")
    try:
        out = mpmath.mpf(value)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a real number, got {short_repr(value)}") from exc
    if not mpmath.isfinite(out):
        raise ValueError(f"{name} must be finite, got {short_repr(value)}")
    return out


def boltz_mp(a, beta=1, dps: int = 50) -> mpmath.mpf:
    r"""Boltzmann operator :math:`\sum_i a_i e^{\beta a_i} / \sum_j e^{\beta a_j}` at ``dps`` digits.

    Args:
        a: 1-D sequence of ``n >= 1`` real entries (floats, ints, decimal strings or mpf), or a
            1-D numpy array / torch tensor.
        beta: inverse temperature, a finite real (also a decimal string or mpf).
        dps: decimal digits of working precision, ``>= 15``.

    Returns:
        An ``mpmath.mpf`` carrying ``dps`` digits. Subtract two such values inside
        ``mpmath.workdps(dps)`` (or with :func:`min_gap`) to keep those digits.

    Raises:
        ValueError: if ``a`` is empty, not 1-D, or holds a non-finite or non-real entry; if
            ``beta`` is not finite; if ``dps < 15``.

    Source: K&S (ICLR 2024), Section 3; the float64 version is :func:`lib.boltzmann.boltz`.
    Used in Chapter 1 (checks C3, C4).
    """
    dps = positive_int("dps", dps, minimum=15, maximum=MAX_DPS)
    if isinstance(a, torch.Tensor):
        a = a.detach().to("cpu", torch.float64).numpy() if a.is_floating_point() else a.detach().cpu().numpy()
    if isinstance(a, np.ndarray) and a.ndim != 1:
        raise ValueError(f"a must be 1-D, got shape {a.shape}")
    if not isinstance(a, list | tuple | np.ndarray):
        raise ValueError(f"a must be a 1-D sequence of reals (list, tuple or array), got {short_repr(a)}")
    if len(a) == 0:
        raise ValueError("a must have at least one entry, got an empty sequence")
    with mpmath.workdps(dps):
        entries = [to_mpf(f"a[{i}]", x) for i, x in enumerate(a)]
        b = to_mpf("beta", beta)
        top = max(b * x for x in entries)
        weights = [mpmath.exp(b * x - top) for x in entries]
        return mpmath.fsum(x * w for x, w in zip(entries, weights, strict=True)) / mpmath.fsum(weights)


def min_gap(values, dps: int = 50, *, distinct: bool = True) -> mpmath.mpf:
    """Smallest distance between two entries of ``values``, computed at ``dps`` digits.

    Sorting makes this ``O(m log m)``: the minimum pairwise distance is the minimum difference of
    neighbours in sorted order.

    Args:
        values: a sequence of at least two real scalars (mpf, floats, decimal strings).
        dps: decimal digits, ``>= 15``; use the precision the values were computed at.
        distinct: if True (default), equal entries are treated as the same value and skipped
            (the smallest distance between *distinct* entries, e.g. context ids of sequences that
            are permutations of each other); if False, equal entries give a gap of 0 (a
            collision).

    Returns:
        The gap as an ``mpmath.mpf``; ``mpmath.inf`` when ``distinct`` and all entries are equal.

    Raises:
        ValueError: if fewer than two values are given, or a value is not a finite real.

    Source: the "minimum gap" of K&S Lemma 1 and Theorem 2 (PAPERS.md §5). Used in Chapters 1-2.
    """
    dps = positive_int("dps", dps, minimum=15, maximum=MAX_DPS)
    if isinstance(values, torch.Tensor | np.ndarray):
        values = list(np.asarray(values.tolist() if isinstance(values, torch.Tensor) else values).ravel())
    if not isinstance(values, list | tuple):
        raise ValueError(f"values must be a list, tuple or array of reals, got {short_repr(values)}")
    values = list(values)
    if len(values) < 2:
        raise ValueError(f"values must hold at least two entries, got {len(values)}")
    with mpmath.workdps(dps):
        xs = sorted(to_mpf(f"values[{i}]", v) for i, v in enumerate(values))
        gaps = [hi - lo for lo, hi in zip(xs, xs[1:], strict=False)]
        if distinct:
            gaps = [g for g in gaps if g != 0]
        return min(gaps) if gaps else mpmath.inf
