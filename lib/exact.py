"""Arbitrary-precision (mpmath) versions of the book's quantities.

The separations K&S Lemma 1 and Theorem 2 promise are exponentially small; float64 reports
false collisions long before they vanish. These functions evaluate the same formulas at a
chosen number of decimal digits ``dps``. Inputs are converted exactly: a Python or numpy float
becomes the mpf with the same binary value, a string such as ``"0.2"`` is read as the decimal.

Here: exact conversion (:func:`to_mpf`) and the work guard of every exact function of ``lib``
(:func:`mp_seconds`); the Boltzmann operator, log-sum-exp and softmax entropy of a 1-D sequence;
Theorem 2's layer on tokens ``(n, d)`` or ``(N, n, d)`` (:func:`attention_mp`) and projections,
gaps and distances of its outputs. Results are mpf of ``dps`` digits; bad input or precision, or
work beyond :data:`MAX_MP_TERMS`, :data:`MAX_PAIRS` or :data:`MAX_MP_SECONDS`, raises
``ValueError`` before any work. Base-10 logarithms of separations become numbers or text in
:mod:`lib.powers_of_ten`.

mpmath is the library; this module only writes the formulas of the papers with it.
Source: K&S (ICLR 2024), Lemma 1 and Theorem 2. Used in Chapter 1 (Lemma 1) and Chapter 2
(context ids), and by :mod:`lib.contextual`, :mod:`lib.memorization` and
:mod:`lib.approximation` (Chapters 2-4).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import mpmath
import numpy as np
import torch
from numpy.typing import ArrayLike

from ._validate import (
    as_float_array,
    finite_real,
    flag,
    positive_int,
    require_size,
    short_repr,
)

if TYPE_CHECKING:
    from .layers import SelfAttention

__all__ = [
    "MAX_DPS",
    "GUARD_DIGITS",
    "MAX_PAIRS",
    "MAX_MP_TERMS",
    "MAX_MP_SECONDS",
    "mp_seconds",
    "require_mp_seconds",
    "to_mpf",
    "boltz_mp",
    "boltz_pair_mp",
    "lse_mp",
    "softmax_entropy_mp",
    "min_gap",
    "attention_mp",
    "project_mp",
    "min_distance",
]

#: Largest working precision (decimal digits) the book's functions accept; beyond it a single
#: evaluation would take minutes to hours.
MAX_DPS = 100_000
#: Guard digits the constructions carry beyond the separation they guarantee (the working
#: precision of :func:`lib.memorization.memorizing_transformer` and
#: :func:`lib.approximation.ks_approximator` is the separation's digits plus these).
GUARD_DIGITS = 30
#: Largest number of pairs :func:`min_distance` compares (``m (m - 1) / 2`` for ``m`` points).
MAX_PAIRS = 1_000_000
#: Largest number of exact terms one evaluation takes on, in the attention scores of
#: :func:`attention_mp` (sequences x outputs x keys x head size) and in the triangular solve of
#: :func:`lib.interpolation.interpolation_mp` (``M**2 k``). About 20 microseconds each at 50
#: digits on the book's reference machine, so the limit is a few minutes of work.
MAX_MP_TERMS = 10_000_000
#: Longest a call of an exact function may be expected to take, in seconds on one core of the
#: book's reference machine (:func:`mp_seconds`); a call above it is refused before any work,
#: because the digits and the sizes together, not either alone, decide the time: at
#: :data:`MAX_DPS` digits one ``exp`` takes about 0.2 s, so a few hundred entries are minutes.
#: ``make bench --guards-only`` times calls of each guarded function and projects them to it.
MAX_MP_SECONDS = 60.0

# The cost model of mp_seconds, fitted on the reference machine (mpmath with its gmpy backend):
# one addition, multiplication or comparison took 2.9 us at 50 digits, 14 us at 5,000, 271 us at
# 50,000 and 537 us at 100,000; one exp 3.6 us, 23 us, 1.1 ms, 74 ms and 204 ms (50 to 100,000).
_ARITHMETIC_S = (3e-6, 6e-9, 0.0)  # seconds: constant, per digit, per digit squared
_TRANSCENDENTAL_S = (4e-6, 4e-8, 3e-11)


def mp_seconds(dps: int, arithmetic: float = 0, transcendental: float = 0) -> float:
    """Expected seconds of ``arithmetic`` elementary operations (addition, multiplication,
    comparison, conversion; a square root counts as about ten) and ``transcendental`` evaluations
    (``exp``, ``log``) at ``dps`` decimal digits, on one core of the book's reference machine.

    The model is ``c0 + c1 dps + c2 dps**2`` seconds per operation of each kind, fitted to timings
    from 50 to 100,000 digits (within a factor of two of them, mostly above; the squared term is
    that of ``exp`` at many digits). It sizes calls for :func:`require_mp_seconds`; ``make bench
    --guards-only`` measures how far it is from real calls.

    Args:
        dps: decimal digits (>= 1); arithmetic, transcendental: operation counts (>= 0, floats
            allowed for counts too large for an int's exact value to matter).

    Returns:
        Seconds (a float >= 0).

    Raises:
        ValueError: for a ``dps`` that is not a positive whole number, or a negative or non-finite
            count.

    Accuracy:
        Deterministic float64 arithmetic (a few u); as a prediction of real time it is a model,
        within about a factor of two of the reference timings and machine-dependent.

    Source: the book's own work guard (the papers give none); used by the exact functions of
    this module and :func:`lib.interpolation.interpolation_mp` (Chapters 1-3).
    """
    dps = positive_int("dps", dps)
    total = 0.0
    for name, count, (c0, c1, c2) in (
        ("arithmetic", arithmetic, _ARITHMETIC_S),
        ("transcendental", transcendental, _TRANSCENDENTAL_S),
    ):
        count = finite_real(name, count, minimum=0.0)
        total += count * (c0 + c1 * dps + c2 * float(dps) ** 2)
    return total


def require_mp_seconds(
    what: str, dps: int, arithmetic: float = 0, transcendental: float = 0
) -> None:
    """Refuse an exact computation :func:`mp_seconds` expects to take more than
    :data:`MAX_MP_SECONDS`.

    Args:
        what: the computation, as the message names it; dps, arithmetic, transcendental: as
            :func:`mp_seconds`.

    Raises:
        ValueError: naming ``what``, the operation counts, the digits, the expected time and the
            limit; or as :func:`mp_seconds` for bad counts or digits.

    Accuracy:
        Deterministic: the decision is the float64 comparison of :func:`mp_seconds` with
        :data:`MAX_MP_SECONDS`, made before any work, so the same call is refused on every
        machine whatever its speed.

    Source: the book's own work guard, as :func:`mp_seconds`.
    """
    seconds = mp_seconds(dps, arithmetic, transcendental)
    if seconds > MAX_MP_SECONDS:
        raise ValueError(
            f"{what} ({arithmetic:,.4g} arithmetic and {transcendental:,.4g} transcendental "
            f"operations at dps={dps:,} digits) would take about {seconds:,.0f} s, more than the "
            f"limit lib.exact.MAX_MP_SECONDS = {MAX_MP_SECONDS:g} s; lower dps or the sizes"
        )


def to_mpf(name: str, value: object) -> mpmath.mpf:
    """Convert a real scalar (float, int, numpy scalar, decimal string or mpf) to an mpf.

    Args:
        name: the argument's name, used in the error messages.
        value: a finite real scalar: Python or numpy float or int, ``fractions.Fraction``, a
            0-d numpy array or torch tensor, a decimal string, or an ``mpmath.mpf``.

    Raises:
        ValueError: if ``value`` is not a real number or is NaN or infinite, or ``name`` (the
            argument's name in the messages) is not a string.

    Accuracy:
        Rounded to mpmath's current global precision: a float (numpy float32 included) is exact
        whenever it is at least 53 bits (``dps >= 15``, as inside the exact functions of this
        module); an int, decimal string or mpf is correctly rounded to that precision
        (``10**30 + 1`` at ``dps = 15`` becomes ``1e30``); a ``Fraction`` is rounded twice
        (numerator, then the division).
    """
    if not isinstance(name, str):
        raise ValueError(f"name must be a string, got {short_repr(name)}")
    if isinstance(value, torch.Tensor | np.ndarray):
        if value.ndim != 0:
            raise ValueError(f"{name} must be a scalar, got shape {tuple(value.shape)}")
        value = value.item()
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, numbers.Rational) and not isinstance(value, numbers.Integral):
        return mpmath.mpf(value.numerator) / value.denominator
    if isinstance(value, bool) or not isinstance(value, numbers.Real | str | mpmath.mpf):
        raise ValueError(f"{name} must be a real number, got {short_repr(value)}")
    try:
        out = mpmath.mpf(value)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a real number, got {short_repr(value)}") from exc
    if not mpmath.isfinite(out):
        raise ValueError(f"{name} must be finite, got {short_repr(value)}")
    return out


def boltz_mp(
    a: Sequence[float | str | mpmath.mpf] | np.ndarray | torch.Tensor,
    beta: float | str | mpmath.mpf = 1,
    dps: int = 50,
) -> mpmath.mpf:
    r"""Boltzmann operator :math:`\sum_i a_i e^{\beta a_i} / \sum_j e^{\beta a_j}` at ``dps``
    digits.

    Args:
        a: 1-D sequence of ``n >= 1`` real entries (floats, ints, decimal strings or mpf), or a
            1-D numpy array / torch tensor.
        beta: inverse temperature, a finite real (also a decimal string or mpf).
        dps: decimal digits of working precision, ``>= 15``.

    Returns:
        An ``mpmath.mpf`` carrying ``dps`` digits. Subtract two such values inside
        ``mpmath.workdps(dps)`` (or with :func:`min_gap`) to keep those digits. The bounds of
        :func:`lib.boltzmann.boltz` hold exactly at this precision too: ``min(a) <= result <=
        max(a)``, and ``result >= max(a) - log(n) / beta`` for ``beta > 0`` (``<= min(a) +
        log(n) / |beta|`` for ``beta < 0``); a result that rounding pushes past them is set to
        the bound.

    Raises:
        ValueError: if ``a`` is empty, not 1-D, or holds a non-finite or non-real entry (bools
            and complex numbers are refused); if ``beta`` is not finite; if ``dps < 15`` or
            above :data:`MAX_DPS`; if the entries and digits together would exceed
            :data:`MAX_MP_SECONDS` (:func:`mp_seconds`; a few hundred entries at
            :data:`MAX_DPS` digits).

    Accuracy:
        To ``dps`` significant digits relative to the largest entry: absolute error below
        ``10**-dps * max|a|`` against a 150-digit evaluation, for entries of any size (mpmath
        has no overflow; 1e-300 to 1e300 probed), not correctly rounded. Float inputs are read
        exactly, decimal strings rounded to ``dps`` digits.

    Source: K&S (ICLR 2024), the operator of Lemma 1; the float64 version is
    :func:`lib.boltzmann.boltz`. Used in Chapter 1 (checks C3, C4).
    """
    dps = positive_int("dps", dps, minimum=15, maximum=MAX_DPS)
    entries = _entries(a, dps, "boltz_mp", per_entry=(4, 1))
    with mpmath.workdps(dps):
        b = to_mpf("beta", beta)
        top = max(b * x for x in entries)
        weights = [mpmath.exp(b * x - top) for x in entries]
        out = mpmath.fsum(x * w for x, w in zip(entries, weights, strict=True)) / mpmath.fsum(
            weights
        )
        lo, hi = min(entries), max(entries)
        if b > 0:
            lo = max(lo, hi - mpmath.log(len(entries)) / b)
        elif b < 0:
            hi = min(hi, lo - mpmath.log(len(entries)) / b)
        return min(max(out, lo), hi)


def boltz_pair_mp(
    x: float | str | mpmath.mpf, y: float | str | mpmath.mpf, dps: int = 60
) -> mpmath.mpf:
    r"""The Boltzmann operator of two entries written out,
    :math:`\operatorname{boltz}(x, y) = (x e^x + y e^y)/(e^x + e^y)`, at ``dps`` digits.

    The literal two-point formula, without the shift and the bounds of :func:`boltz_mp`: an
    evaluation independent of it, which Chapter 1's check C4 uses to confirm that two vectors
    found by root finding on :func:`boltz_mp` share one Boltzmann value.

    Args:
        x, y: the two entries, finite reals (Python or numpy floats and ints, decimal strings
            such as ``"0.2"``, read as the decimal at ``dps`` digits, or mpf, read exactly when
            they carry at most ``dps`` digits).
        dps: decimal digits of working precision, ``15 <= dps <= MAX_DPS``.

    Returns:
        An ``mpmath.mpf`` carrying ``dps`` digits; subtract two such values inside
        ``mpmath.workdps(dps)`` to keep them.

    Raises:
        ValueError: if ``x`` or ``y`` is not a finite real number (bools, complex numbers and
            other strings are refused), or ``dps`` is not an integer in ``[15, MAX_DPS]``.

    Accuracy:
        A relative error of a few units of ``10**-dps`` against the exact value, for entries of
        any size (mpmath has no overflow; 1e-300 to 1e300 probed): the two exponentials and four
        operations each round once at ``dps`` digits, and no sum cancels where the entries have
        one sign. Where they have both signs the error is relative to ``max(|x|, |y|)``.

    Source: K&S (ICLR 2024), the operator of Lemma 1 for ``n = 2``; the book's check C4
    (Chapter 1).
    """
    dps = positive_int("dps", dps, minimum=15, maximum=MAX_DPS)
    with mpmath.workdps(dps):
        x, y = to_mpf("x", x), to_mpf("y", y)
        return (x * mpmath.exp(x) + y * mpmath.exp(y)) / (mpmath.exp(x) + mpmath.exp(y))


def lse_mp(
    a: Sequence[float | str | mpmath.mpf] | np.ndarray | torch.Tensor, dps: int = 50
) -> mpmath.mpf:
    r"""Log-sum-exp :math:`\log\sum_i e^{a_i}` at ``dps`` digits (max-shifted, so no overflow).

    Args:
        a: 1-D sequence of ``n >= 1`` real entries, as for :func:`boltz_mp`.
        dps: decimal digits of working precision, ``>= 15``.

    Returns:
        An ``mpmath.mpf`` carrying ``dps`` digits; it lies in ``[max(a), max(a) + log(n)]``.

    Raises:
        ValueError: as :func:`boltz_mp` for bad ``a`` or ``dps``, or too many entries at
            ``dps`` digits (:data:`MAX_MP_SECONDS`).

    Accuracy:
        Absolute error below ``10**-dps * (|max(a)| + log(n))`` against a 150-digit evaluation,
        for entries of any size (1e-300 to 1e300 probed); float inputs are read exactly.

    Source: the log-sum-exp soft maximum that Chapter 1 compares with the Boltzmann operator
    (Asadi & Littman 2017); the float64 version is :func:`lib.boltzmann.soft_max_lse`.
    """
    dps = positive_int("dps", dps, minimum=15, maximum=MAX_DPS)
    entries = _entries(a, dps, "lse_mp", per_entry=(3, 1))
    with mpmath.workdps(dps):
        top = max(entries)
        return top + mpmath.log(mpmath.fsum(mpmath.exp(x - top) for x in entries))


def softmax_entropy_mp(
    a: Sequence[float | str | mpmath.mpf] | np.ndarray | torch.Tensor, dps: int = 50
) -> mpmath.mpf:
    r"""Shannon entropy :math:`H(\sigma_S[a]) = -\sum_i p_i \log p_i` of the softmax of ``a``.

    Evaluated from its definition at ``dps`` digits: first :math:`p_i = e^{a_i - m} / \sum_j
    e^{a_j - m}` (``m = max(a)``), then the logarithm of each :math:`p_i`. It does not use the
    identity :math:`H = \operatorname{LSE}(a) - \operatorname{boltz}(a)`, so it can serve as an
    independent reference for it (Chapter 1, check C1).

    Args:
        a: 1-D sequence of ``n >= 1`` real entries, as for :func:`boltz_mp`.
        dps: decimal digits of working precision, ``>= 15``.

    Returns:
        An ``mpmath.mpf`` in ``[0, log(n)]`` (natural logarithm, so the unit is nats).

    Raises:
        ValueError: as :func:`boltz_mp` for bad ``a`` or ``dps``, or too many entries at
            ``dps`` digits (:data:`MAX_MP_SECONDS`).

    Accuracy:
        Absolute error below ``10**-dps * max(1, log(n))`` nats against a 150-digit evaluation,
        for entries of any size (1e-300 to 1e300 probed); float inputs are read exactly.

    Source: the entropy term of the identity behind K&S Lemma 1's ``log n`` bounds (the
    identity is the book's reconstruction). Used in Chapter 1.
    """
    dps = positive_int("dps", dps, minimum=15, maximum=MAX_DPS)
    entries = _entries(a, dps, "softmax_entropy_mp", per_entry=(5, 2))
    with mpmath.workdps(dps):
        top = max(entries)
        weights = [mpmath.exp(x - top) for x in entries]
        total = mpmath.fsum(weights)
        p = [w / total for w in weights]
        return -mpmath.fsum(q * mpmath.log(q) for q in p if q > 0)


def _entries(a: object, dps: int, what: str, per_entry: tuple[int, int]) -> list:
    """The entries of a 1-D real sequence (list, tuple, array, tensor) as mpf at ``dps`` digits,
    after :func:`require_mp_seconds` for ``per_entry`` (arithmetic, transcendental) operations
    per entry of ``what``."""
    if isinstance(a, torch.Tensor):
        a = (
            a.detach().to("cpu", torch.float64).numpy()
            if a.is_floating_point()
            else a.detach().cpu().numpy()
        )
    if isinstance(a, np.ndarray) and a.ndim != 1:
        raise ValueError(f"a must be 1-D, got shape {a.shape}")
    if not isinstance(a, list | tuple | np.ndarray):
        raise ValueError(
            f"a must be a 1-D sequence of reals (list, tuple or array), got {short_repr(a)}"
        )
    if len(a) == 0:
        raise ValueError("a must have at least one entry, got an empty sequence")
    n = len(a)
    require_mp_seconds(f"{what} of {n:,} entries", dps, per_entry[0] * n, per_entry[1] * n)
    with mpmath.workdps(dps):
        return [to_mpf(f"a[{i}]", x) for i, x in enumerate(a)]


def min_gap(
    values: Sequence[float | str | mpmath.mpf] | np.ndarray | torch.Tensor,
    dps: int = 50,
    *,
    distinct: bool = True,
) -> mpmath.mpf:
    """Smallest distance between two entries of ``values``, computed at ``dps`` digits.

    Sorting makes this ``O(m log m)``: the minimum pairwise distance is the minimum difference of
    neighbours in sorted order.

    Args:
        values: a sequence of at least two real scalars (mpf, floats, decimal strings).
        dps: decimal digits, ``>= 15``; use the precision the values were computed at.
        distinct: if True (default), equal entries are treated as the same value and skipped
            (the smallest distance between *distinct* entries, e.g. context ids of sequences that
            are permutations of each other); if False, equal entries give a gap of 0 (a
            collision).

    Returns:
        The gap as an ``mpmath.mpf``; ``mpmath.inf`` when ``distinct`` and all entries are equal.

    Raises:
        ValueError: if fewer than two values are given, a value is not a finite real, or the
            values and digits would exceed :data:`MAX_MP_SECONDS` (:func:`mp_seconds`).

    Accuracy:
        Each value is first rounded to ``dps`` digits (floats are exact, an mpf carrying more
        digits is rounded); the gap is then their difference correctly rounded to ``dps``
        digits, and the sorting and the zero test are exact.

    Source: the "minimum gap" of K&S Lemma 1 and Theorem 2 (the book's checks C3 and C6).
    Used in Chapters 1-2.
    """
    dps = positive_int("dps", dps, minimum=15, maximum=MAX_DPS)
    distinct = flag("distinct", distinct)
    if isinstance(values, torch.Tensor | np.ndarray):
        values = list(
            np.asarray(values.tolist() if isinstance(values, torch.Tensor) else values).ravel()
        )
    if not isinstance(values, list | tuple):
        raise ValueError(
            f"values must be a list, tuple or array of reals, got {short_repr(values)}"
        )
    values = list(values)
    if len(values) < 2:
        raise ValueError(f"values must hold at least two entries, got {len(values)}")
    m = len(values)
    require_mp_seconds(f"min_gap of {m:,} values", dps, m * (math.log2(m) + 3))
    with mpmath.workdps(dps):
        xs = sorted(to_mpf(f"values[{i}]", v) for i, v in enumerate(values))
        gaps = [hi - lo for lo, hi in zip(xs, xs[1:], strict=False)]
        if distinct:
            gaps = [g for g in gaps if g != 0]
        return min(gaps) if gaps else mpmath.inf


def _matrix(name: str, M: ArrayLike | torch.Tensor) -> list[list[mpmath.mpf]]:
    arr = np.asarray(
        M.detach().to("cpu", torch.float64).numpy() if isinstance(M, torch.Tensor) else M,
        dtype=np.float64,
    )
    if arr.ndim != 2 or not np.isfinite(arr).all():
        raise ValueError(f"{name} must be a finite matrix, got shape {arr.shape}")
    return [[mpmath.mpf(float(x)) for x in row] for row in arr]


def _matmul_t(
    A: Sequence[Sequence[mpmath.mpf]], B: Sequence[Sequence[mpmath.mpf]]
) -> list[list[mpmath.mpf]]:
    """``A @ B.T`` for lists of mpf rows."""
    return [[mpmath.fsum(a * b for a, b in zip(row, col, strict=True)) for col in B] for row in A]


def _mp_entry(name: str, value: object) -> mpmath.mpf:
    """An mpf kept as it is (after a finiteness check) or a real scalar converted by
    :func:`to_mpf`."""
    if isinstance(value, mpmath.mpf):
        if not mpmath.isfinite(value):
            raise ValueError(f"{name} must be finite, got {short_repr(value)}")
        return value
    return to_mpf(name, value)


def project_mp(rows: Iterable[Sequence[Any]], v: ArrayLike) -> list:
    """``[v . row for row in rows]`` in mpmath at the current precision (``mpmath.workdps``).

    Args:
        rows: sequences of mpf (or real scalars) of length ``d``, e.g. the context ids of
            :func:`attention_mp`; v: ``d`` real numbers (the projection direction), 1-D.

    Returns:
        A list of mpf, one per row.

    Raises:
        ValueError: if ``v`` is not a finite real vector (NaN, ``None``, complex and bool are
            refused), ``rows`` is not a sequence of sequences, a row's length differs from
            ``len(v)``, an entry of a row is not a finite real number, or the products would
            exceed :data:`MAX_MP_SECONDS` at the current precision (:func:`mp_seconds`).

    Accuracy:
        At mpmath's current precision ``2**-prec``: ``v`` is read exactly, each product is
        rounded once and ``mpmath.fsum`` rounds the sum, so each result is within about
        ``(d + 1) 2**-prec`` times ``sum_j |v_j row_j|`` of the exact value.

    Used by :mod:`lib.memorization` and :mod:`lib.approximation` (Chapters 3-4).
    """
    v = as_float_array("v", v)
    if v.ndim != 1:
        raise ValueError(f"v must be 1-D, got shape {v.shape}")
    vm = [mpmath.mpf(float(c)) for c in v]
    if isinstance(rows, str | bytes) or not hasattr(rows, "__iter__"):
        raise ValueError(f"rows must be a sequence of rows, got {short_repr(rows)}")
    checked = []
    for i, r in enumerate(rows):
        if isinstance(r, str | bytes) or not hasattr(r, "__len__"):
            raise ValueError(
                f"rows[{i}] must be a sequence of {len(vm)} reals, got {short_repr(r)}"
            )
        if len(r) != len(vm):
            raise ValueError(
                f"rows must have length {len(vm)} like v, got a row of length {len(r)}"
            )
        checked.append([_mp_entry(f"rows[{i}][{j}]", c) for j, c in enumerate(r)])
    require_mp_seconds(
        f"project_mp of {len(checked):,} rows", mpmath.mp.dps, 2 * len(checked) * len(vm)
    )
    return [row[0] for row in _matmul_t(checked, [vm])]


def attention_mp(
    X: ArrayLike, layer: SelfAttention, dps: int = 50, rows: int | None = None
) -> list:
    """Evaluate a :class:`lib.layers.SelfAttention` exactly (mpmath, ``dps`` digits).

    The layer's float weights are read as the exact binary numbers they are, so this is the
    same layer computed without rounding: the ground truth for float32/float64 evaluations.

    Args:
        X: one sequence ``(n, d)`` or a family ``(N, n, d)`` (numpy, torch or nested lists;
            floats are converted exactly).
        layer: a ``SelfAttention`` (softmax or hardmax, any rank, with or without residual).
        dps: decimal digits, ``15 <= dps <= MAX_DPS``.
        rows: if given (``1 <= rows <= n``), only the outputs of the first ``rows`` tokens are
            computed (every token still serves as a key), as ``SelfAttention.forward(rows=...)``.

    Returns:
        For ``(n, d)`` input, a list of ``n`` (or ``rows``) rows of ``d`` mpf; for ``(N, n, d)``,
        a list of ``N`` such outputs. Each mpf carries ``dps`` digits.

    Raises:
        ValueError: for a shape that does not match the layer, NaN/inf, complex or bool input,
            a bad ``dps`` or ``rows``, more than :data:`MAX_MP_TERMS` score terms, or a call
            :func:`mp_seconds` expects to exceed :data:`MAX_MP_SECONDS` at ``dps`` digits (both
            checked before any is computed).

    Accuracy:
        Inputs and weights are read exactly; every sum, product and ``exp`` is rounded at
        ``dps`` digits, so each output is within a few units of ``10**-dps`` times the size of
        the terms it sums (not correctly rounded). The hardmax's tie test is exact at ``dps``
        digits.

    Source: K&S (ICLR 2024), the layer of Theorem 2, evaluated exactly because float64 reports
    false collisions between its context ids. Chapter 2 (checks C6-C8).
    """
    from .layers import SelfAttention

    if not isinstance(layer, SelfAttention):
        raise ValueError(f"layer must be a lib.layers.SelfAttention, got {short_repr(layer)}")
    dps = positive_int("dps", dps, minimum=15, maximum=MAX_DPS)
    arr = as_float_array("X", X, min_ndim=2)
    if arr.ndim not in (2, 3) or arr.shape[-1] != layer.d:
        raise ValueError(f"X must have shape (n, {layer.d}) or (N, n, {layer.d}), got {arr.shape}")
    rows = arr.shape[-2] if rows is None else positive_int("rows", rows, maximum=arr.shape[-2])
    sequences = arr.shape[0] if arr.ndim == 3 else 1
    require_size(
        f"attention_mp on {sequences:,} sequence(s) of {arr.shape[-2]:,} tokens: the exact score "
        "terms (sequences x outputs x keys x head size)",
        sequences * rows * arr.shape[-2] * layer.head_dim,
        MAX_MP_TERMS,
        "lib.exact.MAX_MP_TERMS",
    )
    n, s_, d = arr.shape[-2], layer.head_dim, layer.d
    require_mp_seconds(
        f"attention_mp on {sequences:,} sequence(s) of {n:,} tokens",
        dps,
        sequences * (2 * n * d * s_ * 3 + 2 * rows * n * s_ * 2 + 2 * rows * d * s_),
        sequences * rows * n if layer.normalizer == "softmax" else 0,
    )
    if arr.ndim == 3:
        return [attention_mp(seq, layer, dps, rows) for seq in arr]
    with mpmath.workdps(dps):
        W = {name: _matrix(name, M) for name, M in layer.weights().items()}
        x = [[mpmath.mpf(float(v)) for v in row] for row in arr]
        k, v = (_matmul_t(x, W[name]) for name in ("W_K", "W_V"))
        q = _matmul_t(x[:rows], W["W_Q"])
        scores = _matmul_t(q, k)  # scores[ell][m] = q_ell . k_m
        out = []
        for ell, row in enumerate(scores):
            top = max(row)
            if layer.normalizer == "softmax":
                weights = [mpmath.exp(sc - top) for sc in row]
            else:
                weights = [mpmath.mpf(1) if sc == top else mpmath.mpf(0) for sc in row]
            total = mpmath.fsum(weights)
            head = [
                mpmath.fsum(wt * v[m][j] for m, wt in enumerate(weights)) / total
                for j in range(layer.head_dim)
            ]
            res = [
                mpmath.fsum(W["W_O"][i][j] * head[j] for j in range(layer.head_dim))
                for i in range(layer.d)
            ]
            out.append([x[ell][i] + res[i] if layer.residual else res[i] for i in range(layer.d)])
        return out


def min_distance(
    points: Sequence[Sequence[Any] | np.ndarray | torch.Tensor],
    dps: int = 50,
    *,
    distinct: bool = True,
) -> mpmath.mpf:
    """Smallest Euclidean distance between two of ``points`` (vectors of mpf), at ``dps`` digits.

    ``O(m^2)`` pairs: meant for the few hundred context ids of Chapter 2.

    Args:
        points: a sequence of ``m >= 2`` equal-length sequences of reals (e.g. rows returned by
            :func:`attention_mp`), or a real numpy array or torch tensor ``(m, d)`` whose rows
            are the points.
        dps: decimal digits, ``15 <= dps <= MAX_DPS``.
        distinct: skip pairs at distance exactly 0 (as :func:`min_gap`).

    Returns:
        The distance as an mpf (``mpmath.inf`` if ``distinct`` and all points coincide).

    Raises:
        ValueError: for fewer than two points, ragged points, non-finite or non-real coordinates,
            more than :data:`MAX_PAIRS` pairs to compare, or pairs x coordinates x digits that
            :func:`mp_seconds` expects to exceed :data:`MAX_MP_SECONDS` (checked before any is
            computed).

    Accuracy:
        Relative error below ``10**-dps`` against a 150-digit evaluation for float coordinates
        of any size (1e-300 to 1e300 probed): each coordinate is rounded to ``dps`` digits (floats
        exactly), then the differences, squares, ``fsum`` and square root are each rounded once.

    Source: the distance between context ids in K&S Theorem 2 (the book's checks C6-C8).
    Used in Chapter 2.
    """
    dps = positive_int("dps", dps, minimum=15, maximum=MAX_DPS)
    distinct = flag("distinct", distinct)
    if isinstance(points, np.ndarray | torch.Tensor):  # an array (m, d): its rows are the points
        if points.ndim != 2:
            raise ValueError(f"points must be an array (m, d), got shape {tuple(points.shape)}")
        points = list(points)
    if not isinstance(points, list | tuple) or len(points) < 2:
        raise ValueError(f"points must be a list of at least two vectors, got {short_repr(points)}")
    require_size(
        f"min_distance over {len(points):,} points: the number of pairs",
        len(points) * (len(points) - 1) // 2,
        MAX_PAIRS,
        "lib.exact.MAX_PAIRS",
    )
    for i, p in enumerate(points):
        if not isinstance(p, list | tuple | np.ndarray | torch.Tensor) or len(p) == 0:
            raise ValueError(
                f"points[{i}] must be a non-empty vector (list, tuple or array), "
                f"got {short_repr(p)}"
            )
    pairs, width = len(points) * (len(points) - 1) // 2, max(len(p) for p in points)
    require_mp_seconds(
        f"min_distance over {len(points):,} points of {width:,} coordinates",
        dps,
        pairs * (3 * width + 12),  # a square root costs about ten multiplications
    )
    with mpmath.workdps(dps):
        P = [[to_mpf(f"points[{i}]", c) for c in p] for i, p in enumerate(points)]
        if len({len(p) for p in P}) != 1:
            raise ValueError("points must all have the same length")
        best = mpmath.inf
        for i in range(len(P)):
            for j in range(i + 1, len(P)):
                dist = mpmath.sqrt(
                    mpmath.fsum((a - b) ** 2 for a, b in zip(P[i], P[j], strict=True))
                )
                if (dist > 0 or not distinct) and dist < best:
                    best = dist
        return best
