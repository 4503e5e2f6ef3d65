r"""The target functions the chapters approximate, each written once.

* :func:`mean_product` — :math:`f(X)_{:,k} = x_k\,\mathrm{mean}(X)`, a continuous
  permutation-equivariant map: K&S Proposition 1's kind of target (Chapter 4, the epilogue);
* :func:`max_product` — :math:`f(X)_{:,k} = x_k \max_j x_{j,1}`, a second equivariant target in
  dimension ``d`` (Chapter 4);
* :func:`mean_product_flat` — :func:`mean_product` on sequences of scalar tokens written as
  points ``(batch, n)``, the form a lookup over the whole input takes (the atlas, the epilogue);
* :func:`wave` — :math:`f(x) = \sin(2\pi x_1)\cos(2\pi x_2)` on :math:`[0,1]^2`, the smooth target
  of LHSL's lookup (Chapters 5 and 6);
* :func:`wave_and_product` — :math:`f(x) = (\sin(2\pi x_1)\cos(2\pi x_2),\, x_1 x_2)`, a target
  with two output positions (Chapter 5);
* :func:`tilted_sine` — :math:`f(x) = \sin(2\pi x_1) + x_1/2` on :math:`[0,1]`, the
  one-dimensional target of the kernel picture (Chapter 5);
* :func:`sine_product` — :math:`f(x) = \prod_k \sin(\pi x_k)` on :math:`[0,1]^D`, a product
  target in any dimension (Chapter 6, the atlas);
* :func:`disk` — the indicator of the disk of radius 0.3 centred at :math:`(1/2, 1/2)`, the
  discontinuous one (Chapter 5).

They take numpy arrays and return float64 arrays; they are the book's choices, not the papers'.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ._validate import as_float_array, blame

__all__ = [
    "mean_product",
    "mean_product_flat",
    "max_product",
    "wave",
    "wave_and_product",
    "tilted_sine",
    "sine_product",
    "disk",
]


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


def _points(p: ArrayLike, D: int | None) -> np.ndarray:
    """Points ``(batch, D)`` (any ``D >= 1`` for None) as float64; ValueError naming ``p``."""
    p = as_float_array("p", p, min_ndim=2)
    if p.ndim != 2 or (D is not None and p.shape[1] != D):
        raise ValueError(f"p must have shape (batch, {'D' if D is None else D}), got {p.shape}")
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


def mean_product_flat(p: ArrayLike) -> np.ndarray:
    r""":func:`mean_product` of sequences of scalar tokens given as points: :math:`f(p)_k =
    p_k\,\mathrm{mean}_j p_j`.

    A lookup over the whole input (LHSL's construction) reads a sequence of ``n`` scalar tokens
    as one point of :math:`[0,1]^n`; this is the same target on that layout, ``mean_product(
    p[:, :, None])[:, :, 0]``.

    Args:
        p: points ``(batch, n)``, real and finite, one scalar token per coordinate.

    Returns:
        A float64 array ``(batch, n)``. Output ``k`` is that of token ``k``; permutation
        equivariant in the coordinates.

    Raises:
        ValueError: naming ``p`` for a shape other than ``(batch, n)``, non-finite, complex or
            bool input, or a product :math:`p_k\,\mathrm{mean}_j p_j` that overflows float64.

    Accuracy:
        As :func:`mean_product` (the same operations on the same numbers, bit for bit): each
        entry within :math:`(n + 2)\,u\,|p_k|\,\mathrm{mean}_j |p_j|` of the exact value,
        :math:`u = 2^{-53}`, up to underflow of results below the subnormal range.

    Used in the atlas (the bits of both constructions) and the epilogue (one lookup per
    output position, LHSL's self-attention form).
    """
    p = _points(p, None)
    with blame("p"):
        return mean_product(p[:, :, None])[:, :, 0]


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


def wave_and_product(p: ArrayLike) -> np.ndarray:
    r"""A target with two output positions: :math:`f(x) = (\sin(2\pi x_1)\cos(2\pi x_2),\;
    x_1 x_2)` at points ``(batch, 2)``.

    Args:
        p: finite real points ``(batch, 2)``.

    Returns:
        A float64 array ``(batch, 2)``. Column 0 is :func:`wave`, column 1 the product of the
        coordinates.

    Raises:
        ValueError: naming ``p`` for points not of shape ``(batch, 2)``, non-finite, complex or
            bool input, or a product :math:`x_1 x_2` that overflows float64.

    Accuracy:
        Column 0 as :func:`wave` (absolute error at most about :math:`30u`, :math:`u =
        2^{-53}`); column 1 correctly rounded (one product), up to underflow below the
        subnormal range.

    Used in Chapter 5 (check C17: one key block per output position).
    """
    p = _points(p, 2)
    with np.errstate(over="ignore"):
        product = p[:, 0] * p[:, 1]
    if not np.isfinite(product).all():
        raise ValueError(
            f"p's product x1 x2 overflows float64 at point {_first_bad(product[:, None])}; "
            "rescale p"
        )
    return np.stack([wave(p), product], axis=1)


def tilted_sine(p: ArrayLike) -> np.ndarray:
    r""":math:`f(x) = \sin(2\pi x_1) + x_1/2` at points ``(batch, 1)``; float64 ``(batch,)``.

    Args:
        p: finite real points ``(batch, 1)``, any magnitude.

    Returns:
        float64 ``(batch,)``.

    Raises:
        ValueError: naming ``p`` for points not of shape ``(batch, 1)``, or non-finite, complex
            or bool input.

    Accuracy:
        Within :math:`6u\,(1 + |x_1|/2)` of the exact value, :math:`u = 2^{-53}`, for every
        finite input (mpmath probes at :math:`|x_1|` up to 1e300: at most :math:`4.3u` of it):
        the sine's argument is reduced exactly modulo 2 (``np.fmod``, which leaves
        :math:`(-2, 2)` untouched) before the multiplication by :math:`2\pi`. Not relative
        where the two terms cancel.

    Used in Chapter 5 (check B5.1: the lookup as Nadaraya-Watson kernel regression).
    """
    x = _points(p, 1)[:, 0]
    # sin(2 pi x) has period 1: reduce x exactly modulo 2 (fmod is exact), or 2 pi x rounds by
    # more than a period for |x| above about 1e16
    return np.sin(2 * np.pi * np.fmod(x, 2.0)) + 0.5 * x


def sine_product(p: ArrayLike) -> np.ndarray:
    r""":math:`f(x) = \prod_{k=1}^{D} \sin(\pi x_k)` at points ``(batch, D)``; float64
    ``(batch,)``.

    On :math:`[0,1]^D` it is 0 on the boundary and 1 at the centre, with Lipschitz constant
    :math:`\pi` (its steepest points lie along an axis); on ``(batch, 1)`` points it is the
    one-dimensional factor :math:`\sin(\pi x)` of itself, as :func:`lib.cross.product_lookup`
    takes it.

    Args:
        p: finite real points ``(batch, D)``, ``D >= 1``, any magnitude.

    Returns:
        float64 ``(batch,)``.

    Raises:
        ValueError: naming ``p`` for points not of shape ``(batch, D)``, or non-finite,
            complex or bool input.

    Accuracy:
        Absolute error at most about :math:`9Du`, :math:`u = 2^{-53}`, for every finite input:
        each coordinate is reduced exactly modulo 2 (``np.fmod``, which leaves :math:`(-2, 2)`
        untouched), so even integers give exact zeros; each factor then carries the rounding
        of :math:`\pi` and of one product and one sine (mpmath probes at 400 digits, ``D`` up
        to 8, :math:`|x|` up to 1e300: at most :math:`5.6u`). Not relative: near a zero of a
        factor (odd integers, e.g. :math:`\sin(\pi \cdot 1) \approx 1.2 \times 10^{-16}`)
        the value carries only this absolute accuracy.

    Used in Chapter 6 (the context figure and check B6.1) and the atlas (LHSL's context
    lengths).
    """
    p = _points(p, None)
    # sin(pi x) has period 2: reduce x exactly (fmod is exact) before multiplying by pi
    return np.prod(np.sin(np.pi * np.fmod(p, 2.0)), axis=1)


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
