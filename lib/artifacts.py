"""Results of long runs, stored once and reused while nothing they depend on has changed.

A full-mode experiment (``BOOK_MODE=full``, e.g. Chapter 3's 800 epochs on all of CoNLL-2003)
takes hours on a CPU. :func:`load_or_compute` stores its result under a key made of the
experiment's name, its parameters and a hash of every ``lib`` source file, and returns the
stored result when the key matches. Changing a parameter or any code in ``lib`` changes the key,
so a stored result never outlives the code that produced it.

Files live in ``_artifacts/`` at the repository root (ignored by git), or in the folder named by
the ``BOOK_ARTIFACTS`` environment variable.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable
from pathlib import Path

import numbers

import numpy as np
import torch

from ._validate import short_repr

__all__ = ["default_root", "source_hash", "artifact_key", "artifact_path", "load_or_compute"]

_LIB = Path(__file__).resolve().parent
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")


def _plain(value, where: str):
    """``value`` with numpy scalars turned into Python ones; ValueError for anything not JSON-like."""
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        value = float(value)
        if not np.isfinite(value):
            raise ValueError(f"params{where} must be finite, got {value}")
        return value
    if isinstance(value, list | tuple):
        return [_plain(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, dict):
        bad = [k for k in value if not isinstance(k, str)]
        if bad:
            raise ValueError(f"params{where} keys must be strings, got {bad[0]!r}")
        return {k: _plain(v, f"{where}[{k!r}]") for k, v in value.items()}
    raise ValueError(f"params{where} must be JSON-serialisable (numbers, strings, lists, dicts), got {short_repr(value)}")


def default_root() -> Path:
    """``$BOOK_ARTIFACTS`` when set, else ``_artifacts/`` beside ``lib/``."""
    env = os.environ.get("BOOK_ARTIFACTS", "").strip()
    return Path(env) if env else _LIB.parent / "_artifacts"


def source_hash() -> str:
    """SHA-256 (hex) over the relative paths and bytes of every ``*.py`` file in ``lib/``."""
    h = hashlib.sha256()
    for path in sorted(_LIB.rglob("*.py")):
        h.update(path.relative_to(_LIB).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def artifact_key(name: str, params: dict) -> str:
    """SHA-256 (hex) of ``name``, the JSON of ``params`` (sorted keys) and :func:`source_hash`.

    Raises:
        ValueError: for a name that is not a plain file stem (letters, digits, ``_ . -``) or
            parameters that are not a JSON-serialisable dict.
    """
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ValueError(f"name must be 1-100 letters, digits, '_', '.' or '-', got {short_repr(name)}")
    if not isinstance(params, dict):
        raise ValueError(f"params must be a dict, got {short_repr(params)}")
    text = json.dumps(_plain(params, ""), sort_keys=True, allow_nan=False)
    return hashlib.sha256(f"{name}\0{text}\0{source_hash()}".encode()).hexdigest()


def artifact_path(name: str, params: dict, root: str | os.PathLike | None = None) -> Path:
    """Where :func:`load_or_compute` keeps the result: ``<root>/<name>-<first 16 hex of key>.pt``."""
    if root is not None and not isinstance(root, str | os.PathLike):
        raise ValueError(f"root must be a folder path, got {short_repr(root)}")
    root = default_root() if root is None else Path(root)
    if root.exists() and not root.is_dir():
        raise ValueError(f"root must be a folder, but {root} is a file")
    return root / f"{name}-{artifact_key(name, params)[:16]}.pt"


def load_or_compute(name: str, params: dict, compute: Callable[[], object], *,
                    root: str | os.PathLike | None = None) -> object:
    """Return the stored result of ``compute()`` for ``(name, params)``, computing it if absent.

    Args:
        name: the experiment's name (a file stem).
        params: everything the result depends on besides ``lib``'s code (sizes, seeds, epochs,
            mode), JSON-serialisable.
        compute: called with no arguments when no stored result matches; its return value
            (anything ``torch.save`` can store: tensors, DataFrames, dicts, numbers) is saved.
        root: the folder (default :func:`default_root`).

    Returns:
        The stored or freshly computed result.

    Raises:
        ValueError: for a bad name or params (see :func:`artifact_key`), a ``compute`` that is
            not callable, a ``root`` that is not a folder, a stored file that cannot be read or
            holds another key (the message names the file to delete), or a result that cannot
            be stored (it is still computed; the message says why).

    Used by the full-mode experiments of Chapters 3 and 5.
    """
    if not callable(compute):
        raise ValueError(f"compute must be callable, got {short_repr(compute)}")
    key = artifact_key(name, params)
    path = artifact_path(name, params, root)
    if path.exists():
        try:
            stored = torch.load(path, weights_only=False)
        except Exception as exc:  # noqa: BLE001 - any unreadable file gets the same advice
            raise ValueError(f"cannot read the stored result {path} ({exc}); delete it to recompute") from None
        if not isinstance(stored, dict) or stored.get("key") != key:
            raise ValueError(f"{path} holds a result for another key; delete it to recompute")
        return stored["value"]
    value = compute()
    tmp = path.with_suffix(".tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        torch.save({"key": key, "name": name, "params": params, "value": value}, tmp)
        os.replace(tmp, path)
    except Exception as exc:  # noqa: BLE001 - unpicklable values and file-system errors alike
        tmp.unlink(missing_ok=True)
        raise ValueError(f"the result of {name!r} was computed but cannot be stored at {path} ({exc}); "
                         f"return tensors, DataFrames, dicts or numbers") from exc
    return value
