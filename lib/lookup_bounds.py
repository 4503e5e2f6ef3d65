r"""How fine LHSL's lookup must be: the book's bound on its error over a grid, and the grid an
error asks for.

The lookup of :mod:`lib.lookup` (and its cross-attention form, :mod:`lib.cross`) returns a softmax
average of the values :math:`f(c_i)` at cell centres. For an :math:`f` with gradient norm at
most :math:`L`:

* :func:`grid_lookup_bound` bounds its sup error over an :math:`m \times m` grid of a unit square
  at :math:`\beta = \kappa m^2` (:math:`\kappa \ge` :data:`MIN_BOUND_KAPPA`, or the hard
  partition), a float in the units of :math:`f`;
* :func:`cells_per_axis` gives the cells per axis the hard partition's worst-case bound asks
  for on :math:`[0,1]^D` to reach a sup error :math:`\epsilon`, an int.

Both take Python or numpy scalars and raise ``ValueError`` naming the argument for a negative,
non-finite or non-integer value, or a result beyond float64.

Source: the book's derivation for its reconstruction of LHSL's lookup (LHSL, NeurIPS 2025; see
the Sources and certainty page): check C15 of Chapter 5, and Chapter 6 (the cross-attention layer,
the exercise on the context length).
"""

from __future__ import annotations

import math

from ._validate import finite_real, positive_int

__all__ = ["grid_lookup_bound", "cells_per_axis", "MIN_BOUND_KAPPA"]


#: The smallest ``kappa`` :func:`grid_lookup_bound` accepts. Below it the rings whose weight
#: still counts number more than a few hundred and the bound is far above any error of interest.
MIN_BOUND_KAPPA = 1e-3


def grid_lookup_bound(lipschitz: float, m: int, kappa: float | None) -> float:
    r"""The book's bound on the sup error of the lookup over an :math:`m \times m` grid of a
    square of side 1 (anywhere in the plane), with values :math:`f(c_i)` at the cell centres and
    :math:`\beta = \kappa m^2`, for an :math:`f` with gradient norm at most ``lipschitz``:

    .. math::

        \sup_x |\hat f(x) - f(x)| \le L \sqrt2\, h \big(\tfrac32 + T(\kappa)\big), \qquad
        T(\kappa) = \sum_{k \ge 2} 8k\big(k + \tfrac12\big) e^{-\kappa((k - 1/2)^2 - 1/2)},

    with :math:`h = 1/m`, and :math:`L h / \sqrt2` for the hard partition (``kappa=None``). The
    output averages the values :math:`f(c_i)` with softmax weights; the nearest centre lies within
    :math:`h/\sqrt2` of :math:`x`, its eight neighbours within :math:`\tfrac32\sqrt2\,h`, and
    the :math:`8k` cells :math:`k \ge 2` rings away at most :math:`(k + \frac12)\sqrt2\,h`, each
    with at most the weight :math:`e^{-\kappa((k - 1/2)^2 - 1/2)}` relative to the nearest. The
    sum stops at the first term below :math:`10^{-17}` of the total with
    :math:`\kappa (2k - 1) > 2`; from there each term is less than 0.3 of the one before, so
    what is left out is below :math:`10^{-17}` of the bound.

    Args:
        lipschitz: :math:`L \ge 0`, the largest gradient norm of ``f`` (units of ``f`` per unit
            length).
        m: cells per axis, ``m >= 1``.
        kappa: :math:`\beta / m^2`, at least :data:`MIN_BOUND_KAPPA`, or None for the hard
            partition.

    Returns:
        The bound, a float in the units of ``f``.

    Raises:
        ValueError: for a negative or non-finite ``lipschitz`` (or one so large that the bound
            overflows), ``m < 1``, or ``kappa`` below :data:`MIN_BOUND_KAPPA` or non-finite.

    Accuracy:
        Within :math:`8u` relative of the exact value of the displayed expression, the series
        summed to infinity (probed against mpmath for :math:`\kappa` from
        :data:`MIN_BOUND_KAPPA` to 1e300; the truncation is part of this); :math:`Lh/\sqrt2`
        within :math:`4u`. The float is not rounded upward.

    Source: the book's derivation for its reconstruction of LHSL's lookup (check C15 of
    Chapter 5; Chapter 6 applies it to the cross-attention layer).
    """
    lip = finite_real("lipschitz", lipschitz, minimum=0.0)
    h = 1.0 / positive_int("m", m)
    if kappa is None:
        return lip * h / math.sqrt(2.0)  # lip / sqrt(2) <= lip: finite
    kappa = finite_real("kappa", kappa, minimum=MIN_BOUND_KAPPA)
    tail, k = 0.0, 2
    while True:
        term = 8 * k * (k + 0.5) * math.exp(-kappa * ((k - 0.5) ** 2 - 0.5))
        tail += term
        if term <= 1e-17 * (1.5 + tail) and kappa * (2 * k - 1) > 2:
            break
        k += 1
    out = lip * math.sqrt(2.0) * h * (1.5 + tail)
    if not math.isfinite(out):
        raise ValueError(f"lipschitz={lip!r} is too large: the bound overflows float64")
    return out


def cells_per_axis(lipschitz: float, dim: int, eps: float) -> int:
    r"""The cells per axis that the hard partition's worst-case bound asks for: the smallest
    :math:`m \ge 1` with :math:`L\sqrt{D}\,h/2 \le \epsilon`, :math:`h = 1/m`, i.e.
    :math:`m = \lceil L\sqrt{D}/(2\epsilon)\rceil`.

    On the grid of :math:`m^D` cubes of :math:`[0,1]^D`, every point lies within half a
    diagonal, :math:`\sqrt{D}\,h/2`, of its cube's centre, so the lookup that returns the
    nearest centre's value errs by at most :math:`L\sqrt{D}\,h/2` for an :math:`f` with
    gradient norm at most :math:`L` (the factor :math:`\sqrt{D}` is the worst case over the
    direction of the gradient). The context then holds :math:`N = m^D` key tokens.

    Args:
        lipschitz: :math:`L \ge 0`, the largest gradient norm of ``f`` (units of ``f`` per
            unit length), finite.
        dim: the input dimension :math:`D \ge 1`.
        eps: the target sup error :math:`\epsilon > 0`, finite, in the units of ``f``.

    Returns:
        A Python int ``m >= 1`` (1 when ``lipschitz`` is 0).

    Raises:
        ValueError: naming ``lipschitz`` (negative or not finite), ``dim`` (not a positive
            integer), ``eps`` (not finite and > 0), or all three when
            :math:`L\sqrt{D}/(2\epsilon)` overflows float64.

    Accuracy:
        The quotient :math:`L\sqrt{D}/(2\epsilon)` is formed in float64 (a square root, a
        product and a quotient, each correctly rounded: within :math:`3u` relative,
        :math:`u = 2^{-53}`) and its ceiling taken exactly, so ``m`` is exact unless the exact
        quotient lies within :math:`3u` relative of an integer, where it may be one off.

    Source: the book's reading of LHSL's context length (Chapter 6, exercise on the context
    length; :math:`\lambda`-Lipschitz targets, the curse of dimensionality).
    """
    lip = finite_real("lipschitz", lipschitz, minimum=0.0)
    D = positive_int("dim", dim)
    eps = finite_real("eps", eps, minimum=0.0, strict=True)
    q = lip * math.sqrt(D) / (2 * eps)
    if not math.isfinite(q):
        raise ValueError(
            f"lipschitz={lip!r}, dim={D} and eps={eps!r} ask for more cells per axis than "
            "float64 holds"
        )
    return max(1, math.ceil(q))
