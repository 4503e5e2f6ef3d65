"""The batches of the training loops: padded, length-bucketed batches and their validation.

A batch is a pair ``(inputs, targets)`` of tensors; the targets are int64 class ids with
:data:`lib.training.IGNORE` wherever there is nothing to predict (padding).
:func:`lib.training.bucket_batches` builds them from encoded sentences, sentences of similar
length in one batch (about half the padding of random batches), padded once and reused every
epoch; ``as_batches`` is the check that :func:`lib.training.fit`, :func:`lib.training.evaluate`
and :func:`lib.training.fit_stacked` apply to the batches they are given.

Source: the book's own training loop for the experiments of Chapters 3 and 5 (not a paper's).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from numpy.typing import ArrayLike

from .. import runtime
from .._constants import IGNORE
from .._validate import positive_int, short_repr

__all__ = ["IGNORE", "as_batches", "bucket_batches"]


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
    arrays = [_id_arrays(i, pair) for i, pair in enumerate(pairs)]
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


def _id_arrays(i: int, pair: object) -> tuple[np.ndarray, np.ndarray]:
    """``pairs[i]`` of :func:`bucket_batches` as two arrays, or a ValueError naming ``pairs[i]``."""
    if not isinstance(pair, (list, tuple)) or len(pair) != 2:
        raise ValueError(f"pairs[{i}] must be a (word_ids, tag_ids) pair, got {short_repr(pair)}")
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
    return ids, tags


def as_batches(name: str, batches: object) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """``batches`` as a list, if it is a non-empty list of ``(inputs, targets)`` tensor pairs
    whose targets are int64 with at least one position that is not :data:`IGNORE`.

    Raises:
        ValueError: naming ``name`` (``name[i]`` for a bad pair) otherwise.
    """
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
