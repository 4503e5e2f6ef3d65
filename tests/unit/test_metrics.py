"""lib.metrics: the sampler, the L_p and sup error estimates and the error summary."""

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from oracles import U, derandomized_settings
from test_approximation import product_target
from test_contract import SCALES

from lib import approximation as A
from lib import metrics

SETTINGS = derandomized_settings()


def test_lp_error_against_a_hand_computed_value():
    s = metrics.uniform_sampler(2, 1)
    f = lambda X: X  # noqa: E731
    g = lambda X: X + 0.5  # noqa: E731  error 0.5 on each of 2 entries
    assert metrics.lp_error(f, g, 1, s, 10)[0] == pytest.approx(1.0)
    assert metrics.lp_error(f, g, 2, s, 10)[0] == pytest.approx(math.sqrt(0.5))
    assert metrics.lp_error(f, f, 2, s, 10) == (0.0, 0.0)
    assert metrics.sup_error(f, g, s, 10)[0] == pytest.approx(0.5)


def test_l1_error_on_a_fixed_sample_equals_an_independent_computation():
    g = A.ks_approximator(product_target, 4, 3, 1, tau=0.01, gamma=0.5)
    X = np.array([[[0.05], [0.30], [0.80]], [[0.70], [0.10], [0.45]], [[0.99], [0.51], [0.26]]])
    fixed = lambda rng, k: X[:k]  # noqa: E731
    reps = (np.floor(X * 4) + 0.5) / 4
    expected = np.abs(product_target(X) - product_target(reps)).sum(axis=(1, 2)).mean()
    assert metrics.lp_error(product_target, g, 1, fixed, 3)[0] == pytest.approx(expected, rel=1e-9)


def test_error_summary_by_hand():
    errors = np.array([[3.0, 4.0], [0.0, 0.0]])  # two samples, two entries each
    s = metrics.error_summary(errors)
    assert s.sup == 4.0
    assert s.l1 == pytest.approx(3.5)  # mean of the row sums 7 and 0
    assert s.l2 == pytest.approx(math.sqrt(12.5))  # sqrt of the mean of 25 and 0
    assert s.l1_se == pytest.approx(np.std([7.0, 0.0], ddof=1) / math.sqrt(2))
    assert metrics.error_summary(np.zeros((3, 2))) == metrics.ErrorSummary(0.0, 0.0, 0.0, 0.0, 0.0)
    with pytest.raises(ValueError, match="at least two samples"):
        metrics.error_summary(np.ones((1, 2)))


@SETTINGS
@given(
    scale=st.sampled_from(SCALES),
    p=st.sampled_from([1.0, 2.0, 3.5, 40.0, 1e6]),
    seed=st.integers(0, 10_000),
    shape=st.sampled_from([(2,), (5,), (4, 3)]),
)
def test_lp_from_errors_against_mpmath(scale, p, seed, shape):
    e = scale * np.random.default_rng(seed).uniform(0, 1, shape)
    got, _ = metrics.lp_from_errors(e, p)
    rows = e.reshape(len(e), -1)
    with mpmath.workdps(60):
        mean = mpmath.fsum(mpmath.fsum(mpmath.mpf(float(x)) ** p for x in r) for r in rows)
        want = float((mean / len(rows)) ** (1 / mpmath.mpf(p)))
    # each term: the division by the largest error (u), the power (p u of relative error in
    # u^p, which the 1/p root turns back into u), the sum of k terms and the root
    assert abs(got - want) <= 16 * (rows.shape[1] + 4) * U * want


def test_lp_error_of_tiny_and_huge_errors_is_not_zero_or_nan():
    assert metrics.lp_from_errors(np.array([1e-200, 2e-200]), 2)[0] == pytest.approx(
        math.sqrt(2.5) * 1e-200, rel=8 * U
    )
    assert metrics.lp_from_errors(np.array([1.58e200, 1e200]), 2)[0] == pytest.approx(
        math.sqrt((1.58**2 + 1) / 2) * 1e200, rel=8 * U
    )
    # p = 1e6: the L_p mean of equal errors is that error, not 0
    assert metrics.lp_from_errors(np.array([0.4999997, 0.4999997]), 1e6)[0] == pytest.approx(
        0.4999997, rel=8 * U
    )
    summary = metrics.error_summary(np.array([1e-200, 2e-200]))
    assert summary.l2 == pytest.approx(math.sqrt(2.5) * 1e-200, rel=8 * U)


def test_uniform_sampler_draws_across_the_whole_float64_range():
    x = metrics.uniform_sampler(3, 2, -1.7e308, 1.7e308)(np.random.default_rng(0), 2000)
    assert np.isfinite(x).all() and x.min() < -1e307 and x.max() > 1e307
    assert abs((x / 1.7e308).mean()) < 0.05  # centred: the halves are doubled, not shifted
