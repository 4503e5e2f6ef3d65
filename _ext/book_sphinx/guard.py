"""Stale-state guards: no page shows results of old code, no page keeps an old table of contents.

Two fingerprints are kept in ``_build/`` and compared at ``config-inited``:

* **inputs** — the bytes of ``lib/``, ``requirements*.txt`` and ``*.lock``, ``environment.yml``,
  ``_config.yml``, the environment variables ``lib`` reads (``BOOK_MODE``, ``BOOK_THREADS``,
  ``BOOK_DEVICE``, the dataset and artifact folders) and which optional datasets are present.
  jupyter-cache re-runs a chapter only when its code cells change, so when these change the
  execution cache and the doctrees are deleted and every chapter executes again.
* **site** — the bytes of ``_toc.yml`` and of this extension, and the list of source pages.
  When a chapter is renamed, added or removed, or the table of contents is reordered, Sphinx's
  incremental build keeps the old navigation on unchanged pages; so the HTML output and the
  doctrees are deleted (the execution cache is kept: no chapter re-executes for this).

A failed or killed build keeps the execution cache and its inputs stamp (the cache holds only
chapters that succeeded with the current inputs, and the stamp is written as soon as the cache is
cleared for new inputs) but loses the site stamp, so the next build re-reads every page and
reports the failure again instead of finding nothing out of date.
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
#: Environment variables that change what the chapters compute (lib.book.config, lib.data,
#: lib.experiments.store) or record (``BOOK_FORCE_FAIL``, read by lib.book.checks: a forced-failure
#: build must neither reuse nor leave behind cached chapters of an ordinary one).
ENV_INPUTS = (
    "BOOK_MODE",
    "BOOK_FORCE_FAIL",
    "BOOK_THREADS",
    "BOOK_DEVICE",
    "BOOK_FASHION_MNIST",
    "BOOK_CIFAR10",
    "BOOK_RESULTS",
)
#: Marker files of the optional datasets: Chapter 5 runs on those present, so their arrival or
#: departure must re-execute it.
DATA_MARKERS = (
    "/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz",
    "_data/fashion-mnist/train-images-idx3-ubyte.gz",
)

__all__ = ["inputs_hash", "site_hash", "setup"]


def _digest(root: Path, files, extra: str = "") -> str:
    digest = hashlib.sha256()
    for path in sorted(set(files)):
        digest.update(
            path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0"
        )
    digest.update(extra.encode())
    return digest.hexdigest()


def _root(root) -> Path:
    if not isinstance(root, str | os.PathLike) or not str(root) or not Path(root).is_dir():
        raise ValueError(f"root must be an existing folder, got {root!r}")
    return Path(root).resolve()


def inputs_hash(root: str | os.PathLike) -> str:
    """SHA-256 of what the chapters' outputs depend on besides their own code cells.

    The relative paths and bytes of every file under ``lib/`` (caches excluded), of the stored
    results the chapters show (``results/**/*.json``, written by ``make full`` and ``make bench``),
    of ``requirements*.txt``, ``requirements*.lock``, ``environment.yml`` and ``_config.yml``; the
    values of :data:`ENV_INPUTS` (``BOOK_MODE`` unset counts as ``fast``); which
    :data:`DATA_MARKERS` exist.

    Raises:
        ValueError: if ``root`` is not an existing folder.
    """
    root = _root(root)
    files = [p for p in (root / "lib").rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    files += [p for p in (root / "results").rglob("*.json") if ".partial" not in p.parts]
    files += list(root.glob("requirements*.txt")) + list(root.glob("requirements*.lock"))
    files += [p for p in (root / "environment.yml", root / "_config.yml") if p.is_file()]
    env = {name: os.environ.get(name, "").strip() for name in ENV_INPUTS}
    env["BOOK_MODE"] = env["BOOK_MODE"] or "fast"
    present = [marker for marker in DATA_MARKERS if (root / marker).is_file()]
    return _digest(root, files, repr(sorted(env.items())) + repr(present))


def _source_pages(root: Path) -> list[str]:
    pages = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith((".", "_build")) and d != "node_modules"]
        pages += [
            (Path(folder) / f).relative_to(root).as_posix()
            for f in files
            if f.endswith(_SOURCE_SUFFIXES)
        ]
    return sorted(pages)


def site_hash(root: str | os.PathLike) -> str:
    """SHA-256 of the site's structure: ``_toc.yml``, ``_static/`` (the site's CSS and scripts,
    which Sphinx copies only when a page is rewritten), ``references.bib``, this extension's code,
    the source page names.

    Raises:
        ValueError: if ``root`` is not an existing folder.
    """
    root = _root(root)
    files = [p for p in (root / "_toc.yml", root / "references.bib") if p.is_file()]
    files += [p for p in (root / "_static").rglob("*") if p.is_file()]
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


def _clear_stale(app: Sphinx, config) -> None:
    build = Path(app.outdir).parent
    cache = Path(app.srcdir, config.nb_execution_cache_path or build / ".jupyter_cache").resolve()
    stamps = {
        "inputs": (cache.parent / INPUTS_STAMP, inputs_hash(app.srcdir)),
        "site": (build / SITE_STAMP, site_hash(app.srcdir)),
    }
    app._book_stamps = stamps
    old = {
        name: path.read_text().strip() if path.is_file() else None
        for name, (path, _) in stamps.items()
    }
    inputs_path, inputs_digest = stamps["inputs"]
    if old["inputs"] != inputs_digest:
        if cache.exists():
            LOGGER.info(
                "book_sphinx: %s: clearing %s",
                "lib/, results/, the pins, _config.yml or a BOOK_* setting changed"
                if old["inputs"] is not None
                else "no record of the inputs this execution cache was made with",
                cache,
            )
        shutil.rmtree(cache, ignore_errors=True)
        shutil.rmtree(app.doctreedir, ignore_errors=True)
        # The emptied cache belongs to the current inputs from now on: recorded at once, so a
        # build killed before its end does not make the next one clear the chapters it cached.
        inputs_path.parent.mkdir(parents=True, exist_ok=True)
        inputs_path.write_text(inputs_digest + "\n")
    if old["site"] != stamps["site"][1]:
        if old["site"] is not None:
            LOGGER.info(
                "book_sphinx: the table of contents, the pages or the extension changed: "
                "rebuilding the HTML from clean (the execution cache is kept)"
            )
        _empty(Path(app.outdir))
        shutil.rmtree(app.doctreedir, ignore_errors=True)
    stamps["site"][0].unlink(missing_ok=True)  # written again only by a clean build


def _write(app: Sphinx, exception) -> None:
    """Keep the fingerprints of this build.

    The inputs stamp is kept even after a failed build: the cache was cleared at the start if the
    inputs had changed, and jupyter-cache stores only chapters that executed successfully, so every
    cached result belongs to the current inputs. The site stamp is kept only after a clean build,
    and a failed build deletes the doctrees, so the next build re-reads every page and reports the
    failure again instead of finding nothing out of date.
    """
    stamps = getattr(app, "_book_stamps", None)
    if not stamps:
        return
    clean = exception is None and app.statuscode == 0
    for name, (path, digest) in stamps.items():
        if clean or name == "inputs":
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(digest + "\n")
    if not clean:
        shutil.rmtree(app.doctreedir, ignore_errors=True)


def setup(app: Sphinx) -> None:
    app.connect("config-inited", _clear_stale, priority=100)
    app.connect("build-finished", _write, priority=900)  # after the execution checks set statuscode
