"""lib.lookup: LHSL's lookup layers against their column formulas, closed forms and kernel
regression."""

import math

import numpy as np
import pandas as pd
import pytest
import torch
from oracles import mp_soft

from lib import cross as CA
from lib import lookup as L
from lib import maxaffine as M
from lib import sum_of_linear as SL
from lib.experiments import noise, tables
from lib.layers import SelfAttention

# Three lines in the plane: y1 = x1, y2 = x2, y3 = 0.5 (hand-computed points below).
A3 = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]])
B3 = np.array([0.0, 0.0, 0.5])


def target(p):
    return np.sin(2 * np.pi * p[:, 0]) * np.cos(2 * np.pi * p[:, 1])


def test_attention_approximator_at_centres_within_the_bound():
    c = M.grid_centres(4, 2)
    beta = 30.0
    g = L.attention_approximator(target, c, beta)
    A, b = M.voronoi_affine(c)
    out = g(c).numpy()[:, 0]
    bound = M.indicator_bound(beta, M.margin(c, A, b), len(c)) * np.abs(target(c)).max()
    assert np.all(np.abs(out - target(c)) <= bound + 1e-12)
    assert np.abs(out - target(c)).max() > 1e-6  # soft: not exact at this beta
    # a larger beta sharpens it to round-off
    sharp = L.attention_approximator(target, c, 3000.0)(c).numpy()[:, 0]
    np.testing.assert_allclose(sharp, target(c), atol=1e-12)


def test_literal_layer_equals_closed_form_and_kernel_regression():
    rng = np.random.default_rng(4)
    c = M.grid_centres(5, 2)
    x = rng.uniform(size=(300, 2))
    beta = 40.0
    g = L.attention_approximator(target, c, beta, chunk=64)
    layer = g(torch.from_numpy(x)).numpy()[:, 0]
    np.testing.assert_allclose(layer, L.soft_lookup(x, c, target(c), beta), atol=1e-13)
    # Gaussian-kernel Nadaraya-Watson with bandwidth h = 1/sqrt(2 beta), computed from distances
    np.testing.assert_allclose(
        layer, L.nadaraya_watson(x, c, target(c), 1 / math.sqrt(2 * beta)), atol=1e-12
    )
    # a two-token input sequence (token_dim 1) gives the same outputs through two copy terms
    g2 = L.attention_approximator(target, c, beta, token_dim=1)
    assert g2.linear.A.shape[0] == 2
    np.testing.assert_allclose(g2(x).numpy()[:, 0], layer, atol=1e-13)


def test_rows_option_of_self_attention_equals_slicing():
    layer = SelfAttention(4, head_dim=3, residual=True, seed=1)
    X = torch.randn(2, 6, 4, dtype=torch.float64)
    np.testing.assert_allclose(layer(X, rows=2).detach(), layer(X)[:, :2].detach(), atol=1e-14)
    low = SelfAttention(4, head_dim=3, rank=1, seed=1)
    np.testing.assert_allclose(low(X, rows=3).detach(), low(X)[:, :3].detach(), atol=1e-14)
    with pytest.raises(ValueError, match="rows"):
        layer(X, rows=7)


def test_seq2seq_positions_and_the_bonus_zero_collapse():
    c = M.grid_centres(4, 2)
    rng = np.random.default_rng(5)
    x = rng.uniform(size=(200, 2))

    def two(p):
        return np.stack([target(p), p[:, 0] + p[:, 1]], axis=1)

    s = L.seq2seq_approximator(two, c, 2000.0, n_positions=2, bonus=50.0)
    out = s(x).numpy()
    assert out.shape == (200, 2, 1)
    for j in range(2):
        np.testing.assert_allclose(
            out[:, j, 0], L.soft_lookup(x, c, two(c)[:, j], 2000.0), atol=1e-12
        )
    flat = L.seq2seq_approximator(two, c, 2000.0, n_positions=2, bonus=0.0)(x).numpy()
    np.testing.assert_allclose(flat[:, 0], flat[:, 1], atol=1e-14)  # every position the same
    np.testing.assert_allclose(
        flat[:, 0, 0], out.mean(axis=1)[:, 0], atol=1e-12
    )  # ... the blocks' average


def pd_rank(a):
    import pandas as pd

    return pd.Series(a).rank().to_numpy()


def test_cross_attention_lookup_equals_the_self_attention_construction():
    rng = np.random.default_rng(8)
    c = M.grid_centres(6, 2)
    x = rng.uniform(-0.2, 1.2, size=(400, 2))  # also outside the grid's square
    for beta in (5.0, 360.0):
        cross = CA.cross_attention_approximator(target, c, beta)
        selfa = L.attention_approximator(target, c, beta)
        np.testing.assert_allclose(cross(x).numpy(), selfa(x).numpy(), atol=1e-12)
        np.testing.assert_allclose(
            cross(x).numpy()[:, 0], L.soft_lookup(x, c, target(c), beta), atol=1e-12
        )
    linear, context, attention = cross  # unpacks as (L, Y, CrossAttention)
    np.testing.assert_allclose(context.numpy(), CA.context_tokens(c, target(c)))
    assert context.shape == (36, 4) and attention.d_q == 3 and attention.d_kv == 4
    # two scalar tokens instead of one 2-D token: same outputs
    two = CA.cross_attention_approximator(target, c, 360.0, token_dim=1)
    np.testing.assert_allclose(two(x).numpy(), cross(x).numpy(), atol=1e-13)


def test_context_tokens_fields_and_biases():
    c = np.array([[0.5, 1.0], [2.0, 0.0]])
    Y = CA.context_tokens(c, [3.0, 4.0])
    np.testing.assert_allclose(Y, [[1.0, 2.0, -1.25, 3.0], [4.0, 0.0, -4.0, 4.0]])
    np.testing.assert_allclose(
        CA.context_tokens(c, [3.0, 4.0], biases=[0.0, 0.0])[:, 2], [0.0, 0.0]
    )
    with pytest.raises(ValueError, match="biases must have shape"):
        CA.context_tokens(c, [3.0, 4.0], biases=np.zeros((2, 2)))


def test_context_length_for_a_linear_target():
    # f(x) = x on [0, 1] with the hard-like lookup: the sup error of an m-grid is about 1/(2m)
    x = np.linspace(0, 1, 2001)[:, None]
    out = CA.context_length(lambda p: p[:, 0], 1, [0.26, 0.06, 1e-9], 1000.0, x, m_max=12)
    assert out.m.iloc[0] == 2 and out.m.iloc[1] == 9 and np.isnan(out.m.iloc[2])
    assert out.N.iloc[1] == 9
    with pytest.raises(ValueError, match="points must have shape"):
        CA.context_length(lambda p: p[:, 0], 2, [0.1], 10.0, x, m_max=3)


def test_f_returning_a_bfloat16_tensor_is_accepted():
    g = L.attention_approximator(
        lambda p: torch.tensor(target(p)).to(torch.bfloat16), M.grid_centres(3, 2), 50.0
    )
    assert g(M.grid_centres(3, 2)).shape == (9, 1)


# --- scores far from the origin: against mpmath on the same float64 inputs ----------------------

OFFSETS = [1e6, 1e7, 3e7, 1e8]


@pytest.mark.parametrize("o", OFFSETS)
def test_far_soft_lookup_and_kernel_regression_against_mpmath(o):
    c = np.array([[o + 0.1], [o + 0.2]])
    x = np.array([[o + 0.11], [o + 0.15], [o + 0.19], [o + 0.3]])
    want = mp_soft(x, c, [0.0, 1.0], 1e3)
    assert want[0] == pytest.approx(
        1 / (1 + math.exp(1e3 * (0.09**2 - 0.01**2))), rel=1e-6
    )  # 3.4e-4
    np.testing.assert_allclose(L.soft_lookup(x, c, [0.0, 1.0], 1e3), want, rtol=1e-7, atol=1e-12)
    np.testing.assert_allclose(
        L.nadaraya_watson(x, c, [0.0, 1.0], 1 / math.sqrt(2e3)), want, rtol=1e-7, atol=1e-12
    )


def test_soft_lookup_of_a_point_between_two_far_centres():
    got = L.soft_lookup([[1e7 + 0.11]], [[1e7 + 0.1], [1e7 + 0.2]], [0, 1], 1e3)[0]
    assert got == pytest.approx(
        mp_soft([[1e7 + 0.11]], [[1e7 + 0.1], [1e7 + 0.2]], [0, 1], 1e3)[0], rel=1e-7
    )
    assert got == pytest.approx(3.4e-4, rel=0.02)


@pytest.mark.parametrize("o", [1e6, 1e7, 1e8])
def test_far_lookup_layers_equal_the_closed_form(o):
    c = M.grid_centres(4, 2, o, o + 1.0)
    x = o + np.random.default_rng(9).uniform(size=(200, 2))

    def f(p):
        return target(p - o)

    want = mp_soft(x[:20], c, f(c), 40.0)
    np.testing.assert_allclose(L.soft_lookup(x[:20], c, f(c), 40.0), want, rtol=0, atol=1e-9)
    layer = L.attention_approximator(f, c, 40.0)
    assert layer.reference is not None
    np.testing.assert_allclose(
        layer(x).numpy()[:, 0], L.soft_lookup(x, c, f(c), 40.0), rtol=0, atol=1e-9
    )
    cross = CA.cross_attention_approximator(f, c, 40.0)
    np.testing.assert_allclose(
        cross(x).numpy()[:, 0], L.soft_lookup(x, c, f(c), 40.0), rtol=0, atol=1e-9
    )
    seq = L.seq2seq_approximator(lambda p: np.stack([f(p), p[:, 0] - o], 1), c, 40.0, 2, 50.0)(
        x
    ).numpy()
    np.testing.assert_allclose(
        seq[:, 1, 0], L.soft_lookup(x, c, c[:, 0] - o, 40.0), rtol=0, atol=1e-9
    )
    # the same construction near the origin gives the same numbers
    near = L.attention_approximator(target, c - o, 40.0)
    assert near.reference is None
    np.testing.assert_allclose(layer(x).numpy(), near(x - o).numpy(), rtol=0, atol=1e-9)
    # Chapter 5's error row on a far grid equals the one near the origin
    far_row, near_row = (
        tables.lookup_error_row(f, 8, 10.0, x, low=o, high=o + 1.0),
        tables.lookup_error_row(target, 8, 10.0, x - o),
    )
    for key in ("sup_hard", "sup", "l2", "indicator_error"):
        assert getattr(far_row, key) == pytest.approx(getattr(near_row, key), rel=1e-6, abs=1e-9)


def test_context_tokens_with_a_reference():
    c = np.array([[1e7 + 0.5, 3.0], [1e7 - 0.5, 1.0]])
    Y = CA.context_tokens(c, [3.0, 4.0], reference=[1e7, 2.0])
    np.testing.assert_allclose(Y, [[1.0, 2.0, -1.25, 3.0], [-1.0, -2.0, -1.25, 4.0]])
    with pytest.raises(ValueError, match=r"reference must have shape \(2,\)"):
        CA.context_tokens(c, [3.0, 4.0], reference=[1.0])


# --- validation and sizes -----------------------------------------------------------------------


def test_builders_count_before_allocating(monkeypatch):
    from lib import layers

    huge = np.broadcast_to(np.zeros(1), (10**6, 10**4, 10))  # a view: nothing allocated yet
    with pytest.raises(ValueError, match="SumOfLinear: the number of parameters .*MAX_PARAMETERS"):
        SL.SumOfLinear(huge, np.ones((10**6, 1, 1)), np.zeros((10**4, 1)))
    with pytest.raises(
        ValueError, match="the lookup layer: the number of parameters .*MAX_PARAMETERS"
    ):
        L.seq2seq_approximator(lambda p: np.zeros((len(p), 4096)), M.grid_centres(64, 2), 1.0, 4096)
    with pytest.raises(
        ValueError, match="permuted ranks, 1,000,000 x 200 would be 200,000,000.*MAX_MATRIX_ENTRIES"
    ):
        noise.trend_test(np.arange(200.0), -np.arange(200.0), permutations=1_000_000)
    monkeypatch.setattr(layers, "MAX_PARAMETERS", 10)
    with pytest.raises(ValueError, match="MAX_PARAMETERS = 10"):
        CA.cross_attention_approximator(target, M.grid_centres(8, 2), 1.0)


def test_cross_lookup_checks_its_parts():
    c = M.grid_centres(3, 2)
    linear, context, attention = CA.cross_attention_approximator(target, c, 30.0)
    rebuilt = CA.CrossLookup(
        linear, context, attention, token_dim=2, beta=30.0, centres=c, values=target(c)[:, None]
    )
    x = np.random.default_rng(12).uniform(size=(20, 2))
    np.testing.assert_allclose(
        rebuilt(x).numpy()[:, 0], L.soft_lookup(x, c, target(c), 30.0), rtol=0, atol=1e-12
    )
    for kwargs, match in [
        ({"beta": True}, "beta must be a real number"),
        ({"token_dim": 0}, "token_dim must be >= 1"),
        ({"values": np.ones((9, 1)) * 1j}, "values must be a real array, not complex"),
        ({"context": context.numpy()}, "context must be a 2-D"),
        ({"linear": None}, "linear and attention"),
    ]:
        args = {
            "linear": linear,
            "context": context,
            "attention": attention,
            "token_dim": 2,
            "beta": 30.0,
            "centres": c,
            "values": target(c)[:, None],
        } | kwargs
        with pytest.raises(ValueError, match=match):
            CA.CrossLookup(args.pop("linear"), args.pop("context"), args.pop("attention"), **args)


def test_context_length_checks_its_largest_grid_first():
    x = np.linspace(0, 1, 11)[:, None]
    with pytest.raises(
        ValueError, match=r"largest grid, m_max\*\*dim = 1000000000000000000\*\*1 cells .*MAX_CELLS"
    ):
        CA.context_length(lambda p: p[:, 0], 1, [0.1], 10.0, x, m_max=10**18)
    with pytest.raises(
        ValueError, match=r"1025\*\*2 cells would be 1,050,625.*MAX_CELLS = 1,048,576"
    ):
        CA.context_length(lambda p: p[:, 0] * p[:, 1], 2, [0.1], 10.0, np.zeros((3, 2)), m_max=1025)


def sine(p):
    return np.prod(np.sin(np.pi * p), axis=1)


@pytest.mark.parametrize("dim, m", [(1, 5), (2, 4), (3, 3)])
def test_product_lookup_equals_the_full_grid_lookup(dim, m):
    # the Gaussian weights and the product values factorise: the D-dim lookup is the product
    # of 1-D ones
    x = np.random.default_rng(dim).uniform(size=(300, dim))
    c = M.grid_centres(m, dim)
    for kappa in (0.5, 10.0):
        np.testing.assert_allclose(
            CA.product_lookup(sine, x, m, kappa),
            L.soft_lookup(x, c, sine(c), kappa * m * m),
            rtol=0,
            atol=1e-13,
        )


def test_product_context_length_is_context_length_on_the_lattice():
    # the lattice sup computed from 1-D lookups equals the brute-force sup of soft_lookup on the
    # same lattice
    side = np.linspace(0, 1, 9)
    lattice = np.stack(np.meshgrid(side, side, indexing="ij"), axis=-1).reshape(-1, 2)
    errors = [0.5, 0.3, 0.15, 0.08, 1e-9]
    fast = CA.product_context_length(sine, 2, errors, 10.0, m_max=8, resolution=9)
    brute = CA.context_length(sine, 2, errors, 10.0, lattice, m_max=8)
    pd.testing.assert_frame_equal(fast.drop(columns="sup"), brute.drop(columns="sup"))
    np.testing.assert_allclose(fast.sup, brute.sup, rtol=1e-12, atol=1e-15)
    assert (
        fast.m.iloc[0] == 3
        and fast.m.iloc[1] == 6
        and np.isnan(fast.m.iloc[-1])
        and (fast.dim == 2).all()
    )
    assert fast.sup.iloc[0] <= 0.5 and np.isnan(fast.sup.iloc[-1])
    # in 1-D at the lattice point x = 0: sin(0) = 0 against the lookup, which on one cell is
    # sin(pi/2) = 1
    one = CA.product_context_length(sine, 1, [0.99, 1.0], 10.0, m_max=1, resolution=3)
    assert np.isnan(one.m.iloc[0]) and one.m.iloc[1] == 1 and one.N.iloc[1] == 1


def test_product_context_length_validates():
    with pytest.raises(
        ValueError, match=r"lattice, resolution\*\*dim = 1001\*\*3 points .*MAX_MATRIX"
    ):
        CA.product_context_length(sine, 3, [0.1], 10.0, m_max=2, resolution=1001)
    with pytest.raises(ValueError, match="MAX_CELLS"):
        CA.product_context_length(sine, 1, [0.1], 10.0, m_max=2**21)
    with pytest.raises(ValueError, match="resolution must be"):
        CA.product_context_length(sine, 1, [0.1], 10.0, m_max=2, resolution=1)
    with pytest.raises(ValueError, match="errors must be finite"):
        CA.product_context_length(sine, 1, [-0.1], 10.0, m_max=2)
    with pytest.raises(ValueError, match="g must map"):
        CA.product_context_length(lambda p: np.ones((len(p), 2)), 1, [0.1], 10.0, m_max=2)
    with pytest.raises(ValueError, match="g must be callable"):
        CA.product_lookup(None, np.zeros((2, 1)), 2, 1.0)
    with pytest.raises(ValueError, match="kappa must be"):
        CA.product_lookup(sine, np.zeros((2, 1)), 2, 0.0)


# --- one centre elsewhere: no shared reference can fix it, the per-point computations do ------

OUTLIER_C = np.array([[1e8 + 0.025], [1e8 + 0.075], [0.0]])
OUTLIER_X = np.array([[1e8 + 0.035], [1e8 + 0.07], [0.3], [5e7 + 1.0]])


def test_nearest_centre_with_one_centre_far_from_the_others():
    # distances from the float64 inputs, exactly: 0.01 and 0.04 to the first two centres
    nearest = [
        int(np.argmin([abs(float(p[0]) - float(c[0])) for c in OUTLIER_C])) for p in OUTLIER_X
    ]
    assert nearest == [0, 1, 2, 0]
    np.testing.assert_array_equal(L.hard_lookup(OUTLIER_X, OUTLIER_C, [0, 1, 2]), nearest)


def test_soft_lookup_and_kernel_regression_with_one_centre_far_from_the_others():
    v = [0.0, 1.0, 2.0]
    want = mp_soft(OUTLIER_X, OUTLIER_C, v, 100.0)
    assert want[0] == pytest.approx(1 / (1 + math.exp(100 * (0.04**2 - 0.01**2))), rel=1e-6)
    np.testing.assert_allclose(L.soft_lookup(OUTLIER_X, OUTLIER_C, v, 100.0), want, atol=1e-9)
    # 31 centres near 1e6 and one at -1e6 (the kernel-regression form)
    rng = np.random.default_rng(3)
    c = np.vstack([1e6 + rng.uniform(size=(31, 1)), [[-1e6]]])
    vals = rng.normal(size=32)
    x = 1e6 + rng.uniform(size=(50, 1))
    np.testing.assert_allclose(
        L.nadaraya_watson(x, c, vals, 0.05), mp_soft(x, c, vals, 1 / (2 * 0.05**2)), atol=1e-9
    )


def test_layers_with_one_centre_far_from_the_others_refuse_or_agree():
    v = np.array([0.0, 1.0, 2.0])

    def f(p):
        return v[np.argmin(np.abs(p - OUTLIER_C[:, 0]), axis=1)]

    for build in (L.attention_approximator, CA.cross_attention_approximator):
        layer = build(f, OUTLIER_C, 100.0)
        # near the centre at 0 the layer's float64 scores resolve the cells: the right value
        np.testing.assert_allclose(
            layer(np.array([[0.3]])).numpy()[:, 0],
            mp_soft([[0.3]], OUTLIER_C, v, 100.0),
            atol=1e-12,
        )
        # near 1e8 they cannot (scores ~1e18, differences ~0.15): a refusal naming the point,
        # never the 1.0 of a wrong cell
        with pytest.raises(ValueError, match=r"x\[0\] = .*closed form"):
            layer(OUTLIER_X[:1])
        np.testing.assert_allclose(
            layer.closed_form(OUTLIER_X).numpy()[:, 0],
            mp_soft(OUTLIER_X, OUTLIER_C, v, 100.0),
            atol=1e-9,
        )


def test_closed_form_of_the_seq2seq_layer_equals_the_layer():
    # the block formula (e^M u_j + sum_{j' != j} u_j') / (e^M + P - 1) against the literal layer,
    # with and without the position bonus
    c = M.grid_centres(4, 2)
    x = np.random.default_rng(5).uniform(size=(100, 2))

    def f(p):
        return np.stack([target(p), p[:, 0], p[:, 1] ** 2], 1)

    for bonus in (0.0, 2.0, 50.0):
        layer = L.seq2seq_approximator(f, c, 40.0, 3, bonus)
        np.testing.assert_allclose(layer(x).numpy(), layer.closed_form(x).numpy(), atol=1e-12)
    # bonus 0: every position returns the mean of the three (C17's failure case)
    flat = L.seq2seq_approximator(f, c, 40.0, 3, 0.0).closed_form(x).numpy()
    np.testing.assert_allclose(flat[:, 0], flat[:, 2], atol=1e-15)


def test_cross_lookup_with_another_context_is_checked_against_that_context():
    # Chapter 6's linear context (offsets 0): the closed form is the softmax of its own pieces,
    # computed independently here from the plain scores (near the origin, no cancellation)
    c = M.grid_centres(3, 2)
    cross = CA.cross_attention_approximator(target, c, 40.0)
    v = np.arange(9.0)
    ctx = torch.from_numpy(CA.context_tokens(c, v, biases=np.zeros(9)))
    layer = CA.CrossLookup(
        cross.linear, ctx, cross.attention, token_dim=2, beta=40.0, centres=c, values=v[:, None]
    )
    x = np.random.default_rng(6).uniform(size=(50, 2))
    want = torch.softmax(40.0 * torch.from_numpy(x @ (2 * c).T), dim=-1).numpy() @ v
    np.testing.assert_allclose(layer.closed_form(x).numpy()[:, 0], want, atol=1e-12)
    np.testing.assert_allclose(layer(x).numpy()[:, 0], want, atol=1e-12)
