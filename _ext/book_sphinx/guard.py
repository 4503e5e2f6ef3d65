"""Stale-state guards: no page shows results of old code, no page keeps an old table of contents.

Two fingerprints are kept in ``_build/`` and compared at ``config-inited``:

* **inputs** — the bytes of ``lib/``, ``requirements*.txt``, ``environment.yml``,
  ``_config.yml`` and the book mode (``BOOK_MODE``). jupyter-cache re-runs a chapter only when its
  code cells change, so when these change the execution cache and the doctrees are deleted and
  every chapter executes again.
* **site** — the bytes of ``_toc.yml`` and of this extension, and the list of source pages.
  When a chapter is renamed, added or removed, or the table of contents is reordered, Sphinx's
  incremental build keeps the old navigation on unchanged pages; so the HTML output and the
  doctrees are deleted (the execution cache is kept: no chapter re-executes for this).

Both stamps are written only after a clean build; a failed build deletes them, so the next
build starts from scratch and reports the failure again instead of finding nothing out of date.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.util import logging

LOGGER = logging.getLogger(__name__)
INPUTS_STAMP = ".jupyter_cache.inputs-sha256"
SITE_STAMP = ".site-sha256"
_HERE = Path(__file__).resolve().parent
_SOURCE_SUFFIXES = (".md", ".ipynb", ".rst")

__all__ = ["inputs_hash", "site_hash", "setup"]


def _digest(root: Path, files, extra: str = "") -> str:
    digest = hashlib.sha256()
    for path in sorted(set(files)):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    digest.update(extra.encode())
    return digest.hexdigest()


def _root(root) -> Path:
    if not isinstance(root, str | os.PathLike) or not str(root) or not Path(root).is_dir():
        raise ValueError(f"root must be an existing folder, got {root!r}")
    return Path(root).resolve()


def inputs_hash(root: str | os.PathLike) -> str:
    """SHA-256 of what the chapters' outputs depend on besides their own code cells.

    The relative paths and bytes of every file under ``lib/`` (caches excluded), of
    ``requirements*.txt``, ``environment.yml`` and ``_config.yml``, and the book mode.

    Raises:
        ValueError: if ``root`` is not an existing folder.
    """
    root = _root(root)
    files = [p for p in (root / "lib").rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    files += list(root.glob("requirements*.txt"))
    files += [p for p in (root / "environment.yml", root / "_config.yml") if p.is_file()]
    mode = os.environ.get("BOOK_MODE", "").strip() or "fast"
    return _digest(root, files, f"BOOK_MODE={mode}")


def _source_pages(root: Path) -> list[str]:
    pages = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith((".", "_build")) and d != "node_modules"]
        pages += [(Path(folder) / f).relative_to(root).as_posix() for f in files if f.endswith(_SOURCE_SUFFIXES)]
    return sorted(pages)


def site_hash(root: str | os.PathLike) -> str:
    """SHA-256 of the site's structure: ``_toc.yml``, this extension's code, the source page names.

    Raises:
        ValueError: if ``root`` is not an existing folder.
    """
    root = _root(root)
    files = [p for p in (root / "_toc.yml",) if p.is_file()]
    digest = hashlib.sha256(_digest(root, files).encode())
    for path in sorted(_HERE.rglob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    digest.update("\n".join(_source_pages(root)).encode())
    return digest.hexdigest()


def _empty(folder: Path) -> None:
    if folder.is_dir():
        for child in folder.iterdir():
            if child.is_dir() and not child.is_symlink():
                shutil.rmtree(child, ignore_errors=True)
            else:
                child.unlink(missing_ok=True)


def _check(app: Sphinx, config) -> None:
    build = Path(app.outdir).parent
    cache = Path(app.srcdir, config.nb_execution_cache_path or build / ".jupyter_cache").resolve()
    stamps = {"inputs": (cache.parent / INPUTS_STAMP, inputs_hash(app.srcdir)),
              "site": (build / SITE_STAMP, site_hash(app.srcdir))}
    app._book_stamps = stamps
    old = {name: path.read_text().strip() if path.is_file() else None for name, (path, _) in stamps.items()}
    if old["inputs"] != stamps["inputs"][1]:
        if cache.exists():
            LOGGER.info("book_sphinx: lib/, the pins, _config.yml or the mode changed: clearing %s", cache)
        shutil.rmtree(cache, ignore_errors=True)
        shutil.rmtree(app.doctreedir, ignore_errors=True)
    if old["site"] != stamps["site"][1]:
        if old["site"] is not None:
            LOGGER.info("book_sphinx: the table of contents, the pages or the extension changed: "
                        "rebuilding the HTML from clean (the execution cache is kept)")
        _empty(Path(app.outdir))
        shutil.rmtree(app.doctreedir, ignore_errors=True)
    for path, _ in stamps.values():
        path.unlink(missing_ok=True)


def _write(app: Sphinx, exception) -> None:
    stamps = getattr(app, "_book_stamps", None)
    if not stamps:
        return
    if exception is None and app.statuscode == 0:
        for path, digest in stamps.values():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(digest + "\n")
    else:
        shutil.rmtree(app.doctreedir, ignore_errors=True)


def setup(app: Sphinx) -> None:
    app.connect("config-inited", _check, priority=100)
    app.connect("build-finished", _write, priority=900)  # after the execution checks set statuscode
