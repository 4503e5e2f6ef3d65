"""lib.training.batches: length-bucketed, padded batches and their checks."""

import numpy as np
import pytest

from lib import training


def test_bucket_batches():
    enc = [(np.arange(1, n + 1), np.zeros(n, dtype=np.int64)) for n in (5, 1, 3, 3, 2)]
    batches = training.bucket_batches(enc, 2, device="cpu")
    assert [tuple(ids.shape) for ids, _ in batches] == [(2, 2), (2, 3), (1, 5)]  # sorted by length
    assert sorted(int((t != training.IGNORE).sum()) for _, t in batches) == [3, 5, 6]
    ids, targets = batches[0]
    assert ids[0, 1] == 0 and targets[0, 1] == training.IGNORE  # the 1-token sentence, padded
    assert sum(int((t != training.IGNORE).sum()) for _, t in batches) == 14


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: training.bucket_batches([], 2), "non-empty"),
        (
            lambda: training.bucket_batches([(np.ones(2, dtype=int), np.ones(3, dtype=int))], 2),
            "one length",
        ),
        (lambda: training.bucket_batches([(np.ones(2), np.ones(2))], 2), "integer ids"),
        (
            lambda: training.bucket_batches([(np.ones(2, dtype=int), np.ones(2, dtype=int))], 0),
            "batch_size",
        ),
        (
            lambda: training.bucket_batches(
                [(np.ones(2, dtype=int), np.ones(2, dtype=int))], 2, device="gpu"
            ),
            "device",
        ),
        (
            lambda: training.bucket_batches([(np.ones(2, dtype=int), -np.ones(2, dtype=int))], 2),
            r"ids in \[0",
        ),
    ],
)
def test_value_errors(call, match):
    with pytest.raises(ValueError, match=match):
        call()
