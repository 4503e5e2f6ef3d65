"""Resumable training: the checkpoint file of :func:`lib.training.fit`, its fingerprint, saving
and resuming.

After an epoch :func:`lib.training.fit` may save the model, the optimisers, the rate schedules,
the batch order's generator and the history so far into one file (``save_checkpoint``,
``torch.save``, written to a temporary file and renamed). The file carries the run's
``fingerprint`` (the model's parameter shapes, the batches' shapes and the settings that
change the numbers); ``resume`` restores a run from a file with the same fingerprint, so
that the resumed run goes on as the uninterrupted one would, and refuses any other.
``make full`` keeps its unfinished runs' checkpoints under ``results/`` (see
:func:`lib.experiments.store.checkpoint_path`): the fingerprint and the file's keys are those
of the checkpoints saved before this module existed, so these still resume.

Source: the book's own training loop for the experiments of Chapters 3 and 5 (not a paper's).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch
from torch import nn

__all__ = ["fingerprint", "resume", "save_checkpoint"]


def fingerprint(
    model: nn.Module,
    batches: list[tuple[torch.Tensor, torch.Tensor]],
    epochs: int,
    lr: float,
    final_lr: float | None,
    seed: int,
    optimizer: str,
    clip_norm: float | None,
    augment: object,
    train_eval: bool,
    momentum: float,
    schedule: str,
) -> dict[str, Any]:
    """What a checkpoint must match to be resumed: the shapes of ``model``'s parameters and of
    the ``batches``' inputs, and the settings of :func:`lib.training.fit` that change the
    numbers (``augment`` by its ``repr``).

    A setting at its default adds no key (Adam, no clipping, no augmentation, no ``train_eval``,
    no momentum, the linear schedule), so that checkpoints saved before these options existed
    still resume.
    """
    return {
        **({} if optimizer == "adam" else {"optimizer": optimizer}),
        **({} if clip_norm is None else {"clip_norm": clip_norm}),
        **({} if augment is None else {"augment": repr(augment)}),
        **({"train_eval": True} if train_eval else {}),
        **({"momentum": momentum} if momentum else {}),
        **({} if schedule == "linear" else {"schedule": schedule}),
        "parameters": [list(p.shape) for p in model.parameters()],
        "batches": [list(x.shape) for x, _ in batches],
        "epochs": epochs,
        "lr": lr,
        "final_lr": final_lr,
        "seed": seed,
    }


def resume(
    path: Path,
    expected: dict[str, Any],
    model: nn.Module,
    optimizers: Sequence[torch.optim.Optimizer],
    schedules: Sequence[torch.optim.lr_scheduler.LRScheduler],
    gen: torch.Generator,
) -> tuple[list[dict[str, Any]], float]:
    """Restore ``model``, ``optimizers``, ``schedules`` and ``gen`` from the checkpoint at
    ``path`` when there is one.

    Returns:
        The history rows saved with it and the seconds of training they took; no rows and
        ``0.0`` when there is no file at ``path``.

    Raises:
        ValueError: for a checkpoint whose fingerprint is not ``expected`` (another model,
            batches or settings).
    """
    if not path.exists():
        return [], 0.0
    state = torch.load(path, map_location="cpu", weights_only=False)
    if state.get("fingerprint") != expected:
        raise ValueError(
            f"checkpoint {path} was saved for another model, batches or settings; "
            "remove it to start afresh"
        )
    model.load_state_dict(state["model"])
    for opt, saved in zip(optimizers, state["optimizers"], strict=True):
        opt.load_state_dict(saved)
    for sch, saved in zip(schedules, state["schedules"], strict=True):
        sch.load_state_dict(saved)
    gen.set_state(state["generator"])
    return state["rows"], state["seconds"]


def save_checkpoint(
    path: Path,
    model: nn.Module,
    optimizers: Sequence[torch.optim.Optimizer],
    schedules: Sequence[torch.optim.lr_scheduler.LRScheduler],
    gen: torch.Generator,
    rows: list[dict[str, Any]],
    fingerprint: dict[str, Any],
) -> None:
    """Save a run after an epoch to ``path`` (through a temporary file beside it, renamed, so
    that an interruption leaves the previous checkpoint whole): the ``fingerprint``, the states
    of ``model``, ``optimizers``, ``schedules`` and ``gen``, the history ``rows`` and their
    cumulative seconds."""
    path.parent.mkdir(parents=True, exist_ok=True)
    state = {
        "fingerprint": fingerprint,
        "model": model.state_dict(),
        "optimizers": [opt.state_dict() for opt in optimizers],
        "schedules": [sch.state_dict() for sch in schedules],
        "generator": gen.get_state(),
        "rows": rows,
        "seconds": rows[-1]["seconds"],
    }
    tmp = path.with_name(path.name + ".tmp")
    torch.save(state, tmp)
    os.replace(tmp, path)
