"""lib.interpolation: the interpolating ReLU layer, its knots, and its forward pass in mpmath."""

from fractions import Fraction

import mpmath
import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from oracles import derandomized_settings

from lib import interpolation
from lib.feedforward import FeedForward

SETTINGS = derandomized_settings()


def test_interpolating_ffn_float64_on_unseen_points():
    rng = np.random.default_rng(11)
    z = rng.uniform(-5, 5, size=12)
    y = rng.normal(size=(12, 3))
    ffn = interpolation.interpolating_ffn(z, y)
    assert ffn.width == 12 and ffn.d_in == 1 and ffn.d_out == 3
    out = ffn(torch.as_tensor(z)[:, None]).detach().numpy()
    np.testing.assert_allclose(out, y, atol=1e-10)


def test_interpolation_mp_exact_where_float64_fails():
    # ids 1e-30 apart: float64 cannot even tell them apart, mpmath interpolates exactly
    with mpmath.workdps(60):
        z = [mpmath.mpf(1), mpmath.mpf(1) + mpmath.mpf("1e-30"), mpmath.mpf(2)]
    out = interpolation.interpolation_mp(z, [0.0, 1.0, 2.0], dps=60)
    assert out.max_error < mpmath.mpf("1e-25")
    assert out.max_coeff > 1e29  # the price: weights of order 1 / gap
    with pytest.raises(ValueError, match="repeated id"):
        interpolation.interpolating_ffn([1.0, 1.0 + 1e-30, 2.0], [0.0, 1.0, 2.0])


def test_knots_and_validation():
    order, b = interpolation.interpolation_knots([3.0, 1.0, 2.0])
    assert list(order) == [1, 2, 0]
    np.testing.assert_allclose(b, [0.0, 1.5, 2.5])
    for z, y, match in [
        ([1.0, np.nan], [0, 1], "finite"),
        ([[1.0, 2.0]], [0, 1], "1-D"),
        ([1.0, 2.0], [0, 1, 2], "shape"),
    ]:
        with pytest.raises(ValueError, match=match):
            interpolation.interpolating_ffn(z, y)
    with pytest.raises(ValueError, match="non-empty"):
        interpolation.interpolation_mp([], [])


def test_knot_layer_hand_computed():
    layer = interpolation.knot_layer(
        [0.0, 1.0], [[1.0], [-1.0]], [0.5]
    )  # 0.5 + relu(z) - relu(z - 1)
    np.testing.assert_allclose(
        interpolation.scalar_outputs(layer, [-1.0, 0.25, 3.0])[:, 0], [0.5, 0.75, 1.5]
    )
    with pytest.raises(ValueError, match="knots"):
        interpolation.knot_layer([np.nan], [[1.0]], [0.0])


def test_knot_layer_hand_computed_and_refuses_complex_and_bool():
    ffn = interpolation.knot_layer([0.0, 1.0], [[1.0], [-2.0]], [0.5])
    z = np.array([-1.0, 0.25, 1.0, 3.0])
    want = 0.5 + np.maximum(z, 0) - 2 * np.maximum(z - 1, 0)  # 0.5 + relu(z) - 2 relu(z - 1)
    np.testing.assert_allclose(interpolation.scalar_outputs(ffn, z)[:, 0], want, rtol=0, atol=1e-15)
    for kwargs, match in [
        ({"coeffs": [[1.0], [-2.0 + 1j]]}, "coeffs must be a real array, not complex"),
        ({"coeffs": np.array([[True], [False]])}, "coeffs must be a real array, not bool"),
        ({"offset": [0.5j]}, "offset must be a real array, not complex"),
        ({"offset": np.array([True])}, "offset must be a real array, not bool"),
        (
            {"knots": torch.tensor([0.0, 1.0], dtype=torch.complex64)},
            "knots must be a real array, not complex",
        ),
        ({"coeffs": [[1.0, 2.0, 3.0]]}, r"coeffs must have shape \(2, k\)"),
        ({"offset": [0.5, 0.5]}, r"offset must have shape \(1,\)"),
    ]:
        args = {"knots": [0.0, 1.0], "coeffs": [[1.0], [-2.0]], "offset": [0.5]} | kwargs
        with pytest.raises(ValueError, match=match):
            interpolation.knot_layer(**args)


def test_scalar_outputs_checks_the_layer():
    with pytest.raises(ValueError, match="ffn must be a lib.feedforward.FeedForward with d_in = 1"):
        interpolation.scalar_outputs(FeedForward(2, 3), [0.0, 1.0])
    with pytest.raises(ValueError, match="ffn must be"):
        interpolation.scalar_outputs(None, [0.0])


def test_residual_ffn_checks_its_arguments():
    ffn = interpolation.residual_ffn(
        [1.0, 0.0], [0.0, 1.0], [[1.0, 2.0], [3.0, 4.0]], offset=[0.5, 0.0]
    )
    Z = np.array([[2.0, 5.0]])
    want = Z + np.array([[0.5, 0.0]]) + 2.0 * np.array([1.0, 2.0]) + 1.0 * np.array([3.0, 4.0])
    np.testing.assert_allclose(ffn(torch.as_tensor(Z)).detach().numpy(), want)
    with pytest.raises(ValueError, match=r"coeffs must have shape \(2, 2\)"):
        interpolation.residual_ffn([1.0, 0.0], [0.0, 1.0], [1.0, 2.0])
    with pytest.raises(ValueError, match=r"offset must have shape \(2,\)"):
        interpolation.residual_ffn([1.0, 0.0], [0.0, 1.0], [[1.0, 2.0], [3.0, 4.0]], offset=[0.0])


@pytest.mark.parametrize(
    ("Z", "weights", "match"),
    [
        (
            [[float("nan")]],
            {"W1": [[1.0]], "b1": [0.0], "W2": [[1.0]], "b2": [0.0]},
            r"Z\[0\]\[0\]",
        ),
        (
            [[1.0]],
            {"W1": [[float("inf")]], "b1": [0.0], "W2": [[1.0]], "b2": [0.0]},
            r"W1\[0\]\[0\]",
        ),
        ([[1.0]], {"W1": [[1.0]], "b1": [True], "W2": [[1.0]], "b2": [0.0]}, r"b1\[0\]"),
        ([[1.0]], {"W1": [[1.0]], "b1": [0.0], "W2": [["x"]], "b2": [0.0]}, r"W2\[0\]\[0\]"),
        ([1.0], {"W1": [[1.0]], "b1": [0.0], "W2": [[1.0]], "b2": [0.0]}, r"Z\[0\]"),
        ([[1.0]], {"W1": [[1.0]]}, "weights must be a dict"),
    ],
)
def test_ffn_mp_refuses_what_is_not_a_finite_real(Z, weights, match):
    with pytest.raises(ValueError, match=match):
        interpolation.ffn_mp(Z, weights)


def test_ffn_mp_closed_form():
    # relu(2 z - 1) * 3 + 0.5, plus z (residual), at z = 2: 3 * 3 + 0.5 + 2 = 11.5, read exactly
    w = {"W1": [[2.0]], "b1": [-1.0], "W2": [[3.0]], "b2": [0.5]}
    assert interpolation.ffn_mp([[2.0]], w) == [[11.5]]
    assert interpolation.ffn_mp([[2.0]], w, residual=False) == [[9.5]]
    assert interpolation.ffn_mp([[0.25]], w) == [[0.75]]  # relu cuts: 0 + 0.5 + 0.25


@SETTINGS
@given(
    scale=st.sampled_from([1.0, 1e300, 1.7e308]),
    u=st.lists(st.floats(-1, 1), min_size=1, max_size=8, unique=True),
)
def test_interpolation_knots_are_finite_and_interleave(scale, u):
    z = np.unique(scale * np.array(u))
    try:
        order, b = interpolation.interpolation_knots(z)
    except ValueError as exc:  # only a smallest id at float64's most negative number
        assert "leaves no float64 below it" in str(exc)
        assert z.min() == -np.finfo(float).max
        return
    s = z[order]
    assert np.isfinite(b).all() and b[0] < s[0]
    for i in range(1, len(s)):  # each knot the exact midpoint, to one rounding
        mid = (Fraction(float(s[i - 1])) + Fraction(float(s[i]))) / 2
        assert abs(Fraction(float(b[i])) - mid) <= Fraction(float(np.spacing(abs(float(mid)))))
        assert s[i - 1] <= b[i] <= s[i]
