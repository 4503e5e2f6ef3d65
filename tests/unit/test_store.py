"""lib.experiments.store: the one gate for stored results (key, staleness, provenance, JSON
only)."""

from __future__ import annotations

import json
import subprocess

import numpy as np
import pytest
import torch

from lib.experiments import store


def test_key_follows_settings_and_version_only():
    key = store.result_key("conll", 1, {"epochs": 3, "layers": [1, 3]})
    assert key == store.result_key(
        "conll", 1, {"layers": [1, 3], "epochs": 3}
    )  # order does not matter
    assert key != store.result_key("conll", 2, {"epochs": 3, "layers": [1, 3]})
    assert key != store.result_key("conll", 1, {"epochs": 4, "layers": [1, 3]})
    assert key != store.result_key("noise", 1, {"epochs": 3, "layers": [1, 3]})
    assert key == store.result_key(
        "conll", 1, {"epochs": np.int64(3), "layers": (1, 3)}
    )  # numpy, tuples as JSON
    for bad, match in [
        (("Conll", 1, {}), "experiment must be"),
        (("conll", -1, {}), "version must be"),
        (("conll", True, {}), "version must be"),
        (("conll", 1, []), "settings must be a dict"),
        (("conll", 1, {"x": float("nan")}), "finite"),
        (("conll", 1, {"x": object()}), "JSON values"),
        (("conll", 1, {1: 2}), "keys must be strings"),
    ]:
        with pytest.raises(ValueError, match=match):
            store.result_key(*bad)


def test_gate_computes_once_stores_json_and_reads_it_back(tmp_path):
    calls = []

    def compute():
        calls.append(1)
        return {
            "history": [0.5, np.float64(0.75)],
            "final": torch.tensor(0.9),
            "epochs": np.int64(2),
        }

    first = store.load_or_run(
        "conll", "layers-1", 3, {"epochs": 2}, compute, allow_compute=True, root=tmp_path
    )
    second = store.load_or_run(
        "conll", "layers-1", 3, {"epochs": 2}, compute, allow_compute=False, root=tmp_path
    )
    assert len(calls) == 1 and first.result == second.result
    assert first.result == {"history": [0.5, 0.75], "final": pytest.approx(0.9), "epochs": 2}
    on_disk = json.loads((tmp_path / "conll" / "layers-1.json").read_text())
    assert on_disk["key"] == store.result_key("conll", 3, {"epochs": 2}) and on_disk["version"] == 3
    prov = on_disk["provenance"]
    assert {"commit", "date", "machine", "python", "torch", "numpy", "threads", "wall_s"} <= set(
        prov
    )
    assert prov["torch"] == torch.__version__ and prov["threads"] == torch.get_num_threads()
    assert prov["machine"]["cores"] >= 1 and prov["machine"]["device"] == "cpu"


def test_gate_refuses_stale_or_missing_results_in_a_build(tmp_path):
    store.load_or_run(
        "noise", "mnist", 1, {"epochs": 1}, lambda: {"x": 1}, allow_compute=True, root=tmp_path
    )
    with pytest.raises(store.StaleResultError, match=r"settings differ.*make full"):
        store.load_or_run(
            "noise", "mnist", 1, {"epochs": 2}, lambda: {"x": 2}, allow_compute=False, root=tmp_path
        )
    with pytest.raises(
        store.StaleResultError, match=r"code version is 1, the code's is 2.*make full"
    ):
        store.load_or_run(
            "noise", "mnist", 2, {"epochs": 1}, lambda: {"x": 2}, allow_compute=False, root=tmp_path
        )
    with pytest.raises(store.StaleResultError, match="has not been computed"):
        store.load_or_run(
            "noise",
            "fashion",
            1,
            {"epochs": 1},
            lambda: {"x": 2},
            allow_compute=False,
            root=tmp_path,
        )
    redone = store.load_or_run(
        "noise", "mnist", 2, {"epochs": 1}, lambda: {"x": 2}, allow_compute=True, root=tmp_path
    )
    assert redone.result == {"x": 2} and redone.version == 2


def test_a_deleted_committed_result_is_called_missing_with_the_checkout_hint(tmp_path):
    """A result file that git's HEAD holds but the work tree lacks was deleted, not never run."""
    store.load_or_run(
        "noise", "mnist", 1, {"epochs": 1}, lambda: {"x": 1}, allow_compute=True, root=tmp_path
    )
    (path,) = tmp_path.rglob("*.json")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    subprocess.run([*git, "-C", str(tmp_path), "add", "."], check=True)
    subprocess.run([*git, "-C", str(tmp_path), "commit", "-qm", "results"], check=True)
    path.unlink()
    with pytest.raises(store.StaleResultError) as info:
        store.load_or_run(
            "noise", "mnist", 1, {"epochs": 1}, lambda: {}, allow_compute=False, root=tmp_path
        )
    assert "is missing: it is committed" in str(info.value)
    assert f"git checkout -- {path}" in str(info.value) and "make full" in str(info.value)
    assert "has not been computed" not in str(info.value)
    subprocess.run(["git", "-C", str(tmp_path), "checkout", "-q", "--", "."], check=True)
    assert store.load_or_run(
        "noise", "mnist", 1, {"epochs": 1}, lambda: {}, allow_compute=False, root=tmp_path
    ).result == {"x": 1}


def test_gate_rejects_bad_results_and_files(tmp_path):
    with pytest.raises(ValueError, match="compute must be callable"):
        store.load_or_run("conll", "a", 1, {}, None, allow_compute=True, root=tmp_path)
    with pytest.raises(ValueError, match="compute must return a dict"):
        store.load_or_run("conll", "a", 1, {}, lambda: [1], allow_compute=True, root=tmp_path)
    with pytest.raises(ValueError, match="finite"):
        store.load_or_run(
            "conll", "a", 1, {}, lambda: {"x": float("inf")}, allow_compute=True, root=tmp_path
        )
    assert not (tmp_path / "conll" / "a.json").exists()  # nothing half-written
    (tmp_path / "conll").mkdir(exist_ok=True)
    (tmp_path / "conll" / "b.json").write_text("{not json")
    with pytest.raises(ValueError, match="cannot read the stored result"):
        store.load_or_run("conll", "b", 1, {}, lambda: {}, allow_compute=False, root=tmp_path)
    with pytest.raises(ValueError, match="run must be"):
        store.load_or_run("conll", "B/../x", 1, {}, lambda: {}, allow_compute=True, root=tmp_path)


def test_a_stored_number_edited_by_hand_is_refused_naming_the_file(tmp_path):
    import json

    store.save("noise", "r", 1, {"a": 1}, {"norm": 2.5}, wall_s=1.0, root=tmp_path)
    path = tmp_path / "noise" / "r.json"
    record = json.loads(path.read_text())
    assert record["checksum"] == store.checksum(record)
    assert store.read("noise", "r", root=tmp_path).result == {"norm": 2.5}
    path.write_text(path.read_text().replace("2.5", "2.7"))  # a hand edit of the result
    with pytest.raises(ValueError, match=r"r\.json does not match its checksum.*git checkout"):
        store.read("noise", "r", root=tmp_path)
    del record["checksum"]  # a file written without one
    path.write_text(json.dumps(record))
    with pytest.raises(ValueError, match="written without one"):
        store.read("noise", "r", root=tmp_path)
    path.write_text(path.read_text()[:40])  # truncated: the remedy is the committed file
    with pytest.raises(ValueError, match=r"cannot read the stored result .*git checkout --"):
        store.read("noise", "r", root=tmp_path)


def test_every_committed_result_carries_its_checksum():
    import json

    from conftest import ROOT

    files = sorted((ROOT / "results").rglob("*.json"))
    assert len(files) >= 60
    for path in files:
        record = json.loads(path.read_text())
        assert record.get("checksum") == store.checksum(record), path
