"""lib.powers_of_ten: 10**x far beyond float64, as a number."""

import math

import mpmath
import pytest

from lib import powers_of_ten


def test_pow10_mp():
    with mpmath.workdps(30):
        assert powers_of_ten.pow10_mp(3) == 1000
        want = mpmath.mpf(10) ** -1200 / mpmath.sqrt(10)
        assert abs(powers_of_ten.pow10_mp(-1200.5) / want - 1) < mpmath.mpf("1e-28")
    assert powers_of_ten.pow10_mp(-math.inf) == 0
    with pytest.raises(ValueError, match="x must be a real number"):
        powers_of_ten.pow10_mp(True)
