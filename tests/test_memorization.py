"""lib.memorization and lib.attention.FeedForward: interpolation exact on unseen points, counts."""

import mpmath
import numpy as np
import pytest
import torch

from lib import memorization
from lib.attention import FeedForward


def test_interpolating_ffn_float64_on_unseen_points():
    rng = np.random.default_rng(11)
    z = rng.uniform(-5, 5, size=12)
    y = rng.normal(size=(12, 3))
    ffn = memorization.interpolating_ffn(z, y)
    assert ffn.width == 12 and ffn.d_in == 1 and ffn.d_out == 3
    out = ffn(torch.as_tensor(z)[:, None]).detach().numpy()
    np.testing.assert_allclose(out, y, atol=1e-10)


def test_interpolation_mp_exact_where_float64_fails():
    # ids 1e-30 apart: float64 cannot even tell them apart, mpmath interpolates exactly
    with mpmath.workdps(60):
        z = [mpmath.mpf(1), mpmath.mpf(1) + mpmath.mpf("1e-30"), mpmath.mpf(2)]
    out = memorization.interpolation_mp(z, [0.0, 1.0, 2.0], dps=60)
    assert out["max_error"] < mpmath.mpf("1e-25")
    assert out["max_coeff"] > 1e29  # the price: weights of order 1 / gap
    with pytest.raises(ValueError, match="repeated id"):
        memorization.interpolating_ffn([1.0, 1.0 + 1e-30, 2.0], [0.0, 1.0, 2.0])


def test_knots_and_validation():
    order, b = memorization.interpolation_knots([3.0, 1.0, 2.0])
    assert list(order) == [1, 2, 0]
    np.testing.assert_allclose(b, [0.0, 1.5, 2.5])
    for z, y, match in [([1.0, np.nan], [0, 1], "finite"), ([[1.0, 2.0]], [0, 1], "1-D"),
                        ([1.0, 2.0], [0, 1, 2], "shape")]:
        with pytest.raises(ValueError, match=match):
            memorization.interpolating_ffn(z, y)
    with pytest.raises(ValueError, match="non-empty"):
        memorization.interpolation_mp([], [])


def test_parameter_count_hand_computed():
    # s = d = 1, n = 3, N = 10: 4 * 2 + 1 * (60 + 1) = 69 (PAPERS.md, check C11)
    assert memorization.corollary1_parameter_count(3, 10, 1, 1) == 69
    assert memorization.corollary1_parameter_count(2, 5, 3, 2) == 4 * 5 + 3 * (20 + 3)
    with pytest.raises(ValueError, match="N must be >= 1"):
        memorization.corollary1_parameter_count(3, 0, 1, 1)


def test_feedforward_formula_and_validation():
    ffn = FeedForward(3, 4, residual=True, seed=2)
    Z = torch.randn(5, 3, dtype=torch.float64)
    W = ffn.weights()
    want = Z + torch.relu(Z @ W["W1"].T + W["b1"]) @ W["W2"].T + W["b2"]
    assert torch.allclose(ffn(Z), want)
    with pytest.raises(ValueError, match="d_out == d_in"):
        FeedForward(3, 4, d_out=2, residual=True)
    with pytest.raises(ValueError, match="shape"):
        ffn(torch.zeros(5, 2, dtype=torch.float64))
    with pytest.raises(ValueError, match="b1 must have shape"):
        ffn.set_weights(b1=np.zeros(3))
    with pytest.raises(ValueError, match="finite in torch.float32"):
        FeedForward(3, 4, dtype=torch.float32).set_weights(W1=np.full((4, 3), 1e300))
