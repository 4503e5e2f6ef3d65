"""lib.maxaffine: max-affine partitions, the indicator bound and LHSL's attention lookup."""

import math

import numpy as np
import pandas as pd
import pytest
import torch

from lib import maxaffine as M
from lib.attention import SelfAttention

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
    np.testing.assert_allclose(b, -(c ** 2).sum(1))
    x = rng.uniform(size=(5000, 3))
    nearest = ((x[:, None, :] - c[None]) ** 2).sum(-1).argmin(1)
    np.testing.assert_array_equal(M.cell_index(x, A, b), nearest)


def test_grid_centres():
    np.testing.assert_allclose(M.grid_centres(2, 2), [[0.25, 0.25], [0.25, 0.75], [0.75, 0.25], [0.75, 0.75]])
    c = M.grid_centres(3, 1, low=-1.5, high=1.5)
    np.testing.assert_allclose(c[:, 0], [-1.0, 0.0, 1.0])
    assert M.grid_centres(5, 3).shape == (125, 3)


@pytest.mark.parametrize("dim", [1, 2, 3])
@pytest.mark.parametrize("m", [1, 2, 3, 4, 7])
def test_grid_margin_closed_form_equals_the_score_margin(m, dim):
    """The closed form of the book's Proposition on grid margins against margin() from the scores."""
    rng = np.random.default_rng(10 * m + dim)
    x = rng.uniform(size=(4000, dim))
    x[:2 ** dim] = np.array(np.meshgrid(*[[0.0, 1.0]] * dim, indexing="ij")).reshape(dim, -1).T  # domain corners
    scored = M.margin(x, *M.voronoi_affine(M.grid_centres(m, dim)))
    closed = M.grid_margin(x, m)
    if m == 1:
        assert np.isinf(scored).all() and np.isinf(closed).all()
        return
    np.testing.assert_allclose(closed, scored, rtol=0, atol=1e-13)
    h2 = (1.0 / m) ** 2
    corner_cell = ((x < 1.0 / m) | (x > 1.0 - 1.0 / m)).all(axis=1)
    assert scored.max() <= 2 * h2 * (1 + 1e-12)
    np.testing.assert_allclose(scored[:2 ** dim], 2 * h2, rtol=1e-12)  # the bound is attained at the corners
    if m >= 3:
        assert scored[~corner_cell].max() <= h2 * (1 + 1e-12)
        assert scored[~corner_cell].max() > 0.8 * h2  # and h^2 is approached inside


def test_grid_margin_bound_h2_and_2h2_by_hand():
    # m = 4 on [0, 1]^2: h = 1/4. Centre of an interior cell: margin h^2; corner (0, 0): 2h^2; a boundary: 0.
    A, b = M.voronoi_affine(M.grid_centres(4, 2))
    pts = np.array([[0.375, 0.375], [0.0, 0.0], [1.0, 0.0], [0.25, 0.1], [0.125, 0.0], [0.0, 0.375]])
    want = [1 / 16, 1 / 8, 1 / 8, 0.0, 1 / 16, 1 / 16]
    np.testing.assert_allclose(M.margin(pts, A, b), want, atol=1e-15)
    np.testing.assert_allclose(M.grid_margin(pts, 4), want, atol=1e-15)
    # the share of [0,1]^2 whose margin exceeds h^2 is 1/m^2 (a quarter of each of the four corner cells):
    # on the 400 x 400 midpoint lattice it is exactly 4 * 50^2 / 400^2
    side = (np.arange(400) + 0.5) / 400
    lattice = np.stack(np.meshgrid(side, side), axis=-1).reshape(-1, 2)
    assert (M.margin(lattice, A, b) > 1 / 16 * (1 + 1e-12)).mean() == 1 / 16
    # other boxes scale with h
    np.testing.assert_allclose(M.grid_margin([[-1.0, -1.0], [0.0, 0.0]], 2, low=-1.0, high=1.0), [2.0, 0.0])
    with pytest.raises(ValueError, match=r"x must lie in \[low, high\]"):
        M.grid_margin([[1.2, 0.5]], 4)
    with pytest.raises(ValueError, match="high must exceed low"):
        M.grid_margin([[0.5, 0.5]], 4, low=1.0, high=0.0)
    with pytest.raises(ValueError, match="m must be"):
        M.grid_margin([[0.5, 0.5]], 0)


def test_sum_of_linear_matches_the_column_formula():
    rng = np.random.default_rng(3)
    K, d_out, d, n, n_out = 2, 4, 3, 5, 6
    A, B, C = rng.normal(size=(K, d_out, d)), rng.normal(size=(K, n, n_out)), rng.normal(size=(d_out, n_out))
    L = M.SumOfLinear(A, B, C)
    X = rng.normal(size=(7, n, d))                      # rows = tokens
    out = L(torch.from_numpy(X)).detach().numpy()
    for i in range(7):
        col = sum(A[k] @ X[i].T @ B[k] for k in range(K)) + C   # the papers' column convention
        np.testing.assert_allclose(out[i], col.T, atol=1e-12)


def test_attention_approximator_at_centres_within_the_bound():
    c = M.grid_centres(4, 2)
    beta = 30.0
    g = M.attention_approximator(target, c, beta)
    A, b = M.voronoi_affine(c)
    out = g(c).numpy()[:, 0]
    bound = M.indicator_bound(beta, M.margin(c, A, b), len(c)) * np.abs(target(c)).max()
    assert np.all(np.abs(out - target(c)) <= bound + 1e-12)
    assert np.abs(out - target(c)).max() > 1e-6           # soft: not exact at this beta
    # a larger beta sharpens it to round-off
    sharp = M.attention_approximator(target, c, 3000.0)(c).numpy()[:, 0]
    np.testing.assert_allclose(sharp, target(c), atol=1e-12)


def test_literal_layer_equals_closed_form_and_kernel_regression():
    rng = np.random.default_rng(4)
    c = M.grid_centres(5, 2)
    x = rng.uniform(size=(300, 2))
    beta = 40.0
    g = M.attention_approximator(target, c, beta, chunk=64)
    layer = g(torch.from_numpy(x)).numpy()[:, 0]
    np.testing.assert_allclose(layer, M.soft_lookup(x, c, target(c), beta), atol=1e-13)
    # Gaussian-kernel Nadaraya-Watson with bandwidth h = 1/sqrt(2 beta), computed from distances
    np.testing.assert_allclose(layer, M.nadaraya_watson(x, c, target(c), 1 / math.sqrt(2 * beta)), atol=1e-12)
    # a two-token input sequence (token_dim 1) gives the same outputs through two copy terms
    g2 = M.attention_approximator(target, c, beta, token_dim=1)
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

    s = M.seq2seq_approximator(two, c, 2000.0, n_positions=2, bonus=50.0)
    out = s(x).numpy()
    assert out.shape == (200, 2, 1)
    for j in range(2):
        np.testing.assert_allclose(out[:, j, 0], M.soft_lookup(x, c, two(c)[:, j], 2000.0), atol=1e-12)
    flat = M.seq2seq_approximator(two, c, 2000.0, n_positions=2, bonus=0.0)(x).numpy()
    np.testing.assert_allclose(flat[:, 0], flat[:, 1], atol=1e-14)            # every position the same
    np.testing.assert_allclose(flat[:, 0, 0], out.mean(axis=1)[:, 0], atol=1e-12)  # ... the blocks' average


def test_error_row_reproduces_the_hard_partition_and_first_order_decay():
    x = np.random.default_rng(6).uniform(size=(4000, 2))
    rows = [M.error_row(target, m, 10.0, x) for m in (8, 16, 32)]
    sups = [r["sup hard"] for r in rows]
    assert sups[0] / sups[1] == pytest.approx(2, rel=0.15) and sups[1] / sups[2] == pytest.approx(2, rel=0.15)
    assert all(r["sup"] <= r["sup hard"] + 1e-3 for r in rows)
    hard = M.error_row(target, 8, None, x)
    assert hard["sup"] == hard["sup hard"] and math.isnan(hard["beta"])


@pytest.mark.parametrize("call, match", [
    (lambda: M.max_affine([[0.1, 0.2]], A3, B3[:2]), "b must have shape"),
    (lambda: M.max_affine([[0.1, 0.2, 0.3]], A3, B3), r"x must have shape \(\.\.\., 2\)"),
    (lambda: M.soft_indicator([[0.1, 0.2]], A3, B3, math.inf), "beta must be finite"),
    (lambda: M.soft_indicator([[0.1, 0.2]], A3, B3, 0.0), "beta must be > 0"),
    (lambda: M.voronoi_affine(np.zeros((0, 2))), "centres must not be empty"),
    (lambda: M.indicator_bound(1.0, -0.1, 3), "margin must be >= 0"),
    (lambda: M.indicator_bound(1.0, 0.1, 0), "n_cells must be >= 1"),
    (lambda: M.grid_centres(2000, 2), "exceeds"),
    (lambda: M.grid_centres(4, 2, low=1.0, high=0.0), "high must exceed low"),
    (lambda: M.attention_approximator(target, np.zeros((0, 2)), 1.0), "centres must not be empty"),
    (lambda: M.attention_approximator(target, M.grid_centres(2, 2), float("nan")), "beta must be finite"),
    (lambda: M.attention_approximator(lambda p: p[:, :1].T, M.grid_centres(2, 2), 1.0), "f must map"),
    (lambda: M.attention_approximator(target, M.grid_centres(2, 2), 1.0, token_dim=3), "token_dim must divide"),
    (lambda: M.attention_approximator(target, M.grid_centres(2, 2), 1.0)(np.zeros((3, 3))), r"x must be points"),
    (lambda: M.seq2seq_approximator(target, M.grid_centres(2, 2), 1.0, 2), "f must map"),
    (lambda: M.seq2seq_approximator(lambda p: np.stack([target(p)] * 2, 1), M.grid_centres(2, 2), 1.0, 2, -1.0),
     "bonus must be >= 0"),
    (lambda: M.SumOfLinear(np.zeros((2, 3, 4)), np.zeros((1, 5, 6)), np.zeros((3, 6))), "must be"),
    (lambda: M.nadaraya_watson([[0.1, 0.2]], M.grid_centres(2, 2), np.ones(3), 0.1), "values must have one row"),
])
def test_bad_input_raises_value_error(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_trend_test_on_known_orderings():
    levels = np.repeat([0.0, 0.1, 0.2, 0.3], 3)
    rho, p = M.trend_test(levels, -levels + 0.001 * np.tile([0, 1, 2], 4))
    # direct Spearman: Pearson correlation of average ranks (ties share ranks)
    rx = pd_rank(levels)
    ry = pd_rank(-levels + 0.001 * np.tile([0, 1, 2], 4))
    assert rho == pytest.approx(np.corrcoef(rx, ry)[0, 1], abs=1e-12)
    assert p < 0.01
    rho_up, p_up = M.trend_test(levels, levels)
    assert rho_up == pytest.approx(1.0) and p_up > 0.99     # a rise is no evidence of a decline
    # a perfectly decreasing sequence of 5 distinct levels: p = P(rho_perm = -1) = 1/120 (+ resolution)
    rho5, p5 = M.trend_test(np.arange(5.0), -np.arange(5.0), permutations=100_000)
    assert rho5 == pytest.approx(-1.0) and p5 == pytest.approx(1 / 120, rel=0.15)
    with pytest.raises(ValueError, match="must not be constant"):
        M.trend_test(np.ones(4), np.arange(4.0))
    with pytest.raises(ValueError, match="one length"):
        M.trend_test(np.arange(4.0), np.arange(3.0))


def pd_rank(a):
    import pandas as pd
    return pd.Series(a).rank().to_numpy()


def test_noise_settings_and_bad_arguments():
    for mode in ("fast", "full"):
        s = M.NOISE_SETTINGS[mode]
        assert s["label_ratios"][0] == 0.0 and max(s["label_ratios"]) < 1 and s["input_sigmas"][0] == 0.0
        assert len(s["seeds"]) >= 3
    with pytest.raises(ValueError, match="dataset must be one of"):
        M.noise_runs("svhn", "fast")
    with pytest.raises(ValueError, match="mode must be one of"):
        M.noise_runs("mnist", "slow")
    with pytest.raises(ValueError, match="kind must be"):
        M.noise_experiment("mnist", "blur", 0.1, 0, **M.NOISE_SETTINGS["fast"])


def test_noise_experiment_runs_and_reports_norms():
    settings = {**M.NOISE_SETTINGS["fast"], "train_images": 256, "test_images": 200, "epochs": 1}
    row = M.noise_experiment("mnist", "label", 0.2, 0, **settings)
    assert set(row) >= {"W_K spectral", "W_K frobenius", "W_Q spectral", "W_Q frobenius", "train_acc", "test_acc"}
    assert 0 < row["W_K spectral"] <= row["W_K frobenius"]
    assert 0.0 <= row["test_acc"] <= 1.0 and row["level"] == 0.2
    again = M.noise_experiment("mnist", "label", 0.2, 0, **settings)
    assert again["W_K frobenius"] == row["W_K frobenius"]     # deterministic for a seed


def test_noise_datasets_follow_book_cifar10(monkeypatch, tmp_path):
    monkeypatch.delenv("BOOK_CIFAR10", raising=False)
    assert M.noise_datasets() == ["mnist", "fashion-mnist"]
    monkeypatch.setenv("BOOK_CIFAR10", str(tmp_path))          # set, but no batch files
    with pytest.raises(ValueError, match="BOOK_CIFAR10"):
        M.noise_datasets()


def test_cross_attention_lookup_equals_the_self_attention_construction():
    rng = np.random.default_rng(8)
    c = M.grid_centres(6, 2)
    x = rng.uniform(-0.2, 1.2, size=(400, 2))                 # also outside the grid's square
    for beta in (5.0, 360.0):
        cross = M.cross_attention_approximator(target, c, beta)
        selfa = M.attention_approximator(target, c, beta)
        np.testing.assert_allclose(cross(x).numpy(), selfa(x).numpy(), atol=1e-12)
        np.testing.assert_allclose(cross(x).numpy()[:, 0], M.soft_lookup(x, c, target(c), beta), atol=1e-12)
    linear, context, attention = cross                         # unpacks as (L, Y, CrossAttention)
    np.testing.assert_allclose(context.numpy(), M.context_tokens(c, target(c)))
    assert context.shape == (36, 4) and attention.d_q == 3 and attention.d_kv == 4
    # two scalar tokens instead of one 2-D token: same outputs
    two = M.cross_attention_approximator(target, c, 360.0, token_dim=1)
    np.testing.assert_allclose(two(x).numpy(), cross(x).numpy(), atol=1e-13)


def test_context_tokens_fields_and_biases():
    c = np.array([[0.5, 1.0], [2.0, 0.0]])
    Y = M.context_tokens(c, [3.0, 4.0])
    np.testing.assert_allclose(Y, [[1.0, 2.0, -1.25, 3.0], [4.0, 0.0, -4.0, 4.0]])
    np.testing.assert_allclose(M.context_tokens(c, [3.0, 4.0], biases=[0.0, 0.0])[:, 2], [0.0, 0.0])
    with pytest.raises(ValueError, match="biases must have shape"):
        M.context_tokens(c, [3.0, 4.0], biases=np.zeros((2, 2)))


def test_context_length_for_a_linear_target():
    # f(x) = x on [0, 1] with the hard-like lookup: the sup error of an m-grid is about 1/(2m)
    x = np.linspace(0, 1, 2001)[:, None]
    out = M.context_length(lambda p: p[:, 0], 1, [0.26, 0.06, 1e-9], 1000.0, x, m_max=12)
    assert out.m.iloc[0] == 2 and out.m.iloc[1] == 9 and np.isnan(out.m.iloc[2])
    assert out.N.iloc[1] == 9
    with pytest.raises(ValueError, match="points must have shape"):
        M.context_length(lambda p: p[:, 0], 2, [0.1], 10.0, x, m_max=3)


@pytest.mark.parametrize("call, match", [
    (lambda: M.soft_indicator([[3.0, 9.0]], np.eye(2), [0.0, 0.0], 1e308), "overflow"),
    (lambda: M.cell_index([[1e300]], [[1e300], [1.0]], [0.0, 0.0]), "overflow"),
    (lambda: M.nadaraya_watson([[0.5, 0.5]], M.grid_centres(2, 2), np.ones(4), 1e-200), "overflow"),
    (lambda: M.voronoi_affine([[1e200, 0.0]]), "centres are too large"),
    (lambda: M.grid_centres(2, 1, -1e308, 1e308), "finite amount"),
    (lambda: M.attention_approximator(target, [[0.0, 0.0], [1.0, 1.0]], 2.0)(np.array([[50.0, 50.0]])),
     "too far from the centres"),
    (lambda: M.seq2seq_approximator(lambda p: np.stack([target(p)] * 2, 1), M.grid_centres(2, 2), 2.0, 2, 1e17),
     "bonus must be <="),
    (lambda: M.seq2seq_approximator(target, M.grid_centres(2, 2), 2.0, None), "n_positions must be an integer"),
    (lambda: M.context_length(lambda p: p[:, 0], 1, [np.nan], 10.0, np.zeros((3, 1)), m_max=2), "errors must be finite"),
    (lambda: M.context_length(lambda p: p[:, 0], 1, [0.1], None, np.zeros((3, 1)), m_max=2), "kappa must be a real"),
    (lambda: M.indicator_bound(1.0, "1.5", 3), "margin must be a real array"),
    (lambda: M.trend_test(np.arange(4.0), np.arange(4.0), permutations=10**18), "permutations must be <="),
    (lambda: M.noise_runs(["mnist"], "fast"), "dataset must be one of"),
])
def test_robustness_to_extreme_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_f_returning_a_bfloat16_tensor_is_accepted():
    g = M.attention_approximator(lambda p: torch.tensor(target(p)).to(torch.bfloat16), M.grid_centres(3, 2), 50.0)
    assert g(M.grid_centres(3, 2)).shape == (9, 1)


def test_more_extreme_input():
    with pytest.raises(ValueError, match="does not fit in torch.float32"):
        M.SumOfLinear(np.full((1, 2, 2), 1e300), np.ones((1, 1, 1)), np.zeros((2, 1)), dtype=torch.float32)
    L = M.SumOfLinear(np.ones((1, 2, 2)), np.ones((1, 1, 1)), np.zeros((2, 1)))
    with pytest.raises(ValueError, match="overflows"):
        L(torch.full((1, 1, 2), 1e308, dtype=torch.float64))


# --- scores far from the origin: against mpmath on the same float64 inputs ----------------------

OFFSETS = [1e6, 1e7, 3e7, 1e8]


def mp_scores(x, A, b, dps=80):
    """Exact affine scores of float64 points and pieces (mpmath, independent of lib)."""
    import mpmath

    with mpmath.workdps(dps):
        return [[mpmath.fsum(mpmath.mpf(float(a)) * mpmath.mpf(float(p)) for a, p in zip(row, pt)) + mpmath.mpf(float(bi))
                 for row, bi in zip(A, b)] for pt in x]


def mp_soft(x, c, v, beta, dps=80):
    """Softmax-weighted values with exact squared distances (mpmath)."""
    import mpmath

    with mpmath.workdps(dps):
        out = []
        for pt in x:
            d2 = [mpmath.fsum((mpmath.mpf(float(p)) - mpmath.mpf(float(q))) ** 2 for p, q in zip(pt, ci)) for ci in c]
            top = min(d2)
            w = [mpmath.exp(-beta * (d - top)) for d in d2]
            out.append(float(mpmath.fsum(wi * vi for wi, vi in zip(w, v)) / mpmath.fsum(w)))
        return np.array(out)


@pytest.mark.parametrize("o", OFFSETS)
def test_far_centres_pick_the_nearest_cell(o):
    c = np.array([[o + 0.025], [o + 0.075]])
    x = np.array([[o + 0.035], [o + 0.06], [o + 0.0499], [o - 3.0], [o + 7.0]])
    nearest = [int(np.argmin([abs(float(p[0]) - float(ci[0])) for ci in c])) for p in x]  # exact for these floats
    assert nearest == [0, 1, 0, 0, 1]
    np.testing.assert_array_equal(M.hard_lookup(x, c, [0.0, 1.0]), nearest)
    # cell_index of the given (rounded) pieces: the exact arg-max of their scores
    A, b = M.voronoi_affine(c)
    exact = [max(range(len(row)), key=row.__getitem__) for row in mp_scores(x, A, b)]   # arg-max in mpmath
    np.testing.assert_array_equal(M.cell_index(x, A, b), exact)
    # the translated pieces are exact, and then cell_index is the nearest centre
    np.testing.assert_array_equal(M.cell_index(x - o, *M.voronoi_affine(c - o)), nearest)


@pytest.mark.parametrize("o", OFFSETS)
def test_far_soft_lookup_and_kernel_regression_against_mpmath(o):
    c = np.array([[o + 0.1], [o + 0.2]])
    x = np.array([[o + 0.11], [o + 0.15], [o + 0.19], [o + 0.3]])
    want = mp_soft(x, c, [0.0, 1.0], 1e3)
    assert want[0] == pytest.approx(1 / (1 + math.exp(1e3 * (0.09**2 - 0.01**2))), rel=1e-6)   # 3.4e-4
    np.testing.assert_allclose(M.soft_lookup(x, c, [0.0, 1.0], 1e3), want, rtol=1e-7, atol=1e-12)
    np.testing.assert_allclose(M.nadaraya_watson(x, c, [0.0, 1.0], 1 / math.sqrt(2e3)), want, rtol=1e-7, atol=1e-12)


def test_soft_lookup_of_a_point_between_two_far_centres():
    got = M.soft_lookup([[1e7 + 0.11]], [[1e7 + 0.1], [1e7 + 0.2]], [0, 1], 1e3)[0]
    assert got == pytest.approx(mp_soft([[1e7 + 0.11]], [[1e7 + 0.1], [1e7 + 0.2]], [0, 1], 1e3)[0], rel=1e-7)
    assert got == pytest.approx(3.4e-4, rel=0.02)


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
        s = [mpmath.fsum(mpmath.exp(beta * (v - t[1])) for v in row) - 1 for row, t in zip(exact, top2)]
        err = np.array([float(2 * si / (1 + si)) for si in s])
        soft = np.array([[float(mpmath.exp(beta * (v - t[1])) / (1 + si)) for v in row] for row, t, si in zip(exact, top2, s)])
    scale = 8 * np.finfo(float).eps * 2e6 * (o / 1e7)          # rounding of the translated scores (~|x||A - a_ref|)
    np.testing.assert_array_equal(M.cell_index(x, A, b), [max(range(len(row)), key=row.__getitem__) for row in exact])
    np.testing.assert_allclose(M.margin(x, A, b), margin, rtol=0, atol=scale)
    np.testing.assert_allclose(M.indicator_error(x, A, b, beta), err, rtol=0, atol=beta * scale * 4)
    np.testing.assert_allclose(M.soft_indicator(x, A, b, beta), soft, rtol=0, atol=beta * scale * 4)


@pytest.mark.parametrize("o", [1e6, 1e7, 1e8])
def test_far_lookup_layers_equal_the_closed_form(o):
    c = M.grid_centres(4, 2, o, o + 1.0)
    x = o + np.random.default_rng(9).uniform(size=(200, 2))

    def f(p):
        return target(p - o)

    want = mp_soft(x[:20], c, f(c), 40.0)
    np.testing.assert_allclose(M.soft_lookup(x[:20], c, f(c), 40.0), want, rtol=0, atol=1e-9)
    layer = M.attention_approximator(f, c, 40.0)
    assert layer.reference is not None
    np.testing.assert_allclose(layer(x).numpy()[:, 0], M.soft_lookup(x, c, f(c), 40.0), rtol=0, atol=1e-9)
    cross = M.cross_attention_approximator(f, c, 40.0)
    np.testing.assert_allclose(cross(x).numpy()[:, 0], M.soft_lookup(x, c, f(c), 40.0), rtol=0, atol=1e-9)
    seq = M.seq2seq_approximator(lambda p: np.stack([f(p), p[:, 0] - o], 1), c, 40.0, 2, 50.0)(x).numpy()
    np.testing.assert_allclose(seq[:, 1, 0], M.soft_lookup(x, c, c[:, 0] - o, 40.0), rtol=0, atol=1e-9)
    # the same construction near the origin gives the same numbers
    near = M.attention_approximator(target, c - o, 40.0)
    assert near.reference is None
    np.testing.assert_allclose(layer(x).numpy(), near(x - o).numpy(), rtol=0, atol=1e-9)
    # Chapter 5's error row on a far grid equals the one near the origin
    far_row, near_row = M.error_row(f, 8, 10.0, x, low=o, high=o + 1.0), M.error_row(target, 8, 10.0, x - o)
    for key in ("sup hard", "sup", "L2", "mean |P-E|1"):
        assert far_row[key] == pytest.approx(near_row[key], rel=1e-6, abs=1e-9)


def test_context_tokens_with_a_reference():
    c = np.array([[1e7 + 0.5, 3.0], [1e7 - 0.5, 1.0]])
    Y = M.context_tokens(c, [3.0, 4.0], reference=[1e7, 2.0])
    np.testing.assert_allclose(Y, [[1.0, 2.0, -1.25, 3.0], [-1.0, -2.0, -1.25, 4.0]])
    with pytest.raises(ValueError, match=r"reference must have shape \(2,\)"):
        M.context_tokens(c, [3.0, 4.0], reference=[1.0])


def test_scores_near_the_origin_are_computed_as_written():
    # no reference for the book's grids: the scores are x @ A.T + b bit for bit
    rng = np.random.default_rng(10)
    for m in (2, 4, 16):
        c = M.grid_centres(m, 2)
        A, b = M.voronoi_affine(c)
        x = rng.uniform(size=(300, 2))
        np.testing.assert_array_equal(M.soft_indicator(x, A, b, 30.0),
                                      torch.softmax(30.0 * torch.from_numpy(x @ A.T + b), dim=-1).numpy())
        np.testing.assert_array_equal(M.cell_index(x, A, b), (x @ A.T + b).argmax(1))


# --- validation and sizes -----------------------------------------------------------------------

@pytest.mark.parametrize("call, match", [
    (lambda: M.affine_scores([[1e300, 1e300]], [[1e300, 0.0]], [0.0]), "overflow"),
    (lambda: M.indicator_bound(1.0, torch.tensor([0.5 + 1j]), 3), "margin must be a real array, not complex"),
    (lambda: M.indicator_bound(1.0, np.array([True]), 3), "margin must be a real array, not bool"),
    (lambda: M.indicator_bound(1.0, True, 3), "margin must be a real array, not bool"),
    (lambda: M.cell_index(np.ones((2, 2), dtype=bool), A3, B3), "x must be a real array, not bool"),
    (lambda: M.SumOfLinear(np.ones((1, 2, 2)) * 1j, np.ones((1, 1, 1)), np.zeros((2, 1))), "A must be a real array, not complex"),
    (lambda: M.error_row(lambda p: p[:, 0] > 0.5, 4, 1.0, np.zeros((3, 2))), r"f\(points\) must be a real array, not bool"),
])
def test_one_validation_rule(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_affine_scores_hand_computed():
    np.testing.assert_array_equal(M.affine_scores([[0.9, 0.2]], A3, B3), [[0.9, 0.2, 0.5]])


def test_builders_count_before_allocating(monkeypatch):
    from lib import attention

    huge = np.broadcast_to(np.zeros(1), (10**6, 10**4, 10))     # a view: nothing allocated yet
    with pytest.raises(ValueError, match="SumOfLinear: the number of parameters .*MAX_PARAMETERS"):
        M.SumOfLinear(huge, np.ones((10**6, 1, 1)), np.zeros((10**4, 1)))
    with pytest.raises(ValueError, match="the lookup layer: the number of parameters .*MAX_PARAMETERS"):
        M.seq2seq_approximator(lambda p: np.zeros((len(p), 4096)), M.grid_centres(64, 2), 1.0, 4096)
    with pytest.raises(ValueError, match="permuted ranks, 1,000,000 x 200 would be 200,000,000.*MAX_MATRIX_ENTRIES"):
        M.trend_test(np.arange(200.0), -np.arange(200.0), permutations=1_000_000)
    # a chunk's score matrix stays within MAX_MATRIX_ENTRIES: fewer points per chunk, same numbers
    x = np.random.default_rng(11).uniform(size=(50, 2))
    c = M.grid_centres(8, 2)
    full = M.soft_lookup(x, c, target(c), 50.0)
    monkeypatch.setattr(M, "MAX_MATRIX_ENTRIES", 3 * 64)
    np.testing.assert_allclose(M.soft_lookup(x, c, target(c), 50.0), full, rtol=0, atol=1e-15)
    monkeypatch.setattr(attention, "MAX_PARAMETERS", 10)
    with pytest.raises(ValueError, match="MAX_PARAMETERS = 10"):
        M.cross_attention_approximator(target, c, 1.0)


def test_cross_lookup_checks_its_parts():
    c = M.grid_centres(3, 2)
    linear, context, attention = M.cross_attention_approximator(target, c, 30.0)
    rebuilt = M.CrossLookup(linear, context, attention, token_dim=2, beta=30.0, centres=c, values=target(c)[:, None])
    x = np.random.default_rng(12).uniform(size=(20, 2))
    np.testing.assert_allclose(rebuilt(x).numpy()[:, 0], M.soft_lookup(x, c, target(c), 30.0), rtol=0, atol=1e-12)
    for kwargs, match in [({"beta": True}, "beta must be a real number"), ({"token_dim": 0}, "token_dim must be >= 1"),
                          ({"values": np.ones((9, 1)) * 1j}, "values must be a real array, not complex"),
                          ({"context": context.numpy()}, "context must be a 2-D"), ({"linear": None}, "linear and attention")]:
        args = {"linear": linear, "context": context, "attention": attention, "token_dim": 2, "beta": 30.0,
                "centres": c, "values": target(c)[:, None]} | kwargs
        with pytest.raises(ValueError, match=match):
            M.CrossLookup(args.pop("linear"), args.pop("context"), args.pop("attention"), **args)


def test_context_length_checks_its_largest_grid_first():
    x = np.linspace(0, 1, 11)[:, None]
    with pytest.raises(ValueError, match=r"largest grid, 1000000000000000000\*\*1 cells .*MAX_CELLS"):
        M.context_length(lambda p: p[:, 0], 1, [0.1], 10.0, x, m_max=10**18)
    with pytest.raises(ValueError, match=r"1025\*\*2 cells would be 1,050,625.*MAX_CELLS = 1,048,576"):
        M.context_length(lambda p: p[:, 0] * p[:, 1], 2, [0.1], 10.0, np.zeros((3, 2)), m_max=1025)


def sine(p):
    return np.prod(np.sin(np.pi * p), axis=1)


@pytest.mark.parametrize("dim, m", [(1, 5), (2, 4), (3, 3)])
def test_product_lookup_equals_the_full_grid_lookup(dim, m):
    # the Gaussian weights and the product values factorise: the D-dim lookup is the product of 1-D ones
    x = np.random.default_rng(dim).uniform(size=(300, dim))
    c = M.grid_centres(m, dim)
    for kappa in (0.5, 10.0):
        np.testing.assert_allclose(M.product_lookup(sine, x, m, kappa), M.soft_lookup(x, c, sine(c), kappa * m * m),
                                   rtol=0, atol=1e-13)


def test_product_context_length_is_context_length_on_the_lattice():
    # the lattice sup computed from 1-D lookups equals the brute-force sup of soft_lookup on the same lattice
    side = np.linspace(0, 1, 9)
    lattice = np.stack(np.meshgrid(side, side, indexing="ij"), axis=-1).reshape(-1, 2)
    errors = [0.5, 0.3, 0.15, 0.08, 1e-9]
    fast = M.product_context_length(sine, 2, errors, 10.0, m_max=8, resolution=9)
    brute = M.context_length(sine, 2, errors, 10.0, lattice, m_max=8)
    pd.testing.assert_frame_equal(fast.drop(columns="sup"), brute.drop(columns="sup"))
    np.testing.assert_allclose(fast.sup, brute.sup, rtol=1e-12, atol=1e-15)
    assert fast.m.iloc[0] == 3 and fast.m.iloc[1] == 6 and np.isnan(fast.m.iloc[-1]) and (fast.dim == 2).all()
    assert fast.sup.iloc[0] <= 0.5 and np.isnan(fast.sup.iloc[-1])
    # in 1-D at the lattice point x = 0: sin(0) = 0 against the lookup, which on one cell is sin(pi/2) = 1
    one = M.product_context_length(sine, 1, [0.99, 1.0], 10.0, m_max=1, resolution=3)
    assert np.isnan(one.m.iloc[0]) and one.m.iloc[1] == 1 and one.N.iloc[1] == 1


def test_product_context_length_validates():
    with pytest.raises(ValueError, match=r"lattice, 1001\*\*3 points .*MAX_MATRIX_ENTRIES"):
        M.product_context_length(sine, 3, [0.1], 10.0, m_max=2, resolution=1001)
    with pytest.raises(ValueError, match="MAX_CELLS"):
        M.product_context_length(sine, 1, [0.1], 10.0, m_max=2**21)
    with pytest.raises(ValueError, match="resolution must be"):
        M.product_context_length(sine, 1, [0.1], 10.0, m_max=2, resolution=1)
    with pytest.raises(ValueError, match="errors must be finite"):
        M.product_context_length(sine, 1, [-0.1], 10.0, m_max=2)
    with pytest.raises(ValueError, match="g must map"):
        M.product_context_length(lambda p: np.ones((len(p), 2)), 1, [0.1], 10.0, m_max=2)
    with pytest.raises(ValueError, match="g must be callable"):
        M.product_lookup(None, np.zeros((2, 1)), 2, 1.0)
    with pytest.raises(ValueError, match="kappa must be"):
        M.product_lookup(sine, np.zeros((2, 1)), 2, 0.0)


def test_rate_points_are_one_fixed_sample_per_mode():
    for mode, count in M.RATE_POINTS.items():
        pts = M.rate_points(mode)
        assert pts.shape == (count, 2) and pts.dtype == np.float64 and ((pts >= 0) & (pts < 1)).all()
        np.testing.assert_array_equal(pts, np.random.default_rng(M.RATE_SEED).uniform(size=(count, 2)))
        np.testing.assert_array_equal(pts, M.rate_points(mode))
    with pytest.raises(ValueError, match="mode must be one of"):
        M.rate_points("paper")
