r"""The CoNLL-2003 experiment of K&S Section 5: a rank-1 Transformer memorizes its training tokens
(Chapter 3). This module holds the corpus's ceilings and is the experiment's one name: it
re-exports every public name of the modules that hold the rest, so a chapter writes
``from lib.experiments import conll`` and ``conll.conll_run(...)``.

K&S report that Transformers whose attention matrices have rank 1 reach near-perfect training
accuracy on the CoNLL-2003 named-entity training set (the numbers — 0.9872 at 800 epochs, depths
1, 3 and 6 — come from secondary summaries only; see the Sources and certainty page). The sources
give none of the settings; everything in
:data:`~lib.experiments.conll_settings.CONLL_SETTINGS` is the book's.

* here: :func:`context_free_ceiling` and :func:`permutation_ceiling` bound what any model that
  sees only the token, or that has no positional information, can reach on a corpus
  (:func:`corpus_summary`; :func:`ceilings_by_counting` counts them another way, for check
  B3.2); :func:`repeat_share` is the share of sentences that repeat a token. They take
  ``(tokens, tags)`` pairs of strings and raise ``ValueError`` for a malformed corpus (as
  :func:`lib.datasets.conll2003.build_vocab`);
* :mod:`lib.experiments.conll_settings`: the settings per mode, the seeds, the code version and
  the names of the stored runs;
* :mod:`lib.experiments.conll_runs`: :func:`~lib.experiments.conll_runs.conll_experiment` trains
  one :class:`lib.models.TokenTagger`; :func:`~lib.experiments.conll_runs.conll_run` runs it with
  a mode's settings, live in fast mode and through the stored results
  (:mod:`lib.experiments.store`) in full mode;
* :mod:`lib.experiments.conll_grid`: the described model's SGD grid and its best setting;
* :mod:`lib.experiments.conll_summaries`: one configuration's seeds (a dict seed ->
  :class:`~lib.experiments.conll_runs.ConllRun`) summarised for Chapter 3's tables and figures,
  and the case (and number) its phrase table ``versus`` words.

Source: K&S (ICLR 2024) Section 5; the ceilings are the book's own (Chapter 3).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from .. import datasets
from .conll_grid import SGD_GRID, sgd_best, sgd_best_settings, sgd_grid, sgd_grid_settings
from .conll_runs import ConllRun, conll_compute, conll_experiment, conll_run, conll_subset
from .conll_settings import (
    ADAM_SEEDS,
    CONLL_SETTINGS,
    CONLL_VERSION,
    DEEP_SEEDS,
    DESCRIBED_SETTINGS,
    FIXED_EPOCHS,
    GRID_KINDS,
    REPORTED_ACCURACY,
    SEEDS,
    SETTINGS_KINDS,
    THRESHOLDS,
    bench_name,
    config_label,
    conll_run_settings,
    full_runs,
    live_runs,
    seeds_for,
)
from .conll_summaries import (
    described_row,
    epoch_times,
    first_epochs,
    run_minutes,
    seed_frame,
    versus,
)

__all__ = [
    "CONLL_SETTINGS",
    "DESCRIBED_SETTINGS",
    "SEEDS",
    "DEEP_SEEDS",
    "ADAM_SEEDS",
    "FIXED_EPOCHS",
    "seeds_for",
    "SETTINGS_KINDS",
    "CONLL_VERSION",
    "REPORTED_ACCURACY",
    "THRESHOLDS",
    "CorpusSummary",
    "ConllRun",
    "context_free_ceiling",
    "permutation_ceiling",
    "ceilings_by_counting",
    "corpus_summary",
    "conll_subset",
    "conll_experiment",
    "conll_run",
    "conll_run_settings",
    "conll_compute",
    "full_runs",
    "live_runs",
    "SGD_GRID",
    "GRID_KINDS",
    "sgd_grid_settings",
    "sgd_grid",
    "sgd_best_settings",
    "sgd_best",
    "repeat_share",
    "versus",
    "config_label",
    "bench_name",
    "first_epochs",
    "epoch_times",
    "run_minutes",
    "seed_frame",
    "described_row",
]


@dataclass(frozen=True)
class CorpusSummary:
    """A ``(tokens, tags)`` corpus in five numbers (:func:`corpus_summary`).

    Attributes:
        sentences, tokens, word_types: its size.
        context_free_ceiling, permutation_ceiling: :func:`context_free_ceiling` and
            :func:`permutation_ceiling`.
    """

    sentences: int
    tokens: int
    word_types: int
    context_free_ceiling: float
    permutation_ceiling: float


def corpus_summary(pairs: Sequence[tuple[Sequence[str], Sequence[str]]]) -> CorpusSummary:
    """Sentences, tokens, word types and the two ceilings of a ``(tokens, tags)`` corpus.

    Raises:
        ValueError: as :func:`context_free_ceiling`.
    """
    pairs = _pairs(pairs)
    return CorpusSummary(
        len(pairs),
        sum(len(t) for t, _ in pairs),
        len({w for t, _ in pairs for w in t}),
        context_free_ceiling(pairs),
        permutation_ceiling(pairs),
    )


def _pairs(pairs: Sequence[tuple[Sequence[str], Sequence[str]]]) -> list:
    """``pairs`` checked as :func:`lib.datasets.conll2003.build_vocab` checks a corpus (lists of
    strings, equal lengths)."""
    return datasets.as_pairs(pairs)


def _majority_share(groups: dict) -> float:
    from collections import Counter

    total = sum(len(tags) for tags in groups.values())
    return sum(Counter(tags).most_common(1)[0][1] for tags in groups.values()) / total


def context_free_ceiling(pairs: Sequence[tuple[Sequence[str], Sequence[str]]]) -> float:
    """Best token accuracy of any model that sees only the token itself (majority tag per type).

    Args:
        pairs: list of ``(tokens, tags)`` sequences (e.g. sentences and their NER tags).

    Returns:
        The share of tokens whose tag is the most frequent tag of their type, in ``[0, 1]``.

    Raises:
        ValueError: for an empty list, or a pair that is not two equally long, non-empty lists of
            strings (as :func:`lib.datasets.conll2003.build_vocab` checks).

    Source: this book (Chapter 3): what the CoNLL-2003 accuracy owes to attention at all.
    """
    groups: dict = {}
    for tokens, tags in _pairs(pairs):
        for tok, tag in zip(tokens, tags, strict=True):
            groups.setdefault(tok, []).append(tag)
    return _majority_share(groups)


def permutation_ceiling(pairs: Sequence[tuple[Sequence[str], Sequence[str]]]) -> float:
    """Best token accuracy of any model without positional information.

    A permutation-equivariant model gives one output to every occurrence of a token within
    sentences that are permutations of each other (the same sentence included), so each such
    group can be right only for its majority tag.

    Args, returns and errors as :func:`context_free_ceiling`.

    Source: this book (Chapter 3), from the permutation equivariance of attention without
    positional encoding (K&S's "up to permutation").
    """
    groups: dict = {}
    for tokens, tags in _pairs(pairs):
        bag = tuple(sorted(tokens))
        for tok, tag in zip(tokens, tags, strict=True):
            groups.setdefault((bag, tok), []).append(tag)
    return _majority_share(groups)


def repeat_share(pairs: Sequence[tuple[Sequence[str], Sequence[str]]]) -> float:
    """The share of sentences in which some token occurs twice or more.

    Theorem 2 and Corollary 1 assume that no sequence repeats a token; a corpus in which this
    share is above 0 is not an instance of Corollary 1 (Chapter 3).

    Args:
        pairs: list of ``(tokens, tags)`` sequences.

    Returns:
        A float in ``[0, 1]``.

    Raises:
        ValueError: as :func:`context_free_ceiling`.
    """
    pairs = _pairs(pairs)
    return sum(len(set(tokens)) < len(tokens) for tokens, _ in pairs) / len(pairs)


def ceilings_by_counting(
    pairs: Sequence[tuple[Sequence[str], Sequence[str]]],
) -> tuple[float, float]:
    """The two ceilings of :func:`context_free_ceiling` and :func:`permutation_ceiling`, counted
    another way.

    A pandas table with one row per token (word, tag, and the sentence's sorted words joined by
    spaces, its "bag"); a ceiling is the number of tokens that carry the most frequent tag of
    their group — (word) or (bag, word) — divided by the number of tokens. Written independently
    of the two functions, for the check that they agree (Chapter 3, check B3.2).

    Args:
        pairs: list of ``(tokens, tags)`` sequences.

    Returns:
        ``(context_free, permutation)``, two floats in ``[0, 1]``.

    Raises:
        ValueError: as :func:`context_free_ceiling`.
    """
    tok = pd.DataFrame(
        [
            (w, t, " ".join(sorted(ws)))
            for ws, ts in _pairs(pairs)
            for w, t in zip(ws, ts, strict=True)
        ],
        columns=["word", "tag", "bag"],
    )

    def best(keys: list[str]) -> int:
        return int(
            tok.groupby(keys + ["tag"]).size().groupby(level=list(range(len(keys)))).max().sum()
        )

    return best(["word"]) / len(tok), best(["bag", "word"]) / len(tok)
