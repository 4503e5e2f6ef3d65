r"""The CoNLL-2003 experiment of K&S Section 5: a rank-1 Transformer memorizes its training tokens
(Chapter 3).

K&S report that Transformers whose attention matrices have rank 1 reach near-perfect training
accuracy on the CoNLL-2003 named-entity training set (the numbers — 0.9872 at 800 epochs, depths
1, 3 and 6 — come from secondary summaries only; see the Sources and certainty page). The sources
give none of the settings; everything in :data:`CONLL_SETTINGS` is the book's.

* :func:`context_free_ceiling` and :func:`permutation_ceiling` bound what any model that sees only
  the token, or that has no positional information, can reach on a corpus (:func:`corpus_summary`;
  :func:`ceilings_by_counting` counts them another way, for check B3.2);
* :func:`conll_experiment` trains one :class:`lib.models.TokenTagger`; :func:`conll_run` runs it
  with a mode's settings, live in fast mode and through the stored results
  (:mod:`lib.experiments.store`) in full mode.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .. import config, data, training
from .._validate import one_of, positive_int
from ..models import TokenTagger
from . import store

__all__ = [
    "CONLL_SETTINGS",
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
]

#: The version of this experiment's code; raise it when a change alters what :func:`conll_run`
#: computes, so that stored full-scale results are recomputed (``make full``) rather than reused.
CONLL_VERSION = 2


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


def corpus_summary(pairs) -> CorpusSummary:
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


def _pairs(pairs) -> list:
    """``pairs`` checked as :func:`lib.data.build_vocab` checks a corpus (lists of strings, equal
    lengths)."""
    return data.check_pairs(pairs)


def _majority_share(groups: dict) -> float:
    from collections import Counter

    total = sum(len(tags) for tags in groups.values())
    return sum(Counter(tags).most_common(1)[0][1] for tags in groups.values()) / total


def context_free_ceiling(pairs) -> float:
    """Best token accuracy of any model that sees only the token itself (majority tag per type).

    Args:
        pairs: list of ``(tokens, tags)`` sequences (e.g. sentences and their NER tags).

    Returns:
        The share of tokens whose tag is the most frequent tag of their type, in ``[0, 1]``.

    Raises:
        ValueError: for an empty list, or a pair that is not two equally long, non-empty lists of
            strings (as :func:`lib.data.build_vocab` checks).

    Source: this book (Chapter 3): what the CoNLL-2003 accuracy owes to attention at all.
    """
    groups: dict = {}
    for tokens, tags in _pairs(pairs):
        for tok, tag in zip(tokens, tags, strict=True):
            groups.setdefault(tok, []).append(tag)
    return _majority_share(groups)


def permutation_ceiling(pairs) -> float:
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


#: K&S Section 5's reported training accuracy (from secondary summaries only) and the levels whose
#: first epoch every stored full-scale run reports.
REPORTED_ACCURACY = 0.9872
THRESHOLDS = (0.95, 0.98, REPORTED_ACCURACY, 0.99)

#: The settings of the CoNLL-2003 experiment in each mode. The sources give none of K&S Section 5's
#: settings except the 800 epochs and the depths 1, 3, 6, and those only in secondary summaries (see
#: the Sources and certainty page): everything here is ours. Fast mode trains a live proxy on a
#: subset for a fixed number of epochs with a falling learning rate. Full mode trains on the whole
#: training split with Adam at a constant rate and stops each run by :class:`lib.training.StopRule`
#: once it has passed the reported accuracy and levelled off, or at its epoch cap ``max_epochs``
#: (per depth, ``"full"`` for the full-rank layer), which keeps ``make full`` within an hour on the
#: book's 2-core machine. Batch 64 with dense Adam: in our pilots on this split (1 layer, rank 1)
#: batch 32 first reached 0.9872 at epoch 28 and batch 64 at epoch 30, at 72 % of the time per
#: epoch; row-wise (lazy, ``sparse_embedding``) Adam makes an epoch about a quarter faster but
#: needed 54 epochs, so it costs more time in all.
CONLL_SETTINGS = {
    "fast": {
        "sentences": 600,
        "validation_sentences": 500,
        "epochs": 30,
        "d": 64,
        "batch_size": 32,
        "lr": 3e-3,
        "final_lr": 3e-4,
        "eval_every": 5,
        "layers": [1, 3, 6],
        "seed": 0,
    },
    "full": {
        "sentences": None,
        "validation_sentences": None,
        "max_epochs": {"1": 150, "3": 100, "6": 120, "full": 150},
        "d": 128,
        "batch_size": 64,
        "lr": 1e-3,
        "final_lr": None,
        "eval_every": 10,
        "layers": [1, 3, 6],
        "seed": 0,
        "stop": {"target": REPORTED_ACCURACY, "window": 10, "min_gain": 5e-4},
        "sparse_embedding": False,
    },
}


def conll_subset(
    split: str, sentences: int | None, seed: int = 0
) -> list[tuple[list[str], list[str]]]:
    """``sentences`` CoNLL-2003 sentences of ``split`` drawn without replacement (all when
    ``None``).

    The draw is uniform (numpy ``default_rng(seed)``) and the sentences keep their corpus order.

    Raises:
        ValueError: for an unknown split, or a count that is not in ``[1, len(split)]``.
    """
    pairs = data.load_conll2003(split)
    if sentences is None:
        return pairs
    sentences = positive_int("sentences", sentences, maximum=len(pairs))
    chosen = np.sort(
        np.random.default_rng(positive_int("seed", seed, minimum=0)).choice(
            len(pairs), sentences, replace=False
        )
    )
    return [pairs[i] for i in chosen]


@dataclass(frozen=True)
class ConllRun:
    """One trained :class:`lib.models.TokenTagger` on CoNLL-2003 (:func:`conll_experiment`,
    :func:`conll_run`).

    Attributes:
        history: the DataFrame of :func:`lib.training.fit` (one row per epoch).
        train_acc, val_acc: final token accuracy on the training and validation pairs (the model
            in eval mode, padding excluded).
        parameters: trainable parameter count; vocab_size; tokens: training tokens.
        settings: the settings used (with ``n_layers``, ``rank`` and ``mode``; empty for a direct
            :func:`conll_experiment`).
        stopped: the stop rule's reason, or ``None`` when the epoch cap (or a fixed number of
            epochs) ended the run.
        provenance: for a stored full-scale run, where and how it was computed
            (:func:`lib.experiments.store.provenance`); ``None`` for a live run.
    """

    history: pd.DataFrame
    train_acc: float
    val_acc: float
    parameters: int
    vocab_size: int
    tokens: int
    settings: dict
    stopped: str | None = None
    provenance: dict | None = None

    def epochs_to(self, levels=THRESHOLDS) -> dict:
        """The first epoch whose training accuracy reaches each level (``None``: not reached)."""
        return {level: training.epochs_to(self.history, level) for level in levels}


def conll_experiment(
    train_pairs,
    validation_pairs,
    *,
    n_layers: int,
    rank: int | None,
    d: int,
    batch_size: int,
    lr: float,
    epochs: int,
    eval_every: int,
    final_lr: float | None = None,
    seed: int = 0,
    stop: training.StopRule | None = None,
    sparse_embedding: bool = False,
    checkpoint=None,
) -> ConllRun:
    """Train one :class:`~lib.models.TokenTagger` on CoNLL-2003 pairs: K&S Section 5, our settings.

    The vocabulary is built from ``train_pairs`` (validation words it lacks become ``<unk>``);
    batches are length-bucketed (:func:`lib.training.bucket_batches`) on :data:`lib.config.DEVICE`.

    Args:
        train_pairs, validation_pairs: ``(tokens, tags)`` pairs (:func:`lib.data.load_conll2003`).
        n_layers, rank, d: the model (token width ``d``, head size ``d``, FFN width ``4 d``).
        batch_size, lr, epochs, eval_every, final_lr, seed, stop, checkpoint: the training
            (:func:`lib.training.fit`; ``epochs`` is the cap when ``stop`` is given); the model is
            initialised from ``seed`` as well.
        sparse_embedding: row-wise embedding updates (:class:`~lib.models.TokenTagger`).

    Returns:
        A :class:`ConllRun` (with empty ``settings``).

    Raises:
        ValueError: as :func:`lib.data.build_vocab`, :class:`~lib.models.TokenTagger` and
            :func:`lib.training.fit`.

    Source: K&S (ICLR 2024) Section 5, the CoNLL-2003 experiment. Chapter 3.
    """
    vocab = data.build_vocab(train_pairs)
    train = data.encode_pairs(train_pairs, vocab)
    valid = data.encode_pairs(validation_pairs, vocab)
    batches = training.bucket_batches(train, batch_size, seed=seed)
    val_batches = training.bucket_batches(valid, 256, seed=seed)
    model = TokenTagger(
        len(vocab),
        len(data.CONLL_TAGS),
        d=d,
        n_layers=n_layers,
        rank=rank,
        seed=seed,
        sparse_embedding=sparse_embedding,
    ).to(config.DEVICE)
    label = f"{n_layers} layer{'s' if n_layers > 1 else ''}, rank {rank or 'full'}"
    history = training.fit(
        model,
        batches,
        epochs=epochs,
        lr=lr,
        final_lr=final_lr,
        seed=seed,
        validation=val_batches,
        eval_every=eval_every,
        stop=stop,
        checkpoint=checkpoint,
        desc=label,
    )
    return ConllRun(
        history,
        training.evaluate(model, batches),
        training.evaluate(model, val_batches),
        sum(p.numel() for p in model.parameters()),
        len(vocab),
        sum(len(ids) for ids, _ in train),
        {},
        history.attrs["stopped"],
    )


def conll_run_settings(n_layers: int, rank: int | None, mode: str) -> tuple[str, dict]:
    """The stored run's name and settings of :func:`conll_run` (depth, rank, mode's settings; in
    full mode ``epochs`` is the depth's cap).

    Raises:
        ValueError: as :func:`conll_run`.
    """
    one_of("mode", mode, config.MODES)
    n_layers = positive_int("n_layers", n_layers)
    rank = None if rank is None else positive_int("rank", rank)
    base = CONLL_SETTINGS[mode]
    settings = {**base, "n_layers": n_layers, "rank": rank, "mode": mode}
    run = f"layers-{n_layers}-rank-{rank or 'full'}"
    if mode == "full":
        cap_key = "full" if rank is None else str(n_layers)
        if cap_key not in base["max_epochs"]:
            raise ValueError(
                f"full mode has no epoch cap for {n_layers} layer(s) of rank {rank or 'full'}; "
                f"CONLL_SETTINGS['full']['max_epochs'] has {sorted(base['max_epochs'])}"
            )
        settings = {k: v for k, v in settings.items() if k != "max_epochs"}
        settings["epochs"] = base["max_epochs"][cap_key]
    return run, settings


def conll_compute(settings: dict) -> dict:
    """Train the run of ``settings`` (from :func:`conll_run_settings`) and return what is stored:
    ``history`` (lists, ``None`` for epochs without a validation score), ``train_acc``,
    ``val_acc``, ``parameters``, ``vocab_size``, ``tokens``, ``stopped``. A full-mode run keeps
    its epoch checkpoint under ``BOOK_RESULTS/.partial``
    (:func:`lib.experiments.store.checkpoint_path`).

    Raises:
        ValueError: as :func:`conll_experiment`.
    """
    mode, n_layers, rank = settings["mode"], settings["n_layers"], settings["rank"]
    run = f"layers-{n_layers}-rank-{rank or 'full'}"
    train = conll_subset("train", settings["sentences"], settings["seed"])
    valid = conll_subset("validation", settings["validation_sentences"], settings["seed"])
    out = conll_experiment(
        train,
        valid,
        n_layers=n_layers,
        rank=rank,
        d=settings["d"],
        batch_size=settings["batch_size"],
        lr=settings["lr"],
        epochs=settings["epochs"],
        eval_every=settings["eval_every"],
        final_lr=settings["final_lr"],
        seed=settings["seed"],
        stop=training.StopRule(**settings["stop"]) if "stop" in settings else None,
        sparse_embedding=settings.get("sparse_embedding", False),
        checkpoint=None
        if mode == "fast"
        else store.checkpoint_path("conll", run, CONLL_VERSION, settings),
    )
    return {
        "history": out.history.astype(object)
        .where(out.history.notna(), None)
        .to_dict(orient="list"),  # epochs without a validation score: None (JSON null)
        "train_acc": out.train_acc,
        "val_acc": out.val_acc,
        "parameters": out.parameters,
        "vocab_size": out.vocab_size,
        "tokens": out.tokens,
        "stopped": out.stopped,
    }


def conll_run(
    n_layers: int, rank: int | None, mode: str | None = None, *, allow_compute: bool | None = None
) -> ConllRun:
    """:func:`conll_experiment` with the settings of ``mode`` (:data:`CONLL_SETTINGS`).

    Fast mode trains on a seeded subset of the training split for a fixed number of epochs and
    scores a subset of the validation split. Full mode uses both splits whole, stops by the
    settings' :class:`lib.training.StopRule` or at the depth's epoch cap (the run's ``epochs``
    setting), keeps an epoch checkpoint (:func:`lib.experiments.store.checkpoint_path`) so that an
    interrupted ``make full`` resumes where it stopped, and goes through
    :func:`lib.experiments.store.load_or_run` (keyed on the settings and :data:`CONLL_VERSION`): a
    stored result is loaded; a missing or stale one is computed and stored by ``make full`` and
    stops a book build with one line naming ``make full``.

    Args:
        n_layers: depth; rank: attention rank (``None`` dense); mode: ``"fast"`` or ``"full"``
            (default :data:`lib.config.MODE`).
        allow_compute: full mode only: compute a missing or stale result (default: outside book
            builds). Chapter 3 reads the stored runs with ``False``, so that running the chapter
            never starts an hour of training.

    Returns:
        The :class:`ConllRun`, with ``settings`` (the dict used, with ``n_layers``, ``rank`` and
        ``mode``; in full mode ``epochs`` is the run's cap) and, for a stored run, its
        ``provenance``.

    Raises:
        ValueError: for an unknown mode, a bad depth or rank, or (full mode) a depth without an
            epoch cap in :data:`CONLL_SETTINGS`.
        lib.experiments.store.StaleResultError: in a full-mode book build whose stored result is
            missing or stale.

    Source: K&S (ICLR 2024) Section 5. Chapter 3 and ``tools/full_mode.py``.
    """
    mode = config.MODE if mode is None else mode
    run, settings = conll_run_settings(n_layers, rank, mode)

    def compute() -> dict:
        return conll_compute(settings)

    provenance = None
    if mode == "fast":
        result = compute()
    else:
        stored = store.load_or_run(
            "conll",
            run,
            CONLL_VERSION,
            settings,
            compute,
            allow_compute=not config.IN_BUILD if allow_compute is None else allow_compute,
            device=str(config.DEVICE),
        )
        result, provenance = stored.result, stored.provenance
    history = pd.DataFrame(result["history"])  # a stored file has its columns sorted: fit's order
    order = ["epoch", "loss", "train_acc", "val_acc", "lr", "seconds"]
    history = history[[c for c in order if c in history] + [c for c in history if c not in order]]
    history = history.astype({c: float for c in history.columns if c != "epoch"})
    return ConllRun(
        history,
        result["train_acc"],
        result["val_acc"],
        result["parameters"],
        result["vocab_size"],
        result["tokens"],
        settings,
        result.get("stopped"),
        provenance,
    )


def ceilings_by_counting(pairs) -> tuple[float, float]:
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
