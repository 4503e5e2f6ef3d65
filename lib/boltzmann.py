r"""The Boltzmann operator (Chapter 1).

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

The quantities of K&S Lemma 1 (its gap, its bound, the lattice check and the search beyond
lattices) are in :mod:`lib.lemma1`.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from typing import overload

import numpy as np
import torch
from numpy.typing import ArrayLike

from ._validate import (
    all_finite,
    as_float_array,
    finite_real,
    function,
    real_tensor,
    short_repr,
)

__all__ = [
    "boltz",
    "boltz_bounds",
    "dboltz_dbeta",
    "dscaled_boltz_dbeta",
    "linf_lipschitz",
    "expansion_ratio",
    "soft_max_lse",
    "mellowmax",
]


def _as_tensor(name: str, a: ArrayLike | torch.Tensor) -> tuple[torch.Tensor, bool]:
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


def _as_dim(a: torch.Tensor, dim: object) -> int:
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


def _scaled(
    a: ArrayLike | torch.Tensor,
    beta: float,
    dim: int,
    *,
    name: str = "beta",
    positive: bool = False,
) -> tuple[torch.Tensor, bool, int, torch.Tensor]:
    """Validate ``(a, beta, dim)`` and return ``(tensor, was_numpy, dim, z)``.

    ``z`` is ``beta * (a - c)`` with ``c`` the heaviest entry along ``dim`` (the largest for
    ``beta >= 0``, else the smallest): the logits of the softmax up to a shift, which the softmax
    ignores and a log-sum-exp adds back.
    """
    beta = finite_real(name, beta, minimum=0.0 if positive else None, strict=positive)
    t, was_numpy = _as_tensor("a", a)
    dim = _as_dim(t, dim)
    if not torch.isfinite(t * beta).all():
        raise ValueError(
            f"{name} * a overflows {t.dtype} ({name}={beta!r}, max |a|={t.abs().max().item():.3g})"
        )
    # The softmax is shift-invariant: subtract the heaviest entry (the largest for beta >= 0,
    # the smallest for beta < 0) before multiplying by beta, so
    # that entries far from 0 (1e15 + 0.125) keep their differences; beta * a rounded first
    # would move each logit by up to half an ulp of beta * a (0.5 at 7e15), not of the
    # difference. Where the difference itself overflows (entries of both signs near the float
    # limit) the product is taken first: such a weight is 0 either way.
    centre = (t.detach().amax if beta >= 0 else t.detach().amin)(dim=dim, keepdim=True)
    z = (t - centre) * beta
    if not torch.isfinite(z).all():
        z = torch.where(torch.isfinite(z), z, t * beta - centre * beta)
    return t, was_numpy, dim, z


def _finite(name: str, out: torch.Tensor) -> torch.Tensor:
    """Refuse a result that overflowed (or is NaN) instead of returning it silently."""
    if not torch.isfinite(out).all():
        raise ValueError(f"{name} overflows {out.dtype} for these arguments; rescale the input")
    return out


def _back(out: torch.Tensor, was_numpy: bool) -> torch.Tensor | np.ndarray | np.float64:
    if not was_numpy:
        return out
    arr = out.numpy()
    return arr[()] if arr.ndim == 0 else arr


@overload
def boltz(a: torch.Tensor, beta: float = 1.0, dim: int = -1) -> torch.Tensor: ...
@overload
def boltz(a: ArrayLike, beta: float = 1.0, dim: int = -1) -> np.ndarray | np.float64: ...


def boltz(
    a: ArrayLike | torch.Tensor, beta: float = 1.0, dim: int = -1
) -> torch.Tensor | np.ndarray | np.float64:
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

    Accuracy:
        Absolute error a few units of ``u * max|a|`` (u the dtype's unit roundoff, ``2**-53``
        for float64, ``2**-24`` for float32), for entries from 1e-300 to 1e300 in size and any
        ``beta`` with ``beta * a`` finite: at most ``8 u max|a|`` against mpmath for
        ``n <= 200``, growing with ``n`` through the sums (about ``250 u max|a|`` at
        ``n = 10**4``, ``5000 u max|a|`` at ``n = 10**5``). The error is relative to the largest
        entry, not to the result: a result near 0 from entries of both signs may have no correct
        digits. The softmax is shifted by the heaviest entry, so ``|beta * a|`` of 1e6 and beyond
        stays finite; a ``beta * a`` that overflows the dtype is refused with ValueError.

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


@overload
def dboltz_dbeta(a: torch.Tensor, beta: float = 1.0, dim: int = -1) -> torch.Tensor: ...
@overload
def dboltz_dbeta(a: ArrayLike, beta: float = 1.0, dim: int = -1) -> np.ndarray | np.float64: ...


def dboltz_dbeta(
    a: ArrayLike | torch.Tensor, beta: float = 1.0, dim: int = -1
) -> torch.Tensor | np.ndarray | np.float64:
    r"""Temperature derivative :math:`\frac{d}{d\beta}\operatorname{boltz}_\beta(a) =
    \operatorname{Var}_{\sigma_S[\beta a]}(a)`.

    The variance of the entries under the softmax weights :math:`p = \sigma_S[\beta a]`,
    computed as :math:`\sum_i p_i (a_i - \operatorname{boltz}_\beta(a))^2` (non-negative by
    construction, which is the monotonicity of :func:`boltz` in ``beta``), with the entries
    first shifted by the heaviest one, so that entries far from the origin keep their differences
    (``[1e15, 1e15 + 0.125, 1e15 + 0.25]`` gives the variance of ``[0, 0.125, 0.25]`` for every
    ``beta``: the weights come from ``beta (a_i - a_k)``, not from ``beta a_i`` rounded far from
    the origin). A term
    whose weight lies below the dtype's normal range, or whose squared deviation overflows, is
    formed as ``exp(log p_i + 2 log|a_i - mean|)``, so a variance among the subnormals is not
    returned as 0 and gradients stay finite.

    Args and returns as :func:`boltz`.

    Raises:
        ValueError: as :func:`boltz` for ``a``, ``beta`` and ``dim``; for the variance itself
            only when it overflows the dtype.

    Accuracy:
        Relative error at most about ``(32 + 2 Z) u`` against mpmath, with
        ``Z = max_i |beta (a_i - a_k)|`` (``a_k`` the heaviest entry, u the dtype's unit
        roundoff), for entries from 1e-300 to 1e300 in size wherever the variance is a normal
        number; a term formed through logarithms because its squared deviation overflows adds
        about ``2 ln|a_i - a_k| u`` (under ``1420 u`` in float64). ``Z`` can reach about 2100
        with a representable variance, so the worst case is a few thousand u, not a few u
        (``a = [0, 1e300]``, ``beta = 1.5003e-297``: 1145 u). Below the normal range the error
        is absolute, at most about ``10 n`` units of the smallest subnormal number.

    Source: differentiation of the softmax, the book's check C2 of the Boltzmann operator of K&S
    Lemma 1. Used in Chapter 1.
    """
    t, was_numpy, dim, z = _scaled(a, beta, dim)
    p = torch.softmax(z, dim=dim)
    # The variance is shift-invariant: centre on the heaviest entry first, so that entries far
    # from 0 (1e15 + 0.125) keep their differences instead of cancelling in the squares.
    centre = t.detach().gather(dim, p.detach().argmax(dim=dim, keepdim=True))
    u = t - centre
    scale = 1.0
    if not all_finite(u):
        # entries of both signs near the float limit: their difference overflows, half of it
        # does not; the variance of a / 2 times 4 is the variance (it overflows only if the
        # variance itself does)
        u, scale = t / 2 - centre / 2, 4.0
    mean = (u * p).sum(dim=dim, keepdim=True)
    dev = u - mean
    # A weight below float's normal range has lost digits (or underflowed to 0: e^-796 under a
    # deviation of 8.75e14 is a term of 1.9e-316, not 0), and a deviation's square may overflow
    # under a small weight: such terms come from logarithms, exp(log p + 2 log|dev|). Both
    # branches are kept finite where they are not taken, so gradients stay finite.
    with torch.no_grad():
        far = (p < torch.finfo(p.dtype).tiny) | ~torch.isfinite(p * dev**2)
    if bool(far.any()):
        use = far & (dev != 0)
        logp = torch.where(use, torch.log_softmax(z, dim=dim), 0.0)
        via_logs = torch.exp(logp + 2 * torch.log(torch.where(use, dev.abs(), 1.0)))
        terms = torch.where(use, via_logs, p * torch.where(far, 0.0, dev) ** 2)
    else:
        terms = p * dev**2
    return _back(_finite("the variance", terms.sum(dim=dim) * scale), was_numpy)


@overload
def dscaled_boltz_dbeta(a: torch.Tensor, beta: float = 1.0, dim: int = -1) -> torch.Tensor: ...
@overload
def dscaled_boltz_dbeta(
    a: ArrayLike, beta: float = 1.0, dim: int = -1
) -> np.ndarray | np.float64: ...


def dscaled_boltz_dbeta(
    a: ArrayLike | torch.Tensor, beta: float = 1.0, dim: int = -1
) -> torch.Tensor | np.ndarray | np.float64:
    r"""Slope in ``beta`` of the scaled form :math:`\operatorname{boltz}(\beta a) =
    \beta \operatorname{boltz}_\beta(a)`:

    .. math:: \frac{d}{d\beta}\operatorname{boltz}(\beta a) = \operatorname{boltz}_\beta(a)
              + \beta \operatorname{Var}_{\sigma_S[\beta a]}(a),

    the product rule applied to :func:`boltz` and :func:`dboltz_dbeta` (evaluated as exactly that
    sum). At ``beta = 0`` it is the mean of ``a``; for ``beta > 0`` it is positive whenever the
    mean is at least 0, and a negative mean makes the scaled form dip first (Chapter 1, exercise
    ``ex-boltz-scaled``, where ``mpmath.findroot`` finds the root of this slope).

    Args:
        a: real array of shape ``(..., n, ...)``, numpy (or nested list) or torch, as
            :func:`boltz`; units those of the entries.
        beta: inverse temperature, a finite real number.
        dim: the dimension that holds the ``n`` entries.

    Returns:
        The slope with ``dim`` reduced, in the units of ``a``, as a torch tensor (of ``a``'s
        dtype) for torch input, else a numpy array (a numpy float64 scalar for 1-D input).

    Raises:
        ValueError: as :func:`boltz` and :func:`dboltz_dbeta` for ``a``, ``beta`` and ``dim``;
            and when ``beta`` times the variance, or the sum, overflows the dtype.

    Accuracy:
        The errors of :func:`boltz` (a few ``u max|a|`` absolute) plus ``|beta|`` times the
        relative error of :func:`dboltz_dbeta` (about ``(32 + 2Z) u``) times the variance, and
        two roundings of the product and the sum, ``u`` the dtype's unit roundoff; over the
        domain of those functions (entries 1e-300 to 1e300, ``beta * a`` finite). The error is
        absolute on the scale ``max|a| + |beta| Var``: a slope near its root (the chapter's
        ``beta`` of the dip) has few correct digits relative to itself.

    Source: differentiation of :math:`\beta\operatorname{boltz}_\beta(a)` (K&S, ICLR 2024, write
    the operator of Lemma 1 with ``beta`` inside); the book's exercise ``ex-boltz-scaled`` in
    Chapter 1.
    """
    beta = finite_real("beta", beta)
    level = boltz(a, beta=beta, dim=dim)
    variance = dboltz_dbeta(a, beta=beta, dim=dim)
    with np.errstate(over="ignore", invalid="ignore"):
        out = level + beta * variance
    finite = torch.isfinite(out) if isinstance(out, torch.Tensor) else np.isfinite(out)
    if not bool(finite.all()):
        raise ValueError(
            f"the slope of boltz(beta * a) overflows for beta={beta!r}: a has a variance of "
            f"up to {float(abs(variance).max()):.3g} under softmax(beta * a); rescale a or beta"
        )
    return out


def _rows(name: str, value: ArrayLike | torch.Tensor) -> torch.Tensor:
    """Points ``(m, n)`` as a torch tensor: a floating tensor keeps its dtype, anything else
    numpy reads as real numbers becomes float64."""
    if isinstance(value, torch.Tensor):
        t = real_tensor(name, value, min_ndim=2)
    else:
        t = torch.from_numpy(as_float_array(name, value, min_ndim=2))
    if t.ndim != 2:
        raise ValueError(f"{name} must have shape (m, n), got {tuple(t.shape)}")
    return t


def linf_lipschitz(op: Callable[[torch.Tensor], torch.Tensor], a: torch.Tensor) -> float:
    r"""Largest :math:`\ell_1` norm of the gradient of ``op`` over the rows of ``a``.

    For a smooth map :math:`f: \mathbb{R}^n \to \mathbb{R}` this is a lower estimate of its
    Lipschitz constant with respect to :math:`\|\cdot\|_\infty` (exact when the supremum of
    :math:`\|\nabla f\|_1` is attained among the rows); a value above 1 shows that ``f`` is not
    a non-expansion. Gradients come from torch autograd.

    Args:
        op: a function mapping a float tensor ``(m, n)`` to ``(m,)``, row by row (e.g.
            :func:`boltz`).
        a: real array ``(m, n)`` (a floating torch tensor keeps its dtype; numpy arrays, lists
            and integer tensors become float64), the points at which to evaluate the gradient.

    Returns:
        ``max_i ||grad op(a_i)||_1`` as a Python float.

    Raises:
        ValueError: if ``a`` is not a 2-D real array with finite entries, or ``op`` does not
            return one value per row, does not depend differentiably on its input, or has a
            gradient with NaN or infinity at some row.

    Accuracy:
        As accurate as ``op``'s autograd gradient: the :math:`\ell_1` norms are summed in the
        dtype of ``a``, adding a relative error of at most about ``n u``. It is a maximum over the
        given rows, a lower estimate of the Lipschitz constant, never an upper bound. A gradient
        that autograd returns as NaN is refused even where the true one is finite
        (:func:`boltz` at the row ``[1.7e308, -1.7e308]``).

    Source: Asadi & Littman (ICML 2017), non-expansion of the Boltzmann operator vs mellowmax.
    Used in Chapter 1.
    """
    function("op", op)
    a = _rows("a", a)
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


def expansion_ratio(
    op: Callable[[torch.Tensor], torch.Tensor], a: torch.Tensor, b: torch.Tensor
) -> float:
    r"""Largest ratio :math:`|f(a_i) - f(b_i)| / \|a_i - b_i\|_\infty` over pairs of rows.

    A value above 1 exhibits a pair that ``f`` pulls further apart than they were in
    :math:`\ell_\infty`: ``f`` is not a non-expansion. Values at most 1 on every pair are
    consistent with a non-expansion (they cannot prove it). Unlike :func:`linf_lipschitz`, this
    measures differences of the operator itself, not its gradient.

    Args:
        op: a function mapping a float tensor ``(m, n)`` to ``(m,)``, row by row (e.g.
            :func:`boltz`).
        a, b: real arrays of the same shape ``(m, n)`` (as ``a`` of :func:`linf_lipschitz`;
            float64 both when their dtypes differ), finite, with ``a_i != b_i`` for every row.

    Returns:
        ``max_i |op(a)_i - op(b)_i| / max_k |a_ik - b_ik|`` as a Python float.

    Raises:
        ValueError: if ``a`` or ``b`` is not a finite 2-D real array, their shapes differ,
            some row of ``a`` equals the same row of ``b``, or ``op`` does not return one value
            per row.

    Accuracy:
        Each ratio is ``op``'s outputs with two roundings in their dtype (relative error ``2u``);
        ``op``'s own absolute error ``e`` adds up to ``2e / max_k |a_ik - b_ik|``, so rows closer
        than ``op``'s error give no correct digits. Where a difference overflows (entries of
        opposite signs near the float limit) the halves are used instead, one more exact
        scaling (``[[1.7e308, 0]]`` against ``[[-1.7e308, 0]]`` gives 0.5 for :func:`boltz`).

    Source: Asadi & Littman (ICML 2017), the non-expansion property that the Boltzmann operator
    lacks and mellowmax has. Used in Chapter 1 (check B1.3).
    """
    function("op", op)
    a, b = _rows("a", a), _rows("b", b)
    if a.dtype != b.dtype:
        a, b = a.to(torch.float64), b.to(torch.float64)
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
    if not (all_finite(dist) and all_finite(fa - fb)):
        # rows of both signs near the float limit: their differences overflow, those of the
        # halves do not, and the ratio of the halves is the ratio
        dist = (a / 2 - b / 2).abs().amax(dim=-1)
        fa, fb = fa / 2, fb / 2
    value = ((fa - fb).abs() / dist).max().item()
    if not math.isfinite(value):
        raise ValueError(f"op is not finite on some row (ratio {value})")
    return value


@overload
def boltz_bounds(a: torch.Tensor, dim: int = -1) -> tuple[torch.Tensor, torch.Tensor]: ...
@overload
def boltz_bounds(
    a: ArrayLike, dim: int = -1
) -> tuple[np.ndarray | np.float64, np.ndarray | np.float64]: ...


def boltz_bounds(
    a: ArrayLike | torch.Tensor, dim: int = -1
) -> tuple[torch.Tensor | np.ndarray | np.float64, torch.Tensor | np.ndarray | np.float64]:
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

    Accuracy:
        ``upper`` is exact (a maximum). ``lower`` is ``max(a) - log(n)`` with ``log(n)`` taken in
        float64 and one subtraction rounded in the dtype of ``a``: within
        ``u (|lower| + log n)`` of the exact value.

    Source: K&S (ICLR 2024), the log n terms of Lemma 1; the identity is reconstructed by the
    book (see the Sources and certainty page). Used in Chapter 1 (check C1).
    """
    t, was_numpy = _as_tensor("a", a)
    dim = _as_dim(t, dim)
    upper = t.amax(dim=dim)
    lower = upper - math.log(t.shape[dim])
    return _back(lower, was_numpy), _back(upper, was_numpy)


@overload
def soft_max_lse(a: torch.Tensor, beta: float = 1.0, dim: int = -1) -> torch.Tensor: ...
@overload
def soft_max_lse(a: ArrayLike, beta: float = 1.0, dim: int = -1) -> np.ndarray | np.float64: ...


def soft_max_lse(
    a: ArrayLike | torch.Tensor, beta: float = 1.0, dim: int = -1
) -> torch.Tensor | np.ndarray | np.float64:
    r"""Log-sum-exp soft maximum :math:`\frac{1}{\beta}\log\sum_i e^{\beta a_i}`
    (``torch.logsumexp``).

    Args and returns as :func:`boltz`, except that ``beta`` must be positive.

    Bounds held exactly in floating point: ``max(a) <= lse <= max(a) + log(n) / beta`` (a result
    that rounding pushes past them is set to the bound).

    Raises:
        ValueError: as :func:`boltz` for ``a`` and ``dim``; for a ``beta`` that is not a
            positive finite real; for a result that overflows the dtype.

    Accuracy:
        Absolute error at most ``3 u (|max(a)| + log(n) / beta)`` against mpmath (u the dtype's
        unit roundoff), for entries from 1e-300 to 1e300 in size and ``n`` up to ``10**5``; that
        is a relative error of a few u unless ``max(a)`` and ``log(n) / beta`` cancel.

    Source: the standard smooth maximum compared with the Boltzmann operator by Asadi & Littman
    (ICML 2017). Used in Chapter 1, "Relatives of the Boltzmann operator".
    """
    t, was_numpy, dim, z = _scaled(a, beta, dim, positive=True)
    beta = float(beta)  # validated by _scaled: a Fraction or numpy scalar becomes a float
    top = t.amax(dim=dim)
    # z is beta * (a - max a) (see _scaled): the maximum is added back outside the logarithm
    out = _finite("log-sum-exp / beta", top + torch.logsumexp(z, dim=dim) / beta)
    return _back(_clamp(out, top, top + math.log(t.shape[dim]) / beta), was_numpy)


@overload
def mellowmax(a: torch.Tensor, omega: float = 1.0, dim: int = -1) -> torch.Tensor: ...
@overload
def mellowmax(a: ArrayLike, omega: float = 1.0, dim: int = -1) -> np.ndarray | np.float64: ...


def mellowmax(
    a: ArrayLike | torch.Tensor, omega: float = 1.0, dim: int = -1
) -> torch.Tensor | np.ndarray | np.float64:
    r"""Mellowmax :math:`\operatorname{mm}_\omega(a) =
    \frac{1}{\omega}\log\big(\frac1n\sum_i e^{\omega a_i}\big)`.

    Asadi & Littman's replacement for the Boltzmann operator: a non-expansion in the
    :math:`\ell_\infty` norm, between the mean (``omega -> 0``) and the maximum
    (``omega -> inf``). Equal to :func:`soft_max_lse` minus :math:`\log(n)/\omega`, but
    evaluated as :math:`\max a +
    \operatorname{log1p}(\operatorname{mean}(\operatorname{expm1}(\omega(a - \max a))))/\omega`
    so that small ``omega`` does not cancel catastrophically.

    Args, returns and errors as :func:`soft_max_lse` with ``omega`` in place of ``beta``.

    Raises:
        ValueError: as :func:`soft_max_lse`; also if ``omega`` is so small that
            ``omega * (a - max a)`` falls below the dtype's normal range for an entry below the
            maximum (its digits would be lost).

    Bounds held exactly in floating point: ``mean(a) <= mellowmax <= max(a)`` (Jensen's
    inequality; ``mean`` as ``torch.mean`` computes it, capped at ``max(a)``); a result that
    rounding pushes past them is set to the bound.

    Accuracy:
        Absolute error at most ``16 u max|a|`` against mpmath (u the dtype's unit roundoff) for
        entries from 1e-300 to 1e300 in size and ``n <= 200``, growing with ``n`` through the
        mean (about ``1000 u max|a|`` at ``n = 10**5``). The error is relative to the largest
        entry, not to the result, which may cancel to near 0.

    Source: Asadi & Littman (ICML 2017), Definition of mellowmax. Used in Chapter 1.
    """
    omega = finite_real("omega", omega, minimum=0.0, strict=True)
    t, was_numpy = _as_tensor("a", a)
    dim = _as_dim(t, dim)
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
