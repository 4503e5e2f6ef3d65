"""lib.atlas: digits, rounding, bit counts and the counting bounds of the scaling atlas."""

from __future__ import annotations

import itertools
import math

import mpmath
import numpy as np
import pytest

from lib import atlas


def test_digits_needed_is_log10_of_the_ratio():
    assert atlas.digits_needed(1e-6, 1.0) == pytest.approx(6.0)
    assert atlas.digits_needed(0.5, 2.0) == pytest.approx(math.log10(4.0))
    assert atlas.digits_needed(mpmath.mpf("1e-5000"), 10) == pytest.approx(5001.0)
    assert atlas.digits_needed(4.0, 1.0) == pytest.approx(-math.log10(4.0))


def test_round_to_digits_merges_exactly_what_is_closer_than_the_step():
    x = np.array([0.0, 0.3, 0.31, 1.0])
    r = atlas.round_to_digits(x, 1, 1.0)
    assert np.allclose(r, [0.0, 0.3, 0.3, 1.0])
    assert len(np.unique(r)) == 3  # 0.3 and 0.31 merge at one digit
    assert len(np.unique(atlas.round_to_digits(x, 2, 1.0))) == 4
    # the result lies on the grid origin + k * spread * 10**-digits, within half a step
    rng = np.random.default_rng(0)
    y = rng.uniform(-3, 5, size=1000)
    for p in (1, 3, 7):
        step = 8.0 * 10.0**-p
        z = atlas.round_to_digits(y, p, 8.0, origin=-3.0)
        assert np.abs(z - y).max() <= step / 2 * (1 + 1e-9)
        k = (z + 3.0) / step
        assert np.allclose(k, np.round(k))
    assert atlas.round_to_digits(np.ones((2, 3)), 4, 1.0).shape == (2, 3)


def test_bits_per_number_counts_sign_and_magnitude():
    assert atlas.bits_per_number(1.0, 1.0) == 1
    assert atlas.bits_per_number(1.0, 2.0) == 1  # never below the sign bit
    assert atlas.bits_per_number(1.0, 0.5**10) == 11
    assert atlas.bits_per_number(1000.0, 1.0) == 1 + 10  # 2^9 < 1000 <= 2^10
    assert atlas.bits_per_number(mpmath.mpf("1e300"), mpmath.mpf("1e-300")) == 1 + math.ceil(
        600 * math.log2(10)
    )


def _packing_is_separated(L, eps, D):
    """Independent check of the packing on a lattice: the pyramids' heights exceed eps and
    they fit the cube; the count is the number of cubes."""
    k = atlas.lipschitz_packing_bits(L, eps, 1)
    assert k < L / (2 * eps) <= k + 1
    return k > 0 and L * (1 / k) / 2 > eps


def test_lipschitz_packing_bits_closed_form_and_separation():
    assert atlas.lipschitz_packing_bits(1.0, 0.1, 1) == 4  # L/(2 eps) = 5: k = 4 (strictly < 5)
    assert atlas.lipschitz_packing_bits(1.0, 0.1, 3) == 64
    assert atlas.lipschitz_packing_bits(1.0, 0.09, 2) == 25  # L/(2 eps) = 5.56: k = 5
    assert atlas.lipschitz_packing_bits(1.0, 0.5, 4) == 0  # one constant serves
    for L, eps in itertools.product((1.0, 2.5, math.pi), (0.01, 0.07, 0.2)):
        if L > 2 * eps * 2:
            assert _packing_is_separated(L, eps, 1)


def test_packing_functions_are_lipschitz_and_far_apart():
    # build two of the derivation's functions in D = 1 and check both properties numerically
    L, eps = 1.0, 0.1
    k = atlas.lipschitz_packing_bits(L, eps, 1)
    s = 1 / k
    x = np.linspace(0, 1, 20001)
    c = (np.arange(k) + 0.5) * s
    pyramids = np.maximum(0, L * (s / 2 - np.abs(x[:, None] - c)))
    f1, f2 = pyramids.sum(1), pyramids[:, :-1].sum(1) - pyramids[:, -1]
    assert np.abs(np.diff(f1) / np.diff(x)).max() <= L * (1 + 1e-9)
    assert np.abs(f1 - f2).max() > 2 * eps


def test_memorization_bits():
    assert atlas.memorization_bits(10, 2) == 10.0
    assert atlas.memorization_bits(3, 8) == 9.0
    assert atlas.memorization_bits(5, 1) == 0.0


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: atlas.digits_needed(0.0, 1.0), "gap"),
        (lambda: atlas.digits_needed(-1e-3, 1.0), "gap"),
        (lambda: atlas.digits_needed(1e-3, float("inf")), "spread"),
        (lambda: atlas.digits_needed(1e-3, "x"), "spread"),
        (lambda: atlas.round_to_digits([1.0, np.nan], 3, 1.0), "values"),
        (lambda: atlas.round_to_digits([1.0], 0, 1.0), "digits"),
        (lambda: atlas.round_to_digits([1.0], 2.5, 1.0), "digits"),
        (lambda: atlas.round_to_digits([1.0], 3, 0.0), "spread"),
        (lambda: atlas.round_to_digits([1.0], 300, 1e-300), "spread"),
        (lambda: atlas.round_to_digits([1.0], 3, 1.0, origin=np.inf), "origin"),
        (lambda: atlas.bits_per_number(0.0, 1.0), "largest"),
        (lambda: atlas.bits_per_number(1.0, -1.0), "resolution"),
        (lambda: atlas.bits_per_number(True, 1.0), "largest"),
        (lambda: atlas.lipschitz_packing_bits(0.0, 0.1, 1), "lipschitz"),
        (lambda: atlas.lipschitz_packing_bits(1.0, 0.0, 1), "eps"),
        (lambda: atlas.lipschitz_packing_bits(1.0, 0.1, 0), "dim"),
        (lambda: atlas.lipschitz_packing_bits(1.0, 1e-300, 10**5), "eps"),
        (lambda: atlas.memorization_bits(0, 2), "n_items"),
        (lambda: atlas.memorization_bits(3, 1.5), "n_labels"),
    ],
)
def test_bad_input_names_the_argument(call, name):
    with pytest.raises(ValueError, match=name):
        call()
