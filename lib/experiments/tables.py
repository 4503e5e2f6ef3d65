r"""The rows of the chapters' error and cost tables: each runs one construction of ``lib`` on
a target and summarises its error (Chapters 4, 5 and 6, the atlas and the epilogue).

* :func:`ks_error_row` and :func:`price_row`: K&S Proposition 1's approximator
  (:mod:`lib.approximation`) on an ``m``-grid, its :math:`L_1`, :math:`L_2` and sup errors on
  random sequences and the measure of its bad sets; its weights at the theorem's and a practical
  :math:`\gamma` (Chapter 4, the atlas, the epilogue);
* :func:`lookup_error_row` on the shared sample :func:`rate_points`: LHSL's lookup
  (:mod:`lib.lookup`) on an ``m``-grid, soft against hard, sup and :math:`L_2` (Chapters 5 and 6).

These are experiments, not theorems: what they measure and the sizes they use are the book's
choices, stated in the chapters.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import mpmath
import numpy as np
import torch
from numpy.typing import ArrayLike

from .. import metrics
from .._geometry import chunked, voronoi_scores
from .._validate import (
    as_float_array,
    blame,
    finite_real,
    function,
    positive_int,
    short_repr,
)
from ..approximation import ks_approximator
from ..cross import _grid_beta
from ..lookup import hard_lookup, soft_lookup
from ..maxaffine import grid_centres
from ..quantize import bad_sets, duplicate_cell_measure, ramp_measure

__all__ = [
    "KSErrorRow",
    "ks_error_row",
    "PriceRow",
    "price_row",
    "RATE_POINTS",
    "RATE_SEED",
    "rate_points",
    "LookupErrorRow",
    "lookup_error_row",
    "ks_costs",
]


@dataclass(frozen=True)
class KSErrorRow:
    """One row of Chapter 4's error table (:func:`ks_error_row`).

    Attributes:
        d, m: token dimension and grid size.
        l1, l1_se, l2, l2_se, sup: the :class:`lib.metrics.ErrorSummary` of the sample.
        sup_ramp, sup_duplicate, sup_clean: the largest error on the sampled sequences with a
            coordinate on a ramp, with two tokens in one cell (and none on a ramp), and on the
            others (NaN for an empty set).
        duplicate, ramp: the measures of :func:`lib.quantize.duplicate_cell_measure` and
        :func:`lib.quantize.ramp_measure`.
    """

    d: int
    m: int
    l1: float
    l1_se: float
    l2: float
    l2_se: float
    sup: float
    sup_ramp: float
    sup_duplicate: float
    sup_clean: float
    duplicate: float
    ramp: float


def ks_error_row(
    f: Callable,
    m: int,
    n: int,
    d: int,
    tau: float,
    *,
    gamma: float | None = None,
    n_samples: int = 4000,
    seed: int = 0,
) -> KSErrorRow:
    """The K&S approximator for grid ``m`` against ``f`` on ``n_samples`` uniform sequences.

    The sequences are those :func:`lib.metrics.lp_error` draws with the same ``seed``; the
    approximator is evaluated once.

    Returns:
        A :class:`KSErrorRow`.

    Args:
        f: the target, mapping ``(k, n, d)`` float64 sequences to an array of their shape.
        m, n, d, tau, gamma, seed: as :func:`lib.approximation.ks_approximator`.
        n_samples: sequences drawn, an int ``>= 2``.

    Raises:
        ValueError: as :func:`lib.approximation.ks_approximator` and :func:`lib.metrics.lp_error`.

    Accuracy:
        Deterministic for given arguments (the same seeded samples as
        :func:`lib.metrics.lp_error`); the errors are float64 sample statistics of the
        approximator's float64 outputs, not bounds, and ``duplicate`` and ``ramp`` are as
        accurate as :func:`lib.quantize.duplicate_cell_measure` (correctly rounded) and
        :func:`lib.quantize.ramp_measure` (about :math:`10u`).

    Source: the :math:`L_p` distance of K&S Proposition 1 and the bad sets of the book's
    reconstruction. Chapter 4 (checks C12, B4.2) and the epilogue.
    """
    g = ks_approximator(f, m, n, d, tau, gamma=gamma, seed=seed)
    n_samples = positive_int("n_samples", n_samples, minimum=2)
    X = metrics.uniform_sampler(n, d)(
        np.random.default_rng(seed), n_samples
    )  # lp_error's samples for this seed
    errors = np.abs(metrics.outputs(f, X) - metrics.outputs(g, X, "g"))  # g evaluated once
    summary = metrics.error_summary(errors)
    worst = errors.reshape(n_samples, -1).max(axis=1)
    ramp, dup = bad_sets(X, m, tau)

    def top(mask: np.ndarray) -> float:
        return float(worst[mask].max()) if mask.any() else float("nan")

    return KSErrorRow(
        d,
        m,
        summary.l1,
        summary.l1_se,
        summary.l2,
        summary.l2_se,
        summary.sup,
        top(ramp),
        top(dup & ~ramp),
        top(~ramp & ~dup),
        duplicate_cell_measure(m, n, d),
        ramp_measure(m, n, d, tau),
    )


@dataclass(frozen=True)
class PriceRow:
    """One row of Chapter 4's cost table (:func:`price_row`).

    Attributes:
        m: grid size; entries: table size; parameters: the approximator's parameter count.
        digits_theorem: the working precision the theorem's ids need (15: float64 sufficed).
        weight_theorem: the largest weight at the theorem's gamma, as text
            (:func:`lib.book.prose.fmt` of an mpmath number, which may lie beyond float64's
            range); log10_weight_theorem: its base-10 logarithm.
        gamma, weight_gamma: the practical inverse temperature and the largest weight there.
        distinct64_theorem: the distinct float64 ids at the theorem's gamma.
        conflicts64_theorem: pairs of entries whose float64 ids are equal and whose values differ.
    """

    m: int
    entries: int
    parameters: int
    digits_theorem: int
    weight_theorem: str
    log10_weight_theorem: float
    gamma: float
    weight_gamma: float
    distinct64_theorem: int
    conflicts64_theorem: int


def price_row(f: Callable, m: int, n: int, d: int, tau: float, *, gamma: float = 1.0) -> PriceRow:
    """One row of Chapter 4's cost table: the approximator at the theorem's gamma and at ``gamma``.

    Returns:
        A :class:`PriceRow`.

    Args:
        f, m, n, d, tau: as :func:`lib.approximation.ks_approximator`.
        gamma: the practical inverse temperature, a finite real ``> 0``.

    Raises:
        ValueError: as :func:`lib.approximation.ks_approximator`, or for a bad ``gamma``.

    Accuracy:
        Deterministic; the counts are exact integers, ``log10_weight_theorem`` is the base-10
        logarithm evaluated at 30 digits and rounded once to float64, ``weight_theorem`` the text
        of :func:`lib.book.prose.fmt`, and ``weight_gamma`` the float64 largest weight.

    Source: the construction of K&S Proposition 1 as the book reconstructs it. Chapter 4.
    """
    from ..book.prose import fmt

    gamma = finite_real("gamma", gamma, minimum=0.0, strict=True)  # no default of its own here
    exact = ks_approximator(f, m, n, d, tau)
    practical = ks_approximator(f, m, n, d, tau, gamma=gamma)
    weight = mpmath.mpf(exact.max_weight)
    with mpmath.workdps(30):
        text, log10 = fmt(weight), float(mpmath.log10(weight))
    return PriceRow(
        m,
        len(practical.knots),
        practical.parameters,
        exact.dps if exact.exact else 15,
        text,
        log10,
        float(gamma),
        practical.max_weight,
        exact.distinct64,
        exact.conflicts64,
    )


#: Test points of Chapter 5's uniform-error table (C15) and Chapter 6's cross-attention table
#: (C18), per book mode; drawn by :func:`rate_points`.
RATE_POINTS = {"fast": 10_000, "full": 20_000}


#: Seed of :func:`rate_points`' generator.
RATE_SEED = 15


def rate_points(mode: str | None = None) -> np.ndarray:
    """The random test points shared by Chapter 5's check C15 and Chapter 6's check C18.

    Both chapters evaluate the lookup of the same target on these points, so their error tables
    agree entry by entry.

    Args:
        mode: ``"fast"`` or ``"full"``; default :data:`lib.runtime.MODE`.

    Returns:
        float64 ``(RATE_POINTS[mode], 2)``, uniform on :math:`[0,1]^2`, drawn from
        ``numpy.random.default_rng(RATE_SEED)``: the same points on every call.

    Raises:
        ValueError: for an unknown ``mode``.

    Accuracy:
        Exact and deterministic: bitwise the same array on every call for a given numpy version
        (the stream of ``default_rng`` is numpy's to keep stable).

    Source: the book's checks C15 (Chapter 5) and C18 (Chapter 6).
    """
    from .. import runtime

    mode = runtime.MODE if mode is None else mode
    if mode not in RATE_POINTS:
        raise ValueError(f"mode must be one of {tuple(RATE_POINTS)}, got {short_repr(mode)}")
    return np.random.default_rng(RATE_SEED).uniform(size=(RATE_POINTS[mode], 2))


@dataclass(frozen=True)
class LookupErrorRow:
    """One row of Chapter 5's error tables (:func:`lookup_error_row`).

    Attributes:
        m: cells per axis; kappa: ``beta / m**2`` (NaN for the hard partition); beta (NaN when
            hard).
        sup, l2: the soft layer's largest and root-mean-square error over the points (the hard
            partition's when ``kappa`` is None).
        sup_hard, l2_hard: the hard partition's.
        indicator_error: mean :func:`lib.maxaffine.indicator_error` (NaN when hard).
    """

    m: int
    kappa: float
    beta: float
    sup: float
    l2: float
    sup_hard: float
    l2_hard: float
    indicator_error: float


def lookup_error_row(
    f: Callable,
    m: int,
    kappa: float | None,
    points: ArrayLike,
    *,
    low: float = 0.0,
    high: float = 1.0,
) -> LookupErrorRow:
    r"""The lookup on the ``m``-grid against ``f`` on ``points`` (one row of Chapter 5's error
    tables).

    Args:
        f: maps points ``(P, D)`` to ``(P,)`` or ``(P, k)``.
        m: cells per axis (``N = m^D``); kappa: :math:`\beta = \kappa m^2`, or ``None`` for
            the hard partition only.
        points: test points ``(P, D)`` in the domain.

    Returns:
        A :class:`LookupErrorRow`; its errors are :func:`lib.metrics.error_summary`'s sup and
        :math:`L_2` of the soft layer's closed form (:func:`lib.lookup.soft_lookup`) and of the hard
        partition (:func:`lib.lookup.hard_lookup`).

    Raises:
        ValueError: as :func:`lib.maxaffine.grid_centres` and the lookup's
            :func:`lib.lookup.attention_approximator`.

    Accuracy:
        Deterministic for given arguments; the entries are float64 statistics of the lookups'
        float64 outputs as :func:`lib.lookup.soft_lookup` and :func:`lib.lookup.hard_lookup`
        compute them (their own accuracy), and ``beta`` is ``kappa m^2`` rounded in float64.

    Source: the book's checks C15 and C16 of LHSL's self-attention theorem. Chapters 5 and 6.
    """
    x = as_float_array("points", points, min_ndim=2)
    if x.ndim != 2:
        raise ValueError(f"points must have shape (P, D), got {x.shape}")
    c = grid_centres(m, x.shape[1], low, high)
    function("f", f)
    target = as_float_array("f(points)", f(x)).reshape(len(x), -1)
    values = as_float_array("f(centres)", f(c)).reshape(len(c), -1)
    with blame("points"):
        hard = metrics.error_summary(hard_lookup(x, c, values) - target)
    if kappa is None:
        return LookupErrorRow(m, math.nan, math.nan, hard.sup, hard.l2, hard.sup, hard.l2, math.nan)
    beta = _grid_beta(kappa, m)
    with blame("points"):
        soft = metrics.error_summary(soft_lookup(x, c, values, beta) - target)
        indicator = float(_voronoi_indicator_error(x, c, beta).mean())
    return LookupErrorRow(
        m,
        float(kappa),
        beta,
        soft.sup,
        soft.l2,
        hard.sup,
        hard.l2,
        indicator,
    )


def _voronoi_indicator_error(x: np.ndarray, c: np.ndarray, beta: float) -> np.ndarray:
    """:func:`lib.maxaffine.indicator_error` of the Voronoi pieces of ``c``, from
    ``lib._geometry.voronoi_scores``: no cancellation, underflow or overflow wherever points
    and centres lie."""

    def err(p: np.ndarray) -> np.ndarray:
        rel = -voronoi_scores(p, c, beta)
        top = rel.argmax(dim=1, keepdim=True)  # the nearest centre, 0 exactly
        rel.scatter_(1, top, -math.inf)
        return (2 * torch.sigmoid(torch.logsumexp(rel, dim=1))).numpy()

    return chunked(x, err, c.shape[0])


def ks_costs(
    f: Callable,
    m: int,
    n: int,
    d: int,
    tau: float,
    *,
    gamma: float | None = None,
    n_samples: int = 4000,
    seed: int = 0,
) -> dict[str, float]:
    r"""Size and errors of K&S's approximator (:func:`lib.approximation.ks_approximator`) for one
    grid: its parameters, its largest weight, and its :math:`L_1` and sup errors on samples.

    Args:
        f, m, n, d, tau, gamma, n_samples, seed: as
            :func:`ks_error_row` (the target mapping ``(k, n, d)``
            sequences to their shape, the grid, the ramps, the inverse temperature, the number
            of uniform sample sequences and their seed; the approximator is built with ``seed``
            too).

    Returns:
        A dict with the keys ``params`` (``KSApproximator.parameters``), ``max |w|`` (its largest
        output weight as a float), ``L1`` and ``sup`` (the sample errors of
        :func:`ks_error_row`).

    Raises:
        ValueError: as :func:`ks_error_row`, and naming ``gamma`` when
            the largest weight exceeds float64's range.

    Accuracy:
        The counts are exact; ``max |w|`` is the approximator's largest weight rounded once to
        float64; ``L1`` and ``sup`` as :func:`ks_error_row` (float64
        sample statistics, not bounds).

    Source: K&S Proposition 1 as the book reconstructs it; the epilogue's comparison of the
    two routes on one target.
    """
    from ..approximation import ks_approximator

    row = ks_error_row(f, m, n, d, tau, gamma=gamma, n_samples=n_samples, seed=seed)
    g = ks_approximator(f, m, n, d, tau, gamma=gamma, seed=seed)
    weight = float(g.max_weight)
    if not math.isfinite(weight):
        raise ValueError(f"the largest weight at gamma={gamma!r} exceeds float64's range")
    return {"params": g.parameters, "max |w|": weight, "L1": row.l1, "sup": row.sup}
