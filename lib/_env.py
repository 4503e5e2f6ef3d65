"""The book's settings: every ``BOOK_*`` environment variable, read and validated in one place.

Standard library only, so that the book's Sphinx extension (``_ext/book_sphinx``), its tools
(``tools/``) and ``lib`` itself can all import it before anything heavy (``import lib._env``
loads no other part of ``lib``: the package's ``__init__`` is lazy).

:data:`SETTINGS` lists every variable with what unset means, what is allowed and whether it
changes what a chapter computes (:attr:`Setting.computes`; the build's cache guard hashes exactly
those, see :func:`computing_values`). :func:`read` returns one variable's parsed value;
:func:`check_all` validates every ``BOOK_*`` variable that is set and refuses unknown names, so
that a misspelt variable or value stops a build or a tool at once with one line::

    BOOK_THREADS='999': must be a whole number from 1 to 2 (this machine's cores); unset: 2

instead of being ignored or failing later, elsewhere, under another name. Every refusal is a
``ValueError`` whose message names the variable, the value and what is allowed.

Source: the book's build and ``make full`` (README, "Modes and stored results" and
"Troubleshooting"); not a paper's.
"""

from __future__ import annotations

import argparse
import difflib
import functools
import os
import re
import sys
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "Setting",
    "SETTINGS",
    "read",
    "read_int",
    "read_float",
    "read_text",
    "read_path",
    "check_all",
    "computing_values",
    "page_plan",
    "check_ids",
    "describe",
    "parse_args",
    "main",
]

_ROOT = Path(__file__).resolve().parents[1]
#: The registry of checks whose ids ``BOOK_FORCE_FAIL`` may name (:mod:`lib.book.checks`).
_CHECKS_FILE = Path(__file__).resolve().parent / "book" / "checks.toml"
_FASHION_FILES = (
    "train-images-idx3-ubyte.gz",
    "train-labels-idx1-ubyte.gz",
    "t10k-images-idx3-ubyte.gz",
    "t10k-labels-idx1-ubyte.gz",
)
_CIFAR_FILES = (*(f"data_batch_{i}" for i in range(1, 6)), "test_batch")


class _Refused(ValueError):
    """A value a parser refuses; its message says what is allowed (the variable is added)."""


def _cores() -> int:
    return os.cpu_count() or 1


def _mode(raw: str) -> str:
    if raw not in ("fast", "full"):
        raise _Refused("must be 'fast' or 'full'")
    return raw


def _whole(low: int, high: Callable[[], int] | None, what: str = "") -> Callable[[str], int]:
    def parse(raw: str) -> int:
        top = high() if high is not None else None
        span = f"from {low} to {top}{what}" if top is not None else f"of at least {low}"
        if not re.fullmatch(r"[0-9]+", raw):
            raise _Refused(f"must be a whole number {span}")
        value = int(raw)
        if value < low or (top is not None and value > top):
            raise _Refused(f"must be a whole number {span}")
        return value

    return parse


def _positive_number(raw: str) -> float:
    try:
        value = float(raw)
    except ValueError:
        raise _Refused("must be a number above 0 (1 keeps the timeouts as they are)") from None
    if not 0 < value < float("inf"):
        raise _Refused("must be a number above 0 (1 keeps the timeouts as they are)")
    return value


def _device(raw: str) -> str:
    if not re.fullmatch(r"cpu|cuda(:[0-9]+)?", raw):
        raise _Refused("must be 'cpu', 'cuda' or 'cuda:<index>'")
    return raw


def _absolute_folder(hint: str, files: tuple[str, ...] = (), nested: str = "") -> Callable:
    """A parser for an absolute path to an existing folder (holding ``files``, directly or in
    its subfolder ``nested``)."""

    def parse(raw: str) -> Path:
        path = Path(raw).expanduser()
        if not path.is_absolute():
            raise _Refused(
                f"must be an absolute path (chapters execute in chapters/, tools in the "
                f"repository: a relative path names a different folder for each); {hint}"
            )
        if not path.is_dir():
            raise _Refused(f"must name an existing folder, and {path} is not one; {hint}")
        if files:
            folders = (path, path / nested) if nested else (path,)
            if not any(all((f / name).is_file() for name in files) for f in folders):
                where = f"{path} (or {path / nested})" if nested else str(path)
                raise _Refused(f"must name a folder holding {', '.join(files)}; {where} does not")
        return path

    return parse


def _lock_file(raw: str) -> Path:
    path = Path(raw).expanduser()
    if not path.is_absolute() or not path.parent.is_dir():
        raise _Refused("must be an absolute path of a file in an existing folder")
    return path


def _scheduler(raw: str) -> str:
    if not re.fullmatch(r"[a-z][a-z0-9+.-]*://\S+", raw):
        raise _Refused("must be a Dask scheduler address such as tcp://host:8786")
    return raw


def _build_flag(raw: str) -> bool:
    if raw != "1":
        raise _Refused("is set by the book's Sphinx extension and must be '1' or unset")
    return True


@functools.cache
def check_ids() -> frozenset[str]:
    """Every check id the registry (``lib/book/checks.toml``) defines, variants included."""
    with _CHECKS_FILE.open("rb") as handle:
        raw = tomllib.load(handle)
    ids = set()
    for key, entry in raw.items():
        variants = entry.get("variants") if isinstance(entry, dict) else None
        ids |= {f"{key}.{v}" for v in variants} if variants else {key}
    return frozenset(ids)


def _check_list(raw: str) -> tuple[str, ...]:
    ids = tuple(c.strip() for c in raw.split(",") if c.strip())
    known = check_ids()
    unknown = [c for c in ids if c not in known]
    if unknown or not ids:
        near = {c: difflib.get_close_matches(c, sorted(known), n=1) for c in unknown}
        hints = ", ".join(
            f"{c!r}" + (f" (did you mean {m[0]!r}?)" if m else "") for c, m in near.items()
        )
        raise _Refused(
            "must list registered check ids, comma-separated (lib/book/checks.toml)"
            + (f"; unknown: {hints}" if unknown else "")
        )
    return ids


@dataclass(frozen=True)
class Setting:
    """One ``BOOK_*`` environment variable.

    Attributes:
        name: the variable's name.
        unset: what leaving it unset (or empty) means, in words.
        parse: turns the stripped, non-empty value into what the book uses; raises ``ValueError``
            saying what is allowed.
        computes: whether it changes what a chapter computes or shows (the cache guard of the
            build hashes it; see :func:`computing_values`).
        meaning: one line for the README's table and the messages.
    """

    name: str
    unset: str
    parse: Callable[[str], object]
    computes: bool
    meaning: str


_FASHION_HINT = "unset it to use the Debian package dataset-fashion-mnist or `make data`"
#: Every variable the book reads, by name.
SETTINGS: dict[str, Setting] = {
    s.name: s
    for s in (
        Setting("BOOK_MODE", "fast", _mode, True, "fast (a 2-core CPU) or full (paper scale)"),
        Setting(
            "BOOK_THREADS",
            "2 in a notebook; the cores shared among a build's kernels or make full's workers",
            _whole(1, _cores, " (this machine's cores)"),
            True,
            "torch threads of each chapter's kernel or make full's worker",
        ),
        Setting(
            "BOOK_DEVICE",
            "a GPU when torch sees one, else the CPU",
            _device,
            True,
            "where lib.training trains",
        ),
        Setting(
            "BOOK_RESULTS",
            "results/ of this checkout",
            _absolute_folder("create it first, or unset it to use results/"),
            True,
            "the stored results' folder (make full writes it, the book reads it)",
        ),
        Setting(
            "BOOK_FASHION_MNIST",
            "the Debian package's folder, else _data/fashion-mnist",
            _absolute_folder(_FASHION_HINT, _FASHION_FILES),
            True,
            "a folder holding Fashion-MNIST's four IDX .gz files",
        ),
        Setting(
            "BOOK_CIFAR10",
            "CIFAR-10 does not run (no registry ships it)",
            _absolute_folder("or unset it", _CIFAR_FILES, "cifar-10-batches-py"),
            True,
            "a folder holding CIFAR-10's python batches",
        ),
        Setting(
            "BOOK_FORCE_FAIL",
            "no check is forced to fail",
            _check_list,
            True,
            "check ids recorded as failed whatever they measure (the honesty test)",
        ),
        Setting(
            "BOOK_WORKERS",
            "2 (at most the cores)",
            _whole(1, _cores, " (this machine's cores)"),
            False,
            "make full's local Dask worker processes",
        ),
        Setting(
            "BOOK_PAGE_JOBS",
            "the cores ÷ BOOK_THREADS (unset: one kernel of one thread per core)",
            _whole(1, _cores, " (this machine's cores)"),
            False,
            "chapters a book build executes at once, each in its own kernel",
        ),
        Setting(
            "BOOK_SCHEDULER",
            "a local Dask cluster",
            _scheduler,
            False,
            "the address of a running Dask scheduler for make full",
        ),
        Setting(
            "BOOK_TIMEOUT_SCALE",
            "1",
            _positive_number,
            False,
            "multiplies every chapter's cell timeout (a busy machine: 2 or more)",
        ),
        Setting(
            "BOOK_EXECUTION_LOCK",
            "a file in the system's temporary folder",
            _lock_file,
            False,
            "the lock file (one per kernel slot: the file, then <file>.1, ...) that keeps the "
            "kernels of every build on this machine within its cores",
        ),
        Setting(
            "BOOK_BUILD",
            "not inside a book build",
            _build_flag,
            False,
            "set by the book's Sphinx extension for the kernels it starts",
        ),
    )
}


def _environ(environ: Mapping[str, object] | None) -> Mapping[str, object]:
    environ = os.environ if environ is None else environ
    if not hasattr(environ, "get") or not hasattr(environ, "keys"):
        raise ValueError(f"environ must be a mapping, got {environ!r}")
    return environ


def read(name: str, environ: Mapping[str, object] | None = None) -> object | None:
    """The parsed value of the variable ``name``, or ``None`` when it is unset or empty.

    Args:
        name: a key of :data:`SETTINGS`.
        environ: the environment to read (default ``os.environ``).

    Returns:
        What :attr:`Setting.parse` makes of the stripped value (a ``str``, ``int``, ``float``,
        ``bool``, ``pathlib.Path`` or tuple of check ids, by variable).

    Raises:
        ValueError: for a name that is not in :data:`SETTINGS`, an ``environ`` that is not a
            mapping, or a value the variable does not allow; the message names the variable, the
            value and what is allowed (and what unset means).
    """
    if name not in SETTINGS:
        raise ValueError(f"name must be one of {sorted(SETTINGS)}, got {name!r}")
    setting = SETTINGS[name]
    raw = _environ(environ).get(name, "")
    if not isinstance(raw, str):
        raise ValueError(f"{name}={raw!r}: must be a string (an environment variable's value)")
    raw = raw.strip()
    if not raw:
        return None
    try:
        return setting.parse(raw)
    except ValueError as exc:
        raise ValueError(f"{name}={raw!r}: {exc}; unset: {setting.unset}") from None


def _typed(name: str, environ: Mapping[str, object] | None, kind: type) -> Any:
    value = read(name, environ)
    if value is not None and not isinstance(value, kind):
        raise ValueError(f"name must name a setting of type {kind.__name__}, got {name!r}")
    return value


def read_int(name: str, environ: Mapping[str, object] | None = None) -> int | None:
    """:func:`read` of a whole-number setting (``BOOK_THREADS``, ``BOOK_WORKERS``)."""
    return _typed(name, environ, int)


def read_float(name: str, environ: Mapping[str, object] | None = None) -> float | None:
    """:func:`read` of a number setting (``BOOK_TIMEOUT_SCALE``)."""
    return _typed(name, environ, float)


def read_text(name: str, environ: Mapping[str, object] | None = None) -> str | None:
    """:func:`read` of a word setting (``BOOK_MODE``, ``BOOK_DEVICE``, ``BOOK_SCHEDULER``)."""
    return _typed(name, environ, str)


def read_path(name: str, environ: Mapping[str, object] | None = None) -> Path | None:
    """:func:`read` of a path setting (``BOOK_RESULTS``, the datasets, the lock file)."""
    return _typed(name, environ, Path)


def check_all(environ: Mapping[str, object] | None = None) -> dict[str, object]:
    """Validate every ``BOOK_*`` variable that is set; return the parsed values of those set.

    Raises:
        ValueError: for the first variable (in name order) that is not in :data:`SETTINGS` (with
            the nearest known name) or whose value is refused (see :func:`read`).
    """
    environ = _environ(environ)
    values = {}
    for name in sorted(k for k in environ.keys() if str(k).startswith("BOOK_")):
        if name not in SETTINGS:
            near = difflib.get_close_matches(name, sorted(SETTINGS), n=1)
            raise ValueError(
                f"{name} is not a setting of the book"
                + (f" (did you mean {near[0]}?)" if near else "")
                + f"; the settings are {', '.join(sorted(SETTINGS))}"
            )
        value = read(name, environ)
        if value is not None:
            values[name] = value
    return values


def computing_values(environ: Mapping[str, object] | None = None) -> dict[str, str]:
    """The normalised values of the variables that change what a chapter computes
    (:attr:`Setting.computes`), for the build's cache guard: ``BOOK_MODE`` unset counts as
    ``fast``, paths are resolved, every other unset variable is ``""``.

    Raises:
        ValueError: as :func:`check_all`.
    """
    check_all(environ)
    out = {}
    for name, setting in SETTINGS.items():
        if not setting.computes:
            continue
        value = read(name, environ)
        if isinstance(value, Path):
            value = value.resolve()
        elif isinstance(value, tuple):
            value = ",".join(sorted(value))
        out[name] = "" if value is None else str(value)
    out["BOOK_MODE"] = out["BOOK_MODE"] or "fast"
    return out


def page_plan(environ: Mapping[str, object] | None = None) -> tuple[int, int]:
    """How a book build executes its chapters: ``(jobs, threads)``, ``jobs`` chapters at once,
    each kernel with ``threads`` torch threads, never more threads than this machine's cores.

    ``BOOK_PAGE_JOBS`` and ``BOOK_THREADS`` as set; an unset one shares the cores among the other
    (``jobs = cores // threads``, ``threads = cores // jobs``); both unset: one kernel of one
    thread per core. Source: the book's build (``_ext/book_sphinx/parallel.py``), not a paper's.

    Args:
        environ: the environment to read (default ``os.environ``).

    Returns:
        ``(jobs, threads)``, two ``int`` of at least 1 with ``jobs * threads <= cores``.

    Raises:
        ValueError: as :func:`check_all`, or when ``BOOK_PAGE_JOBS`` x ``BOOK_THREADS`` exceeds
            the cores (the message names both and the cores).
    """
    check_all(environ)
    cores = _cores()
    jobs, threads = read_int("BOOK_PAGE_JOBS", environ), read_int("BOOK_THREADS", environ)
    if jobs is not None and threads is not None and jobs * threads > cores:
        raise ValueError(
            f"BOOK_PAGE_JOBS={jobs} x BOOK_THREADS={threads}: must be at most this machine's "
            f"{cores} cores (kernels whose threads outnumber the cores slow each other down many "
            "times over); lower one, or unset one to share the cores"
        )
    if jobs is None:
        jobs = max(1, cores // (threads or 1))
    if threads is None:
        threads = max(1, cores // jobs)
    return jobs, threads


def describe() -> str:
    """A Markdown table of :data:`SETTINGS` (the README's), one row per variable."""
    rows = ["| Variable | Unset | Meaning |", "|---|---|---|"]
    rows += [f"| `{s.name}` | {s.unset} | {s.meaning} |" for s in SETTINGS.values()]
    return "\n".join(rows)


def parse_args(
    parser: argparse.ArgumentParser, argv: list[str] | None = None
) -> argparse.Namespace:
    """Parse a tool's command line, then check every ``BOOK_*`` setting, before the tool acts.

    Every tool in ``tools/`` starts with this, so that a mistyped option (``--batched-onyl``) or
    setting stops it with its usage and one line, exit status 2, before it deletes, downloads or
    computes anything.

    Raises:
        SystemExit: status 2, for an unknown or malformed option (argparse's usage and message)
            or a setting :func:`check_all` refuses (one line: the tool and the refusal).
    """
    parser.allow_abbrev = False  # --batched would otherwise pass for --batched-only
    args = parser.parse_args(argv)
    try:
        check_all()
    except ValueError as exc:
        print(f"{parser.prog}: {exc}", file=sys.stderr, flush=True)
        raise SystemExit(2) from None
    return args


def main(argv: list[str] | None = None) -> int:
    """``python -m lib._env``: check the settings (the Makefile runs it before every target that
    builds or computes); prints the refusal and exits 2, or prints nothing and exits 0.
    ``--table`` prints :func:`describe`'s table."""
    parser = argparse.ArgumentParser(
        prog="python -m lib._env",
        description="Check the book's BOOK_* settings.",
        allow_abbrev=False,
    )
    parser.add_argument("--table", action="store_true", help="print the settings as a table")
    args = parser.parse_args(argv)
    try:
        check_all()
    except ValueError as exc:
        print(f"book settings: {exc}", file=sys.stderr)
        return 2
    if args.table:
        print(describe())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
