"""lib's contract at the edges of float64: the right answer, to a tolerance derived from the unit
roundoff, for inputs from 1e-300 to 1e300, or a ValueError naming the argument.

Each property compares a float64 function of ``lib`` with the same quantity evaluated in mpmath
(60 digits) or in exact rational arithmetic, on inputs drawn by hypothesis (derandomised) across
the float64 range: offsets and scales up to 1e300 and down to 1e-300, 1-ulp neighbours, exponents
of ``p`` up to 1e6. The kinds tested here are those the fourth probe of lib found: variances that
cancel far from the origin, probabilities formed as ``1 - (1 - q)^k``, squares of distances that
underflow or overflow, powers of errors that underflow or overflow, midpoints and medians whose
sums overflow, and refusals that name an argument the caller never passed. The properties of
one module live in its own test file (``1 - (1 - q)^k`` in ``test_quantize.py``, the powers of
errors in ``test_metrics.py``, the knots' midpoints in ``test_interpolation.py``, Lemma 1's
digits in ``test_lemma1.py``); this file keeps those that span modules or whose module has no
test file of its own here.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

import mpmath
import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from oracles import U, derandomized_settings

from lib import (
    atlas,
    boltzmann,
    context_ids,
    contextual,
    cross,
    exact,
    interpolation,
    layers,
    lemma1,
    lookup,
    maxaffine,
    memorization,
    quantize,
    seeds,
    separation,
    targets,
)

SETTINGS = derandomized_settings()
SCALES = [1e-300, 1e-200, 1e-160, 1e-12, 1.0, 1e12, 1e150, 1e160, 1e200, 1e300]


# --- the variance of the Boltzmann weights (dboltz_dbeta) far from the origin --------------


@st.composite
def far_vectors(draw):
    """``offset (1 + rel u_i)`` for an offset up to 1e300 in size, relative spread down to 1 ulp."""
    n = draw(st.integers(2, 6))
    offset = draw(st.sampled_from([0.0, 1.0, -3.0, 1e15, -1e15, 1e100, -1e200, 1e300]))
    rel = draw(st.sampled_from([U, 1e-12, 1e-6, 1e-2, 1.0]))
    u = np.array(draw(st.lists(st.floats(-1, 1), min_size=n, max_size=n)))
    if offset == 0.0:
        return rel * u * draw(st.sampled_from([1e-300, 1e-150, 1.0, 1e150]))
    return offset * (1 + rel * u)


def _variance_mp(a: np.ndarray, beta: float) -> tuple[mpmath.mpf, mpmath.mpf]:
    """The exact variance of ``a`` under softmax(beta a), and the rounding scale of its float64
    evaluation: ``sum_i p_i (n + |beta (a_i - a_k)|) (a_i - a_k)^2`` with ``k`` the heaviest
    entry. Each weight ``exp(z_i - z_k)`` carries the rounding of its exponent, ``|z_i - z_k| u``
    relative, and the normalisation about ``n u``; each centred entry ``a_i - a_k`` rounds once."""
    with mpmath.workdps(700):  # every difference of two float64 numbers is exact at 700 digits
        x = [mpmath.mpf(float(v)) for v in a]
        z = [mpmath.mpf(beta) * v for v in x]
        top = max(z)
        w = [mpmath.exp(v - top) for v in z]
        total = mpmath.fsum(w)
        p = [v / total for v in w]
        k = int(np.argmax([float(v) for v in z]))
        y = [xi - x[k] for xi in x]
        mean = mpmath.fsum(pi * yi for pi, yi in zip(p, y, strict=True))
        var = mpmath.fsum(pi * (yi - mean) ** 2 for pi, yi in zip(p, y, strict=True))
        scale = mpmath.fsum(
            pi * (len(a) + abs(zi - z[k])) * (xi - x[k]) ** 2
            for pi, zi, xi in zip(p, z, x, strict=True)
        )
        return var, scale


@SETTINGS
@given(
    a=far_vectors(),
    beta=st.sampled_from([2.0**-40, 2.0**-10, 0.3, 0.5, 1.0, 1 / 3, 4.0, 7.0, -2.5]),
)
def test_dboltz_dbeta_is_the_variance_wherever_the_entries_lie(a, beta):
    # beta need not be a power of two: the weights are those of beta * (a_i - a_k) for the
    # heaviest entry k, not of beta * a_i rounded far from the origin (at 1e15 and beta = 7
    # that rounding moved the logits by 0.5 and the variance by 10 %)
    try:
        got = float(boltzmann.dboltz_dbeta(a, beta=beta))
    except ValueError as exc:  # only beta * a or the variance itself overflowing
        assert "overflows" in str(exc)
        assert not np.isfinite(beta * a).all() or _variance_mp(a, beta)[0] > 1e308
        return
    var, scale = _variance_mp(a, beta)
    # no slack beyond float64's own: each operation that lands among the subnormals (below
    # 2.2e-308) rounds by up to 2**-1074 absolute, a few per entry
    assert abs(got - float(var)) <= 32 * U * float(scale) + 8 * len(a) * 2.0**-1074


@pytest.mark.parametrize("beta", [1.0, 0.3, 7.0, -7.0])
def test_dboltz_dbeta_keeps_its_digits_at_1e15(beta):
    a = np.array([1e15, 1e15 + 0.125, 1e15 + 0.25])
    assert boltzmann.dboltz_dbeta(a, beta=beta) == pytest.approx(
        float(boltzmann.dboltz_dbeta(a - 1e15, beta=beta)), rel=16 * U
    )


def test_dboltz_dbeta_keeps_a_term_whose_weight_underflows():
    # the lower entry's weight e^-796 underflows, its term p (a_1 - a_0)^2 does not (subnormal)
    a, beta = np.array([1e15, 1.875e15]), 2.0**-40
    want = _variance_mp(a, beta)[0]
    assert 1e-317 < want < 1e-315
    assert boltzmann.dboltz_dbeta(a, beta=beta) == pytest.approx(float(want), rel=1e-6)
    # the logarithmic branch keeps gradients finite for torch input
    t = torch.tensor([0.0, 1000.0, 1e200], dtype=torch.float64, requires_grad=True)
    boltzmann.dboltz_dbeta(t).backward()
    assert torch.isfinite(t.grad).all()


def test_dboltz_dbeta_of_entries_whose_difference_overflows():
    # softmax([-1e308, 1e308]) puts all weight on 1e308: the variance is 0, not an overflow
    assert boltzmann.dboltz_dbeta(np.array([-1e308, 1e308])) == 0.0
    assert boltzmann.dboltz_dbeta(np.array([-1e308, 1e308]), beta=-1.0) == 0.0


# --- nearest centres and distances at any scale (hard_lookup, soft_lookup) -----------------


@SETTINGS
@given(
    scale=st.sampled_from(SCALES),
    seed=st.integers(0, 10_000),
    N=st.integers(2, 8),
    D=st.integers(1, 3),
)
def test_hard_lookup_returns_the_exactly_nearest_centre(scale, seed, N, D):
    rng = np.random.default_rng(seed)
    c, x = scale * rng.uniform(-1, 1, (N, D)), scale * rng.uniform(-1, 1, (5, D))
    got = lookup.hard_lookup(x, c, np.arange(N, dtype=float))
    for xi, gi in zip(x, got, strict=True):
        d2 = [sum((Fraction(float(a)) - Fraction(float(b))) ** 2 for a, b in zip(xi, ci,
              strict=True)) for ci in c]  # fmt: skip
        order = sorted(range(N), key=lambda i: (d2[i], i))
        best, second = d2[order[0]], d2[order[1]]
        if second - best <= Fraction(1, 10**10) * second:  # a near-tie: a few ulp may go either way
            assert int(gi) in order[:2]
        else:
            assert int(gi) == order[0]


@SETTINGS
@given(
    scale=st.sampled_from([1e-150, 1e-100, 1e-12, 1.0, 1e12, 1e100, 1e150]),
    seed=st.integers(0, 10_000),
)
def test_soft_lookup_weights_are_scale_free(scale, seed):
    # beta ||x - c||^2 is unchanged when points and centres scale by s and beta by 1/s^2: the
    # lookup's answer must be too, for every s at which beta / s^2 is a normal float64
    rng = np.random.default_rng(seed)
    c, x, v = rng.uniform(-1, 1, (6, 2)), rng.uniform(-1, 1, (4, 2)), rng.normal(size=6)
    beta = 3.0
    want = lookup.soft_lookup(x, c, v, beta)
    got = lookup.soft_lookup(scale * x, scale * c, v, beta / scale / scale)
    # the scaled inputs and beta round once each (relative u): beta d^2 <= 3 * 8 moves by about
    # 4 u of itself, each weight by up to 100 u, the weighted average by twice that times |v|
    assert np.abs(got - want).max() <= 400 * U * np.abs(v).max()


# --- midpoints and medians whose sums overflow ---------------------------------------------


@SETTINGS
@given(
    scale=st.sampled_from([1.0, 1e300, 1.7e308, 1e-300]),
    u=st.lists(st.floats(-1, 1), min_size=1, max_size=7),
)
def test_band_median_is_the_exact_median_to_one_rounding(scale, u):
    v = [scale * x for x in u]
    med, lo, hi = seeds.band(v)
    s = sorted(Fraction(x) for x in v)
    k = len(s)
    want = s[k // 2] if k % 2 else (s[k // 2 - 1] + s[k // 2]) / 2
    assert math.isfinite(med)
    assert abs(Fraction(med) - want) <= Fraction(float(np.spacing(abs(float(want)))))
    assert (lo, hi) == (min(v), max(v))


def test_band_refuses_an_undefined_median_and_keeps_a_defined_one():
    with pytest.raises(ValueError, match="median is undefined"):
        seeds.band([math.inf, -math.inf])
    assert seeds.band([None, None], allow_none=True)[0] == math.inf
    assert seeds.band([1.0, None], allow_none=True)[0] == math.inf


@pytest.mark.parametrize("bad", [None, "3", -1, 0, 2.5, True])
def test_separated_refuses_a_bad_min_seeds(bad):
    with pytest.raises(ValueError, match="min_seeds"):
        seeds.separated([1, 2, 3], [4, 5, 6], min_seeds=bad)


# --- guards that bound the work --------------------------------------------------------------


def test_guards_bound_the_work_not_each_size():
    f = lambda p: p.sum(axis=1)  # noqa: E731
    # each size below its own limit, their product above the work limit
    with pytest.raises(ValueError, match="lib.cross.MAX_WORK"):
        cross.context_length(
            f,
            1,
            [0.1],
            1.0,
            np.random.default_rng(0).uniform(size=(100, 1)),
            m_max=maxaffine.MAX_CELLS,
        )
    with pytest.raises(ValueError, match="lib.cross.MAX_WORK"):
        cross.product_context_length(lambda p: p[:, 0], 3, [0.1], 1.0, m_max=10**5)
    V = np.random.default_rng(0).normal(size=(2000, 8))
    with pytest.raises(ValueError, match="lib.separation.MAX_WORK"):
        separation.best_direction(V, draws=separation.MAX_DRAWS)
    # just inside: 1 draw of the same vocabulary is accepted by the guard (not run here)
    count = len(V) + 1
    assert count * (count - 1) // 2 * V.shape[1] <= separation.MAX_WORK


def _refused_at_once(call, match="lib.exact.MAX_MP_SECONDS"):
    """The guard's refusal (before any work: the same calls computed would take minutes)."""
    with pytest.raises(ValueError, match=match):
        call()


def test_exact_guards_bound_digits_times_sizes():
    """Each size and the digits within their own limits, their product refused before any work:
    the exact functions at lib.exact.MAX_DPS digits."""
    from lib import exact

    top = exact.MAX_DPS
    a = [0.5] * 400  # 400 exps at 100,000 digits: over a minute by the model
    assert exact.mp_seconds(top, 4 * 400, 400) > exact.MAX_MP_SECONDS
    for f in (exact.lse_mp, exact.softmax_entropy_mp):
        _refused_at_once(lambda f=f: f(a, dps=top))
    _refused_at_once(lambda: exact.boltz_mp(a, 1, dps=top))
    points = [[float(i), 0.5] for i in range(200)]  # 19,900 pairs, far below MAX_PAIRS
    assert 200 * 199 // 2 < exact.MAX_PAIRS
    _refused_at_once(lambda: exact.min_distance(points, dps=top))
    layer = layers.SelfAttention(2, head_dim=2, seed=0)
    X = np.random.default_rng(0).normal(size=(30, 2))  # 1,800 score terms, far below MAX_MP_TERMS
    _refused_at_once(lambda: exact.attention_mp(X, layer, dps=top))
    _refused_at_once(lambda: interpolation.interpolation_mp(np.arange(300.0), np.ones(300), top))
    values = list(np.linspace(0, 1, 10**5))
    _refused_at_once(lambda: exact.min_gap(values, dps=top))
    with mpmath.workdps(top):
        _refused_at_once(lambda: exact.project_mp([[0.5, 0.25]] * 50_000, [1.0, 1.0]))
    # the same sizes at 50 digits are accepted, and right: equal entries, so boltz = 0.5 and
    # lse = 0.5 + log(400) exactly
    assert exact.boltz_mp(a, 1, dps=50) == mpmath.mpf(0.5)
    with mpmath.workdps(50):
        assert abs(exact.lse_mp(a, dps=50) - (mpmath.mpf(0.5) + mpmath.log(400))) < mpmath.mpf(
            10
        ) ** (-45)
    # a few entries at the most digits are accepted (two exps: well under a second)
    assert exact.boltz_mp([0.5, 0.5], 1, dps=top) == mpmath.mpf(0.5)


def test_mp_seconds_grows_with_digits_and_counts():
    from lib import exact

    digits = [15, 50, 500, 5_000, 50_000, 100_000]
    for kind in ("arithmetic", "transcendental"):
        times = [exact.mp_seconds(d, **{kind: 1000}) for d in digits]
        assert times == sorted(times) and times[0] > 0
        assert exact.mp_seconds(50, **{kind: 2000}) == pytest.approx(2 * times[1], rel=1e-12)
    assert exact.mp_seconds(50) == 0.0
    # at 50 digits, MAX_MP_TERMS multiplications are within the time limit (the guards agree)
    assert exact.mp_seconds(50, exact.MAX_MP_TERMS) <= exact.MAX_MP_SECONDS
    for bad, match in (({"dps": 0}, "dps"), ({"dps": 50, "arithmetic": -1}, "arithmetic"),
                       ({"dps": 50, "transcendental": math.inf}, "transcendental")):  # fmt: skip
        with pytest.raises(ValueError, match=match):
            exact.mp_seconds(**bad)


# --- extreme scales of the constructions ---------------------------------------------------


def test_theorem2_layer_refuses_a_scale_float64_cannot_hold_naming_vocab():
    V = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    with pytest.raises(ValueError, match="vocab's scale"):
        contextual.RankOneAttention(V * 1e-300, 3)
    with pytest.raises(ValueError, match="vocab's scale"):
        context_ids.context_ids(V * 1e-300, 3)
    # near 1e154 r_max**2 alone would overflow; gamma r_max r_max does not
    big = context_ids.context_ids(V * 1e154, 3, digits_beyond=10)
    small = context_ids.context_ids(V, 3, digits_beyond=10)
    assert big.log10_gap == pytest.approx(small.log10_gap + 154, abs=1e-6)


def test_refusals_name_the_argument_passed():
    X = np.array([[[1.0, 0.0]], [[0.0, 1.0]]])  # sequences of one token
    with pytest.raises(ValueError, match=r"^X must hold sequences of at least two tokens"):
        memorization.memorizing_transformer(X, X * 2)
    with pytest.raises(ValueError, match=r"^X must hold sequences of at least two tokens"):
        memorization.float64_memorization(X[..., :1], X[:, :, 0] * 2, 1.0)
    with pytest.raises(ValueError, match=r"^vectors' largest entry"):
        lemma1.lemma1_check(np.array([[1e300, 2e300], [3e300, 5e300]]))
    with pytest.raises(ValueError, match=r"^fixed_projection does not fit"):
        layers.TiedSelfAttention(3, fixed_projection=[1e-50, 1.0, 1.0], dtype=torch.float32)
    with pytest.raises(ValueError, match=r"^fixed_projection does not fit"):
        layers.TiedSelfAttention(3, fixed_projection=[1e50, 1.0, 1.0], dtype=torch.float32)


# --- the fourth round's second part: kinds found by the domain table and the contract probes ---


def _public(module):
    import inspect

    for name in module.__all__:
        obj = getattr(module, name)
        if inspect.isfunction(obj) or inspect.isclass(obj):
            yield f"{module.__name__.split('.')[-1]}.{name}", obj


#: Result records: dataclasses filled by the function named beside them, whose contract they are.
RECORDS = {
    "Lemma1Check", "Lemma1Search", "ScoreSeparation", "Theorem2Delta", "ContextIds",
    "LimitReversals", "Interpolation", "MemorizingNetwork", "Float64Memorization", "KSErrorRow",
    "PriceRow", "LookupErrorRow", "ErrorSummary",
}  # fmt: skip


def _sections(doc: str) -> dict[str, str]:
    """Google-style sections of a docstring: header -> indented body."""
    out: dict[str, str] = {}
    current = None
    for line in doc.splitlines():
        header = re.fullmatch(r"(Args|Returns|Raises|Accuracy|Attributes):", line.strip())
        if header and not line.startswith(" "):
            current = header.group(1)
            out[current] = ""
        elif current and (line.startswith("    ") or not line.strip()):
            out[current] += line.strip() + " "
        else:
            current = None
    return {k: v.strip() for k, v in out.items()}


def test_every_public_function_states_its_contract():
    """Each public function and class of the maths modules (records aside) writes its contract
    in its docstring: what it refuses (Raises) and the tolerance of what it returns, with the
    domain where that holds (Accuracy)."""
    import inspect

    import bad_inputs

    missing = []
    for module in bad_inputs.MODULES:
        for name, obj in _public(module):
            if name.split(".")[1] in RECORDS:
                continue
            sections = _sections(inspect.getdoc(obj) or "")
            for section in ("Raises", "Accuracy"):
                if len(sections.get(section, "")) < 20:
                    missing.append(f"{name}: {section}")
    assert not missing, missing
    assert sum(1 for m in bad_inputs.MODULES for _ in _public(m)) >= 130


def test_the_accuracy_section_renders_as_a_section():
    # napoleon knows the section from _config.yml; without it the header would be plain text
    import yaml
    from sphinx.ext.napoleon import Config, GoogleDocstring

    conf = yaml.safe_load(open("_config.yml"))["sphinx"]["config"]
    assert "Accuracy" in conf["napoleon_custom_sections"]
    config = Config(napoleon_custom_sections=conf["napoleon_custom_sections"])
    lines = str(GoogleDocstring("Sum.\n\nAccuracy:\n    Exact.\n", config)).splitlines()
    assert ".. rubric:: Accuracy" in lines


def test_bounds_that_overflow_are_refused_not_inf():
    with pytest.raises(ValueError, match=r"^quantizer_float64_error\(.*overflows float64"):
        quantize.quantizer_float64_error(3, 1, 0.01, 0.0, 1e300)
    with pytest.raises(ValueError, match=r"^r = r_max \+ eps / 4 overflows"):
        contextual.theorem2_delta(2, 1, 1, 1.7e308, 1.7e308, 1.7e308)
    with pytest.raises(ValueError, match="memorization_bits.*overflows"):
        atlas.memorization_bits(10**400, 2)
    with pytest.raises(ValueError, match=r"^X's X \* mean\(X\) overflows"):
        targets.mean_product(np.full((1, 2, 1), 1e300))
    layer = contextual.RankOneAttention([[1e200], [2e200]], 2, gamma=1.0)
    with pytest.raises(ValueError, match="scores of layer leave float64's range"):
        contextual.score_separation(layer)


def test_results_that_leave_the_normal_range_are_refused_not_rounded():
    with pytest.raises(ValueError, match=r"^slack=1e-17 does not move"):
        separation.strict_constants([[1.0], [2.0]], slack=1e-17)
    with pytest.raises(ValueError, match="times 1 \\+ slack overflows"):
        separation.strict_constants([[1.78e308], [1.0]])
    with pytest.raises(ValueError, match="underflows float64"):
        maxaffine.grid_margin([[3.3e-301]], 10, 0.0, 1e-300)
    tied = layers.TiedSelfAttention(3, gamma=1e-300, dtype=torch.float32, seed=0)
    with pytest.raises(ValueError, match="overflow or underflow torch.float32"):
        tied.weights()


def test_exact_answers_where_a_float_formula_rounded_across_a_case():
    # L / (2 eps) underflowed to 0: k = -1 and (-1)^dim came back
    assert atlas.lipschitz_packing_bits(1.0, 1e308, 1) == 0
    assert atlas.lipschitz_packing_bits(1e-300, 1e300, 3) == 0
    assert atlas.lipschitz_packing_bits(7.0, 1.0, 2) == 3**2  # ceil(3.5) - 1 = 3
    # b >= 1: every pair misses, binom(|V| + 1, 2) (mpmath's betainc went complex)
    assert separation.projection_miss_expectation(1, 2, power=0) == 1.0
    assert separation.projection_miss_expectation(3, 2, power=0) == 6.0
    assert separation.projection_miss_expectation(3, 1, power=0) == 6.0
    # sin(2 pi x) of an integer x is 0, and the period holds far from the origin
    assert targets.wave([[1e300, 0.25]]) == 0.0
    assert targets.wave([[2.0**50 + 0.25, 0.0]]) == pytest.approx(1.0, abs=1e-15)


def test_the_nearest_centre_beyond_float64s_largest_distance():
    x, c, v = [[1.5e308]], [[-1.7e308], [-1e308]], [2.0, 1.0]
    assert lookup.hard_lookup(x, c, v).tolist() == [1.0]
    assert lookup.soft_lookup(x, c, v, 1.0).tolist() == [1.0]  # the far one weighs e^-huge


def test_valid_layouts_and_types_are_accepted():
    pts = np.array([[0.0, 1.0], [1.0, 0.5], [3.0, 3.0]])
    want = exact.min_distance(pts.tolist(), 30)
    assert exact.min_distance(pts, 30) == want == exact.min_distance(torch.from_numpy(pts), 30)
    t = torch.tensor([0.1, 0.3, 0.2], dtype=torch.float64)
    assert seeds.band(t) == seeds.band([0.1, 0.3, 0.2])
    z = [0.0, 1.0, 3.0]
    assert memorization.weight_lower_bound(z, [1.0, -1.0, 2.0]) == memorization.weight_lower_bound(
        z, [[1.0], [-1.0], [2.0]]
    )
    with pytest.raises(ValueError, match="^targets must be"):
        memorization.weight_lower_bound([1.0], "abc")


def test_slopes_and_work_guards_at_their_edges():
    sizes, rates = np.array([5.0, 10.0, 20.0, 40.0]), np.array([0.6, 0.55, 0.5, 0.4])
    x = np.log(sizes + 1)
    lam = -np.log(rates)
    assert separation.miss_exponent(sizes, rates, 400) == pytest.approx(
        np.polyfit(x, np.log(lam), 1)[0], rel=1e-12
    )
    with pytest.raises(ValueError, match="slope is undefined"):
        separation.miss_exponent([2.0**60, 2.0**60 + 256], [0.5, 0.4], 400)
    with pytest.raises(ValueError, match="MAX_MEASURE_WORK"):
        quantize.duplicate_cell_measure(2, 26000, 40)  # 14 s before the guard
    # the memorizing network's default precision counts the ids' leading digits
    V = np.array([[0.5], [1.7], [-1.2], [3.0]])
    X = context_ids.subset_sequences(V, 2)
    Y = (np.arange(X.shape[0] * 2).reshape(X.shape[:2]) % 4).astype(float)
    assert float(memorization.memorizing_transformer(X * 1e60, Y).max_error) < 1e-15


def test_no_returns_section_reads_as_a_type():
    """Napoleon splits the first line of a Returns section at a colon: "A dict, in order: first
    ..." renders as a return *type* named "A dict, in order", which the strict (nitpicky) build
    of the API page refuses as a missing reference (or, with markup in it, shows as a "Return
    type" that is a sentence). No public function or method of lib writes its Returns that way:
    an ``:rtype:`` field in a rendered docstring holds a type name or nothing."""
    import importlib
    import inspect
    import pkgutil

    import yaml
    from sphinx.ext.napoleon import Config, GoogleDocstring

    import lib

    conf = yaml.safe_load(open("_config.yml"))["sphinx"]["config"]
    config = Config(napoleon_custom_sections=conf["napoleon_custom_sections"])
    typed, seen = [], 0
    for info in pkgutil.walk_packages(lib.__path__, "lib."):
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            if name.startswith("_") or getattr(obj, "__module__", None) != module.__name__:
                continue
            members = [(name, obj)]
            if inspect.isclass(obj):
                members += [
                    (f"{name}.{m}", f)
                    for m, f in vars(obj).items()
                    if not m.startswith("_") and callable(f)
                ]
            for label, member in members:
                doc = inspect.getdoc(member) or ""
                seen += "Returns:" in doc
                for line in str(GoogleDocstring(doc, config)).splitlines():
                    # a type name (``dict``, ``pathlib.Path``) is what the field is for
                    if line.startswith(":rtype:") and not re.fullmatch(r"[\w.]+", line[8:]):
                        typed.append(f"{module.__name__}.{label}: {line[8:60]}")
    assert seen > 100  # the walk found lib's documented functions
    assert not typed, typed


def test_no_attribute_comment_reads_as_a_type():
    """The same for a documented module constant (a ``#:`` comment): napoleon reads the part of
    its first line before a colon as the constant's *type* ("The capacity grid per book mode: an
    instance ..." became a type "The capacity grid per book mode", a missing reference that broke
    the strict build). Every ``#:`` comment of lib renders with no type, or a type name."""
    import importlib
    import pkgutil

    import yaml
    from sphinx.ext.napoleon import Config, GoogleDocstring
    from sphinx.pycode import ModuleAnalyzer

    import lib

    conf = yaml.safe_load(open("_config.yml"))["sphinx"]["config"]
    config = Config(napoleon_custom_sections=conf["napoleon_custom_sections"])
    typed, seen = [], 0
    for info in pkgutil.walk_packages(lib.__path__, "lib."):
        importlib.import_module(info.name)
        docs = ModuleAnalyzer.for_module(info.name).find_attr_docs()
        for (scope, name), lines in docs.items():
            if scope or name.startswith("_"):
                continue
            seen += 1
            rendered = GoogleDocstring(
                "\n".join(lines), config, what="attribute", name=f"{info.name}.{name}"
            )
            for line in str(rendered).splitlines():
                if line.startswith(":type:") and not re.fullmatch(r"[\w.\[\], ]+", line[7:]):
                    typed.append(f"{info.name}.{name}: {line[7:60]}")
    assert seen > 50  # the walk found lib's documented constants
    assert not typed, typed
