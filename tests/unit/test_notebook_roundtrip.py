"""Opening and saving a chapter in JupyterLab (jupytext's contents manager) changes nothing.

JupyterLab reads and writes ``chapters/*.md`` through jupytext's contents manager. Without the
repository's ``jupytext.toml`` a save dropped ``budget_seconds`` and ``mystnb`` from the front
matter, added a version stamp and re-wrapped cell options. Each notebook chapter is read and
written here exactly as JupyterLab does, into a copy of the book, and must come back byte for byte.
"""

from __future__ import annotations

import shutil

import jupytext
import pytest

from conftest import ROOT

NOTEBOOKS = sorted(
    p
    for p in (ROOT / "chapters").glob("*.md")
    if p.read_text().startswith("---\n") and "jupytext:" in p.read_text().split("\n---\n", 1)[0]
)


@pytest.fixture(scope="module")
def contents_manager(tmp_path_factory):
    pytest.importorskip("jupyter_server", reason="requirements-dev.txt (make test installs it)")
    from jupyter_server.services.contents.filemanager import FileContentsManager
    from jupytext.sync_contentsmanager import build_sync_jupytext_contents_manager_class

    root = tmp_path_factory.mktemp("book")
    shutil.copy(ROOT / "jupytext.toml", root / "jupytext.toml")
    shutil.copytree(ROOT / "chapters", root / "chapters")
    return build_sync_jupytext_contents_manager_class(FileContentsManager)(root_dir=str(root)), root


def test_every_notebook_chapter_is_covered():
    assert {p.stem for p in NOTEBOOKS} >= {
        "01_boltzmann",
        "05_max_affine_partition",
        "epilogue",
        "reproducibility",
    }


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_save_from_jupyterlab_is_byte_identical(contents_manager, path):
    manager, root = contents_manager
    relative = path.relative_to(ROOT).as_posix()
    before = (root / relative).read_bytes()
    model = manager.get(relative, content=True, type="notebook")
    assert model["type"] == "notebook" and model["content"]["cells"]
    manager.save(model, relative)
    after = (root / relative).read_bytes()
    assert after == before, f"{relative} changed on save; store it in the form jupytext writes"
    meta = jupytext.read(root / relative).metadata
    original = jupytext.read(path).metadata
    for key in ("budget_seconds", "mystnb"):
        assert meta.get(key) == original.get(key)
