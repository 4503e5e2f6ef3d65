"""lib.datasets.perturbations: label and input noise (Chapter 5) and singleton dropout
(Chapter 3)."""

import numpy as np
import pytest

from lib import datasets
from lib.datasets import perturbations


def test_label_noise_flips_exactly_the_ratio():
    y = np.random.default_rng(1).integers(0, 10, size=1000)
    kept = y.copy()
    noisy = perturbations.add_label_noise(y, 0.3, 10, seed=0)
    np.testing.assert_array_equal(y, kept)  # input not mutated
    assert noisy.dtype == np.int64 and noisy.shape == (1000,) and noisy is not y
    flipped = np.flatnonzero(noisy != y)
    assert flipped.size == 300
    assert noisy.min() >= 0 and noisy.max() <= 9
    np.testing.assert_array_equal(
        noisy, perturbations.add_label_noise(y, 0.3, 10, seed=0)
    )  # deterministic
    assert not np.array_equal(noisy, perturbations.add_label_noise(y, 0.3, 10, seed=1))
    np.testing.assert_array_equal(perturbations.add_label_noise(y, 0.0, 10, seed=0), y)
    assert (
        np.count_nonzero(perturbations.add_label_noise(y.tolist(), 0.0005, 10, seed=3) != y) == 0
    )  # round(0.5) = 0
    assert (
        np.count_nonzero(perturbations.add_label_noise(y, 0.0015, 10, seed=3) != y) == 2
    )  # round(1.5) = 2
    two = perturbations.add_label_noise(
        np.zeros(10, dtype=np.uint8), 0.5, 2, seed=0
    )  # binary: a flip is 0 -> 1
    assert sorted(two.tolist()) == [0] * 5 + [1] * 5


def test_label_noise_is_uniform_over_other_classes():
    n, k = 90000, 10
    y = np.arange(n) % k  # 9000 per class
    noisy = perturbations.add_label_noise(y, 0.5, k, seed=0)
    assert np.count_nonzero(noisy != y) == 45000
    table = np.zeros((k, k), dtype=np.int64)
    np.add.at(table, (y, noisy), 1)
    assert np.all(np.diag(table) >= 9000 - 4500 - 600)  # about 4500 of 9000 per class kept
    off = table[~np.eye(k, dtype=bool)]
    # each old -> new transition: about 9000 * 0.5 / 9 = 500; sd of binomial(9000, 1/18) is about 22
    assert off.min() > 500 - 6 * 22 and off.max() < 500 + 6 * 22
    # the flipped positions are uniform too: equally many flips in each half of the array
    flipped = np.flatnonzero(noisy != y)
    assert abs(np.count_nonzero(flipped < n // 2) - 22500) < 6 * 106


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"ratio": -0.1}, "ratio must be >= 0"),
        ({"ratio": 1.0}, "ratio must be < 1"),
        ({"ratio": float("nan")}, "ratio must be finite"),
        ({"ratio": "0.1"}, "ratio must be a real number"),
        ({"y": [0, 1, 10]}, r"y must hold values in \[0, 10\)"),
        ({"y": [0, -1]}, r"y must hold values in \[0, 10\)"),
        ({"y": [[0, 1], [2, 3]]}, "y must be a 1-D integer array"),
        ({"y": [0.0, 1.0]}, "y must be a 1-D integer array"),
        ({"y": [True, False]}, "y must be a 1-D integer array"),
        ({"n_classes": 1, "y": [0, 0]}, "n_classes must be >= 2"),
        ({"seed": -1}, "seed must be >= 0"),
    ],
)
def test_label_noise_value_errors(kwargs, match):
    args = {"y": [0, 1, 2], "ratio": 0.2, "n_classes": 10, "seed": 0} | kwargs
    with pytest.raises(ValueError, match=match):
        perturbations.add_label_noise(**args)


def test_input_noise():
    noisy = perturbations.add_input_noise(np.zeros(1_000_000), 0.5, seed=0)
    assert noisy.dtype == np.float32 and noisy.shape == (1_000_000,)
    # mean: standard error 0.5 / 1000; std: standard error about 0.5 / sqrt(2e6)
    assert abs(noisy.mean()) < 5 * 0.0005 and abs(noisy.std() - 0.5) < 5 * 0.00036
    x = np.linspace(0, 1, 24).reshape(2, 3, 4)
    np.testing.assert_array_equal(
        perturbations.add_input_noise(x, 0.1, seed=4), perturbations.add_input_noise(x, 0.1, seed=4)
    )
    out = perturbations.add_input_noise(x, 0.1, seed=4)
    assert out.shape == (2, 3, 4) and not np.array_equal(out, x.astype(np.float32))
    assert perturbations.add_input_noise(np.ones(1000), 1.0, seed=0).max() > 2  # no clipping
    images = np.arange(12, dtype=np.uint8).reshape(3, 4)
    same = perturbations.add_input_noise(images, 0.0, seed=0)
    assert same.dtype == np.float32 and same.flags.writeable
    np.testing.assert_array_equal(same, images.astype(np.float32))
    read_only = datasets.load_mnist("test")[0][:2]
    copy = perturbations.add_input_noise(read_only, 0, seed=0)
    copy[0, 0, 0] = -1.0  # a writable copy, not a view of the cache
    assert read_only[0, 0, 0] == 0


@pytest.mark.parametrize(
    "x, sigma, match",
    [
        (np.zeros(3), -0.1, "sigma must be >= 0"),
        (np.zeros(3), float("nan"), "sigma must be finite"),
        (np.array([0.0, np.nan]), 0.1, "x must be finite"),
        (np.array([0.0, np.inf]), 0.0, "x must be finite"),
        (np.array([1e300]), 0.1, "x must be finite"),  # overflows float32
        (["a", "b"], 0.1, "x must be a real array"),
        (np.array([1j]), 0.1, "x must be a real array"),
    ],
)
def test_input_noise_value_errors(x, sigma, match):
    with pytest.raises(ValueError, match=match):
        perturbations.add_input_noise(x, sigma, seed=0)


def test_label_noise_refuses_absurd_class_counts():
    with pytest.raises(ValueError, match="n_classes must be <="):
        perturbations.add_label_noise(np.array([0, 1]), 0.5, 2**63, 0)


def test_singleton_dropout_replaces_singletons_only_at_rate_p():
    """Singletons are the ids seen once (counted here independently); over 40,000 presentations
    the replaced share lies within 4 binomial standard deviations of p, other words never move,
    and a draw depends on (seed, epoch, batch) only."""
    from collections import Counter

    import torch

    pairs = [(np.array([2, 3, 4, 3]), np.zeros(4, int)), (np.array([5, 2, 6]), np.zeros(3, int))]
    counts = Counter(int(w) for ids, _ in pairs for w in ids)
    drop = perturbations.SingletonDropout(pairs, 0.3, seed=7)
    assert drop.singletons.tolist() == sorted(w for w, c in counts.items() if c == 1) == [4, 5, 6]
    x = torch.tensor([[4, 2, 5, 3, 6, 0]] * 10_000)
    y = drop(x, 2, 5)
    rare = torch.isin(x, drop.singletons)
    assert torch.equal(y[~rare], x[~rare])  # frequent words and padding untouched
    share = float((y[rare] == datasets.UNK).double().mean())
    n = int(rare.sum())
    assert abs(share - 0.3) < 4 * (0.3 * 0.7 / n) ** 0.5
    assert torch.equal(drop(x, 2, 5), y) and not torch.equal(drop(x, 2, 6), y)
    assert not torch.equal(drop(x, 3, 5), y)
    assert not torch.equal(perturbations.SingletonDropout(pairs, 0.3, seed=8)(x, 2, 5), y)
    assert torch.equal(perturbations.SingletonDropout(pairs, 0.0)(x, 0, 0), x)
    assert (perturbations.SingletonDropout(pairs, 1.0)(x, 0, 0)[rare] == datasets.UNK).all()
    import hashlib

    digest = hashlib.sha256(np.array([4, 5, 6], dtype=np.int64).tobytes()).hexdigest()[:12]
    assert repr(drop) == f"SingletonDropout(3 singletons {digest}, p=0.3, seed=7)"
    other = perturbations.SingletonDropout(
        [(np.array([2, 3, 7, 3]), np.zeros(4, int))] + pairs[1:], 0.3, seed=7
    )
    assert repr(other) != repr(drop)  # same count, p and seed; other words: another checkpoint


@pytest.mark.parametrize(
    "args, kwargs, match",
    [
        (([],), {}, "pairs must be a non-empty list"),
        (([(np.array([1.5]), np.array([0]))],), {}, r"pairs\[0\]'s word ids"),
        (([np.array([2])],), {}, r"pairs\[0\] must be a \(word_ids, tag_ids\) pair"),
        (("ab",), {}, "pairs must be a non-empty list"),
        (([(np.array([-2]), np.array([0]))],), {}, r"integers >= 0"),
        (([(np.array([2]), np.array([0]))], 1.5), {}, "p must"),
        (([(np.array([2]), np.array([0]))],), {"seed": -1}, "seed"),
    ],
)
def test_singleton_dropout_refuses_bad_arguments(args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        perturbations.SingletonDropout(*args, **kwargs)


def test_singleton_dropout_refuses_bad_calls():
    import torch

    drop = perturbations.SingletonDropout([(np.array([2, 3]), np.array([0, 0]))])
    with pytest.raises(ValueError, match="inputs must be an int64 tensor"):
        drop(torch.zeros(2), 0, 0)
    with pytest.raises(ValueError, match="epoch"):
        drop(torch.zeros(2, dtype=torch.int64), -1, 0)
    with pytest.raises(ValueError, match="batch"):
        drop(torch.zeros(2, dtype=torch.int64), 0, -1)
