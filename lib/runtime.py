"""Run-time settings of ``lib`` and the chapters: mode, device, threads, seeds, progress bars.

The book runs in one of two modes, read once from the ``BOOK_MODE`` environment variable:

* ``fast`` (default): every chapter executes on a 2-core CPU within its budget;
* ``full``: the papers' experiments at paper scale, stored in ``results/`` by ``make full``
  (:mod:`lib.experiments.store`).

Read from ``lib._env`` (which validates every ``BOOK_*`` variable); used by the training loops
(:mod:`lib.training`, :mod:`lib.batched`), the experiments (``lib.experiments``) and every
chapter's set-up cell (``from lib import runtime``).
"""

from __future__ import annotations

import random
import sys
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, TypeVar

import numpy as np
import torch

from . import _env
from ._validate import one_of, positive_int

if TYPE_CHECKING:
    from tqdm import tqdm

__all__ = [
    "MODE",
    "MODES",
    "THREADS",
    "IN_BUILD",
    "DEVICE",
    "read_mode",
    "read_device",
    "as_device",
    "pick",
    "seed_everything",
    "progress",
]

MODES = ("fast", "full")

T = TypeVar("T")


def read_mode(environ: Mapping[str, object] | None = None) -> str:
    """Return the book mode named by ``BOOK_MODE`` in ``environ`` (default ``os.environ``).

    Returns:
        ``"fast"`` when the variable is unset or empty, else its value.

    Raises:
        ValueError: if ``environ`` is not a mapping, or ``BOOK_MODE`` is set to anything other
            than ``fast`` or ``full`` (the message names the variable and the value:
            ``lib._env.read``).
    """
    return _env.read_text("BOOK_MODE", environ) or "fast"


def _read_threads(environ: Mapping[str, object] | None = None) -> int:
    return _env.read_int("BOOK_THREADS", environ) or 2


#: ``"fast"`` or ``"full"``, from ``BOOK_MODE``.
MODE: str = read_mode()

#: torch intra-op threads, fixed so that timings and float reductions repeat (``BOOK_THREADS``,
#: default 2, the core count of the book's reference machine).
THREADS: int = _read_threads()
torch.set_num_threads(THREADS)


def as_device(value: str | torch.device, name: str = "device") -> torch.device:
    """``value`` (``"cpu"``, ``"cuda"``, ``"cuda:1"`` or a ``torch.device``) as an available device.

    Raises:
        ValueError: naming ``name``, for anything else, for device types other than CPU and
            CUDA, and for a CUDA device this machine does not have.
    """
    if not isinstance(value, str | torch.device):
        raise ValueError(f"{name} must be 'cpu', 'cuda' or 'cuda:<index>', got {value!r}")
    try:
        device = torch.device(value)
    except RuntimeError:
        raise ValueError(f"{name} must be 'cpu', 'cuda' or 'cuda:<index>', got {value!r}") from None
    if device.type not in ("cpu", "cuda") or (
        device.type == "cpu" and device.index not in (None, 0)
    ):
        raise ValueError(f"{name} must be 'cpu', 'cuda' or 'cuda:<index>', got {value!r}")
    if device.type == "cuda" and (
        not torch.cuda.is_available() or (device.index or 0) >= torch.cuda.device_count()
    ):
        raise ValueError(f"{name} is {value!r} but torch sees no such CUDA device")
    return device


def read_device(environ: Mapping[str, object] | None = None) -> torch.device:
    """The torch device for training, from ``BOOK_DEVICE`` (``cpu``, ``cuda``, ``cuda:1``).

    Unset or empty: a GPU when torch sees one, else the CPU.

    Raises:
        ValueError: if ``environ`` is not a mapping, or ``BOOK_DEVICE`` is not an available
            CPU or CUDA device (see :func:`as_device`); the message names the variable.
    """
    raw = _env.read_text("BOOK_DEVICE", environ)
    if raw is None:
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return as_device(raw, "BOOK_DEVICE")


#: Where :func:`lib.training.fit` trains (``BOOK_DEVICE``, else a GPU when present, else CPU).
DEVICE: torch.device = read_device()

#: True while a chapter executes inside a book build (``BOOK_BUILD=1``, set by the book's Sphinx
#: extension in ``_ext/book_sphinx``). Progress bars are then silent, so nothing reaches stderr.
IN_BUILD: bool = bool(_env.read("BOOK_BUILD"))


def pick(*, fast: T, full: T, mode: str | None = None) -> T:
    """Return ``fast`` or ``full`` according to the book mode.

    Args:
        fast: the value used in fast mode (small, CPU-friendly sizes).
        full: the value used in full mode (paper scale).
        mode: override of :data:`MODE`, for tests.

    Raises:
        ValueError: if ``mode`` is given and is not ``"fast"`` or ``"full"``.
    """
    mode = MODE if mode is None else mode
    one_of("mode", mode, MODES)
    return fast if mode == "fast" else full


def seed_everything(seed: int) -> np.random.Generator:
    """Seed Python's ``random``, numpy's global state and torch, and return a numpy Generator.

    Args:
        seed: an integer in ``[0, 2**63 - 1]`` (torch's range).

    Returns:
        ``numpy.random.default_rng(seed)``, the generator chapters should draw from.

    Raises:
        ValueError: if ``seed`` is not a non-negative integer.
    """
    seed = positive_int("seed", seed, minimum=0, maximum=2**63 - 1)
    random.seed(seed)
    np.random.seed(seed % 2**32)  # noqa: NPY002  seeding numpy's global stream is the point
    torch.manual_seed(seed)
    return np.random.default_rng(seed)


def progress(
    iterable: Iterable[T], *, desc: str | None = None, total: int | None = None, initial: int = 0
) -> tqdm:
    """Wrap ``iterable`` in a tqdm progress bar, silent during book builds.

    The bar is shown when a chapter is run interactively (a notebook or a terminal) and disabled
    when :data:`IN_BUILD` is true or stderr is not attached to anything interactive, so that no
    progress output reaches the built HTML. ``initial`` is where a resumed loop starts counting.
    """
    from tqdm import tqdm

    interactive = "ipykernel" in sys.modules or sys.stderr.isatty()
    return tqdm(
        iterable, desc=desc, total=total, initial=initial, disable=IN_BUILD or not interactive
    )
