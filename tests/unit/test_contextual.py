"""lib.contextual: the Theorem 2 layer, its context ids and score separation; lib.exact's
attention in mpmath."""

import math

import mpmath
import numpy as np
import pytest
import torch

from lib import context_ids, contextual, exact, layers, separation


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
