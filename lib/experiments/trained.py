r"""Training on data the theorems cover, against what the proofs build.

K&S Corollary 1 says that one rank-1 self-attention layer and one ReLU feed-forward layer can
memorize any consistent labels of sequences that meet Theorem 2's hypotheses (tokenwise separated,
no token twice in a sequence), with :func:`lib.memorization.corollary1_parameter_count`
parameters. That a network *exists* says nothing about whether gradient descent *finds* one, or
what it finds. This module asks both on data the theorems cover:

* :func:`corollary1_instance` generates such data (a random vocabulary, sequences that are
  ``n``-subsets of it in random order, random labels) and :func:`instance_hypotheses` checks the
  hypotheses with :mod:`lib.separation`'s measurements, not by construction;
* :func:`memorise` trains the book's rank-1 one-layer Transformer (:class:`lib.models.TokenTagger`
  with its embedding held at the vocabulary; ``tied=True`` for the head of size 1 of Chapter 3)
  until it has memorized every label or run out of epochs, and :func:`capacity_counts` gives the
  parameter counts of the memorization results it is compared with;
* :func:`trained_geometry` measures in a trained model the quantities Theorem 2's construction is
  made of (the smallest gap between context ids, the scale of the scores, of the feed-forward
  weights, and the digits they need), and :func:`constructed_geometry` gives the same quantities
  for the construction on the same vocabulary.

The generator's distributions, the model sizes and the training settings are the book's own; the
papers run no such experiment.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import torch

from .. import runtime, training
from .._geometry import MAX_MATRIX_ENTRIES
from .._validate import finite_real, flag, one_of, positive_int, require_size, short_repr
from ..contextual import RankOneAttention, theorem2_delta
from ..memorization import corollary1_parameter_count
from ..models import TokenTagger
from ..separation import tokenwise_separation
from . import store

__all__ = [
    "Corollary1Instance",
    "corollary1_instance",
    "instance_hypotheses",
    "tagger",
    "trainable_parameters",
    "MemorisationRun",
    "memorise",
    "capacity_counts",
    "trained_geometry",
    "constructed_geometry",
    "TRAINED_VERSION",
    "PHASE_SETTINGS",
    "phase_cells",
    "phase_run_settings",
    "phase_compute",
    "phase_run",
    "phase_diagram",
]

#: The version of this experiment's code; raise it when a change alters what :func:`phase_run`
#: computes, so that stored results are recomputed (``make full``) rather than reused.
TRAINED_VERSION = 1

#: The capacity grid of Chapter 7 in each book mode. An instance of :func:`corollary1_instance`
#: with ``n``, ``vocab_size``, ``d`` and ``n_labels`` for every number of sequences in ``Ns``, and
#: the model of :func:`tagger` at every feed-forward width in ``widths``, both kinds of attention
#: head (``tied`` false and true), each from every seed of ``seeds`` (the seed draws the instance
#: and the initialisation), trained by :func:`memorise` with ``epochs`` and ``lr`` (a constant
#: rate). ``arm``: the cells of its ``widths`` (every N, seed and head) trained again with another
#: optimizer setting (a rate ``lr`` falling along half a cosine to ``final_lr``), so that the page
#: can tell whether the rate decides where training memorizes. Fast mode is a corner of the full
#: grid. All of it is the book's choice.
PHASE_SETTINGS: dict[str, dict[str, Any]] = {
    "fast": {"Ns": [8, 32], "widths": [8, 64], "seeds": [0], "tied": [False],
             "n": 4, "vocab_size": 16, "d": 8, "n_labels": 4, "epochs": 1000, "lr": 1e-2,
             "arm": {"widths": [64], "lr": 3e-2, "final_lr": 1e-4}},
    "full": {"Ns": [8, 16, 32, 64, 128, 256],
             "widths": [2, 4, 8, 16, 32, 64, 128, 256, 512, 1024],
             "seeds": [0, 1, 2], "tied": [False, True],
             "n": 4, "vocab_size": 16, "d": 8, "n_labels": 4, "epochs": 3000, "lr": 1e-2,
             "arm": {"widths": [256, 1024], "lr": 3e-2, "final_lr": 1e-4}},
}  # fmt: skip


@dataclass(frozen=True)
class Corollary1Instance:
    """Sequences and labels of the kind K&S Corollary 1 memorizes (:func:`corollary1_instance`).

    Attributes:
        vocab: the tokens, float64 ``(K, d)``.
        ids: int64 ``(N, n)``: sequence ``i`` is ``vocab[ids[i]]``.
        labels: int64 ``(N, n)`` in ``[0, n_labels)``: the label of each token in its sequence.
        n_labels: the size of the label alphabet; seed: the generator's seed.
    """

    vocab: np.ndarray
    ids: np.ndarray
    labels: np.ndarray
    n_labels: int
    seed: int

    @property
    def X(self) -> np.ndarray:
        """The sequences as tokens, float64 ``(N, n, d)``."""
        return self.vocab[self.ids]


def corollary1_instance(
    N: int,
    n: int,
    vocab_size: int,
    d: int,
    n_labels: int,
    *,
    seed: int = 0,
    r_min: float = 1.0,
    r_max: float = 2.0,
) -> Corollary1Instance:
    """``N`` sequences of ``n`` tokens from a vocabulary of ``vocab_size`` tokens in ``R^d``, with
    random labels.

    The tokens are Gaussian directions with norms drawn uniformly from ``[r_min, r_max]``; each
    sequence is an ``n``-subset of the vocabulary, no subset drawn twice, its tokens in random
    order; each token of each sequence gets a label drawn uniformly from ``n_labels``. No two
    sequences are permutations of each other, so every (token, context) pair occurs once and any
    labelling is consistent. Everything is drawn from ``numpy.random.default_rng(seed)``.

    Args:
        N: sequences (at most ``binom(vocab_size, n)``); n: length ``>= 2``;
        vocab_size: ``|V| >= n``; d: token dimension; n_labels: label alphabet size ``>= 2``.
        seed: the seed; r_min, r_max: the range of the token norms, ``0 < r_min <= r_max``.

    Returns:
        A :class:`Corollary1Instance`.

    Raises:
        ValueError: for sizes that are not positive integers in range (named), more sequences than
            there are ``n``-subsets, or a bad norm range.

    Source: the hypotheses of K&S (ICLR 2024) Theorem 2 and Corollary 1; the distributions are
    the book's own. Chapter 7.
    """
    n = positive_int("n", n, minimum=2)
    vocab_size = positive_int("vocab_size", vocab_size, minimum=n, maximum=1 << 16)
    d = positive_int("d", d, maximum=1 << 12)
    n_labels = positive_int("n_labels", n_labels, minimum=2)
    subsets = math.comb(vocab_size, n)
    N = positive_int("N", N, maximum=min(subsets, 1 << 20))
    seed = positive_int("seed", seed, minimum=0, maximum=2**62)
    r_min = finite_real("r_min", r_min, minimum=0.0, strict=True)
    r_max = finite_real("r_max", r_max, minimum=r_min)
    rng = np.random.default_rng(seed)
    directions = rng.standard_normal((vocab_size, d))
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    vocab = directions * rng.uniform(r_min, r_max, size=(vocab_size, 1))
    seen: set[tuple[int, ...]] = set()
    rows: list[np.ndarray] = []
    while len(rows) < N:
        pick = rng.choice(vocab_size, n, replace=False)
        key = tuple(sorted(int(i) for i in pick))
        if key not in seen:
            seen.add(key)
            rows.append(pick)
    ids = np.array(rows, dtype=np.int64)
    labels = rng.integers(0, n_labels, size=ids.shape, dtype=np.int64)
    return Corollary1Instance(vocab, ids, labels, n_labels, seed)


def _instance(inst: object) -> Corollary1Instance:
    """``inst`` if it is a well-formed :class:`Corollary1Instance`, else a ValueError."""
    if not isinstance(inst, Corollary1Instance):
        raise ValueError(f"inst must be a Corollary1Instance, got {short_repr(inst)}")
    vocab, ids, labels = inst.vocab, inst.ids, inst.labels
    if (
        not isinstance(vocab, np.ndarray)
        or vocab.ndim != 2
        or vocab.dtype != np.float64
        or not isinstance(ids, np.ndarray)
        or ids.ndim != 2
        or ids.dtype != np.int64
        or not isinstance(labels, np.ndarray)
        or labels.shape != ids.shape
        or labels.dtype != np.int64
        or ids.size == 0
        or ids.min() < 0
        or ids.max() >= len(vocab)
        or labels.min() < 0
        or labels.max() >= inst.n_labels
    ):
        raise ValueError(
            "inst must hold a float64 vocab (K, d), int64 ids (N, n) in [0, K) and int64 labels "
            f"(N, n) in [0, n_labels), got vocab {short_repr(vocab)}, ids {short_repr(ids)}, "
            f"labels {short_repr(labels)}"
        )
    return inst


def instance_hypotheses(inst: Corollary1Instance) -> dict[str, Any]:
    """Theorem 2's and Corollary 1's hypotheses, measured on ``inst``.

    Returns:
        A dict with ``r_min``, ``r_max``, ``eps`` (:func:`lib.separation.tokenwise_separation`,
        which refuses a sequence holding a token twice), ``separated`` (``r_min > 0`` and
        ``eps > 0``), ``consistent`` (no token gets two labels in permutation-equivalent
        sequences, counted by grouping every token with the multiset of its sequence),
        ``contexts`` (the number of distinct (token, context) pairs) and ``tokens`` (``N n``).

    Raises:
        ValueError: for an ``inst`` that is not a :class:`Corollary1Instance`, or as
            :func:`lib.separation.tokenwise_separation` (a repeated token).

    Source: K&S (ICLR 2024) Definition 1, Theorem 2 and Corollary 1. Chapter 7.
    """
    inst = _instance(inst)
    r_min, r_max, eps = tokenwise_separation(inst.X)
    seen: dict[tuple, set] = {}
    for row, labels in zip(inst.ids, inst.labels, strict=True):
        context = tuple(sorted(row.tolist()))
        for token, label in zip(row.tolist(), labels.tolist(), strict=True):
            seen.setdefault((context, token), set()).add(label)
    return {
        "r_min": r_min,
        "r_max": r_max,
        "eps": eps,
        "separated": r_min > 0 and eps > 0,
        "consistent": all(len(v) == 1 for v in seen.values()),
        "contexts": len(seen),
        "tokens": int(inst.ids.size),
    }


def tagger(
    inst: Corollary1Instance, ffn_width: int, *, tied: bool = False, seed: int = 0
) -> TokenTagger:
    """The book's one-layer rank-1 Transformer for ``inst``, in float64, its embedding held at the
    vocabulary (word id ``k + 1`` is ``vocab[k]``, id 0 the unused padding).

    Args:
        inst: the data; ffn_width: the feed-forward layer's hidden width.
        tied: ``False`` (head size ``d``, rank 1) or ``True`` (the tied head of size 1,
            :class:`lib.layers.TiedSelfAttention`); seed: the initialisation's seed.

    Returns:
        A :class:`lib.models.TokenTagger` whose embedding does not train.

    Raises:
        ValueError: as :class:`lib.models.TokenTagger`, or for an ``inst`` of the wrong type.
    """
    inst = _instance(inst)
    model = TokenTagger(
        len(inst.vocab) + 1,
        inst.n_labels,
        d=inst.vocab.shape[1],
        n_layers=1,
        rank=1,
        ffn_width=ffn_width,
        dtype=torch.float64,
        seed=seed,
        tied=flag("tied", tied),
    )
    with torch.no_grad():
        model.embed.weight[1:] = torch.from_numpy(inst.vocab)
    model.embed.weight.requires_grad_(False)
    return model


def trainable_parameters(model: torch.nn.Module) -> int:
    """The number of trainable entries of ``model`` (parameters with ``requires_grad``).

    Raises:
        ValueError: for a ``model`` that is not a torch module.
    """
    if not isinstance(model, torch.nn.Module):
        raise ValueError(f"model must be a torch.nn.Module, got {short_repr(model)}")
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


@dataclass(frozen=True)
class MemorisationRun:
    """One model trained to memorize an instance (:func:`memorise`).

    Attributes:
        fraction: the share of the ``N n`` labels the trained model gets right (eval mode).
        parameters: its trainable parameters; epochs: epochs trained; memorised: ``fraction == 1``.
        history: :func:`lib.training.fit`'s history; model: the trained model.
    """

    fraction: float
    parameters: int
    epochs: int
    memorised: bool
    history: pd.DataFrame = field(repr=False)
    model: TokenTagger = field(repr=False)


def memorise(
    inst: Corollary1Instance,
    ffn_width: int,
    *,
    tied: bool = False,
    seed: int = 0,
    epochs: int = 3000,
    lr: float = 1e-2,
    batch_size: int = 64,
    final_lr: float | None = None,
    schedule: str = "linear",
) -> MemorisationRun:
    """Train :func:`tagger` on ``inst`` by Adam until it gets every label right, or ``epochs``.

    The batches are fixed (:func:`lib.training.bucket_batches`, shuffled by ``seed``), the rate
    constant; after every epoch the model is scored in eval mode on all ``N n`` tokens and
    training stops at the first epoch that scores 1.

    Args:
        inst: the data; ffn_width, tied, seed: as :func:`tagger` (``seed`` also orders the
            batches).
        epochs: the cap; lr: Adam's rate; batch_size: sequences per batch.
        final_lr, schedule: as :func:`lib.training.fit` (default: a constant rate).

    Returns:
        A :class:`MemorisationRun`.

    Raises:
        ValueError: as :func:`tagger` and :func:`lib.training.fit`.

    Source: the book's training of K&S Corollary 1's model class (Chapter 7).
    """
    model = tagger(inst, ffn_width, tied=flag("tied", tied), seed=seed)
    pairs = [(row + 1, lab) for row, lab in zip(inst.ids, inst.labels, strict=True)]
    batches = training.bucket_batches(pairs, batch_size, seed=seed, device="cpu")
    history = training.fit(
        model,
        batches,
        epochs=epochs,
        lr=lr,
        seed=seed,
        final_lr=final_lr,
        schedule=schedule,
        train_eval=True,
        progress=False,
        stop=lambda h: "memorised" if h["train_acc"].iloc[-1] == 1.0 else None,
    )
    fraction = float(history["train_acc"].iloc[-1])
    return MemorisationRun(
        fraction, trainable_parameters(model), len(history), fraction == 1.0, history, model
    )


def capacity_counts(n: int, N: int, d: int, s: int = 1) -> dict[str, float]:
    r"""The parameter counts the memorization results give for ``N`` sequences of length ``n``.

    ``corollary1``: K&S Corollary 1's exact count :math:`4(s+d) + d(2nN + d)`
    (:func:`lib.memorization.corollary1_parameter_count`). ``kim2023``: the
    :math:`\tilde O(d + n + \sqrt{nN})` of Kim, Kim and Mozafari (2023) and ``ks2025``: the
    :math:`\tilde O(\sqrt{nN})` of Kajitsuka and Sato (2025), both drawn with constant 1 and
    without their logarithmic factors: a choice of the book, since the results fix neither.

    Raises:
        ValueError: as :func:`lib.memorization.corollary1_parameter_count`.

    Source: K&S (ICLR 2024) Corollary 1; Kim, Kim and Mozafari (ICLR 2023); Kajitsuka and Sato
    (ICLR 2025). Chapter 7.
    """
    exact = corollary1_parameter_count(n, N, d, s)
    return {
        "corollary1": float(exact),
        "kim2023": d + n + math.sqrt(n * N),
        "ks2025": math.sqrt(n * N),
    }


def _min_gap(points: np.ndarray, labels: np.ndarray | None = None) -> float:
    """The smallest distance between two rows of ``points`` (float64); with ``labels``, between
    two rows whose labels differ (``inf`` when all labels agree)."""
    diff = points[:, None, :] - points[None, :, :]
    dist = np.sqrt((diff**2).sum(-1))
    i, j = np.triu_indices(len(points), 1)
    if labels is not None:
        keep = labels[i] != labels[j]
        i, j = i[keep], j[keep]
    return float(dist[i, j].min()) if len(i) else math.inf


@torch.no_grad()
def trained_geometry(model: TokenTagger, inst: Corollary1Instance) -> dict[str, float]:
    r"""What a trained :func:`tagger` is made of, in the terms of Theorem 2's construction.

    Returns:
        A dict with ``min_gap``, the smallest distance between the context ids (the attention
        layer's outputs, residual included) of two of the ``N n`` tokens (every pair is a
        different token or context, so the construction keeps all of them apart);
        ``id_norm``, the largest id norm; ``score_scale``, the spectral norm of
        :math:`W_Q^\top W_K` (the construction's is its inverse temperature :math:`\gamma`);
        ``ffn_scale``, the largest absolute entry of the feed-forward layer's output weights;
        ``digits``, :math:`\log_{10}` of ``id_norm / min_gap``, the decimal digits an id needs
        to be told from its nearest neighbour (``inf`` when two ids coincide, ``min_gap`` 0;
        negative when the ids lie further apart than their size); ``min_gap_labels`` and
        ``digits_labels``, the same over the pairs whose labels differ, the only pairs a
        feed-forward layer that reads the ids must tell apart. The model is evaluated in
        eval mode and left in the mode it was in.

    Raises:
        ValueError: for an instance of the wrong form, a model that is not :func:`tagger`'s for
            it, or more pairwise differences than ``lib.maxaffine.MAX_MATRIX_ENTRIES``.

    Source: the quantities of K&S (ICLR 2024) Theorem 2's construction; the measurement is the
    book's (Chapter 7).
    """
    inst = _instance(inst)
    K, d = inst.vocab.shape
    if (
        not isinstance(model, TokenTagger)
        or model.n_layers != 1
        or (model.vocab_size, model.d) != (K + 1, d)
    ):
        raise ValueError(
            f"model must be a one-layer TokenTagger built for inst (tagger(inst, ...): "
            f"vocab_size {K + 1}, d {d}), got {short_repr(model)}"
        )
    tokens = inst.ids.size
    require_size("the pairwise id differences", tokens * tokens * d, MAX_MATRIX_ENTRIES,
                 "lib.maxaffine.MAX_MATRIX_ENTRIES")  # fmt: skip
    attn: Any = model.attn[0]  # a ModuleList item is typed Module
    ffn: Any = model.ffn[0]
    ids = torch.from_numpy(inst.ids + 1)
    was_training = model.training
    model.eval()
    try:
        Z = model.embed(ids)
        out = attn(Z, ids == model.pad_id).reshape(-1, d).double().numpy()
    finally:
        model.train(was_training)
    gap = _min_gap(out)
    gap_labels = _min_gap(out, inst.labels.reshape(-1))
    weights = {k: v.double() for k, v in attn.weights().items()}
    score = float(torch.linalg.matrix_norm(weights["W_Q"].T @ weights["W_K"], ord=2))
    norm = float(np.linalg.norm(out, axis=1).max())
    return {
        "min_gap": gap,
        "id_norm": norm,
        "score_scale": score,
        "ffn_scale": float(ffn.W2.abs().max()),
        "digits": math.log10(norm / gap) if gap > 0 else math.inf,
        "min_gap_labels": gap_labels,
        "digits_labels": math.log10(norm / gap_labels) if gap_labels > 0 else math.inf,
    }


def constructed_geometry(inst: Corollary1Instance, *, seed: int = 0) -> dict[str, float]:
    r"""The same quantities as :func:`trained_geometry` for Theorem 2's construction on the
    vocabulary of ``inst`` (:class:`lib.contextual.RankOneAttention`, its direction from
    ``seed``).

    Returns:
        A dict with ``log10_min_gap``, the base-10 logarithm of the separation the construction
        guarantees (:func:`lib.contextual.theorem2_delta`, ``construction``, with the measured
        projection constant); ``id_norm``, its bound :math:`r_{\max} + \epsilon/4` on every id;
        ``score_scale``, its inverse temperature :math:`\gamma`; ``log10_ffn_scale``, the
        base-10 logarithm of :math:`1/\delta`, the order of the output weights of a feed-forward
        layer that tells ids ``delta`` apart; ``digits``, :math:`\log_{10}` of ``id_norm`` over
        the separation.

    Raises:
        ValueError: as :class:`lib.contextual.RankOneAttention` and
            :func:`lib.contextual.theorem2_delta`.

    Source: K&S (ICLR 2024) Theorem 2, as the book reconstructs it (Chapter 2). Chapter 7.
    """
    inst = _instance(inst)
    n = inst.ids.shape[1]
    layer = RankOneAttention(inst.vocab, n, seed=seed)
    delta = theorem2_delta(
        n, len(inst.vocab), inst.vocab.shape[1], layer.r_min, layer.r_max, layer.eps, layer.c_w
    )
    return {
        "log10_min_gap": float(delta.construction),
        "id_norm": float(delta.r),
        "score_scale": float(layer.gamma),
        "log10_ffn_scale": -float(delta.construction),
        "digits": math.log10(float(delta.r)) - float(delta.construction),
    }


def phase_run_settings(
    N: int, width: int, seed: int, tied: bool, mode: str | None = None, cosine: bool = False
) -> tuple[str, dict]:
    """The stored run's name and settings of one cell of :data:`PHASE_SETTINGS`' grid:
    ``phase-<N>-width-<width>-seed-<seed>`` (``-tied`` for the head of size 1, ``-cosine`` for
    a cell of the grid's ``arm``, trained with its falling rate).

    Raises:
        ValueError: for an unknown mode or a bad size, or ``cosine`` for a mode without an arm.
    """
    mode = runtime.MODE if mode is None else mode
    one_of("mode", mode, runtime.MODES)
    base = PHASE_SETTINGS[mode]
    settings = {k: base[k] for k in ("n", "vocab_size", "d", "n_labels", "epochs", "lr")}
    settings |= {
        "N": positive_int("N", N, maximum=math.comb(base["vocab_size"], base["n"])),
        "width": positive_int("width", width),
        "seed": positive_int("seed", seed, minimum=0, maximum=2**31),
        "tied": flag("tied", tied),
    }
    name = f"phase-{N}-width-{width}-seed-{seed}" + ("-tied" if tied else "")
    if flag("cosine", cosine):
        if not base.get("arm"):
            raise ValueError(f"cosine=True: the {mode} grid has no arm")
        arm = base["arm"]
        settings |= {"lr": arm["lr"], "final_lr": arm["final_lr"], "schedule": "cosine"}
        name += "-cosine"
    return name, settings


def phase_cells(mode: str | None = None) -> list[tuple[int, int, int, bool, bool]]:
    """Every cell of ``mode``'s capacity grid (:data:`PHASE_SETTINGS`) as ``(N, width, seed,
    tied, cosine)``, in the order :func:`phase_diagram` gives them and ``make full`` plans them:
    the grid (``cosine`` false), then its arm.

    Raises:
        ValueError: for an unknown mode.
    """
    mode = runtime.MODE if mode is None else mode
    one_of("mode", mode, runtime.MODES)
    base = PHASE_SETTINGS[mode]
    arm = base.get("arm") or {"widths": []}
    return [
        (N, width, seed, tied, cosine)
        for cosine, ws in ((False, base["widths"]), (True, arm["widths"]))
        for tied in base["tied"]
        for N in base["Ns"]
        for width in ws
        for seed in base["seeds"]
    ]


def phase_compute(settings: dict) -> dict:
    """Train one cell of the capacity grid from its settings (:func:`phase_run_settings`) and
    return what is stored: the entries :func:`phase_run` lists, without ``settings``. ``make
    full``'s workers call it (:func:`lib.experiments.tasks.execute`).

    Raises:
        ValueError: as :func:`corollary1_instance` and :func:`memorise`, or for settings without
            one of their keys.
    """
    missing = {"N", "n", "vocab_size", "d", "n_labels", "width", "tied", "seed", "epochs", "lr"}
    missing -= set(settings) if isinstance(settings, dict) else set()
    if not isinstance(settings, dict) or missing:
        raise ValueError(f"settings must be a phase cell's settings, missing {sorted(missing)}")
    inst = corollary1_instance(
        settings["N"], settings["n"], settings["vocab_size"], settings["d"],
        settings["n_labels"], seed=settings["seed"],
    )  # fmt: skip
    run = memorise(
        inst, settings["width"], tied=settings["tied"], seed=settings["seed"],
        epochs=settings["epochs"], lr=settings["lr"],
        # the falling rate of the arm's cells; memorise's defaults stand for the others
        **{k: settings[k] for k in ("final_lr", "schedule") if k in settings},
    )  # fmt: skip
    geometry = trained_geometry(run.model, inst)
    return {
        "fraction": run.fraction,
        "parameters": run.parameters,
        "epochs": run.epochs,
        "memorised": run.memorised,
        "seconds": float(run.history["seconds"].iloc[-1]),
        **{k: (None if not math.isfinite(v) else v) for k, v in geometry.items()},
    }


def phase_run(
    N: int,
    width: int,
    seed: int = 0,
    tied: bool = False,
    mode: str | None = None,
    cosine: bool = False,
    *,
    allow_compute: bool | None = None,
) -> dict:
    """One cell of the capacity grid: :func:`memorise` on :func:`corollary1_instance`'s data,
    with :func:`trained_geometry` of the trained model.

    Fast mode computes it; full mode reads it from the stored results
    (:func:`lib.experiments.store.load_or_run`, experiment ``"trained"``), computing a missing one
    only where ``allow_compute`` (default: outside book builds).

    Returns:
        A dict with ``fraction``, ``parameters``, ``epochs``, ``memorised``, ``seconds`` and the
        entries of :func:`trained_geometry` (``digits`` ``None`` where two ids coincide), with
        the cell's ``settings`` and, in full mode, the stored run's ``provenance``.

    Raises:
        ValueError: as :func:`phase_run_settings`, :func:`corollary1_instance` and
            :func:`memorise`.
        lib.experiments.store.StaleResultError: in a full-mode book build whose stored result is
            missing or stale.

    Source: the book's experiment on K&S Corollary 1's data (Chapter 7).
    """
    mode = runtime.MODE if mode is None else mode
    tied = flag("tied", tied)
    run, settings = phase_run_settings(N, width, seed, tied, mode, cosine)
    if mode == "fast":
        return phase_compute(settings) | {"settings": settings}
    stored = store.load_or_run(
        "trained",
        run,
        TRAINED_VERSION,
        settings,
        lambda: phase_compute(settings),
        allow_compute=not runtime.IN_BUILD if allow_compute is None else allow_compute,
        device="cpu",
    )
    return dict(stored.result) | {"settings": settings, "provenance": stored.provenance}


# The columns of a cell, in the order phase_diagram gives them.
_CELL_KEYS = ("fraction", "parameters", "epochs", "memorised", "seconds", "min_gap", "id_norm",
              "score_scale", "ffn_scale", "digits", "min_gap_labels", "digits_labels")  # fmt: skip


def phase_diagram(mode: str | None = None, *, allow_compute: bool | None = None) -> pd.DataFrame:
    """Every cell of ``mode``'s capacity grid (:data:`PHASE_SETTINGS`), one row each.

    Returns:
        A DataFrame with ``N``, ``width``, ``seed``, ``tied``, ``cosine`` (a cell of the arm)
        and the entries of :func:`phase_run`, plus :func:`capacity_counts` of the cell's ``n``,
        ``N``, ``d`` (as columns ``corollary1``, ``kim2023``, ``ks2025``).

    Raises:
        ValueError, lib.experiments.store.StaleResultError: as :func:`phase_run`.

    Source: the book's experiment on K&S Corollary 1's data (Chapter 7).
    """
    mode = runtime.MODE if mode is None else mode
    one_of("mode", mode, runtime.MODES)
    base = PHASE_SETTINGS[mode]
    rows = []
    for N, width, seed, tied, cosine in phase_cells(mode):
        cell = phase_run(N, width, seed, tied, mode, cosine, allow_compute=allow_compute)
        rows.append(
            {"N": N, "width": width, "seed": seed, "tied": tied, "cosine": cosine}
            | {k: cell[k] for k in _CELL_KEYS}  # a stored file sorts its keys
            | capacity_counts(base["n"], N, base["d"])
        )
    return pd.DataFrame(rows)
