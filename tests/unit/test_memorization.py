"""lib.memorization and lib.feedforward.FeedForward: the memorizing transformer exact on unseen
data, parameter counts."""

import mpmath
import numpy as np
import pytest
import torch
from oracles import explicit_network_mp

from lib import interpolation, memorization
from lib.feedforward import FeedForward


def test_parameter_count_hand_computed():
    # s = d = 1, n = 3, N = 10: 4 * 2 + 1 * (60 + 1) = 69 (K&S Corollary 1, check C11 of Chapter 3)
    assert memorization.corollary1_parameter_count(3, 10, 1, 1) == 69
    assert memorization.corollary1_parameter_count(2, 5, 3, 2) == 4 * 5 + 3 * (20 + 3)
    with pytest.raises(ValueError, match="N must be >= 1"):
        memorization.corollary1_parameter_count(3, 0, 1, 1)


def test_memorizing_transformer_exact_on_unseen_data():
    from lib import context_ids

    V = np.array([[0.5], [1.7], [-1.2], [3.0]])  # not a chapter vocabulary
    X = context_ids.subset_sequences(V, 2)
    Y = np.random.default_rng(5).integers(0, 4, size=X.shape[:2])
    res = memorization.memorizing_transformer(X, Y)
    assert res.max_error < mpmath.mpf("1e-20")
    assert res.contexts == 12
    # the built network's parameters, read off its tensors: 4 rank-1 matrices of s + d = 2 entries,
    # one projection entry, 12 biases, 12 output weights, b2 = 0
    assert memorization.parameter_count(res.attention, res.ffn) == 8 + 1 + 12 + 12
    assert res.parameters_corollary == memorization.corollary1_parameter_count(2, 6, 1, 1) == 33


@pytest.mark.parametrize("d", [1, 2])
def test_memorizing_network_forward_pass_matches_the_displayed_formula(d):
    from lib import context_ids

    V = (
        np.array([[0.5], [1.7], [-1.2], [3.0]])
        if d == 1
        else np.array([[1.0, 0.3], [0.2, 1.5], [-1.1, 0.7]])
    )
    X = context_ids.subset_sequences(V, 2)
    Y = np.random.default_rng(3).integers(0, 3, size=X.shape).astype(float)
    res = memorization.memorizing_transformer(X, Y)
    outs = explicit_network_mp(X, res.attention.weights(), res.ffn, res.dps)
    with mpmath.workdps(res.dps):
        err = max(
            abs(o[c] - mpmath.mpf(y))
            for o, y in zip(outs, Y.reshape(-1, d), strict=True)
            for c, y in enumerate(y)
        )
        assert err < mpmath.mpf(10) ** (40 - res.dps)  # exact up to the working precision
        diff = max(
            abs(o[c] - r[c]) for o, r in zip(outs, res.outputs, strict=True) for c in range(d)
        )
        assert diff < mpmath.mpf(10) ** (40 - res.dps)
    # residual: b2 = 0 and every hidden unit reads the one projection v
    assert all(b == 0 for b in res.ffn["b2"]) and all(
        row == res.ffn["W1"][0] for row in res.ffn["W1"]
    )
    # the float64 layer computes the displayed formula (explicit numpy) on float64 inputs
    ffn64 = memorization.float64_network(res)
    W = {k: v.numpy() for k, v in ffn64.weights().items()}
    Z = np.random.default_rng(1).normal(size=(7, d))
    want = Z + np.maximum(Z @ W["W1"].T + W["b1"], 0) @ W["W2"].T + W["b2"]
    np.testing.assert_allclose(
        ffn64(torch.as_tensor(Z)).detach().numpy(),
        want,
        rtol=1e-12,
        atol=1e-9 * np.abs(W["W2"]).max(),
    )
    # parameters read off the tensors: 4 (s + d), d for v, M biases, d M output weights;
    # for d = 1 the corollary's count
    M = res.contexts
    assert memorization.parameter_count(res.attention, res.ffn) == 4 * (1 + d) + d + M + d * M
    if d == 1:
        assert 4 * (1 + d) + d + M + d * M == res.parameters_corollary


def test_parameter_count_reads_the_tensors():
    from lib.layers import SelfAttention

    # rank-1 factors: every entry of A (s x 1) and B (1 x d), for each of W_Q, W_K, W_V, W_O
    assert memorization.parameter_count(SelfAttention(3, head_dim=2, rank=1)) == 4 * (2 + 3)
    dense = SelfAttention(2, head_dim=1).set_weights(W_Q=np.array([[1.0, 0.0]]))
    assert (
        memorization.parameter_count(dense) == 1 + 2 + 2 + 2
    )  # a zero entry of W_Q is not counted
    ffn = FeedForward(2, 3, residual=True).set_weights(
        W1=np.array([[1.0, 2.0]] * 3),
        b1=np.array([0.0, 1.0, 2.0]),
        W2=np.array([[1.0, 0.0, 3.0], [0.0, 0.0, 1.0]]),
        b2=np.zeros(2),
    )
    assert memorization.parameter_count(ffn) == 2 + 2 + 3 + 0  # W1's repeated row counted once
    assert memorization.parameter_count(ffn, dense) == 7 + 7
    with pytest.raises(ValueError, match=r"layers\[0\] must be"):
        memorization.parameter_count("ffn")


def test_memorizing_transformer_head_size_enters_the_count():
    from lib import context_ids

    X = context_ids.subset_sequences(np.arange(1.0, 5.0)[:, None], 3)  # N = 4, n = 3
    Y = np.random.default_rng(2).integers(0, 3, size=X.shape[:2])
    for s in (1, 3):
        res = memorization.memorizing_transformer(X, Y, head_dim=s)
        assert res.max_error < mpmath.mpf(10) ** (20 - res.dps)
        assert memorization.parameter_count(res.attention, res.ffn) == 4 * (s + 1) + 1 * (
            2 * 3 * 4 + 1
        )


def test_memorizing_transformer_consistency_and_permutations():
    X = np.array([[[1.0], [2.0]], [[2.0], [1.0]], [[1.0], [3.0]]])
    Y = np.array(
        [[0, 1], [1, 0], [5, 7]]
    )  # sequence 1 is a permutation of 0 with consistent labels
    res = memorization.memorizing_transformer(X, Y)
    assert res.contexts == 4 and res.max_error < mpmath.mpf("1e-20")
    with pytest.raises(ValueError, match="inconsistent labels"):
        memorization.memorizing_transformer(X, np.array([[0, 1], [0, 1], [5, 7]]))
    with pytest.raises(ValueError, match="duplicate token"):
        memorization.memorizing_transformer(np.array([[[1.0], [1.0]]]), np.array([[0, 1]]))
    with pytest.raises(ValueError, match="Y must have shape"):
        memorization.memorizing_transformer(X, np.zeros((2, 2)))


def test_more_arguments_follow_the_rule():
    with pytest.raises(ValueError, match="base must be finite, got nan"):
        interpolation.interpolation_price([0.1], [0.0, 1.0], base=float("nan"))
    with pytest.raises(ValueError, match="base must be a real number, got True"):
        interpolation.interpolation_price([0.1], [0.0, 1.0], base=True)
    X = np.array([[[1.0], [2.0]], [[1.0], [3.0]]])
    with pytest.raises(ValueError, match="directions must be <= 100000"):
        memorization.memorizing_transformer(X, np.zeros((2, 2)), directions=10**18)
    with pytest.raises(ValueError, match="dps must be <= 100000"):
        memorization.memorizing_transformer(X, np.zeros((2, 2)), dps=10**6)
    with pytest.raises(ValueError, match="Y must be a real array, not bool"):
        memorization.memorizing_transformer(X, np.zeros((2, 2), dtype=bool))


"""lib.memorization and lib.feedforward.FeedForward: the memorizing transformer exact on unseen
data, parameter counts."""


def test_float64_memorization_is_the_residual_networks_forward_pass():
    from lib import context_ids, contextual

    X = context_ids.subset_sequences(np.arange(1.0, 6.0)[:, None], 3)
    Y = np.random.default_rng(4).integers(0, 3, size=X.shape[:2]).astype(float)
    small = memorization.float64_memorization(X, Y, 0.3)
    assert small.max_error < 1e-9 and small.min_gap64 > 1e-4
    theorem = memorization.float64_memorization(
        X, Y, contextual.lemma1_gap(3)
    )  # c_w = r_min = eps = 1
    assert theorem.min_gap64 == 0.0 and np.isnan(theorem.max_error)  # float64 ids collide
    # independently: the rank-1 layer at gamma (d = 1, w = 1) written out in numpy, then a residual
    # layer interpolating y - z built on its ids by solving the triangular system with numpy
    z = []
    for seq in X[:, :, 0]:
        for t in seq:
            a = 0.3 * t * seq
            p = np.exp(a - a.max()) / np.exp(a - a.max()).sum()
            z.append(
                t + (0.99 / (4 * 5.05)) * (p @ seq)
            )  # W_O = eps / (4 r_max), the strict constants
    z = np.array(z)
    order = np.argsort(z)
    s, tgt = z[order], (Y.reshape(-1) - z)[order]
    knots = np.concatenate([[s[0] - (s[1] - s[0])], (s[:-1] + s[1:]) / 2])
    c = np.linalg.solve(np.tril(s[:, None] - knots[None, :]), tgt)
    out = z + np.maximum(z[:, None] - knots[None, :], 0) @ c
    assert np.abs(out - Y.reshape(-1)).max() < 1e-9
    assert small.largest_weight == pytest.approx(np.abs(c).max(), rel=1e-6)


def test_weight_lower_bound_hand_computed_and_met():
    # ids 0, 1, 1.5 with targets 0, 2, 2: slopes 2 and 0; M = 3 -> bound max(2/(3*1), 0) = 2/3
    assert memorization.weight_lower_bound([0.0, 1.0, 1.5], [[0.0], [2.0], [2.0]]) == pytest.approx(
        2 / 3
    )
    rng = np.random.default_rng(9)
    z = np.sort(rng.uniform(0, 1, 12))
    y = rng.normal(size=12)
    res = interpolation.interpolation_mp(list(z), y, dps=40)
    assert res.max_coeff >= memorization.weight_lower_bound(z, y[:, None])
    with pytest.raises(ValueError, match="strictly increasing"):
        memorization.weight_lower_bound([1.0, 0.0], [[0.0], [1.0]])
