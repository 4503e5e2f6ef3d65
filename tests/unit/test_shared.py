"""The small shared modules: lib.targets, lib.metrics, the grid midpoints both constructions use,
and the validation helpers of lib._validate."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from lib import _geometry, _validate, maxaffine, metrics, quantize, targets


def test_targets_by_hand():
    X = np.array([[[1.0], [2.0], [3.0]]])
    np.testing.assert_array_equal(targets.mean_product(X), [[[2.0], [4.0], [6.0]]])  # mean 2
    Y = np.array([[[1.0, 5.0], [3.0, 0.0]]])
    np.testing.assert_array_equal(targets.max_product(Y), 3.0 * Y)  # max first coordinate 3
    np.testing.assert_allclose(
        targets.wave(np.array([[0.25, 0.0], [0.0, 0.3], [0.75, 0.5]])), [1.0, 0.0, 1.0], atol=1e-15
    )
    np.testing.assert_array_equal(
        targets.disk(np.array([[0.5, 0.5], [0.75, 0.5], [0.5, 0.8125], [0.0, 0.0]])),
        [1.0, 1.0, 0.0, 0.0],
    )  # radius 0.3: 0.25 in, 0.3125 out
    with pytest.raises(ValueError, match="X must have"):
        targets.mean_product(np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"X must have shape \(batch, n, d\)"):
        targets.mean_product(np.ones((2, 3, 1, 1)))
    with pytest.raises(ValueError, match=r"p must have shape \(batch, 2\)"):
        targets.wave(np.ones((4, 3)))
    with pytest.raises(ValueError, match="real array"):
        targets.disk(np.ones((2, 2), dtype=bool))


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


def test_one_computation_of_grid_midpoints_serves_both_constructions():
    axis, h = _geometry.midpoints(4, 0.0, 1.0)
    np.testing.assert_array_equal(axis, [0.125, 0.375, 0.625, 0.875]) and h == 0.25
    np.testing.assert_array_equal(maxaffine.grid_centres(4, 1)[:, 0], axis)
    np.testing.assert_array_equal(quantize.cell_representatives(4, 0.0, 1.0), axis)
    for m, low, high in ((3, 0.0, 1.0), (6, -1.0, 2.0), (24, 0.0, 1.0)):
        ax, _ = _geometry.midpoints(m, low, high)
        np.testing.assert_array_equal(maxaffine.grid_centres(m, 1, low, high)[:, 0], ax)
    for bad, match in (
        ((0, 0.0, 1.0), "m must be >= 1"),
        ((2, 1.0, 1.0), "high must exceed low"),
        ((2, 0.0, math.inf), "finite"),
    ):
        with pytest.raises(ValueError, match=match):
            _geometry.midpoints(*bad)


def test_one_of_and_float_dtype():
    assert _validate.one_of("mode", "fast", ("fast", "full")) == "fast"
    for bad in ("slow", None, ["fast"], True):
        with pytest.raises(ValueError, match=r"mode must be one of \('fast', 'full'\)"):
            _validate.one_of("mode", bad, ("fast", "full"))
    assert _validate.float_dtype("dtype", torch.float64) is torch.float64
    for bad in (torch.float16, "float32", np.float64):
        with pytest.raises(ValueError, match="dtype must be torch.float32 or torch.float64"):
            _validate.float_dtype("dtype", bad)
