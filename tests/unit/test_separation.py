"""lib.separation: tokenwise separation, strict constants, the projection constant, check C9."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from oracles import U, derandomized_settings, projection_constant_mp

from lib import context_ids, contextual, hardmax, separation

SETTINGS = derandomized_settings()


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


@st.composite
def vocabularies(draw):
    d = draw(st.integers(1, 3))
    K = draw(st.integers(2, 6))
    scale = draw(st.sampled_from([1e-12, 1e-3, 1.0, 1e6, 1e12]))
    V = scale * np.array(draw(st.lists(st.floats(-1, 1), min_size=K * d, max_size=K * d)))
    V = V.reshape(K, d)
    if draw(st.booleans()):
        V[1] = np.nextafter(V[0], np.inf)  # two tokens 1 ulp apart
    return V


@SETTINGS
@given(V=vocabularies(), seed=st.integers(0, 1000))
def test_projection_constant_against_mpmath(V, seed):
    if len(np.unique(V, axis=0)) < len(V) or (V == 0).all():
        with pytest.raises(ValueError):  # repeated tokens, or nothing but the zero token
            separation.projection_constant(np.ones(V.shape[1]), V)
        return
    w = np.random.default_rng(seed).normal(size=V.shape[1])
    want = float(projection_constant_mp(w, V))
    got = separation.projection_constant(w, V)
    # each scaled difference has unit-size entries: the dot product and norm carry about d u of
    # relative error, relative to the difference's size, i.e. absolute in c_w
    assert abs(got - want) <= 16 * V.shape[1] * U
