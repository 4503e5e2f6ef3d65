"""lib.training.optimizers: the falling rate, SGD with momentum and sparse embedding updates."""

import numpy as np
import pytest
import torch
from test_training_loop import toy_batches

from lib import datasets, training
from lib.models import TokenTagger
from lib.training import scoring


def test_linear_learning_rate_decay():
    vocab, batches = toy_batches()
    model = TokenTagger(len(vocab), 9, d=8, seed=0)
    history = training.fit(model, batches, epochs=5, lr=1e-2, final_lr=2e-3)
    np.testing.assert_allclose(history["lr"], [1e-2, 8e-3, 6e-3, 4e-3, 2e-3], rtol=1e-12)


def test_sparse_embedding_updates_only_the_rows_of_the_batch():
    vocab, batches = toy_batches(batch_size=1)
    model = TokenTagger(len(vocab), 9, d=8, seed=0, sparse_embedding=True)
    before = model.embed.weight.detach().clone()
    training.fit(model, batches[:1], epochs=1, lr=1e-2)
    seen = set(batches[0][0].flatten().tolist())
    changed = (model.embed.weight.detach() != before).any(dim=1)
    assert {i for i in range(len(vocab)) if changed[i]} == seen - {datasets.PAD}
    with pytest.raises(ValueError, match="sparse_embedding must be True or False"):
        TokenTagger(10, 3, sparse_embedding="yes")


def test_momentum_and_cosine_schedule_match_torch():
    """SGD with momentum 0.9 and a cosine fall from 0.1 to 0.001 over 5 epochs: the history's
    rates are the closed form lr_min + (lr - lr_min)(1 + cos(pi t / 4)) / 2, and the weights are
    those of torch.optim.SGD driven by hand over the same batch order."""
    vocab, batches = toy_batches(batch_size=1)

    def model():
        return TokenTagger(len(vocab), 9, d=8, n_layers=1, rank=1, seed=5, dtype=torch.float64)

    trained = model()
    history = training.fit(
        trained, batches, epochs=5, lr=0.1, final_lr=1e-3, seed=2, optimizer="sgd",
        momentum=0.9, schedule="cosine",
    )  # fmt: skip
    t = np.arange(5)
    expected = 1e-3 + (0.1 - 1e-3) * (1 + np.cos(np.pi * t / 4)) / 2
    np.testing.assert_allclose(history["lr"].to_numpy(), expected, rtol=1e-12)
    ref = model()
    opt = torch.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
    gen = torch.Generator().manual_seed(2)
    for epoch in range(5):
        for group in opt.param_groups:
            group["lr"] = float(expected[epoch])
        for b in torch.randperm(len(batches), generator=gen).tolist():
            x, y = batches[b]
            loss, _, n = scoring.counts(ref(x), y)
            opt.zero_grad()
            (loss / n).backward()
            opt.step()
    for a, b in zip(trained.parameters(), ref.parameters(), strict=True):
        torch.testing.assert_close(a, b, rtol=1e-10, atol=1e-12)
    with pytest.raises(ValueError, match="momentum must lie in"):
        training.fit(model(), batches, epochs=1, momentum=0.9)  # Adam
    with pytest.raises(ValueError, match="momentum must lie in"):
        training.fit(model(), batches, epochs=1, optimizer="sgd", momentum=1.0)
    with pytest.raises(ValueError, match="schedule"):
        training.fit(model(), batches, epochs=1, schedule="step")
