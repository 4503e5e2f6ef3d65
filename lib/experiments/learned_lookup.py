r"""LHSL's lookup layer trained by gradient descent, against the partition its construction builds.

LHSL's construction (Chapter 5, :func:`lib.lookup.soft_lookup`) puts one key per cell of an
``m x m`` grid, the values ``f(c_i)`` at the cell centres and an inverse temperature
:math:`\beta = \kappa m^2`: the arg-max key partitions the square into the grid's cells.
:func:`learned_lookup` trains the same layer (the output :math:`\sigma(-\beta\|x - c_i\|^2)^\top v`
at a query point ``x``, keys ``c_i`` and values ``v_i`` learnable, :math:`\log\beta` too) by Adam
on the squared error at random points, from random keys; :func:`compare_partitions` measures
what it found against the construction on a grid of evaluation points: the share of points
whose learned cell is the construction cell most of its points fall in (each learned cell
matched to the construction cell it overlaps most), and both layers' sup and :math:`L_2`
errors. The training settings are the book's own.

:data:`LOOKUP_SETTINGS` fixes the grid sides and seeds of Chapter 7 in each book mode;
:func:`lookup_table` gives one row per (grid side, seed): computed in fast mode, read from the
stored results in full mode (``make full`` computes them, :mod:`lib.experiments.tasks`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import torch
from numpy.typing import ArrayLike

from .. import runtime, targets
from .._geometry import MAX_MATRIX_ENTRIES
from .._validate import finite_real, one_of, positive_int, require_size, short_repr
from ..lookup import soft_lookup
from ..maxaffine import grid_centres
from . import store

__all__ = [
    "LearnedLookup",
    "learned_lookup",
    "compare_partitions",
    "matched_cells",
    "LOOKUP_VERSION",
    "LOOKUP_SETTINGS",
    "lookup_cells",
    "lookup_run_settings",
    "lookup_compute",
    "lookup_run",
    "lookup_table",
]

#: The version of this experiment's code; raise it when a change alters what :func:`lookup_run`
#: computes, so that stored results are recomputed (``make full``) rather than reused.
LOOKUP_VERSION = 1

#: The learned lookups of Chapter 7 in each book mode. Each trains :func:`learned_lookup` on the
#: target named ``target`` (a function of :mod:`lib.targets`) at a grid side of ``ms`` from a
#: seed of ``seeds`` (the seed draws the training points and the starting keys), with
#: ``kappa``, ``samples``, ``epochs`` and ``lr``, and compares it with the construction by
#: :func:`compare_partitions` on ``points`` x ``points`` points. Fast mode is the full grid's
#: first sides and one seed. All of it is the book's choice.
LOOKUP_SETTINGS: dict[str, dict[str, Any]] = {
    "fast": {"ms": [2, 4, 8], "seeds": [0], "target": "wave", "kappa": 10.0,
             "samples": 4096, "epochs": 500, "lr": 1e-2, "points": 128},
    "full": {"ms": [2, 4, 8, 16], "seeds": [0, 1, 2, 3, 4], "target": "wave", "kappa": 10.0,
             "samples": 4096, "epochs": 500, "lr": 1e-2, "points": 128},
}  # fmt: skip

# The targets a stored setting may name.
_TARGETS = {"wave": targets.wave}


@dataclass(frozen=True)
class LearnedLookup:
    """A lookup layer trained on a target (:func:`learned_lookup`).

    Attributes:
        centres: the learned keys ``(m*m, 2)``; values: the learned values ``(m*m,)``; beta: the
            learned inverse temperature (all float64 numpy / float).
        m: the grid side it was sized for; losses: the mean squared error per epoch.
    """

    centres: np.ndarray
    values: np.ndarray
    beta: float
    m: int
    losses: list

    def __post_init__(self) -> None:
        keys = self.m * self.m if isinstance(self.m, int) else -1
        if (
            not isinstance(self.centres, np.ndarray)
            or self.centres.shape != (keys, 2)
            or not isinstance(self.values, np.ndarray)
            or self.values.shape != (keys,)
        ):
            raise ValueError(
                f"a LearnedLookup of m={self.m!r} holds centres (m*m, 2) and values (m*m,), got "
                f"{short_repr(self.centres)} and {short_repr(self.values)}"
            )
        finite_real("beta", self.beta, minimum=0.0, strict=True)

    def __call__(self, x: ArrayLike) -> np.ndarray:
        """The layer's output at points ``x`` ``(batch, 2)`` (:func:`lib.lookup.soft_lookup`)."""
        return soft_lookup(x, self.centres, self.values, self.beta)

    def cells(self, x: ArrayLike) -> np.ndarray:
        """The arg-max key of each point of ``x`` ``(batch, 2)``, int64: its learned cell (a point
        equidistant from two keys goes to the one listed first).

        Raises:
            ValueError: for points that are not finite and of shape ``(batch, 2)``.
        """
        pts = np.asarray(x, dtype=np.float64)
        if pts.ndim != 2 or pts.shape[1] != 2 or not np.isfinite(pts).all():
            raise ValueError(f"x must be finite points (batch, 2), got {short_repr(x)}")
        return ((pts[:, None, :] - self.centres[None]) ** 2).sum(-1).argmin(1)


def learned_lookup(
    target: Callable[[np.ndarray], np.ndarray],
    m: int,
    *,
    kappa: float = 10.0,
    samples: int = 4096,
    epochs: int = 500,
    lr: float = 1e-2,
    seed: int = 0,
) -> LearnedLookup:
    r"""Train a lookup layer of ``m * m`` keys on ``target`` over the unit square.

    The keys start uniform on the square, the values at 0 and :math:`\beta` at the
    construction's :math:`\kappa m^2`; ``samples`` uniform points (drawn once from ``seed``)
    are fitted by full-batch Adam for ``epochs`` steps at rate ``lr`` on the mean squared error.

    Args:
        target: a function of points ``(batch, 2)`` returning ``(batch,)`` (e.g.
            :func:`lib.targets.wave`); m: keys per axis of the grid it is sized for.
        kappa, samples, epochs, lr, seed: as above.

    Returns:
        A :class:`LearnedLookup`.

    Raises:
        ValueError: for a ``target`` that is not callable or returns values of the wrong shape or
            not finite, bad sizes or rates (named), an inverse temperature
            :math:`\kappa m^2` that overflows, more point-key differences than
            ``lib.maxaffine.MAX_MATRIX_ENTRIES``, or a loss that stops being finite.

    Source: LHSL (NeurIPS 2025)'s lookup layer as the book reconstructs it (Chapter 5); its
    training is the book's (Chapter 7).
    """
    if not callable(target):
        raise ValueError(f"target must be callable, got {short_repr(target)}")
    m = positive_int("m", m, maximum=64)
    kappa = finite_real("kappa", kappa, minimum=0.0, strict=True)
    samples = positive_int("samples", samples, maximum=1 << 20)
    epochs = positive_int("epochs", epochs, maximum=1 << 20)
    lr = finite_real("lr", lr, minimum=0.0, strict=True)
    seed = positive_int("seed", seed, minimum=0, maximum=2**62)
    require_size("the point-key differences", samples * m * m * 2, MAX_MATRIX_ENTRIES,
                 "lib.maxaffine.MAX_MATRIX_ENTRIES")  # fmt: skip
    if not np.isfinite(kappa * m * m):
        raise ValueError(f"kappa * m**2 overflows float64, got kappa={kappa!r}, m={m}")
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.0, 1.0, size=(samples, 2))
    y = _target_values(target, x)
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)
    centres = torch.tensor(rng.uniform(0.0, 1.0, size=(m * m, 2)), requires_grad=True)
    values = torch.zeros(m * m, dtype=torch.float64, requires_grad=True)
    log_beta = torch.tensor(float(np.log(kappa * m * m)), dtype=torch.float64, requires_grad=True)
    opt = torch.optim.Adam([centres, values, log_beta], lr=lr)
    losses = []
    for _ in range(epochs):
        scores = -log_beta.exp() * ((xt[:, None, :] - centres[None]) ** 2).sum(-1)
        out = torch.softmax(scores, dim=1) @ values
        loss = ((out - yt) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
        if not np.isfinite(losses[-1]):
            raise ValueError(
                f"the loss became {losses[-1]} in step {len(losses)}; lower lr or rescale target"
            )
    return LearnedLookup(
        centres.detach().numpy().copy(),
        values.detach().numpy().copy(),
        float(log_beta.detach().exp()),
        m,
        losses,
    )


def compare_partitions(
    layer: LearnedLookup,
    target: Callable[[np.ndarray], np.ndarray],
    *,
    kappa: float = 10.0,
    points: int = 128,
) -> dict[str, float]:
    r"""The learned layer against the construction on ``points x points`` cell-centred points.

    The construction is :func:`lib.lookup.soft_lookup` with keys at the centres of the
    ``m x m`` grid, values ``target`` there and :math:`\beta = \kappa m^2`; its cell of a point is
    the nearest grid centre.

    Returns:
        A dict with ``matching``, the share of points in matching cells (each learned cell
        matched to the construction cell holding most of its points: 1 for the same partition up
        to relabelling, where no point lies on a cell boundary, and also for any refinement of the
        grid, so it measures how far each learned cell stays inside one grid cell);
        ``cells_used``, the number of learned keys that are the arg-max somewhere;
        ``sup_learned``, ``l2_learned``, ``sup_built``, ``l2_built``: the sup and root-mean-square
        errors against ``target`` of both layers.

    Raises:
        ValueError: for a ``layer`` of the wrong type, a bad ``points`` or ``kappa``, a
            ``target`` as :func:`learned_lookup` refuses it, or more point-key differences than
            ``lib.maxaffine.MAX_MATRIX_ENTRIES``.

    Source: LHSL (NeurIPS 2025)'s max-affine partition; the comparison is the book's (Chapter 7).
    """
    if not isinstance(layer, LearnedLookup):
        raise ValueError(f"layer must be a LearnedLookup, got {short_repr(layer)}")
    if not callable(target):
        raise ValueError(f"target must be callable, got {short_repr(target)}")
    points = positive_int("points", points, minimum=2, maximum=1024)
    kappa = finite_real("kappa", kappa, minimum=0.0, strict=True)
    require_size("the point-key differences", points**2 * layer.m**2 * 2, MAX_MATRIX_ENTRIES,
                 "lib.maxaffine.MAX_MATRIX_ENTRIES")  # fmt: skip
    x = grid_centres(points, 2)
    truth = _target_values(target, x)
    grid = grid_centres(layer.m, 2)
    built = soft_lookup(x, grid, _target_values(target, grid), kappa * layer.m**2)
    learned = layer(x)
    own, matched, used = _match(layer, x)
    return {
        "matching": float((own == matched).mean()),
        "cells_used": used,
        "sup_learned": float(np.abs(learned - truth).max()),
        "l2_learned": float(np.sqrt(((learned - truth) ** 2).mean())),
        "sup_built": float(np.abs(built - truth).max()),
        "l2_built": float(np.sqrt(((built - truth) ** 2).mean())),
    }


def _match(layer: LearnedLookup, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """Per point of ``x``: its construction cell (the nearest centre of the ``m x m`` grid), the
    construction cell its learned cell is matched to (the one holding most of the learned
    cell's points; ties to the lowest index), and the number of learned cells used."""
    grid = grid_centres(layer.m, 2)
    own = ((x[:, None, :] - grid[None]) ** 2).sum(-1).argmin(1)
    cells = layer.cells(x)
    overlap = np.zeros((len(layer.centres), len(grid)), dtype=np.int64)
    np.add.at(overlap, (cells, own), 1)
    return own, overlap.argmax(axis=1)[cells], int((overlap.sum(axis=1) > 0).sum())


def matched_cells(layer: LearnedLookup, points: int = 64) -> tuple[np.ndarray, np.ndarray]:
    """The partitions :func:`compare_partitions` compares, as images of ``points x points``
    cell-centred points of the unit square (rows along :math:`x_2`, columns along :math:`x_1`).

    Returns:
        Two int64 arrays ``(points, points)``: each point's construction cell (the index
        ``i m + j`` of the nearest centre of the ``m x m`` grid, ``i`` along :math:`x_1`), and
        the construction cell its learned cell is matched to; the share of equal entries is
        :func:`compare_partitions`' ``matching`` on the same points.

    Raises:
        ValueError: for a ``layer`` that is not a :class:`LearnedLookup`, a bad ``points``, or
            more point-key differences than ``lib.maxaffine.MAX_MATRIX_ENTRIES``.

    Source: the book's comparison (Chapter 7, ``fig-trained-lookup-interactive``).
    """
    if not isinstance(layer, LearnedLookup):
        raise ValueError(f"layer must be a LearnedLookup, got {short_repr(layer)}")
    points = positive_int("points", points, minimum=2, maximum=1024)
    require_size("the point-key differences", points**2 * layer.m**2 * 2, MAX_MATRIX_ENTRIES,
                 "lib.maxaffine.MAX_MATRIX_ENTRIES")  # fmt: skip
    own, matched, _ = _match(layer, grid_centres(points, 2))
    # grid_centres lists x1 slowest: (x1, x2) -> rows x2, columns x1
    return own.reshape(points, points).T, matched.reshape(points, points).T


def _target_values(target: Callable[[np.ndarray], np.ndarray], x: np.ndarray) -> np.ndarray:
    """``target(x)`` as float64 ``(len(x),)``, refused unless finite and of that shape."""
    if not callable(target):
        raise ValueError(f"target must be callable, got {short_repr(target)}")
    y = np.asarray(target(x), dtype=np.float64)
    if y.shape != (len(x),) or not np.isfinite(y).all():
        raise ValueError(
            f"target must return finite values of shape ({len(x)},), got {short_repr(y)}"
        )
    return y


def lookup_cells(mode: str | None = None) -> list[tuple[int, int]]:
    """Every ``(m, seed)`` of ``mode``'s :data:`LOOKUP_SETTINGS`, in the order
    :func:`lookup_table` gives them and ``make full`` plans them.

    Raises:
        ValueError: for an unknown mode.
    """
    mode = runtime.MODE if mode is None else mode
    one_of("mode", mode, runtime.MODES)
    base = LOOKUP_SETTINGS[mode]
    return [(m, seed) for m in base["ms"] for seed in base["seeds"]]


def lookup_run_settings(m: int, seed: int, mode: str | None = None) -> tuple[str, dict]:
    """The stored run's name (``lookup-<m>-seed-<seed>``) and settings of one learned lookup of
    :data:`LOOKUP_SETTINGS`.

    Raises:
        ValueError: for an unknown mode or a bad ``m`` or ``seed``.
    """
    mode = runtime.MODE if mode is None else mode
    one_of("mode", mode, runtime.MODES)
    base = LOOKUP_SETTINGS[mode]
    settings = {k: base[k] for k in ("target", "kappa", "samples", "epochs", "lr", "points")}
    settings |= {
        "m": positive_int("m", m, maximum=64),
        "seed": positive_int("seed", seed, minimum=0, maximum=2**31),
    }
    return f"lookup-{m}-seed-{seed}", settings


def lookup_compute(settings: dict) -> dict:
    """Train one learned lookup from its settings (:func:`lookup_run_settings`) and return what
    is stored: :func:`compare_partitions`' entries, the learned ``beta``, the last epoch's mean
    squared error ``final_loss``, and the learned ``centres`` (``m*m`` pairs) and ``values``
    as lists. ``make full``'s workers call it (:func:`lib.experiments.tasks.execute`).

    Raises:
        ValueError: for settings without one of their keys or an unknown target, and as
            :func:`learned_lookup` and :func:`compare_partitions`.
    """
    keys = {"target", "kappa", "samples", "epochs", "lr", "points", "m", "seed"}
    missing = keys - set(settings) if isinstance(settings, dict) else keys
    if missing:
        raise ValueError(f"settings must be a learned lookup's settings, missing {sorted(missing)}")
    target = _TARGETS.get(settings["target"])
    if target is None:
        raise ValueError(f"settings['target'] must be one of {sorted(_TARGETS)}, got "
                         f"{short_repr(settings['target'])}")  # fmt: skip
    layer = learned_lookup(
        target, settings["m"], kappa=settings["kappa"], samples=settings["samples"],
        epochs=settings["epochs"], lr=settings["lr"], seed=settings["seed"],
    )  # fmt: skip
    cmp = compare_partitions(layer, target, kappa=settings["kappa"], points=settings["points"])
    return cmp | {
        "beta": layer.beta,
        "final_loss": layer.losses[-1],
        "centres": layer.centres.tolist(),
        "values": layer.values.tolist(),
    }


def lookup_run(
    m: int, seed: int = 0, mode: str | None = None, *, allow_compute: bool | None = None
) -> dict:
    """One learned lookup of :data:`LOOKUP_SETTINGS` against its construction.

    Fast mode computes it; full mode reads it from the stored results
    (:func:`lib.experiments.store.load_or_run`, experiment ``"lookup"``), computing a missing
    one only where ``allow_compute`` (default: outside book builds).

    Returns:
        The dict of :func:`lookup_compute`, with the run's ``settings`` and, in full mode, the
        stored run's ``provenance``.

    Raises:
        ValueError: as :func:`lookup_run_settings` and :func:`lookup_compute`.
        lib.experiments.store.StaleResultError: in a full-mode book build whose stored result is
            missing or stale.

    Source: LHSL (NeurIPS 2025)'s lookup layer, trained as the book chooses (Chapter 7).
    """
    mode = runtime.MODE if mode is None else mode
    run, settings = lookup_run_settings(m, seed, mode)
    if mode == "fast":
        return lookup_compute(settings) | {"settings": settings}
    stored = store.load_or_run(
        "lookup",
        run,
        LOOKUP_VERSION,
        settings,
        lambda: lookup_compute(settings),
        allow_compute=not runtime.IN_BUILD if allow_compute is None else allow_compute,
        device="cpu",
    )
    return dict(stored.result) | {"settings": settings, "provenance": stored.provenance}


# The columns of a row of lookup_table, in its order.
_LOOKUP_KEYS = ("matching", "cells_used", "sup_learned", "l2_learned", "sup_built", "l2_built",
                "beta", "final_loss")  # fmt: skip


def lookup_table(mode: str | None = None, *, allow_compute: bool | None = None) -> pd.DataFrame:
    """Every learned lookup of ``mode``'s :data:`LOOKUP_SETTINGS`, one row each.

    Returns:
        A DataFrame with ``m``, ``seed`` and the entries of :func:`lookup_run` named in its
        columns (``matching``, ``cells_used``, the four errors, ``beta``, ``final_loss``), and
        the learned ``centres`` and ``values`` (float64 arrays ``(m*m, 2)`` and ``(m*m,)`` per
        row).

    Raises:
        ValueError, lib.experiments.store.StaleResultError: as :func:`lookup_run`.

    Source: LHSL (NeurIPS 2025)'s lookup layer, trained as the book chooses (Chapter 7).
    """
    rows = []
    for m, seed in lookup_cells(mode):
        run = lookup_run(m, seed, mode, allow_compute=allow_compute)
        rows.append(
            {"m": m, "seed": seed}
            | {k: run[k] for k in _LOOKUP_KEYS}
            | {
                "centres": np.asarray(run["centres"], dtype=np.float64),
                "values": np.asarray(run["values"], dtype=np.float64),
            }
        )
    return pd.DataFrame(rows)
