"""lib._geometry: the grid midpoints both constructions share, evaluation in bounded blocks."""

import math

import numpy as np
import pytest
from test_lookup import target

from lib import _geometry, maxaffine, quantize
from lib import cross as CA
from lib import lookup as L
from lib import maxaffine as M


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


def test_evaluations_work_in_blocks_of_chunk_entries_with_the_same_numbers(monkeypatch):
    """soft_lookup, the cross-attention layer and the K&S approximator bound the matrix one block
    builds by lib._geometry.CHUNK_ENTRIES (each page's memory, measured by make bench): with a
    tiny bound they split the points into many blocks and return the same numbers."""
    from lib import _geometry, approximation, targets

    x = np.random.default_rng(11).uniform(size=(50, 2))
    c = M.grid_centres(8, 2)  # 64 centres
    layer = CA.cross_attention_approximator(target, c, 30.0)
    g = approximation.ks_approximator(targets.max_product, 4, 2, 1, 0.1 / 16, gamma=1.0)
    X = np.random.default_rng(12).uniform(size=(30, 2, 1))
    before = L.soft_lookup(x, c, target(c), 50.0), layer(x).numpy(), g(X)
    sizes: list[int] = []
    real = _geometry.distances

    def counted(p, q):
        sizes.append(len(p))
        return real(p, q)

    monkeypatch.setattr(_geometry, "CHUNK_ENTRIES", 3 * 64)
    monkeypatch.setattr(_geometry, "distances", counted)  # soft_lookup reads it
    for module in (CA, approximation):
        monkeypatch.setattr(module, "CHUNK_ENTRIES", 3 * 64)
    after = [L.soft_lookup(x, c, target(c), 50.0)]
    assert max(sizes) == 3 and sum(sizes) == 50  # 17 blocks of at most 3 points
    after += [layer(x).numpy(), g(X)]
    for a, b in zip(before, after, strict=True):
        np.testing.assert_allclose(b, a, rtol=0, atol=1e-15)
    blocks = []
    monkeypatch.setattr(g, "lookup", lambda z, real=g.lookup: blocks.append(len(z)) or real(z))
    g(X)
    assert len(blocks) > 1 and sum(blocks) == 60 and max(blocks) <= max(1, 3 * 64 // len(g.knots))
    queries = []
    forward = layer.linear.forward
    monkeypatch.setattr(layer.linear, "forward", lambda z: queries.append(len(z)) or forward(z))
    layer(x)
    assert len(queries) > 1 and sum(queries) == 50 and max(queries) <= 3
