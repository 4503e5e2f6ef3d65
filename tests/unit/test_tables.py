"""lib.experiments.tables: the rows of the chapters' error and cost tables, the rate points."""

import math
import re

import mpmath
import numpy as np
import pytest
from test_approximation import product_target
from test_lookup import target

from lib import approximation as A
from lib.experiments import tables


def test_price_row_formats_the_theorems_weight_like_fmt():
    from lib.book.checks import fmt

    row = tables.price_row(product_target, 4, 3, 1, tau=0.01)
    exact = A.ks_approximator(product_target, 4, 3, 1, tau=0.01)
    assert row.weight_theorem == fmt(mpmath.mpf(exact.max_weight))
    assert re.fullmatch(r"\d\.\d\de\d+", row.weight_theorem)  # 3.63e32, never 3.63e+32
    assert row.conflicts64_theorem == exact.conflicts64
    assert row.distinct64_theorem == exact.distinct64


def test_error_row_reproduces_the_hard_partition_and_first_order_decay():
    x = np.random.default_rng(6).uniform(size=(4000, 2))
    rows = [tables.lookup_error_row(target, m, 10.0, x) for m in (8, 16, 32)]
    sups = [r.sup_hard for r in rows]
    assert sups[0] / sups[1] == pytest.approx(2, rel=0.15) and sups[1] / sups[2] == pytest.approx(
        2, rel=0.15
    )
    assert all(r.sup <= r.sup_hard + 1e-3 for r in rows)
    hard = tables.lookup_error_row(target, 8, None, x)
    assert hard.sup == hard.sup_hard and math.isnan(hard.beta)


def test_rate_points_are_one_fixed_sample_per_mode():
    for mode, count in tables.RATE_POINTS.items():
        pts = tables.rate_points(mode)
        assert (
            pts.shape == (count, 2) and pts.dtype == np.float64 and ((pts >= 0) & (pts < 1)).all()
        )
        np.testing.assert_array_equal(
            pts, np.random.default_rng(tables.RATE_SEED).uniform(size=(count, 2))
        )
        np.testing.assert_array_equal(pts, tables.rate_points(mode))
    with pytest.raises(ValueError, match="mode must be one of"):
        tables.rate_points("paper")
