"""Property tests of lib's maths against mpmath references, far from home.

Inputs are drawn by hypothesis: offsets up to 1e12, widths down to 1e-15, near and far entries
mixed. Each property compares a float64 function of ``lib`` with the same quantity evaluated
exactly (:mod:`lib.exact`, or mpmath directly), within a tolerance derived from float64's unit
roundoff and the conditioning of the quantity, never from an earlier run. The projection
constant's and the quantizer's properties sit with their modules' tests (``test_separation.py``,
``test_quantize.py``).
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from oracles import U, derandomized_settings

from lib import boltzmann, exact

SETTINGS = derandomized_settings()

offsets = st.sampled_from([0.0, 1.0, -3.0, 1e3, -1e6, 1e9, 1e12, -1e12])
widths = st.sampled_from([1e-15, 1e-9, 1e-3, 1.0, 30.0])


@st.composite
def vectors(draw, n_min=2, n_max=7):
    """Entries offset + width * u_i with u_i in [-1, 1], plus now and then one far entry."""
    n = draw(st.integers(n_min, n_max))
    offset, width = draw(offsets), draw(widths)
    u = draw(st.lists(st.floats(-1, 1), min_size=n, max_size=n))
    a = offset + width * np.array(u)
    if draw(st.booleans()):
        a[draw(st.integers(0, n - 1))] = draw(offsets)
    return a


@SETTINGS
@given(a=vectors(), beta=st.sampled_from([0.0, 0.5, 1.0, 7.0, -2.0]))
def test_boltz_against_mpmath(a, beta):
    want = exact.boltz_mp(a, beta=beta, dps=60)
    top, spread = float(np.abs(a).max()), float(a.max() - a.min())
    try:
        got = boltzmann.boltz(a, beta=beta)
    except ValueError as exc:  # a refusal must say why (beta * a overflowing, say)
        assert "overflow" in str(exc) or "beta" in str(exc)
        return
    # rounding of beta * a (relative u) moves each weight by a factor exp(+-|beta| top u), which
    # moves the average by at most that factor minus one times the spread; plus the average's
    # own rounding (n terms)
    tol = 2 * math.expm1(2 * abs(beta) * top * U * len(a)) * spread + 4 * len(a) * U * top
    assert abs(got - float(want)) <= tol + 1e-300


@SETTINGS
@given(a=vectors())
def test_lse_minus_entropy_is_boltz_exactly(a):
    with mpmath.workdps(60):
        gap = exact.lse_mp(a, 60) - exact.softmax_entropy_mp(a, 60) - exact.boltz_mp(a, dps=60)
        assert abs(gap) <= mpmath.mpf(10) ** -50 * max(1, float(np.abs(a).max()))


@SETTINGS
@given(a=vectors(), beta=st.sampled_from([0.5, 1.0, 7.0]))
def test_soft_max_lse_against_mpmath(a, beta):
    got = boltzmann.soft_max_lse(a, beta=beta)
    with mpmath.workdps(60):
        want = exact.lse_mp([beta * float(x) for x in a], 60) / beta
    top = float(np.abs(a).max())
    assert abs(got - float(want)) <= 8 * len(a) * U * (top + math.log(len(a)) / beta)
