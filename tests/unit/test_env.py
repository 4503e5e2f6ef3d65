"""lib._env: every BOOK_* variable accepted, or refused in one line naming it."""

from __future__ import annotations

import os
import re

import pytest

from lib import _env

CORES = os.cpu_count() or 1


def _folder(path, files=()):
    path.mkdir(parents=True, exist_ok=True)
    for name in files:
        (path / name).write_bytes(b"")
    return path


def test_every_setting_has_a_meaning_and_an_unset_text():
    assert all(name.startswith("BOOK_") for name in _env.SETTINGS)
    assert all(s.unset and s.meaning for s in _env.SETTINGS.values())
    table = _env.describe().splitlines()
    assert len(table) == 2 + len(_env.SETTINGS)
    assert all(f"`{name}`" in _env.describe() for name in _env.SETTINGS)


@pytest.mark.parametrize(
    "name, raw, expected",
    [
        ("BOOK_MODE", "full", "full"),
        ("BOOK_MODE", " fast ", "fast"),  # stripped
        ("BOOK_THREADS", "1", 1),
        ("BOOK_THREADS", str(CORES), CORES),
        ("BOOK_WORKERS", "1", 1),
        ("BOOK_DEVICE", "cpu", "cpu"),
        ("BOOK_DEVICE", "cuda:1", "cuda:1"),
        ("BOOK_SCHEDULER", "tcp://10.0.0.2:8786", "tcp://10.0.0.2:8786"),
        ("BOOK_TIMEOUT_SCALE", "2.5", 2.5),
        ("BOOK_BUILD", "1", True),
        ("BOOK_MODE", "", None),  # empty is unset
    ],
)
def test_read_accepts(name, raw, expected):
    assert _env.read(name, {name: raw}) == expected


@pytest.mark.parametrize(
    "name, raw, allowed",
    [
        ("BOOK_MODE", "slow", "must be 'fast' or 'full'"),
        ("BOOK_MODE", "FULL", "must be 'fast' or 'full'"),
        ("BOOK_THREADS", "0", f"from 1 to {CORES}"),
        ("BOOK_THREADS", str(CORES + 1), f"from 1 to {CORES}"),
        ("BOOK_THREADS", "two", "whole number"),
        ("BOOK_THREADS", "1.5", "whole number"),
        ("BOOK_WORKERS", "-1", "whole number"),
        ("BOOK_DEVICE", "gpu", "'cpu', 'cuda' or 'cuda:<index>'"),
        ("BOOK_SCHEDULER", "localhost:8786", "tcp://host:8786"),
        ("BOOK_TIMEOUT_SCALE", "0", "above 0"),
        ("BOOK_TIMEOUT_SCALE", "inf", "above 0"),
        ("BOOK_TIMEOUT_SCALE", "nan", "above 0"),
        ("BOOK_BUILD", "yes", "must be '1' or unset"),
        ("BOOK_RESULTS", "results", "absolute path"),
        ("BOOK_FASHION_MNIST", "/no/such/folder", "existing folder"),
        ("BOOK_EXECUTION_LOCK", "lock", "absolute path"),
        ("BOOK_FORCE_FAIL", "C404", "unknown: 'C404'"),
        ("BOOK_FORCE_FAIL", ",", "registered check ids"),
    ],
)
def test_read_refuses_naming_variable_value_and_what_is_allowed(name, raw, allowed):
    with pytest.raises(ValueError) as info:
        _env.read(name, {name: raw})
    message = str(info.value)
    assert message.startswith(f"{name}={raw.strip()!r}: ")
    assert allowed in message
    assert f"unset: {_env.SETTINGS[name].unset}" in message


def test_folders_must_hold_their_files(tmp_path):
    fashion = _folder(tmp_path / "f", _env._FASHION_FILES[:3])
    with pytest.raises(ValueError, match=re.escape(_env._FASHION_FILES[3])):
        _env.read("BOOK_FASHION_MNIST", {"BOOK_FASHION_MNIST": str(fashion)})
    _folder(fashion, _env._FASHION_FILES)
    assert _env.read_path("BOOK_FASHION_MNIST", {"BOOK_FASHION_MNIST": str(fashion)}) == fashion
    cifar = _folder(tmp_path / "c" / "cifar-10-batches-py", _env._CIFAR_FILES).parent
    assert _env.read_path("BOOK_CIFAR10", {"BOOK_CIFAR10": str(cifar)}) == cifar  # or its subfolder
    with pytest.raises(ValueError, match="BOOK_CIFAR10=.*test_batch"):
        _env.read("BOOK_CIFAR10", {"BOOK_CIFAR10": str(fashion)})
    assert _env.read_path("BOOK_RESULTS", {"BOOK_RESULTS": str(tmp_path)}) == tmp_path


def test_force_fail_takes_registered_ids_and_suggests_the_nearest():
    some = sorted(_env.check_ids())[:2]
    assert _env.read("BOOK_FORCE_FAIL", {"BOOK_FORCE_FAIL": " , ".join(some)}) == tuple(some)
    assert "C1" in _env.check_ids()
    with pytest.raises(ValueError, match=r"'C1x' \(did you mean 'C1'"):
        _env.read("BOOK_FORCE_FAIL", {"BOOK_FORCE_FAIL": "C1x"})


def test_check_all_refuses_unknown_names_and_suggests_the_nearest():
    assert _env.check_all({"PATH": "/bin", "BOOK_MODE": "full"}) == {"BOOK_MODE": "full"}
    with pytest.raises(ValueError, match=r"BOOK_THREAD is not .*mean BOOK_THREADS"):
        _env.check_all({"BOOK_THREAD": "1"})
    with pytest.raises(ValueError, match="BOOK_MODE='slow'"):
        _env.check_all({"BOOK_THREADS": "1", "BOOK_MODE": "slow"})


def test_computing_values_are_what_the_cache_guard_hashes(tmp_path):
    assert _env.computing_values({})["BOOK_MODE"] == "fast"
    assert _env.computing_values({"BOOK_MODE": "fast"}) == _env.computing_values({})
    names = set(_env.computing_values({}))
    assert names == {n for n, s in _env.SETTINGS.items() if s.computes}
    assert "BOOK_WORKERS" not in names and "BOOK_TIMEOUT_SCALE" not in names
    a = _env.computing_values({"BOOK_FORCE_FAIL": "C1,C2"})
    assert a == _env.computing_values({"BOOK_FORCE_FAIL": "C2, C1"})  # order does not matter
    link = tmp_path / "link"
    link.symlink_to(tmp_path)
    assert _env.computing_values({"BOOK_RESULTS": str(link)})["BOOK_RESULTS"] == str(
        tmp_path.resolve()
    )


def test_bad_arguments():
    with pytest.raises(ValueError, match="name must be one of"):
        _env.read("BOOK_NOPE", {})
    with pytest.raises(ValueError, match="environ must be a mapping"):
        _env.read("BOOK_MODE", ["BOOK_MODE=full"])
    with pytest.raises(ValueError, match="must be a string"):
        _env.read("BOOK_MODE", {"BOOK_MODE": 1})
    with pytest.raises(ValueError, match="type int"):
        _env.read_int("BOOK_MODE", {"BOOK_MODE": "full"})


def test_the_readme_lists_every_setting_as_the_module_does():
    readme = (_env._ROOT / "README.md").read_text()
    assert _env.describe() in readme  # `python -m lib._env --table` writes the README's table


@pytest.mark.parametrize(
    ("environ", "plan"),
    [
        ({}, (4, 1)),  # one kernel of one thread per core
        ({"BOOK_THREADS": "2"}, (2, 2)),
        ({"BOOK_THREADS": "3"}, (1, 3)),
        ({"BOOK_PAGE_JOBS": "1"}, (1, 4)),
        ({"BOOK_PAGE_JOBS": "3"}, (3, 1)),
        ({"BOOK_PAGE_JOBS": "2", "BOOK_THREADS": "1"}, (2, 1)),  # as set, cores left idle
        ({"BOOK_PAGE_JOBS": "2", "BOOK_THREADS": "2"}, (2, 2)),
    ],
)
def test_page_plan_shares_the_cores_among_the_kernels(monkeypatch, environ, plan):
    monkeypatch.setattr(_env.os, "cpu_count", lambda: 4)
    jobs, threads = _env.page_plan(environ)
    assert (jobs, threads) == plan
    assert jobs * threads <= 4


def test_page_plan_refuses_more_threads_than_cores_naming_both(monkeypatch):
    monkeypatch.setattr(_env.os, "cpu_count", lambda: 4)
    with pytest.raises(ValueError, match=r"BOOK_PAGE_JOBS=3 x BOOK_THREADS=2: .* 4 cores"):
        _env.page_plan({"BOOK_PAGE_JOBS": "3", "BOOK_THREADS": "2"})
    with pytest.raises(ValueError, match="BOOK_PAGE_JOBS='5': must be a whole number from 1 to 4"):
        _env.page_plan({"BOOK_PAGE_JOBS": "5"})
