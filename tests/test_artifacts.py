"""lib.artifacts: load-if-present keyed on parameters and the lib source hash."""

import pandas as pd
import pytest

from lib import artifacts


def test_computes_once_then_loads(tmp_path):
    calls = []

    def compute():
        calls.append(1)
        return pd.DataFrame({"epoch": [1, 2], "acc": [0.5, 0.75]})

    first = artifacts.load_or_compute("run", {"epochs": 2}, compute, root=tmp_path)
    second = artifacts.load_or_compute("run", {"epochs": 2}, compute, root=tmp_path)
    pd.testing.assert_frame_equal(first, second)
    assert len(calls) == 1
    artifacts.load_or_compute("run", {"epochs": 3}, compute, root=tmp_path)  # new params: new key
    assert len(calls) == 2 and len(list(tmp_path.glob("run-*.pt"))) == 2


def test_key_depends_on_params_order_free_and_on_lib_source(monkeypatch):
    a = artifacts.artifact_key("x", {"a": 1, "b": [1, 2]})
    assert a == artifacts.artifact_key("x", {"b": [1, 2], "a": 1})
    assert a != artifacts.artifact_key("x", {"a": 2, "b": [1, 2]})
    assert a != artifacts.artifact_key("y", {"a": 1, "b": [1, 2]})
    monkeypatch.setattr(artifacts, "source_hash", lambda: "0" * 64)  # as if lib had changed
    assert a != artifacts.artifact_key("x", {"a": 1, "b": [1, 2]})


def test_root_from_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("BOOK_ARTIFACTS", str(tmp_path))
    assert artifacts.artifact_path("run", {}).parent == tmp_path


def test_bad_files_and_arguments(tmp_path):
    path = artifacts.artifact_path("run", {"k": 1}, tmp_path)
    path.write_bytes(b"not a torch file")
    with pytest.raises(ValueError, match="delete it to recompute"):
        artifacts.load_or_compute("run", {"k": 1}, lambda: 1, root=tmp_path)
    for name, params, match in [("../evil", {}, "name"), ("", {}, "name"), ("ok", [1], "params must be a dict"),
                                ("ok", {"f": float("nan")}, "finite"), ("ok", {"o": object()}, "JSON"),
                                ("ok", {1: "a"}, "keys must be strings"), ("x" * 101, {}, "name")]:
        with pytest.raises(ValueError, match=match):
            artifacts.load_or_compute(name, params, lambda: 1, root=tmp_path)
    with pytest.raises(ValueError, match="compute must be callable"):
        artifacts.load_or_compute("ok", {}, 3, root=tmp_path)


def test_numpy_scalars_are_plain_numbers_and_unstorable_results_are_reported(tmp_path):
    import numpy as np

    assert artifacts.artifact_key("x", {"a": np.int64(1), "b": np.float64(0.5)}) == \
        artifacts.artifact_key("x", {"a": 1, "b": 0.5})
    with pytest.raises(ValueError, match="cannot be stored"):
        artifacts.load_or_compute("z", {}, lambda: (lambda: 1), root=tmp_path)
    assert not list(tmp_path.glob("*.tmp"))
    (tmp_path / "file").write_text("x")
    with pytest.raises(ValueError, match="is a file"):
        artifacts.load_or_compute("z", {}, lambda: 1, root=tmp_path / "file")
    with pytest.raises(ValueError, match="root must be a folder path"):
        artifacts.load_or_compute("z", {}, lambda: 1, root=5)
