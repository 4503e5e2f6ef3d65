r"""The target functions the chapters approximate, each written once.

* :func:`mean_product` — :math:`f(X)_{:,k} = x_k\,\mathrm{mean}(X)`, a continuous
  permutation-equivariant map: K&S Proposition 1's kind of target (Chapter 4, the epilogue);
* :func:`max_product` — :math:`f(X)_{:,k} = x_k \max_j x_{j,1}`, a second equivariant target in
  dimension ``d`` (Chapter 4);
* :func:`wave` — :math:`f(x) = \sin(2\pi x_1)\cos(2\pi x_2)` on :math:`[0,1]^2`, the smooth target
  of LHSL's lookup (Chapters 5 and 6);
* :func:`disk` — the indicator of the disk of radius 0.3 centred at :math:`(1/2, 1/2)`, the
  discontinuous one (Chapter 5).

They take numpy arrays and return float64 arrays; they are the book's choices, not the papers'.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ._validate import as_float_array

__all__ = ["mean_product", "max_product", "wave", "disk"]


def _sequences(X: ArrayLike) -> np.ndarray:
    X = as_float_array("X", X, min_ndim=3)
    if X.ndim != 3:
        raise ValueError(f"X must have shape (batch, n, d), got {X.shape}")
    return X


def _finite_product(X: np.ndarray, factor: np.ndarray, what: str) -> np.ndarray:
    """``X * factor``, refused where a product overflows float64 (the target is not a float)."""
    with np.errstate(over="ignore"):
        out = X * factor
    if not np.isfinite(out).all():
        raise ValueError(f"X's {what} overflows float64 at sequence {_first_bad(out)}; rescale X")
    return out


def _first_bad(out: np.ndarray) -> int:
    return int(np.nonzero(~np.isfinite(out.reshape(len(out), -1)).all(axis=1))[0][0])


def _points(p: ArrayLike, D: int) -> np.ndarray:
    p = as_float_array("p", p, min_ndim=2)
    if p.ndim != 2 or p.shape[1] != D:
        raise ValueError(f"p must have shape (batch, {D}), got {p.shape}")
    return p


def mean_product(X: ArrayLike) -> np.ndarray:
    r"""``X * mean(X)``: :math:`f(X)_{:,k} = x_k\,\mathrm{mean}_j x_j`, per coordinate.

    Args:
        X: sequences ``(batch, n, d)``.

    Returns:
        float64 ``(batch, n, d)``; permutation equivariant in the tokens.

    Raises:
        ValueError: for a shape other than ``(batch, n, d)`` or non-finite, complex or bool input,
            or when a product :math:`x_k\,\mathrm{mean}_j x_j` overflows float64.

    Accuracy:
        Each entry is within :math:`(n + 2)\,u\,|x_{k,c}|\,\mathrm{mean}_j |x_{j,c}|` of the exact
        value, :math:`u = 2^{-53}` (Fraction probes with entries of 1e-150..1e150: at most 0.33 of
        it), up to underflow of results below the subnormal range; relative accuracy is lost
        only where the mean cancels. A sum that overflows is redone as the sum of ``x / n``;
        a product that overflows refuses the whole call.

    Used in Chapter 4 (checks C12, B4.1) and the epilogue.
    """
    X = _sequences(X)
    with np.errstate(over="ignore"):
        mean = X.mean(axis=1, keepdims=True)
    if not np.isfinite(mean).all():
        # the sum overflowed: divide each term by n first (n terms of at most max|X| / n)
        mean = (X / X.shape[1]).sum(axis=1, keepdims=True)
    return _finite_product(X, mean, "X * mean(X)")


def max_product(X: ArrayLike) -> np.ndarray:
    r"""``X * max_j X[:, j, 0]``: every token scaled by the largest first coordinate of its
    sequence.

    Args:
        X: sequences ``(batch, n, d)``.

    Returns:
        float64 ``(batch, n, d)``; permutation equivariant in the tokens.

    Raises:
        ValueError: as :func:`mean_product` (an overflowing product included).

    Accuracy:
        Correctly rounded: the maximum is exact and each entry is one float64 product, the
        subnormal range included; a product that overflows is refused.

    Used in Chapter 4 (check C12, ``d = 2``).
    """
    X = _sequences(X)
    return _finite_product(X, X[:, :, :1].max(axis=1, keepdims=True), "X * max_j X[:, j, 0]")


def wave(p: ArrayLike) -> np.ndarray:
    r""":math:`f(x) = \sin(2\pi x_1)\cos(2\pi x_2)` at points ``(batch, 2)``; float64 ``(batch,)``.

    Args:
        p: finite real points ``(batch, 2)``, any magnitude.

    Raises:
        ValueError: for points not of shape ``(batch, 2)``, or non-finite, complex or bool input.

    Accuracy:
        Absolute error at most about :math:`30u`, :math:`u = 2^{-53}`, for every finite input:
        each coordinate is reduced exactly modulo 1 (``np.fmod``) before the multiplication by
        :math:`2\pi`, so integers give exactly :math:`\pm 0` factors of the sine (mpmath probes
        on :math:`[0, 1]^2`, at :math:`|x|` up to 1e300 and at half-integers: at most
        :math:`5.4u`). Not relative: near the zeros of the sine or cosine the value carries
        only this absolute accuracy.

    Used in Chapters 5 (check C15) and 6 (check C18).
    """
    p = _points(p, 2)
    # sin(2 pi x) has period 1: reduce x exactly (fmod is exact) before multiplying by 2 pi, or
    # 2 pi x rounds by more than a period for |x| above about 1e16 and the value is noise
    r = np.fmod(p, 1.0)
    return np.sin(2 * np.pi * r[:, 0]) * np.cos(2 * np.pi * r[:, 1])


def disk(p: ArrayLike) -> np.ndarray:
    """The indicator of the closed disk of radius 0.3 centred at (0.5, 0.5), at points
    ``(batch, 2)``.

    Returns:
        float64 ``(batch,)`` of zeros and ones.

    Raises:
        ValueError: as :func:`wave`.

    Accuracy:
        Exact (0 or 1) except at points whose exact squared distance from the centre lies within
        a relative :math:`4u` (:math:`u = 2^{-53}`) of :math:`9/100`, where the float64 sum of
        squares and the rounded ``0.09`` can decide either way (a probe of 100,000 float points
        on the circle: 10% decided against the exact rational test, all within :math:`1.3u`).
        A square that overflows counts, correctly, as outside.

    Used in Chapter 5 (check C16: :math:`L_p` but not :math:`L_\\infty`).
    """
    p = _points(p, 2)
    with np.errstate(over="ignore"):  # a square that overflows is far outside the disk: inf > 0.09
        return (((p - 0.5) ** 2).sum(axis=1) <= 0.09).astype(float)
