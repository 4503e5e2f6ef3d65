"""lib.atlas: digits, rounding, bit counts and the counting bounds of the scaling atlas."""

from __future__ import annotations

import itertools
import math

import mpmath
import numpy as np
import pytest

from lib import atlas
from lib.experiments import tables


def test_digits_needed_is_log10_of_the_ratio():
    assert atlas.digits_needed(1e-6, 1.0) == pytest.approx(6.0)
    assert atlas.digits_needed(0.5, 2.0) == pytest.approx(math.log10(4.0))
    assert atlas.digits_needed(mpmath.mpf("1e-5000"), 10) == pytest.approx(5001.0)
    assert atlas.digits_needed(4.0, 1.0) == pytest.approx(-math.log10(4.0))


def test_round_to_digits_merges_exactly_what_is_closer_than_the_step():
    x = np.array([0.0, 0.3, 0.31, 1.0])
    r = atlas.round_to_digits(x, 1, 1.0)
    assert np.allclose(r, [0.0, 0.3, 0.3, 1.0])
    assert len(np.unique(r)) == 3  # 0.3 and 0.31 merge at one digit
    assert len(np.unique(atlas.round_to_digits(x, 2, 1.0))) == 4
    # the result lies on the grid origin + k * spread * 10**-digits, within half a step
    rng = np.random.default_rng(0)
    y = rng.uniform(-3, 5, size=1000)
    for p in (1, 3, 7):
        step = 8.0 * 10.0**-p
        z = atlas.round_to_digits(y, p, 8.0, origin=-3.0)
        assert np.abs(z - y).max() <= step / 2 * (1 + 1e-9)
        k = (z + 3.0) / step
        assert np.allclose(k, np.round(k))
    assert atlas.round_to_digits(np.ones((2, 3)), 4, 1.0).shape == (2, 3)


def test_bits_per_number_counts_sign_and_magnitude():
    assert atlas.bits_per_number(1.0, 1.0) == 1
    assert atlas.bits_per_number(1.0, 2.0) == 1  # never below the sign bit
    assert atlas.bits_per_number(1.0, 0.5**10) == 11
    assert atlas.bits_per_number(1000.0, 1.0) == 1 + 10  # 2^9 < 1000 <= 2^10
    assert atlas.bits_per_number(mpmath.mpf("1e300"), mpmath.mpf("1e-300")) == 1 + math.ceil(
        600 * math.log2(10)
    )


def _packing_is_separated(L, eps, D):
    """Independent check of the packing on a lattice: the pyramids' heights exceed eps and
    they fit the cube; the count is the number of cubes."""
    k = atlas.lipschitz_packing_bits(L, eps, 1)
    assert k < L / (2 * eps) <= k + 1
    return k > 0 and L * (1 / k) / 2 > eps


def test_lipschitz_packing_bits_closed_form_and_separation():
    assert atlas.lipschitz_packing_bits(1.0, 0.1, 1) == 4  # L/(2 eps) = 5: k = 4 (strictly < 5)
    assert atlas.lipschitz_packing_bits(1.0, 0.1, 3) == 64
    assert atlas.lipschitz_packing_bits(1.0, 0.09, 2) == 25  # L/(2 eps) = 5.56: k = 5
    assert atlas.lipschitz_packing_bits(1.0, 0.5, 4) == 0  # one constant serves
    for L, eps in itertools.product((1.0, 2.5, math.pi), (0.01, 0.07, 0.2)):
        if L > 2 * eps * 2:
            assert _packing_is_separated(L, eps, 1)


def test_packing_functions_are_lipschitz_and_far_apart():
    # build two of the derivation's functions in D = 1 and check both properties numerically
    L, eps = 1.0, 0.1
    k = atlas.lipschitz_packing_bits(L, eps, 1)
    s = 1 / k
    x = np.linspace(0, 1, 20001)
    c = (np.arange(k) + 0.5) * s
    pyramids = np.maximum(0, L * (s / 2 - np.abs(x[:, None] - c)))
    f1, f2 = pyramids.sum(1), pyramids[:, :-1].sum(1) - pyramids[:, -1]
    assert np.abs(np.diff(f1) / np.diff(x)).max() <= L * (1 + 1e-9)
    assert np.abs(f1 - f2).max() > 2 * eps


def test_memorization_bits():
    assert atlas.memorization_bits(10, 2) == 10.0
    assert atlas.memorization_bits(3, 8) == 9.0
    assert atlas.memorization_bits(5, 1) == 0.0


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: atlas.digits_needed(0.0, 1.0), "gap"),
        (lambda: atlas.digits_needed(-1e-3, 1.0), "gap"),
        (lambda: atlas.digits_needed(1e-3, float("inf")), "spread"),
        (lambda: atlas.digits_needed(1e-3, "x"), "spread"),
        (lambda: atlas.round_to_digits([1.0, np.nan], 3, 1.0), "values"),
        (lambda: atlas.round_to_digits([1.0], 0, 1.0), "digits"),
        (lambda: atlas.round_to_digits([1.0], 2.5, 1.0), "digits"),
        (lambda: atlas.round_to_digits([1.0], 3, 0.0), "spread"),
        (lambda: atlas.round_to_digits([1.0], 300, 1e-300), "spread"),
        (lambda: atlas.round_to_digits([1.0], 3, 1.0, origin=np.inf), "origin"),
        (lambda: atlas.bits_per_number(0.0, 1.0), "largest"),
        (lambda: atlas.bits_per_number(1.0, -1.0), "resolution"),
        (lambda: atlas.bits_per_number(True, 1.0), "largest"),
        (lambda: atlas.lipschitz_packing_bits(0.0, 0.1, 1), "lipschitz"),
        (lambda: atlas.lipschitz_packing_bits(1.0, 0.0, 1), "eps"),
        (lambda: atlas.lipschitz_packing_bits(1.0, 0.1, 0), "dim"),
        (lambda: atlas.lipschitz_packing_bits(1.0, 1e-300, 10**5), "eps"),
        (lambda: atlas.memorization_bits(0, 2), "n_items"),
        (lambda: atlas.memorization_bits(3, 1.5), "n_labels"),
    ],
)
def test_bad_input_names_the_argument(call, name):
    with pytest.raises(ValueError, match=name):
        call()


# --- the constructions' sizes ------------------------------------------------------------------


def test_random_vocabulary_norms_and_the_stream_it_reads():
    from lib import atlas as A

    V = A.random_vocabulary(64, 3, 7)
    norms = np.linalg.norm(V, axis=1)
    assert V.shape == (64, 3) and (norms >= 0.5 - 1e-15).all() and (norms <= 1.5 + 1e-15).all()
    # the same stream by hand: all directions, then the norms
    g = np.random.default_rng(7)
    u = g.normal(size=(64, 3))
    want = u / np.linalg.norm(u, axis=1, keepdims=True) * g.uniform(0.5, 1.5, size=(64, 1))
    assert np.array_equal(V, want)
    # a smaller draw shares the directions of the first tokens, not their norms
    small = A.random_vocabulary(6, 3, 7)
    np.testing.assert_allclose(
        small / np.linalg.norm(small, axis=1, keepdims=True), V[:6] / norms[:6, None], atol=1e-15
    )
    assert not np.allclose(np.linalg.norm(small, axis=1), norms[:6])
    with pytest.raises(ValueError, match="size"):
        A.random_vocabulary(0, 2, 0)


def test_ks_separations_orders_the_three_and_counts_the_digits():
    from lib import atlas as A

    V = A.random_vocabulary(4, 2, 3)
    row = A.ks_separations(V, 2, 3)
    assert (row["|V|"], row["d"], row["n"]) == (4, 2, 2) and 0 < row["c_w"] <= 1
    # the atlas's reading: measured gap > construction's delta_w > theorem's delta
    assert row["measured"] > row["construction"] > row["theorem"]
    # digits = log10(2 max|id| / gap): with the ids of unit size about -log10(gap)
    assert row["digits"] == pytest.approx(-row["measured"], abs=1.0)
    quick = A.ks_separations(V, 2, 3, measure=False)
    assert set(quick) == {"|V|", "d", "n", "c_w", "theorem", "construction"}
    assert quick["theorem"] == row["theorem"]
    with pytest.raises(ValueError, match="vocab"):
        A.ks_separations(np.array([[1.0, 0.0], [1.0, 0.0]]), 2, 0)
    with pytest.raises(ValueError, match="^n must be >= 2"):
        A.ks_separations(V, 1, 0)


def test_ks_bits_and_costs_of_a_built_approximator():
    from lib import approximation, targets
    from lib import atlas as A

    g = approximation.ks_approximator(targets.mean_product, 4, 3, 1, 0.1 / 16, gamma=1.0)
    largest = max(float(g.max_weight), float(np.abs(g.knots).max()))
    per = 1 + math.ceil(math.log2(largest / float(g.min_gap)))  # a ratio far from a power of 2
    assert A.ks_bits(g) == g.parameters * per
    with pytest.raises(ValueError, match="^approximator must be"):
        A.ks_bits("not an approximator")
    costs = tables.ks_costs(
        targets.mean_product, 4, 3, 1, 0.1 / 16, gamma=1.0, n_samples=500, seed=2
    )
    row = tables.ks_error_row(
        targets.mean_product, 4, 3, 1, 0.1 / 16, gamma=1.0, n_samples=500, seed=2
    )
    assert costs == {
        "params": g.parameters,
        "max |w|": float(g.max_weight),
        "L1": row.l1,
        "sup": row.sup,
    }


def test_lookup_layer_costs_follow_the_construction():
    from lib import atlas as A
    from lib import targets

    for m, D in [(3, 1), (4, 2), (3, 3)]:
        got = A.lookup_layer_costs(targets.sine_product, m, D, 10.0)
        beta = 10.0 * m * m
        # W_Q = beta I, W_K = I; D + 2 numbers per key token (a_i, b_i, v_i) beside the weights
        assert got["‖W_Q‖"] == pytest.approx(beta, rel=1e-14)
        assert got["‖W_K‖"] == pytest.approx(1.0, rel=1e-14)
        assert got["numbers"] - got["weights"] == m**D * (D + 2)
        assert got["largest"] == beta  # beta exceeds 2|c_i|, |c_i|^2 < D and |f| <= 1


def test_lhsl_bits_uses_built_layers_and_their_pattern_beyond():
    import pandas as pd

    from lib import atlas as A
    from lib import targets

    built = {(1, 2): A.lookup_layer_costs(targets.sine_product, 2, 1, 10.0)}
    lengths = pd.DataFrame(
        {"dim": [1, 1], "error": [0.2, 0.01], "m": [2, 50], "N": [2, 50], "β": [40.0, 25000.0]}
    )
    got = A.lhsl_bits(lengths, built)
    first, beyond = got.iloc[0], got.iloc[1]
    assert first["built"] and not beyond["built"]
    assert first["numbers"] == built[1, 2]["numbers"]
    # 1 sign bit + ceil(log2(40 / (1/40))) = 1 + 11
    assert first["bits/number"] == 12 and first["bits"] == 12 * first["numbers"]
    # beyond: W_Q = beta, W_K = 1, N (D + 2) numbers plus the weights, largest beta
    assert beyond["‖W_Q‖"] == 25000.0 and beyond["‖W_K‖"] == 1.0
    assert beyond["numbers"] == 50 * 3 + built[1, 2]["weights"]
    # resolution min(0.01, 1 / beta): 1 + ceil(log2(25000^2)) = 1 + 30
    assert beyond["bits/number"] == 31 and beyond["bits"] == 31 * beyond["numbers"]
    with pytest.raises(ValueError, match="^built has no built layer of the dimensions"):
        A.lhsl_bits(lengths.assign(dim=2), built)
    with pytest.raises(ValueError, match="^lengths must be a DataFrame"):
        A.lhsl_bits(lengths.drop(columns="β"), built)


def test_lhsl_costs_against_the_closed_form():
    from lib import atlas as A
    from lib import lookup, maxaffine, targets

    X = np.random.default_rng(4).uniform(size=(200, 3))
    m, kappa = 4, 10.0
    got = A.lhsl_costs(targets.mean_product_flat, X, m, kappa)
    c = maxaffine.grid_centres(m, 3)
    err = np.abs(
        lookup.soft_lookup(X, c, targets.mean_product_flat(c), kappa * m * m)
        - targets.mean_product_flat(X)
    )
    assert got["m"] == m and got["sup"] == err.max() and got["L1"] == err.sum(1).mean()
    layer = A.lookup_layer_costs(lambda p: targets.mean_product_flat(p)[:, 0], m, 3, kappa)
    per = A.bits_per_number(layer["largest"], min(err.max(), 1 / (kappa * m * m)))
    assert got["bits"] == 3 * layer["numbers"] * per
