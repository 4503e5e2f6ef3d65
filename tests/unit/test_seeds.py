"""lib.seeds: bands of seeds and orders only where the ranges do not overlap."""

import math

import pytest

from lib import seeds


def test_band_is_the_median_and_range():
    assert seeds.band([3, 1, 2]) == (2.0, 1.0, 3.0)
    assert seeds.band([1, 2, 3, 10]) == (2.5, 1.0, 10.0)
    assert seeds.band([5, None, 7], allow_none=True) == (7.0, 5.0, math.inf)


@pytest.mark.parametrize(
    "a, b, expected",
    [
        ([0.99, 0.995, 0.992], [0.98, 0.985, 0.989], 1),
        ([10, 12, 11], [20, 22, 30], -1),
        ([1, 2, 3], [3, 4, 5], 0),  # touching ranges: no order
        ([1, 5, 3], [2, 4, 6], 0),
    ],
)
def test_separated_states_an_order_only_for_disjoint_ranges(a, b, expected):
    assert seeds.separated(a, b, min_seeds=3) == expected
    assert seeds.separated(b, a, min_seeds=3) == -expected


def test_a_level_never_reached_is_later_than_any_reached():
    assert seeds.separated([None, None, None], [30, 40, 50], allow_none=True, min_seeds=3) == 1
    assert seeds.separated([None, 10, 20], [30, 40, 50], allow_none=True, min_seeds=3) == 0


def test_order_p_value_counts_the_orderings():
    """1 / C(n_a + n_b, n_a), checked against a count of every assignment of ranks: the share of
    the ways to choose which ranks of 1..n_a+n_b go to a in which a holds all the top ones."""
    import itertools

    for n_a, n_b in ((1, 1), (3, 3), (5, 5), (2, 4), (4, 3)):
        splits = list(itertools.combinations(range(n_a + n_b), n_a))
        top = sum(set(c) == set(range(n_b, n_a + n_b)) for c in splits)
        assert seeds.order_p_value(n_a, n_b) == pytest.approx(top / len(splits), rel=1e-15)
    assert seeds.order_p_value(5, 5) == 1 / 252 and seeds.order_p_value(3, 3) == 1 / 20
    assert seeds.MIN_SEEDS == 5  # the rule the chapters state, p = 1/252 one-sided
    for bad in (0, -1, 2.5, True, 10**7):
        with pytest.raises(ValueError, match="n_a"):
            seeds.order_p_value(bad, 3)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: seeds.separated([1, 2, 3, 4], [3, 4, 5, 6, 7]), "a must hold at least 5 seeds"),
        (lambda: seeds.band([]), "at least one value"),
        (lambda: seeds.band([1, math.nan]), "NaN"),
        (lambda: seeds.band([1, None]), "real numbers"),
        (lambda: seeds.band(5), "sequence of numbers"),
        (lambda: seeds.band([True, 2]), "real numbers"),
    ],
)
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_band_text():
    assert seeds.band_text([0.5, 0.25, 0.75], ".2f") == "0.50 (0.25–0.75, 3 seeds)"
    assert seeds.band_text([4.0, 4.0, 4.0], ".0f") == "4 (all 3 seeds)"
    assert seeds.band_text([53], ".0f") == "53 (1 seed)"
    assert seeds.band_text((x for x in [0.5, 0.25, 0.75]), ".2f") == "0.50 (0.25–0.75, 3 seeds)"
    assert seeds.band_text([7, None, 9], ".0f", allow_none=True) == "9 (7–never, 3 seeds)"


def test_reached_band_text_writes_whole_epochs_and_never():
    assert seeds.reached_band_text([412, None, 388]) == "412 (388–never, 3 seeds)"
    assert seeds.reached_band_text([7, 7, 7]) == "7 (all 3 seeds)"
    assert seeds.reached_band_text([None]) == "never (1 seed)"
    # the same text as band_text with whole epochs and None allowed
    assert seeds.reached_band_text([10, 20, 31, None]) == seeds.band_text(
        [10, 20, 31, None], ".0f", allow_none=True
    )
    with pytest.raises(ValueError, match="^epochs must hold real numbers"):
        seeds.reached_band_text([1, "2"])
    with pytest.raises(ValueError, match="^epochs must hold at least one value"):
        seeds.reached_band_text([])
