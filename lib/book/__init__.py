"""``lib.book``: the book's machinery (checks, phrases, figures), not its mathematics.

* :mod:`lib.book.checks` — the registry of checks (``checks.toml``), their records and verdicts,
  and the formatting of numbers and tables for the pages;
* :mod:`lib.book.plotting` — the book's matplotlib style and figure helpers;
* :mod:`lib.book.interactive` — the sliders and interactive figures of the website;
* :mod:`lib.book.figures` — the slider figures of Chapters 1-7, built from the chapters' data.

The mathematics of the two papers lives in the modules of :mod:`lib` itself; nothing there
imports this package except for a number format (the mode, device and seeds are
:mod:`lib.runtime`).
"""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["checks", "figures", "interactive", "phrases", "plotting", "registry"]


def __getattr__(name: str) -> ModuleType:
    if name in __all__:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'lib.book' has no attribute {name!r}")
