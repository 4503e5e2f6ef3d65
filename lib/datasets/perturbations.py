"""Perturbations of training data: symmetric label flips and Gaussian input noise (Chapter 5),
and the ``<unk>`` training of :class:`SingletonDropout` (Chapter 3).

* :func:`add_label_noise` (symmetric label flips) and :func:`add_input_noise` (Gaussian input
  noise): the sources leave open which noise LHSL's Appendix B experiment used (its figure
  caption says label noise, a secondary summary says noise in the training data), so Chapter 5
  runs both. Both return new arrays (int64 labels of shape ``(N,)``; float32 inputs of the shape
  given), drawn from ``np.random.default_rng(seed)``.
* :class:`SingletonDropout` reads each presentation of a training singleton as ``<unk>`` with
  probability ``p`` (Lample et al. 2016), for K&S Section 5's experiment in Chapter 3
  (:mod:`lib.experiments.conll`); it works on the word ids of
  :func:`lib.datasets.conll2003.encode_pairs`.

Every function raises ``ValueError`` naming the argument for bad input.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Sequence

import numpy as np
import torch
from numpy.typing import ArrayLike

from .._validate import finite_real, positive_int, real_array, short_repr
from .conll2003 import PAD, UNK

__all__ = ["SingletonDropout", "add_label_noise", "add_input_noise"]


class SingletonDropout:
    """Train the ``<unk>`` embedding: each presentation of a training singleton (a word id that
    occurs once in the training pairs) is replaced by :data:`~lib.datasets.conll2003.UNK` with
    probability ``p``.

    A vocabulary built from the training split alone
    (:func:`~lib.datasets.conll2003.build_vocab`) never shows ``UNK`` in training, so its
    embedding stays at its initialisation and every validation word outside
    the vocabulary is read through that random vector. Replacing singletons by ``UNK`` with
    probability 1/2 each time they are presented is what the reference implementation of Lample
    et al. (2016) does (``insert_singletons``). The draw of a batch depends only on ``seed``,
    the epoch and the batch's index, so a training run resumed from a checkpoint draws what an
    uninterrupted one draws (:func:`lib.training.fit`'s ``augment``).

    Args:
        pairs: the encoded training pairs (:func:`~lib.datasets.conll2003.encode_pairs`) whose
            singletons are counted.
        p: the replacement probability, in ``[0, 1]``.
        seed: the seed of the draws (an integer >= 0).

    Attributes:
        singletons: int64 tensor of the singleton ids, sorted.
        p, seed: as given.

    Calling it with ``(inputs, epoch, batch)`` (an int64 tensor of word ids of any shape and two
    integers >= 0) returns a copy of ``inputs`` with the drawn singleton positions set to
    :data:`~lib.datasets.conll2003.UNK`.

    Raises:
        ValueError: for ``pairs`` that are not a non-empty list of ``(word_ids, tag_ids)`` arrays,
            a ``p`` outside ``[0, 1]``, a negative ``seed``, or (when called) inputs that are
            not an int64 tensor or a negative epoch or batch.

    Source: Lample, Ballesteros, Subramanian, Kawakami and Dyer (NAACL 2016), the singleton
    replacement of their code; used for K&S Section 5's experiment in Chapter 3.
    """

    def __init__(
        self, pairs: Sequence[tuple[ArrayLike, ArrayLike]], p: float = 0.5, *, seed: int = 0
    ) -> None:
        if not isinstance(pairs, Sequence) or isinstance(pairs, (str, bytes)) or not pairs:
            raise ValueError(
                f"pairs must be a non-empty list of (word_ids, tag_ids), got {short_repr(pairs)}"
            )
        counts: Counter = Counter()
        for i, pair in enumerate(pairs):
            if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                raise ValueError(
                    f"pairs[{i}] must be a (word_ids, tag_ids) pair, got {short_repr(pair)}"
                )
            ids = np.asarray(pair[0])
            if ids.ndim != 1 or not np.issubdtype(ids.dtype, np.integer) or (ids < 0).any():
                raise ValueError(
                    f"pairs[{i}]'s word ids must be a 1-d array of integers >= 0, "
                    f"got {short_repr(pair[0])}"
                )
            counts.update(ids.tolist())
        self.p = finite_real("p", p, minimum=0.0, maximum=1.0)
        self.seed = positive_int("seed", seed, minimum=0, maximum=2**62)
        once = sorted(w for w, c in counts.items() if c == 1 and w not in (PAD, UNK))
        self.singletons = torch.tensor(once, dtype=torch.int64)

    def __repr__(self) -> str:
        # the digest names the singleton set: a checkpoint keyed on this repr resumes only a
        # run that drops the same words
        digest = hashlib.sha256(self.singletons.numpy().tobytes()).hexdigest()[:12]
        return (
            f"SingletonDropout({len(self.singletons)} singletons {digest}, p={self.p}, "
            f"seed={self.seed})"
        )

    def __call__(self, inputs: torch.Tensor, epoch: int, batch: int) -> torch.Tensor:
        if not isinstance(inputs, torch.Tensor) or inputs.dtype != torch.int64:
            raise ValueError(
                f"inputs must be an int64 tensor of word ids, got {short_repr(inputs)}"
            )
        epoch = positive_int("epoch", epoch, minimum=0)
        batch = positive_int("batch", batch, minimum=0)
        state = np.random.SeedSequence([self.seed, epoch, batch]).generate_state(1)[0]
        gen = torch.Generator().manual_seed(int(state))
        drawn = torch.rand(inputs.shape, generator=gen) < self.p
        rare = torch.isin(inputs.cpu(), self.singletons)
        return inputs.masked_fill((drawn & rare).to(inputs.device), UNK)


def add_label_noise(
    y: ArrayLike | torch.Tensor, ratio: float, n_classes: int, seed: int
) -> np.ndarray:
    """Symmetric label noise: flip a given fraction of the labels to another class.

    Exactly ``round(ratio * N)`` positions (Python's ``round``), drawn uniformly without
    replacement, get a new label drawn uniformly from the ``n_classes - 1`` *other* classes, so a
    flipped label never keeps its old value; the flipped positions are
    ``np.flatnonzero(noisy != y)``. All draws come from ``np.random.default_rng(seed)``.

    Args:
        y: a 1-D integer array-like of shape ``(N,)`` with values in ``[0, n_classes)``; it is
            not modified.
        ratio: the fraction of labels to flip, a finite real in ``[0, 1)``.
        n_classes: the number of classes, at least 2.
        seed: a non-negative integer.

    Returns:
        A new int64 array of shape ``(N,)``, the noisy labels.

    Raises:
        ValueError: for a ``y`` that is not a 1-D integer array or has a value outside
            ``[0, n_classes)``, a ``ratio`` outside ``[0, 1)`` or not finite, ``n_classes < 2``, or
            a negative ``seed``.

    Source: LHSL Appendix B trains under label noise at several ratios; the sources leave open
    whether that noise was label flips or Gaussian input noise (see :func:`add_input_noise`), so
    Chapter 5 (LHSL Appendix B, the noise experiment) runs both.
    """
    ratio = finite_real("ratio", ratio, minimum=0.0)
    if ratio >= 1:
        raise ValueError(f"ratio must be < 1, got {ratio!r}")
    n_classes = positive_int("n_classes", n_classes, minimum=2, maximum=2**62)
    rng = np.random.default_rng(positive_int("seed", seed, minimum=0))
    if isinstance(y, torch.Tensor):
        y = y.detach().cpu().numpy()
    labels = np.asarray(y)
    if labels.ndim != 1 or labels.dtype.kind not in "iu":
        raise ValueError(
            f"y must be a 1-D integer array, got dtype {labels.dtype} and shape {labels.shape}: "
            f"{short_repr(y)}"
        )
    if labels.size and (labels.min() < 0 or labels.max() >= n_classes):
        raise ValueError(
            f"y must hold values in [0, {n_classes}) (n_classes={n_classes}), found "
            f"{int(labels.min())}..{int(labels.max())}"
        )
    noisy = labels.astype(np.int64)  # a copy
    n_flip = round(ratio * labels.size)
    where = rng.choice(labels.size, size=n_flip, replace=False)
    noisy[where] = (noisy[where] + rng.integers(1, n_classes, size=n_flip)) % n_classes
    return noisy


def add_input_noise(x: ArrayLike | torch.Tensor, sigma: float, seed: int) -> np.ndarray:
    """Gaussian input noise: ``x + N(0, sigma^2)``, independently per entry, in float32.

    Args:
        x: a real array-like (numpy array, torch tensor, nested lists) of any shape, finite; it is
            not modified.
        sigma: the noise's standard deviation, a finite real ``>= 0``, in the units of ``x``
            (Chapter 5 passes images scaled to ``[0, 1]``).
        seed: a non-negative integer for ``np.random.default_rng``.

    Returns:
        A new float32 array of the shape of ``x``. The result is **not** clipped, so it may leave
        the range of ``x`` (for images, ``[0, 1]``). ``sigma = 0`` returns a float32 copy of ``x``.

    Raises:
        ValueError: for an ``x`` that is not a real array (complex and bool arrays are refused,
            as everywhere in ``lib``) or holds NaN or infinity (also after the cast to float32), a
            negative or non-finite ``sigma``, or a negative ``seed``.

    Source: the sources leave open whether LHSL Appendix B's noise was label flips
    (:func:`add_label_noise`) or Gaussian input noise, so Chapter 5 (LHSL Appendix B, the noise
    experiment) runs both.
    """
    sigma = finite_real("sigma", sigma, minimum=0.0)
    rng = np.random.default_rng(positive_int("seed", seed, minimum=0))
    arr = real_array("x", x)
    with np.errstate(over="ignore"):  # values beyond float32 become inf, refused below
        out = arr.astype(np.float32)  # always a copy
    if not np.isfinite(out).all():
        raise ValueError(f"x must be finite (as float32), got {short_repr(arr)}")
    if sigma > 0:
        with np.errstate(over="ignore", invalid="ignore"):
            out += np.float32(sigma) * rng.standard_normal(out.shape, dtype=np.float32)
        if not np.isfinite(out).all():
            raise ValueError(f"sigma={sigma!r} is too large: the noisy inputs overflow float32")
    return out
