"""Unit tests of lib.boltzmann against closed forms, identities and independent computations."""

import math
import re

import mpmath
import numpy as np
import pytest
import torch

from lib import boltzmann, exact, lemma1


def independent_boltz(a, beta=1.0):
    """Direct formula with Python floats and math.exp, no softmax library."""
    m = max(beta * x for x in a)
    w = [math.exp(beta * x - m) for x in a]
    return sum(x * wi for x, wi in zip(a, w, strict=True)) / sum(w)


def test_two_point_closed_form():
    assert boltzmann.boltz([0.0, 1.0]) == pytest.approx(math.e / (1 + math.e), abs=1e-15)
    # boltz(0, x) = x * sigmoid(x)
    for x in (-3.0, -0.5, 0.7, 4.0):
        assert boltzmann.boltz([0.0, x]) == pytest.approx(x / (1 + math.exp(-x)), rel=1e-14)


def test_matches_independent_formula_float64():
    rng = np.random.default_rng(1)
    a = rng.normal(0, 3, size=(300, 7))
    for beta in (-2.0, 0.3, 1.0, 5.0):
        got = boltzmann.boltz(a, beta=beta)
        want = np.array([independent_boltz(row, beta) for row in a])
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)


def test_matches_mpmath():
    rng = np.random.default_rng(2)
    for row in rng.normal(0, 5, size=(20, 5)):
        mp = exact.boltz_mp(row, beta=0.7, dps=40)
        assert boltzmann.boltz(row, beta=0.7) == pytest.approx(float(mp), rel=1e-13, abs=1e-14)


def test_limits():
    a = np.array([-1.5, 0.25, 2.0, 3.5])
    assert boltzmann.boltz(a, beta=0.0) == pytest.approx(a.mean(), abs=1e-15)
    assert boltzmann.boltz(a, beta=200.0) == pytest.approx(a.max(), abs=1e-12)
    assert boltzmann.boltz(a, beta=-200.0) == pytest.approx(a.min(), abs=1e-12)


def test_identity_lse_minus_entropy():
    rng = np.random.default_rng(3)
    a = torch.as_tensor(rng.normal(0, 3, size=(500, 6)))
    p = torch.softmax(a, -1)
    entropy = -(p * torch.log(p)).sum(-1)
    err = (boltzmann.boltz(a) - (torch.logsumexp(a, -1) - entropy)).abs().max()
    assert err < 1e-12


def test_bounds_hold_and_are_max_minus_log_n():
    rng = np.random.default_rng(4)
    a = rng.normal(0, 4, size=(1000, 9))
    lo, hi = boltzmann.boltz_bounds(a)
    np.testing.assert_allclose(hi, a.max(1))
    np.testing.assert_allclose(lo, a.max(1) - math.log(9))
    b = boltzmann.boltz(a)
    assert np.all(b >= lo) and np.all(b <= hi)


def test_stable_at_extreme_products():
    assert boltzmann.boltz([1e6, -1e6]) == 1e6
    assert boltzmann.boltz(np.array([0.0, 1.0]), beta=1e6) == 1.0
    t = torch.tensor([1e6, 3.0, -1e6], dtype=torch.float32)
    out = boltzmann.boltz(t)
    assert torch.isfinite(out) and out.item() == pytest.approx(1e6)
    assert math.isfinite(boltzmann.boltz(np.array([-1e6, -1e6 + 1.0])))


def test_numpy_and_torch_kinds_and_dtypes():
    a = np.array([[0.0, 1.0], [2.0, -1.0]])
    out_np = boltzmann.boltz(a)
    assert isinstance(out_np, np.ndarray) and out_np.dtype == np.float64 and out_np.shape == (2,)
    assert isinstance(boltzmann.boltz(a[0]), np.floating)
    t64 = torch.tensor(a)
    out_t = boltzmann.boltz(t64)
    assert isinstance(out_t, torch.Tensor) and out_t.dtype == torch.float64
    t32 = t64.float()
    assert boltzmann.boltz(t32).dtype == torch.float32
    np.testing.assert_allclose(out_t.numpy(), out_np)
    assert boltzmann.boltz(torch.tensor([0, 1])).dtype == torch.float64  # ints promoted
    assert boltzmann.boltz([[0, 1]]).shape == (1,)


def test_dim_argument():
    a = np.arange(12.0).reshape(3, 4)
    np.testing.assert_allclose(boltzmann.boltz(a, dim=0), boltzmann.boltz(a.T))


def test_gradient_flows():
    a = torch.tensor([0.0, 1.0], dtype=torch.float64, requires_grad=True)
    boltzmann.boltz(a).backward()
    s = 1 / (1 + math.exp(-1.0))
    # d/da_j boltz = p_j (1 + a_j - boltz)
    b = s
    want = [(1 - s) * (1 + 0 - b), s * (1 + 1 - b)]
    np.testing.assert_allclose(a.grad.numpy(), want, rtol=1e-12)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"a": [0.0, float("nan")]}, "a must be finite"),
        ({"a": [0.0, float("inf")]}, "a must be finite"),
        ({"a": torch.tensor([1.0, float("nan")])}, "a must be finite"),
        ({"a": [0.0, 1.0], "beta": float("inf")}, "beta must be finite"),
        ({"a": [0.0, 1.0], "beta": float("nan")}, "beta must be finite"),
        ({"a": [0.0, 1.0], "beta": "hot"}, "beta must be a real number"),
        ({"a": []}, "must not be empty"),
        ({"a": 3.0}, "at least 1 dimension"),
        ({"a": np.zeros((2, 0))}, "must not be empty"),
        ({"a": [1 + 1j, 2]}, "real"),
        ({"a": [0.0, 1.0], "dim": 2}, "dim must lie in"),
        ({"a": [0.0, 1.0], "dim": 1.5}, "dim must be an int"),
        ({"a": [1e300, 1.0], "beta": 1e10}, "overflows"),
        ({"a": [[0.0, 1.0], [2.0]]}, "real array"),
    ],
)
def test_bad_input_raises_value_error(kwargs, match):
    with pytest.raises(ValueError, match=match):
        boltzmann.boltz(**kwargs)


def test_dboltz_dbeta_is_finite_difference_and_nonnegative():
    rng = np.random.default_rng(5)
    a = torch.as_tensor(rng.normal(0, 2, size=(100, 5)))
    for beta in (-1.0, 0.0, 0.5, 3.0):
        h = 1e-6
        fd = (boltzmann.boltz(a, beta=beta + h) - boltzmann.boltz(a, beta=beta - h)) / (2 * h)
        d = boltzmann.dboltz_dbeta(a, beta=beta)
        assert (fd - d).abs().max() < 1e-7
        assert (d >= 0).all()
    # beta = 0: the plain variance
    assert boltzmann.dboltz_dbeta([1.0, 3.0], beta=0.0) == pytest.approx(1.0)


def test_soft_maxima_relations():
    rng = np.random.default_rng(6)
    a = rng.normal(0, 2, size=(200, 5))
    lse = boltzmann.soft_max_lse(a, beta=2.0)
    np.testing.assert_allclose(lse, np.log(np.exp(2 * a).sum(1)) / 2, rtol=1e-13)
    np.testing.assert_allclose(
        boltzmann.mellowmax(a, omega=2.0), lse - math.log(5) / 2, rtol=1e-12, atol=1e-12
    )
    assert np.all(boltzmann.mellowmax(a) <= a.max(1) + 1e-12)
    assert np.all(boltzmann.mellowmax(a) >= a.mean(1) - 1e-12)
    with pytest.raises(ValueError, match="beta must be > 0"):
        boltzmann.soft_max_lse(a, beta=0.0)
    with pytest.raises(ValueError, match="omega must be > 0"):
        boltzmann.mellowmax(a, omega=-1.0)


def test_linf_lipschitz():
    x = torch.linspace(-10, 10, 20001, dtype=torch.float64)
    pairs = torch.stack([torch.zeros_like(x), x], -1)
    # closed form on (0, x): |d/da1| + |d/da2| with p = sigmoid(x), b = x p
    p = torch.sigmoid(x)
    b = x * p
    closed = ((1 - p) * (1 + 0 - b)).abs() + (p * (1 + x - b)).abs()
    assert boltzmann.linf_lipschitz(boltzmann.boltz, pairs) == pytest.approx(
        closed.max().item(), rel=1e-12
    )
    assert boltzmann.linf_lipschitz(boltzmann.mellowmax, pairs) == pytest.approx(1.0, abs=1e-12)
    # a numpy array or a list of the same points is the same input (read as float64)
    assert boltzmann.linf_lipschitz(boltzmann.boltz, pairs.numpy()) == pytest.approx(
        closed.max().item(), rel=1e-12
    )
    with pytest.raises(ValueError, match=r"a must have shape \(m, n\)"):
        boltzmann.linf_lipschitz(boltzmann.boltz, np.zeros((2, 2, 2)))
    with pytest.raises(ValueError, match="op must return"):
        boltzmann.linf_lipschitz(lambda t: t.sum(), pairs)


def test_mellowmax_small_omega_tends_to_mean():
    for omega in (1e-6, 1e-12, 1e-15, 1e-17):
        assert boltzmann.mellowmax([0.0, 1.0], omega=omega) == pytest.approx(0.5, abs=1e-6)
    assert boltzmann.mellowmax(torch.tensor([0.0, 1.0]), omega=1e-6).item() == pytest.approx(
        0.5, abs=1e-4
    )
    with pytest.raises(ValueError, match="too small"):
        boltzmann.mellowmax([0.0, 1.0], omega=1e-320)  # omega * (0 - 1) is subnormal
    with pytest.raises(ValueError, match="too small"):
        boltzmann.mellowmax(torch.tensor([0.0, 1.0]), omega=1e-46)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: boltzmann.soft_max_lse([0.0, 1.0], beta=1e-320), "overflows"),
        (lambda: boltzmann.dboltz_dbeta([1e200, -1e200], beta=0.0), "overflows"),
        (lambda: boltzmann.boltz([0.0, 1.0], beta=10**400), "beta must be finite"),
        (lambda: boltzmann.boltz(torch.zeros(0, 3)), "must not be empty"),
        (lambda: lemma1.lattice_vectors(2, 2, 5e-324), "distinct finite points"),
        (lambda: lemma1.lattice_vectors(1, 5, 1e308), "distinct finite points"),
        (lambda: lemma1.lemma1_digits(1e308), "MAX_DPS"),
        (lambda: boltzmann.linf_lipschitz(None, torch.zeros(2, 2)), "op must be callable"),
        (lambda: boltzmann.linf_lipschitz(boltzmann.boltz, torch.zeros(0, 3)), "must not be empty"),
        (
            lambda: boltzmann.linf_lipschitz(lambda x: torch.zeros(x.shape[0]), torch.zeros(2, 2)),
            "differentiabl",
        ),
        (
            lambda: boltzmann.linf_lipschitz(lambda x: x.sqrt().sum(-1), -torch.ones(2, 2)),
            "not finite",
        ),
    ],
)
def test_overflow_and_degenerate_input_raise(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_low_precision_and_numpy_int_dim():
    a = torch.tensor([0.0, 1.0], dtype=torch.bfloat16)
    assert boltzmann.boltz(a).dtype == torch.bfloat16
    c = lemma1.lemma1_check(torch.tensor([[0.0, 8.0], [16.0, 24.0]], dtype=torch.bfloat16))
    assert c.conclusion
    assert boltzmann.boltz(np.ones((2, 3)), dim=np.int64(0)).shape == (3,)
    assert lemma1.lemma1_bound(3, 1e308, log10=True) > -math.inf


TIED_VALUES = [0.1, 0.3, -0.7, 1 / 3, 2.2, 1e-3, -12.34, 123.456, 0.0, 5e-324, 1e300]


@pytest.mark.parametrize("v", TIED_VALUES)
def test_bounds_hold_exactly_on_tied_inputs(v):
    # n equal entries: boltz, mellowmax and the mean are exactly v (closed form); the bounds
    # min(a) <= boltz <= max(a) pin the float64 result to v as well
    for n in range(1, 13):
        a = np.full(n, v)
        for beta in (1.0, 0.5, 3.0, -2.0, 0.0):
            assert boltzmann.boltz(a, beta=beta) == v
        assert boltzmann.mellowmax(a, 0.7) == v
        lse = boltzmann.soft_max_lse(a)
        assert v <= lse <= v + math.log(n)
    assert boltzmann.boltz(np.full(5, 0.1)) == 0.1  # summed naively: 0.10000000000000002
    t = torch.full((4, 6), 0.1, dtype=torch.float32)
    assert torch.equal(boltzmann.boltz(t), torch.full((4,), 0.1, dtype=torch.float32))


def test_bounds_hold_in_floating_point_on_random_and_tied_rows():
    rng = np.random.default_rng(11)
    for _ in range(40):
        n = int(rng.integers(1, 9))
        a = rng.choice(rng.normal(0, 10 ** rng.uniform(-3, 3), size=3), size=(200, n))  # many ties
        for beta in (1.0, float(rng.uniform(0.01, 50)), -float(rng.uniform(0.01, 50))):
            b = boltzmann.boltz(a, beta=beta)
            assert np.all(a.min(1) <= b) and np.all(b <= a.max(1))
            if beta == 1.0:
                lower, upper = boltzmann.boltz_bounds(a)
                assert np.all(lower <= b) and np.all(b <= upper)
            elif beta > 0:
                assert np.all(a.max(1) - math.log(n) / beta <= b)
            else:
                assert np.all(b <= a.min(1) + math.log(n) / -beta)
            if beta > 0:
                lse = boltzmann.soft_max_lse(a, beta=beta)
                assert np.all(a.max(1) <= lse) and np.all(lse <= a.max(1) + math.log(n) / beta)
                mm = boltzmann.mellowmax(a, beta)
                assert np.all(np.minimum(a.mean(1), a.max(1)) <= mm) and np.all(mm <= a.max(1))


def test_clamping_keeps_values_inside_the_bounds_and_the_gradient():
    # rows inside the bounds are returned exactly as the formula computes them
    rng = np.random.default_rng(12)
    a = rng.normal(0, 3, size=(500, 7))
    t = torch.from_numpy(a)
    raw = (t * torch.softmax(t, dim=-1)).sum(-1)
    inside = (raw <= t.amax(-1)) & (raw >= t.amax(-1) - math.log(7))
    assert torch.equal(torch.from_numpy(boltzmann.boltz(a))[inside], raw[inside])
    # at a tie the gradient is the formula's, p_i (1 + beta (a_i - boltz)) = 1/n, not amax's
    x = torch.full((3, 5), 0.1, dtype=torch.float64, requires_grad=True)
    boltzmann.boltz(x).sum().backward()
    torch.testing.assert_close(
        x.grad, torch.full((3, 5), 0.2, dtype=torch.float64), rtol=1e-15, atol=0
    )


def test_boltz_mp_respects_the_bounds_at_its_precision():
    for v in ("0.1", "0.3", "-0.7", 0.1):
        with mpmath.workdps(20):
            assert exact.boltz_mp([v] * 7, dps=20) == mpmath.mpf(v)
    with mpmath.workdps(30):  # mpmath reference: the bounds hold on random tied rows as well
        rng = np.random.default_rng(13)
        for _ in range(50):
            a = list(rng.choice([0.1, 0.7, -1.3], size=int(rng.integers(2, 7))))
            b = exact.boltz_mp(a, dps=30)
            assert min(a) <= b <= max(a) and b >= max(a) - mpmath.log(len(a))


@pytest.mark.parametrize(
    "call",
    [
        lambda: boltzmann.boltz(np.array([True, False])),
        lambda: boltzmann.boltz(torch.tensor([True, False])),
        lambda: boltzmann.boltz(np.array([1.0, 2.0j])),
        lambda: boltzmann.boltz_bounds(torch.tensor([1.0, 2.0j])),
        lambda: boltzmann.mellowmax([True, True]),
        lambda: lemma1.lemma1_check(np.ones((2, 2), dtype=bool)),
    ],
)
def test_bool_and_complex_arrays_are_refused(call):
    with pytest.raises(ValueError, match=r"a must be|vectors must be"):
        call()


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: boltzmann.boltz([0.0, 1.0], beta=True), "beta must be a real number, got True"),
        (lambda: boltzmann.boltz([0.0, 1.0], beta=None), "beta must be a real number, got None"),
        (lambda: boltzmann.boltz([0.0, 1.0], beta=1j), "beta must be a real number, got 1j"),
        (lambda: lemma1.lemma1_bound(np.True_, 1.0), "n must be an integer, got np.True_"),
    ],
)
def test_scalars_follow_one_rule(call, match):
    with pytest.raises(ValueError, match=re.escape(match)):
        call()


def test_expansion_ratio_against_closed_forms():
    # boltz(0, x) = x sigmoid(x): the pair (0, 1.5), (0, 1.7) moves by 0.2 in l_inf
    a = torch.tensor([[0.0, 1.5]], dtype=torch.float64)
    b = torch.tensor([[0.0, 1.7]], dtype=torch.float64)
    want = abs(1.7 / (1 + math.exp(-1.7)) - 1.5 / (1 + math.exp(-1.5))) / 0.2
    assert boltzmann.expansion_ratio(boltzmann.boltz, a, b) == pytest.approx(want, rel=1e-12)
    assert want > 1  # an expansion: the Boltzmann operator is not a non-expansion
    # shifting every entry by h moves log-sum-exp by exactly h: ratio 1, the non-expansion limit
    rng = np.random.default_rng(3)
    A = torch.as_tensor(rng.normal(0, 3, size=(500, 4)))
    assert boltzmann.expansion_ratio(boltzmann.soft_max_lse, A, A + 0.3) == pytest.approx(
        1.0, abs=1e-12
    )
    S = A + torch.as_tensor(rng.choice([-0.2, 0.2], size=(500, 4)))
    assert boltzmann.expansion_ratio(boltzmann.soft_max_lse, A, S) <= 1 + 1e-12
    assert boltzmann.expansion_ratio(boltzmann.mellowmax, A, S) <= 1 + 1e-12
    # the largest row is reported: a second, worse row wins
    two = torch.cat([a, torch.tensor([[0.0, -1.5]], dtype=torch.float64)])
    moved = torch.cat([b, torch.tensor([[0.0, -1.3]], dtype=torch.float64)])
    rows = [
        boltzmann.expansion_ratio(boltzmann.boltz, two[i : i + 1], moved[i : i + 1])
        for i in range(2)
    ]
    assert boltzmann.expansion_ratio(boltzmann.boltz, two, moved) == pytest.approx(max(rows))


@pytest.mark.parametrize(
    "a, b, match",
    [
        (np.zeros((2, 2, 1)), torch.zeros(2, 2), r"a must have shape \(m, n\)"),
        (np.zeros((0, 2)), torch.zeros(2, 2), "a must not be empty"),
        (torch.zeros(2, 2), torch.zeros(2, 3), "same shape"),
        (torch.zeros(2, 2), torch.zeros(2, 2), "row 0 of a equals"),
        (torch.zeros(2, 2), torch.full((2, 2), float("nan")), "b must be finite"),
    ],
)
def test_expansion_ratio_refuses_bad_input(a, b, match):
    with pytest.raises(ValueError, match=match):
        boltzmann.expansion_ratio(boltzmann.boltz, a, b)


def test_expansion_ratio_of_rows_whose_differences_overflow():
    # a - b overflows float64 (3.4e308): the ratio of the halves is the ratio, 0.5 for boltz
    # here (boltz([1.7e308, 0]) = 1.7e308 and boltz([-1.7e308, 0]) = 0 at beta = 1)
    a = np.array([[1.7e308, 0.0]])
    b = np.array([[-1.7e308, 0.0]])
    assert boltzmann.expansion_ratio(boltzmann.boltz, a, b) == pytest.approx(0.5, rel=1e-15)
    assert boltzmann.expansion_ratio(boltzmann.boltz, a.tolist(), b.tolist()) == pytest.approx(0.5)


def test_dscaled_boltz_dbeta_is_the_slope_of_boltz_of_beta_a():
    # at beta = 0 the slope of boltz(beta a) is the mean of a
    a = np.array([-2.0, 1.0, 0.5])
    assert boltzmann.dscaled_boltz_dbeta(a, 0.0) == pytest.approx(a.mean(), abs=1e-15)
    # against an independent central difference of boltz(beta a) in mpmath
    for beta in (0.1, 0.7, 2.0, -1.3):
        with mpmath.workdps(50):
            h = mpmath.mpf("1e-20")
            slope = (
                exact.boltz_mp([(beta + h) * mpmath.mpf(x) for x in a], dps=50)
                - exact.boltz_mp([(beta - h) * mpmath.mpf(x) for x in a], dps=50)
            ) / (2 * h)
        got = boltzmann.dscaled_boltz_dbeta(a, beta)
        assert got == pytest.approx(float(slope), rel=1e-13, abs=1e-14)
    # the dip of Chapter 1's exercise: a negative mean makes the slope negative at beta = 0,
    # positive later; a non-negative mean keeps it positive
    dip = np.array([-2.0, 1.0])
    assert boltzmann.dscaled_boltz_dbeta(dip, 0.0) < 0 < boltzmann.dscaled_boltz_dbeta(dip, 1.0)
    # rows of a tensor, reduced along dim, dtype kept
    t = torch.tensor([[0.0, 1.0], [3.0, -1.0]], dtype=torch.float32)
    out = boltzmann.dscaled_boltz_dbeta(t, 0.5, dim=1)
    assert out.dtype == torch.float32 and out.shape == (2,)
    with pytest.raises(ValueError, match="beta must be finite"):
        boltzmann.dscaled_boltz_dbeta(a, math.inf)
