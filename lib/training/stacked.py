"""The stacked training loop: :func:`lib.training.fit_stacked`, ``K`` runs of one model shape
trained together as one stacked model, phase by phase.

Each epoch draws every run's batch order from its own generator, as :func:`lib.training.fit`
draws it, and takes one Adam step per batch position on the sum of the runs' mean losses
(``_StackedRun.train_epoch``); then records each run's row, calls ``on_epoch`` and the stop
rule run by run (``_StackedRun.end_epoch``) and lets the runs that stopped leave the batch
(``_StackedRun.leave``). The stacked models, and why this is exactly ``K`` separate
trainings, are in :mod:`lib.batched`; the phases
shared with :func:`lib.training.fit` live in the package's other modules.

Source: the book's ``make full`` (Chapters 3 and 5); the book's own training loop, not a paper's.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np
import pandas as pd
import torch
from torch import nn

from .._validate import flag, positive_int, short_repr
from ..batched import StackedModel, stack
from .batches import IGNORE, as_batches
from .common import as_callbacks, as_model, as_schedule, close_bar, epoch_bar, validation_epoch
from .history import epoch_row, history_frame
from .optimizers import lr_schedules
from .scoring import evaluate
from .stop import stop_reason

__all__ = ["fit_stacked"]

# The model type of a stacked training call; its callbacks receive the same models.
_Model = TypeVar("_Model", bound=nn.Module)

_Batches = list[tuple[torch.Tensor, torch.Tensor]]


def fit_stacked(
    models: Sequence[_Model],
    batches: Sequence[Sequence[tuple[torch.Tensor, torch.Tensor]]],
    *,
    epochs: int,
    lr: float = 1e-3,
    final_lr: float | None = None,
    seeds: Sequence[int],
    validation: Sequence[Sequence[tuple[torch.Tensor, torch.Tensor]]] | None = None,
    eval_every: int = 1,
    stop: Callable[[pd.DataFrame], str | None] | None = None,
    on_epoch: Callable[[int, _Model, pd.DataFrame], object] | None = None,
    desc: str | None = None,
    progress: bool = True,
    return_state: bool = False,
) -> list[pd.DataFrame]:
    """Train ``K`` models of one shape together; the same as ``K`` calls of
    :func:`lib.training.fit`.

    Run ``k`` trains ``models[k]`` on ``batches[k]`` with batch order seed ``seeds[k]``: each epoch
    visits its batches in the order ``torch.randperm(len(batches[k]), generator)`` with the
    generator seeded by ``seeds[k]``, as :func:`lib.training.fit` does; one Adam step
    (``fused=True``) per batch on the sum over runs of each run's mean cross-entropy. A run whose
    ``stop`` rule fires leaves the batch (see :mod:`lib.batched`). At the end (and when a run
    leaves) each run's parameters are written back into its model, so the models can be evaluated
    and stored as after :func:`lib.training.fit`.

    Args:
        models: ``K`` :class:`lib.models.PatchAttentionClassifier` or ``K``
            :class:`lib.models.TokenTagger` of one shape (dense embeddings), on one device.
        batches: ``K`` lists of ``(inputs, targets)`` pairs, one list per run, all of one length;
            batches that differ in size (or, for the taggers, in length) are padded at each step
            with inputs whose targets are :data:`lib.training.IGNORE`.
        epochs, lr, final_lr, eval_every, desc, progress: as :func:`lib.training.fit`.
        seeds: ``K`` batch-order seeds.
        validation: optional ``K`` lists of batches, scored per run as in :func:`lib.training.fit`.
        stop: optional callable given each run's history after each epoch (as in
            :func:`lib.training.fit`).
        on_epoch: optional callable ``on_epoch(k, model, history)`` called after each epoch of
            each run still in the batch, with run ``k``'s model (its parameters written back)
            and history so far, before ``stop`` (e.g. to measure a run at a given epoch).
        return_state: also return each run's Adam state in ``attrs["adam"]`` (as
            :meth:`lib.batched.StackedModel.adam_state`: per parameter name ``exp_avg``,
            ``exp_avg_sq``, ``step``), taken when the run leaves the batch or at the end.

    Returns:
        ``K`` DataFrames, one per run, with the columns and ``attrs["stopped"]`` of
        :func:`lib.training.fit`; ``seconds`` is the wall time of the whole batch so far (the runs
        share it), and ``attrs["batched"]`` is ``K``.

    Raises:
        ValueError: as :func:`lib.training.fit`, and for lists of different lengths, runs with
            different numbers of batches, or models of different shapes.

    Source: the book's ``make full`` (Chapters 3 and 5); training as :func:`lib.training.fit`.
    """
    runs, trains, valids, ints = _as_runs(models, batches, seeds, validation)
    epochs, eval_every, lr, final_lr = as_schedule(epochs, eval_every, lr, final_lr)
    stop, on_epoch = as_callbacks(stop, on_epoch)
    progress = flag("progress", progress)
    return_state = flag("return_state", return_state)

    model = stack(runs)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr, fused=True)
    run = _StackedRun(
        models=runs,
        batches=trains,
        validation=valids,
        model=model,
        optimizer=optimizer,
        schedules=lr_schedules([optimizer], epochs, lr, final_lr, "linear"),
        gens=[torch.Generator().manual_seed(s) for s in ints],
        epochs=epochs,
        eval_every=eval_every,
        stop=stop,
        on_epoch=on_epoch,
        return_state=return_state,
    )
    start = time.perf_counter()
    model.train()
    bar = epoch_bar(0, epochs, desc, progress)
    for epoch in bar:
        loss_sum, correct, total = run.train_epoch()
        seconds = time.perf_counter() - start
        leaving = run.end_epoch(epoch, loss_sum, correct, total, seconds)
        for sch in run.schedules:
            sch.step()
        if leaving and not run.leave(leaving):
            break
    close_bar(bar)
    run.finish()
    return run.histories()


def _as_runs(
    models: Sequence[_Model],
    batches: Sequence[Sequence[tuple[torch.Tensor, torch.Tensor]]],
    seeds: Sequence[int],
    validation: Sequence[Sequence[tuple[torch.Tensor, torch.Tensor]]] | None,
) -> tuple[list[_Model], list[_Batches], list[_Batches] | None, list[int]]:
    """The runs' models, batches, validation batches and seeds, checked as :func:`fit_stacked`
    takes them (one entry per run in each list)."""
    if not isinstance(models, (list, tuple)) or not models:
        raise ValueError(f"models must be a non-empty list, got {short_repr(models)}")
    runs = [as_model(m) for m in models]
    K = len(runs)
    for name, value in (("batches", batches), ("seeds", seeds), ("validation", validation)):
        if value is not None and (not isinstance(value, (list, tuple)) or len(value) != K):
            raise ValueError(
                f"{name} must be a list of {K} entries (one per run), got {short_repr(value)}"
            )
    trains = [as_batches(f"batches[{k}]", b) for k, b in enumerate(batches)]
    if len({len(b) for b in trains}) != 1:
        raise ValueError(
            f"every run needs the same number of batches, got {[len(b) for b in trains]}"
        )
    valids = None
    if validation is not None:
        valids = [as_batches(f"validation[{k}]", v) for k, v in enumerate(validation)]
    ints = [positive_int(f"seeds[{k}]", s, minimum=0, maximum=2**62) for k, s in enumerate(seeds)]
    return runs, trains, valids, ints


def _per_run_counts(
    logits: torch.Tensor, targets: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Per run ``(K,)``, on the logits' device: summed cross-entropy, correct and counted positions.

    Nothing is read back to the host here (one read per epoch instead of one per step, which
    matters on a GPU); non-finite logits show as a non-finite loss at the end of the epoch.
    """
    K, C = logits.shape[0], logits.shape[-1]
    ce = nn.functional.cross_entropy(
        logits.reshape(-1, C), targets.reshape(-1), ignore_index=IGNORE, reduction="none"
    ).reshape(K, -1)
    counted = (targets != IGNORE).reshape(K, -1)
    correct = ((logits.argmax(-1) == targets).reshape(K, -1) & counted).sum(dim=1)
    return ce.sum(dim=1), correct, counted.sum(dim=1)


@dataclass
class _StackedRun:
    """One call of :func:`fit_stacked`: the runs, the stacked model and optimiser, and where each
    run stands (its history rows, its stop reason, its Adam state once taken, whether it is
    still in the batch)."""

    models: Sequence[nn.Module]
    batches: list[_Batches]
    validation: list[_Batches] | None
    model: StackedModel
    optimizer: torch.optim.Optimizer
    schedules: list[torch.optim.lr_scheduler.LRScheduler]
    gens: list[torch.Generator]
    epochs: int
    eval_every: int
    stop: Callable[[pd.DataFrame], str | None] | None
    on_epoch: Callable[..., object] | None
    return_state: bool
    rows: list[list[dict[str, Any]]] = field(init=False)
    stopped: list[str | None] = field(init=False)
    adam: list[dict | None] = field(init=False)
    active: list[int] = field(init=False)  # the runs still in the batch, in the run axis's order

    def __post_init__(self) -> None:
        K = len(self.models)
        self.rows = [[] for _ in range(K)]
        self.stopped = [None] * K
        self.adam = [None] * K
        self.active = list(range(K))

    def train_epoch(self) -> tuple[list[float], list[int], list[int]]:
        """One pass of the runs still in the batch over their batches, each in its own fresh
        order, one step per batch position: per run the summed loss and the correct and counted
        positions of the epoch."""
        n_batches = len(self.batches[0])
        orders = {
            k: torch.randperm(n_batches, generator=self.gens[k]).tolist() for k in self.active
        }
        device = next(self.model.parameters()).device
        loss_sum = torch.zeros(len(self.active), dtype=torch.float64, device=device)
        correct = torch.zeros(len(self.active), dtype=torch.int64, device=device)
        total = torch.zeros(len(self.active), dtype=torch.int64, device=device)
        for j in range(n_batches):
            items = [self.batches[k][orders[k][j]] for k in self.active]
            inputs, targets = self.model.stack_batch(items)
            ce, c, n = _per_run_counts(self.model(inputs), targets)
            self.optimizer.zero_grad(set_to_none=True)
            (ce / n.to(ce.dtype)).sum().backward()
            self.optimizer.step()
            loss_sum += ce.detach().double()
            correct += c
            total += n
        # the epoch's per-run sums, read back to the host once as lists
        return loss_sum.tolist(), correct.tolist(), total.tolist()

    def end_epoch(
        self,
        epoch: int,
        loss_sum: list[float],
        correct: list[int],
        total: list[int],
        seconds: float,
    ) -> list[int]:
        """After an epoch, run by run: its row (with a validation score when due), ``on_epoch``
        and the stop rule. The runs that stop now."""
        validation = (
            self.validation if validation_epoch(epoch, self.eval_every, self.epochs) else None
        )
        if validation is not None or self.stop is not None or self.on_epoch is not None:
            self.model.write_back([self.models[k] for k in self.active])
        leaving = []
        for i, k in enumerate(self.active):
            if not np.isfinite(loss_sum[i]):
                raise ValueError(
                    f"the training loss of run {k} became {loss_sum[i]} in epoch {epoch}; lower lr"
                )
            val = np.nan if validation is None else evaluate(self.models[k], validation[k])
            lr = self.optimizer.param_groups[0]["lr"]
            row = epoch_row(
                epoch, loss_sum[i], correct[i], total[i], val=val, lr=lr, seconds=seconds
            )
            self.rows[k].append(row)
            if self.on_epoch is not None:
                self.on_epoch(k, self.models[k], pd.DataFrame(self.rows[k]))
            own = None if self.validation is None else self.validation[k]
            self.stopped[k] = stop_reason(self.stop, self.rows[k], self.models[k], own)
            if self.stopped[k] is not None:
                leaving.append(k)
        return leaving

    def leave(self, leaving: list[int]) -> bool:
        """Take the runs ``leaving`` out of the batch (their Adam state first, with
        ``return_state``): whether any run is left."""
        if self.return_state:
            for i, k in enumerate(self.active):
                if k in leaving:
                    self.adam[k] = self.model.adam_state(self.optimizer, i)
        positions = [i for i, k in enumerate(self.active) if k not in leaving]
        self.active = [k for k in self.active if k not in leaving]
        if not self.active:
            return False
        self.model.keep(positions, self.optimizer)
        return True

    def finish(self) -> None:
        """Write the parameters (and, with ``return_state``, take the Adam state) of the runs
        still in the batch at the end."""
        if self.active:
            self.model.write_back([self.models[k] for k in self.active])
            if self.return_state:
                for i, k in enumerate(self.active):
                    self.adam[k] = self.model.adam_state(self.optimizer, i)

    def histories(self) -> list[pd.DataFrame]:
        """Each run's history, with ``attrs["batched"]`` (``K``) and, with ``return_state``,
        ``attrs["adam"]``."""
        out = []
        for k in range(len(self.models)):
            history = history_frame(self.rows[k], self.stopped[k])
            history.attrs["batched"] = len(self.models)
            if self.return_state:
                history.attrs["adam"] = self.adam[k]
            out.append(history)
        return out
