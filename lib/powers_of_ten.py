r"""Numbers kept as base-10 logarithms, turned back into numbers and into text: K&S Theorem 2's
separations, far below float64's range.

The separations of K&S Theorem 2 (:func:`lib.contextual.theorem2_delta`,
``ContextIds.log10_gap``) are base-10 logarithms, often below -300 where float64 has no number.
:func:`pow10_mp` turns an exponent ``x`` (a finite real: float, int, decimal string or mpf, or
``-inf``) into :math:`10^x` as an ``mpmath.mpf`` at ``dps`` decimal digits (``15 <= dps <=``
:data:`lib.exact.MAX_DPS`; 0 for ``-inf``); :func:`lib.book.prose.tenpow` writes it as the
book writes every number, three significant digits (``tenpow(-1200.5) == "3.16e-1201"``). An
exponent that is NaN, ``+inf`` or not a real number, or a bad ``dps``, raises ``ValueError``.

Source: the book's display of Theorem 2's separations (K&S, ICLR 2024). Used in Chapter 2.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np

from ._validate import positive_int
from .exact import MAX_DPS, to_mpf

__all__ = ["pow10_mp"]


def pow10_mp(x: float | str | mpmath.mpf, dps: int = 30) -> mpmath.mpf:
    r""":math:`10^x` as an mpf at ``dps`` digits, also far beyond float64's range.

    The separations of K&S Theorem 2 are reported as base-10 logarithms
    (:class:`lib.contextual.Theorem2Delta`, ``ContextIds.log10_gap``); this turns one back into
    the number, ``1e-1200`` included. ``x = -inf``, the logarithm of a collision's gap, gives 0.
    :func:`lib.book.prose.tenpow` formats it for prose.

    Args:
        x: the exponent: a finite real (Python or numpy float or int, decimal string or mpf,
            used as it is) or ``-inf``.
        dps: decimal digits of working precision, ``15 <= dps <= MAX_DPS``.

    Returns:
        An ``mpmath.mpf`` carrying ``dps`` digits (0 for ``x = -inf``).

    Raises:
        ValueError: if ``x`` is NaN, ``+inf`` or not a real number (bools and complex numbers
            are refused), or ``dps`` is not an integer in ``[15, MAX_DPS]``.

    Accuracy:
        Relative error a few units of ``10**-dps`` for every finite ``x`` (mpmath's power,
        exponents from -1e300 to 1e300 probed); an exact power of ten for integer ``x`` up to
        ``dps`` digits. The input is read exactly (a float's binary value, not its decimal
        repr).

    Source: the book's display of Theorem 2's separations (K&S, ICLR 2024), Chapter 2.
    """
    dps = positive_int("dps", dps, minimum=15, maximum=MAX_DPS)
    if isinstance(x, float | np.floating) and x == -math.inf:
        return mpmath.mpf(0)
    with mpmath.workdps(dps):
        if not isinstance(x, mpmath.mpf):
            x = to_mpf("x", x)
        elif not mpmath.isfinite(x):
            if x == -mpmath.inf:
                return mpmath.mpf(0)
            raise ValueError(f"x must be finite or -inf, got {x}")
        return mpmath.mpf(10) ** x
