"""lib._mkl: oneMKL's vector-math dispatch is settled, on one thread, whenever lib loads torch."""

from __future__ import annotations

import subprocess
import sys

import torch

from lib import _mkl


def test_every_listed_function_exists_and_is_called_per_dtype():
    missing = [name for name in _mkl.VML_FUNCTIONS if not callable(getattr(torch, name, None))]
    assert missing == []  # a misspelt name would silently skip its warm-up
    assert set(_mkl.WARMED) == {(n, d) for n in _mkl.VML_FUNCTIONS for d in _mkl.VML_DTYPES}


def test_warm_up_stays_on_one_thread():
    # ATen splits unary maths between threads from 2,048 elements (its smallest grain) on
    assert _mkl._WARM_SIZE < 2048


def test_any_lib_module_that_uses_torch_runs_the_warm_up_first():
    code = (
        "import sys; import lib.boltzmann; "
        "print('lib._mkl' in sys.modules, len(sys.modules['lib._mkl'].WARMED))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", str(2 * len(_mkl.VML_FUNCTIONS))]
