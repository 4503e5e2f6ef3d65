"""Chapters executed several at a time, each in its own kernel, before Sphinx reads them.

Sphinx reads the pages one after another, and myst-nb executes a chapter while reading it, so a
cold build ran its chapters in series: 158 s of execution on the book's 2-core machine, against
the 120 s budget for the whole book, with each kernel's second torch thread idle in most cells.
Sphinx's own parallel reading (``-j``) needs every extension to declare itself safe for it, which
several of the book's do not. So this module executes ahead instead:

* **The plan.** :func:`lib._env.page_plan` gives ``(jobs, threads)``: ``BOOK_PAGE_JOBS`` kernels
  at once, each with ``BOOK_THREADS`` torch threads, never more threads than cores; unset, one
  kernel of one thread per core. The plan is fixed at ``config-inited`` (before the cache guard
  hashes the settings): ``BOOK_THREADS``, when unset, is set for the build to the plan's threads,
  so every kernel of the build, executed ahead or while its page is read, computes with the same
  number of threads, and the cache guard re-executes every chapter when that number changes.
* **Ahead of the read.** At ``env-before-read-docs`` each page to be read is read as myst-nb reads
  it (:func:`myst_nb.core.read.create_nb_reader`, with the book's numbered cell ids); the chapters
  that the execution cache does not hold are executed ``jobs`` at a time, the longest budget
  first, each through the same ``single_nb_execution`` that myst-nb calls (the book's version in
  :mod:`.execution`: the same kernel, timeout and failure capture, holding ``threads`` of the
  machine's cores), and each that succeeds is stored in the cache as myst-nb stores it. Sphinx
  then reads every page as before and finds its outputs in the cache; every check of
  :mod:`.execution` (stderr anywhere, one line per failure, the failed page removed) applies
  unchanged.
* **A chapter that fails ahead** is not stored: its page's read executes it again, and that run
  reports the failure as any failure is reported (a failing chapter costs two runs).
* **One chapter to execute** (an edit to one page) runs while its page is read, as before.

The time each chapter reports is its own execution; a build's execution wall time is measured by
``make bench`` (``tools/bench.py``).
"""

from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.util import logging

from lib import _env

from . import execution

LOGGER = logging.getLogger(__name__)

__all__ = ["setup", "stale_chapters"]


def _plan(app: Sphinx, config) -> None:
    """Fix the build's ``(jobs, threads)``; set ``BOOK_THREADS`` for the kernels when unset."""
    try:
        jobs, threads = _env.page_plan()
    except ValueError as exc:
        from .guard import _stop

        _stop(str(exc))
    if _env.read_int("BOOK_THREADS") is None:
        os.environ["BOOK_THREADS"] = str(threads)
    app._book_plan = (jobs, threads)


def _page_config(env, notebook):
    """myst-nb's configuration for one page: the book's, updated with the page's ``mystnb``
    metadata as myst-nb's parser updates it (``output_folder`` excepted)."""
    from myst_nb.core.nb_to_tokens import nb_node_to_dict

    nb_config = env.mystnb_config
    key = nb_config.metadata_key
    if key in notebook.metadata:
        overrides = nb_node_to_dict(notebook.metadata[key])
        overrides.pop("output_folder", None)
        try:
            nb_config = nb_config.copy(**overrides)
        except Exception:  # myst-nb warns about it when it reads the page
            pass
    return nb_config


def stale_chapters(env, docnames, cache) -> list[tuple[str, Path, object, object, str | None]]:
    """The pages among ``docnames`` that myst-nb would execute: notebooks (MyST with a kernel, or
    ``.ipynb``) in ``cache`` execution mode, run in their own folder, whose code the execution
    ``cache`` does not hold.

    Returns ``(docname, path, notebook, page config, read format)`` per page, the longest
    ``budget_seconds`` first.
    """
    from myst_nb.sphinx_ import create_nb_reader  # the book's: numbered cell ids

    found = []
    for docname in docnames:
        path = Path(env.doc2path(docname))
        try:
            text = path.read_text(encoding=env.config.source_encoding)
        except OSError:
            continue
        reader = create_nb_reader(str(path), env.myst_config, env.mystnb_config, text)
        if reader is None:
            continue
        notebook = reader.read(text)
        nb_config = _page_config(env, notebook)
        if nb_config.execution_mode != "cache" or nb_config.execution_in_temp:
            continue
        if not any(c.cell_type == "code" and c.source.strip() for c in notebook.cells):
            continue
        try:
            cache.match_cache_notebook(notebook)
        except KeyError:
            found.append((docname, path, notebook, nb_config, reader.read_fmt))
    found.sort(key=lambda item: -float(item[2].metadata.get("budget_seconds") or 0))
    return found


def _execute_ahead(app: Sphinx, env, docnames: list[str]) -> None:
    jobs, threads = getattr(app, "_book_plan", (1, 1))
    if jobs < 2 or env.mystnb_config.execution_mode != "cache":
        return
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn
    from myst_nb.core.execute import cache as myst_cache

    cache = get_cache(env.mystnb_config.execution_cache_path or ".jupyter_cache")
    stale = stale_chapters(env, docnames, cache)
    if len(stale) < 2:
        return
    LOGGER.info(
        f"book_sphinx: executing {len(stale)} chapters ahead, {jobs} at a time, each kernel with "
        f"{threads} torch thread(s)"
    )
    staged = {  # as myst-nb stages a page before it executes it
        docname: cache.add_nb_to_project(str(path), **({} if fmt is None else {"read_data": fmt}))
        for docname, path, _, _, fmt in stale
    }

    def run(path: Path, notebook, nb_config):
        timeout = execution.page_timeout(app.config, nb_config, notebook.metadata)
        return myst_cache.single_nb_execution(
            notebook,
            cwd=os.path.abspath(path.parent),
            allow_errors=nb_config.execution_allow_errors,
            timeout=nb_config.execution_timeout if timeout is None else timeout,
            meta_override=True,
        )

    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {
            pool.submit(run, path, notebook, nb_config): (docname, notebook)
            for docname, path, notebook, nb_config, _ in stale
        }
        for future in as_completed(futures):
            docname, notebook = futures[future]
            result = future.result()
            if result.err is not None:
                LOGGER.info(
                    f"book_sphinx: {docname} failed when executed ahead; it executes again "
                    "when its page is read, which reports the failure"
                )
                continue
            cache.cache_notebook_bundle(
                CacheBundleIn(
                    notebook, staged[docname].uri, data={"execution_seconds": result.time}
                ),
                check_validity=False,
                overwrite=True,
            )
            LOGGER.info(f"book_sphinx: {docname} executed ahead in {result.time:.1f} s")
    LOGGER.info(
        f"book_sphinx: {len(futures)} chapters executed ahead in "
        f"{time.perf_counter() - start:.1f} s"
    )


def setup(app: Sphinx) -> None:
    app.connect("config-inited", _plan, priority=90)  # before the cache guard hashes BOOK_THREADS
    app.connect("env-before-read-docs", _execute_ahead, priority=990)
