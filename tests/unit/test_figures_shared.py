"""lib.book.figures' shared steps (its module _shared): the arguments every figure checks, and the
helpers the figures' tests share (close, history)."""

import numpy as np
import pandas as pd
import pytest

from lib.book.figures import _shared


def close(a, b):
    """The frames keep 6 significant digits (lib.book.interactive)."""
    np.testing.assert_allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float), rtol=1e-5)


def history(accuracies):
    return pd.DataFrame({"epoch": range(1, len(accuracies) + 1), "train_acc": accuracies})


def test_the_shared_checks_convert_good_arguments_and_name_bad_ones():
    np.testing.assert_array_equal(_shared._vector("w", [1, 2, 3], 3), [1, 2, 3])
    with pytest.raises(ValueError, match="w must be a non-empty 1-D array, got shape"):
        _shared._vector("w", [[1.0, 2.0]])
    with pytest.raises(ValueError, match="w must have 2 entries, got 3"):
        _shared._vector("w", [1.0, 2.0, 3.0], 2)
    assert _shared._per_position("frames", (1, 2), 2) == [1, 2]
    with pytest.raises(ValueError, match=r"one entry per slider position \(3\), got 2"):
        _shared._per_position("frames", [1, 2], 3)
    with pytest.raises(ValueError, match="frames must be a sequence"):
        _shared._per_position("frames", "ab", 2)
    assert _shared._names("names", ("a", "b")) == ["a", "b"]
    for bad in ("a", []):
        with pytest.raises(ValueError, match="names must be a non-empty sequence of names"):
            _shared._names("names", bad)
    _shared._require_summary("The figure shows it.")
    for bad in ("  ", None):
        with pytest.raises(ValueError, match="summary must be a non-empty string"):
            _shared._require_summary(bad)
