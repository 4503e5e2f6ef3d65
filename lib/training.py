"""One small, deterministic training loop for the book's classifiers (Chapters 3 and 5).

A model maps a batch of inputs to logits ``(..., C)``; its targets are int64 class ids of the
leading shape, with :data:`IGNORE` wherever there is nothing to predict (padding). The loss is
the mean cross-entropy over the counted positions and the accuracy is the share of counted
positions whose arg-max logit is the target: for :class:`lib.models.TokenTagger` that is
the token-level accuracy with padding excluded, the measure the book uses for K&S Section 5's
CoNLL-2003 experiment (Chapter 3; whether the paper counts tokens or sentences is unknown).

What makes it fast on a 2-core CPU: sentences of similar length share a batch
(:func:`bucket_batches`, about half the padding of random batches), the batches are padded
once and reused every epoch, and ``torch.optim.Adam(fused=True)``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import pandas as pd
import torch
from numpy.typing import ArrayLike
from torch import nn

from . import runtime
from ._validate import all_finite, finite_real, flag, one_of, positive_int, short_repr

__all__ = [
    "IGNORE",
    "OPTIMIZERS",
    "StopRule",
    "bucket_batches",
    "fit",
    "evaluate",
    "epochs_to",
    "accuracy_at",
    "epoch_seconds",
]

#: Target value of positions that count neither in the loss nor in the accuracy.
IGNORE = -100

# The model type a training call is given; its callbacks receive the same model.
_Model = TypeVar("_Model", bound=nn.Module)


def bucket_batches(
    pairs: Sequence[tuple[ArrayLike, ArrayLike]],
    batch_size: int,
    *,
    pad_id: int = 0,
    seed: int = 0,
    device: torch.device | str | None = None,
) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Group encoded sentences of similar length into padded batches.

    Sentences are sorted by length (ties in a random order drawn from ``seed``) and cut into
    consecutive groups of ``batch_size``; each group is padded to its longest sentence.

    Args:
        pairs: ``(word_ids, tag_ids)`` pairs of equal-length int arrays, as returned by
            :func:`lib.datasets.conll2003.encode_pairs`.
        batch_size: sentences per batch (the last batch may be smaller).
        pad_id: word id written into padding positions.
        seed: seed of the tie-breaking order.
        device: where the tensors live (default :data:`lib.runtime.DEVICE`).

    Returns:
        A list of pairs ``(ids, targets)`` of int64 tensors ``(b, n_max)``, padding ``pad_id`` in
        ``ids`` and :data:`IGNORE` in ``targets``.

    Raises:
        ValueError: for an empty list, a malformed or empty pair, a non-integer id, or a
            non-positive ``batch_size``.
    """
    if not isinstance(pairs, (list, tuple)) or not pairs:
        raise ValueError(
            f"pairs must be a non-empty list of (word_ids, tag_ids), got {short_repr(pairs)}"
        )
    batch_size = positive_int("batch_size", batch_size)
    pad_id = positive_int("pad_id", pad_id, minimum=0, maximum=2**62)
    seed = positive_int("seed", seed, minimum=0, maximum=2**62)
    device = runtime.DEVICE if device is None else runtime.as_device(device)
    arrays = []
    for i, pair in enumerate(pairs):
        if not isinstance(pair, (list, tuple)) or len(pair) != 2:
            raise ValueError(
                f"pairs[{i}] must be a (word_ids, tag_ids) pair, got {short_repr(pair)}"
            )
        ids, tags = (np.asarray(a) for a in pair)
        if ids.ndim != 1 or ids.shape != tags.shape or len(ids) == 0:
            raise ValueError(
                f"pairs[{i}] must hold two non-empty 1-D arrays of one length, got shapes "
                f"{ids.shape} and {tags.shape}"
            )
        if ids.dtype.kind not in "iu" or tags.dtype.kind not in "iu":
            raise ValueError(
                f"pairs[{i}] must hold integer ids, got dtypes {ids.dtype} and {tags.dtype}"
            )
        if ids.min() < 0 or ids.max() > 2**62 or tags.min() < 0 or tags.max() > 2**62:
            raise ValueError(
                f"pairs[{i}] must hold ids in [0, 2**62], "
                f"got word ids in [{ids.min()}, {ids.max()}] "
                f"and tag ids in [{tags.min()}, {tags.max()}]"
            )
        arrays.append((ids, tags))
    lengths = np.array([len(ids) for ids, _ in arrays])
    tiebreak = np.random.default_rng(seed).permutation(len(arrays))
    order = np.lexsort((tiebreak, lengths))
    batches = []
    for start in range(0, len(order), batch_size):
        members = order[start : start + batch_size]
        width = int(lengths[members].max())
        ids = np.full((len(members), width), pad_id, dtype=np.int64)
        targets = np.full((len(members), width), IGNORE, dtype=np.int64)
        for row, k in enumerate(members):
            n = lengths[k]
            ids[row, :n], targets[row, :n] = arrays[k]
        batches.append((torch.from_numpy(ids).to(device), torch.from_numpy(targets).to(device)))
    return batches


def _as_batches(name: str, batches: object) -> list[tuple[torch.Tensor, torch.Tensor]]:
    if not isinstance(batches, (list, tuple)) or not batches:
        raise ValueError(
            f"{name} must be a non-empty list of (inputs, targets) tensor pairs, "
            f"got {short_repr(batches)}"
        )
    for i, batch in enumerate(batches):
        if (
            not isinstance(batch, (list, tuple))
            or len(batch) != 2
            or not all(isinstance(t, torch.Tensor) for t in batch)
        ):
            raise ValueError(
                f"{name}[{i}] must be an (inputs, targets) pair of tensors, got {short_repr(batch)}"
            )
        if batch[1].dtype != torch.int64 or not bool((batch[1] != IGNORE).any()):
            raise ValueError(
                f"{name}[{i}] targets must be int64 with at least one position that is not IGNORE"
            )
    return list(batches)


def _as_schedule(
    epochs: int, eval_every: int, lr: float, final_lr: float | None
) -> tuple[int, int, float, float | None]:
    """``epochs``, ``eval_every`` (positive ints), ``lr`` (> 0) and ``final_lr`` (``None`` or in
    ``(0, lr]``), validated as :func:`fit` and :func:`lib.batched.fit_stacked` take them."""
    epochs = positive_int("epochs", epochs)
    eval_every = positive_int("eval_every", eval_every)
    lr = finite_real("lr", lr, minimum=0.0, strict=True)
    if final_lr is not None:
        final_lr = finite_real("final_lr", final_lr, minimum=0.0, strict=True)
        if final_lr > lr:
            raise ValueError(
                "final_lr must not exceed lr (the rate only falls), "
                f"got final_lr={final_lr} > lr={lr}"
            )
    return epochs, eval_every, lr, final_lr


def _as_model(model: _Model) -> _Model:
    if not isinstance(model, nn.Module):
        raise ValueError(f"model must be a torch.nn.Module, got {short_repr(model)}")
    return model


def _counts(logits: torch.Tensor, targets: torch.Tensor) -> tuple[torch.Tensor, int, int]:
    """Summed cross-entropy, number correct and number counted over non-IGNORE positions."""
    if not isinstance(logits, torch.Tensor) or not logits.is_floating_point() or logits.ndim < 1:
        raise ValueError(
            f"the model must return floating-point logits (..., C), got {short_repr(logits)}"
        )
    if logits.shape[:-1] != targets.shape:
        raise ValueError(
            f"the model's logits {tuple(logits.shape)} do not match "
            f"targets {tuple(targets.shape)} plus a class axis"
        )
    if not all_finite(logits):
        raise ValueError(
            "the model's logits are not finite (NaN or inf); check its weights and inputs"
        )
    flat, tgt = logits.reshape(-1, logits.shape[-1]), targets.reshape(-1)
    counted = tgt != IGNORE
    real = tgt[counted]
    if bool((real < 0).any()) or bool((real >= flat.shape[-1]).any()):
        raise ValueError(
            f"targets must lie in [0, {flat.shape[-1]}) (the model's classes) or be IGNORE, "
            f"got values in [{int(real.min())}, {int(real.max())}]"
        )
    loss = nn.functional.cross_entropy(flat, tgt, ignore_index=IGNORE, reduction="sum")
    correct = int((flat.argmax(-1) == tgt)[counted].sum())
    return loss, correct, int(counted.sum())


@torch.no_grad()
def evaluate(model: nn.Module, batches: Sequence[tuple[torch.Tensor, torch.Tensor]]) -> float:
    """Accuracy of ``model`` over the counted (non-:data:`IGNORE`) positions of ``batches``.

    Args:
        model: maps ``inputs`` to logits ``(..., C)``.
        batches: ``(inputs, targets)`` pairs, e.g. from :func:`bucket_batches`.

    Returns:
        A float in ``[0, 1]``, correct positions over counted positions, pooled over batches.

    Raises:
        ValueError: for malformed batches or logits that do not match the targets.
    """
    model = _as_model(model)
    batches = _as_batches("batches", batches)
    was_training = model.training
    model.eval()
    correct = total = 0
    try:
        for inputs, targets in batches:
            _, c, n = _counts(model(inputs), targets)
            correct, total = correct + c, total + n
    finally:
        model.train(was_training)
    return correct / total


@dataclass(frozen=True)
class StopRule:
    """Stop training once the training accuracy has reached ``target`` and levelled off.

    Levelled off at epoch ``e`` means: the best training accuracy of the last ``window`` epochs
    beats the best of every epoch before them by less than ``min_gain``. The rule is checked only
    from the first epoch whose accuracy is at least ``target`` plus ``window`` epochs on, so a run
    that reaches ``target`` always trains ``window`` epochs more, and a run that never reaches it
    trains to the epoch cap of :func:`fit`. Calling the rule on a history returns the reason to
    stop (a sentence) or ``None``.

    Attributes:
        target: the accuracy to pass, in ``(0, 1]`` (Chapter 3: K&S's reported 0.9872).
        window: epochs compared (>= 1).
        min_gain: the smallest gain in best accuracy over ``window`` epochs that counts as
            progress, in ``[0, 1)``.

    Raises:
        ValueError: for a target outside ``(0, 1]``, a window below 1 or a gain outside
            ``[0, 1)``.

    Source: this book's stopping rule for K&S Section 5's experiment at paper scale (the paper
    trains for 800 epochs; Chapter 3 states why the book stops earlier).
    """

    target: float
    window: int = 10
    min_gain: float = 5e-4

    def __post_init__(self) -> None:
        finite_real("target", self.target, minimum=0.0, maximum=1.0, strict=True)
        positive_int("window", self.window)
        gain = finite_real("min_gain", self.min_gain, minimum=0.0, maximum=1.0)
        if gain >= 1.0:
            raise ValueError(f"min_gain must lie in [0, 1), got {self.min_gain!r}")

    def __call__(self, history: pd.DataFrame) -> str | None:
        acc = history["train_acc"].to_numpy()
        reached = np.flatnonzero(acc >= self.target)
        if not len(reached) or len(acc) < reached[0] + 1 + self.window:
            return None
        recent, before = acc[-self.window :].max(), acc[: -self.window].max()
        if recent - before < self.min_gain:
            return (
                f"passed {self.target:g} at epoch {reached[0] + 1} and gained "
                f"{max(recent - before, 0.0):.5f} < {self.min_gain:g} in its last "
                f"{self.window} epochs"
            )
        return None


#: The optimisers :func:`fit` offers.
OPTIMIZERS = ("adam", "sgd")


def _optimizers(
    model: nn.Module, lr: float, optimizer: str = "adam", momentum: float = 0.0
) -> list[torch.optim.Optimizer]:
    """Adam for the dense parameters; torch's SparseAdam ("lazy" Adam: only the rows a batch
    touches are updated, their moments included) for the weights of embeddings built with
    ``sparse=True``. For ``"sgd"`` one SGD (no weight decay; heavy-ball ``momentum``, default
    none) for all of them: without momentum, its step on a sparse gradient is exactly the dense
    step, since untouched rows have gradient zero."""
    sparse_ids = {id(m.weight) for m in model.modules() if isinstance(m, nn.Embedding) and m.sparse}
    params = [p for p in model.parameters() if p.requires_grad]
    if not params:
        raise ValueError("model has no trainable parameters")
    if optimizer == "sgd":
        return [torch.optim.SGD(params, lr=lr, momentum=momentum)]
    dense = [p for p in params if id(p) not in sparse_ids]
    sparse = [p for p in params if id(p) in sparse_ids]
    out = [torch.optim.Adam(dense, lr=lr, fused=True)] if dense else []
    return out + ([torch.optim.SparseAdam(sparse, lr=lr)] if sparse else [])


def _clip_gradients(params: list[nn.Parameter], max_norm: float) -> None:
    """``torch.nn.utils.clip_grad_norm_`` (the same coefficient ``max_norm / (norm + 1e-6)``,
    capped at 1) for gradients that may be sparse, which torch's own refuses: a sparse
    gradient is coalesced first, so that its norm is that of the dense gradient it stands for."""
    grads = []
    for p in params:
        if p.grad is None:
            continue
        if p.grad.is_sparse:
            p.grad = p.grad.coalesce()
        grads.append(p.grad)
    if not grads:
        return
    # sum() of a non-empty list of tensors is a tensor (typeshed adds the start value's Literal[0])
    total = torch.sqrt(sum((g._values() if g.is_sparse else g).pow(2).sum() for g in grads))  # type: ignore[arg-type]
    coef = torch.clamp(max_norm / (total + 1e-6), max=1.0)
    for g in grads:
        (g._values() if g.is_sparse else g).mul_(coef)


def _fingerprint(
    model: nn.Module,
    batches: list[tuple[torch.Tensor, torch.Tensor]],
    epochs: int,
    lr: float,
    final_lr: float | None,
    seed: int,
    optimizer: str = "adam",
    clip_norm: float | None = None,
    augment: object = None,
    train_eval: bool = False,
    momentum: float = 0.0,
    schedule: str = "linear",
) -> dict[str, Any]:
    return {  # Adam without clipping adds no keys: checkpoints saved before these options resume
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
    model = _as_model(model)
    batches = _as_batches("batches", batches)
    if validation is not None:
        validation = _as_batches("validation", validation)
    epochs, eval_every, lr, final_lr = _as_schedule(epochs, eval_every, lr, final_lr)
    seed = positive_int("seed", seed, minimum=0, maximum=2**62)
    if stop is not None and not callable(stop):
        raise ValueError(f"stop must be callable (e.g. a StopRule), got {short_repr(stop)}")
    if on_epoch is not None and not callable(on_epoch):
        raise ValueError(f"on_epoch must be callable, got {short_repr(on_epoch)}")
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
    schedule = one_of("schedule", schedule, ("linear", "cosine"))
    optimizers = _optimizers(model, lr, optimizer, momentum)
    trainable = [p for p in model.parameters() if p.requires_grad]
    schedules = (
        []
        if final_lr is None or epochs == 1
        else [
            torch.optim.lr_scheduler.LinearLR(
                opt, start_factor=1.0, end_factor=final_lr / lr, total_iters=epochs - 1
            )
            if schedule == "linear"
            else torch.optim.lr_scheduler.CosineAnnealingLR(opt, epochs - 1, eta_min=final_lr)
            for opt in optimizers
        ]
    )
    checkpoint_every = finite_real("checkpoint_every", checkpoint_every, minimum=0.0)
    gen = torch.Generator().manual_seed(seed)
    rows, done_seconds, stopped = [], 0.0, None
    fingerprint = _fingerprint(
        model,
        batches,
        epochs,
        lr,
        final_lr,
        seed,
        optimizer,
        clip_norm,
        augment,
        train_eval,
        momentum,
        schedule,
    )
    if checkpoint is not None:
        checkpoint = Path(checkpoint)
        if checkpoint.exists():
            state = torch.load(checkpoint, map_location="cpu", weights_only=False)
            if state.get("fingerprint") != fingerprint:
                raise ValueError(
                    f"checkpoint {checkpoint} was saved for another model, batches or settings; "
                    "remove it to start afresh"
                )
            model.load_state_dict(state["model"])
            for opt, saved in zip(optimizers, state["optimizers"], strict=True):
                opt.load_state_dict(saved)
            for sch, saved in zip(schedules, state["schedules"], strict=True):
                sch.load_state_dict(saved)
            gen.set_state(state["generator"])
            rows, done_seconds = state["rows"], state["seconds"]
    start = saved_at = time.perf_counter()
    model.train()
    epochs_range = range(len(rows) + 1, epochs + 1)
    bar = (
        runtime.progress(epochs_range, desc=desc, total=epochs, initial=len(rows))
        if progress
        else epochs_range
    )
    for epoch in bar:
        loss_sum, correct, total = 0.0, 0, 0
        for b in torch.randperm(len(batches), generator=gen).tolist():
            inputs, targets = batches[b]
            if augment is not None:
                inputs = _augmented(augment, inputs, epoch, b)
            try:
                logits = model(inputs)
            except ValueError as err:  # e.g. scores that overflow: say when training broke
                raise ValueError(f"in epoch {epoch} of training: {err}") from err
            loss, c, n = _counts(logits, targets)
            for opt in optimizers:
                opt.zero_grad(set_to_none=True)
            (loss / n).backward()
            if clip_norm is not None:
                _clip_gradients(trainable, clip_norm)
            for opt in optimizers:
                opt.step()
            loss_sum, correct, total = loss_sum + float(loss.detach()), correct + c, total + n
        if not np.isfinite(loss_sum):
            raise ValueError(f"the training loss became {loss_sum} in epoch {epoch}; lower lr")
        val = np.nan
        if validation is not None and (epoch % eval_every == 0 or epoch == epochs):
            val = evaluate(model, validation)
        rows.append(
            {
                "epoch": epoch,
                "loss": loss_sum / total,
                "train_acc": evaluate(model, batches) if train_eval else correct / total,
                "val_acc": val,
                "lr": optimizers[0].param_groups[0]["lr"],
                "seconds": done_seconds + time.perf_counter() - start,
                **({"running_acc": correct / total} if train_eval else {}),
            }
        )
        for sch in schedules:
            sch.step()
        if hasattr(bar, "set_postfix"):
            bar.set_postfix(acc=f"{rows[-1]['train_acc']:.4f}")
        if on_epoch is not None:
            on_epoch(model, pd.DataFrame(rows))
        if stop is not None:
            stopped = stop(pd.DataFrame(rows))
            if stopped is not None and validation is not None and np.isnan(val):
                rows[-1]["val_acc"] = evaluate(model, validation)
        due = time.perf_counter() - saved_at >= checkpoint_every
        if checkpoint is not None and stopped is None and epoch < epochs and due:
            _save_checkpoint(checkpoint, model, optimizers, schedules, gen, rows, fingerprint)
            saved_at = time.perf_counter()
        if stopped is not None:
            break
    if hasattr(bar, "close"):
        bar.close()
    if checkpoint is not None:
        checkpoint.unlink(missing_ok=True)
    history = pd.DataFrame(rows)
    history.attrs["stopped"] = stopped
    return history


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


def _save_checkpoint(
    path: Path,
    model: nn.Module,
    optimizers: Sequence[torch.optim.Optimizer],
    schedules: Sequence[torch.optim.lr_scheduler.LRScheduler],
    gen: torch.Generator,
    rows: list[dict[str, Any]],
    fingerprint: dict[str, Any],
) -> None:
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


def epochs_to(history: pd.DataFrame, level: float, column: str = "train_acc") -> int | None:
    """The first epoch of ``history`` (from :func:`fit`) whose ``column`` reaches ``level``, or
    None.

    Raises:
        ValueError: if ``history`` lacks ``epoch`` or ``column``, or ``level`` is not finite.
    """
    if not isinstance(history, pd.DataFrame) or not {"epoch", column} <= set(history.columns):
        raise ValueError(
            f"history must be a DataFrame from fit with 'epoch' and {column!r}, "
            f"got {short_repr(history)}"
        )
    level = finite_real("level", level)
    reached = history.loc[history[column] >= level, "epoch"]
    return int(reached.iloc[0]) if len(reached) else None


def _history(history: object, columns: set[str]) -> pd.DataFrame:
    """``history`` if it is a DataFrame from :func:`fit` with ``columns``, else a ValueError."""
    if (
        not isinstance(history, pd.DataFrame)
        or not columns <= set(history.columns)
        or history.empty
    ):
        raise ValueError(
            f"history must be a non-empty DataFrame from fit with {sorted(columns)}, "
            f"got {short_repr(history)}"
        )
    return history


def accuracy_at(history: pd.DataFrame, epoch: int, column: str = "train_acc") -> float | None:
    """The ``column`` of ``history`` (from :func:`fit`) at ``epoch``, as :func:`fit` recorded it
    for that epoch (the training accuracy scored in evaluation mode after the epoch when it ran
    with ``train_eval``, else measured during it), or None when the run ended before it.

    Args:
        history: one row per epoch, epochs numbered 1, 2, ... as :func:`fit` numbers them.
        epoch: the epoch, an integer >= 1.
        column: the accuracy to read (default the training accuracy).

    Returns:
        A Python float, or None for an epoch past the last row.

    Raises:
        ValueError: if ``history`` is not a non-empty DataFrame with ``epoch`` and ``column``,
            or ``epoch`` is not an integer >= 1.
    """
    history = _history(history, {"epoch", column})
    epoch = positive_int("epoch", epoch)
    return float(history[column].iloc[epoch - 1]) if epoch <= len(history) else None


def epoch_seconds(history: pd.DataFrame) -> float:
    """The median wall time of one epoch of ``history`` (from :func:`fit`), in seconds.

    ``seconds`` is cumulative, so an epoch's time is the difference from the previous row
    (the first epoch's is its own ``seconds``).

    Args:
        history: one row per epoch with the cumulative ``seconds`` of :func:`fit`.

    Returns:
        A float, seconds.

    Raises:
        ValueError: if ``history`` is not a non-empty DataFrame with ``seconds``.
    """
    seconds = _history(history, {"seconds"})["seconds"]
    return float(seconds.diff().fillna(seconds.iloc[0]).median())
