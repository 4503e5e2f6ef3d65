"""``lib.book``: the book's machinery (checks, phrases, figures), not its mathematics.

* :mod:`lib.book.checks` — the records of the checks and their verdicts, for the claims page;
* :mod:`lib.book.registry` — the registry of checks (``checks.toml``), read without torch;
* :mod:`lib.book.prose` — the numbers glued into the prose and their format;
* :mod:`lib.book.display` — the tables the pages show, the same in every build;
* :mod:`lib.book.phrases` — the words a chapter chooses between, by computed case;
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

__all__ = [
    "checks",
    "display",
    "figures",
    "interactive",
    "phrases",
    "plotting",
    "prose",
    "registry",
]


def __getattr__(name: str) -> ModuleType:
    if name in __all__:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'lib.book' has no attribute {name!r}")
