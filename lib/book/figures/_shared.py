"""The steps the book's figures share (:mod:`lib.book.figures`): their arguments checked and
converted, and the bottom panel of a two-panel slider figure.

Every function raises :class:`ValueError`, naming the argument, for input of the wrong shape,
length or kind.

Source: the book's own. Used by the figures of Chapters 1-7.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ..._validate import real_array

#: The bottom panel of a two-panel slider figure (:func:`~lib.book.interactive.stacked_layout`).
_BELOW = {"xaxis": "x2", "yaxis": "y2"}


def _vector(name: str, value: ArrayLike, length: int | None = None) -> np.ndarray:
    """``value`` as a non-empty 1-D real array (dtype kept), of ``length`` entries if given."""
    arr = real_array(name, value)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D array, got shape {arr.shape}")
    if length is not None and len(arr) != length:
        raise ValueError(f"{name} must have {length} entries, got {len(arr)}")
    return arr


def _per_position(name: str, value: Sequence[Any], positions: int) -> list[Any]:
    """``value`` as a list with one entry per slider position."""
    if isinstance(value, str | bytes) or not isinstance(value, Sequence | np.ndarray):
        raise ValueError(f"{name} must be a sequence with one entry per position, got {value!r}")
    if len(value) != positions:
        raise ValueError(
            f"{name} must have one entry per slider position ({positions}), got {len(value)}"
        )
    return list(value)


def _names(name: str, value: Sequence[str]) -> list[str]:
    """``value`` as a non-empty list of names."""
    names = list(value) if not isinstance(value, str) else []
    if not names:
        raise ValueError(f"{name} must be a non-empty sequence of names, got {value!r}")
    return names


def _require_summary(summary: str) -> None:
    """Refuse a ``summary`` (the sentence that ends a figure's description) that is not a
    non-empty string."""
    if not isinstance(summary, str) or not summary.strip():
        raise ValueError(f"summary must be a non-empty string, got {summary!r}")
