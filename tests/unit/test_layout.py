"""The hand-kept lists of the package layout agree with the tree: every public module of ``lib``,
``lib.book``, ``lib.experiments`` and ``lib.experiments.noise`` is in its package's ``__all__``,
reachable as an attribute after ``import lib`` (the packages load submodules on first use), and
documented on the API page."""

import importlib
import pkgutil
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("lib", "lib.book", "lib.experiments", "lib.experiments.noise")


def public_modules(package: str) -> set[str]:
    path = ROOT.joinpath(*package.split("."))
    return {m.name for m in pkgutil.iter_modules([str(path)]) if not m.name.startswith("_")}


@pytest.mark.parametrize("package", PACKAGES)
def test_all_names_every_public_module_and_each_resolves(package):
    module = importlib.import_module(package)
    assert set(module.__all__) == public_modules(package)
    for name in module.__all__:
        assert getattr(module, name).__name__ == f"{package}.{name}"
    with pytest.raises(AttributeError, match="no attribute 'nonexistent'"):
        module.nonexistent  # noqa: B018


def test_the_api_page_documents_every_public_module():
    documented = set(re.findall(r"automodule:: ([\w.]+)", (ROOT / "chapters/api.md").read_text()))
    modules = {f"{p}.{m}" for p in PACKAGES for m in public_modules(p)} - {
        "lib.book",
        "lib.experiments",
        "lib.experiments.noise",
    }
    assert modules == documented
