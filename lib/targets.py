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
        ValueError: for a shape other than ``(batch, n, d)`` or non-finite, complex or bool input.

    Used in Chapter 4 (checks C12, B4.1) and the epilogue.
    """
    X = _sequences(X)
    return X * X.mean(axis=1, keepdims=True)


def max_product(X: ArrayLike) -> np.ndarray:
    r"""``X * max_j X[:, j, 0]``: every token scaled by the largest first coordinate of its
    sequence.

    Args:
        X: sequences ``(batch, n, d)``.

    Returns:
        float64 ``(batch, n, d)``; permutation equivariant in the tokens.

    Raises:
        ValueError: as :func:`mean_product`.

    Used in Chapter 4 (check C12, ``d = 2``).
    """
    X = _sequences(X)
    return X * X[:, :, :1].max(axis=1, keepdims=True)


def wave(p: ArrayLike) -> np.ndarray:
    r""":math:`f(x) = \sin(2\pi x_1)\cos(2\pi x_2)` at points ``(batch, 2)``; float64 ``(batch,)``.

    Raises:
        ValueError: for points not of shape ``(batch, 2)``, or non-finite, complex or bool input.

    Used in Chapters 5 (check C15) and 6 (check C18).
    """
    p = _points(p, 2)
    return np.sin(2 * np.pi * p[:, 0]) * np.cos(2 * np.pi * p[:, 1])


def disk(p: ArrayLike) -> np.ndarray:
    """The indicator of the closed disk of radius 0.3 centred at (0.5, 0.5), at points
    ``(batch, 2)``.

    Returns:
        float64 ``(batch,)`` of zeros and ones.

    Raises:
        ValueError: as :func:`wave`.

    Used in Chapter 5 (check C16: :math:`L_p` but not :math:`L_\\infty`).
    """
    p = _points(p, 2)
    return (((p - 0.5) ** 2).sum(axis=1) <= 0.09).astype(float)
