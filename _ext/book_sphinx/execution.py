"""Chapter execution: timeouts from budgets, one clear line per failure, stderr anywhere fails.

myst-nb executes each chapter through jupyter-cache (``execute_notebooks: cache``). This module
wraps that step (``myst_nb.core.execute.cache``; "pinned" below means the version of
:data:`.patching.WRITTEN_FOR`, the one a patch was written for):

* **Timeouts.** A chapter declares its fast-mode budget in its front matter
  (``budget_seconds``). Its per-cell timeout is a safety net derived from it:
  ``max(book_timeout_factor * budget, book_timeout_floor)`` seconds in fast mode, and
  ``max(book_full_timeout_factor * budget, book_full_timeout_floor)`` in full mode. A chapter
  that sets ``mystnb: execution_timeout`` itself keeps it in fast mode (the build tests use
  this). ``BOOK_TIMEOUT_SCALE`` multiplies every timeout (a busy machine) without touching what
  the cache guard hashes. ``make bench`` checks the budgets themselves.
* **Failures.** A failing cell, a cell past its timeout and a dead kernel (out of memory,
  ``os.abort()``, an OpenMP abort) each produce one error line naming the chapter, the cell (its
  line in the source and its first line) and the cause (the exception, the timeout, or the
  kernel's exit signal), instead of a Python traceback of the build; the build goes on with the
  other chapters and exits non-zero. The failed chapter's page is removed from the output, so no
  stale page of an earlier build survives.
* **stderr.** Any stream output on stderr, in any cell (removed and hidden cells too, which
  myst-nb does not render and so does not check), fails the build, naming chapter and cell.
* **Never more threads than cores.** Each kernel runs torch on ``BOOK_THREADS`` threads, and
  :mod:`.parallel` runs ``BOOK_PAGE_JOBS`` kernels of a build at once. Kernels whose threads
  outnumber the cores (two builds at once, a test beside a build) let OpenMP's spin-waiting slow
  the small models of Chapters 3 and 5 many times over, more than any timeout can absorb. So a
  kernel executes only while it holds as many of the machine's cores as it has threads
  (:func:`execution_slot`, one lock file per core in the system's temporary folder); a kernel
  that waits says so in one line. The time a chapter reports is its own execution, not the wait.
* **The same executed notebook every build.** ``_build/jupyter_execute/<page>.ipynb`` (which the
  downloadable notebook is made from) gets cell ids numbered in order (``cell-1``, ...) instead of
  nbformat's random ones, and its outputs also when they come from the cache (the pinned myst-nb
  merges cached outputs into a copy of the notebook and writes the original, without outputs;
  this module writes the copy). The keys of each output are sorted as the cache stores them, so
  the glued values myst-nb writes (``<page>.glue.json``) do not depend on whether the page
  executed or came from the cache.

**Patches.** No configuration of myst-nb or jupyter-cache reaches any of this, so three functions
are replaced at ``setup()`` (:func:`_patched_run`, :func:`_patched_start`, :func:`_patched_reader`
say what, why and which upstream issue), each after :func:`.patching.require_version` has checked
that the installed myst-nb, jupyter-cache and nbclient are the versions the patch was written for.
"""

from __future__ import annotations

import dataclasses
import fcntl
import functools
import json
import os
import signal
import tempfile
import time
import traceback
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

import nbformat
from sphinx.application import Sphinx
from sphinx.util import logging

from lib import _env

from .patching import NO_ISSUE, require_version

LOGGER = logging.getLogger(__name__)

__all__ = ["cell_timeout", "describe_failure", "numbered_cell_ids", "setup"]

_SIGNALS = {
    signal.SIGKILL: (
        "was killed by SIGKILL, most often the system's out-of-memory killer: the chapter "
        "needed more memory than this machine had (see `dmesg`)"
    ),
    signal.SIGABRT: (
        "was aborted by SIGABRT: os.abort(), a failed assertion in native code or an OpenMP "
        "runtime abort"
    ),
    signal.SIGSEGV: "crashed with SIGSEGV (a segmentation fault in native code)",
    signal.SIGBUS: "crashed with SIGBUS (a memory-mapped file or alignment fault in native code)",
    signal.SIGTERM: "was terminated by SIGTERM (stopped from outside)",
}


def cell_timeout(config, budget, mode: str, explicit: float | None = None) -> float | None:
    """The per-cell timeout in seconds for a chapter with ``budget_seconds = budget`` in ``mode``.

    Returns ``explicit`` (a chapter's own ``mystnb.execution_timeout``) in fast mode when given,
    ``None`` when the chapter declares no budget (the global timeout then applies).
    """
    if budget is None:
        return explicit
    budget = float(budget)
    if mode == "full":
        return max(
            config.book_full_timeout_factor * budget, config.book_full_timeout_floor, explicit or 0
        )
    if explicit is not None:
        return explicit
    return max(config.book_timeout_factor * budget, config.book_timeout_floor)


def _exit_cause(code) -> str:
    if code is None:
        return "the kernel died; its exit status is unknown"
    if code < 0:
        try:
            sig = signal.Signals(-code)
        except ValueError:
            return f"the kernel was killed by signal {-code}"
        return "the kernel " + _SIGNALS.get(sig, f"was killed by {sig.name}")
    return f"the kernel exited with status {code} (sys.exit() or os._exit() in a cell?)"


def describe_failure(err, timeout) -> str:
    """What went wrong, in a few words: the exception of the cell, the timeout, or the kernel's
    death."""
    from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

    if isinstance(err, DeadKernelError):
        return _exit_cause(getattr(err, "book_exit", None))
    if isinstance(err, CellTimeoutError):
        return (
            f"the cell ran past its timeout of {timeout:g} s (a safety net derived from the "
            "chapter's budget_seconds; on a busy machine build again with BOOK_TIMEOUT_SCALE=2 "
            "or more, see the README's Troubleshooting)"
        )
    if isinstance(err, CellExecutionError):
        value = (err.evalue or "").strip().splitlines()
        return f"{err.ename}: {value[0] if value else ''}".rstrip(": ")
    return f"{type(err).__name__}: {err}"


def _cell_label(nb, index) -> tuple[str, int | None]:
    """``'cell N (`first line`)'`` for the code cell at ``index`` and its line in the source."""
    if index is None or not 0 <= index < len(nb.cells):
        return "an unknown cell", None
    cell = nb.cells[index]
    number = sum(1 for c in nb.cells[: index + 1] if c.cell_type == "code")
    first = next((line.strip() for line in cell.source.splitlines() if line.strip()), "")
    first = first if len(first) <= 70 else first[:67] + "..."
    source_map = nb.metadata.get("source_map")
    line = source_map[index] + 1 if source_map and index < len(source_map) else None
    return f"code cell {number} (`{first}`)", line


def _lock_path() -> Path:
    """The lock file shared by every build of the book on this machine (``BOOK_EXECUTION_LOCK``
    overrides it)."""
    return _env.read_path("BOOK_EXECUTION_LOCK") or (
        Path(tempfile.gettempdir()) / "one-layer-attention-book.execution.lock"
    )


def _slot_paths(cores: int) -> list[Path]:
    """One lock file per core: :func:`_lock_path`, then ``<file>.1``, ``<file>.2``, ..."""
    base = _lock_path()
    return [base, *(base.with_name(f"{base.name}.{k}") for k in range(1, cores))]


@contextmanager
def execution_slot(label: str = "a chapter", threads: int | None = None):
    """Hold ``threads`` of the machine's cores (default: all of them) while the block runs.

    Each core is a lock file (:func:`_slot_paths`, ``fcntl.flock``); a holder takes as many as
    its kernel has torch threads, all at once or none (then it waits, saying so in one line,
    and tries again every 0.2 s). So the kernels of every build and test on this machine never
    run more threads than it has cores, whether one build executes its chapters one at a time
    with every core or several at a time (:mod:`.parallel`). The locks are released when the
    block ends, or by the operating system when the process dies.
    """
    cores = os.cpu_count() or 1
    need = min(cores, threads or cores)
    handles = [open(path, "a+") for path in _slot_paths(cores)]
    held: list = []
    try:
        told = False
        while True:
            held = []
            for handle in handles:
                try:
                    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    continue
                held.append(handle)
                if len(held) == need:
                    break
            if len(held) == need:
                break
            for handle in held:
                fcntl.flock(handle, fcntl.LOCK_UN)
            held = []
            if not told:
                LOGGER.info(
                    f"book_sphinx: other kernels hold this machine's cores; {label} waits for "
                    f"{need} of them (kernels never run more threads than there are cores)"
                )
                told = True
            time.sleep(0.2)
        yield
    finally:
        for handle in held:
            fcntl.flock(handle, fcntl.LOCK_UN)
        for handle in handles:
            handle.close()


#: What each patch replaces, and the upstream issue it works around.
RUN_TARGET = "myst_nb.core.execute.cache.single_nb_execution"
RUN_ISSUE = "https://github.com/executablebooks/jupyter-cache/issues/83"
CLEANUP_TARGET = "nbclient.client.NotebookClient._async_cleanup_kernel"
CLEANUP_ISSUE = "https://github.com/jupyter/jupyter_client/issues/957"
START_TARGET = "myst_nb.core.execute.cache.NotebookClientCache.start_client"
START_ISSUE = (
    f"{NO_ISSUE} (searched executablebooks/MyST-NB for the cached outputs missing from the "
    "executed notebook it writes, for stderr in removed cells and for the failing cell in the "
    "execution error)"
)
READER_TARGET = "myst_nb.sphinx_.create_nb_reader"
READER_ISSUE = "https://github.com/executablebooks/MyST-NB/pull/519"
HASH_TARGET = "jupyter_cache.cache.main.JupyterCacheBase.create_hashed_notebook"
MERGE_TARGET = "jupyter_cache.cache.main.JupyterCacheBase.merge_match_into_notebook"
TAGS_ISSUE = "https://github.com/executablebooks/MyST-NB/issues/350"
#: The cell tags that change what executing a cell does (nbclient's ``raises-exception`` and
#: ``skip-execution``); every other tag (``remove-input``, ``hide-output``, ...) only changes how
#: the page shows the cell.
EXECUTION_TAGS = frozenset({"raises-exception", "skip-execution"})


def execution_view(nb):
    """A copy of ``nb`` whose code cells keep only the tags in :data:`EXECUTION_TAGS` (the
    ``tags`` key dropped where none is left): what the execution cache hashes."""
    nb = nbformat.from_dict(json.loads(json.dumps(nb)))
    for cell in nb.cells:
        tags = [t for t in cell.get("metadata", {}).get("tags", []) if t in EXECUTION_TAGS]
        if "tags" in cell.get("metadata", {}):
            if tags:
                cell.metadata["tags"] = tags
            else:
                del cell.metadata["tags"]
    return nb


def _patched_hash(original):
    """Wrap jupyter-cache's notebook hash so that it ignores the cell tags that do not change
    execution (:func:`execution_view`): the notebook it returns is unchanged.

    Why: jupyter-cache hashes every cell's whole metadata, so adding ``remove-input`` to one
    cell re-executes its chapter (MyST-NB issue 350, open; jupyter-cache can filter metadata
    but myst-nb does not ask it to). Remove when that issue is fixed.
    """

    @functools.wraps(original)
    def create_hashed_notebook(self, nb, nb_metadata=("kernelspec",), cell_metadata=None):
        out, _ = original(self, nb, nb_metadata, cell_metadata)
        _, digest = original(self, execution_view(nb), nb_metadata, cell_metadata)
        return out, digest

    return create_hashed_notebook


class _AllBut:
    """``key in _AllBut("tags")``: every key but ``tags``."""

    def __init__(self, *excluded: str):
        self.excluded = excluded

    def __contains__(self, key) -> bool:
        return key not in self.excluded


def _patched_merge(original):
    """Wrap jupyter-cache's merge of a cached notebook into the one being built so that each
    cell keeps the tags of its source: with tags outside the hash (:func:`_patched_hash`), the
    cached cell's tags may be older than the page's. Every other cell metadata key still comes
    from the cache, as before (MyST-NB issue 350)."""

    @functools.wraps(original)
    def merge_match_into_notebook(self, nb, nb_meta=None, cell_meta=None):
        return original(self, nb, nb_meta, _AllBut("tags") if cell_meta is None else cell_meta)

    return merge_match_into_notebook


def _patched_run(original):
    """Replace jupyter-cache's ``single_nb_execution`` where myst-nb's cache client calls it: the
    same execution, under :func:`execution_slot`, plus the failing cell and the kernel's exit code.

    Why: the pinned jupyter-cache catches only ``CellExecutionError`` and ``CellTimeoutError``, so a
    dead kernel's ``DeadKernelError`` escapes it and ends the whole build in a traceback; and its
    result names neither the failing cell nor why the kernel died. Source:
    https://github.com/executablebooks/jupyter-cache/issues/83 (open: ``single_nb_execution``
    should capture kernel errors such as ``NoSuchKernel`` rather than raise them; a
    ``DeadKernelError`` escapes the same ``except``). nbclient's ``DeadKernelError`` carries no
    exit status either, so ``BookClient`` reads it from the kernel's process before nbclient
    cleans the kernel up (a private method of the pinned nbclient):
    https://github.com/jupyter/jupyter_client/issues/957 (open: report the exit status of a kernel
    that died).
    """
    from jupyter_cache.executors.utils import ExecutionResult
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

    class BookClient(NotebookClient):
        exit_code = None

        async def _async_cleanup_kernel(self):
            process = getattr(getattr(self.km, "provisioner", None), "process", None)
            if process is not None:
                self.exit_code = process.poll()
            await super()._async_cleanup_kernel()

    def run(nb, cwd, timeout, allow_errors, meta_override=True, record_timing=False, **kwargs):
        if meta_override and "execution" in nb.metadata:
            timeout = nb.metadata.execution.get("timeout", timeout)
            allow_errors = nb.metadata.execution.get("allow_errors", allow_errors)
        current = {}

        def on_cell_execute(cell, cell_index, **_):
            current["index"] = cell_index

        client = BookClient(
            nb,
            timeout=timeout,
            allow_errors=allow_errors,
            record_timing=record_timing,
            resources={"metadata": {"path": cwd}} if cwd else {},
            on_cell_execute=on_cell_execute,
            **kwargs,
        )
        with execution_slot(str(cwd or "a chapter"), _env.page_plan()[1]):
            start, error, text = time.perf_counter(), None, None
            try:
                client.execute()
            except (CellExecutionError, CellTimeoutError, DeadKernelError) as err:
                error = err
                error.book_cell = current.get("index")
                error.book_exit = client.exit_code
                if isinstance(err, DeadKernelError):
                    text = describe_failure(err, timeout)
                else:
                    text = "".join(traceback.format_exc())
            seconds = time.perf_counter() - start
        return ExecutionResult(nb, cwd, seconds, error, text)

    run.__wrapped__ = original
    return run


def _patched_start(original):
    """Wrap myst-nb's ``NotebookClientCache.start_client``: the chapter's timeout, one line per
    failure, the cached outputs kept in the notebook myst-nb writes, stderr checked everywhere.

    Why, item by item (the pinned myst-nb):

    * the per-cell timeout is :func:`cell_timeout` of the chapter's ``budget_seconds`` and the
      mode. Configuration does not suffice: myst-nb takes a page's timeout from its front matter
      (``mystnb: execution_timeout``), one fixed number per chapter, while the book's follows
      ``BOOK_MODE`` (``max(4 x budget, 300)`` s fast, ``max(20 x budget, 1800)`` s full) and the
      budget the budget table reads; a chapter that sets ``execution_timeout`` itself keeps it in
      fast mode;
    * a failing cell is reported in one error line naming the chapter, the cell and the cause
      (myst-nb raises ``ExecutionError`` with the file's path only) and the page is removed;
    * on a cache hit myst-nb merges the cached outputs into a *copy* of the notebook
      (jupyter-cache's ``merge_match_into_notebook``) and renders the copy, but writes the
      notebook it was given, without outputs, to ``_build/jupyter_execute``: the copy's cells
      are put back into the given notebook;
    * any stderr output fails the build, in removed and hidden cells too (myst-nb's
      ``nb_output_stderr`` sees only the outputs it renders).

    Source: no upstream issue found (searched executablebooks/MyST-NB for the cached outputs
    missing from the executed notebook it writes, for stderr in removed cells and for the failing
    cell in the execution error).
    """
    from myst_nb.core.execute.base import ExecutionError

    def start_client(self):
        app = _APP
        docname = app.env.docname
        timeout = page_timeout(app.config, self.nb_config, self.notebook.metadata)
        if timeout is not None:
            self._nb_config = self._nb_config.copy(execution_timeout=timeout)
        given = self.notebook
        try:
            original(self)
        except ExecutionError as exc:
            err = exc.__cause__
            label, line = _cell_label(self.notebook, getattr(err, "book_cell", None))
            where = f"line {line}, " if line else ""
            _fail(
                app,
                docname,
                f"chapter {docname} failed at {where}{label}: "
                f"{describe_failure(err, self.nb_config.execution_timeout)}",
                line,
            )
            self.exec_metadata = {
                "mtime": datetime.now().timestamp(),
                "runtime": None,
                "method": self.nb_config.execution_mode,
                "succeeded": False,
                "error": type(err).__name__,
                "traceback": None,
            }
            return
        if self.notebook is not given:  # outputs from the cache, merged into a copy: keep them
            merged = self.notebook
            given.cells[:] = merged.cells
            given.metadata = merged.metadata
            given.nbformat_minor = merged.nbformat_minor
            self._notebook = given
        _sort_outputs(self.notebook)
        _fail_on_stderr(app, docname, self.notebook)

    start_client.__wrapped__ = original
    return start_client


def page_timeout(config, nb_config, metadata) -> int | None:
    """The per-cell timeout, in whole seconds, of the page whose notebook metadata is
    ``metadata`` under myst-nb's page configuration ``nb_config``: :func:`cell_timeout` of its
    ``budget_seconds`` in the current mode, times ``BOOK_TIMEOUT_SCALE``; ``None`` keeps
    ``nb_config``'s own."""
    explicit = (metadata.get("mystnb") or {}).get("execution_timeout")
    timeout = cell_timeout(config, metadata.get("budget_seconds"), _mode(), explicit)
    scale = _env.read_float("BOOK_TIMEOUT_SCALE") or 1.0
    if timeout is None and scale != 1:
        timeout = nb_config.execution_timeout
    return None if timeout is None else int(round(timeout * scale))


def _sort_outputs(notebook) -> None:
    """Sort the keys of every output, as the cache stores them: the glued values myst-nb writes
    to ``<page>.glue.json`` are then the same bytes whether the page executed or came from the
    cache (the kernel's key order differs)."""
    for cell in notebook.cells:
        if cell.get("cell_type") == "code":
            cell["outputs"] = [
                nbformat.from_dict(json.loads(json.dumps(out, sort_keys=True)))
                for out in cell.get("outputs", [])
            ]


def numbered_cell_ids(notebook):
    """Give ``notebook``'s cells the ids ``cell-1``, ``cell-2``, ... in order (in place).

    nbformat 4.5 wants a cell id; jupytext and nbformat draw random ones each time a page is
    read, so every build wrote a different executed notebook. Notebooks without ids (nbformat
    before 4.5) are left as they are. Returns ``notebook``.
    """
    for number, cell in enumerate(notebook.cells, start=1):
        if "id" in cell:
            cell["id"] = f"cell-{number}"
    return notebook


def _patched_reader(original):
    """Wrap myst-nb's ``create_nb_reader``: the reader it makes numbers the cell ids
    (:func:`numbered_cell_ids`).

    Why: the pinned myst-nb reads a MyST Markdown page with ``nbformat.v4.new_code_cell`` and
    ``new_markdown_cell``, which draw a random id for every cell, so each build wrote a different
    ``_build/jupyter_execute/<page>.ipynb`` (and downloadable notebook); no setting of myst-nb
    controls the ids. Source: https://github.com/executablebooks/MyST-NB/pull/519 (open, "Add
    cell IDs": a random cell id is added when a notebook is read from MyST or another text format;
    the parsers need to stop adding them).
    """

    def create_nb_reader(*args, **kwargs):
        reader = original(*args, **kwargs)
        if reader is None:
            return None
        read = reader.read
        return dataclasses.replace(reader, read=lambda text: numbered_cell_ids(read(text)))

    create_nb_reader.__wrapped__ = original
    return create_nb_reader


def _mode() -> str:
    return _env.read_text("BOOK_MODE") or "fast"


def _fail(app: Sphinx, docname: str, message: str, line: int | None = None) -> None:
    LOGGER.error(message, location=(docname, line) if line else docname)
    app._book_failed.add(docname)


def _fail_on_stderr(app: Sphinx, docname: str, nb) -> None:
    for index, cell in enumerate(nb.cells):
        for output in cell.get("outputs", []) if cell.cell_type == "code" else []:
            if output.get("output_type") == "stream" and output.get("name") == "stderr":
                label, line = _cell_label(nb, index)
                first = next(
                    (t.strip() for t in output.get("text", "").splitlines() if t.strip()), ""
                )
                where = f"line {line}, " if line else ""
                _fail(
                    app,
                    docname,
                    f"chapter {docname}: {where}{label} wrote to stderr: {first[:120]!r} "
                    f"(every cell counts, removed and hidden ones too)",
                    line,
                )


def _remove_failed_pages(app: Sphinx, exception) -> None:
    failed = sorted(getattr(app, "_book_failed", ()))
    if not failed:
        return
    app.statuscode = app.statuscode or 1
    outdir = Path(app.outdir)
    folder = Path(app.env.mystnb_config.output_folder)
    for docname in failed:
        parts = docname.split("/")
        for path in (
            outdir / Path(*parts).with_suffix(".html"),
            outdir / "_sources" / Path(*parts).with_suffix(".ipynb"),
            folder / Path(*parts).with_suffix(".ipynb"),
            folder / Path(*parts[:-1], parts[-1] + ".glue.json"),
        ):
            path.unlink(missing_ok=True)
    LOGGER.error(
        "book_sphinx: %d chapter(s) failed and their pages were removed from the output: %s",
        len(failed),
        ", ".join(failed),
    )


_APP: Sphinx | None = None


def setup(app: Sphinx) -> None:
    global _APP
    from myst_nb import sphinx_
    from myst_nb.core.execute import cache

    _APP = app
    app._book_failed = set()
    app.add_config_value("book_timeout_factor", 4, "env")
    app.add_config_value("book_timeout_floor", 300, "env")
    app.add_config_value("book_full_timeout_factor", 20, "env")
    app.add_config_value("book_full_timeout_floor", 1800, "env")
    require_version("jupyter-cache", target=RUN_TARGET, issue=RUN_ISSUE)
    require_version("myst-nb", target=RUN_TARGET, issue=RUN_ISSUE)
    require_version("nbclient", target=CLEANUP_TARGET, issue=CLEANUP_ISSUE)
    require_version("myst-nb", target=START_TARGET, issue=START_ISSUE)
    require_version("myst-nb", target=READER_TARGET, issue=READER_ISSUE)
    require_version("jupyter-cache", target=HASH_TARGET, issue=TAGS_ISSUE)
    require_version("jupyter-cache", target=MERGE_TARGET, issue=TAGS_ISSUE)
    from jupyter_cache.cache.main import JupyterCacheBase

    if not hasattr(JupyterCacheBase.create_hashed_notebook, "__wrapped__"):
        JupyterCacheBase.create_hashed_notebook = _patched_hash(
            JupyterCacheBase.create_hashed_notebook
        )
    if not hasattr(JupyterCacheBase.merge_match_into_notebook, "__wrapped__"):
        JupyterCacheBase.merge_match_into_notebook = _patched_merge(
            JupyterCacheBase.merge_match_into_notebook
        )
    if not hasattr(cache.single_nb_execution, "__wrapped__"):
        cache.single_nb_execution = _patched_run(cache.single_nb_execution)
    if not hasattr(cache.NotebookClientCache.start_client, "__wrapped__"):
        cache.NotebookClientCache.start_client = _patched_start(
            cache.NotebookClientCache.start_client
        )
    if not hasattr(sphinx_.create_nb_reader, "__wrapped__"):
        sphinx_.create_nb_reader = _patched_reader(sphinx_.create_nb_reader)
    app.connect("build-finished", _remove_failed_pages, priority=100)
