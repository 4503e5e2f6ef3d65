r"""K&S Lemma 1: when the Boltzmann operator of the attention scores separates sequences
(Chapter 1).

For score vectors whose entries are separated by more than :math:`2\log n + 3`
(:func:`lemma1_gap`), K&S Lemma 1 bounds from below how far apart the Boltzmann operator
(:func:`lib.boltzmann.boltz`) puts two of them (:func:`lemma1_bound`). This module holds the
lemma's quantities, the lattice vectors that test it (:func:`lattice_vectors`,
:func:`lemma1_check`, exactly in mpmath) and an adversarial search beyond lattices
(:func:`lemma1_search`). The statement is quoted from K&S; the checks are the book's (see the
Sources and certainty page).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
import torch
from numpy.typing import ArrayLike

from ._validate import (
    as_float_array,
    capped_comb,
    finite_real,
    flag,
    positive_int,
    require_size,
    short_repr,
)
from .boltzmann import boltz

__all__ = [
    "lemma1_gap",
    "lemma1_bound",
    "lemma1_digits",
    "one_winner_deficit",
    "lattice_vectors",
    "threshold_lattice",
    "Lemma1Check",
    "lemma1_check",
    "Lemma1Search",
    "lemma1_search",
    "MAX_LATTICE_ROWS",
]

#: Largest number of vectors :func:`lattice_vectors` builds (``binom(K, n)`` rows).
MAX_LATTICE_ROWS = 2**20


def lemma1_gap(n: int) -> float:
    r"""The separation K&S Lemma 1 asks of the entries: :math:`2\log n + 3` (natural log).

    Args:
        n: the length of the vectors, an integer ``>= 2``.

    Returns:
        The threshold as a Python float; Lemma 1 needs entries separated by *more* than it.

    Raises:
        ValueError: if ``n`` is not an integer ``>= 2`` (the lemma's hypothesis).

    Accuracy:
        Within ``1.5 u`` relative (``u = 2**-53``) for every integer ``n >= 2``, ``10**400``
        included: ``math.log`` of the exact integer, an exact doubling and one rounded addition.

    Source: K&S (ICLR 2024), Lemma 1 (the constant is recalled and checked numerically; see the
    Sources and certainty page). Used in Chapters 1 and 2.
    """
    n = positive_int("n", n, minimum=2)
    return 2.0 * math.log(n) + 3.0


def lemma1_bound(n: int, r: float, *, log10: bool = False) -> float:
    r"""The separation K&S Lemma 1 guarantees: :math:`\delta' = (\log n)^2 e^{-2r}`.

    Args:
        n: vector length, an integer ``>= 2``.
        r: the bound on the entries, :math:`|a_k| \le r`; finite and ``>= 0``.
        log10: return :math:`\log_{10}\delta'` instead, which stays finite when
            :math:`\delta'` underflows float64 (``r`` beyond about 370).

    Returns:
        :math:`\delta'` (or its base-10 logarithm) as a Python float.

    Raises:
        ValueError: if ``n < 2`` or ``r`` is negative or not finite.

    Accuracy:
        :math:`\delta'` is ``exp`` of a rounded exponent: relative error at most
        ``(8 + 2r + 2|ln ln n|) u`` (``u = 2**-53``) while :math:`\delta'` is a normal float64
        (``r`` up to about 354); beyond, it loses digits among the subnormals and is 0.0 from
        ``r`` about 373 on, returned without an error. The ``log10`` form has an absolute error
        of at most ``10 u (2|log10 ln n| + 2r / ln 10)`` for every finite ``r``.

    Source: K&S (ICLR 2024), Lemma 1 (constant recalled, see the Sources and certainty page;
    checked as C3). Used in Chapters 1-2.
    """
    n = positive_int("n", n, minimum=2)
    r = finite_real("r", r, minimum=0.0)
    log10 = flag("log10", log10)
    ln10 = math.log(10.0)
    if log10:  # r * (2 / ln 10) stays finite where 2 r would overflow
        return 2.0 * math.log(math.log(n)) / ln10 - r * (2.0 / ln10)
    return math.exp(2.0 * math.log(math.log(n)) - 2.0 * r)


def _gap_digits(r: float) -> int:
    """``ceil(2 r / ln 10)``, the decimal digits below the values at which Lemma 1's promised gap
    lies, from the quotient at 40 digits (a float64 product can round it across an integer)."""
    import mpmath

    with mpmath.workdps(40 + len(str(int(r)))):
        return int(mpmath.ceil(2 * mpmath.mpf(r) / mpmath.log(10)))


def lemma1_digits(r: float) -> int:
    r"""Decimal digits that resolve gaps of the size K&S Lemma 1 promises, with 30 to spare.

    The promised gap :math:`(\log n)^2 e^{-2r}` has about :math:`2r/\ln 10` leading zeros;
    this returns ``30 + ceil(2 r / ln 10)``.

    Args:
        r: the bound on the entries, :math:`|a_k| \le r`; finite and ``>= 0``.

    Raises:
        ValueError: if ``r`` is negative or not finite, or needs more than
            :data:`lib.exact.MAX_DPS` digits.

    Accuracy:
        Exact: ``ceil(2 r / ln 10)`` is taken of the quotient evaluated at 40 digits (the float
        ``r`` read exactly), so a quotient within rounding of an integer
        (``r = 1.151292546497023``, ceiling 32) is not rounded down.

    Source: the size of the separation K&S Lemma 1 promises (this book's precision rule).
    Used in Chapter 1 through :func:`lemma1_check`.
    """
    from .exact import MAX_DPS

    r = finite_real("r", r, minimum=0.0)
    digits = 30 + _gap_digits(r)
    if digits > MAX_DPS:
        raise ValueError(
            f"r={r!r} needs {float(digits):.3g} digits, more than lib.exact.MAX_DPS={MAX_DPS}"
        )
    return digits


def one_winner_deficit(n: int) -> float:
    r"""How far below the maximum one winner and ``n - 1`` equal losers pull the operator.

    Over the family :math:`a = (0, -x, \dots, -x)`, :math:`x > 0`, the smallest value of
    :math:`\operatorname{boltz}(a) - \max a` is :math:`-W\big(\frac{n-1}{e}\big)`, with
    :math:`W` the Lambert W function: setting the derivative of
    :math:`f(x) = -x u/(1+u)`, :math:`u = (n-1)e^{-x}`, to zero gives :math:`x = 1 + u`, so
    :math:`(x-1)e^{x-1} = (n-1)/e` and :math:`f = -(x-1)`. Since
    :math:`W(z) \sim \log z - \log\log z`, the deficit approaches the bound :math:`\log n`
    of :func:`lib.boltzmann.boltz_bounds` only slowly.

    Args:
        n: vector length, an integer ``>= 2``.

    Returns:
        :math:`W((n-1)/e) > 0` as a Python float (the deficit, a positive number).

    Raises:
        ValueError: if ``n < 2``.

    Accuracy:
        Within one ulp (``u = 2**-53`` relative) for every ``n >= 2`` up to ``10**400``: the
        Lambert W is evaluated at 30 digits whatever mpmath's global precision, and rounded
        once.

    Source: derived in this book (Chapter 1, the sharp lower bound) to measure the tightness of the
    :math:`\log n` in K&S Lemma 1; not a statement of either paper.
    """
    import mpmath

    n = positive_int("n", n, minimum=2)
    with mpmath.workdps(30):  # not the caller's global precision
        return float(mpmath.lambertw(mpmath.mpf(n - 1) / mpmath.e).real)


def lattice_vectors(n: int, K: int, spacing: float) -> np.ndarray:
    r"""All ``n``-subsets of the centred lattice
    :math:`\{(k - \frac{K-1}{2})\,\text{spacing}\}_{k<K}`.

    Every entry differs from every other entry (of the same or another vector) by a multiple
    of ``spacing``, and no two rows are permutations of each other: the family on which
    Chapter 1 checks Lemma 1 (C3).

    Args:
        n: entries per vector, ``>= 1``.
        K: lattice points, ``>= n``.
        spacing: distance between neighbouring lattice points, finite and ``> 0``.

    Returns:
        float64 array of shape ``(binom(K, n), n)``, rows in lexicographic order, entries
        increasing along each row.

    Raises:
        ValueError: if ``K < n``, a count is not a positive integer, ``spacing <= 0``, or
            ``binom(K, n)`` exceeds :data:`MAX_LATTICE_ROWS` (checked before anything is built).

    Accuracy:
        Deterministic. Each point is ``(k - (K - 1) / 2) * spacing`` with one rounding (the
        half-integer factor is exact), so the differences are exact multiples of ``spacing``
        only where these products are exact (e.g. ``spacing`` a power of two); otherwise they
        are multiples to within one rounding of each point (``3 * 0.1`` is
        ``0.30000000000000004``).

    Source: the book's check C3 of K&S Lemma 1. Used in Chapter 1.
    """
    n = positive_int("n", n, maximum=MAX_LATTICE_ROWS)  # a longer vector is past the limit alone
    K = positive_int("K", K, minimum=n)
    spacing = finite_real("spacing", spacing, minimum=0.0, strict=True)
    require_size(
        f"lattice_vectors({n}, {K}, ...): the number of vectors binom({K}, {n})",
        capped_comb(K, n, MAX_LATTICE_ROWS),
        MAX_LATTICE_ROWS,
        "lib.lemma1.MAX_LATTICE_ROWS",
    )
    with np.errstate(over="ignore"):  # overflow is reported below as a ValueError
        points = (np.arange(K) - (K - 1) / 2.0) * spacing
    if not np.isfinite(points).all() or (K > 1 and not (np.diff(points) > 0).all()):
        raise ValueError(f"spacing={spacing!r} with K={K} does not give {K} distinct finite points")
    return np.array(list(itertools.combinations(points, n)), dtype=np.float64)


def threshold_lattice(n: int, K: int, margin: float = 0.01) -> np.ndarray:
    r"""The lattice vectors of :func:`lattice_vectors` with spacing just above Lemma 1's
    threshold: :math:`\delta = 2\log n + 3 + \text{margin}` (:func:`lemma1_gap`).

    The densest configuration the lemma's hypothesis allows: every entry of every vector on one
    lattice whose spacing exceeds the threshold by ``margin``, all ``binom(K, n)`` increasing
    ``n``-subsets of its ``K`` points. Chapter 1 checks Lemma 1 on these (check C3, margin 0.01)
    and computes their log-sum-exp.

    Args:
        n: entries per vector, an integer ``>= 2`` (the lemma's hypothesis).
        K: lattice points, an integer ``>= n``.
        margin: how far the spacing lies above the threshold, a finite real ``> 0`` (the
            hypothesis is strict).

    Returns:
        float64 array of shape ``(binom(K, n), n)``, as :func:`lattice_vectors` with
        ``spacing = lemma1_gap(n) + margin``.

    Raises:
        ValueError: if ``n < 2``, ``K < n``, a count is not a positive integer, ``margin`` is not
            a finite real ``> 0``, the spacing does not exceed the threshold in float64 (a margin
            below its ulp) or gives lattice points beyond float64's range, or ``binom(K, n)``
            exceeds :data:`MAX_LATTICE_ROWS`.

    Accuracy:
        The spacing is the float64 sum of :func:`lemma1_gap` (within ``1.5 u``) and ``margin``,
        one more rounding (``u = 2**-53``); the points are then exact as in
        :func:`lattice_vectors`. Deterministic.

    Source: K&S (ICLR 2024) Lemma 1's hypothesis; the lattice is the book's test family (check
    C3). Used in Chapter 1.
    """
    n = positive_int("n", n, minimum=2, maximum=MAX_LATTICE_ROWS)
    K = positive_int("K", K, minimum=n)
    margin = finite_real("margin", margin, minimum=0.0, strict=True)
    require_size(
        f"threshold_lattice({n}, K={K}, ...): the number of vectors binom({K}, {n})",
        capped_comb(K, n, MAX_LATTICE_ROWS),
        MAX_LATTICE_ROWS,
        "lib.lemma1.MAX_LATTICE_ROWS",
    )
    gap = lemma1_gap(n)
    spacing = gap + margin
    if not spacing > gap:
        raise ValueError(
            f"margin={margin!r} does not lift the spacing above the threshold {gap!r} in float64"
        )
    if not math.isfinite(spacing * ((K - 1) / 2.0)):
        raise ValueError(
            f"margin={margin!r} with K={K} puts the lattice points beyond float64's range"
        )
    return lattice_vectors(n, K, spacing)


@dataclass(frozen=True)
class Lemma1Check:
    """Outcome of :func:`lemma1_check` (all fields are Python scalars).

    Attributes:
        m: number of vectors.
        n: entries per vector.
        r: largest absolute entry.
        delta: smallest distance between two different entries (within or across vectors).
        threshold: ``lemma1_gap(n) = 2 log n + 3``.
        hypothesis: ``delta > threshold``: Lemma 1 applies.
        bound: ``lemma1_bound(n, r)``, the promised separation.
        min_gap: smallest ``|boltz(a_i) - boltz(a_j)|`` over pairs, evaluated at ``dps`` digits
            (a Python float: 0.0 if it is below float64's range; see ``log10_min_gap``).
        conclusion: ``min_gap > bound``, decided in ``dps``-digit arithmetic, so it stays right
            when both numbers are below float64's range.
        dps: decimal digits used.
        min_gap_float64: the same minimum computed in float64 (:func:`lib.boltzmann.boltz`), to show
            where float64 stops resolving the gap (it reports 0 for a false collision).
        log10_min_gap: base-10 logarithm of ``min_gap`` (``-inf`` for an exact collision).
        log10_bound: base-10 logarithm of ``bound``.
    """

    m: int
    n: int
    r: float
    delta: float
    threshold: float
    hypothesis: bool
    bound: float
    min_gap: float
    conclusion: bool
    dps: int
    min_gap_float64: float
    log10_min_gap: float
    log10_bound: float


def lemma1_check(vectors: ArrayLike, *, dps: int | None = None) -> Lemma1Check:
    r"""Measure K&S Lemma 1 on a family of vectors: hypotheses, promised and measured gap.

    The Boltzmann values are computed in ``dps``-digit arithmetic (:func:`lib.exact.boltz_mp`) so
    that the measured gap is not a float64 artefact; ``min_gap`` is the exact minimum over all
    pairs (adjacent differences of the sorted values), zero included. The float64 minimum is
    returned beside it.

    Args:
        vectors: real array of shape ``(m, n)`` with ``m >= 2`` and ``n >= 2``; each row must
            have pairwise distinct entries, and no row may be a permutation of another.
        dps: decimal digits for the exact evaluation, ``>= 15``; by default
            :func:`lemma1_digits` of the largest entry, enough to resolve the promised gap.

    Returns:
        A :class:`Lemma1Check`.

    Raises:
        ValueError: for a wrong shape, NaN/inf, a row with a repeated entry, two rows that are
            permutations of each other, ``dps < 15``, or a ``dps`` too small to resolve the
            promised gap (fewer than ``15 + ceil(2 r / ln 10)`` digits for the largest entry
            ``r``: the exact gap would round to 0 and decide the conclusion).

    Accuracy:
        The entries are read exactly; ``min_gap`` is exact to about ``10**-dps`` times the
        largest Boltzmann value, then rounded to float64 (0.0 below its range), and
        ``hypothesis`` and ``conclusion`` are decided at ``dps`` digits from the exact entries.
        ``delta`` is a float64 difference of entries (one rounding); ``log10_min_gap`` is
        computed at 30 digits and rounded; ``min_gap_float64`` is float64 and may report false
        collisions.

    Source: K&S (ICLR 2024), Lemma 1 (constant recalled, see the Sources and certainty page;
    the book's check C3). Used in Chapter 1.
    """
    from . import exact

    arr = as_float_array("vectors", vectors, min_ndim=2)
    if arr.ndim != 2 or arr.shape[0] < 2 or arr.shape[1] < 2:
        raise ValueError(f"vectors must have shape (m, n) with m >= 2 and n >= 2, got {arr.shape}")
    r = float(np.abs(arr).max())
    if dps is None:
        try:
            dps = lemma1_digits(r)
        except ValueError:
            raise ValueError(
                f"vectors' largest entry, {r:.6g} in absolute value, needs more digits than "
                "lib.exact.MAX_DPS to resolve Lemma 1's gap; rescale vectors or pass dps"
            ) from None
    else:
        dps = positive_int("dps", dps, minimum=15)
        need = _gap_digits(r)  # lemma1_digits(r) without its 30 spare
        if dps < need + 15:
            # the promised gap (log n)^2 e^(-2r) lies about 2r / ln 10 digits below the values:
            # at fewer digits the exact gap rounds to 0 and the conclusion would be decided by
            # the precision, not by the vectors
            raise ValueError(
                f"dps={dps} cannot resolve the gap Lemma 1 promises for vectors' largest entry "
                f"{r:.6g} (about {need:,} digits below the values); pass dps >= {need + 15:,} or "
                f"omit dps"
            )
    rows = np.sort(arr, axis=1)
    if (np.diff(rows, axis=1) == 0).any():
        bad = int(np.nonzero((np.diff(rows, axis=1) == 0).any(axis=1))[0][0])
        raise ValueError(f"vectors[{bad}] repeats an entry: {short_repr(arr[bad])}")
    if len(np.unique(rows, axis=0)) != len(rows):
        raise ValueError("vectors holds two rows that are permutations of each other")
    entries = np.unique(arr)
    delta = float(np.diff(entries).min()) if entries.size > 1 else math.inf
    m, n = arr.shape
    import mpmath

    values = [exact.boltz_mp(row, dps=dps) for row in arr]
    gap = exact.min_gap(values, dps=dps, distinct=False)
    min_gap = float(gap)
    min_gap_float64 = float(np.diff(np.sort(boltz(arr))).min())
    threshold = lemma1_gap(n)
    bound = lemma1_bound(n, r)
    log10_bound = lemma1_bound(n, r, log10=True)
    # Both decisions in exact arithmetic: the entries are binary floats, so their differences
    # and r are exact mpf; the threshold 2 log n + 3 and the bound (log n)^2 e^(-2r) are evaluated
    # at dps digits, so an input within a rounding of either is decided right, not by float64.
    with mpmath.workdps(dps):
        exact_entries = [mpmath.mpf(float(v)) for v in entries]
        delta_mp = min(
            (b - a for a, b in zip(exact_entries, exact_entries[1:], strict=False)),
            default=mpmath.inf,
        )
        hypothesis = bool(delta_mp > 2 * mpmath.log(n) + 3)
        conclusion = bool(gap > mpmath.log(n) ** 2 * mpmath.exp(-2 * mpmath.mpf(r)))
    with mpmath.workdps(30):
        log10_gap = float(mpmath.log10(gap)) if gap > 0 else -math.inf
    return Lemma1Check(
        m=m,
        n=n,
        r=r,
        delta=delta,
        threshold=threshold,
        hypothesis=hypothesis,
        bound=bound,
        min_gap=min_gap,
        conclusion=conclusion,
        dps=dps,
        min_gap_float64=min_gap_float64,
        log10_min_gap=log10_gap,
        log10_bound=log10_bound,
    )


@dataclass(frozen=True)
class Lemma1Search:
    """Outcome of :func:`lemma1_search` (Python scalars; ``points`` a float64 array).

    Attributes:
        n: entries per vector.
        K: points in the set the search moved.
        restarts: random starts; steps: optimiser steps per start.
        points: the set of ``K`` points (sorted, centred) whose ratio is smallest, shape ``(K,)``.
        spacing: its smallest distance between neighbouring points (above the threshold).
        ratio: smallest gap over the recalled bound on that set, ``min_gap / bound``, computed
            exactly by :func:`lemma1_check` on all its ``n``-subsets.
        check: the :class:`Lemma1Check` of that set.
    """

    n: int
    K: int
    restarts: int
    steps: int
    points: np.ndarray
    spacing: float
    ratio: float
    check: Lemma1Check


def lemma1_search(
    n: int, K: int, *, restarts: int = 8, steps: int = 150, seed: int = 0, margin: float = 0.01
) -> Lemma1Search:
    r"""Search for configurations that K&S Lemma 1's hypothesis allows and its recalled bound
    fits worst: sets of ``K`` points, not a lattice, that minimise the smallest gap between the
    Boltzmann values of their ``n``-subsets relative to :math:`\delta' = (\log n)^2 e^{-2r}`.

    Every family the lemma covers is a set of ``n``-subsets of some point set whose distinct
    points are more than ``2 log n + 3`` apart; since the operator commutes with shifts
    (``boltz(a + c) = boltz(a) + c``), centring the set minimises ``r`` without changing any gap.
    The search moves the ``K - 1`` spacings, each ``lemma1_gap(n) + margin + softplus(u)``, from
    random starts with torch's Adam on ``log(min_gap) + 2r`` (the log of the ratio up to a
    constant) in float64, then measures the best set of each start exactly with
    :func:`lemma1_check` (mpmath): the reported ratio does not depend on float64 resolving the
    gap, only the search direction does.

    Args:
        n: entries per vector, ``2 <= n <= 6``.
        K: points in the set, ``n + 1 <= K <= 2n`` (a pair of ``n``-subsets spans at most ``2n``
            points).
        restarts: random starts, ``>= 1``; steps: Adam steps per start, ``>= 1``.
        seed: seed of the starts (a torch generator of its own), an integer ``>= 0``.
        margin: how far above the threshold every spacing stays, in ``(0, 100]``.

    Returns:
        A :class:`Lemma1Search` for the start with the smallest exact ratio.

    Raises:
        ValueError: for ``n``, ``K``, ``restarts``, ``steps``, ``seed`` or ``margin`` out of
            range or not of their type.

    Accuracy:
        Deterministic for a given seed on one machine (torch's own generator and Adam in
        float64). The search is heuristic: nothing guarantees the smallest ratio is found. The
        reported ``ratio`` is :func:`lemma1_check`'s exact measurement, formed as ``exp`` of the
        difference of two float64 base-10 logarithms: relative error about
        ``ln 10 (|log10_min_gap| + |log10_bound|) u`` (0.0 for an exact collision).

    Source: K&S (ICLR 2024), Lemma 1 (threshold quoted, bound recalled); an adversarial search of
    the book's, beyond the lattices of :func:`lattice_vectors`. Used in Chapter 1 (check B1.7).
    """
    n = positive_int("n", n, minimum=2, maximum=6)
    K = positive_int("K", K, minimum=n + 1, maximum=2 * n)
    restarts = positive_int("restarts", restarts, maximum=1000)
    steps = positive_int("steps", steps, maximum=100_000)
    seed = positive_int("seed", seed, minimum=0, maximum=2**63 - 1)
    margin = finite_real("margin", margin)
    if not 0 < margin <= 100:  # wider spacings put the bound far below any float
        raise ValueError(f"margin must be in (0, 100], got {margin!r}")
    floor = lemma1_gap(n) + margin
    subsets = torch.tensor(list(itertools.combinations(range(K), n)))
    generator = torch.Generator().manual_seed(seed)

    def points_of(u: torch.Tensor) -> torch.Tensor:
        spacings = floor + torch.nn.functional.softplus(u)
        p = torch.cat([torch.zeros(1, dtype=u.dtype), torch.cumsum(spacings, 0)])
        return p - p[-1] / 2

    best: Lemma1Search | None = None
    for _ in range(restarts):
        u = torch.randn(K - 1, generator=generator, dtype=torch.float64).mul_(2.0).requires_grad_()
        optimiser = torch.optim.Adam([u], lr=0.05)
        chosen, chosen_loss = points_of(u).detach(), math.inf
        for _ in range(steps):
            p = points_of(u)
            values = torch.sort(boltz(p[subsets])).values
            gap = torch.diff(values).min()
            if not gap > 0:  # float64 no longer resolves the gap here: stop this start
                break
            loss = torch.log(gap) + 2 * p[-1]
            if loss.item() < chosen_loss:
                chosen, chosen_loss = p.detach().clone(), loss.item()
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
        vectors = chosen.numpy()[subsets.numpy()]
        check = lemma1_check(vectors)
        ratio = float(np.exp(check.log10_min_gap * math.log(10) - check.log10_bound * math.log(10)))
        if best is None or ratio < best.ratio:
            best = Lemma1Search(
                n=n,
                K=K,
                restarts=restarts,
                steps=steps,
                points=chosen.numpy().copy(),
                spacing=float(np.diff(chosen.numpy()).min()),
                ratio=ratio,
                check=check,
            )
    return best  # type: ignore[return-value]  # restarts >= 1: set by the first start
