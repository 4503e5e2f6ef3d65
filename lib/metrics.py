r"""Error estimates shared by both papers' approximators (Chapters 4, 5, 6 and the epilogue).

* :func:`uniform_sampler` draws i.i.d. uniform sequences;
* :func:`lp_error` is the Monte Carlo estimate of the :math:`L_p` distance
  :math:`d_p(f, g) = (\mathbb E \|f(X) - g(X)\|_p^p)^{1/p}` with its standard error, and
  :func:`lp_from_errors` the same from errors already computed;
* :func:`sup_error` is the largest sampled error, a lower bound on the :math:`L_\infty` distance;
* :func:`error_summary` gives all of them at once for one array of errors.

K&S state their approximation in :math:`L_p` (Proposition 1), LHSL theirs in :math:`L_\infty` and
:math:`L_p`; the book estimates both distances for both constructions with these functions.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ._validate import as_float_array, finite_real, function, positive_int, require_size

__all__ = [
    "MAX_SAMPLE_ENTRIES",
    "uniform_sampler",
    "outputs",
    "lp_error",
    "lp_from_errors",
    "sup_error",
    "ErrorSummary",
    "error_summary",
]


#: Largest number of float64 entries ``k n d`` a sampler of :func:`uniform_sampler` draws at once.
MAX_SAMPLE_ENTRIES = 2**26


def uniform_sampler(n: int, d: int, low: float = 0.0, high: float = 1.0) -> Callable:
    """``sampler(rng, k) -> (k, n, d)`` float64 sequences of i.i.d. uniform tokens in
    ``[low, high]^d``.

    Any finite bounds with ``low < high`` are accepted, ``[-1.7e308, 1.7e308]`` included (the
    sampler then draws in the halves of the interval and doubles them, exactly).

    Args:
        n: tokens per sequence, a positive integer.
        d: token dimension, a positive integer.
        low, high: finite real bounds with ``low < high``.

    Returns:
        A function ``sampler(rng, k)``, ``rng`` a ``numpy.random.Generator`` and ``k`` a positive
        integer, that returns a float64 array of shape ``(k, n, d)``.

    Raises:
        ValueError: for non-positive sizes or bad bounds; the sampler for a non-positive ``k``
            or more than :data:`MAX_SAMPLE_ENTRIES` entries ``k n d`` (checked before drawing).

    Accuracy:
        Deterministic for a given state of ``rng``: the draws are numpy's
        ``Generator.uniform``, each ``low + (high - low) U`` rounded once (the wide case
        ``2 * uniform(low / 2, high / 2)``, whose doubling is exact).
    """
    n, d = positive_int("n", n), positive_int("d", d)
    low, high = finite_real("low", low), finite_real("high", high)
    if not high > low:
        raise ValueError(f"high must exceed low, got low={low}, high={high}")
    wide = not math.isfinite(high - low)

    def sample(rng: np.random.Generator, k: int) -> np.ndarray:
        k = positive_int("k", k)
        require_size(
            f"a sample of k={k:,} sequences of n={n} tokens in dimension d={d} (the sampler's k "
            "is lp_error's and sup_error's n_samples): the number of entries",
            k * n * d,
            MAX_SAMPLE_ENTRIES,
            "lib.metrics.MAX_SAMPLE_ENTRIES",
        )
        if wide:  # high - low overflows float64: draw the halves, then double (exactly)
            return 2.0 * rng.uniform(low / 2, high / 2, size=(k, n, d))
        return rng.uniform(low, high, size=(k, n, d))

    return sample


def _first_bad(out: np.ndarray) -> int:
    """The first row of ``out`` ``(batch, ...)`` holding NaN or infinity."""
    return int(np.nonzero(~np.isfinite(out.reshape(len(out), -1)).all(axis=1))[0][0])


def outputs(f: Callable, X: np.ndarray, name: str = "f") -> np.ndarray:
    """``f(X)`` checked: a finite real ``(batch, n, d_out)`` array for sequences ``X``
    ``(batch, n, d)``.

    Args:
        f: a callable mapping ``(batch, n, d)`` float64 sequences to ``(batch, n, d_out)``.
        X: real array of shape ``(batch, n, d)``, finite.
        name: the name of ``f`` in error messages.

    Returns:
        ``f(X)`` as a finite float64 array ``(batch, n, d_out)``.

    Raises:
        ValueError: naming ``name`` for a non-callable ``f``, or an output of the wrong shape or
            kind or not finite; naming ``X`` for sequences that are not a 3-D real array.

    Accuracy:
        Exact for float outputs: a check and a conversion to float64, no arithmetic (integers
        beyond ``2**53`` are rounded by the conversion).
    """
    if not isinstance(name, str):
        raise ValueError(f"name must be a string, got {type(name).__name__}")
    function(name, f)
    X = as_float_array("X", X, min_ndim=3)
    if X.ndim != 3:
        raise ValueError(f"X must be sequences (batch, n, d), got shape {X.shape}")
    out = as_float_array(f"{name}(X)", f(X), min_ndim=0, finite=False)
    if out.ndim != 3 or out.shape[:2] != X.shape[:2]:
        raise ValueError(
            f"{name} must map (batch, n, d) to (batch, n, d_out), got {X.shape} -> {out.shape}"
        )
    if not np.isfinite(out).all():
        raise ValueError(f"{name} returned NaN or inf on X (at row {_first_bad(out)} of X)")
    return out


def _errors(f: Callable, g: Callable, sampler: Callable, n_samples: int, seed: int) -> np.ndarray:
    function("f", f), function("g", g), function("sampler", sampler)
    rng = np.random.default_rng(positive_int("seed", seed, minimum=0))
    X = sampler(rng, positive_int("n_samples", n_samples))
    X = as_float_array("sampler output", X, min_ndim=3)
    return np.abs(outputs(f, X, "f") - outputs(g, X, "g"))


def lp_error(
    f: Callable, g: Callable, p: float, sampler: Callable, n_samples: int, seed: int = 0
) -> tuple[float, float]:
    r"""Monte Carlo estimate of :math:`d_p(f, g) = (\mathbb E \|f(X) - g(X)\|_p^p)^{1/p}` and its
    standard error.

    :math:`\|\cdot\|_p` is the entrywise :math:`p`-norm of the ``(n, d_out)`` output; ``X`` is
    drawn by ``sampler(rng, n_samples)`` with ``rng = default_rng(seed)``, so every model
    compared with the same seed sees the same samples. The standard error is the delta-method
    one, :math:`\mathrm{se}(\bar e)/(p\, \bar e^{1 - 1/p})` with :math:`\bar e` the mean of
    :math:`\|f - g\|_p^p` (0 when the estimate is 0).

    Args:
        f, g: callables mapping ``(batch, n, d)`` float64 sequences to ``(batch, n, d_out)``
            (see :func:`outputs`).
        p: the exponent, finite and ``>= 1``.
        sampler: ``sampler(rng, k)`` returning ``(k, n, d)`` sequences, e.g.
            :func:`uniform_sampler`.
        n_samples: number of sampled sequences, ``>= 2``.
        seed: seed of ``numpy.random.default_rng``, an integer ``>= 0``.

    Returns:
        ``(estimate, standard_error)`` as Python floats.

    Raises:
        ValueError: for ``p < 1`` or non-finite, ``n_samples < 2``, outputs of the wrong shape or
            with NaN, infinity, complex or bool values, or a sample of more than
            :data:`MAX_SAMPLE_ENTRIES` entries (from :func:`uniform_sampler`).

    Accuracy:
        Deterministic for a given seed (numpy's ``default_rng``). Given the sampled errors, as
        :func:`lp_from_errors`; the errors ``|f(X) - g(X)|`` are each one float64 subtraction
        of the outputs. The sampling error is what the standard error estimates.

    Source: the :math:`L_p` distance of K&S Proposition 1. Chapter 4.
    """
    n_samples = positive_int("n_samples", n_samples, minimum=2)
    return lp_from_errors(_errors(f, g, sampler, n_samples, seed), p)


def lp_from_errors(errors: ArrayLike, p: float) -> tuple[float, float]:
    """:func:`lp_error`'s estimate and its standard error from errors ``(samples, ...)`` (their
    absolute values are used: signed differences give the same result).

    The errors are divided by their largest entry before the power and the estimate multiplied
    back: no power underflows or overflows on the way. The estimate lies between the mean and
    the largest error.

    Args:
        errors: finite real array of shape ``(samples, ...)``, ``samples >= 2``.
        p: the exponent, finite and ``>= 1``.

    Returns:
        ``(estimate, standard_error)`` as Python floats; ``(0.0, 0.0)`` for all-zero errors.

    Raises:
        ValueError: for ``p < 1`` or non-finite, or errors that are not a real array of at least
            two samples (NaN or infinity refused).

    Accuracy:
        The estimate is within a few ulp per term of the exact :math:`L_p` mean of the given
        errors (at most ``3 u``, ``u = 2**-53``, against mpmath) for errors from 1e-300 to 1e300
        and any ``p >= 1`` (``p = 1e6`` included); the standard error is within a few u times
        the estimate.
    """
    err: np.ndarray = np.abs(as_float_array("errors", errors))
    if len(err) < 2:
        raise ValueError(f"errors must hold at least two samples, got {len(err)}")
    p = finite_real("p", p, minimum=1.0)
    top = float(err.max())
    if top == 0:
        return 0.0, 0.0
    scale = top  # errors / scale in [0, 1], the largest exactly 1: the mean is >= 1 / samples
    e = ((err / scale) ** p).reshape(len(err), -1).sum(axis=1)
    mean = e.mean()
    se_mean = e.std(ddof=1) / math.sqrt(len(e))
    # the delta method in the scaled units, times the scale
    return (
        float(scale * mean ** (1 / p)),
        float(scale * (se_mean / (p * mean ** (1 - 1 / p)))),
    )


def sup_error(
    f: Callable, g: Callable, sampler: Callable, n_samples: int, seed: int = 0
) -> tuple[float, int]:
    """The largest entrywise ``|f(X) - g(X)|`` over ``n_samples`` sampled sequences, and its sample
    index.

    A lower bound on the :math:`L_\\infty` distance (same samples as :func:`lp_error` with the
    same seed).

    Args:
        f, g, sampler, n_samples, seed: as :func:`lp_error`.

    Returns:
        The pair ``(largest_error, sample_index)``, a Python float and int (the first sample
        attaining it).

    Raises:
        ValueError: as :func:`lp_error`.

    Accuracy:
        Deterministic for a given seed; the largest of the errors ``|f(X) - g(X)|``, each one
        correctly rounded float64 subtraction of the outputs (the maximum itself is exact).
    """
    errs = (
        _errors(f, g, sampler, n_samples, seed)
        .reshape(positive_int("n_samples", n_samples), -1)
        .max(axis=1)
    )
    return float(errs.max()), int(errs.argmax())


@dataclass(frozen=True)
class ErrorSummary:
    r"""The error of an approximation over a sample: sup, and the :math:`L_1`, :math:`L_2`
    estimates.

    Attributes:
        sup: the largest entrywise error (a lower bound on the :math:`L_\infty` distance).
        l1, l1_se, l2, l2_se: :func:`lp_from_errors` for ``p = 1`` and ``p = 2``.
    """

    sup: float
    l1: float
    l1_se: float
    l2: float
    l2_se: float


def error_summary(errors: ArrayLike) -> ErrorSummary:
    r"""Sup, :math:`L_1` and :math:`L_2` of absolute errors ``(samples, ...)`` (one row per sample).

    Args:
        errors: finite real array ``(samples, ...)``, ``samples >= 2`` (absolute values used).

    Returns:
        An :class:`ErrorSummary`.

    Raises:
        ValueError: as :func:`lp_from_errors`.

    Accuracy:
        ``sup`` is exact (the largest absolute error); the others as :func:`lp_from_errors`.

    Used by :func:`lib.experiments.tables.ks_error_row` (Chapter 4, the epilogue) and
    :func:`lib.experiments.tables.lookup_error_row` (Chapters 5 and 6).
    """
    errors = np.abs(as_float_array("errors", errors))
    (l1, se1), (l2, se2) = (lp_from_errors(errors, p) for p in (1, 2))
    # errors is an array (np.abs of one, typed Any by numpy's stub: mypy falls back to ArrayLike)
    return ErrorSummary(float(errors.max()), l1, se1, l2, se2)  # type: ignore[union-attr]
