"""The hand-kept lists of the package layout agree with the tree: every public module of ``lib``,
``lib.book`` and ``lib.experiments`` is in its package's ``__all__``, reachable as an attribute
after ``import lib`` (the packages load submodules on first use), and documented on the API
page; ``lib.datasets`` re-exports exactly the public names of its modules, each documented on
the API page."""

import importlib
import pkgutil
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("lib", "lib.book", "lib.experiments")
#: Packages whose ``__all__`` re-exports the public names of their modules (``datasets.load_mnist``)
#: rather than naming the modules.
FACADES = ("lib.datasets",)


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


@pytest.mark.parametrize("package", FACADES)
def test_a_facade_exports_the_public_names_of_its_modules(package):
    module = importlib.import_module(package)
    names = [
        name
        for m in sorted(public_modules(package))
        for name in importlib.import_module(f"{package}.{m}").__all__
    ]
    assert sorted(module.__all__) == sorted(names) and len(set(names)) == len(names)
    for m in public_modules(package):
        sub = importlib.import_module(f"{package}.{m}")
        assert getattr(module, m) is sub
        for name in sub.__all__:
            assert getattr(module, name) is getattr(sub, name)


def test_the_api_page_documents_every_public_module():
    documented = set(re.findall(r"automodule:: ([\w.]+)", (ROOT / "chapters/api.md").read_text()))
    modules = {f"{p}.{m}" for p in PACKAGES + FACADES for m in public_modules(p)} - {
        "lib.book",
        "lib.experiments",
        *FACADES,
    }
    assert modules == documented
