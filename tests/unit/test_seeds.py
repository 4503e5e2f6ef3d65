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
    assert seeds.separated(a, b) == expected
    assert seeds.separated(b, a) == -expected


def test_a_level_never_reached_is_later_than_any_reached():
    assert seeds.separated([None, None, None], [30, 40, 50], allow_none=True) == 1
    assert seeds.separated([None, 10, 20], [30, 40, 50], allow_none=True) == 0


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: seeds.separated([1, 2], [3, 4, 5]), "a must hold at least 3 seeds"),
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
