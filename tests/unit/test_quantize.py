"""lib.quantize: the quantizer of K&S Proposition 1, its cells, bad sets and their measures."""

import math
import re

import mpmath
import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from oracles import U, derandomized_settings

from lib import quantize

SETTINGS = derandomized_settings()


def test_quantizer_exact_on_cell_interiors_and_bounded_on_ramps():
    q = quantize.quantizer(4, 2, tau=0.05)  # cells of width 1/4, representatives 1/8, 3/8, 5/8, 7/8
    pts = torch.tensor([[0.01, 0.99], [0.19, 0.26], [0.5, 0.69], [-3.0, 7.0]], dtype=torch.float64)
    expected = [[0.125, 0.875], [0.125, 0.375], [0.625, 0.625], [0.125, 0.875]]
    np.testing.assert_allclose(q(pts).detach().numpy(), expected, atol=1e-12)
    # on a ramp (0.2, 0.25) the output moves linearly between the neighbouring representatives
    ramp = q(torch.tensor([[0.225, 0.225]], dtype=torch.float64)).detach().numpy()
    np.testing.assert_allclose(ramp, [[0.25, 0.25]], atol=1e-12)
    # residual: 2 (m - 1) ramp units and 2 cancelling units per coordinate, and the forward pass is
    # the displayed formula Z + W2 relu(W1 Z + b1) + b2 (explicit numpy)
    assert q.width == 2 * 3 * 2 + 2 * 2 and q.residual
    W = {k: v.numpy() for k, v in q.weights().items()}
    Z = pts.numpy()
    np.testing.assert_allclose(
        Z + np.maximum(Z @ W["W1"].T + W["b1"], 0) @ W["W2"].T + W["b2"], expected, atol=1e-12
    )


def test_cell_representatives_avoid_zero():
    np.testing.assert_allclose(quantize.cell_representatives(4), [0.125, 0.375, 0.625, 0.875])
    reps = quantize.cell_representatives(3, low=-1.5, high=1.5)  # the middle centre would be 0
    assert np.all(reps != 0) and np.allclose(np.diff(reps), 1.0)


def test_measures_closed_forms():
    assert quantize.duplicate_cell_measure(4, 3, 1) == pytest.approx(1 - (3 / 4) * (2 / 4))
    assert quantize.duplicate_cell_measure(2, 3, 1) == 1.0  # more tokens than cells
    assert quantize.duplicate_cell_measure(10, 2, 2) == pytest.approx(1 / 100)
    assert quantize.ramp_measure(4, 3, 1, 0.05) == pytest.approx(1 - (1 - 3 * 0.05) ** 3)
    # Monte Carlo agreement of the duplicate measure (independent computation)
    rng = np.random.default_rng(0)
    cells = np.floor(rng.uniform(size=(20000, 3)) * 5)
    dup = np.mean([len(set(row)) < 3 for row in cells])
    assert dup == pytest.approx(quantize.duplicate_cell_measure(5, 3, 1), abs=0.01)


def test_bad_sets_hand_computed():
    # m = 4, tau = 0.05: ramps (0.2, 0.25), (0.45, 0.5), (0.7, 0.75)
    X = np.array(
        [
            [[0.1], [0.3], [0.6]],  # clean
            [[0.1], [0.22], [0.6]],  # a ramp (0.22 also shares cell 0 with 0.1)
            [[0.1], [0.15], [0.6]],  # two tokens in cell 0
            [[0.0], [0.25], [1.0]],
        ]
    )  # grid points and ends are not on ramps
    ramp, dup = quantize.bad_sets(X, 4, 0.05)
    assert ramp.tolist() == [False, True, False, False]
    assert dup.tolist() == [False, True, True, False]


def test_cell_representatives_decide_zero_without_rounding_artefacts():
    # low = -0.21, high = 0.21, m = 3: the exact middle centre is 0 (the bounds are exact
    # negatives), float64 computes -2.8e-17; it must count as 0 and the documented h/4 shift must
    # happen
    h = (0.21 - -0.21) / 3
    reps = quantize.cell_representatives(3, -0.21, 0.21)
    assert reps[1] == h / 4
    np.testing.assert_allclose(reps, np.array([-h, 0.0, h]) + h / 4, rtol=0, atol=1e-16)
    # every symmetric box with an odd m has an exactly-zero middle centre: always shifted to h/4
    for a in np.linspace(0.01, 3.0, 150):
        for m in (1, 3, 5, 7, 9, 11):
            reps = quantize.cell_representatives(m, -a, a)
            assert reps[(m - 1) // 2] == (2 * a / m) / 4 and np.all(reps != 0)
    # a box whose centres are all far from 0 (exact rationals: min |centre| >= h/2 - ulps) is not
    # shifted
    for low, high, m in ((0.0, 1.0, 4), (-0.3, 0.7, 2), (0.1, 0.9, 5), (-1.0, 2.0, 2)):
        hh = (high - low) / m
        np.testing.assert_array_equal(
            quantize.cell_representatives(m, low, high), low + (np.arange(m) + 0.5) * hh
        )


@pytest.mark.parametrize(
    "tau, match",
    [
        (0.25, "tau must be below the cell width h = (high - low) / m = 0.25, got tau=0.25"),
        (0.3, "tau must be below the cell width"),
        (float("nan"), "tau must be finite, got nan"),
        (-0.01, "tau must be > 0.0, got -0.01"),
        (0.01j, "tau must be a real number, got 0.01j"),
        (True, "tau must be a real number, got True"),
        (None, "tau must be a real number, got None"),
    ],
)
def test_bad_sets_validates_tau_like_the_quantizer(tau, match):
    X = np.zeros((1, 2, 1))
    with pytest.raises(ValueError, match=re.escape(match)):
        quantize.bad_sets(X, 4, tau)
    with pytest.raises(ValueError, match=re.escape(match)):
        quantize.quantizer(4, 1, tau)


def test_bad_sets_use_the_quantizers_own_grid_lines():
    # m = 2 on [-0.3, 0.7]: the line is at 0.2; (x + 0.3) / 0.5 rounds up to 1 for the float just
    # below it, which the quantizer (and so the cell) puts below the line
    x = np.nextafter(0.2, 0)
    ramp, dup = quantize.bad_sets(np.array([[[x], [0.45]]]), 2, 1e-3, low=-0.3, high=0.7)
    assert ramp.tolist() == [True] and dup.tolist() == [False]
    # independent: cells and ramps read off the quantizer's weights (b1 = -(t - tau), -t), many m,
    # h inexact
    rng = np.random.default_rng(5)
    for m in (3, 6, 7, 10):
        tau = 0.1 / m**2
        q = quantize.quantizer(m, 1, tau)
        b1 = q.weights()["b1"].numpy()[: 2 * (m - 1)]  # the ramp units (then the 2 cancelling ones)
        starts, lines = -b1[0::2], -b1[1::2]
        pts = np.concatenate(
            [
                lines,
                np.nextafter(lines, 0),
                np.nextafter(lines, 1),
                starts,
                np.nextafter(starts, 1),
                rng.uniform(size=50),
            ]
        )
        X = np.stack([pts, np.full_like(pts, 0.999)], axis=1)[:, :, None]
        ramp, dup = quantize.bad_sets(X, m, tau)
        cells = (pts[:, None] >= lines[None]).sum(1)
        want_ramp = ((pts[:, None] > starts[None]) & (pts[:, None] < lines[None])).any(1)
        np.testing.assert_array_equal(ramp, want_ramp)
        np.testing.assert_array_equal(dup, cells == m - 1)


@pytest.mark.parametrize("tau", [1e-2, 1e-6, 1e-10, 2.5e-13])
def test_quantizer_float64_error_bounds_the_measured_error(tau):
    import mpmath

    from lib.interpolation import ffn_mp

    m = 4
    layer = quantize.quantizer(m, 1, tau)
    x = np.random.default_rng(1).random(400)
    x = np.concatenate([x, [0.52495, 0.25 - tau / 2, 0.75 - tau / 3]])
    with torch.no_grad():
        got = layer(torch.as_tensor(x[:, None])).numpy()[:, 0]
    weights = {k: v.detach().numpy() for k, v in layer.weights().items()}
    with mpmath.workdps(60):
        want = np.array([float(r[0]) for r in ffn_mp(x[:, None].tolist(), weights)])
    bound = quantize.quantizer_float64_error(m, 1, tau, x_max=1.0)
    assert np.abs(got - want).max() <= bound


def test_jump_and_quantized_jump_differ_on_h_over_3_plus_tau_over_6():
    # the exercise of Chapter 4: a = 1/3, m = 4 (m = 1 mod 3): f and f(q) differ exactly on
    # [1/4 - tau/6, 1/3), a length h/3 + tau/6
    m, tau = 4, 0.1 / 16
    x = np.linspace(0.0, 1.0, 200_001)[:, None, None]
    f, g = quantize.jump(x, 1 / 3), quantize.quantized_jump(x, m, tau, 1 / 3)
    assert set(np.unique(f)) == {0.0, 1.0} and f.shape == g.shape == x.shape
    differ = x[f != g]
    assert differ.min() == pytest.approx(0.25 - tau / 6, abs=1e-5)
    assert differ.max() < 1 / 3 <= x[x > differ.max()].min()
    assert (f != g).mean() == pytest.approx(1 / (3 * m) + tau / 6, abs=2e-5)
    np.testing.assert_array_equal(quantize.jump([0.2, 1 / 3, 0.5], 1 / 3), [0.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="a must be finite"):
        quantize.jump(x, math.nan)
    with pytest.raises(ValueError, match="tau must be below"):
        quantize.quantized_jump(x, 4, 0.3, 1 / 3)


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


@SETTINGS
@given(
    m=st.integers(2, 50),
    n=st.integers(1, 40),
    d=st.integers(1, 40),
    tau_exp=st.floats(-40, -0.5),
)
def test_ramp_measure_against_mpmath(m, n, d, tau_exp):
    h = 1.0 / m
    tau = h * 10.0**tau_exp
    got = quantize.ramp_measure(m, n, d, tau)
    with mpmath.workdps(60):
        q = (m - 1) * mpmath.mpf(tau) / 1
        want = 1 - (1 - q) ** (n * d)
    # q (two roundings), log1p, the product with n d and expm1 each carry about u of relative
    # error; 1 - e^-x has condition x e^-x / (1 - e^-x) <= 1 in x
    assert abs(got - float(want)) <= 8 * U * float(want)
    assert 0.0 < got <= 1.0


def test_ramp_measure_does_not_cancel_to_zero():
    got = quantize.ramp_measure(3, 1, 1, 5e-18)
    assert got == pytest.approx(1e-17, rel=4 * U)
