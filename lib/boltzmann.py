r"""The Boltzmann operator and the quantities of Kajitsuka & Sato's Lemma 1 (Chapter 1).

For :math:`a \in \mathbb{R}^n` and an inverse temperature :math:`\beta`,

.. math:: \operatorname{boltz}_\beta(a) = \sum_i a_i\, \sigma_S[\beta a]_i
          = \frac{\sum_i a_i e^{\beta a_i}}{\sum_j e^{\beta a_j}},

the softmax-weighted average of the entries of :math:`a` (Asadi & Littman 2017; K&S, ICLR 2024,
Lemma 1). K&S apply it with :math:`\beta = 1` to the attention scores themselves,
``boltz(a) = a^T softmax(a)``; :func:`boltz` covers both.

Every function takes numpy arrays or torch tensors and validates its input: NaN or infinity,
complex or bool entries, empty dimensions and non-finite inverse temperatures raise
:class:`ValueError`.

The bounds the docstrings state (``min(a) <= boltz(a) <= max(a)``, those of :func:`boltz_bounds`,
those of :func:`soft_max_lse` and :func:`mellowmax`) hold for the floating-point results too: a
result that rounding pushes past a bound is set to the bound (values inside the bounds are
returned exactly as computed, and gradients are those of the formula).
"""

from __future__ import annotations

import itertools
import math
import numbers
from dataclasses import dataclass

import numpy as np
import torch

from ._validate import (
    as_float_array,
    capped_comb,
    check_size,
    finite_real,
    flag,
    function,
    positive_int,
    real_tensor,
    short_repr,
)

__all__ = [
    "boltz",
    "boltz_bounds",
    "dboltz_dbeta",
    "linf_lipschitz",
    "expansion_ratio",
    "soft_max_lse",
    "mellowmax",
    "lemma1_gap",
    "lemma1_bound",
    "lemma1_digits",
    "one_winner_deficit",
    "lattice_vectors",
    "Lemma1Check",
    "lemma1_check",
    "Lemma1Search",
    "lemma1_search",
    "MAX_LATTICE_ROWS",
]

#: Largest number of vectors :func:`lattice_vectors` builds (``binom(K, n)`` rows).
MAX_LATTICE_ROWS = 2**20


def _as_tensor(name: str, a):
    """Return ``(tensor, was_numpy)``; integers become float64, complex and bool are refused."""
    if isinstance(a, torch.Tensor):
        return real_tensor(name, a), False
    return torch.from_numpy(as_float_array(name, a)), True


def _clamp(out: torch.Tensor, lo: torch.Tensor | None, hi: torch.Tensor | None) -> torch.Tensor:
    """``out`` with the entries that rounding pushed below ``lo`` or above ``hi`` set to the bound.

    Entries within the bounds are returned unchanged (bit for bit); the gradient is that of
    ``out`` everywhere (a clamped entry keeps the formula's gradient, not the bound's).
    """
    bad = torch.zeros_like(out, dtype=torch.bool)
    if lo is not None:
        bad |= out < lo
    if hi is not None:
        bad |= out > hi
    if not bool(bad.any()):
        return out
    fixed = out.detach()
    if lo is not None:
        fixed = torch.maximum(fixed, lo.detach())
    if hi is not None:
        fixed = torch.minimum(fixed, hi.detach())
    if out.requires_grad:
        fixed = fixed + (
            out - out.detach()
        )  # adds exactly 0: the value is the bound, the gradient out's
    return torch.where(bad, fixed, out)


def _check_dim(a: torch.Tensor, dim) -> int:
    if isinstance(dim, bool | np.bool_) or not isinstance(dim, numbers.Integral):
        raise ValueError(f"dim must be an int, got {short_repr(dim)}")
    dim = int(dim)
    if not -a.ndim <= dim < a.ndim:
        raise ValueError(
            f"dim must lie in [{-a.ndim}, {a.ndim - 1}] for shape {tuple(a.shape)}, got {dim}"
        )
    if a.shape[dim] == 0:
        raise ValueError(
            f"a must have at least one entry along dim={dim}, got shape {tuple(a.shape)}"
        )
    return dim


def _scaled(a, beta, dim, *, name: str = "beta", positive: bool = False):
    """Validate ``(a, beta, dim)`` and return ``(tensor, was_numpy, dim, beta * a)``."""
    beta = finite_real(name, beta, minimum=0.0 if positive else None, strict=positive)
    t, was_numpy = _as_tensor("a", a)
    dim = _check_dim(t, dim)
    z = t * beta
    if not torch.isfinite(z).all():
        raise ValueError(
            f"{name} * a overflows {t.dtype} ({name}={beta!r}, max |a|={t.abs().max().item():.3g})"
        )
    return t, was_numpy, dim, z


def _finite(name: str, out: torch.Tensor) -> torch.Tensor:
    """Refuse a result that overflowed (or is NaN) instead of returning it silently."""
    if not torch.isfinite(out).all():
        raise ValueError(f"{name} overflows {out.dtype} for these arguments; rescale the input")
    return out


def _back(out: torch.Tensor, was_numpy: bool):
    if not was_numpy:
        return out
    arr = out.numpy()
    return arr[()] if arr.ndim == 0 else arr


def boltz(a, beta: float = 1.0, dim: int = -1):
    r"""Boltzmann operator :math:`\sum_i a_i \operatorname{softmax}(\beta a)_i` along ``dim``.

    Args:
        a: real array of shape ``(..., n, ...)``; numpy array (or nested list) or torch tensor.
            Integer input is promoted to float64; torch floating dtypes are kept (float64 stays
            float64), and gradients flow through torch input.
        beta: inverse temperature, a finite real number. ``beta = 0`` gives the mean,
            ``beta -> +inf`` the maximum and ``beta -> -inf`` the minimum.
        dim: the dimension that holds the ``n`` entries.

    Returns:
        The operator with ``dim`` reduced, as a torch tensor for torch input, else a numpy array
        (a numpy float64 scalar for 1-D input). Units are those of ``a``.

    Raises:
        ValueError: if ``a`` holds NaN or infinity, is complex, bool or empty along ``dim``; if
            ``beta`` is not finite; if ``beta * a`` overflows the dtype.

    Numerically stable (torch's max-shifted softmax): finite for ``|beta * a|`` up to 1e6 and
    beyond, as long as ``beta * a`` itself is representable.

    Bounds held exactly in floating point: ``min(a) <= boltz <= max(a)``; for ``beta > 0`` also
    ``boltz >= max(a) - log(n) / beta`` and for ``beta < 0`` ``boltz <= min(a) + log(n) / |beta|``
    (:func:`boltz_bounds` applied to ``beta * a``), with the bounds evaluated in the dtype of
    ``a`` as written. Rounding alone can push the weighted sum past them (``boltz([0.1] * 5)``
    sums to ``0.10000000000000002``); such a result is set to the bound.

    Source: Kajitsuka & Sato (ICLR 2024), the Boltzmann operator of Lemma 1; Asadi & Littman
    (ICML 2017). Used in Chapter 1 and, through the attention layer, in Chapter 2.
    """
    t, was_numpy, dim, z = _scaled(a, beta, dim)
    beta = float(beta)
    out = (t * torch.softmax(z, dim=dim)).sum(dim=dim)
    hi, lo = t.amax(dim=dim), t.amin(dim=dim)
    spread = math.log(t.shape[dim])
    if beta > 0:
        lo = torch.maximum(lo, hi - spread / beta)
    elif beta < 0:
        hi = torch.minimum(hi, lo + spread / -beta)
    return _back(_clamp(out, lo, hi), was_numpy)


def dboltz_dbeta(a, beta: float = 1.0, dim: int = -1):
    r"""Temperature derivative :math:`\frac{d}{d\beta}\operatorname{boltz}_\beta(a) =
    \operatorname{Var}_{\sigma_S[\beta a]}(a)`.

    The variance of the entries under the softmax weights :math:`p = \sigma_S[\beta a]`,
    computed as :math:`\sum_i p_i (a_i - \operatorname{boltz}_\beta(a))^2` (non-negative by
    construction, which is the monotonicity of :func:`boltz` in ``beta``).

    Args, returns and errors as :func:`boltz`.

    Source: differentiation of the softmax, the book's check C2 of the Boltzmann operator of K&S
    Lemma 1. Used in Chapter 1.
    """
    t, was_numpy, dim, z = _scaled(a, beta, dim)
    p = torch.softmax(z, dim=dim)
    mean = (t * p).sum(dim=dim, keepdim=True)
    return _back(_finite("the variance", (p * (t - mean) ** 2).sum(dim=dim)), was_numpy)


def linf_lipschitz(op, a: torch.Tensor) -> float:
    r"""Largest :math:`\ell_1` norm of the gradient of ``op`` over the rows of ``a``.

    For a smooth map :math:`f: \mathbb{R}^n \to \mathbb{R}` this is a lower estimate of its
    Lipschitz constant with respect to :math:`\|\cdot\|_\infty` (exact when the supremum of
    :math:`\|\nabla f\|_1` is attained among the rows); a value above 1 shows that ``f`` is not
    a non-expansion. Gradients come from torch autograd.

    Args:
        op: a function mapping a float tensor ``(m, n)`` to ``(m,)``, row by row (e.g.
            :func:`boltz`).
        a: float tensor of shape ``(m, n)``, the points at which to evaluate the gradient.

    Returns:
        ``max_i ||grad op(a_i)||_1`` as a Python float.

    Raises:
        ValueError: if ``a`` is not a 2-D floating tensor with finite entries, or ``op`` does not
            return one value per row.

    Source: Asadi & Littman (ICML 2017), non-expansion of the Boltzmann operator vs mellowmax.
    Used in Chapter 1.
    """
    function("op", op)
    if not isinstance(a, torch.Tensor) or a.ndim != 2 or not a.is_floating_point():
        raise ValueError(f"a must be a 2-D floating torch tensor, got {short_repr(a)}")
    if a.numel() == 0:
        raise ValueError(f"a must not be empty, got shape {tuple(a.shape)}")
    if not torch.isfinite(a).all():
        raise ValueError("a must be finite")
    x = a.detach().clone().requires_grad_(True)
    out = op(x)
    if not isinstance(out, torch.Tensor) or out.shape != (a.shape[0],):
        raise ValueError(
            f"op must return shape ({a.shape[0]},), got {short_repr(getattr(out, 'shape', out))}"
        )
    if not out.requires_grad:
        raise ValueError("op's output does not depend differentiably on its input")
    (grad,) = torch.autograd.grad(out.sum(), x, allow_unused=False)
    value = grad.abs().sum(dim=-1).max().item()
    if not math.isfinite(value):
        raise ValueError(f"the gradient of op is not finite at some row of a (got {value})")
    return value


def expansion_ratio(op, a, b) -> float:
    r"""Largest ratio :math:`|f(a_i) - f(b_i)| / \|a_i - b_i\|_\infty` over pairs of rows.

    A value above 1 exhibits a pair that ``f`` pulls further apart than they were in
    :math:`\ell_\infty`: ``f`` is not a non-expansion. Values at most 1 on every pair are
    consistent with a non-expansion (they cannot prove it). Unlike :func:`linf_lipschitz`, this
    measures differences of the operator itself, not its gradient.

    Args:
        op: a function mapping a float tensor ``(m, n)`` to ``(m,)``, row by row (e.g.
            :func:`boltz`).
        a, b: float tensors of the same shape ``(m, n)``, finite, with ``a_i != b_i`` for every row.

    Returns:
        ``max_i |op(a)_i - op(b)_i| / max_k |a_ik - b_ik|`` as a Python float.

    Raises:
        ValueError: if ``a`` or ``b`` is not a finite 2-D floating tensor, their shapes differ,
            some row of ``a`` equals the same row of ``b``, or ``op`` does not return one value
            per row.

    Source: Asadi & Littman (ICML 2017), the non-expansion property that the Boltzmann operator
    lacks and mellowmax has. Used in Chapter 1 (check B1.3).
    """
    function("op", op)
    for name, t in (("a", a), ("b", b)):
        if (
            not isinstance(t, torch.Tensor)
            or t.ndim != 2
            or not t.is_floating_point()
            or t.numel() == 0
        ):
            raise ValueError(
                f"{name} must be a non-empty 2-D floating torch tensor, got {short_repr(t)}"
            )
        if not torch.isfinite(t).all():
            raise ValueError(f"{name} must be finite")
    if a.shape != b.shape:
        raise ValueError(
            f"a and b must have the same shape, got {tuple(a.shape)} and {tuple(b.shape)}"
        )
    dist = (a - b).abs().amax(dim=-1)
    if bool((dist == 0).any()):
        raise ValueError(f"row {int(torch.nonzero(dist == 0)[0, 0])} of a equals the same row of b")
    with torch.no_grad():
        fa, fb = op(a), op(b)
    for f in (fa, fb):
        if not isinstance(f, torch.Tensor) or f.shape != (a.shape[0],):
            raise ValueError(
                f"op must return shape ({a.shape[0]},), got {short_repr(getattr(f, 'shape', f))}"
            )
    value = ((fa - fb).abs() / dist).max().item()
    if not math.isfinite(value):
        raise ValueError(f"op is not finite on some row (ratio {value})")
    return value


def boltz_bounds(a, dim: int = -1):
    r"""The bounds :math:`\max(a) - \log n \le \operatorname{boltz}(a) \le \max(a)`.

    They follow from the identity :math:`\operatorname{boltz}(a) = \operatorname{LSE}(a) -
    H(\operatorname{softmax}(a))` with :math:`\max a \le \operatorname{LSE}(a)` and
    :math:`0 \le H \le \log n` (natural log). They hold for ``beta = 1``; for another
    inverse temperature apply them to ``beta * a``.

    Args:
        a: real array ``(..., n, ...)``, numpy or torch (as in :func:`boltz`).
        dim: the dimension holding the ``n`` entries.

    Returns:
        ``(lower, upper)``, each with ``dim`` reduced, of the same kind as :func:`boltz` returns.

    Raises:
        ValueError: as :func:`boltz` for bad ``a`` or ``dim``.

    Source: K&S (ICLR 2024), the log n terms of Lemma 1; the identity is reconstructed by the
    book (see the Sources and certainty page). Used in Chapter 1 (check C1).
    """
    t, was_numpy = _as_tensor("a", a)
    dim = _check_dim(t, dim)
    upper = t.amax(dim=dim)
    lower = upper - math.log(t.shape[dim])
    return _back(lower, was_numpy), _back(upper, was_numpy)


def soft_max_lse(a, beta: float = 1.0, dim: int = -1):
    r"""Log-sum-exp soft maximum :math:`\frac{1}{\beta}\log\sum_i e^{\beta a_i}`
    (``torch.logsumexp``).

    Args, returns and errors as :func:`boltz`, except that ``beta`` must be positive.

    Bounds held exactly in floating point: ``max(a) <= lse <= max(a) + log(n) / beta`` (a result
    that rounding pushes past them is set to the bound).

    Source: the standard smooth maximum compared with the Boltzmann operator by Asadi & Littman
    (ICML 2017). Used in Chapter 1, "Relatives of the Boltzmann operator".
    """
    t, was_numpy, dim, z = _scaled(a, beta, dim, positive=True)
    out = _finite("log-sum-exp / beta", torch.logsumexp(z, dim=dim) / beta)
    top = t.amax(dim=dim)
    return _back(_clamp(out, top, top + math.log(t.shape[dim]) / beta), was_numpy)


def mellowmax(a, omega: float = 1.0, dim: int = -1):
    r"""Mellowmax :math:`\operatorname{mm}_\omega(a) =
    \frac{1}{\omega}\log\big(\frac1n\sum_i e^{\omega a_i}\big)`.

    Asadi & Littman's replacement for the Boltzmann operator: a non-expansion in the
    :math:`\ell_\infty` norm, between the mean (``omega -> 0``) and the maximum
    (``omega -> inf``). Equal to :func:`soft_max_lse` minus :math:`\log(n)/\omega`, but
    evaluated as :math:`\max a +
    \operatorname{log1p}(\operatorname{mean}(\operatorname{expm1}(\omega(a - \max a))))/\omega`
    so that small ``omega`` does not cancel catastrophically.

    Args, returns and errors as :func:`soft_max_lse` with ``omega`` in place of ``beta``.

    Bounds held exactly in floating point: ``mean(a) <= mellowmax <= max(a)`` (Jensen's
    inequality; ``mean`` as ``torch.mean`` computes it, capped at ``max(a)``); a result that
    rounding pushes past them is set to the bound.

    Source: Asadi & Littman (ICML 2017), Definition of mellowmax. Used in Chapter 1.
    """
    omega = finite_real("omega", omega, minimum=0.0, strict=True)
    t, was_numpy = _as_tensor("a", a)
    dim = _check_dim(t, dim)
    top = t.amax(dim=dim, keepdim=True)
    # z <= 0; an entry whose distance to the maximum overflows is -inf, whose weight e^z is 0
    # exactly as in the limit (mellowmax([1e308, -1e308]) = 1e308 - log 2), so it is kept
    z = (t - top) * omega
    tiny = torch.finfo(t.dtype).tiny  # below it, omega * (a - max a) loses its digits
    if bool(((z.abs() < tiny) & (t != top)).any()):
        raise ValueError(
            f"omega={omega!r} is too small for {t.dtype}: omega * (a - max a) underflows"
        )
    out = _finite("mellowmax", top.squeeze(dim) + torch.log1p(torch.expm1(z).mean(dim=dim)) / omega)
    hi = top.squeeze(dim)
    return _back(_clamp(out, torch.minimum(t.mean(dim=dim), hi), hi), was_numpy)


def lemma1_gap(n: int) -> float:
    r"""The separation K&S Lemma 1 asks of the entries: :math:`2\log n + 3` (natural log).

    Args:
        n: the length of the vectors, an integer ``>= 2``.

    Returns:
        The threshold as a Python float; Lemma 1 needs entries separated by *more* than it.

    Raises:
        ValueError: if ``n`` is not an integer ``>= 2`` (the lemma's hypothesis).

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


def lemma1_digits(r: float) -> int:
    r"""Decimal digits that resolve gaps of the size K&S Lemma 1 promises, with 30 to spare.

    The promised gap :math:`(\log n)^2 e^{-2r}` has about :math:`2r/\ln 10` leading zeros;
    this returns ``30 + ceil(2 r / ln 10)``.

    Raises:
        ValueError: if ``r`` is negative or not finite, or needs more than
            :data:`lib.exact.MAX_DPS` digits.

    Source: the size of the separation K&S Lemma 1 promises (this book's precision rule).
    Used in Chapter 1 through :func:`lemma1_check`.
    """
    from .exact import MAX_DPS

    r = finite_real("r", r, minimum=0.0)
    digits = 30 + math.ceil(r * (2.0 / math.log(10.0)))
    if digits > MAX_DPS:
        raise ValueError(f"r={r!r} needs {digits} digits, more than lib.exact.MAX_DPS={MAX_DPS}")
    return digits


def one_winner_deficit(n: int) -> float:
    r"""How far below the maximum one winner and ``n - 1`` equal losers pull the operator.

    Over the family :math:`a = (0, -x, \dots, -x)`, :math:`x > 0`, the smallest value of
    :math:`\operatorname{boltz}(a) - \max a` is :math:`-W\big(\frac{n-1}{e}\big)`, with
    :math:`W` the Lambert W function: setting the derivative of
    :math:`f(x) = -x u/(1+u)`, :math:`u = (n-1)e^{-x}`, to zero gives :math:`x = 1 + u`, so
    :math:`(x-1)e^{x-1} = (n-1)/e` and :math:`f = -(x-1)`. Since
    :math:`W(z) \sim \log z - \log\log z`, the deficit approaches the bound :math:`\log n`
    of :func:`boltz_bounds` only slowly.

    Args:
        n: vector length, an integer ``>= 2``.

    Returns:
        :math:`W((n-1)/e) > 0` as a Python float (the deficit, a positive number).

    Raises:
        ValueError: if ``n < 2``.

    Source: derived in this book (Chapter 1, the sharp lower bound) to measure the tightness of the
    :math:`\log n` in K&S Lemma 1; not a statement of either paper.
    """
    import mpmath

    n = positive_int("n", n, minimum=2)
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

    Source: the book's check C3 of K&S Lemma 1. Used in Chapter 1.
    """
    n = positive_int("n", n, maximum=MAX_LATTICE_ROWS)  # a longer vector is past the limit alone
    K = positive_int("K", K, minimum=n)
    spacing = finite_real("spacing", spacing, minimum=0.0, strict=True)
    check_size(
        f"lattice_vectors({n}, {K}, ...): the number of vectors binom({K}, {n})",
        capped_comb(K, n, MAX_LATTICE_ROWS),
        MAX_LATTICE_ROWS,
        "lib.boltzmann.MAX_LATTICE_ROWS",
    )
    with np.errstate(over="ignore"):  # overflow is reported below as a ValueError
        points = (np.arange(K) - (K - 1) / 2.0) * spacing
    if not np.isfinite(points).all() or (K > 1 and not (np.diff(points) > 0).all()):
        raise ValueError(f"spacing={spacing!r} with K={K} does not give {K} distinct finite points")
    return np.array(list(itertools.combinations(points, n)), dtype=np.float64)


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
        min_gap_float64: the same minimum computed in float64 (:func:`boltz`), to show where
            float64 stops resolving the gap (it reports 0 for a false collision).
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


def lemma1_check(vectors, *, dps: int | None = None) -> Lemma1Check:
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
            permutations of each other, or ``dps < 15``.

    Source: K&S (ICLR 2024), Lemma 1 (constant recalled, see the Sources and certainty page;
    the book's check C3). Used in Chapter 1.
    """
    from . import exact

    arr = as_float_array("vectors", vectors, min_ndim=2)
    if arr.ndim != 2 or arr.shape[0] < 2 or arr.shape[1] < 2:
        raise ValueError(f"vectors must have shape (m, n) with m >= 2 and n >= 2, got {arr.shape}")
    r = float(np.abs(arr).max())
    dps = lemma1_digits(r) if dps is None else positive_int("dps", dps, minimum=15)
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

    best = None
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
    return best
