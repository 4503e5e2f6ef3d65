"""lib.cross_attention.CrossAttention against the column formula, its guards and sizes."""

import numpy as np
import pytest
import torch


def test_cross_attention_matches_the_column_formula():
    from lib.cross_attention import CrossAttention

    rng = np.random.default_rng(7)
    layer = CrossAttention(3, 5, head_dim=2, d_out=4, seed=3)
    W = {k: rng.normal(size=v.shape) for k, v in layer.weights().items()}
    layer.set_weights(**W)
    X, Y = rng.normal(size=(2, 6, 3)), rng.normal(size=(2, 4, 5))
    out = layer(torch.from_numpy(X), torch.from_numpy(Y)).detach().numpy()
    for b in range(2):
        Xc, Yc = X[b].T, Y[b].T  # tokens as columns
        S = (W["W_K"] @ Yc).T @ (W["W_Q"] @ Xc)  # (m, n): key j, query l
        P = np.exp(S - S.max(axis=0)) / np.exp(S - S.max(axis=0)).sum(axis=0)
        np.testing.assert_allclose(out[b], (W["W_O"] @ W["W_V"] @ Yc @ P).T, atol=1e-12)
    # one shared context for a batch of queries
    shared = layer(torch.from_numpy(X), torch.from_numpy(Y[0])).detach().numpy()
    np.testing.assert_allclose(shared[0], out[0], atol=1e-14)
    # residual adds X; rank-1 factors reproduce a rank-1 product
    res = CrossAttention(3, 5, head_dim=2, residual=True, seed=1)
    plain = CrossAttention(3, 5, head_dim=2, residual=False, seed=1)
    Xt, Yt = torch.from_numpy(X), torch.from_numpy(Y)
    torch.testing.assert_close(res(Xt, Yt), plain(Xt, Yt) + Xt)
    low = CrossAttention(3, 5, head_dim=2, rank=1, seed=2)
    dense = CrossAttention(3, 5, head_dim=2, seed=2).set_weights(**low.weights())
    torch.testing.assert_close(low(Xt, Yt), dense(Xt, Yt))


@pytest.mark.parametrize(
    "call, match",
    [
        (
            lambda L: L(
                torch.zeros(1, 2, 3, dtype=torch.float64), torch.zeros(1, 4, 6, dtype=torch.float64)
            ),
            r"Y \(the context\) must have shape \(\.\.\., n, 5\)",
        ),
        (
            lambda L: L(
                torch.zeros(1, 2, 4, dtype=torch.float64), torch.zeros(1, 4, 5, dtype=torch.float64)
            ),
            r"X must have shape \(\.\.\., n, 3\)",
        ),
        (
            lambda L: L(
                torch.zeros(2, 2, 3, dtype=torch.float64), torch.zeros(3, 4, 5, dtype=torch.float64)
            ),
            "same batch shape",
        ),
        (
            lambda L: L(
                torch.zeros(1, 2, 3, dtype=torch.float64), torch.zeros(1, 4, 5, dtype=torch.float32)
            ),
            "layer's dtype",
        ),
        (lambda L: L.set_weights(W_K=np.zeros((1, 3))), r"W_K must have shape \(1, 5\)"),
    ],
)
def test_cross_attention_bad_input(call, match):
    from lib.cross_attention import CrossAttention

    with pytest.raises(ValueError, match=match):
        call(CrossAttention(3, 5))


def test_cross_attention_bad_construction():
    from lib.cross_attention import CrossAttention

    with pytest.raises(ValueError, match="residual needs d_out == d_q"):
        CrossAttention(3, 5, d_out=2, residual=True)
    with pytest.raises(ValueError, match="d_kv must be >= 1"):
        CrossAttention(3, 0)
