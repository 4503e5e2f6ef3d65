"""Stored results of long runs: small JSON files in ``results/``, committed, with their provenance.

The full-scale experiments (the CoNLL-2003 memorization of K&S Section 5 and the noise experiment
of LHSL Appendix B) take up to an hour on the book's 2-core machine, so ``make full`` runs them
once and writes each run to ``results/<experiment>/<run>.json``. The book's default build reads
those files and shows them beside the fast run it executes live.

A stored run is keyed on what determines its numbers: the experiment's name, its **settings** and
an explicit **version** of the experiment's code, which the experiment module raises by hand when
a change alters what it computes. Editing a docstring, or any other part of ``lib``, does not
throw away an hour of results; changing a setting, or the version, does. :func:`load_or_run` is
the one gate every experiment goes through:

* a stored file whose key matches is returned as it is;
* a missing or stale file is computed (and written) when computing is allowed — by ``make full``
  — and is a :class:`StaleResultError` naming ``make full`` inside a book build.

Each file also records its provenance: the commit, the date, the machine (cores, processor,
device), the Python, torch and numpy versions, the torch thread count and the wall time.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import re
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .. import _env
from .._validate import function, json_value, short_repr

__all__ = [
    "RESULTS",
    "StaleResultError",
    "StoredRun",
    "result_key",
    "result_path",
    "checkpoint_path",
    "load_or_run",
    "lookup",
    "save",
    "read",
    "provenance",
    "checksum",
]

#: The repository's folder of stored results, ``results/`` beside ``lib/`` (override with the
#: ``BOOK_RESULTS`` variable).
#:
#: :meta hide-value:
RESULTS = Path(__file__).resolve().parents[2] / "results"
_NAME = re.compile(r"[a-z0-9][a-z0-9_.-]{0,99}")


class StaleResultError(RuntimeError):
    """A stored result is missing or was computed for other settings or code; ``make full``
    recomputes it."""


@dataclass(frozen=True)
class StoredRun:
    """One stored run: what it is, what it found, and where and how it was computed.

    Attributes:
        experiment: the experiment's name (``"conll"``, ``"noise"``).
        run: the run's name within the experiment (``"layers-1-rank-1"``).
        version: the experiment code's version the result was computed with.
        settings: the settings (JSON values).
        result: the result (JSON values: numbers, strings, lists, dicts).
        provenance: commit, date, machine, versions, threads, wall time (see :func:`provenance`).
        path: the file it was read from or written to.
    """

    experiment: str
    run: str
    version: int
    settings: dict
    result: dict
    provenance: dict
    path: Path


def _root(root: str | os.PathLike | None) -> Path:
    if root is None:
        return _env.read_path("BOOK_RESULTS") or RESULTS
    if not isinstance(root, str | os.PathLike):
        raise ValueError(f"root must be a folder path, got {short_repr(root)}")
    return Path(root)


def _name(what: str, value: object) -> str:
    if not isinstance(value, str) or not _NAME.fullmatch(value):
        raise ValueError(
            f"{what} must be 1-100 lower-case letters, digits, '_', '.' or '-', "
            f"got {short_repr(value)}"
        )
    return value


def result_key(experiment: str, version: int, settings: dict) -> str:
    """SHA-256 (hex) of the experiment's name, its code version and its settings (canonical JSON).

    Raises:
        ValueError: for a bad name, a version that is not a non-negative integer, or settings that
            are not a dict of JSON values (finite numbers, strings, bools, None, lists, dicts).
    """
    _name("experiment", experiment)
    if isinstance(version, bool) or not isinstance(version, int) or version < 0:
        raise ValueError(f"version must be a non-negative integer, got {short_repr(version)}")
    if not isinstance(settings, dict):
        raise ValueError(f"settings must be a dict, got {short_repr(settings)}")
    text = json.dumps(json_value("settings", settings), sort_keys=True, allow_nan=False)
    return hashlib.sha256(f"{experiment}\0{version}\0{text}".encode()).hexdigest()


def result_path(experiment: str, run: str, root: str | os.PathLike | None = None) -> Path:
    """Where the run is stored: ``<root>/<experiment>/<run>.json`` (root: :data:`RESULTS`)."""
    return _root(root) / _name("experiment", experiment) / f"{_name('run', run)}.json"


def checkpoint_path(
    experiment: str, run: str, version: int, settings: dict, root: str | os.PathLike | None = None
) -> Path:
    """Where an unfinished run keeps its epoch checkpoint (:func:`lib.training.fit`):
    ``<root>/.partial/<experiment>/<run>-<key>.pt``, with the first 16 hex digits of
    :func:`result_key` in the name, so that a checkpoint of other settings or code is never
    resumed. The folder is not committed (``.gitignore``).

    Raises:
        ValueError: as :func:`result_key` and :func:`result_path`.
    """
    key = result_key(experiment, version, settings)[:16]
    return _root(root) / ".partial" / experiment / f"{_name('run', run)}-{key}.pt"


def _git(*args: str) -> str:
    try:
        out = subprocess.run(
            ["git", *args], cwd=RESULTS.parent, capture_output=True, text=True, timeout=10
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return out.stdout.strip() if out.returncode == 0 else ""


def provenance(wall_s: float, device: str, **extra: Any) -> dict:
    """Where and how a result was computed, for the stored file.

    Returns:
        dict: ``commit`` (with ``+changes`` when the tree differed from it), ``date`` (UTC, ISO
        8601), ``machine`` (``cores``, ``processor``, ``system``, ``device``), ``python``,
        ``torch``, ``numpy``, ``threads`` (torch's intra-op threads) and ``wall_s`` (the wall
        time of the call that computed and stored it, in seconds; a run resumed from a checkpoint
        keeps its earlier time in its own history), then the ``extra`` keyword values (JSON values,
        e.g. ``batched``: the number of runs trained together, ``worker``: the Dask worker).
    """
    import numpy as np
    import torch

    commit = _git("rev-parse", "--short=12", "HEAD") or "unknown"
    if commit != "unknown" and _git("status", "--porcelain", "--untracked-files=no"):
        commit += "+changes"
    processor = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf8") as info:
            processor = next(
                (line.split(":", 1)[1].strip() for line in info if line.startswith("model name")),
                processor,
            )
    except OSError:
        pass
    return {
        "commit": commit,
        "date": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "machine": {
            "cores": os.cpu_count(),
            "processor": processor,
            "system": platform.system(),
            "device": device,
        },
        "python": platform.python_version(),
        "torch": torch.__version__,
        "numpy": np.__version__,
        "threads": torch.get_num_threads(),
        "wall_s": round(float(wall_s), 1),
        **json_value("extra", extra),
    }


def checksum(record: dict) -> str:
    """SHA-256 (hex) of a stored record's ``experiment``, ``run``, ``version``, ``key``,
    ``settings`` and ``result`` (canonical JSON): what :func:`save` writes as ``checksum`` and
    every read compares, so a number edited by hand or a damaged file is refused, not shown.

    Raises:
        ValueError: if one of those fields is missing or not a JSON value.

    Source: the book's storage of its paper-scale runs (Chapters 3 and 5, the reproducibility
    page).
    """
    fields = ("experiment", "run", "version", "key", "settings", "result")
    if not isinstance(record, dict) or not set(fields) <= set(record):
        raise ValueError(f"record must hold {fields}, got {short_repr(record)}")
    text = json.dumps(
        json_value("record", {k: record[k] for k in fields}), sort_keys=True, allow_nan=False
    )
    return hashlib.sha256(text.encode()).hexdigest()


def _committed(path: Path) -> bool:
    """Whether the commit checked out (git's ``HEAD``) holds ``path``: a stored result that is
    missing from the work tree although it is committed was deleted, not never computed."""
    folder = path.parent
    while not folder.is_dir() and folder != folder.parent:
        folder = folder.parent
    relative = os.path.relpath(path, folder)
    try:
        out = subprocess.run(
            ["git", "cat-file", "-e", f"HEAD:./{relative}"],
            cwd=folder,
            capture_output=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return out.returncode == 0


def _restore_hint(path: Path) -> str:
    return (
        f"restore the committed file (`git checkout -- {path}`), or recompute it with `make full`"
    )


def _read(path: Path) -> dict:
    try:
        stored = json.loads(path.read_text(encoding="utf8"))
    except (OSError, ValueError) as exc:
        raise ValueError(
            f"cannot read the stored result {path} ({exc}); {_restore_hint(path)}"
        ) from None
    if not isinstance(stored, dict) or not {
        "experiment",
        "run",
        "key",
        "settings",
        "result",
        "provenance",
        "version",
    } <= set(stored):
        raise ValueError(f"{path} is not a stored result of this book; {_restore_hint(path)}")
    try:
        same = stored.get("checksum") == checksum(stored)
    except ValueError:
        same = False
    if not same:
        raise ValueError(
            f"the stored result {path} does not match its checksum (edited by hand, damaged, or "
            f"written without one); {_restore_hint(path)}"
        )
    return stored


def _stored_run(experiment: str, run: str, stored: dict, path: Path) -> StoredRun:
    return StoredRun(
        experiment,
        run,
        stored["version"],
        stored["settings"],
        stored["result"],
        stored["provenance"],
        path,
    )


def _shown(path: Path) -> Path:
    """``<experiment>/<run>.json`` under the results folder, for messages."""
    return path.relative_to(path.parents[2]) if len(path.parents) > 2 else path


def load_or_run(
    experiment: str,
    run: str,
    version: int,
    settings: dict,
    compute: Callable[[], dict],
    *,
    allow_compute: bool,
    device: str = "cpu",
    root: str | os.PathLike | None = None,
) -> StoredRun:
    """The stored run ``experiment/run`` for these settings and code version; computed when allowed.

    Args:
        experiment, run: names (lower-case letters, digits, ``_ . -``).
        version: the experiment code's version (see the module docstring).
        settings: everything the result depends on besides the code (sizes, seeds, epochs), as JSON
            values.
        compute: called with no arguments when no stored result matches; returns the result as a
            dict of JSON values (lists for histories).
        allow_compute: ``True`` in ``make full`` (compute and store what is missing or stale);
            ``False`` in a book build (raise instead).
        device: the device the computation runs on, for the provenance.
        root: the results folder (default :data:`RESULTS`, or ``BOOK_RESULTS``).

    Returns:
        The :class:`StoredRun`.

    Raises:
        StaleResultError: when the file is missing or its key differs and ``allow_compute`` is
            false; the message names the file, what differs, and ``make full`` (for a committed
            file deleted from the checkout: "missing", and the ``git checkout`` that restores it).
        ValueError: for bad names, version or settings, an unreadable file, a ``compute`` that is
            not callable or that returns something other than a dict of JSON values.
    """
    function("compute", compute)
    key = result_key(experiment, version, settings)
    path = result_path(experiment, run, root)
    if path.exists():
        stored = _read(path)
        if stored["key"] == key:
            return _stored_run(experiment, run, stored, path)
        why = (
            f"its code version is {stored['version']}, the code's is {version}"
            if stored["version"] != version
            else "its settings differ from the current ones"
        )
    elif not allow_compute and _committed(path):
        raise StaleResultError(
            f"the stored result {_shown(path)} is missing: it is committed, so it was deleted "
            f"from this checkout; {_restore_hint(path)}"
        )
    else:
        why = "it has not been computed"
    if not allow_compute:
        shown = _shown(path)
        raise StaleResultError(
            f"the stored result {shown} is out of date: {why}; run `make full` to recompute it"
        )
    start = time.perf_counter()
    result = compute()
    if not isinstance(result, dict):
        raise ValueError(f"compute must return a dict, got {short_repr(result)}")
    return save(
        experiment,
        run,
        version,
        settings,
        result,
        wall_s=time.perf_counter() - start,
        device=device,
        root=root,
    )


def lookup(
    experiment: str, run: str, version: int, settings: dict, root: str | os.PathLike | None = None
) -> StoredRun | None:
    """The stored run ``experiment/run`` when its key matches these settings and code version,
    else ``None`` (missing or stale): what ``make full`` asks before it plans a run.

    Raises:
        ValueError: for bad names, version or settings, or an unreadable file.
    """
    key = result_key(experiment, version, settings)
    path = result_path(experiment, run, root)
    if not path.exists():
        return None
    stored = _read(path)
    return _stored_run(experiment, run, stored, path) if stored["key"] == key else None


def save(
    experiment: str,
    run: str,
    version: int,
    settings: dict,
    result: dict,
    *,
    wall_s: float,
    device: str = "cpu",
    root: str | os.PathLike | None = None,
    provenance_: dict | None = None,
) -> StoredRun:
    """Store ``result`` as ``experiment/run`` with its key and provenance (written to a temporary
    file and renamed, so a reader never sees half a file).

    :func:`load_or_run` stores through this; ``make bench`` stores its measurements with it; the
    Dask client of ``make full`` stores each finished run with the ``provenance_`` its worker
    made (:func:`provenance` on the machine that computed it; ``wall_s`` and ``device`` are then
    ignored).

    Returns:
        The :class:`StoredRun` written.

    Raises:
        ValueError: for bad names, version or settings, or a result that is not a dict of JSON
            values.
    """
    key = result_key(experiment, version, settings)
    path = result_path(experiment, run, root)
    if not isinstance(result, dict):
        raise ValueError(f"result must be a dict, got {short_repr(result)}")
    record = {
        "experiment": experiment,
        "run": run,
        "version": version,
        "key": key,
        "settings": json_value("settings", settings),
        "result": json_value("result", result),
        "provenance": provenance(wall_s, device)
        if provenance_ is None
        else json_value("provenance_", provenance_),
    }
    record["checksum"] = checksum(record)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(
        json.dumps(record, indent=1, sort_keys=True, allow_nan=False) + "\n", encoding="utf8"
    )
    os.replace(tmp, path)
    return StoredRun(
        experiment, run, version, record["settings"], record["result"], record["provenance"], path
    )


def read(
    experiment: str, run: str, *, remedy: str = "make full", root: str | os.PathLike | None = None
) -> StoredRun:
    """The stored ``experiment/run`` as it is, whatever its key: for measurements that stay true
    of the machine and commit that made them (``make bench``), shown with their provenance.

    Raises:
        StaleResultError: when the file is missing; the message names ``remedy``.
        ValueError: for bad names or an unreadable file.
    """
    path = result_path(experiment, run, root)
    if not path.exists():
        shown = _shown(path)
        raise StaleResultError(f"there is no stored result {shown}; run `{remedy}` to measure it")
    stored = _read(path)
    return _stored_run(experiment, run, stored, path)
