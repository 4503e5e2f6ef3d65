r"""Precision and size bookkeeping for the scaling atlas (the page "A scaling atlas").

The atlas compares both constructions in bits: how many decimal digits a set of context ids needs
(:func:`digits_needed`), what a computation at fewer digits does to them (:func:`round_to_digits`),
how many bits one stored number needs (:func:`bits_per_number`), and two lower bounds the book
derives by counting (:func:`lipschitz_packing_bits`, :func:`memorization_bits`). The quantities
themselves (separations, context ids, weights, grid sizes) come from :mod:`lib.contextual`,
:mod:`lib.approximation` and :mod:`lib.lookup`; this module only converts them.

Every function validates its input and raises ``ValueError`` naming the argument.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
from numpy.typing import ArrayLike

from ._validate import as_float_array, finite_real, positive_int, short_repr
from .exact import to_mpf

__all__ = [
    "digits_needed",
    "round_to_digits",
    "bits_per_number",
    "lipschitz_packing_bits",
    "memorization_bits",
    "MAX_DIGITS",
]

#: Largest number of digits :func:`round_to_digits` emulates: float64 holds about 16.
MAX_DIGITS = 300


def _positive_mpf(name: str, value: float | str | mpmath.mpf) -> mpmath.mpf:
    with mpmath.workdps(30):
        out = to_mpf(name, value)
        if not out > 0:
            raise ValueError(f"{name} must be > 0, got {short_repr(value)}")
        return out


def digits_needed(gap: float | str | mpmath.mpf, spread: float | str | mpmath.mpf) -> float:
    r"""Decimal digits that resolve a gap within a range:
    :math:`\log_{10}(\text{spread}/\text{gap})`.

    A fixed-point number with ``p`` decimal digits over a range of width ``spread`` has resolution
    ``spread * 10**-p``; it tells two values ``gap`` apart when the resolution is below the gap,
    i.e. when ``p`` exceeds the result.

    Args:
        gap: the smallest distance to resolve, > 0 (float, int, decimal string or mpmath ``mpf``;
            an mpf may lie far below float64's range, e.g. ``mpf("1e-5000")``).
        spread: the width of the range of the values (e.g. largest minus smallest id), > 0.

    Returns:
        The digits as a Python float (negative when ``gap > spread``).

    Raises:
        ValueError: naming ``gap`` or ``spread`` when it is not a finite real number > 0.

    Accuracy:
        Both inputs are rounded to 30 digits (floats exactly) and the logarithms taken at 30
        digits, then rounded once to float64: absolute error at most about
        ``1e-29 (|log10 gap| + |log10 spread|)`` plus one rounding, for any sizes an mpf holds
        (``1e-5000`` included).

    Source: the book's measure of precision for K&S's context ids (the atlas page).
    """
    g, s = _positive_mpf("gap", gap), _positive_mpf("spread", spread)
    with mpmath.workdps(30):
        return float(mpmath.log10(s) - mpmath.log10(g))


def round_to_digits(
    values: ArrayLike, digits: int, spread: float, origin: float = 0.0
) -> np.ndarray:
    r"""``values`` computed at ``digits`` decimal digits of fixed point over a range ``spread``.

    Each value is rounded to the nearest point of the grid
    :math:`\text{origin} + k\,\text{spread}\cdot 10^{-\text{digits}}`, :math:`k \in \mathbb{Z}`
    (half-way cases to even, as ``numpy.round``). This emulates a network that represents its
    context ids with that many digits: two ids closer than the grid's spacing may merge.

    Args:
        values: float64 array of any shape.
        digits: decimal digits, ``1 <= digits <= MAX_DIGITS``.
        spread: width of the range the digits cover, finite, > 0.
        origin: a grid point (default 0), finite.

    Returns:
        float64 array of the shape of ``values``.

    Raises:
        ValueError: naming ``values`` (not real, or not finite), ``digits`` (not an integer in
            range), ``spread`` (not finite and > 0, or a spacing that underflows or makes the
            grid's index overflow) or ``origin``.

    Accuracy:
        The grid is emulated in float64: the spacing is ``spread * 10.0**-digits`` (two
        roundings), and the quotient, product and sum each round once, so a result lies within
        a few u of its grid point relative to ``|origin| + |result|``, and a value within a few
        u of a half-way point may go to either neighbour. Deterministic; a grid index that
        overflows is refused with ValueError.

    Source: the book's emulation of finite precision (the atlas page, the reviewers' second
    question).
    """
    x = as_float_array("values", values, min_ndim=0)
    digits = positive_int("digits", digits, maximum=MAX_DIGITS)
    spread = finite_real("spread", spread, minimum=0.0, strict=True)
    origin = finite_real("origin", origin)
    step = spread * 10.0**-digits
    if not step > 0:
        raise ValueError(
            f"spread={spread!r} with digits={digits} gives a spacing that underflows float64"
        )
    with np.errstate(over="ignore"):
        out = origin + np.round((x - origin) / step) * step
    if not np.all(np.isfinite(out)):
        raise ValueError(
            f"values - origin on a grid of spacing {step!r} (origin={origin!r}, spread={spread!r}, "
            f"digits={digits}) overflow float64: choose a larger spread or fewer digits"
        )
    return out


def bits_per_number(largest: float | str | mpmath.mpf, resolution: float | str | mpmath.mpf) -> int:
    r"""Bits of a signed fixed-point number of magnitude up to ``largest`` at ``resolution``:
    :math:`1 + \lceil \log_2(\text{largest}/\text{resolution}) \rceil`, at least 1.

    One bit for the sign; the magnitude needs :math:`\lceil\log_2(\text{largest}/
    \text{resolution})\rceil` bits to count up to ``largest`` in steps of ``resolution``.

    Args:
        largest: the largest magnitude stored, > 0 (float, decimal string or mpmath ``mpf``:
            K&S's weights at the theorem's inverse temperature exceed float64's range).
        resolution: the step the number must be right to, > 0 (same kinds).

    Returns:
        A Python int ``>= 1``.

    Raises:
        ValueError: naming ``largest`` or ``resolution`` when it is not a finite real > 0.

    Accuracy:
        An integer from 30-digit logarithms: exact (``bits_per_number(8, 1) == 4``) unless
        ``largest / resolution`` lies within about ``1e-29`` relative of a power of two, where
        the ceiling may be one off (``2**1000 (1 + 2**-120)`` over 1 gives 1001, not 1002).

    Source: the book's bit count for the atlas's joint figure.
    """
    big, step = _positive_mpf("largest", largest), _positive_mpf("resolution", resolution)
    with mpmath.workdps(30):
        ratio = mpmath.log(big, 2) - mpmath.log(step, 2)
        return 1 + max(0, int(mpmath.ceil(ratio)))


def lipschitz_packing_bits(lipschitz: float, eps: float, dim: int) -> int:
    r"""Bits that any description of every ``lipschitz``-Lipschitz function on :math:`[0,1]^D` to
    sup error ``eps`` needs, at least: :math:`(\lceil L/(2\epsilon)\rceil - 1)^D`.

    Derivation (a packing). Let :math:`k = \lceil L/(2\epsilon)\rceil - 1`, the largest integer
    below :math:`L/(2\epsilon)`, and cut :math:`[0,1]^D` into :math:`k^D` cubes of side
    :math:`s = 1/k`. In each cube put the pyramid :math:`L(s/2 - \|x - c\|_\infty)_+`, of height
    :math:`a = Ls/2 > \epsilon`; for every sign pattern :math:`\sigma \in \{\pm 1\}^{k^D}` the sum
    :math:`f_\sigma = \sum_j \sigma_j\,\text{pyramid}_j` is :math:`L`-Lipschitz (Euclidean norm).
    Two patterns that differ are :math:`2a > 2\epsilon` apart in sup norm, so no function is within
    :math:`\epsilon` of both: a scheme that maps :math:`B`-bit strings to functions and reaches
    error :math:`\epsilon` on all :math:`2^{k^D}` of them has :math:`2^B \ge 2^{k^D}`. The order
    :math:`(L/\epsilon)^D` is that of Kolmogorov and Tikhomirov's :math:`\epsilon`-entropy of
    Lipschitz classes; this constant is the book's.

    Args:
        lipschitz: :math:`L > 0`, finite; eps: :math:`\epsilon > 0`, finite; dim: :math:`D \ge 1`.

    Returns:
        A Python int (0 when :math:`L \le 2\epsilon`: one constant function serves).

    Raises:
        ValueError: naming ``lipschitz``, ``eps`` or ``dim`` for a value out of range, or ``eps``
            when :math:`(L/(2\epsilon))^D` has more than a million digits.

    Accuracy:
        Exact: ``k = ceil(L / (2 eps)) - 1`` from the exact rational quotient of the two
        floats (no rounding, overflow or underflow; ``k = 0`` when ``L <= 2 eps``) and
        ``k ** dim`` in integer arithmetic.

    Source: the book's counting bound (atlas page).
    """
    L = finite_real("lipschitz", lipschitz, minimum=0.0, strict=True)
    eps = finite_real("eps", eps, minimum=0.0, strict=True)
    dim = positive_int("dim", dim, maximum=10**6)
    # L / (2 eps) as an exact rational of the two floats: no rounding, no overflow or underflow
    k = max(math.ceil(Fraction(L) / (2 * Fraction(eps))) - 1, 0)
    if k >= 2 and dim * math.log10(k) > 10**6:
        raise ValueError(f"eps={eps!r} with dim={dim} gives a bound of more than 10**6 digits")
    return k**dim


def memorization_bits(n_items: int, n_labels: int) -> float:
    r"""The counting bound :math:`N \log_2 C` for memorizing ``n_items`` inputs with ``n_labels``
    labels.

    A network that memorizes every one of the :math:`C^N` labellings of :math:`N` fixed inputs
    must take :math:`C^N` different parameter values, so its parameters hold at least
    :math:`\log_2 C^N = N\log_2 C` bits.

    Args:
        n_items: :math:`N \ge 1`; n_labels: :math:`C \ge 1`.

    Returns:
        The bound in bits, a Python float.

    Raises:
        ValueError: naming ``n_items`` or ``n_labels`` when it is not a positive integer, or
            when :math:`N \log_2 C` overflows float64 (``n_items = 10**400``).

    Accuracy:
        ``N`` converted to float64 (exact up to ``2**53``), ``log2 C`` and one product, each
        rounded once: relative error at most ``3 u`` (``u = 2**-53``); exactly 0.0 for
        ``C = 1``.

    Source: the book's counting bound (atlas page), used beside K&S's memorization
    (Chapter 3).
    """
    N = positive_int("n_items", n_items)
    C = positive_int("n_labels", n_labels)
    try:
        bits = float(N) * math.log2(C)
    except OverflowError:
        bits = math.inf
    if not math.isfinite(bits):
        raise ValueError(
            f"memorization_bits(n_items of {len(str(N))} digits, n_labels={C}): "
            f"N log2 C overflows float64"
        )
    return bits
