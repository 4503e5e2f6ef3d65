"""lib.lemma1: K&S Lemma 1's gap, bound and digits, the lattice vectors and the exact check."""

import math

import mpmath
import numpy as np
import pytest

from lib import boltzmann, exact, lemma1


def test_lemma1_constants():
    assert lemma1.lemma1_gap(2) == pytest.approx(2 * math.log(2) + 3)
    assert lemma1.lemma1_bound(3, 1.5) == pytest.approx(math.log(3) ** 2 * math.exp(-3.0))
    assert lemma1.lemma1_bound(3, 1000.0, log10=True) == pytest.approx(
        (2 * math.log(math.log(3)) - 2000.0) / math.log(10)
    )
    for bad in (1, 0, 2.0, True):
        with pytest.raises(ValueError, match="n must"):
            lemma1.lemma1_gap(bad)
    with pytest.raises(ValueError, match="r must be >= 0"):
        lemma1.lemma1_bound(3, -1.0)
    with pytest.raises(ValueError, match="r must be finite"):
        lemma1.lemma1_bound(3, float("inf"))


def test_lattice_vectors():
    V = lemma1.lattice_vectors(2, 4, 2.0)
    assert V.shape == (6, 2)
    np.testing.assert_allclose(V[0], [-3.0, -1.0])
    np.testing.assert_allclose(V[-1], [1.0, 3.0])
    with pytest.raises(ValueError, match="K must be >= 3"):
        lemma1.lattice_vectors(3, 2, 1.0)
    with pytest.raises(ValueError, match="spacing must be > 0"):
        lemma1.lattice_vectors(2, 3, 0.0)


def test_lemma1_check_reproduces_papers_table():
    # check C3 of K&S Lemma 1 (Chapter 1): n = 3, K = 5 -> min gap 2.53e-6 > bound 1.09e-9
    V = lemma1.lattice_vectors(3, 5, lemma1.lemma1_gap(3) + 0.01)
    c = lemma1.lemma1_check(V)
    assert c.hypothesis and c.conclusion
    assert c.min_gap == pytest.approx(2.53e-6, rel=5e-3)
    assert c.bound == pytest.approx(math.log(3) ** 2 * math.exp(-2 * c.r))
    assert c.m == 10 and c.n == 3 and c.dps == lemma1.lemma1_digits(c.r)


def test_lemma1_check_on_n_not_in_chapter():
    # n = 7, K = 9 is not used in Chapter 1; the lemma must hold there too.
    V = lemma1.lattice_vectors(7, 9, lemma1.lemma1_gap(7) + 0.01)
    c = lemma1.lemma1_check(V)
    assert c.hypothesis and c.conclusion and c.min_gap > c.bound > 0


def test_lemma1_check_detects_collision():
    # (0, 1) and (0.2, y*) collide (C4); the check must report a gap of ~0, not skip it.
    with mpmath.workdps(40):
        t = exact.boltz_mp([0, 1], dps=40)
        y = mpmath.findroot(lambda y: exact.boltz_mp(["0.2", y], dps=40) - t, 0.9)
    c = lemma1.lemma1_check(np.array([[0.0, 1.0], [0.2, float(y)]]), dps=40)
    assert c.min_gap < 1e-15 and not c.hypothesis


@pytest.mark.parametrize(
    "vectors, match",
    [
        (np.array([[0.0, 0.0], [1.0, 2.0]]), "repeats an entry"),
        (np.array([[0.0, 1.0], [1.0, 0.0]]), "permutations"),
        (np.array([[0.0, 1.0]]), "shape"),
        (np.array([0.0, 1.0]), "at least 2 dimension"),
        (np.array([[0.0, np.nan], [1.0, 2.0]]), "finite"),
    ],
)
def test_lemma1_check_bad_input(vectors, match):
    with pytest.raises(ValueError, match=match):
        lemma1.lemma1_check(vectors)


def test_one_winner_deficit_closed_form():
    xs = np.linspace(1e-6, 40, 400_001)
    for n in (2, 3, 7, 50):
        grid = np.stack([np.zeros_like(xs)] + [-xs] * (n - 1), axis=-1)
        assert lemma1.one_winner_deficit(n) == pytest.approx(-boltzmann.boltz(grid).min(), rel=1e-8)
    assert lemma1.one_winner_deficit(2) == pytest.approx(float(mpmath.lambertw(1 / mpmath.e)))
    assert lemma1.one_winner_deficit(10**6) < math.log(10**6)


def test_lemma1_check_below_float64_range():
    """Gap 2.9e-345 vs bound 1.3e-704: both underflow float64, the verdict must not."""
    c = lemma1.lemma1_check(np.array([[0.0, -800.0], [0.0, -810.0]]))
    assert c.hypothesis and c.conclusion
    assert c.min_gap == 0.0 and c.bound == 0.0  # as floats
    assert c.log10_min_gap == pytest.approx(math.log10(2.9) - 345, abs=0.05)
    assert c.log10_bound == pytest.approx(lemma1.lemma1_bound(2, 810.0, log10=True))


def test_lattice_size_is_checked_before_building(monkeypatch):
    with pytest.raises(
        ValueError, match=r"binom\(2000, 6\) would be 88,224,108,612,633,000.*MAX_LATTICE_ROWS"
    ):
        lemma1.lattice_vectors(6, 2000, 1.0)
    with pytest.raises(ValueError, match="astronomically large.*MAX_LATTICE_ROWS"):
        lemma1.lattice_vectors(10**6, 10**18, 1.0)
    monkeypatch.setattr(lemma1, "MAX_LATTICE_ROWS", 10)
    assert lemma1.lattice_vectors(2, 5, 1.0).shape == (
        math.comb(5, 2),
        2,
    )  # exactly at the limit
    with pytest.raises(ValueError, match="MAX_LATTICE_ROWS = 10"):
        lemma1.lattice_vectors(2, 6, 1.0)


def test_lemma1_check_decides_at_the_threshold_exactly():
    import mpmath

    t = 2 * math.log(2) + 3  # the float64 rounding of 2 ln 2 + 3 lies 1.8e-16 above it
    with mpmath.workdps(40):
        assert mpmath.mpf(t) > 2 * mpmath.log(2) + 3
    check = lemma1.lemma1_check(np.array([[0.0, t], [0.0, -t]]))
    assert check.delta == check.threshold  # float64 cannot tell them apart ...
    assert check.hypothesis  # ... but the separation is strictly larger, as decided exactly
    below = np.nextafter(t, 0)
    assert not lemma1.lemma1_check(np.array([[0.0, below], [0.0, -below]])).hypothesis


def test_threshold_lattice_spacing_just_above_lemma1s_gap():
    V = lemma1.threshold_lattice(3, 5)
    np.testing.assert_array_equal(V, lemma1.lattice_vectors(3, 5, lemma1.lemma1_gap(3) + 0.01))
    assert V.shape == (math.comb(5, 3), 3)
    # neighbouring points lie 2 log 3 + 3 + margin apart
    assert np.diff(lemma1.threshold_lattice(2, 2, margin=0.5)[0])[0] == pytest.approx(
        2 * math.log(2) + 3.5, rel=1e-15
    )
    with pytest.raises(ValueError, match="margin must be > 0"):
        lemma1.threshold_lattice(3, 4, margin=0.0)
    with pytest.raises(ValueError, match="margin=1e-20 does not lift"):
        lemma1.threshold_lattice(3, 4, margin=1e-20)
    with pytest.raises(ValueError, match="n must be >= 2"):
        lemma1.threshold_lattice(1, 4)
    with pytest.raises(ValueError, match=r"threshold_lattice\(3, K=10000"):
        lemma1.threshold_lattice(3, 10_000)


def test_explicit_digits_too_few_for_lemma1s_gap_are_refused():
    v = lemma1.lattice_vectors(3, 4, 10.0) * 1e12  # the gap lies about 1.3e13 digits down
    with pytest.raises(ValueError, match=r"^dps=40 cannot resolve the gap"):
        lemma1.lemma1_check(v, dps=40)
    assert lemma1.lemma1_digits(1.151292546497023) == 32  # 2r / ln 10 = 1.0000000000000002
    with mpmath.workdps(5):  # the caller's precision does not leak in
        assert lemma1.one_winner_deficit(1000) == pytest.approx(4.42050160394, rel=1e-11)
