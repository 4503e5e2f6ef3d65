"""lib.maxaffine: max-affine partitions, the indicator bound and LHSL's attention lookup."""

import math

import numpy as np
import pandas as pd
import pytest
import torch
from oracles import mp_scores

from lib import cross as CA
from lib import lookup as L
from lib import maxaffine as M
from lib import sum_of_linear as SL
from lib.experiments import noise, tables

# Three lines in the plane: y1 = x1, y2 = x2, y3 = 0.5 (hand-computed points below).
A3 = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]])
B3 = np.array([0.0, 0.0, 0.5])


def target(p):
    return np.sin(2 * np.pi * p[:, 0]) * np.cos(2 * np.pi * p[:, 1])


def test_hand_computed_max_affine_cells_and_margins():
    x = np.array([[0.9, 0.2], [0.1, 0.7], [0.1, 0.2], [0.3, 0.3]])
    np.testing.assert_allclose(M.max_affine(x, A3, B3), [0.9, 0.7, 0.5, 0.5])
    np.testing.assert_array_equal(M.cell_index(x, A3, B3), [0, 1, 2, 2])
    np.testing.assert_allclose(M.margin(x, A3, B3), [0.4, 0.2, 0.3, 0.2])
    E = M.partition_indicator(x, A3, B3)
    np.testing.assert_array_equal(E, np.eye(3)[[0, 1, 2, 2]])
    # a tie (x1 = x2 = 0.8) goes to the lowest index, and its margin is 0
    assert M.cell_index([0.8, 0.8], A3, B3) == 0 and M.margin([0.8, 0.8], A3, B3) == 0.0
    # leading shapes are kept
    assert M.max_affine(np.zeros((2, 5, 2)), A3, B3).shape == (2, 5)
    # a single piece has no competitor
    assert M.margin(x, A3[:1], B3[:1]).tolist() == [math.inf] * 4


def test_soft_indicator_and_its_error_by_hand():
    x = np.array([[0.9, 0.2]])
    beta = 3.0
    w = np.exp(beta * np.array([0.9, 0.2, 0.5]))
    np.testing.assert_allclose(M.soft_indicator(x, A3, B3, beta)[0], w / w.sum(), rtol=1e-14)
    expected = 2 * (1 - w[0] / w.sum())
    assert M.indicator_error(x, A3, B3, beta)[0] == pytest.approx(expected, rel=1e-13)
    # far below float64's resolution of 1 - sigma: still resolved, and equal to 2 s / (1 + s)
    s = math.exp(-1000 * 0.7) + math.exp(-1000 * 0.4)
    assert M.indicator_error(x, A3, B3, 1000.0)[0] == pytest.approx(2 * s / (1 + s), rel=1e-12)
    assert 1 - M.soft_indicator(x, A3, B3, 1000.0)[0, 0] == 0.0  # the naive form cancels to 0


def test_indicator_bound_holds_and_is_tight_for_two_cells():
    rng = np.random.default_rng(1)
    A, b = rng.normal(size=(7, 3)), rng.normal(size=7)
    x = rng.normal(size=(4000, 3))
    for beta in (0.5, 5.0, 50.0):
        err = M.indicator_error(x, A, b, beta)
        assert np.all(err <= M.indicator_bound(beta, M.margin(x, A, b), 7) * (1 + 1e-12))
    # two cells: the error is 2 e^{-bD} / (1 + e^{-bD}), the bound 2 e^{-bD}
    A2, b2 = np.array([[1.0], [-1.0]]), np.zeros(2)
    err = M.indicator_error([[0.25]], A2, b2, 2.0)[0]
    bound = M.indicator_bound(2.0, 0.5, 2)
    assert bound == pytest.approx(2 * math.exp(-1.0))
    assert err == pytest.approx(bound / (1 + math.exp(-1.0)))
    np.testing.assert_allclose(M.indicator_bound(1.0, [0.0, np.inf], 3), [4.0, 0.0])


def test_voronoi_is_max_affine():
    rng = np.random.default_rng(2)
    c = rng.uniform(size=(50, 3))
    A, b = M.voronoi_affine(c)
    np.testing.assert_allclose(A, 2 * c)
    np.testing.assert_allclose(b, -(c**2).sum(1))
    x = rng.uniform(size=(5000, 3))
    nearest = ((x[:, None, :] - c[None]) ** 2).sum(-1).argmin(1)
    np.testing.assert_array_equal(M.cell_index(x, A, b), nearest)


def test_grid_centres():
    np.testing.assert_allclose(
        M.grid_centres(2, 2), [[0.25, 0.25], [0.25, 0.75], [0.75, 0.25], [0.75, 0.75]]
    )
    c = M.grid_centres(3, 1, low=-1.5, high=1.5)
    np.testing.assert_allclose(c[:, 0], [-1.0, 0.0, 1.0])
    assert M.grid_centres(5, 3).shape == (125, 3)


@pytest.mark.parametrize("dim", [1, 2, 3])
@pytest.mark.parametrize("m", [1, 2, 3, 4, 7])
def test_grid_margin_closed_form_equals_the_score_margin(m, dim):
    """The closed form of the book's Proposition on grid margins against margin() from the
    scores."""
    rng = np.random.default_rng(10 * m + dim)
    x = rng.uniform(size=(4000, dim))
    x[: 2**dim] = (
        np.array(np.meshgrid(*[[0.0, 1.0]] * dim, indexing="ij")).reshape(dim, -1).T
    )  # domain corners
    scored = M.margin(x, *M.voronoi_affine(M.grid_centres(m, dim)))
    closed = M.grid_margin(x, m)
    if m == 1:
        assert np.isinf(scored).all() and np.isinf(closed).all()
        return
    np.testing.assert_allclose(closed, scored, rtol=0, atol=1e-13)
    h2 = (1.0 / m) ** 2
    corner_cell = ((x < 1.0 / m) | (x > 1.0 - 1.0 / m)).all(axis=1)
    assert scored.max() <= 2 * h2 * (1 + 1e-12)
    np.testing.assert_allclose(
        scored[: 2**dim], 2 * h2, rtol=1e-12
    )  # the bound is attained at the corners
    if m >= 3:
        assert scored[~corner_cell].max() <= h2 * (1 + 1e-12)
        assert scored[~corner_cell].max() > 0.8 * h2  # and h^2 is approached inside


def test_grid_margin_bound_h2_and_2h2_by_hand():
    # m = 4 on [0, 1]^2: h = 1/4. Centre of an interior cell: margin h^2; corner (0, 0): 2h^2;
    # a boundary: 0.
    A, b = M.voronoi_affine(M.grid_centres(4, 2))
    pts = np.array(
        [[0.375, 0.375], [0.0, 0.0], [1.0, 0.0], [0.25, 0.1], [0.125, 0.0], [0.0, 0.375]]
    )
    want = [1 / 16, 1 / 8, 1 / 8, 0.0, 1 / 16, 1 / 16]
    np.testing.assert_allclose(M.margin(pts, A, b), want, atol=1e-15)
    np.testing.assert_allclose(M.grid_margin(pts, 4), want, atol=1e-15)
    # the share of [0,1]^2 whose margin exceeds h^2 is 1/m^2 (a quarter of each of the four corner
    # cells): on the 400 x 400 midpoint lattice it is exactly 4 * 50^2 / 400^2
    side = (np.arange(400) + 0.5) / 400
    lattice = np.stack(np.meshgrid(side, side), axis=-1).reshape(-1, 2)
    assert (M.margin(lattice, A, b) > 1 / 16 * (1 + 1e-12)).mean() == 1 / 16
    # other boxes scale with h
    np.testing.assert_allclose(
        M.grid_margin([[-1.0, -1.0], [0.0, 0.0]], 2, low=-1.0, high=1.0), [2.0, 0.0]
    )
    with pytest.raises(ValueError, match=r"x must lie in \[low, high\]"):
        M.grid_margin([[1.2, 0.5]], 4)
    with pytest.raises(ValueError, match="high must exceed low"):
        M.grid_margin([[0.5, 0.5]], 4, low=1.0, high=0.0)
    with pytest.raises(ValueError, match="m must be"):
        M.grid_margin([[0.5, 0.5]], 0)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: M.max_affine([[0.1, 0.2]], A3, B3[:2]), "b must have shape"),
        (lambda: M.max_affine([[0.1, 0.2, 0.3]], A3, B3), r"x must have shape \(\.\.\., 2\)"),
        (lambda: M.soft_indicator([[0.1, 0.2]], A3, B3, math.inf), "beta must be finite"),
        (lambda: M.soft_indicator([[0.1, 0.2]], A3, B3, 0.0), "beta must be > 0"),
        (lambda: M.voronoi_affine(np.zeros((0, 2))), "centres must not be empty"),
        (lambda: M.indicator_bound(1.0, -0.1, 3), "margin must be >= 0"),
        (lambda: M.indicator_bound(1.0, 0.1, 0), "n_cells must be >= 1"),
        (lambda: M.grid_centres(2000, 2), "more than the limit MAX_CELLS"),
        (lambda: M.grid_centres(4, 2, low=1.0, high=0.0), "high must exceed low"),
        (
            lambda: L.attention_approximator(target, np.zeros((0, 2)), 1.0),
            "centres must not be empty",
        ),
        (
            lambda: L.attention_approximator(target, M.grid_centres(2, 2), float("nan")),
            "beta must be finite",
        ),
        (
            lambda: L.attention_approximator(lambda p: p[:, :1].T, M.grid_centres(2, 2), 1.0),
            "f must map",
        ),
        (
            lambda: L.attention_approximator(target, M.grid_centres(2, 2), 1.0, token_dim=3),
            "token_dim must divide",
        ),
        (
            lambda: L.attention_approximator(target, M.grid_centres(2, 2), 1.0)(np.zeros((3, 3))),
            r"x must be points",
        ),
        (lambda: L.seq2seq_approximator(target, M.grid_centres(2, 2), 1.0, 2), "f must map"),
        (
            lambda: L.seq2seq_approximator(
                lambda p: np.stack([target(p)] * 2, 1), M.grid_centres(2, 2), 1.0, 2, -1.0
            ),
            "bonus must be >= 0",
        ),
        (
            lambda: SL.SumOfLinear(np.zeros((2, 3, 4)), np.zeros((1, 5, 6)), np.zeros((3, 6))),
            "must be",
        ),
        (
            lambda: L.nadaraya_watson([[0.1, 0.2]], M.grid_centres(2, 2), np.ones(3), 0.1),
            "values must have one row",
        ),
    ],
)
def test_bad_input_raises_value_error(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def pd_rank(a):
    return pd.Series(a).rank().to_numpy()


def test_scores_relative_to_the_top_piece_do_not_overflow_where_the_answer_is_finite():
    # beta * scores overflows (9e308), beta * (differences from the top piece) gives -inf and 0:
    # the weights are exactly (0, 1), the indicator error exactly 0
    np.testing.assert_array_equal(
        M.soft_indicator([[3.0, 9.0]], np.eye(2), [0.0, 0.0], 1e308), [[0, 1]]
    )
    assert M.indicator_error([[3.0, 9.0]], np.eye(2), [0.0, 0.0], 1e308)[0] == 0.0


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: M.cell_index([[1e300]], [[1e300], [1.0]], [0.0, 0.0]), "overflow"),
        (
            lambda: L.nadaraya_watson([[0.5, 0.5]], M.grid_centres(2, 2), np.ones(4), 1e-200),
            "overflow",
        ),
        (lambda: M.voronoi_affine([[1e200, 0.0]]), "centres are too large"),
        (lambda: M.grid_centres(2, 1, -1e308, 1e308), "finite amount"),
        (
            lambda: L.attention_approximator(target, [[0.0, 0.0], [1.0, 1.0]], 2.0)(
                np.array([[50.0, 50.0]])
            ),
            "too far from the centres",
        ),
        (
            lambda: L.seq2seq_approximator(
                lambda p: np.stack([target(p)] * 2, 1), M.grid_centres(2, 2), 2.0, 2, 1e17
            ),
            "bonus must be <=",
        ),
        (
            lambda: L.seq2seq_approximator(target, M.grid_centres(2, 2), 2.0, None),
            "n_positions must be an integer",
        ),
        (
            lambda: CA.context_length(
                lambda p: p[:, 0], 1, [np.nan], 10.0, np.zeros((3, 1)), m_max=2
            ),
            "errors must be finite",
        ),
        (
            lambda: CA.context_length(lambda p: p[:, 0], 1, [0.1], None, np.zeros((3, 1)), m_max=2),
            "kappa must be a real",
        ),
        (lambda: M.indicator_bound(1.0, "1.5", 3), "margin must be a real array"),
        (
            lambda: noise.trend_test(np.arange(4.0), np.arange(4.0), permutations=10**18),
            "permutations must be <=",
        ),
        (lambda: noise.noise_runs(["mnist"], "fast"), "dataset must be one of"),
    ],
)
def test_robustness_to_extreme_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_more_extreme_input():
    with pytest.raises(ValueError, match="does not fit in torch.float32"):
        SL.SumOfLinear(
            np.full((1, 2, 2), 1e300), np.ones((1, 1, 1)), np.zeros((2, 1)), dtype=torch.float32
        )
    linear = SL.SumOfLinear(np.ones((1, 2, 2)), np.ones((1, 1, 1)), np.zeros((2, 1)))
    with pytest.raises(ValueError, match="overflows"):
        linear(torch.full((1, 1, 2), 1e308, dtype=torch.float64))


# --- scores far from the origin: against mpmath on the same float64 inputs ----------------------

OFFSETS = [1e6, 1e7, 3e7, 1e8]


@pytest.mark.parametrize("o", OFFSETS)
def test_far_centres_pick_the_nearest_cell(o):
    c = np.array([[o + 0.025], [o + 0.075]])
    x = np.array([[o + 0.035], [o + 0.06], [o + 0.0499], [o - 3.0], [o + 7.0]])
    nearest = [
        int(np.argmin([abs(float(p[0]) - float(ci[0])) for ci in c])) for p in x
    ]  # exact for these floats
    assert nearest == [0, 1, 0, 0, 1]
    np.testing.assert_array_equal(L.hard_lookup(x, c, [0.0, 1.0]), nearest)
    # cell_index of the given (rounded) pieces: the exact arg-max of their scores
    A, b = M.voronoi_affine(c)
    exact = [
        max(range(len(row)), key=row.__getitem__) for row in mp_scores(x, A, b)
    ]  # arg-max in mpmath
    np.testing.assert_array_equal(M.cell_index(x, A, b), exact)
    # the translated pieces are exact, and then cell_index is the nearest centre
    np.testing.assert_array_equal(M.cell_index(x - o, *M.voronoi_affine(c - o)), nearest)


@pytest.mark.parametrize("o", OFFSETS)
def test_far_pieces_margin_and_indicator_against_mpmath(o):
    import mpmath

    rng = np.random.default_rng(int(o) % 1000)
    c = o + rng.uniform(size=(6, 2))
    A, b = M.voronoi_affine(c)
    x = o + rng.uniform(size=(40, 2))
    exact = mp_scores(x, A, b)
    with mpmath.workdps(80):
        top2 = [sorted(row)[-2:] for row in exact]
        margin = np.array([float(t[1] - t[0]) for t in top2])
        beta = 50.0
        s = [
            mpmath.fsum(mpmath.exp(beta * (v - t[1])) for v in row) - 1
            for row, t in zip(exact, top2, strict=True)
        ]
        err = np.array([float(2 * si / (1 + si)) for si in s])
        soft = np.array(
            [
                [float(mpmath.exp(beta * (v - t[1])) / (1 + si)) for v in row]
                for row, t, si in zip(exact, top2, s, strict=True)
            ]
        )
    # the documented rounding of scores relative to the top piece k: gamma_{D+3} (|a_i - a_k|^T |x|
    # + |b_i - b_k|) per score (D + 1 products and sums, and the differences of the pieces)
    D, u = A.shape[1], 2.0**-53
    gamma = (D + 3) * u / (1 - (D + 3) * u)
    top = np.array([max(range(len(row)), key=row.__getitem__) for row in exact])
    terms = np.abs(A[None] - A[top][:, None]) @ np.ones(D) * np.abs(x).max(1)[:, None]
    scale = 2 * gamma * (terms + np.abs(b[None] - b[top][:, None])).max()  # two scores per margin
    np.testing.assert_array_equal(
        M.cell_index(x, A, b), [max(range(len(row)), key=row.__getitem__) for row in exact]
    )
    np.testing.assert_allclose(M.margin(x, A, b), margin, rtol=0, atol=scale)
    np.testing.assert_allclose(M.indicator_error(x, A, b, beta), err, rtol=0, atol=beta * scale * 4)
    np.testing.assert_allclose(M.soft_indicator(x, A, b, beta), soft, rtol=0, atol=beta * scale * 4)


def test_scores_near_the_origin_agree_with_the_plain_formula_to_rounding():
    # relative to each point's top piece the scores are those of x @ A.T + b up to a per-point
    # constant: near the origin the two agree to a few ulp of the scores (|scores| <= 3 here)
    rng = np.random.default_rng(10)
    for m in (2, 4, 16):
        c = M.grid_centres(m, 2)
        A, b = M.voronoi_affine(c)
        x = rng.uniform(size=(300, 2))
        plain = x @ A.T + b
        np.testing.assert_allclose(
            M.soft_indicator(x, A, b, 30.0),
            torch.softmax(30.0 * torch.from_numpy(plain), dim=-1).numpy(),
            rtol=0,
            atol=30.0 * 3 * 8 * 2.0**-53,
        )
        np.testing.assert_array_equal(M.cell_index(x, A, b), plain.argmax(1))
        top2 = np.sort(plain, axis=1)[:, -2:]
        np.testing.assert_allclose(
            M.margin(x, A, b), top2[:, 1] - top2[:, 0], rtol=0, atol=3 * 8 * 2.0**-53
        )


# --- validation and sizes -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: M.affine_scores([[1e300, 1e300]], [[1e300, 0.0]], [0.0]), "overflow"),
        (
            lambda: M.indicator_bound(1.0, torch.tensor([0.5 + 1j]), 3),
            "margin must be a real array, not complex",
        ),
        (
            lambda: M.indicator_bound(1.0, np.array([True]), 3),
            "margin must be a real array, not bool",
        ),
        (lambda: M.indicator_bound(1.0, True, 3), "margin must be a real array, not bool"),
        (
            lambda: M.cell_index(np.ones((2, 2), dtype=bool), A3, B3),
            "x must be a real array, not bool",
        ),
        (
            lambda: SL.SumOfLinear(np.ones((1, 2, 2)) * 1j, np.ones((1, 1, 1)), np.zeros((2, 1))),
            "A must be a real array, not complex",
        ),
        (
            lambda: tables.lookup_error_row(lambda p: p[:, 0] > 0.5, 4, 1.0, np.zeros((3, 2))),
            r"f\(points\) must be a real array, not bool",
        ),
    ],
)
def test_one_validation_rule(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_affine_scores_hand_computed():
    np.testing.assert_array_equal(M.affine_scores([[0.9, 0.2]], A3, B3), [[0.9, 0.2, 0.5]])


def sine(p):
    return np.prod(np.sin(np.pi * p), axis=1)


def test_pieces_with_one_far_from_the_others_against_mpmath():
    # two pieces with slopes ~2e8 and offsets ~-1e16 (Voronoi-like, of centres near 1e8) and one
    # elsewhere (slope and offset 0): scores ~1e16 at x ~ 1e8 whose top two differ by ~1e-3 to 1e1;
    # the pieces' midpoint is no help (their box is as wide as it is far)
    A = np.array([[2e8 + 0.05], [2e8 + 0.15], [0.0]])
    b = np.array([-1e16 - 5e6, -1e16 - 1.5e7, 0.0])
    x = np.array([[1e8 + 0.035], [1e8 + 0.07], [1e8 + 0.2], [0.3], [1e8 - 0.4]])
    exact = mp_scores(x, A, b)
    top = [max(range(3), key=row.__getitem__) for row in exact]
    np.testing.assert_array_equal(M.cell_index(x, A, b), top)
    want = [float(sorted(row)[-1] - sorted(row)[-2]) for row in exact]
    # rounding of scores relative to the top piece k: gamma_{D+3} (|a_j - a_k| |x| + |b_j - b_k|)
    # for the runner-up j (every other piece scores lower by far more than its own rounding)
    second = [sorted(range(3), key=row.__getitem__)[-2] for row in exact]
    tol = np.array(
        [
            2 * 4 * 2.0**-53 * (abs(A[j, 0] - A[k, 0]) * abs(p[0]) + abs(b[j] - b[k]))
            for p, j, k in zip(x, second, top, strict=True)
        ]
    )
    np.testing.assert_array_less(np.abs(M.margin(x, A, b) - want), tol)


def test_voronoi_pieces_pick_the_nearest_centre_outside_their_rounding_band():
    # the docstring's promise: nearest centre wherever |x - c_j|^2 - |x - c_i|^2 exceeds
    # gamma_D (|c_i|^2 + |c_j|^2) plus cell_index's own rounding, for every rival j
    rng = np.random.default_rng(8)
    u = 2.0**-53
    for offset in (0.0, 1e3, 1e6):
        c = offset + rng.uniform(size=(12, 2))
        x = offset + rng.uniform(size=(400, 2))
        A, b = M.voronoi_affine(c)
        d2 = ((x[:, None, :] - c[None]) ** 2).sum(-1)  # exact enough: differences first
        near = d2.argmin(1)
        norms = (c**2).sum(1)
        gamma2 = 2 * u / (1 - 2 * u)
        band = gamma2 * (norms[near][:, None] + norms[None]) + 2 * 5 * u * (
            np.abs(A[None] - A[near][:, None]).sum(-1) * np.abs(x).max(1)[:, None]
            + np.abs(b[None] - b[near][:, None])
        )
        gap = d2 - d2[np.arange(len(x)), near][:, None]
        gap[np.arange(len(x)), near] = np.inf
        clear = (gap > band).all(1)
        assert clear.mean() > 0.5  # the promise covers most points at every offset here
        np.testing.assert_array_equal(M.cell_index(x[clear], A, b), near[clear])


def test_grid_margin_summary_in_units_of_h2_by_hand():
    # on the 3-grid: the middle cube's point (u = (0.15, 0)) has margin 0.7 h^2, the corner
    # point (u = (-0.35, -0.35), neighbours above only) 1.7 h^2, the edge point 0.7 h^2
    x = np.array([[0.55, 0.5], [0.05, 0.05], [0.45, 0.1]])
    got = M.grid_margin_summary(x, M.grid_margin(x, 3), 3)
    assert got["m"] == 3 and got["diff"] == 0.0 and got["predicted share"] == 1 / 9
    assert got["max"] == pytest.approx(1.7, abs=1e-14)
    assert got["max outside corners"] == pytest.approx(0.7, abs=1e-14)
    assert got["share above h2"] == pytest.approx(1 / 3)
    # measured from the scores (an independent route): they agree with the closed form
    rng = np.random.default_rng(5)
    pts = rng.uniform(size=(4000, 2))
    for m in (4, 16):
        gap = M.margin(pts, *M.voronoi_affine(M.grid_centres(m, 2)))
        row = M.grid_margin_summary(pts, gap, m)
        assert row["diff"] < 1e-9 and row["max outside corners"] <= 1 + 1e-9
        assert row["max"] <= 2 + 1e-9
        assert row["share above h2"] == pytest.approx(1 / m**2, abs=4 * math.sqrt(1 / m**2 / 4000))
    # a margin off by 0.001 h^2 shows as diff
    off = M.grid_margin_summary(x, M.grid_margin(x, 3) + 1e-3 / 9, 3)
    assert off["diff"] == pytest.approx(1e-3, rel=1e-9)
    with pytest.raises(ValueError, match=r"^x must hold a point outside the 2\^D corner"):
        M.grid_margin_summary(x[1:2], M.grid_margin(x[1:2], 3), 3)
    with pytest.raises(ValueError, match=r"^margins must have shape"):
        M.grid_margin_summary(x, [0.1], 3)
    with pytest.raises(ValueError, match=r"^m must be >= 3"):
        M.grid_margin_summary(x, M.grid_margin(x, 2), 2)
