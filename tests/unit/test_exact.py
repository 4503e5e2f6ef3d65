"""lib.exact: mpmath evaluation of the Boltzmann operator and minimum gaps."""

import math

import mpmath
import numpy as np
import pytest
import torch

from lib import exact


def test_boltz_mp_closed_form_at_high_precision():
    with mpmath.workdps(60):
        want = mpmath.e / (1 + mpmath.e)
        got = exact.boltz_mp([0, 1], dps=60)
        assert abs(got - want) < mpmath.mpf("1e-58")


def test_boltz_mp_reads_decimal_strings_exactly():
    # "0.1" as a string is the decimal 0.1; as a float it is 0.1000000000000000055...
    with mpmath.workdps(50):
        s = exact.boltz_mp(["0.1"], dps=50)
        f = exact.boltz_mp([0.1], dps=50)
        assert s == mpmath.mpf("0.1")
        assert f == mpmath.mpf(0.1) and f != s


def test_boltz_mp_beta_and_inputs():
    a = np.array([-1.0, 0.5, 2.0])
    for beta in (0, "0.5", 3):
        want = sum(x * math.exp(float(beta) * x) for x in a) / sum(
            math.exp(float(beta) * x) for x in a
        )
        assert float(exact.boltz_mp(a, beta=beta)) == pytest.approx(want, rel=1e-14)
    assert float(exact.boltz_mp(torch.tensor([0.0, 1.0]))) == pytest.approx(math.e / (1 + math.e))
    # huge beta * a: no overflow in mpmath
    assert float(exact.boltz_mp([0, 1], beta=1e8)) == pytest.approx(1.0)


@pytest.mark.parametrize(
    "args, match",
    [
        (([],), "at least one entry"),
        (("01",), "1-D sequence"),
        ((5.0,), "1-D sequence"),
        ((np.zeros((2, 2)),), "1-D"),
        (([0.0, float("nan")],), r"a\[1\] must be finite"),
        (([0.0, "x"],), r"a\[1\] must be a real number"),
        (([0.0, 1.0], float("inf")), "beta must be finite"),
        (([0.0, 1.0], 1, 10), "dps must be >= 15"),
    ],
)
def test_boltz_mp_bad_input(args, match):
    with pytest.raises(ValueError, match=match):
        exact.boltz_mp(*args)


def test_min_gap_distinct_and_collisions():
    assert exact.min_gap([3.0, 1.0, 1.5, 10.0]) == mpmath.mpf("0.5")
    assert exact.min_gap([1.0, 1.0, 4.0]) == 3  # equal entries skipped
    assert exact.min_gap([1.0, 1.0, 4.0], distinct=False) == 0
    assert exact.min_gap([2.0, 2.0]) == mpmath.inf
    assert exact.min_gap(np.array([0.0, 0.25, 1.0])) == mpmath.mpf("0.25")


def test_min_gap_keeps_digits_below_float64():
    with mpmath.workdps(80):
        a = mpmath.mpf(1)
        b = a + mpmath.mpf("1e-60")
    gap = exact.min_gap([a, b, mpmath.mpf(3)], dps=80)
    with mpmath.workdps(80):
        assert abs(gap - mpmath.mpf("1e-60")) < mpmath.mpf("1e-75")


@pytest.mark.parametrize(
    "values, match",
    [([1.0], "at least two"), ([1.0, float("inf")], "finite"), ([1.0, None], "real number")],
)
def test_min_gap_bad_input(values, match):
    with pytest.raises(ValueError, match=match):
        exact.min_gap(values)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: exact.min_gap("12"), "list, tuple or array"),
        (lambda: exact.min_gap(None), "list, tuple or array"),
        (lambda: exact.min_gap({1: 0, 3: 0}), "list, tuple or array"),
        (lambda: exact.boltz_mp({1.0: 0, 5.0: 0}), "list, tuple or array"),
        (lambda: exact.boltz_mp([0.0, 1.0], dps=10**20), "dps must be <="),
    ],
)
def test_container_and_precision_limits(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_bfloat16_and_fractions():
    from fractions import Fraction

    assert float(exact.boltz_mp(torch.tensor([0.0, 1.0], dtype=torch.bfloat16))) == pytest.approx(
        math.e / (1 + math.e)
    )
    with mpmath.workdps(30):
        assert exact.to_mpf("x", Fraction(1, 3)) == mpmath.mpf(1) / 3


def test_project_mp_against_hand_computed_values():
    with mpmath.workdps(40):
        rows = [[mpmath.mpf(1) / 3, 2.0], [0.5, "0.25"]]
        got = exact.project_mp(rows, [3.0, 0.5])
        assert got[0] == 1 + mpmath.mpf(1) and got[1] == mpmath.mpf("1.625")


@pytest.mark.parametrize(
    "rows, v, match",
    [
        ([[1.0, 2.0]], [1.0, float("nan")], "v must be finite"),
        ([[1.0, 2.0]], None, "v must be a real array"),
        ([[1.0, 2.0]], [1.0, 1j], "v must be a real array, not complex"),
        ([[1.0, 2.0]], np.array([True, False]), "v must be a real array, not bool"),
        ([[1.0, 2.0]], [[1.0, 2.0]], "v must be 1-D"),
        ([[1.0, float("nan")]], [1.0, 1.0], r"rows\[0\]\[1\] must be finite"),
        ([[1.0, None]], [1.0, 1.0], r"rows\[0\]\[1\] must be a real number"),
        ([[1.0, 2j]], [1.0, 1.0], r"rows\[0\]\[1\] must be a real number"),
        ([[1.0, True]], [1.0, 1.0], r"rows\[0\]\[1\] must be a real number"),
        ([[1.0, mpmath.inf]], [1.0, 1.0], r"rows\[0\]\[1\] must be finite"),
        ([[1.0]], [1.0, 1.0], "length 2"),
        (None, [1.0], "rows must be a sequence"),
    ],
)
def test_project_mp_refuses_what_is_not_a_finite_real(rows, v, match):
    with mpmath.workdps(30), pytest.raises(ValueError, match=match):
        exact.project_mp(rows, v)


def test_attention_mp_refuses_bool_and_complex_tokens():
    from lib.layers import SelfAttention

    layer = SelfAttention(2)
    for X in (
        np.ones((3, 2), dtype=bool),
        np.ones((3, 2)) * 1j,
        torch.ones(3, 2, dtype=torch.bool),
    ):
        with pytest.raises(ValueError, match="X must be"):
            exact.attention_mp(X, layer, 20)
    with pytest.raises(ValueError, match="X must have at least 2"):
        exact.attention_mp(np.ones(2), layer, 20)


def test_min_distance_checks_the_number_of_pairs(monkeypatch):
    pts = [[0.0], [3.0], [1.0], [7.5]]
    assert exact.min_distance(pts, 20) == 1  # hand computed
    monkeypatch.setattr(exact, "MAX_PAIRS", 6)  # 4 points: exactly 6 pairs
    assert exact.min_distance(pts, 20) == 1
    with pytest.raises(ValueError, match="MAX_PAIRS = 6"):
        exact.min_distance(pts + [[9.0]], 20)


def test_lse_mp_closed_form_and_no_overflow():
    with mpmath.workdps(60):
        assert abs(exact.lse_mp([0, 1], dps=60) - mpmath.log(1 + mpmath.e)) < mpmath.mpf("1e-58")
        # log(e^1000 + e^1000) = 1000 + log 2, where float64 exp overflows
        assert abs(exact.lse_mp([1000, 1000], dps=60) - (1000 + mpmath.log(2))) < mpmath.mpf(
            "1e-55"
        )
    a = np.array([-1.0, 0.5, 2.0])
    assert float(exact.lse_mp(a)) == pytest.approx(math.log(sum(math.exp(x) for x in a)), rel=1e-15)
    with pytest.raises(ValueError, match="at least one entry"):
        exact.lse_mp([])
    with pytest.raises(ValueError, match="dps must be >= 15"):
        exact.lse_mp([1.0], dps=5)


def test_attention_mp_rows_are_the_first_rows_of_the_full_output():
    from lib.layers import SelfAttention

    layer = SelfAttention(3, head_dim=2, seed=9)
    X = np.random.default_rng(1).normal(size=(2, 5, 3))
    full = exact.attention_mp(X, layer, 40)
    part = exact.attention_mp(X, layer, 40, rows=2)
    assert [len(out) for out in part] == [2, 2]
    assert all(p == f[:2] for p, f in zip(part, full, strict=True))
    with pytest.raises(ValueError, match="rows must be <= 5"):
        exact.attention_mp(X, layer, 40, rows=6)
    with pytest.raises(ValueError, match="rows must be >= 1"):
        exact.attention_mp(X, layer, 40, rows=0)


def test_softmax_entropy_mp_closed_forms():
    with mpmath.workdps(60):
        # uniform weights: H = log n exactly
        assert abs(exact.softmax_entropy_mp([2.5] * 5, dps=60) - mpmath.log(5)) < mpmath.mpf(
            "1e-58"
        )
        # two entries (0, x): p = (1, e^x) / (1 + e^x), H = log(1 + e^x) - x e^x / (1 + e^x)
        x = mpmath.mpf(3)
        want = mpmath.log(1 + mpmath.e**x) - x * mpmath.e**x / (1 + mpmath.e**x)
        assert abs(exact.softmax_entropy_mp([0, 3], dps=60) - want) < mpmath.mpf("1e-58")
    assert exact.softmax_entropy_mp([7.0]) == 0
    # no overflow far from the origin, and a weight that underflows float64 still counts
    assert float(exact.softmax_entropy_mp([1e6, 1e6])) == pytest.approx(math.log(2), rel=1e-15)
    tiny = exact.softmax_entropy_mp([0.0, -800.0], dps=50)
    assert 0 < tiny < mpmath.mpf("1e-340")


def test_softmax_entropy_mp_is_the_identity_other_side():
    # LSE - H = boltz, each side computed on its own (the identity behind Chapter 1's C1)
    rng = np.random.default_rng(11)
    for a in rng.normal(0, 3, size=(20, 6)):
        with mpmath.workdps(50):
            gap = exact.lse_mp(a) - exact.softmax_entropy_mp(a) - exact.boltz_mp(a)
        assert abs(gap) < mpmath.mpf("1e-45")


@pytest.mark.parametrize(
    ("a", "dps", "match"),
    [([], 50, "at least one entry"), ([1.0, float("nan")], 50, r"a\[1\]"), ([1.0], 10, "dps")],
)
def test_softmax_entropy_mp_bad_input(a, dps, match):
    with pytest.raises(ValueError, match=match):
        exact.softmax_entropy_mp(a, dps=dps)


def test_boltz_pair_mp_is_the_two_point_formula():
    with mpmath.workdps(60):
        assert abs(exact.boltz_pair_mp(0, 1) - mpmath.e / (1 + mpmath.e)) < mpmath.mpf("1e-58")
        # the same value as the general operator, written independently
        for x, y in (("0.2", "0.9"), (-3.0, 2.5), (1e3, -1e3)):
            want = exact.boltz_mp([x, y], dps=60)
            assert abs(exact.boltz_pair_mp(x, y, dps=60) - want) < mpmath.mpf("1e-55") * max(
                1, abs(mpmath.mpf(x)), abs(mpmath.mpf(y))
            )
        # symmetric, and the decimal string is read at 60 digits
        assert exact.boltz_pair_mp("0.2", 1) == exact.boltz_pair_mp(1, "0.2")
    with pytest.raises(ValueError, match="y must be finite"):
        exact.boltz_pair_mp(0.0, math.nan)
    with pytest.raises(ValueError, match="dps must be >= 15"):
        exact.boltz_pair_mp(0.0, 1.0, dps=10)
