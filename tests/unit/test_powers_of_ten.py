"""lib.powers_of_ten: 10**x far beyond float64, as a number and in the book's format."""

import math

import mpmath
import pytest

from lib import powers_of_ten


def test_pow10_mp_and_tenpow():
    with mpmath.workdps(30):
        assert powers_of_ten.pow10_mp(3) == 1000
        want = mpmath.mpf(10) ** -1200 / mpmath.sqrt(10)
        assert abs(powers_of_ten.pow10_mp(-1200.5) / want - 1) < mpmath.mpf("1e-28")
    assert powers_of_ten.pow10_mp(-math.inf) == 0
    # the book's format: three digits, scientific outside [1e-3, 1e4), far beyond float64
    assert powers_of_ten.tenpow(-1200.5) == "3.16e-1201"
    assert powers_of_ten.tenpow(0.5) == "3.16"
    assert powers_of_ten.tenpow(-3.2) == "6.31e-4"
    assert powers_of_ten.tenpow(-math.inf) == "0"
    assert powers_of_ten.tenpow(2_000_000.5) == "3.16e2000000"
    assert powers_of_ten.tenpow(5.9999999999) == "1.00e6"  # the mantissa rounds up to 10
    with pytest.raises(ValueError, match="x must be finite"):
        powers_of_ten.tenpow(math.inf)
    with pytest.raises(ValueError, match="x must be a real number"):
        powers_of_ten.pow10_mp(True)
