"""The domain table (tests/domains.py): every public maths function and class of lib, each real
argument of a valid call moved to the edges of float64 (scaled by 1e-300 to 1e300, shifted,
negated, 1-ulp pairs, ties) and given in every dtype and layout that holds the same numbers.
Each call returns a finite result (the same one, for the same numbers) or a ValueError naming
the argument, within a second; and every exact scaling law of the mathematics holds to the
bit at scales 2^-990 to 2^990."""

from __future__ import annotations

import math

import domains as D
import numpy as np
import pytest
import torch

from lib._validate import blame


@pytest.fixture(scope="module")
def table():
    return D.table()


def test_domain_table_has_no_defects(table):
    counts = table.outcome.value_counts().to_dict()
    print("\ndomain table:", len(table), "calls;", counts)
    defects = table[table.outcome.isin(D.DEFECTS)]
    assert defects.empty, defects.to_string()
    # the table reaches every tabled function, and most extreme values are answered, not refused
    assert table.function.nunique() >= 90
    assert counts["accepted"] > 1000 and counts["right"] > 500


def test_every_scaling_law_holds_at_the_edges_of_float64():
    laws = D.law_table()
    broken = laws[laws.outcome == "broken"]
    assert broken.empty, broken.to_string()
    # a law is skipped only where its expected value or a scaled argument leaves float64, and
    # refused only with a ValueError naming a scaled argument (checked by law_outcome)
    assert (laws.outcome == "holds").sum() >= 0.9 * len(laws)


def test_a_law_can_break():
    # the law's comparison sees a function that rounds its squares below the normal range
    law = ({"x": 1}, 1)
    assert D.law_outcome(_naive_norm, {"x": [3.0, 4.0]}, law, 2.0**500)[0] == "holds"
    assert D.law_outcome(_naive_norm, {"x": [3.0, 4.0]}, law, 2.0**-990)[0] == "broken"
    assert D.law_outcome(_scaled_norm, {"x": [3.0, 4.0]}, law, 2.0**-990)[0] == "holds"


def _naive_norm(x):
    x = np.asarray(x, dtype=float)
    return float(np.sqrt((x * x).sum()))


def _scaled_norm(x):
    return float(np.hypot.reduce(np.asarray(x, dtype=float)))


def test_the_classifier_sees_infinity_and_refused_valid_values():
    def overflows(x):
        return np.asarray(x, dtype=float) * 1e300

    def float64_only(x):
        if not (isinstance(x, np.ndarray) and x.dtype == np.float64):
            raise ValueError(f"x must be a float64 array, got {x!r}")
        return x

    assert D.classify("f", overflows, {"x": [1.0]}, "x", np.array([1e10]))[0] == "inf"
    assert D.classify("f", overflows, {"x": [1.0]}, "x", np.array([1.0]))[0] == "accepted"
    want = np.array([1.0])
    same = np.array([1.0], dtype=np.float32)
    assert D.classify("f", float64_only, {"x": want}, "x", same, want, True)[0] == "refused valid"


def test_extreme_and_same_values():
    labels = dict(D.extreme_values(np.array([1.0, 2.0])))
    assert labels["times 1e+300"].tolist() == [1e300, 2e300]
    assert labels["a 1-ulp pair"][1] == np.nextafter(1.0, 2.0)
    assert labels["all tied"].tolist() == [1.0, 1.0]
    assert dict(D.extreme_values(5.0))["times 1e+300"] == 5e300
    assert "times 1e+300" not in dict(D.extreme_values(1e10))  # 1e310 is not a float64
    same = dict(D.same_values([1.0, 0.5]))
    assert set(same) == {"as float32", "as float16"}  # 0.5 is not an integer
    assert dict(D.same_values(3.0))["as a Python int"] == 3
    assert D.same_values(torch.tensor([1.0])) == []  # tensors: bad_inputs' layouts
    assert D.has_inf([1.0, (np.array([math.inf]),)]) and not D.has_inf([1.0, 2.0])


def test_blame_names_the_callers_argument():
    with pytest.raises(ValueError, match=r"^X: vocab must hold two tokens$"):
        with blame("X"):
            raise ValueError("vocab must hold two tokens")
    with pytest.raises(ValueError, match=r"^X must hold two tokens$"):  # named already: kept
        with blame("X"):
            raise ValueError("X must hold two tokens")
    with pytest.raises(ValueError, match=r"^spacings, base: the ids of Xs overflow$"):
        with blame("spacings", "base"):
            raise ValueError("the ids of Xs overflow")  # Xs is not X
    with pytest.raises(TypeError):  # other exceptions pass untouched
        with blame("X"):
            raise TypeError("not a ValueError")


def _law_examples(max_examples: int):
    """Derandomised hypothesis draws of a law of :data:`domains.LAWS` and a power of two from
    2^-1000 to 2^1000 (the table above tries four)."""
    from hypothesis import given, settings
    from hypothesis import strategies as st
    from oracles import derandomized_settings

    baselines = D.B.baselines()

    @settings(derandomized_settings(), max_examples=max_examples)
    @given(st.sampled_from(sorted(D.LAWS)), st.integers(-1000, 1000))
    def check(name, k):
        fn, kwargs = baselines[name]
        outcome, detail = D.law_outcome(fn, kwargs, D.LAWS[name], 2.0**k)
        assert outcome != "broken", f"{name} at 2^{k}: {detail}"

    return check


def test_scaling_laws_at_drawn_scales_quick():
    _law_examples(150)()


@pytest.mark.slow
def test_scaling_laws_at_drawn_scales_wide():
    _law_examples(20000)()
