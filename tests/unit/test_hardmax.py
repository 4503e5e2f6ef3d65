"""lib.hardmax: K&S Theorem 1's counterexample, the random trials and the exact id distance."""

import mpmath
import numpy as np
import pytest
import torch

from lib import exact, hardmax, layers


@pytest.mark.parametrize("head_dim", [1, 2, 3])
def test_hardmax_pair_collides_for_random_weights(head_dim):
    rng = np.random.default_rng(head_dim)
    pair = torch.as_tensor(hardmax.hardmax_counterexample(rng.normal(size=4)))
    assert pair.shape == (2, 4, 4)
    layer = layers.SelfAttention(4, head_dim=head_dim, normalizer="hardmax")
    for k in range(200):
        W = {
            n: rng.normal(size=(head_dim, 4)) * 10.0 ** rng.integers(-1, 2)
            for n in ("W_Q", "W_K", "W_V")
        }
        W["W_O"] = rng.normal(size=(4, head_dim))
        if k % 20 == 0:
            W["W_Q"] = np.zeros((head_dim, 4))
        out = layer.set_weights(**W)(pair)
        assert (out[0, 0] - out[1, 0]).abs().max() < 1e-10
    with pytest.raises(ValueError, match="non-zero"):
        hardmax.hardmax_counterexample(np.zeros(3))


def test_hardmax_trials_and_id_distance():
    pair = hardmax.hardmax_counterexample(np.array([0.4, -1.0, 0.3]))
    trials = hardmax.hardmax_trials(pair, draws=60, seed=1)
    assert len(trials) == 60 and trials.hardmax.max() < 1e-10
    uniform = trials[trials["w_q_zero"]]
    assert (
        len(uniform) == 6 and uniform.softmax.max() < 1e-12
    )  # softmax is uniform: the means agree
    moderate = trials[~trials["w_q_zero"] & (trials.scale == 1.0)]
    assert (moderate.softmax > 1e-6).all()
    hard = layers.SelfAttention(3, head_dim=2, normalizer="hardmax", seed=4)
    assert hardmax.id_distance(hard, pair, dps=40) == 0
    with pytest.raises(ValueError, match="two sequences"):
        hardmax.hardmax_trials(pair[:1])
    with pytest.raises(ValueError, match="token must be <= 3"):
        hardmax.id_distance(hard, pair, token=4)


def test_id_difference_matches_the_boltzmann_closed_form():
    """For query v the scores are c_k s, s = v^T W_K^T W_Q v, so the ids differ by
    W_O W_V v (boltz_s(c1) - boltz_s(c2)) with c1 = (1, 2, 3, 4), c2 = (1, 1.5, 3.5, 4)."""
    v = np.array([0.5, -1.25, 0.75])  # dyadic: every multiple exact in float64
    pair = hardmax.hardmax_counterexample(v)
    layer = layers.SelfAttention(3, head_dim=2, seed=11)
    W = {k: m.numpy() for k, m in layer.weights().items()}
    s = float(v @ W["W_K"].T @ W["W_Q"] @ v)
    dps = 60
    diff = hardmax.id_difference(layer, pair, dps=dps)
    with mpmath.workdps(dps):
        m = exact.boltz_mp([1, 2, 3, 4], beta=s, dps=dps) - exact.boltz_mp(
            [1, "1.5", "3.5", 4], beta=s, dps=dps
        )
        direction = W["W_O"] @ W["W_V"] @ v
        for got, c in zip(diff, direction, strict=True):
            assert abs(got - mpmath.mpf(float(c)) * m) < mpmath.mpf("1e-14") * abs(m)
        assert (
            abs(
                hardmax.id_distance(layer, pair, dps=dps)
                - mpmath.sqrt(mpmath.fsum(c**2 for c in diff))
            )
            == 0
        )


def test_hardmax_trials_heads_and_exact_columns():
    v = np.array([0.5, -1.25, 0.75])
    pair = hardmax.hardmax_counterexample(v)
    one = hardmax.hardmax_trials(pair, draws=30, seed=4)
    same = hardmax.hardmax_trials(pair, draws=30, seed=4, max_heads=1, exact=True)
    assert (one.softmax == same.softmax).all() and (one.heads == 1).all()  # exact adds columns only
    many = hardmax.hardmax_trials(pair, draws=60, seed=4, max_heads=3, exact=True)
    assert sorted(many.heads.unique()) == [1, 2, 3]
    assert np.isneginf(many["log10_hardmax_exact"]).all()  # hardmax: exactly equal ids
    ties = many[many["w_q_zero"]]
    assert np.isneginf(ties["log10_softmax_exact"]).all()  # uniform softmax: equal means
    live = many[~many["w_q_zero"]]
    assert np.isfinite(live["log10_softmax_exact"]).all()
    # float64 agrees with the exact distance to rounding where the distance is large
    big = live[live.softmax > 1e-6]
    assert (big["softmax_error"] <= 1e-12 * (1 + big.softmax)).all()
    # a two-head layer is the sum of its heads: an independent float64 evaluation of draw 9
    rng = np.random.default_rng(4)
    X = torch.as_tensor(pair)
    for i in range(10):
        s, scale, h = 1 + i % 3, (0.1, 1.0, 10.0)[(i // 3) % 3], 1 + (i // 9) % 3
        heads = []
        for _ in range(h):
            W = {n: scale * rng.normal(size=(s, 3)) for n in ("W_Q", "W_K", "W_V")}
            W["W_O"] = rng.normal(size=(3, s))
            if i % 10 == 0:
                W["W_Q"] = np.zeros((s, 3))
            heads.append(W)
    assert h == 2
    out = X.clone()
    for W in heads:
        q, k, val = (
            X @ torch.as_tensor(W["W_Q"]).T,
            X @ torch.as_tensor(W["W_K"]).T,
            X @ torch.as_tensor(W["W_V"]).T,
        )
        out = out + torch.softmax(q @ k.transpose(-1, -2), -1) @ val @ torch.as_tensor(W["W_O"]).T
    assert many.softmax[9] == pytest.approx((out[0, 0] - out[1, 0]).norm().item(), rel=1e-10)
    with pytest.raises(ValueError, match="max_heads must be <= 8"):
        hardmax.hardmax_trials(pair, draws=2, max_heads=9)
    with pytest.raises(ValueError, match="exact"):
        hardmax.hardmax_trials(pair, draws=2, exact=1)
