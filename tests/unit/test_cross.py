"""lib.cross: the lookup of a sequence target with one cross-attention layer per output
position, against its closed form."""

from __future__ import annotations

import numpy as np
import pytest

from lib import cross, lookup, maxaffine, targets


def test_per_position_costs_against_the_closed_form_and_its_counts():
    rng = np.random.default_rng(2)
    X = rng.uniform(size=(300, 3))
    m, kappa, n = 4, 10.0, 3
    got = cross.per_position_costs(targets.mean_product_flat, X, m, kappa)
    # the closed form of every position at once: soft_lookup with the (N, n) table
    c = maxaffine.grid_centres(m, n)
    closed = lookup.soft_lookup(X, c, targets.mean_product_flat(c), kappa * m * m)
    err = np.abs(closed - targets.mean_product_flat(X))
    assert got["L1"] == pytest.approx(err.sum(axis=1).mean(), rel=1e-9)
    assert got["sup"] == pytest.approx(err.max(), rel=1e-9)
    # n layers of m^n key tokens (a_i, b_i, v_i): n + 2 numbers each; W_Q = beta I is the
    # largest weight (|a_i| = 2|c_i| <= 2, |b_i| = |c_i|^2 <= n, |v_i| <= 1)
    assert got["tokens"] == n * m**n
    assert got["numbers"] == n * m**n * (n + 2)
    assert got["max |w|"] == kappa * m * m
    with pytest.raises(ValueError, match=r"^f must map points \(P, n\)"):
        cross.per_position_costs(lambda p: p[:, 0], X, m, kappa)
    with pytest.raises(ValueError, match=r"^X must be points \(P, n\)"):
        cross.per_position_costs(targets.mean_product_flat, X[:, :, None], m, kappa)
