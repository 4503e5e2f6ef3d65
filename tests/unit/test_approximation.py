"""lib.approximation: the quantizer, the FF-SA-FF approximator of K&S Proposition 1, error
estimates."""

import math
import re

import mpmath
import numpy as np
import pytest
import torch

from lib import approximation as A
from lib import metrics, quantize
from lib.experiments import tables


def product_target(X):
    """f(X)_k = x_k * mean(X): continuous and permutation equivariant."""
    return X * X.mean(axis=1, keepdims=True)


def test_quantizer_exact_on_cell_interiors_and_bounded_on_ramps():
    q = quantize.quantizer(4, 2, tau=0.05)  # cells of width 1/4, representatives 1/8, 3/8, 5/8, 7/8
    pts = torch.tensor([[0.01, 0.99], [0.19, 0.26], [0.5, 0.69], [-3.0, 7.0]], dtype=torch.float64)
    expected = [[0.125, 0.875], [0.125, 0.375], [0.625, 0.625], [0.125, 0.875]]
    np.testing.assert_allclose(q(pts).detach().numpy(), expected, atol=1e-12)
    # on a ramp (0.2, 0.25) the output moves linearly between the neighbouring representatives
    ramp = q(torch.tensor([[0.225, 0.225]], dtype=torch.float64)).detach().numpy()
    np.testing.assert_allclose(ramp, [[0.25, 0.25]], atol=1e-12)
    # residual: 2 (m - 1) ramp units and 2 cancelling units per coordinate, and the forward pass is
    # the displayed formula Z + W2 relu(W1 Z + b1) + b2 (explicit numpy)
    assert q.width == 2 * 3 * 2 + 2 * 2 and q.residual
    W = {k: v.numpy() for k, v in q.weights().items()}
    Z = pts.numpy()
    np.testing.assert_allclose(
        Z + np.maximum(Z @ W["W1"].T + W["b1"], 0) @ W["W2"].T + W["b2"], expected, atol=1e-12
    )


def test_cell_representatives_avoid_zero():
    np.testing.assert_allclose(quantize.cell_representatives(4), [0.125, 0.375, 0.625, 0.875])
    reps = quantize.cell_representatives(3, low=-1.5, high=1.5)  # the middle centre would be 0
    assert np.all(reps != 0) and np.allclose(np.diff(reps), 1.0)


def test_measures_closed_forms():
    assert quantize.duplicate_cell_measure(4, 3, 1) == pytest.approx(1 - (3 / 4) * (2 / 4))
    assert quantize.duplicate_cell_measure(2, 3, 1) == 1.0  # more tokens than cells
    assert quantize.duplicate_cell_measure(10, 2, 2) == pytest.approx(1 / 100)
    assert quantize.ramp_measure(4, 3, 1, 0.05) == pytest.approx(1 - (1 - 3 * 0.05) ** 3)
    # Monte Carlo agreement of the duplicate measure (independent computation)
    rng = np.random.default_rng(0)
    cells = np.floor(rng.uniform(size=(20000, 3)) * 5)
    dup = np.mean([len(set(row)) < 3 for row in cells])
    assert dup == pytest.approx(quantize.duplicate_cell_measure(5, 3, 1), abs=0.01)


@pytest.mark.parametrize("exact", [True, False])
def test_approximator_is_f_at_the_quantized_sequence_off_ramps_and_duplicates(exact):
    g = A.ks_approximator(
        product_target, 4, 3, 1, tau=0.01, gamma=None if exact else 0.5, exact=exact
    )
    assert g.exact is exact
    X = np.array([[[0.05], [0.30], [0.80]], [[0.70], [0.10], [0.45]], [[0.99], [0.51], [0.26]]])
    reps = (np.floor(X * 4) + 0.5) / 4  # independent quantization: the cell centres
    np.testing.assert_allclose(g(X), product_target(reps), atol=1e-9)
    # permuting the tokens permutes the output
    np.testing.assert_allclose(g(X[:, [2, 0, 1]]), g(X)[:, [2, 0, 1]], atol=1e-9)


def test_outputs_stay_within_the_table_range_and_errors_fall_with_m():
    s = metrics.uniform_sampler(3, 1)
    g8 = A.ks_approximator(product_target, 8, 3, 1, tau=1e-3, gamma=1.0)
    X = s(np.random.default_rng(1), 500)
    out = g8(X)
    assert out.min() >= g8.values.min() - 1e-9 and out.max() <= g8.values.max() + 1e-9
    g16 = A.ks_approximator(product_target, 16, 3, 1, tau=1e-3, gamma=1.0)
    e8, se8 = metrics.lp_error(product_target, g8, 1, s, 2000, seed=2)
    e16, se16 = metrics.lp_error(product_target, g16, 1, s, 2000, seed=2)
    assert e16 < e8 - 3 * math.hypot(se8, se16)
    sup16, _ = metrics.sup_error(product_target, g16, s, 2000, seed=2)
    assert sup16 > 0.1  # duplicate cells keep the sup error up


def test_conflicting_pairs_hand_computed():
    ids = np.array([1.0, 1.0, 1.0, 2.0, 2.0, 3.0])
    values = np.array([[0.0], [0.0], [1.0], [5.0], [6.0], [7.0]])
    # equal ids: (0,1), (0,2), (1,2), (3,4); of these only (0,1) has equal values
    assert A._conflicting_pairs(ids, values) == 3
    assert A._conflicting_pairs(np.arange(4.0), np.zeros((4, 2))) == 0  # distinct ids: no conflict
    assert A._conflicting_pairs(np.zeros(4), np.ones((4, 2))) == 0  # one id, one value: no conflict


def test_float64_conflicts_at_the_theorems_gamma_by_brute_force():
    import itertools

    g = A.ks_approximator(product_target, 4, 3, 1, tau=0.01)  # the theorem's gamma: ids collide
    cells = quantize.cell_representatives(4)[:, None]
    seqs = np.array(
        [cells[list(c)] for c in itertools.combinations(range(4), 3)]
    )  # (4, 3, 1), the table's order
    with torch.no_grad():
        ids = (g.attention(torch.as_tensor(seqs)).numpy().reshape(-1, 1) @ g.v).reshape(-1)
    vals = product_target(seqs).reshape(-1)
    pairs = [(i, j) for i in range(len(ids)) for j in range(i + 1, len(ids)) if ids[i] == ids[j]]
    assert g.distinct64 == len(set(ids.tolist())) < len(ids)
    assert g.conflicts64 == sum(vals[i] != vals[j] for i, j in pairs) > 0


def test_price_row_formats_the_theorems_weight_like_fmt():
    from lib.book.prose import fmt

    row = tables.price_row(product_target, 4, 3, 1, tau=0.01)
    exact = A.ks_approximator(product_target, 4, 3, 1, tau=0.01)
    assert row.weight_theorem == fmt(mpmath.mpf(exact.max_weight))
    assert re.fullmatch(r"\d\.\d\de\d+", row.weight_theorem)  # 3.63e32, never 3.63e+32
    assert row.conflicts64_theorem == exact.conflicts64
    assert row.distinct64_theorem == exact.distinct64


def test_lp_error_against_a_hand_computed_value():
    s = metrics.uniform_sampler(2, 1)
    f = lambda X: X  # noqa: E731
    g = lambda X: X + 0.5  # noqa: E731  error 0.5 on each of 2 entries
    assert metrics.lp_error(f, g, 1, s, 10)[0] == pytest.approx(1.0)
    assert metrics.lp_error(f, g, 2, s, 10)[0] == pytest.approx(math.sqrt(0.5))
    assert metrics.lp_error(f, f, 2, s, 10) == (0.0, 0.0)
    assert metrics.sup_error(f, g, s, 10)[0] == pytest.approx(0.5)


def test_parameter_count_matches_the_layers():
    g = A.ks_approximator(product_target, 4, 3, 1, tau=0.01, gamma=0.5, exact=False)
    M = math.comb(4, 3) * 3
    # FF1: W1's distinct rows (+1), (-1); 6 ramp biases; 6 ramp + 2 cancelling output weights;
    # b2 = r_0.
    # SA: 4 rank-1 matrices of s + d = 2 entries.
    # FF2: W1's distinct rows v = (+-1), (+1), (-1) -> 2; M knots; M slope changes + 2 cancelling
    # weights; b2 = first table value.
    assert g.parameters == (2 + 6 + 8 + 1) + 4 * 2 + (2 + M + M + 2 + 1)
    exact = A.ks_approximator(product_target, 4, 3, 1, tau=0.01, gamma=0.5, exact=True)
    assert exact.parameters == g.parameters  # the same layers, weights in mpmath


def test_approximator_forward_pass_is_the_three_displayed_layers():
    """g(X) = F2(F_SA(F1(X))) written out in numpy from the layers' weights, independently of
    lib."""
    g = A.ks_approximator(product_target, 5, 3, 1, tau=0.01, gamma=0.5)
    X = metrics.uniform_sampler(3, 1)(np.random.default_rng(8), 300)
    ramp, _ = quantize.bad_sets(X, 5, 0.01)
    X = X[~ramp]  # off the ramps F1 is exactly a representative

    def ff(Z, layer):
        W = {k: v.numpy() for k, v in layer.weights().items()}
        return Z + np.maximum(Z @ W["W1"].T + W["b1"], 0) @ W["W2"].T + W["b2"]

    Q = ff(X, g.quantizer)
    W = {k: v.numpy() for k, v in g.attention.weights().items()}
    scores = (Q @ W["W_Q"].T) @ (Q @ W["W_K"].T).transpose(0, 2, 1)
    P = np.exp(scores - scores.max(-1, keepdims=True))
    P /= P.sum(-1, keepdims=True)
    ids = Q + (P @ (Q @ W["W_V"].T)) @ W["W_O"].T
    np.testing.assert_allclose(g.raw(X).reshape(X.shape), ff(ids, g.lookup), rtol=0, atol=1e-9)
    assert g.lookup.residual and g.quantizer.residual and g.attention.residual


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: quantize.quantizer(0, 1, 0.1), "m"),
        (lambda: quantize.quantizer(4, 1, 0.3), "tau must be below"),
        (lambda: quantize.quantizer(4, 1, 0.0), "tau"),
        (lambda: quantize.quantizer(4, 1, 0.1, low=1.0, high=0.0), "high must exceed low"),
        (
            lambda: A.ks_approximator(lambda X: X * X[:, :1], 4, 3, 1, 0.01),
            "not permutation equivariant",
        ),
        (lambda: A.ks_approximator(product_target, 2, 3, 1, 0.01), "distinct cells"),
        (lambda: A.ks_approximator(product_target, 200, 3, 1, 1e-4), "entries"),
        (lambda: A.ks_approximator("f", 4, 3, 1, 0.01), "callable"),
        (lambda: A.ks_approximator(lambda X: X[:, :, 0], 4, 3, 1, 0.01), r"\(batch, n, d_out\)"),
        (
            lambda: A.ks_approximator(product_target, 4, 3, 1, 0.01, exact=False),
            "float64 cannot separate",
        ),
        (
            lambda: metrics.lp_error(
                product_target, product_target, 0.5, metrics.uniform_sampler(3, 1), 10
            ),
            "p",
        ),
        (
            lambda: metrics.lp_error(
                product_target, product_target, 1, metrics.uniform_sampler(3, 1), 1
            ),
            "n_samples",
        ),
        (lambda: quantize.duplicate_cell_measure(0, 3, 1), "m"),
    ],
)
def test_value_errors(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_l1_error_on_a_fixed_sample_equals_an_independent_computation():
    g = A.ks_approximator(product_target, 4, 3, 1, tau=0.01, gamma=0.5)
    X = np.array([[[0.05], [0.30], [0.80]], [[0.70], [0.10], [0.45]], [[0.99], [0.51], [0.26]]])
    fixed = lambda rng, k: X[:k]  # noqa: E731
    reps = (np.floor(X * 4) + 0.5) / 4
    expected = np.abs(product_target(X) - product_target(reps)).sum(axis=(1, 2)).mean()
    assert metrics.lp_error(product_target, g, 1, fixed, 3)[0] == pytest.approx(expected, rel=1e-9)


def test_bad_sets_hand_computed():
    # m = 4, tau = 0.05: ramps (0.2, 0.25), (0.45, 0.5), (0.7, 0.75)
    X = np.array(
        [
            [[0.1], [0.3], [0.6]],  # clean
            [[0.1], [0.22], [0.6]],  # a ramp (0.22 also shares cell 0 with 0.1)
            [[0.1], [0.15], [0.6]],  # two tokens in cell 0
            [[0.0], [0.25], [1.0]],
        ]
    )  # grid points and ends are not on ramps
    ramp, dup = quantize.bad_sets(X, 4, 0.05)
    assert ramp.tolist() == [False, True, False, False]
    assert dup.tolist() == [False, True, True, False]


def test_cell_representatives_decide_zero_without_rounding_artefacts():
    # low = -0.21, high = 0.21, m = 3: the exact middle centre is 0 (the bounds are exact
    # negatives), float64 computes -2.8e-17; it must count as 0 and the documented h/4 shift must
    # happen
    h = (0.21 - -0.21) / 3
    reps = quantize.cell_representatives(3, -0.21, 0.21)
    assert reps[1] == h / 4
    np.testing.assert_allclose(reps, np.array([-h, 0.0, h]) + h / 4, rtol=0, atol=1e-16)
    # every symmetric box with an odd m has an exactly-zero middle centre: always shifted to h/4
    for a in np.linspace(0.01, 3.0, 150):
        for m in (1, 3, 5, 7, 9, 11):
            reps = quantize.cell_representatives(m, -a, a)
            assert reps[(m - 1) // 2] == (2 * a / m) / 4 and np.all(reps != 0)
    # a box whose centres are all far from 0 (exact rationals: min |centre| >= h/2 - ulps) is not
    # shifted
    for low, high, m in ((0.0, 1.0, 4), (-0.3, 0.7, 2), (0.1, 0.9, 5), (-1.0, 2.0, 2)):
        hh = (high - low) / m
        np.testing.assert_array_equal(
            quantize.cell_representatives(m, low, high), low + (np.arange(m) + 0.5) * hh
        )


def test_approximator_on_a_symmetric_box_needs_no_extra_precision():
    g = A.ks_approximator(lambda X: X, 3, 2, 1, 0.001, low=-0.21, high=0.21)
    reps = quantize.cell_representatives(3, -0.21, 0.21)
    assert min(abs(reps)) == pytest.approx(0.035)  # r_min = h/4, not 2.8e-17
    X = np.array([[[-0.2], [0.0]], [[0.2], [-0.15]]])  # off the ramps, distinct cells
    np.testing.assert_allclose(g(X), reps[[[0, 1], [2, 0]]][..., None], atol=1e-12)


def exact_ids(seqs, W, v, dps):
    """Projected context ids v . (t + W_O W_V X softmax((W_K X)^T W_Q t)) of a d = 1 layer, in
    mpmath.

    Written out from the layer's float64 weights, independently of lib.exact.
    """
    q, k, val, o = (mpmath.mpf(float(W[name][0, 0])) for name in ("W_Q", "W_K", "W_V", "W_O"))
    with mpmath.workdps(dps):
        out = []
        for seq in seqs:
            xs = [mpmath.mpf(float(x)) for x in seq[:, 0]]
            for t in xs:
                a = [(q * t) * (k * x) for x in xs]
                top = max(a)
                p = [mpmath.exp(s - top) for s in a]
                out.append(
                    mpmath.mpf(float(v))
                    * (
                        t
                        + o
                        * mpmath.fsum(val * x * w for x, w in zip(xs, p, strict=True))
                        / mpmath.fsum(p)
                    )
                )
        return sorted(out)


def test_working_precision_follows_gamma_and_r_max():
    g = A.ks_approximator(lambda X: X, 4, 2, 1, 0.001, gamma=800.0)
    assert (
        g.exact and g.dps >= 560
    )  # 2 gamma r_max^2 / ln 10 = 532 digits, plus the prefactor and 30
    reps = quantize.cell_representatives(4)
    seqs = np.array([[[reps[i]], [reps[j]]] for i in range(4) for j in range(i + 1, 4)])
    ids = exact_ids(seqs, g.attention.weights(), g.v[0], 1200)
    with mpmath.workdps(1200):
        gap = min(b - a for a, b in zip(ids, ids[1:], strict=False))
        assert mpmath.log10(gap) < -150  # the exact smallest gap is about 1e-153
        assert abs(g.min_gap - gap) < gap * mpmath.mpf(10) ** -30
    X = seqs.copy()
    np.testing.assert_allclose(g(X), X, atol=1e-12)  # f = identity is exact at the centres


def test_lookup_output_stays_within_the_table_range_in_floating_point():
    g = A.ks_approximator(product_target, 6, 3, 1, tau=0.1 / 36, gamma=1.0)
    X = metrics.uniform_sampler(3, 1)(np.random.default_rng(3), 2000)
    raw = g.raw(X)  # the raw ReLU sum overshoots the table's maximum by rounding on some inputs
    assert raw.max() > g.values.max()
    out = g(X).reshape(-1, 1)
    assert out.min() >= g.values.min() and out.max() <= g.values.max()
    inside = (raw >= g.values.min()) & (raw <= g.values.max())
    np.testing.assert_array_equal(out[inside], raw[inside])  # untouched where within the range


@pytest.mark.parametrize(
    "tau, match",
    [
        (0.25, "tau must be below the cell width h = (high - low) / m = 0.25, got tau=0.25"),
        (0.3, "tau must be below the cell width"),
        (float("nan"), "tau must be finite, got nan"),
        (-0.01, "tau must be > 0.0, got -0.01"),
        (0.01j, "tau must be a real number, got 0.01j"),
        (True, "tau must be a real number, got True"),
        (None, "tau must be a real number, got None"),
    ],
)
def test_bad_sets_validates_tau_like_the_quantizer(tau, match):
    X = np.zeros((1, 2, 1))
    with pytest.raises(ValueError, match=re.escape(match)):
        quantize.bad_sets(X, 4, tau)
    with pytest.raises(ValueError, match=re.escape(match)):
        quantize.quantizer(4, 1, tau)


def test_bad_sets_use_the_quantizers_own_grid_lines():
    # m = 2 on [-0.3, 0.7]: the line is at 0.2; (x + 0.3) / 0.5 rounds up to 1 for the float just
    # below it, which the quantizer (and so the cell) puts below the line
    x = np.nextafter(0.2, 0)
    ramp, dup = quantize.bad_sets(np.array([[[x], [0.45]]]), 2, 1e-3, low=-0.3, high=0.7)
    assert ramp.tolist() == [True] and dup.tolist() == [False]
    # independent: cells and ramps read off the quantizer's weights (b1 = -(t - tau), -t), many m,
    # h inexact
    rng = np.random.default_rng(5)
    for m in (3, 6, 7, 10):
        tau = 0.1 / m**2
        q = quantize.quantizer(m, 1, tau)
        b1 = q.weights()["b1"].numpy()[: 2 * (m - 1)]  # the ramp units (then the 2 cancelling ones)
        starts, lines = -b1[0::2], -b1[1::2]
        pts = np.concatenate(
            [
                lines,
                np.nextafter(lines, 0),
                np.nextafter(lines, 1),
                starts,
                np.nextafter(starts, 1),
                rng.uniform(size=50),
            ]
        )
        X = np.stack([pts, np.full_like(pts, 0.999)], axis=1)[:, :, None]
        ramp, dup = quantize.bad_sets(X, m, tau)
        cells = (pts[:, None] >= lines[None]).sum(1)
        want_ramp = ((pts[:, None] > starts[None]) & (pts[:, None] < lines[None])).any(1)
        np.testing.assert_array_equal(ramp, want_ramp)
        np.testing.assert_array_equal(dup, cells == m - 1)


def test_sizes_are_checked_before_anything_is_built(monkeypatch):
    with pytest.raises(ValueError, match=r"would be 3,169,925,001,442,312,192.*MAX_MEASURE_BITS"):
        quantize.duplicate_cell_measure(3, 2, 10**18)
    assert quantize.duplicate_cell_measure(3, 10**30, 2) == 1.0  # more tokens than cells: no loop
    assert quantize.duplicate_cell_measure(2, 2, 60) == pytest.approx(
        2.0**-60, rel=1e-15
    )  # 1 - (1 - 1/N), N = 2^60
    with pytest.raises(ValueError, match=r"MAX_TABLE_ENTRIES"):
        A.ks_approximator(product_target, 10**6, 3, 4, 1e-9)
    with pytest.raises(ValueError, match=r"m must be <= 134217728"):  # the grid's own limit
        quantize.quantizer(10**9, 1, 1e-12)
    with pytest.raises(ValueError, match=r"MAX_PARAMETERS"):
        quantize.quantizer(10**7, 20, 1e-12)
    with pytest.raises(ValueError, match=r"MAX_SAMPLE_ENTRIES"):
        metrics.uniform_sampler(3, 2)(np.random.default_rng(0), 10**9)
    monkeypatch.setattr(
        A, "MAX_TABLE_ENTRIES", math.comb(4, 3) * 3
    )  # exactly the table of m = 4, n = 3
    A.ks_approximator(product_target, 4, 3, 1, 0.01, gamma=0.5)
    with pytest.raises(ValueError, match="MAX_TABLE_ENTRIES = 12"):
        A.ks_approximator(product_target, 5, 3, 1, 0.01, gamma=0.5)


@pytest.mark.parametrize(
    "call, match",
    [
        (
            lambda: A.ks_approximator(product_target, 4, 3, 1, 0.01, exact="yes"),
            "exact must be True, False or None",
        ),
        (
            lambda: A.ks_approximator(lambda X: X.astype(complex), 4, 3, 1, 0.01),
            r"f\(X\) must be a real array, not complex",
        ),
        (
            lambda: A.ks_approximator(lambda X: X > 0.5, 4, 3, 1, 0.01),
            r"f\(X\) must be a real array, not bool",
        ),
        (
            lambda: quantize.bad_sets(np.ones((1, 2, 1), dtype=bool), 4, 0.01),
            "X must be a real array, not bool",
        ),
        (
            lambda: metrics.lp_error(
                product_target, lambda X: X * 1j, 1, metrics.uniform_sampler(3, 1), 10
            ),
            r"g\(X\) must be a real array, not complex",
        ),
    ],
)
def test_complex_and_bool_values_are_refused(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_small_ramp_widths_keep_clean_inputs_exact():
    # tau = 1e-10: the ramps' output weights h / tau amplify float64 rounding to about 1e-6,
    # which a fixed snapping tolerance of 1e-9 h let through (550 of 1,091 clean inputs wrong)
    g = A.ks_approximator(product_target, 3, 2, 1, 1e-10)
    reps = quantize.cell_representatives(3)  # 1/6, 1/2, 5/6: 0.4 -> 1/2 and 0.95 -> 5/6
    want = product_target(np.array([[[reps[1]], [reps[2]]]]))  # (1/3, 5/9)
    assert np.array_equal(g(np.array([[[0.4], [0.95]]])), want)
    X = np.random.default_rng(0).random((300, 2, 1))
    ramp, dup = quantize.bad_sets(X, 3, 1e-10)
    clean = ~ramp & ~dup
    Q = reps[np.minimum((X * 3).astype(int), 2)]
    assert clean.sum() > 150  # expected 200: two tokens share one of 3 cells with probability 1/3
    assert np.abs(g(X[clean]) - product_target(Q[clean])).max() == 0.0


@pytest.mark.parametrize("tau", [1e-2, 1e-6, 1e-10, 2.5e-13])
def test_quantizer_float64_error_bounds_the_measured_error(tau):
    import mpmath

    from lib.interpolation import ffn_mp

    m = 4
    layer = quantize.quantizer(m, 1, tau)
    x = np.random.default_rng(1).random(400)
    x = np.concatenate([x, [0.52495, 0.25 - tau / 2, 0.75 - tau / 3]])
    with torch.no_grad():
        got = layer(torch.as_tensor(x[:, None])).numpy()[:, 0]
    weights = {k: v.detach().numpy() for k, v in layer.weights().items()}
    with mpmath.workdps(60):
        want = np.array([float(r[0]) for r in ffn_mp(x[:, None].tolist(), weights)])
    bound = quantize.quantizer_float64_error(m, 1, tau, x_max=1.0)
    assert np.abs(got - want).max() <= bound


def test_ramps_too_narrow_for_float64_are_refused():
    g = A.ks_approximator(product_target, 2, 2, 1, 1e-15)  # h / tau = 5e14
    with pytest.raises(ValueError, match="tau=1e-15 is too small for float64"):
        g(np.array([[[0.2], [0.7]]]))


def test_jump_and_quantized_jump_differ_on_h_over_3_plus_tau_over_6():
    # the exercise of Chapter 4: a = 1/3, m = 4 (m = 1 mod 3): f and f(q) differ exactly on
    # [1/4 - tau/6, 1/3), a length h/3 + tau/6
    m, tau = 4, 0.1 / 16
    x = np.linspace(0.0, 1.0, 200_001)[:, None, None]
    f, g = quantize.jump(x, 1 / 3), quantize.quantized_jump(x, m, tau, 1 / 3)
    assert set(np.unique(f)) == {0.0, 1.0} and f.shape == g.shape == x.shape
    differ = x[f != g]
    assert differ.min() == pytest.approx(0.25 - tau / 6, abs=1e-5)
    assert differ.max() < 1 / 3 <= x[x > differ.max()].min()
    assert (f != g).mean() == pytest.approx(1 / (3 * m) + tau / 6, abs=2e-5)
    np.testing.assert_array_equal(quantize.jump([0.2, 1 / 3, 0.5], 1 / 3), [0.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="a must be finite"):
        quantize.jump(x, math.nan)
    with pytest.raises(ValueError, match="tau must be below"):
        quantize.quantized_jump(x, 4, 0.3, 1 / 3)


def test_error_along_line_is_exact_off_the_bad_sets():
    m, tau = 5, 0.1 / 25
    x, out, err, ramp, dup = A.error_along_line(product_target, m, [0.33, 0.81], tau, gamma=1.0)
    # the 201 points of the line, and at least 7 on each ramp [j/m - tau, j/m]
    assert np.all(np.diff(x) > 0) and np.isin(np.linspace(0.0, 1.0, 201), x).all()
    for j in range(1, m):
        assert ((x >= j / m - tau) & (x <= j / m)).sum() >= 7
    X = np.stack([x, np.full_like(x, 0.33), np.full_like(x, 0.81)], axis=1)[:, :, None]
    np.testing.assert_array_equal(err, np.abs(out - product_target(X)[:, 0, 0]))
    want_ramp, want_dup = quantize.bad_sets(X, m, tau)
    np.testing.assert_array_equal(ramp, want_ramp)
    np.testing.assert_array_equal(dup, want_dup)
    # off the bad sets the approximator returns f at the cell centres (an independent quantizer)
    clean = ~(ramp | dup)
    centres = (np.minimum(np.floor(X[clean] * m), m - 1) + 0.5) / m
    np.testing.assert_allclose(out[clean], product_target(centres)[:, 0, 0], atol=1e-9)
    with pytest.raises(ValueError, match=r"others must lie in \[0, 1\]"):
        A.error_along_line(product_target, m, [1.5], tau)
    with pytest.raises(ValueError, match="others must not be empty"):
        A.error_along_line(product_target, m, [], tau)
