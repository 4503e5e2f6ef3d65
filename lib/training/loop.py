"""The training loop of one model: :func:`lib.training.fit`, phase by phase.

Each epoch visits every batch once, in an order drawn from the run's generator, and takes one
optimiser step per batch (``_Run.train_epoch``: augmentation, forward pass, loss over the
counted positions, gradient clipping, step); then records the epoch's row, steps the rate
schedule, calls ``on_epoch`` and the stop rule, and saves a checkpoint when one is due
(``_Run.end_epoch``). The settings of a call are checked once into a ``FitSettings``
record (the keyword arguments of :func:`lib.training.fit` are unchanged); the phases that
:func:`lib.training.fit_stacked` shares live in the package's other modules.

Source: the book's own training loop for the experiments of Chapters 3 and 5 (not a paper's;
see :func:`lib.training.fit`).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import pandas as pd
import torch
from torch import nn

from .._validate import finite_real, flag, one_of, positive_int, short_repr
from .batches import as_batches
from .checkpoints import fingerprint, resume, save_checkpoint
from .common import as_callbacks, as_model, as_schedule, close_bar, epoch_bar, validation_epoch
from .history import epoch_row, history_frame
from .optimizers import OPTIMIZERS, SCHEDULES, clip_gradients, lr_schedules, make_optimizers
from .scoring import counts, evaluate
from .stop import stop_reason

__all__ = ["FitSettings", "fit"]

# The model type a training call is given; its callbacks receive the same model.
_Model = TypeVar("_Model", bound=nn.Module)


@dataclass(frozen=True)
class FitSettings:
    """The settings of one call of :func:`lib.training.fit`, checked (see its arguments).

    :meth:`checked` runs the checks in the order ``fit`` always ran them, so a call with several
    bad arguments is refused for the same one.
    """

    epochs: int
    lr: float
    final_lr: float | None
    seed: int
    eval_every: int
    stop: Callable[[pd.DataFrame], str | None] | None
    on_epoch: Callable[..., object] | None
    desc: str | None
    progress: bool
    optimizer: str
    clip_norm: float | None
    augment: Callable[[torch.Tensor, int, int], torch.Tensor] | None
    train_eval: bool
    momentum: float
    schedule: str

    @classmethod
    def checked(
        cls,
        *,
        epochs: int,
        lr: float,
        final_lr: float | None,
        seed: int,
        eval_every: int,
        stop: Callable[[pd.DataFrame], str | None] | None,
        on_epoch: Callable[..., object] | None,
        desc: str | None,
        progress: bool,
        optimizer: str,
        clip_norm: float | None,
        augment: Callable[[torch.Tensor, int, int], torch.Tensor] | None,
        train_eval: bool,
        momentum: float,
        schedule: str,
    ) -> FitSettings:
        """The settings, each checked (and normalised: Python ints and floats) as ``fit`` takes
        it.

        Raises:
            ValueError: naming the first bad argument, as :func:`lib.training.fit` states.
        """
        epochs, eval_every, lr, final_lr = as_schedule(epochs, eval_every, lr, final_lr)
        seed = positive_int("seed", seed, minimum=0, maximum=2**62)
        stop, on_epoch = as_callbacks(stop, on_epoch)
        progress = flag("progress", progress)
        optimizer = one_of("optimizer", optimizer, OPTIMIZERS)
        if clip_norm is not None:
            clip_norm = finite_real("clip_norm", clip_norm, minimum=0.0, strict=True)
        if augment is not None and not callable(augment):
            raise ValueError(f"augment must be callable, got {short_repr(augment)}")
        train_eval = flag("train_eval", train_eval)
        momentum = finite_real("momentum", momentum, minimum=0.0)
        if momentum >= 1.0 or (momentum and optimizer != "sgd"):
            raise ValueError(
                f"momentum must lie in [0, 1) and needs optimizer='sgd', got momentum={momentum!r} "
                f"with optimizer={optimizer!r}"
            )
        schedule = one_of("schedule", schedule, SCHEDULES)
        return cls(
            epochs=epochs,
            lr=lr,
            final_lr=final_lr,
            seed=seed,
            eval_every=eval_every,
            stop=stop,
            on_epoch=on_epoch,
            desc=desc,
            progress=progress,
            optimizer=optimizer,
            clip_norm=clip_norm,
            augment=augment,
            train_eval=train_eval,
            momentum=momentum,
            schedule=schedule,
        )

    def fingerprint(
        self, model: nn.Module, batches: list[tuple[torch.Tensor, torch.Tensor]]
    ) -> dict[str, Any]:
        """The checkpoint fingerprint of a run of ``model`` on ``batches`` with these settings
        (:func:`lib.training.checkpoints.fingerprint`)."""
        return fingerprint(
            model,
            batches,
            self.epochs,
            self.lr,
            self.final_lr,
            self.seed,
            self.optimizer,
            self.clip_norm,
            self.augment,
            self.train_eval,
            self.momentum,
            self.schedule,
        )


def fit(
    model: _Model,
    batches: Sequence[tuple[torch.Tensor, torch.Tensor]],
    *,
    epochs: int,
    lr: float = 1e-3,
    final_lr: float | None = None,
    seed: int = 0,
    validation: Sequence[tuple[torch.Tensor, torch.Tensor]] | None = None,
    eval_every: int = 1,
    stop: Callable[[pd.DataFrame], str | None] | None = None,
    on_epoch: Callable[[_Model, pd.DataFrame], object] | None = None,
    checkpoint: str | os.PathLike[str] | None = None,
    checkpoint_every: float = 60.0,
    desc: str | None = None,
    progress: bool = True,
    optimizer: str = "adam",
    clip_norm: float | None = None,
    augment: Callable[[torch.Tensor, int, int], torch.Tensor] | None = None,
    train_eval: bool = False,
    momentum: float = 0.0,
    schedule: str = "linear",
) -> pd.DataFrame:
    """Train ``model`` with Adam (or plain SGD) on ``batches`` and return its per-epoch history.

    Each epoch visits every batch once, in an order drawn from ``seed`` and the epoch number;
    one Adam step (``fused=True``, learning rate ``lr``) per batch on the mean cross-entropy
    over the batch's counted positions. The weights of an ``nn.Embedding(sparse=True)`` get
    torch's ``SparseAdam`` instead: only the rows a batch touches (and their moments) are updated,
    which saves a pass over the whole table per step (:class:`lib.models.TokenTagger` with
    ``sparse_embedding=True``). With the thread count fixed by :mod:`lib.runtime`, the same call
    gives the same history on the same machine, with or without an interruption in between.

    Args:
        model: a torch module mapping inputs to logits ``(..., C)``, already on the device of
            the batches (see :data:`lib.runtime.DEVICE`).
        batches: ``(inputs, targets)`` tensor pairs (targets int64, :data:`IGNORE` where
            nothing is predicted), e.g. from :func:`bucket_batches`.
        epochs: number of passes over ``batches`` (the cap when ``stop`` is given).
        lr: the learning rate (> 0), Adam's or SGD's.
        final_lr: if given, the learning rate falls from ``lr`` in the first epoch to
            ``final_lr`` in the last (``0 < final_lr <= lr``), along ``schedule``; ``None`` keeps
            it constant.
        seed: seed of the batch order.
        validation: optional batches scored with :func:`evaluate` every ``eval_every`` epochs
            and after the last one.
        eval_every: spacing of the validation scores, in epochs.
        stop: optional callable (e.g. a :class:`StopRule`) given the history after each epoch;
            a returned string ends training there and is kept in ``history.attrs["stopped"]``.
        on_epoch: optional callable ``on_epoch(model, history)`` called after each epoch, before
            ``stop``, with the history so far (e.g. to measure the model at a given epoch).
        checkpoint: optional file path. After an epoch the model, the optimizer, the batch
            order's generator and the history are saved there (``torch.save``, written to a
            temporary file and renamed), and a later call with the same path, model shape,
            batches and settings resumes from it; the file is removed when training ends.
        checkpoint_every: seconds of training between two checkpoints (at epoch ends; ``0``:
            after every epoch). A checkpoint of the CoNLL-2003 tagger with its Adam state is
            about 40 MB, so saving one per epoch would write gigabytes in a ``make full``.
        desc: label of the progress bar (silent during book builds).
        progress: ``False`` hides the bar also outside builds (for callers that show their own).
        optimizer: ``"adam"`` (default, as above) or ``"sgd"``: stochastic gradient descent at
            rate ``lr`` (``torch.optim.SGD``, with ``momentum``), the optimiser the AI-written
            report on K&S names (Chapter 3).
        momentum: SGD's heavy-ball momentum, in ``[0, 1)`` (``torch.optim.SGD``'s ``momentum``;
            default 0, plain SGD); only with ``optimizer="sgd"``.
        schedule: how the rate falls to ``final_lr``: ``"linear"`` (default,
            ``torch.optim.lr_scheduler.LinearLR``) or ``"cosine"`` (half a cosine,
            ``CosineAnnealingLR`` with ``eta_min=final_lr``).
        clip_norm: if given (> 0), every step first scales the gradient down to this Euclidean
            norm over all parameters when it is longer (``torch.nn.utils.clip_grad_norm_``);
            default ``None``, no clipping.
        augment: optional callable ``augment(inputs, epoch, batch)`` returning the inputs a step
            trains on in place of batch ``batch``'s ``inputs`` in epoch ``epoch`` (same shape and
            dtype; e.g. :class:`lib.datasets.perturbations.SingletonDropout`). It must depend on
            its arguments only, so that a resumed run draws what an uninterrupted one draws.
        train_eval: ``True`` scores ``batches`` with :func:`evaluate` (the model in eval mode,
            inputs as given, not augmented) after every epoch: ``train_acc`` is then that score and
            ``running_acc`` the accuracy during the epoch. It costs a forward pass over the
            training batches per epoch.

    Returns:
        A DataFrame with one row per epoch and the columns ``epoch`` (1-based), ``loss`` (mean
        cross-entropy per counted position during the epoch, nats), ``train_acc`` (accuracy on the
        batches as they were trained on during the epoch, padding excluded; with ``train_eval``
        the eval-mode score after it), ``val_acc`` (NaN on epochs without a validation score),
        ``lr``, ``seconds`` (cumulative wall time, resumed runs included) and, with
        ``train_eval``, ``running_acc``. ``attrs["stopped"]`` holds the stop rule's reason, or
        ``None`` when the cap ended it.

    Raises:
        ValueError: for a model that is not a module, malformed batches, targets outside the
            model's classes, non-finite logits, a non-positive ``epochs`` or ``eval_every``, a
            non-positive or non-finite ``lr`` or ``final_lr`` (or ``final_lr > lr``), a ``stop``
            that is not callable, a checkpoint saved for another model, batches or settings, or a
            loss that becomes NaN/inf (the epoch is named), an ``augment`` that is not callable or
            returns inputs of another shape or dtype, a ``train_eval`` that is not a bool, a
            ``momentum`` outside ``[0, 1)`` or with Adam, or an unknown ``schedule``.

    Source: the training of K&S (ICLR 2024) Section 5, whose optimiser and sizes are
    unknown (the sources do not give them; the choices here are the book's own; see the Sources and
    certainty page). Used in Chapters 3 and 5.
    """
    model = as_model(model)
    batches = as_batches("batches", batches)
    if validation is not None:
        validation = as_batches("validation", validation)
    settings = FitSettings.checked(
        epochs=epochs,
        lr=lr,
        final_lr=final_lr,
        seed=seed,
        eval_every=eval_every,
        stop=stop,
        on_epoch=on_epoch,
        desc=desc,
        progress=progress,
        optimizer=optimizer,
        clip_norm=clip_norm,
        augment=augment,
        train_eval=train_eval,
        momentum=momentum,
        schedule=schedule,
    )
    optimizers = make_optimizers(model, settings.lr, settings.optimizer, settings.momentum)
    run = _Run(
        model=model,
        batches=batches,
        validation=validation,
        settings=settings,
        optimizers=optimizers,
        trainable=[p for p in model.parameters() if p.requires_grad],
        schedules=lr_schedules(
            optimizers, settings.epochs, settings.lr, settings.final_lr, settings.schedule
        ),
        checkpoint_every=finite_real("checkpoint_every", checkpoint_every, minimum=0.0),
        gen=torch.Generator().manual_seed(settings.seed),
        fingerprint=settings.fingerprint(model, batches),
    )
    if checkpoint is not None:
        run.resume_from(Path(checkpoint))
    return run.train()


@dataclass
class _Run:
    """One call of :func:`fit`: what it trains, with what, and where its epoch loop stands."""

    model: nn.Module
    batches: list[tuple[torch.Tensor, torch.Tensor]]
    validation: list[tuple[torch.Tensor, torch.Tensor]] | None
    settings: FitSettings
    optimizers: list[torch.optim.Optimizer]
    trainable: list[nn.Parameter]
    schedules: list[torch.optim.lr_scheduler.LRScheduler]
    checkpoint_every: float
    gen: torch.Generator
    fingerprint: dict[str, Any]
    checkpoint: Path | None = None
    rows: list[dict[str, Any]] = field(default_factory=list)
    done_seconds: float = 0.0  # of the epochs before a resumption
    start: float = 0.0
    saved_at: float = 0.0

    def resume_from(self, checkpoint: Path) -> None:
        """Save to ``checkpoint``, and go on from it when a checkpoint of this run is there."""
        self.checkpoint = checkpoint
        self.rows, self.done_seconds = resume(
            checkpoint, self.fingerprint, self.model, self.optimizers, self.schedules, self.gen
        )

    def train(self) -> pd.DataFrame:
        """The epochs from the first not yet done; the history."""
        s, stopped = self.settings, None
        self.start = self.saved_at = time.perf_counter()
        self.model.train()
        bar = epoch_bar(len(self.rows), s.epochs, s.desc, s.progress)
        for epoch in bar:
            loss_sum, correct, total = self.train_epoch(epoch)
            stopped = self.end_epoch(epoch, loss_sum, correct, total, bar)
            if stopped is not None:
                break
        close_bar(bar)
        if self.checkpoint is not None:
            self.checkpoint.unlink(missing_ok=True)
        return history_frame(self.rows, stopped)

    def train_epoch(self, epoch: int) -> tuple[float, int, int]:
        """One pass over the batches in a fresh order, one step per batch: the summed loss and
        the correct and counted positions of the epoch."""
        s = self.settings
        loss_sum, correct, total = 0.0, 0, 0
        for b in torch.randperm(len(self.batches), generator=self.gen).tolist():
            inputs, targets = self.batches[b]
            if s.augment is not None:
                inputs = _augmented(s.augment, inputs, epoch, b)
            try:
                logits = self.model(inputs)
            except ValueError as err:  # e.g. scores that overflow: say when training broke
                raise ValueError(f"in epoch {epoch} of training: {err}") from err
            loss, c, n = counts(logits, targets)
            for opt in self.optimizers:
                opt.zero_grad(set_to_none=True)
            (loss / n).backward()
            if s.clip_norm is not None:
                clip_gradients(self.trainable, s.clip_norm)
            for opt in self.optimizers:
                opt.step()
            loss_sum, correct, total = loss_sum + float(loss.detach()), correct + c, total + n
        if not np.isfinite(loss_sum):
            raise ValueError(f"the training loss became {loss_sum} in epoch {epoch}; lower lr")
        return loss_sum, correct, total

    def end_epoch(
        self, epoch: int, loss_sum: float, correct: int, total: int, bar: object
    ) -> str | None:
        """After an epoch: its row (with the scores due), the rate schedule's step, the bar,
        ``on_epoch``, the stop rule and a checkpoint when one is due; the reason to stop."""
        s = self.settings
        val = np.nan
        if self.validation is not None and validation_epoch(epoch, s.eval_every, s.epochs):
            val = evaluate(self.model, self.validation)
        self.rows.append(
            epoch_row(
                epoch,
                loss_sum,
                correct,
                total,
                val=val,
                train_acc=evaluate(self.model, self.batches) if s.train_eval else None,
                lr=self.optimizers[0].param_groups[0]["lr"],
                seconds=self.done_seconds + time.perf_counter() - self.start,
            )
        )
        for sch in self.schedules:
            sch.step()
        if hasattr(bar, "set_postfix"):
            bar.set_postfix(acc=f"{self.rows[-1]['train_acc']:.4f}")
        if s.on_epoch is not None:
            s.on_epoch(self.model, pd.DataFrame(self.rows))
        stopped = stop_reason(s.stop, self.rows, self.model, self.validation)
        self.save_if_due(epoch, stopped)
        return stopped

    def save_if_due(self, epoch: int, stopped: str | None) -> None:
        """Save a checkpoint after ``epoch`` when the run goes on and ``checkpoint_every``
        seconds have passed since the last one."""
        due = time.perf_counter() - self.saved_at >= self.checkpoint_every
        if self.checkpoint is not None and stopped is None and epoch < self.settings.epochs and due:
            save_checkpoint(
                self.checkpoint,
                self.model,
                self.optimizers,
                self.schedules,
                self.gen,
                self.rows,
                self.fingerprint,
            )
            self.saved_at = time.perf_counter()


def _augmented(
    augment: Callable[[torch.Tensor, int, int], torch.Tensor],
    inputs: torch.Tensor,
    epoch: int,
    batch: int,
) -> torch.Tensor:
    """``augment(inputs, epoch, batch)``, refused unless it keeps the inputs' shape and dtype."""
    try:
        out = augment(inputs, epoch, batch)
    except TypeError as err:  # a callable of another signature
        raise ValueError(
            f"augment must take (inputs, epoch, batch) and return inputs, got {short_repr(augment)}"
            f" ({err})"
        ) from err
    if not isinstance(out, torch.Tensor) or out.shape != inputs.shape or out.dtype != inputs.dtype:
        raise ValueError(
            f"augment must return inputs of shape {tuple(inputs.shape)} and dtype {inputs.dtype}, "
            f"got {short_repr(out)}"
        )
    return out
