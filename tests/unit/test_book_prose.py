"""lib.book.prose: glue coercion, number formatting and prose lists."""

import math

import mpmath
import numpy as np
import pandas as pd
import pytest
import torch

from lib.book import checks


def test_glue_coerces_to_python_scalars(glued):
    checks.glue("a", np.float64(1.5))
    checks.glue("b", np.int64(3))
    checks.glue("c", torch.tensor(2.5))
    checks.glue("d", "text")
    checks.glue_many(e=np.float32(0.25), f=7)
    assert glued["a"] == (1.5, False) and type(glued["a"][0]) is float
    assert type(glued["b"][0]) is int and glued["b"][0] == 3
    assert type(glued["c"][0]) is float
    assert glued["d"][0] == "text"
    assert glued["e"][0] == 0.25 and glued["f"][0] == 7


@pytest.mark.parametrize(
    "key, value, match",
    [
        ("bad:key", 1.0, "key must match"),
        ("", 1.0, "key must match"),
        ("x", np.array([1.0, 2.0]), "scalar"),
        ("x", float("nan"), "finite"),
        ("x", mpmath.mpf(1), "format it with lib.book.checks.fmt"),
        ("x", [1, 2], "real scalar"),
    ],
)
def test_glue_rejects(glued, key, value, match):
    with pytest.raises(ValueError, match=match):
        checks.glue(key, value)


def test_fmt():
    assert checks.fmt(0.052180722) == "0.0522"
    assert checks.fmt(2.0674987e-9) == "2.07e-9"
    assert checks.fmt(1.5e12) == "1.50e12"
    assert checks.fmt(12) == "12"
    assert checks.fmt(0.0) == "0"
    assert checks.fmt(np.float64(3.14159), digits=2) == "3.1"
    with mpmath.workdps(600):
        tiny = mpmath.mpf("3.38e-488")
    assert checks.fmt(tiny) == "3.38e-488"
    with pytest.raises(ValueError):
        checks.fmt("1.0")
    with pytest.raises(ValueError, match="digits must be >= 1"):
        checks.fmt(1.0, digits=0)


def test_pretty_formats_float_columns_only():
    t = pd.DataFrame({"n": [2, 3], "gap": [0.0522, 2.07e-9], "ok": [True, False], "s": ["a", "b"]})
    out = checks.pretty(t)
    assert list(out.gap) == ["0.0522", "2.07e-9"]
    assert list(out.n) == [2, 3] and list(out.ok) == ["yes", "no"]  # words, not Python's bools
    keyed = checks.pretty(t.set_index(["n", "ok"]))
    assert list(keyed.index) == [(2, "yes"), (3, "no")]
    assert list(checks.pretty(t.set_index("ok")).index) == ["yes", "no"]
    with pytest.raises(ValueError, match="DataFrame"):
        checks.pretty([1, 2])


def test_fmt_rounding_edges_and_non_finite():
    assert checks.fmt(9999.9) == "1.00e4"
    assert checks.fmt(-9999.96) == "-1.00e4"
    assert checks.fmt(mpmath.mpf("9999.9")) == "1.00e4"
    assert checks.fmt(mpmath.mpf(1e10)) == "1.00e10"
    for bad in (float("nan"), float("inf"), 10**400):
        with pytest.raises(ValueError):
            checks.fmt(bad)


def test_keys_with_trailing_newline_refused(glued):
    with pytest.raises(ValueError, match="key must match"):
        checks.glue("k\n", 1)
    with pytest.raises(ValueError, match="not registered"):
        checks.record("C1\n", 1.0, True)


def test_pretty_shows_missing_values_and_rejects_infinities():
    t = pd.DataFrame({"x": [1.5e-20, np.nan]})
    assert checks.pretty(t)["x"].tolist() == ["1.50e-20", "—"]
    assert checks.pretty(t, missing="n/a")["x"].tolist()[1] == "n/a"
    with pytest.raises(ValueError, match="finite"):
        checks.pretty(pd.DataFrame({"x": [np.inf]}))


def test_joined_lists_words_as_prose():
    assert checks.joined(["a"]) == "a"
    assert checks.joined(iter(["a", "b"])) == "a and b"
    assert checks.joined(["a", "b", "c"]) == "a, b and c"
    for bad in ([], ["a", 1]):
        with pytest.raises(ValueError, match="words"):
            checks.joined(bad)


def test_tenpow_writes_powers_of_ten_in_the_books_format():
    # three digits, scientific outside [1e-3, 1e4), far beyond float64
    from lib.book.prose import tenpow

    assert tenpow(-1200.5) == "3.16e-1201"
    assert tenpow(0.5) == "3.16"
    assert tenpow(-3.2) == "6.31e-4"
    assert tenpow(-math.inf) == "0"
    assert tenpow(2_000_000.5) == "3.16e2000000"
    assert tenpow(5.9999999999) == "1.00e6"  # the mantissa rounds up to 10
    with pytest.raises(ValueError, match="x must be finite"):
        tenpow(math.inf)
