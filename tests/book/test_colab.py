"""The notebooks' set-up cell installs on Colab as Colab is now: Python 3.13 on x86-64 Linux
(since August 2026), glibc 2.35 (Ubuntu 22.04) or later.

The set-up cell itself is run, with ``lib`` hidden and ``subprocess.run`` recorded, so the test
resolves exactly the pip commands a reader's Colab would run (``launch.setup_cell``). Each is then
resolved by pip for that target without installing anything (``--dry-run`` with
``--python-version 3.13 --only-binary=:all:`` and Colab's platform tags): a pin with no wheel for
Python 3.13, a dependency that cannot be met there, or a ``requires-python`` of ``lib`` that
excludes 3.13 fails it. It needs PyPI (which the book's machines and CI reach); elsewhere it is
skipped, except under ``CI=true``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import subprocess
import sys

import pytest

from book_sphinx import launch

from conftest import ROOT

PYTHON = "3.13"
#: Colab's wheel tags: CPython 3.13 on x86-64 Linux with glibc 2.35 (pip does not widen a
#: ``--platform`` to older glibc versions itself, so every manylinux tag up to 2.35 is listed).
TAGS = [
    "--python-version", PYTHON, "--implementation", "cp",
    "--abi", "cp313", "--abi", "abi3", "--abi", "none",
    *[arg for minor in range(35, 4, -1) for arg in ("--platform", f"manylinux_{2}_{minor}_x86_64")],
    "--platform", "manylinux2014_x86_64", "--platform", "manylinux2010_x86_64",
    "--platform", "manylinux1_x86_64", "--platform", "linux_x86_64", "--platform", "any",
]  # fmt: skip


def pypi_reachable() -> bool:
    try:
        socket.create_connection(("pypi.org", 443), timeout=5).close()
    except OSError:
        return False
    return True


def setup_cell_commands(tmp_path, monkeypatch) -> list[list[str]]:
    """The pip commands the set-up cell runs where ``lib`` is missing (its clone is the
    checkout, linked where the cell clones it)."""
    (tmp_path / "one-layer-book").symlink_to(ROOT)
    calls: list[list[str]] = []
    real_find_spec = importlib.util.find_spec

    def find_spec(name, *args, **kwargs):
        return None if name == "lib" else real_find_spec(name, *args, **kwargs)

    with monkeypatch.context() as patch:
        patch.chdir(tmp_path)
        patch.setattr(subprocess, "run", lambda args, **kw: calls.append(list(args)))
        patch.setattr(importlib.util, "find_spec", find_spec)
        patch.setattr(sys, "path", list(sys.path))
        exec(launch.setup_cell("someone/one-layer-book", "main"), {})
    return [call for call in calls if call[1:3] == ["-m", "pip"]]


def colab_arguments(args: list[str]) -> list[str]:
    """A set-up cell's pip arguments for a dry run: ``--quiet`` dropped, and the editable clone
    (``-e one-layer-book``) as a plain local folder, which pip can resolve for another target."""
    out, editable = [], False
    for arg in args:
        if arg == "-e":
            editable = True
        elif arg != "--quiet":
            out.append(os.path.join(".", arg) if editable else arg)
            editable = False
    return out


@pytest.mark.build
def test_the_set_up_cell_resolves_for_colab_on_python_3_13(tmp_path, monkeypatch):
    if not pypi_reachable():
        if os.environ.get("CI") == "true":
            pytest.fail("PyPI is out of reach: CI=true requires this check")
        pytest.skip("PyPI is out of reach: the Colab install cannot be resolved offline")
    commands = setup_cell_commands(tmp_path, monkeypatch)
    assert len(commands) == 2, commands  # the runtime pins, then the data, --no-deps, and lib
    pinned = {arg.split("==")[0]: arg.split("==")[1] for arg in commands[0] if "==" in arg}
    assert set(pinned) == set(launch.RUNTIME_PACKAGES), pinned  # every package lib imports
    env = {
        key: value for key, value in os.environ.items()
        if key not in ("PIP_CONSTRAINT", "PIP_FIND_LINKS", "PIP_EXTRA_INDEX_URL", "PIP_INDEX_URL")
    }  # fmt: skip
    # a machine's own pip configuration (local wheel folders, constraints) is not Colab's
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_RETRIES="0", PIP_TIMEOUT="30",
               PIP_DISABLE_PIP_VERSION_CHECK="1")  # fmt: skip
    for number, command in enumerate(commands):
        report = tmp_path / f"report-{number}.json"
        args = [
            sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed",
            "--target", str(tmp_path / "target"), "--report", str(report),
            "--only-binary=:all:", *TAGS,
            *colab_arguments(command[4:]),
        ]  # fmt: skip
        done = subprocess.run(
            args, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=1200
        )
        assert done.returncode == 0, (command, done.stderr[-4000:])
        resolved = {
            item["metadata"]["name"].lower(): item["metadata"]["version"]
            for item in json.loads(report.read_text())["install"]
        }
        for name, version in pinned.items() if number == 0 else ():
            # the pin itself, or PyTorch's CPU build of it (2.13.0+cpu) where that index is reached
            assert resolved[name].split("+")[0] == version, (name, resolved[name])
        if number == 1:
            assert "one-layer-attention-book" in resolved  # lib, whose requires-python admits 3.13
