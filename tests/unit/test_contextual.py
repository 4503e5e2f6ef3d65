"""lib.contextual: Definition 1, the projection constant, the Theorem 2 layer, the hardmax pair."""

import math

import mpmath
import numpy as np
import pytest
import torch
from oracles import projection_constant_mp

from lib import context_ids, contextual, exact, hardmax, layers, separation


def test_tokenwise_separation_hand_computed():
    X = np.array([[[3.0, 4.0], [1.0, 0.0]], [[3.0, 4.0], [0.0, 2.0]]])
    r_min, r_max, eps = separation.tokenwise_separation(X)
    assert (r_min, r_max) == (1.0, 5.0)
    assert eps == pytest.approx(math.sqrt(5.0))  # |(1,0) - (0,2)|
    with pytest.raises(ValueError, match="duplicate token"):
        separation.tokenwise_separation(np.array([[[1.0, 0.0], [1.0, 0.0]]]))
    with pytest.raises(ValueError, match=r"shape \(N, n, d\)"):
        separation.tokenwise_separation(np.zeros((1, 2, 2, 2)))


def test_projection_constant_and_bound():
    V = np.array([[1.0, 0.0], [0.0, 1.0]])
    w = np.array([1.0, 2.0])
    # pairs of V u {0}: (1,0)-(0,1): |w.(1,-1)|/sqrt2 / |w|; (1,0)-0: 1/|w|; (0,1)-0: 2/|w|
    want = min(1 / math.sqrt(2), 1.0, 2.0) / math.sqrt(5)
    assert separation.projection_constant(w, V) == pytest.approx(want)
    assert separation.projection_constant([1.0, -1.0], np.array([[1.0, 1.0], [2.0, 2.0]])) == 0.0
    assert separation.projection_bound(5, 2) == pytest.approx(36**-1 * math.sqrt(8 / (2 * math.pi)))
    with pytest.raises(ValueError, match="w must be non-zero"):
        separation.projection_constant([0.0, 0.0], V)


def test_theorem2_delta_reproduces_itself_with_worst_case_cw():
    d = contextual.theorem2_delta(3, 5, 1, 1.0, 5.0, 1.0)
    assert d.paper == pytest.approx(d.construction)
    # direct evaluation of the theorem's formula in mpmath
    n, K, dim, rmin, rmax, eps = 3, 5, 1, 1.0, 5.0, 1.0
    with mpmath.workdps(50):
        L = mpmath.log(n)
        pre = 2 * L**2 * eps**2 * rmin / (rmax**2 * (K + 1) ** 4 * (2 * L + 3) * mpmath.pi * dim)
        expo = -((K + 1) ** 4) * (2 * L + 3) * mpmath.pi * dim * rmax**2 / (4 * eps * rmin)
        want = float(mpmath.log10(pre) + expo / mpmath.log(10))
    assert d.paper == pytest.approx(want, rel=1e-12)
    assert d.r == 5.25
    better = contextual.theorem2_delta(3, 5, 1, 1.0, 5.0, 1.0, c_w=1.0)
    assert better.construction > d.paper


def test_construction_ids_distinct_on_unseen_vocabulary():
    """A vocabulary and n not used in the chapter: 4 tokens in R^1, n = 2, exact arithmetic."""
    V = np.array([[0.5], [1.7], [-1.2], [3.0]])
    layer = contextual.RankOneAttention(V, 2, w=[1.0])
    assert all(torch.linalg.matrix_rank(W) == 1 for W in layer.weights().values())
    X = context_ids.subset_sequences(V, 2)
    delta = contextual.theorem2_delta(2, 4, 1, layer.r_min, layer.r_max, layer.eps, c_w=layer.c_w)
    dps = 30 + int(-delta.construction)
    ids = [row for out in exact.attention_mp(X, layer, dps) for row in out]
    gap = exact.min_distance(ids, dps)
    assert len(ids) == 12 and gap > 0
    with mpmath.workdps(dps):
        assert mpmath.log10(gap) > delta.construction
        # |id| <= r up to the float64 rounding of the layer's weights (it is attained in the limit)
        assert max(abs(r[0]) for r in ids) <= delta.r * (1 + 1e-12)
    # the float64 layer agrees with the exact one to rounding
    out = layer(torch.as_tensor(X)).reshape(-1).numpy()
    np.testing.assert_allclose(out, [float(r[0]) for r in ids], rtol=1e-13)


def test_rank_one_attention_hypotheses():
    with pytest.raises(ValueError, match="zero token"):
        contextual.RankOneAttention(np.array([[0.0], [1.0]]), 2)
    with pytest.raises(ValueError, match="same token twice"):
        contextual.RankOneAttention(np.array([[1.0], [1.0]]), 2)
    with pytest.raises(ValueError, match="does not separate"):
        contextual.RankOneAttention(np.array([[1.0, 1.0], [2.0, 2.0]]), 2, w=[1.0, -1.0])
    with pytest.raises(ValueError, match="inconsistent"):
        contextual.RankOneAttention(np.array([[1.0], [2.0]]), 2, eps=5.0)
    with pytest.raises(ValueError, match="gamma must be > 0"):
        contextual.RankOneAttention(np.array([[1.0], [2.0]]), 2, gamma=0.0)


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


def test_attention_mp_matches_float64_and_validates():
    layer = layers.SelfAttention(3, head_dim=2, seed=5)
    X = np.random.default_rng(0).normal(size=(5, 3))
    exact_out = np.array([[float(c) for c in row] for row in exact.attention_mp(X, layer, 40)])
    np.testing.assert_allclose(
        exact_out, layer(torch.as_tensor(X)).detach().numpy(), rtol=1e-12, atol=1e-12
    )
    with pytest.raises(ValueError, match="shape"):
        exact.attention_mp(np.zeros((5, 2)), layer, 40)
    with pytest.raises(ValueError, match="SelfAttention"):
        exact.attention_mp(X, "layer", 40)
    assert exact.min_distance([[0, 0], [3, 4], [0, 1]]) == 1
    with pytest.raises(ValueError, match="same length"):
        exact.min_distance([[0, 0], [1]])


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


def test_context_ids_result():
    V = np.array([[0.5], [1.7], [-1.2], [3.0]])
    res = context_ids.context_ids(V, 2, w=[1.0])
    assert len(res.ids) == 12 and res.log10_gap > res.delta.construction
    small = context_ids.context_ids(V, 2, w=[1.0], gamma=0.05)
    assert small.gap > res.gap  # a cooler layer separates these contexts more
    with pytest.raises(ValueError, match="digits_beyond"):
        context_ids.context_ids(V, 2, digits_beyond=3)


def test_extreme_scales_and_bad_inputs():
    V = np.array([[1.0, 0.0], [0.0, 1.0]])
    base = separation.projection_constant([1.0, 0.3], V)
    for scale in (1e-170, 1e160):
        assert separation.projection_constant([1.0, 0.3], V * scale) == pytest.approx(base)
    assert separation.projection_constant([1e308, 1e308], V) == pytest.approx(
        separation.projection_constant([1, 1], V)
    )
    r_min, r_max, eps = separation.tokenwise_separation(np.array([[[1e-170, 0.0], [0.0, 1e-170]]]))
    assert r_min == pytest.approx(1e-170) and eps == pytest.approx(math.sqrt(2) * 1e-170)
    with pytest.raises(ValueError, match="w must have shape"):
        separation.projection_constant(np.ones((2, 2)), np.eye(4))
    with pytest.raises(ValueError, match="at least two tokens"):
        contextual.RankOneAttention([[1.0, 0.0]], 2)
    with pytest.raises(ValueError, match="coincide"):
        hardmax.hardmax_counterexample([5e-324])
    with pytest.raises(ValueError, match="unknown arguments"):
        context_ids.context_ids(np.array([[1.0], [2.0]]), 2, foo=1)
    with pytest.raises(ValueError, match="MAX_DPS"):
        context_ids.context_ids(np.array([[1.0], [2.0]]), 2, gamma=1e308)


def test_theorem2_delta_extremes_stay_in_log_space():
    # gamma ~ 1e40 and 2 gamma r_max^2 ~ 1e42: far beyond float64 as values, fine as logarithms
    out = contextual.theorem2_delta(2, 10**10, 1, 1, 1, 1)
    assert math.isfinite(out.paper) and -1e42 < out.paper < -1e39
    out = contextual.theorem2_delta(2, 1, 1, 1, 1, 1, c_w=1e-100)
    assert math.isfinite(out.construction) and out.construction < -1e200
    # logarithms themselves beyond float64 (about -1e401) are refused, not returned as -inf
    for args, kw in [
        ((2, 1, 1, 1e-200, 1, 1e-200), {}),
        ((2, 1, 1, 1, 1, 1), {"c_w": 1e-200}),
        ((2, 1, 1, 1, 1e200, 1), {}),
    ]:
        with pytest.raises(ValueError, match="beyond float64's range"):
            contextual.theorem2_delta(*args, **kw)


def test_exact_input_validation():
    layer = layers.SelfAttention(3)
    with pytest.raises(ValueError, match="non-empty vector"):
        exact.min_distance(["12", "34"])
    with pytest.raises(ValueError, match="non-empty vector"):
        exact.min_distance([[], []])
    with pytest.raises(ValueError, match="shape"):
        exact.attention_mp(np.ones((0, 2, 3)), layer)
    with pytest.raises(ValueError, match="real"):
        exact.attention_mp(torch.ones(2, 3, dtype=torch.complex128), layer)


def test_theorem2_delta_refuses_impossible_constants():
    # two different tokens of norm <= r_max are at most 2 r_max apart: eps <= 2 r_max
    d = contextual.theorem2_delta(3, 5, 1, 1.0, 2.0, 4.0)  # eps = 2 r_max: tokens -2 and 2
    assert d.r == 2.0 + 4.0 / 4
    with pytest.raises(ValueError, match=r"eps must be <= 2 r_max, got eps=4.5, r_max=2.0"):
        contextual.theorem2_delta(3, 5, 1, 1.0, 2.0, 4.5)
    with pytest.raises(ValueError, match="r_max must be >= r_min, got r_min=1.0, r_max=0.5"):
        contextual.theorem2_delta(3, 5, 1, 1.0, 0.5, 0.1)
    for bad in (True, None, 1j, float("nan")):
        with pytest.raises(ValueError, match="eps must be"):
            contextual.theorem2_delta(3, 5, 1, 1.0, 2.0, bad)


def test_enumerations_are_sized_before_they_start(monkeypatch):
    vocab = np.arange(1.0, 41.0)[:, None]  # 40 tokens
    with pytest.raises(
        ValueError,
        match=r"binom\(40, 20\) \* 20 \* 1 would be 2,756,930,576,400.*MAX_SEQUENCE_ENTRIES",
    ):
        context_ids.subset_sequences(vocab, 20)
    with pytest.raises(ValueError, match=r"pairs of the binom\(40, 20\) \* 20 ids.*MAX_PAIRS"):
        context_ids.context_ids(vocab, 20, w=[1.0])
    with pytest.raises(ValueError, match="draws must be <= 100000"):
        hardmax.hardmax_trials(hardmax.hardmax_counterexample([1.0]), draws=10**18)
    with pytest.raises(ValueError, match="draws must be <= 100000"):
        separation.best_direction(vocab, draws=10**18)
    # the limits are inclusive: binom(5, 3) * 3 * 1 = 30 entries
    monkeypatch.setattr(context_ids, "MAX_SEQUENCE_ENTRIES", 30)
    assert context_ids.subset_sequences(np.arange(1.0, 6.0)[:, None], 3).shape == (10, 3, 1)
    with pytest.raises(ValueError, match="MAX_SEQUENCE_ENTRIES = 30"):
        context_ids.subset_sequences(np.arange(1.0, 7.0)[:, None], 3)
    # 5 tokens and 0: binom(6, 2) = 15 pairs
    monkeypatch.setattr(separation, "MAX_PAIR_ENTRIES", 15)
    assert separation.projection_constant([1.0], np.arange(1.0, 6.0)[:, None]) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="MAX_PAIR_ENTRIES = 15"):
        separation.projection_constant([1.0], np.arange(1.0, 7.0)[:, None])


def test_bool_and_complex_tokens_are_refused():
    with pytest.raises(ValueError, match="vocab must be a real array, not bool"):
        contextual.RankOneAttention(np.eye(3, dtype=bool), 2)
    with pytest.raises(ValueError, match="X must be a real array, not complex"):
        separation.tokenwise_separation(np.ones((1, 2, 2)) * 1j)
    with pytest.raises(ValueError, match="w must be a real array, not bool"):
        separation.projection_constant(np.array([True, False]), np.eye(2))


def test_strict_constants_meet_definition_1_strictly():
    V = np.arange(1.0, 6.0)[:, None]
    k = separation.strict_constants(V)
    assert k == pytest.approx({"r_min": 0.99, "r_max": 5.05, "eps": 0.99})
    X = context_ids.subset_sequences(V, 3)
    r_min, r_max, eps = separation.tokenwise_separation(X)
    assert k["r_min"] < r_min and k["r_max"] > r_max and k["eps"] < eps
    V2 = np.array([[3.0, 4.0], [1.0, 0.0], [0.0, 2.0]])
    assert separation.strict_constants(V2, slack=0.5) == pytest.approx(
        {"r_min": 0.5, "r_max": 7.5, "eps": 0.5 * math.sqrt(5.0)}
    )
    for bad in (0.0, 1.0, -0.1, float("nan")):
        with pytest.raises(ValueError, match="slack must be"):
            separation.strict_constants(V, slack=bad)
    with pytest.raises(ValueError, match="at least two tokens"):
        separation.strict_constants([[1.0]])


def test_score_separation_tight_versus_strict():
    V = np.arange(1.0, 6.0)[:, None]
    # tight constants, w = 1: the smallest score gap is gamma * 1 * (2 - 1) = 2 log 2 + 3 exactly
    tight = contextual.score_separation(
        contextual.RankOneAttention(V, 2, w=[1.0], r_min=1.0, r_max=5.0, eps=1.0)
    )
    assert tight.margin == 0.0 and tight.gap == tight.threshold == 2 * math.log(2) + 3
    assert tight.r == pytest.approx(tight.r_bound)  # 25 gamma, attained by t = x = 5
    strict = contextual.score_separation(
        contextual.RankOneAttention(V, 2, w=[1.0], **separation.strict_constants(V))
    )
    assert strict.gap == pytest.approx((2 * math.log(2) + 3) / 0.99**2, rel=1e-14)
    assert (
        strict.margin == pytest.approx(strict.gap - strict.threshold, rel=1e-12)
        and strict.margin > 0
    )
    assert strict.r < strict.r_bound  # r_max was raised by 1%
    default = contextual.RankOneAttention(V, 2, w=[1.0])  # the defaults are the strict constants
    assert (default.r_min, default.r_max, default.eps) == pytest.approx(
        (0.99, 5.05, 0.99), rel=1e-15
    )
    assert contextual.score_separation(default).margin > 0
    with pytest.raises(ValueError, match="RankOneAttention"):
        contextual.score_separation(layers.SelfAttention(2))


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


def test_order_flips_counts_swaps_seen_in_float64():
    """Between gamma = 0.06 and 1 the ids of V = {1..5}, n = 3 swap order (gaps ~1e-4 there, which
    float64 resolves): count the swaps independently from the float64 layer."""
    V = np.arange(1.0, 6.0)[:, None]
    gammas = [0.06, 0.1, 0.15, 0.25, 0.4, 0.7, 1.0]
    runs = [context_ids.context_ids(V, 3, w=[1.0], gamma=g) for g in gammas]
    flips = context_ids.order_flips(runs)
    assert [(a, b) for a, b, _ in flips] == list(zip(gammas, gammas[1:], strict=False))
    X = runs[0].X
    tokens = X.reshape(-1)

    def signs(run):
        ids = run.layer(torch.as_tensor(X)).reshape(-1).numpy()
        return {
            (i, j): np.sign(ids[i] - ids[j])
            for t in np.unique(tokens)
            for i in np.flatnonzero(tokens == t)
            for j in np.flatnonzero(tokens == t)
            if i < j
        }

    want = []
    for a, b in zip(runs, runs[1:], strict=False):
        sa, sb = signs(a), signs(b)
        want.append(sum(1 for key in sa if sa[key] * sb[key] < 0))
    assert [f for *_, f in flips] == want and sum(want) > 0
    with pytest.raises(ValueError, match="increasing order of gamma"):
        context_ids.order_flips(runs[::-1])
    with pytest.raises(ValueError, match="at least two"):
        context_ids.order_flips(runs[:1])
    with pytest.raises(ValueError, match="share their sequences"):
        context_ids.order_flips([runs[0], context_ids.context_ids(V, 2, w=[1.0], gamma=0.2)])


def test_limit_reversals_by_hand_and_against_small_gamma():
    """V = {1, 2, 3}, n = 2: the only pair that can reverse is token 3 in {1, 3} (mean 2) and {2, 3}
    (mean 2.5); along u its ids differ by a positive factor times boltz(0, -6 gamma) -
    boltz(0, -3 gamma) (shift equivariance), with boltz(0, -x) = -x e^-x / (1 + e^-x)."""
    V = np.array([[1.0], [2.0], [3.0]])

    def boltz0(x):
        return -x * math.exp(-x) / (1 + math.exp(-x))

    for g in (0.1, 0.3, 1.0, 2.0):
        got = context_ids.limit_reversals(context_ids.context_ids(V, 2, w=[1.0], gamma=g))
        assert got == context_ids.LimitReversals(int(boltz0(6 * g) > boltz0(3 * g)), 0, 3)
    # V = {1..5}, n = 3 at gamma = 1: the limit order read from the float64 layer at gamma = 1e-3
    # (ids of different means differ by about 1e-2 there), the order at gamma = 1 from float64 too
    V5 = np.arange(1.0, 6.0)[:, None]
    run = context_ids.context_ids(V5, 3, w=[1.0], gamma=1.0)
    X = run.X
    tokens, sums = X.reshape(-1), np.repeat(X.sum(axis=(1, 2)), 3)
    ids = {
        g: contextual.RankOneAttention(V5, 3, w=[1.0], gamma=g)(torch.as_tensor(X))
        .reshape(-1)
        .numpy()
        for g in (1e-3, 1.0)
    }
    pairs = [
        (i, j)
        for t in np.unique(tokens)
        for i in np.flatnonzero(tokens == t)
        for j in np.flatnonzero(tokens == t)
        if i < j
    ]
    tied = sum(1 for i, j in pairs if sums[i] == sums[j])
    reversed_ = sum(
        1
        for i, j in pairs
        if sums[i] != sums[j]
        and np.sign(ids[1e-3][i] - ids[1e-3][j]) * np.sign(ids[1.0][i] - ids[1.0][j]) < 0
    )
    assert context_ids.limit_reversals(run) == context_ids.LimitReversals(
        reversed_, tied, len(pairs)
    )
    # equal sums and a common token: {1,2,5}/{1,3,4}, {1,3,5}/{2,3,4}, {1,4,5}/{2,3,5}
    assert reversed_ > 0 and tied == 3
    with pytest.raises(ValueError, match="result of context_ids"):
        context_ids.limit_reversals({"X": X})


def test_projection_miss_expectation_closed_forms_and_sampling():
    """lambda = binom(K+1, 2) P(|t| < b), t one coordinate of a random unit vector of R^d:
    t = cos(uniform angle) for d = 2, t uniform on [-1, 1] for d = 3 (Archimedes)."""
    for K in (1, 5, 50):
        pairs, b2, b3 = (
            K * (K + 1) / 2,
            separation.projection_bound(K, 2),
            separation.projection_bound(K, 3),
        )
        assert separation.projection_miss_expectation(K, 2) == pytest.approx(
            pairs * 2 / math.pi * math.asin(b2)
        )
        assert separation.projection_miss_expectation(K, 3) == pytest.approx(pairs * b3)
        assert separation.projection_miss_expectation(K, 1) == 0.0
        for d in (2, 3, 4, 8, 16, 100, 1000):  # the union bound keeps lambda below 2/pi
            assert separation.projection_miss_expectation(K, d) < 2 / math.pi * K / (K + 1)
    # sampling: the mean number of pairs of a fixed vocabulary below b over random directions
    rng = np.random.default_rng(0)
    K, d = 20, 4
    P = np.vstack([rng.normal(size=(K, d)), np.zeros((1, d))])
    i, j = np.triu_indices(K + 1, 1)
    U = (P[i] - P[j]) / np.linalg.norm(P[i] - P[j], axis=1, keepdims=True)
    W = rng.normal(size=(40_000, d))
    W /= np.linalg.norm(W, axis=1, keepdims=True)
    below = (np.abs(W @ U.T) < separation.projection_bound(K, d)).sum(axis=1).mean()
    assert below == pytest.approx(separation.projection_miss_expectation(K, d), abs=0.03)
    with pytest.raises(ValueError, match="d"):
        separation.projection_miss_expectation(5, 0)


def test_projection_constant_subtracts_tokens_before_scaling():
    # two tokens 1 ulp apart: rescaling V by its largest entry first rounded them (c_w 0.434)
    w = np.array([math.cos(1.1), math.sin(1.1)])
    V = np.array([[0.7, 0.3], [np.nextafter(0.7, 1), 0.3], [-0.2, 0.9]])
    assert separation.projection_constant(w, V) == pytest.approx(
        float(projection_constant_mp(w, V)), rel=1e-12
    )
    rng = np.random.default_rng(5)
    for _ in range(100):  # mixed scales, near-duplicates and huge entries: finite and right
        V = rng.normal(size=(6, 3)) * 10.0 ** rng.integers(-150, 150, size=(6, 1))
        V[1] = np.nextafter(V[0], np.inf)
        w = rng.normal(size=3)
        assert separation.projection_constant(w, V) == pytest.approx(
            float(projection_constant_mp(w, V)), rel=1e-9
        )


def _c9_rates(power: float, draws: int = 400, seed: int = 9, root: float = 0.5) -> dict:
    """Check C9's measurement, as Chapter 2 makes it, against the constant with exponent
    ``power`` of |V|+1 and exponent ``root`` of 8/(pi d) (the reconstruction's 1/2 unless a test
    asks for a wrong form): the share of random directions on fresh Gaussian vocabularies whose
    projection constant reaches it, per (|V|, d) cell."""
    rng = np.random.default_rng(seed)
    sizes, dims, rates = [], [], []
    for K in (5, 10, 20, 50):
        for d in (2, 4, 8, 16):
            factor = (8.0 / (math.pi * d)) ** (root - 0.5)
            bound = separation.projection_bound(K, d, power=power) * factor
            hits = sum(
                separation.projection_constant(rng.normal(size=d), rng.normal(size=(K, d))) >= bound
                for _ in range(draws)
            )
            sizes.append(K), dims.append(d), rates.append(hits / draws)
    return separation.projection_rate_check(sizes, dims, rates, draws, power=power)


def test_c9_tells_the_reconstructed_constant_from_its_wrong_forms():
    """C9 passes for (|V|+1)^-2 and fails for one power of |V|+1 fewer (a constant (|V|+1) times
    too large: the rates fall below the union bound's floor) or more (too small: the rates rise
    towards 1, the slope of the missed pairs against |V| falls by about 1). The Poisson comparison
    alone passes for every form: it cannot tell them apart."""
    right = _c9_rates(2)
    assert right["holds"], right
    too_large, too_small = _c9_rates(1), _c9_rates(3)
    assert not too_large["holds"] and not too_large["floor_ok"], too_large
    assert not too_small["holds"] and not too_small["trend_ok"], too_small
    assert too_small["poisson_ok"]  # why the old criterion alone could not fail


def test_c9_tells_the_square_root_of_d_from_its_wrong_forms():
    """The factor sqrt(8/(pi d)): without its square root (8/(pi d), as a dropped root would
    write it) or without the factor, the expected misses change by about sqrt(d) and the slope
    against log d by 1/2; C9's dimension comparison fails on both, and the right form passes it
    (above, with the three others)."""
    right = _c9_rates(2)
    assert right["dimension_ok"] and right["largest_dimension_gap"] < 0.5 * 0.25, right
    for root in (1.0, 0.0):
        wrong = _c9_rates(2, root=root)
        assert not wrong["holds"] and not wrong["dimension_ok"], (root, wrong)
        assert wrong["largest_dimension_gap"] > 0.4, (root, wrong)


def test_dimension_exponent_closed_forms():
    dims = np.array([2.0, 4.0, 8.0, 16.0])
    for s in (-0.5, 0.0, 0.25):  # lambda = c d^s exactly: the slope is s
        lam = 0.3 * dims**s
        assert separation.dimension_exponent(dims, np.exp(-lam), 10**6) == pytest.approx(
            s, abs=1e-9
        )
    # the closed form's own lambda at |V| = 20: the slope np.polyfit finds
    lam = [separation.projection_miss_expectation(20, int(d)) for d in dims]
    assert separation.dimension_exponent(dims, np.exp(-np.array(lam)), 400) == pytest.approx(
        np.polyfit(np.log(dims), np.log(lam), 1)[0], rel=1e-12
    )
    for bad in ([4], [4, 4], [0, 3], [2.5, 4]):
        with pytest.raises(ValueError, match="dims"):
            separation.dimension_exponent(bad, [0.5] * len(bad), 400)
    with pytest.raises(ValueError, match="rates"):
        separation.dimension_exponent([2, 3], [0.5, 1.5], 400)
    with pytest.raises(ValueError, match="dims must hold at least two"):
        separation.projection_rate_check([5, 10, 5], [2, 2, 4], [0.6, 0.6, 0.6], 400)


def test_miss_exponent_closed_forms():
    # lambda = c (|V|+1)^s exactly: the slope is s
    sizes = np.array([3.0, 7.0, 15.0, 31.0])
    for s in (-1.0, 0.0, 0.5):
        lam = 0.2 * (sizes + 1) ** s
        assert separation.miss_exponent(sizes, np.exp(-lam), 10**6) == pytest.approx(s, abs=1e-9)
    # a rate of 0 is clipped at half a draw: finite
    assert np.isfinite(separation.miss_exponent([5, 10], [0.5, 0.0], 400))
    for bad in ([5], [5, 5], [0, 3], [2.5, 4]):
        with pytest.raises(ValueError, match="vocab_sizes"):
            separation.miss_exponent(bad, [0.5] * len(bad), 400)
    with pytest.raises(ValueError, match="rates"):
        separation.miss_exponent([2, 3], [0.5, 1.5], 400)
    with pytest.raises(ValueError, match="power"):
        separation.projection_bound(5, 2, power=-1)


def test_id_shifts_are_the_attention_term_of_the_residual_layer():
    V = np.array([[1.0], [2.0], [3.0], [4.0]])
    run = context_ids.context_ids(V, 2, w=[1.0], gamma=0.5)
    shifts = context_ids.id_shifts(run)
    assert shifts.shape == run.X.shape and shifts.dtype == np.float64
    # the ids minus the tokens, exactly: entry by entry at the run's precision
    with mpmath.workdps(run.dps):
        want = [
            float(i[0] - mpmath.mpf(t)) for i, t in zip(run.ids, run.X.reshape(-1), strict=True)
        ]
    np.testing.assert_array_equal(shifts.reshape(-1), want)
    # the float64 layer's output minus its input: the same attention term, to rounding
    with torch.no_grad():
        out = run.layer(torch.as_tensor(run.X)).numpy()
    np.testing.assert_allclose(shifts, out - run.X, rtol=1e-10, atol=1e-13)
    with pytest.raises(ValueError, match="run must be a result of context_ids"):
        context_ids.id_shifts(run.ids)
