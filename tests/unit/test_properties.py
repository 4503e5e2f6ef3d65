"""Property tests of lib's maths against mpmath references, far from home.

Inputs are drawn by hypothesis: offsets up to 1e12, widths down to 1e-15, near and far entries
mixed. Each property compares a float64 function of ``lib`` with the same quantity evaluated
exactly (:mod:`lib.exact`, or mpmath directly), within a tolerance derived from float64's unit
roundoff and the conditioning of the quantity, never from an earlier run.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from oracles import U, derandomized_settings, projection_constant_mp

from lib import boltzmann, exact, quantize, separation

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


@st.composite
def vocabularies(draw):
    d = draw(st.integers(1, 3))
    K = draw(st.integers(2, 6))
    scale = draw(st.sampled_from([1e-12, 1e-3, 1.0, 1e6, 1e12]))
    V = scale * np.array(draw(st.lists(st.floats(-1, 1), min_size=K * d, max_size=K * d)))
    V = V.reshape(K, d)
    if draw(st.booleans()):
        V[1] = np.nextafter(V[0], np.inf)  # two tokens 1 ulp apart
    return V


@SETTINGS
@given(V=vocabularies(), seed=st.integers(0, 1000))
def test_projection_constant_against_mpmath(V, seed):
    if len(np.unique(V, axis=0)) < len(V) or (V == 0).all():
        with pytest.raises(ValueError):  # repeated tokens, or nothing but the zero token
            separation.projection_constant(np.ones(V.shape[1]), V)
        return
    w = np.random.default_rng(seed).normal(size=V.shape[1])
    want = float(projection_constant_mp(w, V))
    got = separation.projection_constant(w, V)
    # each scaled difference has unit-size entries: the dot product and norm carry about d u of
    # relative error, relative to the difference's size, i.e. absolute in c_w
    assert abs(got - want) <= 16 * V.shape[1] * U


@SETTINGS
@given(
    m=st.integers(1, 6),
    tau_exp=st.integers(-13, -2),
    x=st.lists(st.floats(0, 1), min_size=1, max_size=20),
)
def test_quantizer_float64_error_is_a_bound(m, tau_exp, x):
    import torch

    from lib.interpolation import ffn_mp

    tau = 10.0**tau_exp
    if not tau < 1.0 / m:
        return
    layer = quantize.quantizer(m, 1, tau)
    pts = np.array(x)[:, None]
    with torch.no_grad():
        got = layer(torch.as_tensor(pts)).numpy()[:, 0]
    weights = {k: v.detach().numpy() for k, v in layer.weights().items()}
    with mpmath.workdps(60):
        want = np.array([float(r[0]) for r in ffn_mp(pts.tolist(), weights)])
    assert np.abs(got - want).max() <= quantize.quantizer_float64_error(m, 1, tau)
