"""``lib.datasets``: the real datasets of the book, read offline from registry packages, and what
is done to them before training.

One module per job: :mod:`lib.datasets.conll2003` (CoNLL-2003 NER and its encodings, Chapter 3),
:mod:`lib.datasets.images` (MNIST, Fashion-MNIST and CIFAR-10, Chapter 5) and
:mod:`lib.datasets.perturbations` (label flips and Gaussian input noise, Chapter 5; the ``<unk>``
training of :class:`~lib.datasets.perturbations.SingletonDropout`, Chapter 3). Their public names
are re-exported here, so a chapter writes ``from lib import datasets`` and then
``datasets.load_conll2003("train")``. Loading the package loads its three modules (numpy and
torch); ``import lib`` itself does not load it (it loads on first use).
"""

from __future__ import annotations

from .conll2003 import (
    CONLL_SPLITS,
    CONLL_TAGS,
    PAD,
    UNK,
    as_pairs,
    build_vocab,
    encode_pairs,
    load_conll2003,
)
from .images import (
    CIFAR10_CLASSES,
    CIFAR10_FILES,
    FASHION_MNIST_CLASSES,
    FASHION_MNIST_FILES,
    FASHION_MNIST_ROOT,
    IMAGE_SPLITS,
    MNIST_SIZES,
    cifar10_root,
    fashion_mnist_root,
    image_dataset_status,
    load_cifar10,
    load_fashion_mnist,
    load_mnist,
)
from .perturbations import SingletonDropout, add_input_noise, add_label_noise

__all__ = [
    # conll2003
    "CONLL_SPLITS",
    "CONLL_TAGS",
    "PAD",
    "UNK",
    "load_conll2003",
    "as_pairs",
    "build_vocab",
    "encode_pairs",
    # images
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
    # perturbations
    "SingletonDropout",
    "add_label_noise",
    "add_input_noise",
]
