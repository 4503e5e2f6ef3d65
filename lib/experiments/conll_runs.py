"""The runs of the CoNLL-2003 experiment of K&S Section 5 (Chapter 3): one
:class:`lib.models.TokenTagger` trained on CoNLL-2003, live in fast mode and through the stored
results in full mode.

:func:`conll_subset` draws a run's sentences, :func:`conll_experiment` trains one model on
``(tokens, tags)`` pairs and returns a :class:`ConllRun` (its history, a DataFrame with one row
per epoch, and its final accuracies), :func:`conll_compute` trains the run of a settings dict and
returns what is stored, and :func:`conll_run` runs a configuration with a mode's settings (live in
fast mode, through :func:`lib.experiments.store.load_or_run` in full mode). The settings are
:mod:`lib.experiments.conll_settings`; the described model's fixed projection is
:func:`lib.contextual.theorem2_projection`. Bad arguments raise ``ValueError`` naming them; a
full-mode book build whose stored run is missing or stale raises
:class:`lib.experiments.store.StaleResultError`. :mod:`lib.experiments.conll` re-exports every
public name.

Source: K&S (ICLR 2024) Section 5, the CoNLL-2003 experiment, with the book's own settings.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .. import datasets, runtime, training
from .._validate import finite_real, flag, one_of, positive_int
from ..contextual import theorem2_projection
from ..models import TokenTagger
from . import store
from .conll_settings import (
    CONLL_VERSION,
    GRID_KINDS,
    THRESHOLDS,
    _grid_run,
    config_label,
    conll_run_settings,
)

__all__ = [
    "ConllRun",
    "conll_subset",
    "conll_experiment",
    "conll_run",
    "conll_compute",
]


def conll_subset(
    split: str, sentences: int | None, seed: int = 0
) -> list[tuple[list[str], list[str]]]:
    """``sentences`` CoNLL-2003 sentences of ``split`` drawn without replacement (all when
    ``None``).

    The draw is uniform (numpy ``default_rng(seed)``) and the sentences keep their corpus order.

    Raises:
        ValueError: for an unknown split, or a count that is not in ``[1, len(split)]``.
    """
    pairs = datasets.load_conll2003(split)
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
        construction: for a run whose projection is fixed at Theorem 2's value, the constants of
            :func:`lib.contextual.theorem2_projection` (without ``w``); else ``None``.
        val_acc_iv, val_acc_oov: the final validation accuracy on the tokens whose word is in the
            training vocabulary and on those read as ``<unk>`` (``None`` for a stored run that
            predates the split, or a split without such tokens); oov_share: the share of
            validation tokens read as ``<unk>``.
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
    construction: dict | None = None
    val_acc_iv: float | None = None
    val_acc_oov: float | None = None
    oov_share: float | None = None

    def epochs_to(self, levels: Iterable[float] = THRESHOLDS) -> dict:
        """The first epoch whose training accuracy reaches each level (``None``: not reached)."""
        return {level: training.epochs_to(self.history, level) for level in levels}


def conll_experiment(
    train_pairs: Sequence[tuple[Sequence[str], Sequence[str]]],
    validation_pairs: Sequence[tuple[Sequence[str], Sequence[str]]],
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
    checkpoint: str | os.PathLike[str] | None = None,
    tied: bool = False,
    optimizer: str = "adam",
    fixed_projection: str | None = None,
    clip_norm: float | None = None,
    dtype: str = "float32",
    unk_dropout: float = 0.0,
    train_eval: bool = False,
    momentum: float = 0.0,
    schedule: str = "linear",
) -> ConllRun:
    """Train one :class:`~lib.models.TokenTagger` on CoNLL-2003 pairs: K&S Section 5, our settings.

    The vocabulary is built from ``train_pairs`` (validation words it lacks become ``<unk>``);
    batches are length-bucketed (:func:`lib.training.bucket_batches`) on
    :data:`lib.runtime.DEVICE`.

    Args:
        train_pairs, validation_pairs: ``(tokens, tags)`` pairs
            (:func:`lib.datasets.conll2003.load_conll2003`).
        n_layers, rank, d: the model (token width ``d``, head size ``d``, FFN width ``4 d``).
        batch_size, lr, epochs, eval_every, final_lr, seed, stop, checkpoint: the training
            (:func:`lib.training.fit`; ``epochs`` is the cap when ``stop`` is given); the model is
            initialised from ``seed`` as well.
        sparse_embedding: row-wise embedding updates (:class:`~lib.models.TokenTagger`).
        tied: the reviewers' model (:class:`~lib.models.TokenTagger` with ``tied=True``: head
            size 1, ``W_Q = W_K = W_V = w^T``); optimizer: ``"adam"`` or ``"sgd"``
            (:func:`lib.training.fit`); clip_norm: gradient-norm clipping (as ``fit``).
        fixed_projection: ``None``, or ``"theorem2"``: the embeddings are frozen at their
            initialisation and every block's ``w`` is held at the value of K&S Theorem 2's
            construction for them (:func:`lib.contextual.theorem2_projection`); needs ``tied``.
        dtype: ``"float32"`` (the paper-scale runs) or ``"float64"`` (fast mode: a model trained
            in float64 ends at the same token counts on every CPU, where float32's rounding,
            which differs with the CPU's vector instructions, moves a count by one).
        unk_dropout: the probability with which each presentation of a training singleton is
            read as ``<unk>`` (:class:`lib.datasets.perturbations.SingletonDropout`, drawn from
            ``seed``); ``0`` leaves ``<unk>`` untrained, at its initialisation.
        train_eval: score the training pairs in eval mode after every epoch
            (:func:`lib.training.fit`); the history's ``train_acc`` is then that score.
        momentum, schedule: SGD's momentum and the shape of the fall to ``final_lr``
            (:func:`lib.training.fit`).

    Returns:
        A :class:`ConllRun` (with empty ``settings``), the validation accuracy also split into
        words in and out of the training vocabulary.

    Raises:
        ValueError: as :func:`lib.datasets.conll2003.build_vocab`, :class:`~lib.models.TokenTagger`,
            :class:`lib.datasets.perturbations.SingletonDropout` and :func:`lib.training.fit`.

    Source: K&S (ICLR 2024) Section 5, the CoNLL-2003 experiment. Chapter 3.
    """
    vocab = datasets.build_vocab(train_pairs)
    train = datasets.encode_pairs(train_pairs, vocab)
    valid = datasets.encode_pairs(validation_pairs, vocab)
    batches = training.bucket_batches(train, batch_size, seed=seed)
    val_batches = training.bucket_batches(valid, 256, seed=seed)
    tied = flag("tied", tied)
    train_eval = flag("train_eval", train_eval)
    if fixed_projection not in (None, "theorem2"):
        raise ValueError(f"fixed_projection must be None or 'theorem2', got {fixed_projection!r}")
    if fixed_projection is not None and not tied:
        raise ValueError("fixed_projection needs tied=True")
    model = _tagger(
        len(vocab),
        train,
        d=d,
        n_layers=n_layers,
        rank=rank,
        seed=seed,
        sparse_embedding=sparse_embedding,
        tied=tied,
        dtype=dtype,
        fixed_projection=fixed_projection,
    )
    augment = None
    if finite_real("unk_dropout", unk_dropout, minimum=0.0, maximum=1.0) > 0:
        augment = datasets.SingletonDropout(train, unk_dropout, seed=seed)
    label = ("described, " if tied else "") + config_label(n_layers, rank)
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
        optimizer=optimizer,
        clip_norm=clip_norm,
        augment=augment,
        train_eval=train_eval,
        momentum=momentum,
        schedule=schedule,
    )
    return _trained_run(model, history, len(vocab), train, batches, val_batches)


def _tagger(
    vocab_size: int,
    train: list,
    *,
    d: int,
    n_layers: int,
    rank: int | None,
    seed: int,
    sparse_embedding: bool,
    tied: bool,
    dtype: str,
    fixed_projection: str | None,
) -> TokenTagger:
    """The untrained model of :func:`conll_experiment` on :data:`lib.runtime.DEVICE`: a
    :class:`~lib.models.TokenTagger` in ``dtype``, initialised from ``seed``, its projection held
    at Theorem 2's value for the embeddings when ``fixed_projection`` is given
    (:func:`_fix_projection`, whose maximum length is that of ``train``)."""
    import torch

    one_of("dtype", dtype, ("float32", "float64"))
    model = TokenTagger(
        vocab_size,
        len(datasets.CONLL_TAGS),
        d=d,
        n_layers=n_layers,
        rank=rank,
        seed=seed,
        sparse_embedding=sparse_embedding,
        tied=tied,
        dtype=getattr(torch, dtype),
    )
    if fixed_projection is not None:
        model = _fix_projection(model, train, seed)
    return model.to(runtime.DEVICE)


def _trained_run(
    model: TokenTagger,
    history: pd.DataFrame,
    vocab_size: int,
    train: list,
    batches: list,
    val_batches: list,
) -> ConllRun:
    """The :class:`ConllRun` of :func:`conll_experiment`'s trained ``model`` (empty settings):
    its final accuracies, the validation accuracy also split by vocabulary, and its sizes."""
    iv, oov, share = _split_by_vocabulary(model, val_batches)
    return ConllRun(
        history,
        training.evaluate(model, batches),
        training.evaluate(model, val_batches),
        sum(p.numel() for p in model.parameters()),
        vocab_size,
        sum(len(ids) for ids, _ in train),
        {},
        history.attrs["stopped"],
        construction=getattr(model, "theorem2", None),
        val_acc_iv=iv,
        val_acc_oov=oov,
        oov_share=share,
    )


def _split_by_vocabulary(model: Any, batches: list) -> tuple[float | None, float | None, float]:
    """Accuracy of ``model`` on the counted positions of ``batches`` whose input is a vocabulary
    word and on those whose input is ``<unk>`` (``None`` where there are none), and the share of
    counted positions read as ``<unk>``."""
    parts = []
    for keep in (lambda x: x != datasets.UNK, lambda x: x == datasets.UNK):
        parts.append([(x, y.masked_fill(~keep(x), training.IGNORE)) for x, y in batches])
    counts = [sum(int((y != training.IGNORE).sum()) for _, y in part) for part in parts]
    iv, oov = (
        training.evaluate(model, part) if n else None for part, n in zip(parts, counts, strict=True)
    )
    return iv, oov, counts[1] / sum(counts)


def _fix_projection(model: TokenTagger, train: list, seed: int) -> TokenTagger:
    """``model`` with its embeddings frozen and every block's tied projection held at Theorem 2's
    value for them (:func:`lib.contextual.theorem2_projection`; ``W_O`` starts at the construction's
    ``eps / (4 r_max) w`` and is trained)."""
    import torch

    from ..layers import TiedSelfAttention

    table = model.embed.weight.detach().to(torch.float64).cpu().numpy()
    rows = np.arange(len(table)) != model.pad_id
    n = max(len(ids) for ids, _ in train)
    fixed = theorem2_projection(table[rows], max(n, 2), seed=seed)
    model.embed.weight.requires_grad_(False)
    dtype = model.embed.weight.dtype
    for i in range(model.n_layers):
        layer = TiedSelfAttention(
            model.d, dtype=dtype, fixed_projection=fixed["w"], gamma=fixed["gamma"]
        )
        with torch.no_grad():
            layer.W_O.copy_(
                torch.as_tensor(fixed["eps"] / (4 * fixed["r_max"]) * fixed["w"])[:, None]
            )
        model.attn[i] = layer
    # a plain attribute (not a parameter or module), read back by conll_experiment
    model.theorem2 = {k: v for k, v in fixed.items() if k != "w"}  # type: ignore[assignment]
    return model


#: The options of :func:`conll_experiment` that a run's settings may name (its defaults apply to
#: those they do not).
_OPTIONS = (
    "sparse_embedding",
    "tied",
    "optimizer",
    "fixed_projection",
    "clip_norm",
    "dtype",
    "unk_dropout",
    "train_eval",
    "momentum",
    "schedule",
)


def conll_compute(settings: dict) -> dict:
    """Train the run of ``settings`` (from
    :func:`~lib.experiments.conll_settings.conll_run_settings`) and return what is stored:
    ``history`` (lists, ``None`` for epochs without a validation score), ``train_acc``,
    ``val_acc``, ``parameters``, ``vocab_size``, ``tokens``, ``stopped``. A full-mode run keeps
    its epoch checkpoint under ``BOOK_RESULTS/.partial``
    (:func:`lib.experiments.store.checkpoint_path`).

    Raises:
        ValueError: as :func:`conll_experiment`.
    """
    mode, n_layers, rank = settings["mode"], settings["n_layers"], settings["rank"]
    kind = settings.get("kind", "ours")
    run = (
        _grid_run(settings)
        if kind in GRID_KINDS
        else conll_run_settings(n_layers, rank, mode, seed=settings["seed"], kind=kind)[0]
    )
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
        # the options a run's settings name; conll_experiment's defaults stand for the rest
        **{k: settings[k] for k in _OPTIONS if k in settings},
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
        **({} if out.construction is None else {"construction": out.construction}),
        "val_acc_iv": out.val_acc_iv,
        "val_acc_oov": out.val_acc_oov,
        "oov_share": out.oov_share,
    }


def conll_run(
    n_layers: int,
    rank: int | None,
    mode: str | None = None,
    *,
    seed: int = 0,
    kind: str = "ours",
    allow_compute: bool | None = None,
) -> ConllRun:
    """:func:`conll_experiment` with the settings of ``mode``
    (:data:`~lib.experiments.conll_settings.CONLL_SETTINGS`).

    Fast mode trains on a seeded subset of the training split for a fixed number of epochs and
    scores a subset of the validation split. Full mode uses both splits whole, stops by the
    settings' :class:`lib.training.StopRule` or at the depth's epoch cap (the run's ``epochs``
    setting), keeps an epoch checkpoint (:func:`lib.experiments.store.checkpoint_path`) so that an
    interrupted ``make full`` resumes where it stopped, and goes through
    :func:`lib.experiments.store.load_or_run` (keyed on the settings and
    :data:`~lib.experiments.conll_settings.CONLL_VERSION`): a stored result is loaded; a missing
    or stale one is computed and stored by ``make full`` and stops a book build with one line
    naming ``make full``.

    Args:
        n_layers: depth; rank: attention rank (``None`` dense); mode: ``"fast"`` or ``"full"``
            (default :data:`lib.runtime.MODE`).
        seed: the run's seed (:data:`~lib.experiments.conll_settings.SEEDS` are stored in full
            mode).
        kind: ``"ours"``, ``"described"`` or ``"described-fixed"``
            (:data:`~lib.experiments.conll_settings.SETTINGS_KINDS`).
        allow_compute: full mode only: compute a missing or stale result (default: outside book
            builds). Chapter 3 reads the stored runs with ``False``, so that running the chapter
            never starts an hour of training.

    Returns:
        The :class:`ConllRun`, with ``settings`` (the dict used, with ``n_layers``, ``rank`` and
        ``mode``; in full mode ``epochs`` is the run's cap) and, for a stored run, its
        ``provenance``.

    Raises:
        ValueError: for an unknown mode, a bad depth or rank, or (full mode) a depth without an
            epoch cap in :data:`~lib.experiments.conll_settings.CONLL_SETTINGS`.
        lib.experiments.store.StaleResultError: in a full-mode book build whose stored result is
            missing or stale.

    Source: K&S (ICLR 2024) Section 5. Chapter 3 and ``tools/full_mode.py``.
    """
    mode = runtime.MODE if mode is None else mode
    run, settings = conll_run_settings(n_layers, rank, mode, seed=seed, kind=kind)

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
            allow_compute=not runtime.IN_BUILD if allow_compute is None else allow_compute,
            device=str(runtime.DEVICE),
        )
        result, provenance = stored.result, stored.provenance
    return _as_run(result, settings, provenance)


def _as_run(result: Mapping[str, Any], settings: dict, provenance: dict | None) -> ConllRun:
    """A :class:`ConllRun` from what :func:`conll_compute` returns (or a stored file holds)."""
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
        result.get("construction"),
        result.get("val_acc_iv"),
        result.get("val_acc_oov"),
        result.get("oov_share"),
    )
