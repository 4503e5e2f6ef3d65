"""lib.approximation: the quantizer, the FF-SA-FF approximator of K&S Proposition 1, error estimates."""

import math

import numpy as np
import pytest
import torch

from lib import approximation as A


def product_target(X):
    """f(X)_k = x_k * mean(X): continuous and permutation equivariant."""
    return X * X.mean(axis=1, keepdims=True)


def test_quantizer_exact_on_cell_interiors_and_bounded_on_ramps():
    q = A.quantizer(4, 2, tau=0.05)  # cells of width 1/4, representatives 1/8, 3/8, 5/8, 7/8
    pts = torch.tensor([[0.01, 0.99], [0.19, 0.26], [0.5, 0.69], [-3.0, 7.0]], dtype=torch.float64)
    expected = [[0.125, 0.875], [0.125, 0.375], [0.625, 0.625], [0.125, 0.875]]
    np.testing.assert_allclose(q(pts).detach().numpy(), expected, atol=1e-12)
    # on a ramp (0.2, 0.25) the output moves linearly between the neighbouring representatives
    ramp = q(torch.tensor([[0.225, 0.225]], dtype=torch.float64)).detach().numpy()
    np.testing.assert_allclose(ramp, [[0.25, 0.25]], atol=1e-12)
    assert q.width == 2 * 3 * 2


def test_cell_representatives_avoid_zero():
    np.testing.assert_allclose(A.cell_representatives(4), [0.125, 0.375, 0.625, 0.875])
    reps = A.cell_representatives(3, low=-1.5, high=1.5)  # the middle centre would be 0
    assert np.all(reps != 0) and np.allclose(np.diff(reps), 1.0)


def test_measures_closed_forms():
    assert A.duplicate_cell_measure(4, 3, 1) == pytest.approx(1 - (3 / 4) * (2 / 4))
    assert A.duplicate_cell_measure(2, 3, 1) == 1.0  # more tokens than cells
    assert A.duplicate_cell_measure(10, 2, 2) == pytest.approx(1 / 100)
    assert A.ramp_measure(4, 3, 1, 0.05) == pytest.approx(1 - (1 - 3 * 0.05) ** 3)
    # Monte Carlo agreement of the duplicate measure (independent computation)
    rng = np.random.default_rng(0)
    cells = np.floor(rng.uniform(size=(20000, 3)) * 5)
    dup = np.mean([len(set(row)) < 3 for row in cells])
    assert dup == pytest.approx(A.duplicate_cell_measure(5, 3, 1), abs=0.01)


@pytest.mark.parametrize("exact", [True, False])
def test_approximator_is_f_at_the_quantized_sequence_off_ramps_and_duplicates(exact):
    g = A.ks_approximator(product_target, 4, 3, 1, tau=0.01, gamma=None if exact else 0.5, exact=exact)
    assert g.exact is exact
    X = np.array([[[0.05], [0.30], [0.80]], [[0.70], [0.10], [0.45]], [[0.99], [0.51], [0.26]]])
    reps = (np.floor(X * 4) + 0.5) / 4  # independent quantization: the cell centres
    np.testing.assert_allclose(g(X), product_target(reps), atol=1e-9)
    # permuting the tokens permutes the output
    np.testing.assert_allclose(g(X[:, [2, 0, 1]]), g(X)[:, [2, 0, 1]], atol=1e-9)


def test_outputs_stay_within_the_table_range_and_errors_fall_with_m():
    s = A.uniform_sampler(3, 1)
    g8 = A.ks_approximator(product_target, 8, 3, 1, tau=1e-3, gamma=1.0)
    X = s(np.random.default_rng(1), 500)
    out = g8(X)
    assert out.min() >= g8.values.min() - 1e-9 and out.max() <= g8.values.max() + 1e-9
    g16 = A.ks_approximator(product_target, 16, 3, 1, tau=1e-3, gamma=1.0)
    e8, se8 = A.lp_error(product_target, g8, 1, s, 2000, seed=2)
    e16, se16 = A.lp_error(product_target, g16, 1, s, 2000, seed=2)
    assert e16 < e8 - 3 * math.hypot(se8, se16)
    sup16, _ = A.sup_error(product_target, g16, s, 2000, seed=2)
    assert sup16 > 0.1  # duplicate cells keep the sup error up


def test_lp_error_against_a_hand_computed_value():
    s = A.uniform_sampler(2, 1)
    f = lambda X: X                                  # noqa: E731
    g = lambda X: X + 0.5                            # noqa: E731  error 0.5 on each of 2 entries
    assert A.lp_error(f, g, 1, s, 10)[0] == pytest.approx(1.0)
    assert A.lp_error(f, g, 2, s, 10)[0] == pytest.approx(math.sqrt(0.5))
    assert A.lp_error(f, f, 2, s, 10) == (0.0, 0.0)
    assert A.sup_error(f, g, s, 10)[0] == pytest.approx(0.5)


def test_parameter_count_matches_the_layers():
    g = A.ks_approximator(product_target, 4, 3, 1, tau=0.01, gamma=0.5, exact=False)
    M = math.comb(4, 3) * 3
    assert g.parameters == (3 * 6 + 1) + 4 * 2 + 1 + M + M + 1  # FF1 (W1, b1, W2, b2), SA, v, FF2


@pytest.mark.parametrize("call, match", [
    (lambda: A.quantizer(0, 1, 0.1), "m"),
    (lambda: A.quantizer(4, 1, 0.3), "tau must be below"),
    (lambda: A.quantizer(4, 1, 0.0), "tau"),
    (lambda: A.quantizer(4, 1, 0.1, low=1.0, high=0.0), "high must exceed low"),
    (lambda: A.ks_approximator(lambda X: X * X[:, :1], 4, 3, 1, 0.01), "not permutation equivariant"),
    (lambda: A.ks_approximator(product_target, 2, 3, 1, 0.01), "distinct cells"),
    (lambda: A.ks_approximator(product_target, 200, 3, 1, 1e-4), "entries"),
    (lambda: A.ks_approximator("f", 4, 3, 1, 0.01), "callable"),
    (lambda: A.ks_approximator(lambda X: X[:, :, 0], 4, 3, 1, 0.01), r"\(batch, n, d_out\)"),
    (lambda: A.ks_approximator(product_target, 4, 3, 1, 0.01, exact=False), "float64 cannot separate"),
    (lambda: A.lp_error(product_target, product_target, 0.5, A.uniform_sampler(3, 1), 10), "p"),
    (lambda: A.lp_error(product_target, product_target, 1, A.uniform_sampler(3, 1), 1), "n_samples"),
    (lambda: A.duplicate_cell_measure(0, 3, 1), "m"),
])
def test_value_errors(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_l1_error_on_a_fixed_sample_equals_an_independent_computation():
    g = A.ks_approximator(product_target, 4, 3, 1, tau=0.01, gamma=0.5)
    X = np.array([[[0.05], [0.30], [0.80]], [[0.70], [0.10], [0.45]], [[0.99], [0.51], [0.26]]])
    fixed = lambda rng, k: X[:k]                     # noqa: E731
    reps = (np.floor(X * 4) + 0.5) / 4
    expected = np.abs(product_target(X) - product_target(reps)).sum(axis=(1, 2)).mean()
    assert A.lp_error(product_target, g, 1, fixed, 3)[0] == pytest.approx(expected, rel=1e-9)


def test_bad_sets_hand_computed():
    # m = 4, tau = 0.05: ramps (0.2, 0.25), (0.45, 0.5), (0.7, 0.75)
    X = np.array([[[0.1], [0.3], [0.6]],     # clean
                  [[0.1], [0.22], [0.6]],    # a ramp (0.22 also shares cell 0 with 0.1)
                  [[0.1], [0.15], [0.6]],    # two tokens in cell 0
                  [[0.0], [0.25], [1.0]]])   # grid points and ends are not on ramps
    ramp, dup = A.bad_sets(X, 4, 0.05)
    assert ramp.tolist() == [False, True, False, False]
    assert dup.tolist() == [False, True, True, False]
