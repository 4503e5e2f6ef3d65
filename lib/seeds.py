"""What several seeds of one trained configuration say, and what they cannot (Chapters 3 and 5).

The book states an order or a trend of trained models ("deeper reaches 0.9872 sooner", "full
rank ends higher") only when it comes from several seeds and their ranges do not overlap:

* :func:`band` summarises one configuration's seeds as the median and the min-max range;
* :func:`separated` compares two configurations' ranges: an order only where they do not overlap,
  and only from :data:`MIN_SEEDS` seeds on each side;
* :func:`order_p_value` is that rule's one-sided p-value: the chance that every seed of one
  configuration lands above every seed of the other when the seeds cannot tell them apart;
* :func:`band_text` writes a band for the prose ("0.9959 (0.9951-0.9962, 3 seeds)"), and
  :func:`reached_band_text` one of the first epochs at a level ("412 (388-never, 3 seeds)").

A run that never reached a level (``None``) counts as later than every run that did.
"""

from __future__ import annotations

import decimal
import math
import numbers
from collections.abc import Callable, Iterable

import numpy as np
import torch

from ._validate import flag, positive_int, short_repr

__all__ = ["MIN_SEEDS", "band", "separated", "order_p_value", "band_text", "reached_band_text"]

#: The fewest seeds on each side from which the book states an order between two configurations:
#: with five against five, ranges that do not overlap have a one-sided p-value of 1/252
#: (:func:`order_p_value`); with three against three it would be 1/20.
MIN_SEEDS = 5


def _values(name: str, values: Iterable[float | None], allow_none: bool) -> list:
    try:
        values = list(values)
    except TypeError:
        raise ValueError(
            f"{name} must be a sequence of numbers, got {short_repr(values)}"
        ) from None
    if not values:
        raise ValueError(f"{name} must hold at least one value, got none")
    out = []
    for v in values:
        if v is None and allow_none:
            out.append(math.inf)
            continue
        if isinstance(v, torch.Tensor | np.ndarray) and v.ndim == 0:
            v = v.item()  # the entries of a 1-d tensor or array iterate as 0-d ones
        if isinstance(v, np.generic):
            v = v.item()
        if isinstance(v, bool) or not isinstance(v, numbers.Real | decimal.Decimal):
            raise ValueError(f"{name} must hold real numbers, got {short_repr(v)}")
        if math.isnan(float(v)):
            raise ValueError(f"{name} holds NaN")
        out.append(float(v))
    return out


def band(values: Iterable[float | None], *, allow_none: bool = False) -> tuple[float, float, float]:
    """``(median, min, max)`` of one configuration's per-seed values.

    Args:
        values: one number per seed; with ``allow_none``, ``None`` stands for a level never
            reached and counts as ``inf``.

    Returns:
        Python floats, the median exact to one rounding (the midpoint of the two middle values
        for an even count, never overflowing).

    Raises:
        ValueError: for an empty sequence, NaN, a value that is not a real number, or an even
            count whose two middle values are ``-inf`` and ``inf``.

    Accuracy:
        ``min`` and ``max`` are exact; the median is exact for an odd count and correctly
        rounded for an even one (the midpoint of the two middle values, one rounding; from
        halves where their sum overflows, still within one rounding). Deterministic.
    """
    return _band_of(_values("values", values, flag("allow_none", allow_none)))


def _band_of(values: list) -> tuple[float, float, float]:
    """``(median, min, max)``; the median of an even count is the midpoint of the two middle
    values, formed from halves where their sum overflows."""
    s = sorted(values)
    k = len(s)
    if k % 2:
        return s[k // 2], s[0], s[-1]
    lo, hi = s[k // 2 - 1], s[k // 2]
    if lo == hi:
        return lo, s[0], s[-1]
    if math.isinf(lo) and math.isinf(hi):
        raise ValueError(
            "the median is undefined: the two middle values are -inf and inf; pass finite values"
        )
    mid = lo + hi
    mid = mid / 2 if math.isfinite(mid) else lo / 2 + hi / 2
    return mid, s[0], s[-1]


def separated(
    a: Iterable[float | None],
    b: Iterable[float | None],
    *,
    allow_none: bool = False,
    min_seeds: int = MIN_SEEDS,
) -> int:
    """``1`` if every seed of ``a`` is above every seed of ``b``, ``-1`` if every one is below,
    ``0`` if the two ranges overlap (or touch): then these seeds cannot tell them apart.

    Args:
        a, b: per-seed values of two configurations (``None`` as in :func:`band`).
        allow_none: as :func:`band`.
        min_seeds: the fewest seeds each side needs (default :data:`MIN_SEEDS`).

    Returns:
        ``1``, ``-1`` or ``0`` as a Python int.

    Raises:
        ValueError: as :func:`band`; for a ``min_seeds`` that is not an integer >= 1 (bools
            refused); or for fewer than ``min_seeds`` values on a side.

    Accuracy:
        Exact: comparisons of the values as float64 (integers beyond ``2**53`` are rounded by
        that conversion), no arithmetic.
    """
    allow_none = flag("allow_none", allow_none)
    min_seeds = positive_int("min_seeds", min_seeds)
    va, vb = _values("a", a, allow_none), _values("b", b, allow_none)
    for name, v in (("a", va), ("b", vb)):
        if len(v) < min_seeds:
            raise ValueError(
                f"{name} must hold at least {min_seeds} seeds to order two configurations, "
                f"got {len(v)}"
            )
    if min(va) > max(vb):
        return 1
    if max(va) < min(vb):
        return -1
    return 0


def order_p_value(n_a: int, n_b: int) -> float:
    """One-sided p-value of :func:`separated`'s rule: the probability that all ``n_a`` seeds of
    one configuration land above all ``n_b`` seeds of the other when the two cannot be told apart
    (the ``n_a + n_b`` values exchangeable, ties of probability 0), ``1 / C(n_a + n_b, n_a)``.

    Two-sided (either order) it is twice that. With several comparisons on one page, the chance
    that at least one shows an order by luck is at most their number times this (the union
    bound); the chapters state both.

    Args:
        n_a, n_b: the seeds of the two configurations, integers in ``[1, 10**6]``.

    Returns:
        The p-value as a Python float in ``(0, 1]``; ``order_p_value(5, 5) == 1 / 252`` and
        ``order_p_value(3, 3) == 1 / 20``.

    Raises:
        ValueError: for counts that are not integers in ``[1, 10**6]`` (bools refused).

    Accuracy:
        One correctly rounded division of 1 by the exact integer ``math.comb(n_a + n_b, n_a)``
        (Python's true division rounds once); below the smallest float64 the result is 0.0.

    Source: the book's rule for stating an order of trained models (Chapter 3), a permutation
    (Mann-Whitney) count.
    """
    n_a = positive_int("n_a", n_a, maximum=10**6)
    n_b = positive_int("n_b", n_b, maximum=10**6)
    return 1 / math.comb(n_a + n_b, n_a)


def band_text(
    values: Iterable[float | None],
    spec: str = ".4f",
    *,
    allow_none: bool = False,
    never: str = "never",
) -> str:
    """One band for the prose: ``"median (min–max, k seeds)"``, each number formatted with
    ``spec``; ``never`` in place of a level not reached; ``"x (1 seed)"`` for a single seed and
    ``"x (all k seeds)"`` when the seeds agree.

    Args:
        values: one number per seed, as :func:`band`.
        spec: a format specification for floats (``format(x, spec)``), e.g. ``".4f"``.
        allow_none: as :func:`band`.
        never: the text written for a level never reached (``inf`` when ``allow_none``).

    Returns:
        The text, a Python ``str``.

    Raises:
        ValueError: as :func:`band`, or for a ``spec`` that is not a float format specification,
            or a ``never`` that is not a string.

    Accuracy:
        Deterministic: the numbers of :func:`band`, each formatted by Python's ``format``
        (correctly rounded to the digits ``spec`` asks for).
    """
    allow_none = flag("allow_none", allow_none)
    if not isinstance(spec, str):
        raise ValueError(f"spec must be a format specification string, got {short_repr(spec)}")
    try:
        format(0.0, spec)
    except (ValueError, TypeError):
        raise ValueError(f"spec must be a float format specification, got {spec!r}") from None
    if not isinstance(never, str):
        raise ValueError(f"never must be a string, got {short_repr(never)}")
    v = _values("values", values, allow_none)  # a list: a generator is read once

    def f(x: float) -> str:
        return never if math.isinf(x) and allow_none else format(x, spec)

    return _text(v, f)


def _text(v: list, f: Callable[[float], str]) -> str:
    """The band of the checked values ``v``, each number written by ``f``."""
    med, lo, hi = _band_of(v)
    k = len(v)
    if k == 1:
        return f"{f(med)} (1 seed)"
    if lo == hi:
        return f"{f(med)} (all {k} seeds)"
    return f"{f(med)} ({f(lo)}–{f(hi)}, {k} seeds)"


def reached_band_text(epochs: Iterable[int | None]) -> str:
    """The first epochs at which each seed reached a level, as one band for the prose:
    :func:`band_text` with whole epochs (``".0f"``) and ``"never"`` for a seed that did not
    reach it within its run (``None``), e.g. ``"412 (388–never, 3 seeds)"``.

    Args:
        epochs: one epoch number per seed, or ``None`` for a level not reached (Chapter 3's
            first epochs at the reported accuracy, from
            :func:`lib.experiments.conll_summaries.first_epochs`).

    Returns:
        The text, a Python ``str``.

    Raises:
        ValueError: for an empty sequence, NaN, or an entry that is neither a real number nor
            ``None`` (bools refused), naming ``epochs``.

    Accuracy:
        Deterministic: the median, minimum and maximum of :func:`band` (``None`` counting as
        later than every epoch), each rounded to a whole number by Python's ``format``
        (correctly rounded; the median of an even count may end in ``.5`` and round to even).
    """
    v = _values("epochs", epochs, True)
    return _text(v, lambda x: "never" if math.isinf(x) else format(x, ".0f"))
