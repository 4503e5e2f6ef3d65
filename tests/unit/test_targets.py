"""lib.targets: the chapters' target functions against their formulas, in mpmath where the
float64 evaluation reduces its argument."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from oracles import U

from lib import targets


def _sine_product_mp(row) -> mpmath.mpf:
    with mpmath.workdps(400):  # sin(pi x) of x up to 1e300 needs the digits of pi x
        out = mpmath.mpf(1)
        for x in row:
            out *= mpmath.sin(mpmath.pi * mpmath.mpf(float(x)))
        return out


def test_sine_product_by_hand_and_against_mpmath():
    p = np.array([[0.5, 0.5], [1 / 6, 0.5], [1 / 6, 1 / 6], [0.0, 0.3], [0.25, 0.75]])
    want = [1.0, 0.5, 0.25, 0.0, 0.5]  # sin(pi/6) = 1/2, sin(pi/4) sin(3 pi/4) = 1/2
    np.testing.assert_allclose(targets.sine_product(p), want, rtol=0, atol=8 * U)
    rng = np.random.default_rng(0)
    for D, scale in [(1, 1.0), (2, 1.0), (3, 1e3), (4, 1e16), (2, 1e300)]:
        q = rng.uniform(-1, 1, (40, D)) * scale
        got = targets.sine_product(q)
        err = max(
            abs(mpmath.mpf(float(g)) - _sine_product_mp(r)) for g, r in zip(got, q, strict=True)
        )
        assert err <= 9 * D * U, (D, scale, float(err) / U)
    # even integers are exact zeros at any size; on [0, 1] it is the plain product of sines
    assert targets.sine_product([[2.0], [1e300], [-4.0]]).tolist() == [0.0, 0.0, 0.0]
    x = rng.uniform(size=(100, 3))
    assert np.array_equal(targets.sine_product(x), np.prod(np.sin(np.pi * x), axis=1))
    with pytest.raises(ValueError, match=r"^p must have shape \(batch, D\)"):
        targets.sine_product(np.ones((2, 2, 1)))


def test_tilted_sine_by_hand_and_far_from_the_origin():
    got = targets.tilted_sine([[0.0], [0.25], [0.75], [1.0]])
    np.testing.assert_allclose(got, [0.0, 1.125, -0.625, 0.5], rtol=0, atol=8 * U)
    # 2^60 is an even integer: sin(2 pi x) = 0 exactly, the value is x / 2
    assert targets.tilted_sine([[2.0**60]])[0] == 2.0**59
    for x in (0.3, 123.456, -7.9, 1e10 + 0.125):
        with mpmath.workdps(60):
            want = mpmath.sin(2 * mpmath.pi * mpmath.mpf(x)) + mpmath.mpf(x) / 2
        assert abs(targets.tilted_sine([[x]])[0] - float(want)) <= 6 * U * (1 + abs(x) / 2)
    with pytest.raises(ValueError, match=r"^p must have shape \(batch, 1\)"):
        targets.tilted_sine([[0.2, 0.3]])


def test_wave_and_product_is_the_wave_and_the_product():
    p = np.array([[0.25, 0.0], [0.125, 0.5], [0.3, 0.7]])
    got = targets.wave_and_product(p)
    assert got.shape == (3, 2)
    np.testing.assert_allclose(
        got[:, 0],
        [1.0, -math.sin(math.pi / 4), math.sin(0.6 * math.pi) * math.cos(1.4 * math.pi)],
        atol=4 * U,
    )
    assert got[:, 1].tolist() == [0.0, 0.0625, 0.3 * 0.7]
    with pytest.raises(ValueError, match=r"^p's product x1 x2 overflows float64 at point 1"):
        targets.wave_and_product([[1.0, 2.0], [1e200, 1e200]])


def test_mean_product_flat_is_mean_product_of_scalar_tokens():
    assert targets.mean_product_flat([[1.0, 2.0, 3.0]]).tolist() == [[2.0, 4.0, 6.0]]
    X = np.random.default_rng(1).uniform(size=(50, 4, 1))
    assert np.array_equal(targets.mean_product_flat(X[:, :, 0]), targets.mean_product(X)[:, :, 0])
    with pytest.raises(ValueError, match=r"^p: X's X \* mean\(X\) overflows"):
        targets.mean_product_flat([[1e300, 1e300]])
    with pytest.raises(ValueError, match=r"^p must have shape \(batch, D\)"):
        targets.mean_product_flat(X)


def test_targets_by_hand():
    X = np.array([[[1.0], [2.0], [3.0]]])
    np.testing.assert_array_equal(targets.mean_product(X), [[[2.0], [4.0], [6.0]]])  # mean 2
    Y = np.array([[[1.0, 5.0], [3.0, 0.0]]])
    np.testing.assert_array_equal(targets.max_product(Y), 3.0 * Y)  # max first coordinate 3
    np.testing.assert_allclose(
        targets.wave(np.array([[0.25, 0.0], [0.0, 0.3], [0.75, 0.5]])), [1.0, 0.0, 1.0], atol=1e-15
    )
    np.testing.assert_array_equal(
        targets.disk(np.array([[0.5, 0.5], [0.75, 0.5], [0.5, 0.8125], [0.0, 0.0]])),
        [1.0, 1.0, 0.0, 0.0],
    )  # radius 0.3: 0.25 in, 0.3125 out
    with pytest.raises(ValueError, match="X must have"):
        targets.mean_product(np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"X must have shape \(batch, n, d\)"):
        targets.mean_product(np.ones((2, 3, 1, 1)))
    with pytest.raises(ValueError, match=r"p must have shape \(batch, 2\)"):
        targets.wave(np.ones((4, 3)))
    with pytest.raises(ValueError, match="real array"):
        targets.disk(np.ones((2, 2), dtype=bool))
