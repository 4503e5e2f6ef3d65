"""lib.feedforward: the feed-forward layer of both papers."""

import numpy as np
import pytest
import torch

from lib.feedforward import FeedForward


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
    with pytest.raises(ValueError, match=r"W1 does not fit in torch.float32"):
        FeedForward(3, 4, dtype=torch.float32).set_weights(W1=np.full((4, 3), 1e300))
    # a non-zero weight that underflows to 0 in the cast is refused too (1e-50 < 1.4e-45, the
    # smallest float32 subnormal), and nothing is changed; zeros and 1e-40 (a subnormal) pass
    small = FeedForward(3, 4, dtype=torch.float32)
    before = small.weights()["b2"].clone()
    with pytest.raises(ValueError, match=r"b2 does not fit in torch.float32"):
        small.set_weights(b2=np.full(3, 1e-50))
    assert torch.equal(small.weights()["b2"], before)
    small.set_weights(b2=np.array([0.0, 1e-40, -1e-40]))
    assert small.weights()["b2"][1].item() == pytest.approx(1e-40, rel=1e-2)
