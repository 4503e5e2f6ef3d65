r"""Precision and size bookkeeping for the scaling atlas (the page "A scaling atlas").

The atlas compares both constructions in bits: how many decimal digits a set of context ids needs
(:func:`digits_needed`), what a computation at fewer digits does to them (:func:`round_to_digits`),
how many bits one stored number needs (:func:`bits_per_number`), and two lower bounds the book
derives by counting (:func:`lipschitz_packing_bits`, :func:`memorization_bits`). The quantities
themselves (separations, context ids, weights, grid sizes) come from :mod:`lib.contextual`,
:mod:`lib.context_ids`, :mod:`lib.approximation`, :mod:`lib.lookup` and :mod:`lib.cross`; this
module converts them and reads them off the built constructions:

* K&S: :func:`random_vocabulary` draws the vocabularies of the sweeps, :func:`ks_separations`
  compares the theorem's separation, the construction's and the measured gap for one of them,
  :func:`ks_bits` counts the bits of a built approximator (its size and errors on samples are
  :func:`lib.experiments.tables.ks_costs`);
* LHSL: :func:`lookup_layer_costs` reads the norms and stored numbers of a built
  cross-attention lookup, :func:`lhsl_bits` extends them to grids too large to build, and
  :func:`lhsl_costs` measures the errors and bits of a lookup with one layer per output
  position.

Every function validates its input and raises ``ValueError`` naming the argument.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import mpmath
import numpy as np
import pandas as pd
import torch
from numpy.typing import ArrayLike

from ._geometry import MAX_MATRIX_ENTRIES
from ._validate import (
    as_float_array,
    blame,
    finite_real,
    flag,
    positive_int,
    require_size,
    short_repr,
)
from .exact import to_mpf

__all__ = [
    "digits_needed",
    "round_to_digits",
    "bits_per_number",
    "lipschitz_packing_bits",
    "memorization_bits",
    "random_vocabulary",
    "ks_separations",
    "ks_bits",
    "lookup_layer_costs",
    "lhsl_bits",
    "lhsl_costs",
    "MAX_DIGITS",
]

#: Largest number of digits :func:`round_to_digits` emulates (float64 holds about 16).
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
        A Python int (0 when :math:`L \le 2\epsilon`, as one constant function serves).

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


# --- the constructions' sizes, read off what they build ---------------------------------------


def random_vocabulary(size: int, dim: int, seed: int) -> np.ndarray:
    r"""``size`` random tokens in :math:`\mathbb{R}^{\text{dim}}` with norms between 0.5 and 1.5:
    the atlas's vocabularies.

    Directions are normalised Gaussian draws (uniform on the sphere), then norms uniform in
    :math:`[0.5, 1.5]` are drawn for them, from ``numpy.random.default_rng(seed)``: all
    ``size * dim`` Gaussian numbers first, then the ``size`` norms. So the first ``k`` tokens of
    a draw of ``size`` tokens are not those of a draw of ``k`` (the norms come later in the
    stream); to let a larger vocabulary extend a smaller one, slice one large draw, as the
    atlas does.

    Args:
        size: number of tokens :math:`|\mathcal V| \ge 1`; dim: token dimension ``>= 1``
            (``size * dim`` at most ``lib.maxaffine.MAX_MATRIX_ENTRIES``).
        seed: non-negative integer seed.

    Returns:
        float64 ``(size, dim)``; pairwise distinct with probability 1.

    Raises:
        ValueError: naming ``size`` or ``dim`` (not a positive integer, or too many entries)
            or ``seed`` (not a non-negative integer).

    Accuracy:
        Deterministic for the arguments (numpy's PCG64 stream). Each token's norm is its
        drawn norm within :math:`(d + 3)u`, :math:`u = 2^{-53}` (a norm, a quotient and a
        product, each rounded), so every norm lies in :math:`[0.5, 1.5]` up to that.

    Source: the book's choice of vocabularies for the scaling atlas (K&S Theorem 2's
    separation against :math:`|\mathcal V|`, :math:`d` and :math:`n`).
    """
    K, d = positive_int("size", size), positive_int("dim", dim)
    require_size(
        f"random_vocabulary: size * dim = {K} * {d} entries",
        K * d,
        MAX_MATRIX_ENTRIES,
        "lib.maxaffine.MAX_MATRIX_ENTRIES",
    )
    g = np.random.default_rng(positive_int("seed", seed, minimum=0))
    u = g.normal(size=(K, d))
    return u / np.linalg.norm(u, axis=1, keepdims=True) * g.uniform(0.5, 1.5, size=(K, 1))


def ks_separations(vocab: ArrayLike, n: int, seed: int, measure: bool = True) -> dict[str, Any]:
    r"""K&S's three separations for one vocabulary, as base-10 logarithms: the theorem's
    :math:`\delta`, the construction's :math:`\delta_w` and the measured gap.

    The strict constants of the vocabulary (:func:`lib.separation.strict_constants`) and the
    best of 64 random directions (:func:`lib.separation.best_direction` with ``seed``) give the
    theorem's :math:`\delta` (worst-case projection constant) and the construction's
    :math:`\delta_w` (the direction's :math:`c_w`) by :func:`lib.contextual.theorem2_delta`;
    with ``measure``, the layer's context ids on all ``n``-subsets are evaluated exactly
    (:func:`lib.context_ids.context_ids`) for their smallest gap and the digits it needs over the
    range :math:`2\max\lVert\text{id}\rVert` (:func:`digits_needed`).

    Args:
        vocab: tokens ``(K, d)``, pairwise distinct, none at the origin (as
            :func:`lib.separation.strict_constants`).
        n: sequence length ``>= 2``.
        seed: non-negative integer seed of the random directions.
        measure: whether to evaluate the context ids (exactly, in mpmath: the cost grows with
            :math:`\binom{K}{n}` and with the digits the separation needs).

    Returns:
        A dict with the keys ``|V|``, ``d``, ``n``, ``c_w`` (the direction's projection constant),
        ``theorem`` and ``construction`` (:math:`\log_{10}\delta` and
        :math:`\log_{10}\delta_w`), and with ``measure`` also ``measured`` (:math:`\log_{10}`
        of the smallest gap) and ``digits`` (the digits it needs).

    Raises:
        ValueError: naming ``vocab`` (as :func:`lib.separation.strict_constants` and
            :func:`lib.separation.best_direction`, or ids that collide), ``n`` (not an integer
            ``>= 2``, or too many subsets or digits for :func:`lib.context_ids.context_ids`),
            ``seed`` or ``measure``.

    Accuracy:
        ``c_w`` as :func:`lib.separation.best_direction`; the logarithms of the separations as
        :func:`lib.contextual.theorem2_delta`; ``measured`` and ``digits`` as
        :func:`lib.context_ids.context_ids` (correctly rounded ``log10_gap``) and
        :func:`digits_needed` (30 digits, then rounded once).

    Source: K&S Theorem 2 (recalled) and the book's reconstruction of its layer; the atlas's
    first section (:math:`\delta` against :math:`|\mathcal V|`, :math:`d` and :math:`n`).
    """
    from . import context_ids, contextual, separation

    n = positive_int("n", n, minimum=2)
    seed = positive_int("seed", seed, minimum=0)
    measure = flag("measure", measure)
    with blame("vocab"):
        V = separation._vocab(vocab)
        const = separation.strict_constants(V)
        w, c_w = separation.best_direction(V, seed=seed)
    row = {"|V|": len(V), "d": V.shape[1], "n": n, "c_w": c_w}
    layer: dict[str, Any] = dict(const, w=w)  # the Theorem 2 layer's constants and direction
    with blame("vocab", "n"):
        delta = contextual.theorem2_delta(n, len(V), V.shape[1], c_w=c_w, **const)
        row.update(theorem=delta.paper, construction=delta.construction)
        if measure:
            run = context_ids.context_ids(V, n, **layer)
            if not mpmath.mpf(run.gap) > 0:
                raise ValueError("vocab gives two equal context ids: the gap is 0")
            row.update(measured=run.log10_gap, digits=digits_needed(run.gap, 2 * run.max_norm))
    return row


def ks_bits(approximator: Any) -> int:
    r"""Bits of a built K&S approximator: its parameters times the bits of its largest number at
    the resolution of the smallest gap between its table's ids.

    The largest number is the larger of the lookup layer's largest output weight and the
    largest id magnitude (a knot of the lookup table); every parameter is stored with
    :func:`bits_per_number` of it at resolution ``min_gap``, the gap two ids must stay apart by.

    Args:
        approximator: a :class:`lib.approximation.KSApproximator`
            (:func:`lib.approximation.ks_approximator`), float64 or exact.

    Returns:
        A Python int, ``parameters * bits_per_number(largest, min_gap)``.

    Raises:
        ValueError: naming ``approximator`` when it is not a ``KSApproximator``, or when its
            table's ids collide (``min_gap`` 0).

    Accuracy:
        Exact given :func:`bits_per_number` (exact unless the ratio lies within about
        ``1e-29`` relative of a power of two); the largest number and the gap are read as
        mpmath numbers (exact for float64 and mpf values).

    Source: the book's bit count of K&S's construction (atlas: bits against error).
    """
    from .approximation import KSApproximator

    if not isinstance(approximator, KSApproximator):
        raise ValueError(
            f"approximator must be a lib.approximation.KSApproximator, got "
            f"{short_repr(approximator)}"
        )
    g = approximator
    largest = max(mpmath.mpf(g.max_weight), mpmath.mpf(max(abs(k) for k in g.knots)))
    if not mpmath.mpf(g.min_gap) > 0:
        raise ValueError("approximator's table ids collide: its min_gap is 0")
    return g.parameters * bits_per_number(largest, g.min_gap)


def _layer_numbers(layer: Any) -> tuple[dict[str, torch.Tensor], int, int, float]:
    """A cross-attention lookup's dense weights, its nonzero weights, its context's entries and
    its largest magnitude among both."""
    w = layer.attention.weights()
    weights = sum(int((t != 0).sum()) for t in w.values())
    largest = float(max(t.abs().max() for t in (*w.values(), layer.context)))
    return w, weights, layer.context.numel(), largest


def lookup_layer_costs(f: Callable, m: int, dim: int, kappa: float) -> dict[str, float]:
    r"""Norms and stored numbers of LHSL's cross-attention lookup of ``f`` on the ``m**dim`` grid
    of :math:`[0,1]^{\text{dim}}` at :math:`\beta = \kappa m^2`, read off the built layer.

    The layer is :func:`lib.cross.cross_attention_approximator` over
    :func:`lib.maxaffine.grid_centres`; a stored number is a nonzero entry of one of its four
    dense matrices or an entry of its context (``m**dim`` tokens of ``dim + 2`` numbers for a
    scalar target).

    Args:
        f: the target, mapping points ``(P, dim)`` to ``(P,)``.
        m: cells per axis ``>= 1``; dim: input dimension ``>= 1``; kappa: :math:`\kappa > 0`.

    Returns:
        A dict with the keys ``‖W_Q‖`` and ``‖W_K‖`` (spectral norms), ``numbers`` (stored numbers),
        ``largest`` (the largest magnitude among them) and ``weights`` (the numbers outside the
        context).

    Raises:
        ValueError: naming ``f``, ``m``, ``dim`` or ``kappa`` as
            :func:`lib.cross.cross_attention_approximator` and :func:`lib.maxaffine.grid_centres`
            (a grid or a layer beyond their limits included), or ``kappa`` when :math:`\beta`
            is not finite and positive in float64.

    Accuracy:
        The counts are exact; ``largest`` is exact (a float64 entry); the spectral norms are
        torch's float64 SVD, within a few :math:`u` relative (:math:`u = 2^{-53}`; for the
        construction's diagonal :math:`W_Q = \beta I` and :math:`W_K = I` they are
        :math:`\beta` and 1).

    Source: the book's reconstruction of LHSL's cross-attention construction; the atlas's
    LHSL section.
    """
    from .cross import _grid_beta, cross_attention_approximator
    from .maxaffine import grid_centres

    m, dim = positive_int("m", m), positive_int("dim", dim)
    beta = _grid_beta(kappa, m)
    layer = cross_attention_approximator(f, grid_centres(m, dim), beta)
    w, weights, context, largest = _layer_numbers(layer)
    return {
        "‖W_Q‖": float(torch.linalg.matrix_norm(w["W_Q"], 2)),
        "‖W_K‖": float(torch.linalg.matrix_norm(w["W_K"], 2)),
        "numbers": weights + context,
        "largest": largest,
        "weights": weights,
    }


#: The columns :func:`lhsl_bits` reads from its table of context lengths.
_LENGTH_COLUMNS = ("dim", "m", "N", "error", "β")
#: The fields of a built layer's costs (:func:`lookup_layer_costs`) that :func:`lhsl_bits` reads.
_BUILT_FIELDS = ("‖W_Q‖", "‖W_K‖", "numbers", "largest", "weights")


def _lhsl_row(r: pd.Series, built: dict) -> pd.Series:
    D, m, beta = int(r.dim), int(r.m), float(r["β"])
    b = built.get((D, m))
    if b is None:
        # beyond the built sizes: W_Q = beta I, W_K = I, D + 2 numbers per key token, the
        # same weights as the built layers of this dimension
        weights = next(v["weights"] for k, v in built.items() if k[0] == D)
        b = {"‖W_Q‖": beta, "‖W_K‖": 1.0, "numbers": int(r.N) * (D + 2) + weights}
        b["largest"] = max(beta, float(D))  # beta, or |b_i| = |c_i|^2 < D
    per = bits_per_number(b["largest"], min(r.error, 1 / beta))
    return pd.Series(
        {
            "‖W_Q‖": b["‖W_Q‖"],
            "‖W_K‖": b["‖W_K‖"],
            "numbers": b["numbers"],
            "bits/number": per,
            "bits": b["numbers"] * per,
            "built": (D, m) in built,
        }
    )


def lhsl_bits(lengths: pd.DataFrame, built: dict) -> pd.DataFrame:
    r"""Norms, stored numbers and bits of LHSL's cross-attention lookup for each context length,
    from the built layers where they were built and their pattern beyond.

    A row of ``lengths`` (input dimension :math:`D`, grid ``m``, :math:`N = m^D` key tokens,
    target error :math:`\epsilon` and :math:`\beta`) takes the costs of ``built[(D, m)]``
    when that layer was built; otherwise the built layers' pattern is extended:
    :math:`\lVert W_Q\rVert_2 = \beta`, :math:`\lVert W_K\rVert_2 = 1`, :math:`D + 2`
    numbers per key token plus the weights of a built layer of the same :math:`D`, and a
    largest number :math:`\max(\beta, D)` (:math:`\beta`, or an offset
    :math:`|b_i| = \lVert c_i\rVert^2 < D`). Each number gets :func:`bits_per_number` bits for
    that largest magnitude at resolution :math:`\min(\epsilon, 1/\beta)`: the values must be
    right to :math:`\epsilon` and the scores to about 1 (the book's choice).

    Args:
        lengths: a DataFrame with columns ``dim``, ``m``, ``N``, ``error`` and ``β``, one row
            per context length (e.g. :func:`lib.cross.product_context_length` with
            :math:`\beta = \kappa m^2` added), no grid missing.
        built: ``{(D, m): lookup_layer_costs(...)}`` for the layers that were built, at least
            one per dimension of ``lengths`` that has a row beyond them.

    Returns:
        A DataFrame with the index of ``lengths`` and columns ``‖W_Q‖``, ``‖W_K‖``,
        ``numbers``, ``bits/number``, ``bits`` and ``built`` (whether the row's layer was
        built).

    Raises:
        ValueError: naming ``lengths`` (not a DataFrame with those columns, or entries that are
            not finite and positive) or ``built`` (not a dict of costs keyed by ``(D, m)``, or
            no built layer of a dimension that needs one).

    Accuracy:
        Exact counts; the bits as :func:`bits_per_number` (exact unless a ratio lies within
        about ``1e-29`` relative of a power of two). The extended rows are the built layers'
        pattern, which the atlas checks on every built layer, not a measurement.

    Source: the book's bit count of LHSL's construction (atlas: keys, :math:`\beta`, norms and
    bits against :math:`\epsilon` and :math:`dn`).
    """
    if not isinstance(lengths, pd.DataFrame) or not set(_LENGTH_COLUMNS) <= set(lengths.columns):
        raise ValueError(
            f"lengths must be a DataFrame with columns {list(_LENGTH_COLUMNS)}, got "
            f"{short_repr(lengths)}"
        )
    if lengths.empty:
        raise ValueError("lengths must hold at least one row")
    values = as_float_array("lengths", lengths[list(_LENGTH_COLUMNS)].to_numpy(dtype=float))
    if not (values > 0).all():
        raise ValueError(f"lengths must hold positive entries, got {short_repr(lengths)}")
    if not isinstance(built, dict) or not all(
        isinstance(k, tuple)
        and len(k) == 2
        and isinstance(v, dict)
        and set(_BUILT_FIELDS) <= set(v)
        for k, v in built.items()
    ):
        raise ValueError(
            f"built must be a dict {{(D, m): lookup_layer_costs(...)}}, got {short_repr(built)}"
        )
    dims = {k[0] for k in built}
    missing = {
        int(D)
        for D, m in zip(lengths.dim, lengths.m, strict=True)
        if (int(D), int(m)) not in built and int(D) not in dims
    }
    if missing:
        raise ValueError(f"built has no built layer of the dimensions {sorted(missing)}")
    return lengths.apply(_lhsl_row, axis=1, built=built)


def lhsl_costs(f: Callable, X: ArrayLike, m: int, kappa: float) -> dict[str, float]:
    r"""Errors and bits of LHSL's lookup of a sequence target with one cross-attention layer per
    output position, on the ``m**n`` grid of :math:`[0,1]^n` at :math:`\beta = \kappa m^2`.

    The errors are those of the lookup's closed form, :func:`lib.lookup.soft_lookup` with the
    values :math:`f(c_i)` of every position, on the sample points ``X``; the size is that of
    ``n`` layers like the one built for the first position
    (:func:`lib.cross.cross_attention_approximator`; the others differ only in their values):
    ``n`` times its nonzero weights and its context's entries. Each number gets
    :func:`bits_per_number` bits for the largest magnitude among them at resolution
    :math:`\min(\text{sup error}, 1/\beta)` (:math:`1/\beta` when the sample error is 0).

    Args:
        f: the target, mapping points ``(P, n)`` (sequences of ``n`` scalar tokens) to
            ``(P, n)``, one output per position.
        X: sample points ``(P, n)``, real and finite.
        m: cells per axis ``>= 1``; kappa: :math:`\kappa > 0`.

    Returns:
        A dict with the keys ``m``, ``L1`` (the mean over ``X`` of the summed absolute
        errors), ``sup`` (the largest absolute error) and ``bits`` (stored numbers times
        bits per number).

    Raises:
        ValueError: naming ``f`` (not callable, or ``f(centres)`` or ``f(X)`` not finite real
            of shape ``(·, n)``), ``X`` (not finite real points ``(P, n)``), ``m`` or
            ``kappa`` (as :func:`lookup_layer_costs`).

    Accuracy:
        The errors are float64 sample statistics of :func:`lib.lookup.soft_lookup` (a mean and
        a maximum, not bounds on the sup over the cube); the counts are exact and the bits as
        :func:`bits_per_number`.

    Source: the book's bit count of LHSL's construction on the epilogue's target (atlas: bits
    against error, both constructions).
    """
    from .cross import _grid_target, cross_attention_approximator
    from .lookup import soft_lookup

    x, beta, c, table, truth = _grid_target(f, X, m, kappa)
    n = x.shape[1]
    with blame("X"):
        err = np.abs(soft_lookup(x, c, table, beta) - truth)
    layer = cross_attention_approximator(lambda p: f(p)[:, 0], c, beta)
    _, weights, context, largest = _layer_numbers(layer)
    sup = float(err.max())
    per = bits_per_number(largest, min(sup, 1 / beta) if sup > 0 else 1 / beta)
    return {
        "m": m,
        "L1": float(err.sum(1).mean()),
        "sup": sup,
        "bits": n * (weights + context) * per,
    }
