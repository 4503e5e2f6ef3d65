"""lib.runtime: modes, pick, seeds, threads, progress bars, the training device."""

import sys
import types

import numpy as np
import pytest
import torch

from lib import runtime


def test_mode_default_and_values():
    assert runtime.read_mode({}) == "fast"
    assert runtime.read_mode({"BOOK_MODE": ""}) == "fast"
    assert runtime.read_mode({"BOOK_MODE": "full"}) == "full"
    assert runtime.read_mode({"BOOK_MODE": " fast "}) == "fast"
    with pytest.raises(ValueError, match="BOOK_MODE='slow': must be 'fast' or 'full'"):
        runtime.read_mode({"BOOK_MODE": "slow"})


def test_module_mode_matches_environment(monkeypatch):
    import importlib

    monkeypatch.setenv("BOOK_MODE", "full")
    try:
        assert importlib.reload(runtime).MODE == "full"
        monkeypatch.setenv("BOOK_MODE", "nonsense")
        with pytest.raises(ValueError, match="nonsense"):
            importlib.reload(runtime)
    finally:
        monkeypatch.delenv("BOOK_MODE")
        importlib.reload(runtime)
    assert runtime.MODE == "fast"


def test_pick():
    assert runtime.pick(fast=1, full=2, mode="fast") == 1
    assert runtime.pick(fast=1, full=2, mode="full") == 2
    assert runtime.pick(fast="a", full="b") == ("a" if runtime.MODE == "fast" else "b")
    with pytest.raises(ValueError, match="mode must be one of"):
        runtime.pick(fast=1, full=2, mode="medium")


def test_seed_everything_repeats():
    # np.random.rand on purpose: seed_everything must seed numpy's global (legacy) stream
    g1 = runtime.seed_everything(7)
    x1, t1, n1 = g1.normal(size=3), torch.rand(3), np.random.rand(2)  # noqa: NPY002
    g2 = runtime.seed_everything(7)
    x2, t2, n2 = g2.normal(size=3), torch.rand(3), np.random.rand(2)  # noqa: NPY002
    np.testing.assert_array_equal(x1, x2)
    assert torch.equal(t1, t2)
    np.testing.assert_array_equal(n1, n2)
    for bad in (-1, 1.5, "3", True):
        with pytest.raises(ValueError, match="seed must"):
            runtime.seed_everything(bad)


def test_threads_fixed():
    assert torch.get_num_threads() == runtime.THREADS
    with pytest.raises(ValueError, match="BOOK_THREADS"):
        runtime._read_threads({"BOOK_THREADS": "two"})
    with pytest.raises(ValueError, match="BOOK_THREADS='0': must be a whole number from 1"):
        runtime._read_threads({"BOOK_THREADS": "0"})
    assert runtime._read_threads({}) == 2


def test_progress_is_silent_when_not_interactive(capsys, monkeypatch):
    # "interactive" is a kernel (ipykernel imported) or a terminal; pytest's stderr is not a tty,
    # and another test may have imported ipykernel into this process: state both conditions
    monkeypatch.setattr(runtime, "IN_BUILD", False)
    monkeypatch.delitem(sys.modules, "ipykernel", raising=False)
    assert list(runtime.progress(range(3), desc="x")) == [0, 1, 2]
    assert capsys.readouterr().err == ""
    # in a kernel the bar is shown, unless the book is building
    monkeypatch.setitem(sys.modules, "ipykernel", types.ModuleType("ipykernel"))
    assert list(runtime.progress(range(3), desc="x")) == [0, 1, 2]
    assert "3/3" in capsys.readouterr().err
    monkeypatch.setattr(runtime, "IN_BUILD", True)
    assert list(runtime.progress(range(3), desc="x")) == [0, 1, 2]
    assert capsys.readouterr().err == ""


def test_bad_environ_and_seed_range():
    with pytest.raises(ValueError, match="BOOK_MODE"):
        runtime.read_mode({"BOOK_MODE": None})
    with pytest.raises(ValueError, match="environ must be a mapping"):
        runtime.read_mode([])
    with pytest.raises(ValueError, match="seed must be <="):
        runtime.seed_everything(2**64)


def test_read_device():
    assert runtime.read_device({"BOOK_DEVICE": "cpu"}) == torch.device("cpu")
    assert runtime.read_device({}).type in ("cpu", "cuda")
    with pytest.raises(ValueError, match="BOOK_DEVICE"):
        runtime.read_device({"BOOK_DEVICE": "nonsense"})
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="no such CUDA device"):
            runtime.read_device({"BOOK_DEVICE": "cuda"})


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: runtime.read_device(["cpu"]), "mapping"),
        (lambda: runtime.read_device({"BOOK_DEVICE": "mps"}), "BOOK_DEVICE"),
    ],
)
def test_value_errors(call, match):
    with pytest.raises(ValueError, match=match):
        call()
