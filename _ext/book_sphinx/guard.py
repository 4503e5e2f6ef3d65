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

Nothing a reader has is deleted before a build can replace it:

* **Settings first.** Every ``BOOK_*`` variable is validated (:func:`lib._env.check_all`) before
  anything is touched: a misspelt name or value stops the build with one line naming it.
* **The site is swapped, not emptied.** When the site must be rebuilt from clean, the old HTML
  folder is moved aside (``_build/html.previous``) and the build writes a fresh one; a build that
  stops with an error (an exception, not a failing chapter, whose page is removed as always) puts
  the previous site back, and a build that completes deletes it.
* **A downloaded notebook beside its chapter** (``chapters/01_boltzmann.ipynb`` next to
  ``01_boltzmann.md``: two sources for one page, which crashes myst-nb, MyST-NB issue 363) is
  ignored, and the build says so in one line; two sources of which none is Markdown stop the
  build naming both.
* **A damaged execution cache** (its database unreadable) is cleared, saying so, and every chapter
  executes again, instead of a database traceback.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import sys
from contextlib import closing
from pathlib import Path
from typing import NoReturn

from sphinx.application import Sphinx
from sphinx.util import logging

from lib import _env

LOGGER = logging.getLogger(__name__)
INPUTS_STAMP = ".jupyter_cache.inputs-sha256"
SITE_STAMP = ".site-sha256"
_HERE = Path(__file__).resolve().parent
_SOURCE_SUFFIXES = (".md", ".ipynb", ".rst")
#: Environment variables that change what the chapters compute (lib.runtime, lib.datasets,
#: lib.experiments.store) or record (``BOOK_FORCE_FAIL``, read by lib.book.checks: a forced-failure
#: build must neither reuse nor leave behind cached chapters of an ordinary one): those that
#: ``lib._env`` marks as computing.
ENV_INPUTS = tuple(name for name, s in _env.SETTINGS.items() if s.computes)
#: Marker files of the optional datasets: Chapter 5 runs on those present, so their arrival or
#: departure must re-execute it.
DATA_MARKERS = (
    "/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz",
    "_data/fashion-mnist/train-images-idx3-ubyte.gz",
)

__all__ = ["inputs_hash", "site_hash", "shadowed_sources", "cache_damage", "setup"]


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
    results the chapters show (``**/*.json`` of the results folder: ``BOOK_RESULTS`` when set, else
    ``results/``; written by ``make full`` and ``make bench``; not :data:`UNREAD_RESULTS`), of
    ``requirements*.txt``, ``requirements*.lock``, ``environment.yml`` and ``_config.yml``; the
    normalised values of :data:`ENV_INPUTS` (``lib._env.computing_values``: ``BOOK_MODE`` unset
    counts as ``fast``, paths resolved); which :data:`DATA_MARKERS` exist.

    Raises:
        ValueError: if ``root`` is not an existing folder, or a ``BOOK_*`` variable is refused
            (``lib._env.check_all``).
    """
    root = _root(root)
    env = _env.computing_values()
    results = Path(env["BOOK_RESULTS"]) if env["BOOK_RESULTS"] else root / "results"
    files = [p for p in (root / "lib").rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    stored = [
        p
        for p in results.rglob("*.json")
        if not {".partial", *UNREAD_RESULTS} & set(p.relative_to(results).parts)
    ]
    files += list(root.glob("requirements*.txt")) + list(root.glob("requirements*.lock"))
    files += [p for p in (root / "environment.yml", root / "_config.yml") if p.is_file()]
    present = [marker for marker in DATA_MARKERS if (root / marker).is_file()]
    extra = "".join(
        p.relative_to(results).as_posix() + "\0" + hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(stored)
    )
    return _digest(root, files, repr(sorted(env.items())) + repr(present) + extra)


#: Folders of stored results that no executed page reads: ``make mutate``'s outcome, which the
#: claims page (not executed) shows through its directive. A new outcome rebuilds that page, not
#: every chapter.
UNREAD_RESULTS = ("mutation",)


def _all_source_pages(root: Path) -> list[str]:
    pages = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith((".", "_build")) and d != "node_modules"]
        pages += [
            (Path(folder) / f).relative_to(root).as_posix()
            for f in files
            if f.endswith(_SOURCE_SUFFIXES)
        ]
    return sorted(pages)


def shadowed_sources(root: str | os.PathLike) -> dict[str, str]:
    """Source files that a Markdown page of the same name shadows: ``{ignored: kept}``.

    A notebook downloaded from the site and saved beside its chapter
    (``chapters/01_boltzmann.ipynb`` next to ``chapters/01_boltzmann.md``) is a second source for
    one page; Sphinx picks one and myst-nb crashes with an ``IndexError`` (MyST-NB issue 363). The
    Markdown page is the chapter's source, so the other file is ignored.

    Raises:
        ValueError: if ``root`` is not an existing folder, or for two sources of one page of which
            none is Markdown (naming both: which one is meant cannot be guessed).
    """
    root = _root(root)
    by_page: dict[str, list[str]] = {}
    for page in _all_source_pages(root):
        by_page.setdefault(page.rsplit(".", 1)[0], []).append(page)
    out = {}
    for stem, pages in sorted(by_page.items()):
        if len(pages) < 2:
            continue
        markdown = f"{stem}.md"
        if markdown not in pages:
            raise ValueError(
                f"{' and '.join(pages)} are two sources for the page {stem}: keep one of them"
            )
        out |= {page: markdown for page in pages if page != markdown}
    return out


def _source_pages(root: Path) -> list[str]:
    shadowed = shadowed_sources(root)
    return [page for page in _all_source_pages(root) if page not in shadowed]


def cache_damage(cache: str | os.PathLike) -> str | None:
    """Why the execution cache's database (``<cache>/global.db``) cannot be read, or ``None``
    when it reads (or does not exist yet).

    jupyter-cache opens the database on every build and a damaged one ends the build in an
    SQLAlchemy traceback that names neither the file nor a fix.
    """
    db = Path(cache) / "global.db"
    if not db.exists():
        return None
    try:
        with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as connection:
            verdict = connection.execute("PRAGMA quick_check").fetchone()
    except sqlite3.Error as exc:
        return f"{type(exc).__name__}: {exc}"
    if not verdict or verdict[0] != "ok":
        return f"integrity check: {verdict[0] if verdict else 'no answer'}"
    return None


def site_hash(root: str | os.PathLike) -> str:
    """SHA-256 of the site's structure: ``_toc.yml``, ``_static/`` (the site's CSS and scripts,
    which Sphinx copies only when a page is rewritten), ``references.bib``, this extension's code
    and the files it serves, the source page names.

    Raises:
        ValueError: if ``root`` is not an existing folder.
    """
    root = _root(root)
    files = [p for p in (root / "_toc.yml", root / "references.bib") if p.is_file()]
    files += [p for p in (root / "_static").rglob("*") if p.is_file()]
    digest = hashlib.sha256(_digest(root, files).encode())
    # the extension's code and the files it serves (static/: its scripts, plotly.js, the search
    # scorer that Sphinx writes into language_data.js only when the site is rewritten)
    for path in sorted(_HERE.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            name = path.relative_to(_HERE).as_posix()
            digest.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
    digest.update("\n".join(_source_pages(root)).encode())
    return digest.hexdigest()


def _previous(outdir: Path) -> Path:
    """Where a site being rebuilt from clean waits until the new one is complete."""
    return outdir.with_name(outdir.name + ".previous")


def _set_aside(outdir: Path) -> None:
    """Move the output folder aside (:func:`_previous`) and leave an empty one in its place.

    A ``.previous`` folder already there is the last complete site (a build killed after setting
    it aside never put it back): it is kept and the partial output is dropped.
    """
    previous = _previous(outdir)
    if previous.exists():
        shutil.rmtree(outdir, ignore_errors=True)
    elif outdir.is_dir() and any(outdir.iterdir()):
        outdir.rename(previous)
    outdir.mkdir(parents=True, exist_ok=True)


def _stop(reason: str) -> NoReturn:
    """End the build before anything is read or removed, with one line and exit status 2.

    A ``SystemExit``, not a Sphinx error: jupyter-book turns any exception into a traceback of
    forty lines around the one that matters.
    """
    print(f"book_sphinx: {reason}", file=sys.stderr, flush=True)
    raise SystemExit(2)


def _check_settings() -> None:
    try:
        _env.check_all()
    except ValueError as exc:
        _stop(str(exc))


def _ignore_shadowed(app: Sphinx, config) -> None:
    try:
        shadowed = shadowed_sources(app.srcdir)
    except ValueError as exc:
        _stop(str(exc))
    for ignored, kept in shadowed.items():
        LOGGER.info(
            f"book_sphinx: {ignored} is ignored: {kept} is that page's source (a notebook "
            "downloaded from the site runs from anywhere; move it out of the book to silence this)"
        )
        config.exclude_patterns.append(ignored)


def _clear_stale(app: Sphinx, config) -> None:
    _check_settings()
    _ignore_shadowed(app, config)
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
    damage = cache_damage(cache)
    if damage is not None:
        LOGGER.info(
            f"book_sphinx: the execution cache {cache} is damaged ({damage}): cleared, every "
            "chapter executes again"
        )
    if old["inputs"] != inputs_digest or damage is not None:
        if cache.exists() and damage is None:
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
                "rebuilding the HTML from clean (the execution cache is kept; the previous site "
                "stays until the new one is written)"
            )
        _set_aside(Path(app.outdir))
        app._book_set_aside = True
        shutil.rmtree(app.doctreedir, ignore_errors=True)
    stamps["site"][0].unlink(missing_ok=True)  # written again only by a clean build


def _write(app: Sphinx, exception) -> None:
    """Keep the fingerprints of this build; put a set-aside site back, or delete it.

    The inputs stamp is kept even after a failed build: the cache was cleared at the start if the
    inputs had changed, and jupyter-cache stores only chapters that executed successfully, so every
    cached result belongs to the current inputs. The site stamp is kept only after a clean build,
    and a failed build deletes the doctrees, so the next build re-reads every page and reports the
    failure again instead of finding nothing out of date.

    A site set aside at the start (:func:`_set_aside`) is deleted when the build wrote its pages
    (failing chapters included: their pages are removed, as in any build), and put back when the
    build stopped with an exception, so a crash leaves the reader the site they had.
    """
    outdir = Path(app.outdir)
    previous = _previous(outdir)
    if getattr(app, "_book_set_aside", False) and previous.exists():
        if exception is None:
            shutil.rmtree(previous, ignore_errors=True)
        else:
            shutil.rmtree(outdir, ignore_errors=True)
            previous.rename(outdir)
            LOGGER.info(
                f"book_sphinx: the build stopped with an error; the previous site is back in "
                f"{outdir}"
            )
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


def _numbering(env) -> str:
    """SHA-256 of every number the build gives: sections (``toc_secnumbers``) and figures, tables,
    equations and theorem or exercise boxes (``toc_fignumbers``), page by page."""
    numbers = {"sections": env.toc_secnumbers, "figures": env.toc_fignumbers}
    text = json.dumps(numbers, sort_keys=True, default=list)
    return hashlib.sha256(text.encode()).hexdigest()


def _rewrite_on_renumbering(app: Sphinx, env) -> list[str]:
    """Every page, when any number changed since the last build; else none.

    Sphinx rewrites the pages it re-read and those whose *own* numbers changed, but not the pages
    that *refer* to a changed number (``{numref}``, ``{eq}``, ``{prf:ref}``): after a definition
    is inserted at the top of Chapter 1, Chapter 2 went on citing "Definition 1.1" for what is now
    1.2 (Sphinx issue 5506). Rewriting costs no execution (the doctrees are read back).
    """
    digest = _numbering(env)
    before = getattr(env, "book_numbering", None)
    env.book_numbering = digest
    if before is None or before == digest:
        return []
    LOGGER.info(
        "book_sphinx: section, figure, equation or box numbers changed: every page is rewritten, "
        "so that references show the new numbers"
    )
    return sorted(env.found_docs)


def setup(app: Sphinx) -> None:
    app.connect("config-inited", _clear_stale, priority=100)
    app.connect("env-get-updated", _rewrite_on_renumbering, priority=900)  # after the numbering
    app.connect("build-finished", _write, priority=900)  # after the execution checks set statuscode
