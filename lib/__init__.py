"""``lib``: the thin, tested library behind the executable book on one-layer attention.

Kajitsuka & Sato (ICLR 2024) and Liu, Hu, Song & Liu (NeurIPS 2025) ship no code; this package
holds what the papers add, written on top of torch, numpy, mpmath and pandas. One module per
concept; import the modules you need (``from lib import boltzmann``). The run-time settings
(mode, device, threads, seeds) are :mod:`lib.runtime`; the book's own machinery (the registry of
checks, plotting, interactive figures) is the subpackage :mod:`lib.book`. Importing ``lib``
itself is cheap: submodules load on first use.

Conventions: tensors put tokens in rows, ``(..., n, d)``, as torch does; the chapters write the
papers' maths with tokens as columns. Every public function validates its input and raises
``ValueError`` naming the argument and the value.
"""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = [
    "approximation",
    "atlas",
    "batched",
    "boltzmann",
    "book",
    "context_ids",
    "contextual",
    "cross",
    "cross_attention",
    "datasets",
    "exact",
    "experiments",
    "feedforward",
    "hardmax",
    "interpolation",
    "layers",
    "lemma1",
    "lookup",
    "lookup_bounds",
    "maxaffine",
    "memorization",
    "metrics",
    "models",
    "powers_of_ten",
    "quantize",
    "runtime",
    "seeds",
    "separation",
    "sum_of_linear",
    "targets",
    "training",
]
__version__ = "0.1.0"


def __getattr__(name: str) -> ModuleType:
    if name in __all__:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'lib' has no attribute {name!r}")
