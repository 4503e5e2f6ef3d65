"""The papers' experiments, run live in fast mode and stored at full scale (see :mod:`.store`)."""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = [
    "catalog",
    "conll",
    "conll_grid",
    "conll_runs",
    "conll_settings",
    "conll_summaries",
    "learned_lookup",
    "noise",
    "store",
    "tables",
    "tasks",
    "trained",
]


def __getattr__(name: str) -> ModuleType:
    if name in __all__:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'lib.experiments' has no attribute {name!r}")
