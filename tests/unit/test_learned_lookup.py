"""lib.experiments.learned_lookup: the lookup layer trained, and compared with its construction."""

import numpy as np
import pytest

from lib import targets
from lib.experiments import learned_lookup as L
from lib.maxaffine import grid_centres


def built(m, kappa=10.0, order=None):
    grid = grid_centres(m, 2)
    order = np.arange(m * m) if order is None else order
    return L.LearnedLookup(grid[order], targets.wave(grid)[order], kappa * m * m, m, [])


def test_the_construction_compared_with_itself_matches_everywhere():
    """The construction's own keys, values and temperature, in any order of the keys: every
    point in its matching cell, every key used, and the same errors as the construction."""
    for order in (None, np.random.default_rng(0).permutation(16)):
        cmp = L.compare_partitions(built(4, order=order), targets.wave, points=40)
        assert cmp["matching"] == 1.0 and cmp["cells_used"] == 16
        assert cmp["sup_learned"] == pytest.approx(cmp["sup_built"], abs=1e-15)
        assert cmp["l2_learned"] == pytest.approx(cmp["l2_built"], abs=1e-15)


def test_a_half_shifted_partition_matches_in_part():
    """Keys moved by half a cell along x1: each learned cell straddles two grid cells, so at
    most about half of its points lie in the cell it is matched to (plus the border column)."""
    layer = built(4)
    shifted = L.LearnedLookup(layer.centres + [0.125, 0.0], layer.values, layer.beta, 4, [])
    cmp = L.compare_partitions(shifted, targets.wave, points=64)
    assert 0.5 <= cmp["matching"] < 0.75


def test_training_lowers_the_error_and_is_seeded():
    a = L.learned_lookup(targets.wave, 3, samples=256, epochs=60, lr=3e-2, seed=1)
    b = L.learned_lookup(targets.wave, 3, samples=256, epochs=60, lr=3e-2, seed=1)
    assert a.losses[-1] < a.losses[0] / 2 and a.losses == b.losses
    assert a.centres.shape == (9, 2) and a.values.shape == (9,) and a.beta > 0
    assert (a.cells(grid_centres(5, 2)) < 9).all()


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"target": "wave"}, "target must be callable"),
        ({"target": lambda x: x}, "target must return finite values of shape"),
        ({"target": lambda x: np.full(len(x), np.inf)}, "target must return finite values"),
        ({"kappa": 1e305, "m": 64}, "overflows"),
        ({"samples": 1 << 20, "m": 64}, "MAX_MATRIX_ENTRIES"),
        ({"m": 0}, "m"),
        ({"kappa": -1.0}, "kappa"),
        ({"epochs": 0}, "epochs"),
    ],
)
def test_learned_lookup_refuses_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        L.learned_lookup(**({"target": targets.wave, "m": 2, "epochs": 1} | kwargs))
    with pytest.raises(ValueError, match="layer must be"):
        L.compare_partitions("layer", targets.wave)


def test_compare_partitions_refuses_what_it_cannot_measure():
    layer = built(2)
    with pytest.raises(ValueError, match="target must return finite values"):
        L.compare_partitions(layer, lambda x: targets.wave(x)[:, None])
    with pytest.raises(ValueError, match="target must be callable"):
        L.compare_partitions(layer, None)
    with pytest.raises(ValueError, match="centres"):
        L.LearnedLookup(layer.centres, layer.values, 1.0, 3, [])
    with pytest.raises(ValueError, match="x must be finite points"):
        layer.cells([0.5, 0.5])


def test_the_stored_runs_are_named_and_set_by_mode():
    """Full mode has at least five seeds per grid side (orders over seeds need five); fast mode
    is its first sides and one seed; a run's settings train what learned_lookup trains."""
    full, fast = L.lookup_cells("full"), L.lookup_cells("fast")
    assert len({s for _, s in full}) >= 5 and set(fast) <= set(full)
    name, settings = L.lookup_run_settings(4, 2, "full")
    assert name == "lookup-4-seed-2" and settings["m"] == 4 and settings["seed"] == 2
    tiny = settings | {"m": 2, "samples": 64, "epochs": 5, "points": 8}
    out = L.lookup_compute(tiny)
    layer = L.learned_lookup(targets.wave, 2, samples=64, epochs=5, seed=2)
    assert out["final_loss"] == layer.losses[-1] and out["centres"] == layer.centres.tolist()
    assert out["matching"] == L.compare_partitions(layer, targets.wave, points=8)["matching"]


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: L.lookup_cells("slow"), "mode"),
        (lambda: L.lookup_run_settings(0, 0, "fast"), "m"),
        (lambda: L.lookup_run_settings(2, -1, "fast"), "seed"),
        (lambda: L.lookup_compute({"m": 2}), "missing"),
        (
            lambda: L.lookup_compute(L.lookup_run_settings(2, 0, "fast")[1] | {"target": "x"}),
            "target",
        ),
    ],
)
def test_the_stored_runs_refuse_bad_arguments(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_matched_cells_are_the_images_compare_partitions_counts():
    """The construction's own cells as an image (rows x2, columns x1: cell i m + j with i along
    x1), and for a shifted layer the share of equal pixels is compare_partitions' matching."""
    own, matched = L.matched_cells(built(2), points=4)
    rows, cols = np.indices((4, 4))
    assert (own == (cols // 2) * 2 + rows // 2).all() and (matched == own).all()
    layer = built(4)
    shifted = L.LearnedLookup(layer.centres + [0.125, 0.0], layer.values, layer.beta, 4, [])
    own, matched = L.matched_cells(shifted, points=64)
    cmp = L.compare_partitions(shifted, targets.wave, points=64)
    assert (own == matched).mean() == cmp["matching"]
    with pytest.raises(ValueError, match="layer must be"):
        L.matched_cells("layer")
    with pytest.raises(ValueError, match="points"):
        L.matched_cells(layer, points=1)
