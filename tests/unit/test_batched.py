"""lib.batched: which models stack, and the references the stacked loop's tests compare with
(test_training_stacked.py imports them): K runs trained as one stacked model equal the same K runs
trained one by one.

Everything in float64, so that the only differences are the rounding of different product
orders: parameters, Adam moments and histories agree to 1e-10. The serial reference is computed
twice, by lib.training.fit and by an independent loop written here (per-run torch.optim.Adam,
the batch order drawn as the docstrings state), so a fault shared by fit and fit_stacked shows.
"""

import copy

import numpy as np
import pandas as pd
import pytest
import torch
from torch import nn

from lib import batched
from lib.models import PatchAttentionClassifier, TokenTagger
from lib.training import IGNORE

TOL = 1e-10


def patch_runs(seeds, n_batches=5, b=6):
    """Classifiers whose last batch is smaller, so that runs meet batches of different sizes."""
    models, batches = [], []
    for s in seeds:
        models.append(
            PatchAttentionClassifier(
                image_size=8, patch=4, d=6, n_classes=3, qk_init=0.5, dtype=torch.float64, seed=s
            )
        )
        g = torch.Generator().manual_seed(100 + s)
        batches.append(
            [
                (
                    torch.randn(
                        b - 3 * (j == n_batches - 1), 8, 8, generator=g, dtype=torch.float64
                    ),
                    torch.randint(0, 3, (b - 3 * (j == n_batches - 1),), generator=g),
                )
                for j in range(n_batches)
            ]
        )
    return models, batches


def tagger_runs(seeds, rank, layers=2, n_batches=4, vocab=11):
    """Taggers with ragged, padded batches whose lengths differ between runs and steps."""
    models, batches = [], []
    for s in seeds:
        models.append(
            TokenTagger(
                vocab, 3, d=4, n_layers=layers, rank=rank, head_dim=3, dtype=torch.float64, seed=s
            )
        )
        g = torch.Generator().manual_seed(200 + s)
        runs = []
        for j in range(n_batches):
            b, n = 3 + (j % 2), 2 + j
            ids = torch.randint(1, vocab, (b, n), generator=g)
            tags = torch.randint(0, 3, (b, n), generator=g)
            lengths = torch.randint(1, n + 1, (b,), generator=g)
            pad = torch.arange(n)[None] >= lengths[:, None]
            runs.append((ids.masked_fill(pad, 0), tags.masked_fill(pad, IGNORE)))
        batches.append(runs)
    return models, batches


def copies(models):
    return [copy.deepcopy(m) for m in models]


def manual_fit(model, batches, epochs, lr, seed, stop_after=None):
    """An independent serial loop: what fit and fit_stacked promise for one run."""
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    gen = torch.Generator().manual_seed(seed)
    losses = []
    for epoch in range(1, epochs + 1):
        total_loss, total = 0.0, 0
        for b in torch.randperm(len(batches), generator=gen).tolist():
            x, y = batches[b]
            logits = model(x)
            loss = nn.functional.cross_entropy(
                logits.reshape(-1, logits.shape[-1]),
                y.reshape(-1),
                ignore_index=IGNORE,
                reduction="sum",
            )
            n = int((y != IGNORE).sum())
            opt.zero_grad()
            (loss / n).backward()
            opt.step()
            total_loss, total = total_loss + float(loss.detach()), total + n
        losses.append(total_loss / total)
        if stop_after is not None and epoch == stop_after:
            break
    return losses, opt


def assert_same_state(model, opt, adam):
    for name, p in model.named_parameters():
        state = opt.state[p]
        assert adam[name]["step"] == float(state["step"])
        for key in ("exp_avg", "exp_avg_sq"):
            torch.testing.assert_close(adam[name][key], state[key], rtol=0, atol=TOL)


def test_a_sparse_tagger_is_refused():
    m = TokenTagger(11, 3, d=4, sparse_embedding=True, dtype=torch.float64)
    with pytest.raises(ValueError, match="sparse_embedding=False"):
        batched.stack([m])


def test_stacked_noise_runs_equal_noise_experiment_one_by_one(monkeypatch):
    """The batched noise grid of Chapter 5 gives each run noise_experiment's own result (a tiny
    synthetic dataset in place of the images; the experiment trains in float32, so the tolerance
    is float32's over two epochs)."""
    from lib.experiments import noise

    rng = np.random.default_rng(0)
    images = {
        split: (rng.integers(0, 256, (n, 28, 28), dtype=np.uint8), rng.integers(0, 10, n))
        for split, n in (("train", 40), ("test", 20))
    }
    monkeypatch.setattr(noise.runs.datasets, "load_mnist", lambda split: images[split])
    settings = dict(
        train_images=None,
        test_images=None,
        epochs=3,
        batch_size=16,
        lr=3e-3,
        d=8,
        qk_init=0.1,
        snapshots=[1, 3],
    )
    runs = [("label", 0.0, 0), ("label", 0.3, 1), ("input", 0.5, 2)]
    together = noise.noise_experiments("mnist", runs, **settings)
    for run, result in zip(runs, together, strict=True):
        alone = noise.noise_experiment("mnist", *run, **settings)
        assert result["batched"] == 3
        for key in (
            "w_k_spectral",
            "w_q_frobenius",
            "qk_spectral",
            "entropy",
            "train_acc",
            "test_acc",
        ):
            assert result[key] == pytest.approx(alone[key], rel=1e-4, abs=1e-6), key
            for epoch in ("1", "3"):  # the snapshots on the way agree too
                assert result["at"][epoch][key] == pytest.approx(
                    alone["at"][epoch][key], rel=1e-4, abs=1e-6
                ), (key, epoch)
        np.testing.assert_allclose(result["history"]["loss"], alone["history"]["loss"], rtol=1e-4)
        # the snapshot at the last epoch is the run's end; the one at epoch 1 is measured then
        assert result["at"]["3"]["w_k_frobenius"] == result["w_k_frobenius"]
        assert result["at"]["1"]["train_acc"] == result["history"]["train_acc"][0]
        assert result["at"]["1"]["w_k_frobenius"] != result["w_k_frobenius"]
    assert len({r["w_k_frobenius"] for r in together}) == 3
    assert isinstance(pd.DataFrame(together), pd.DataFrame)


def test_a_classifier_with_a_relu_head_is_not_stacked():
    from lib.batched import StackedPatchAttention
    from lib.models import PatchAttentionClassifier

    models = [
        PatchAttentionClassifier(image_size=4, patch=2, d=3, seed=s, head_width=4) for s in (0, 1)
    ]
    with pytest.raises(ValueError, match=r"models\[0\] has a ReLU head"):
        StackedPatchAttention(models)
