"""lib.lookup_bounds: how fine LHSL's lookup must be."""

import math

import numpy as np
import pytest

from lib import lookup as L
from lib import lookup_bounds as LB
from lib import maxaffine as M


def test_grid_lookup_bound_against_an_independent_sum_and_measured_errors():
    """Chapter 5's bound (C15; Chapter 6's B6.2): the hard partition's L h / sqrt(2) exactly; the
    ring sum T(kappa) against mpmath's nsum of the same series to infinity; and the bound above the
    errors of soft_lookup measured for a linear target whose gradient norm is exactly L."""
    import mpmath

    assert LB.grid_lookup_bound(3.0, 8, None) == 3.0 / 8 / math.sqrt(2)
    for kappa in (1e-3, 0.1, 1.0, 10.0, 100.0):
        tail = mpmath.nsum(
            lambda k, kappa=kappa: 8 * k * (k + 0.5) * mpmath.exp(-kappa * ((k - 0.5) ** 2 - 0.5)),
            [2, mpmath.inf],
        )
        want = float(2.0 * mpmath.sqrt(2) / 5 * (1.5 + tail))
        assert LB.grid_lookup_bound(2.0, 5, kappa) == pytest.approx(want, rel=1e-12)
    rng = np.random.default_rng(3)
    x, u = rng.uniform(size=(4000, 2)), np.array([0.6, 0.8])  # |u| = 1: gradient norm 7
    for m, kappa in ((4, 1.0), (8, 10.0), (16, 100.0)):
        c = M.grid_centres(m, 2)
        err = np.abs(L.soft_lookup(x, c, 7.0 * c @ u, kappa * m * m) - 7.0 * x @ u).max()
        assert err <= LB.grid_lookup_bound(7.0, m, kappa)
    with pytest.raises(ValueError, match="kappa"):
        LB.grid_lookup_bound(1.0, 4, 1e-4)
    with pytest.raises(ValueError, match="lipschitz"):
        LB.grid_lookup_bound(1e308, 1, 1.0)


def test_cells_per_axis_is_the_smallest_grid_the_half_diagonal_bound_allows():
    assert LB.cells_per_axis(1.0, 10, 0.1) == 16  # sqrt(10) / 0.2 = 15.8
    assert LB.cells_per_axis(math.pi, 1, 0.05) == 32  # pi / 0.1 = 31.4
    assert LB.cells_per_axis(1.0, 4, 0.25) == 4  # 2 / 0.5 = 4 exactly: the bound is met at 4
    assert LB.cells_per_axis(0.0, 3, 0.1) == 1  # a constant needs one cell
    for lip, D, eps in [(1.0, 2, 0.1), (math.pi, 3, 0.01), (2.5, 7, 0.3)]:
        m = LB.cells_per_axis(lip, D, eps)
        assert lip * math.sqrt(D) / (2 * m) <= eps < lip * math.sqrt(D) / (2 * (m - 1))
    with pytest.raises(ValueError, match="ask for more cells per axis than float64 holds"):
        LB.cells_per_axis(1e308, 4, 0.1)
    with pytest.raises(ValueError, match="^eps must be > 0"):
        LB.cells_per_axis(1.0, 2, 0.0)
