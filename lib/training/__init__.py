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

The names below are this package's API; each lives in a module of its own, phase by phase:

* :mod:`lib.training.loop`: :func:`fit`, the loop of one model;
* :mod:`lib.training.stacked`: :func:`lib.training.fit_stacked`, ``K`` runs as one stacked model
  (imported from :mod:`lib.batched`, beside the stacked models);
* :mod:`lib.training.batches`: :func:`bucket_batches`, :data:`IGNORE` and the batches' check;
* :mod:`lib.training.scoring`: :func:`evaluate` and the loss over the counted positions;
* :mod:`lib.training.optimizers`: the optimisers (:data:`OPTIMIZERS`), the falling rate and
  gradient clipping;
* :mod:`lib.training.checkpoints`: the checkpoint's fingerprint, saving and resuming;
* :mod:`lib.training.stop`: :class:`StopRule` and how the loops apply a stop rule;
* :mod:`lib.training.history`: the history's rows and :func:`epochs_to`, :func:`accuracy_at`,
  :func:`epoch_seconds`;
* :mod:`lib.training.common`: the argument checks, progress bar and validation schedule both
  loops share.

Source: the book's own training loop for the experiments of Chapters 3 and 5 (K&S do not give
their training; see :func:`fit`).
"""

from __future__ import annotations

from . import batches, optimizers
from .batches import bucket_batches
from .history import accuracy_at, epoch_seconds, epochs_to
from .loop import fit
from .scoring import evaluate
from .stacked import fit_stacked
from .stop import StopRule

__all__ = [
    "IGNORE",
    "OPTIMIZERS",
    "StopRule",
    "bucket_batches",
    "fit",
    "fit_stacked",
    "evaluate",
    "epochs_to",
    "accuracy_at",
    "epoch_seconds",
]

#: Target value of positions that count neither in the loss nor in the accuracy.
IGNORE = batches.IGNORE

#: The optimisers :func:`fit` offers.
OPTIMIZERS = optimizers.OPTIMIZERS
