"""The model the OpenReview reviewers describe (Chapter 3): the tied head of size 1, plain SGD,
Theorem 2's projection for a large vocabulary, and the corpus's repeated tokens."""

import math

import numpy as np
import pytest
import torch

from lib import boltzmann, contextual, lemma1, separation, training
from lib.experiments import conll
from lib.feedforward import FeedForward
from lib.layers import SelfAttention, TiedSelfAttention
from lib.models import TokenTagger
from lib.training import loop


def tied_direct(X, w, u, gamma, mask=None):
    """X + softmax(gamma (X w)(X w)^T) (X w) u^T, written out with numpy, one query at a time."""
    X = np.asarray(X, dtype=float)
    p = X @ w
    out = X.copy()
    for q in range(len(X)):
        s = gamma * p[q] * p
        if mask is not None:
            s = np.where(mask, -np.inf, s)
        a = np.exp(s - s.max())
        out[q] += (a @ p) / a.sum() * u
    return out


@pytest.mark.parametrize("gamma", [1.0, 7.5])
def test_tied_layer_is_the_written_formula_and_a_dense_head_of_size_one(gamma):
    torch.manual_seed(0)
    layer = TiedSelfAttention(5, seed=3, gamma=gamma)
    X = torch.randn(6, 5, dtype=torch.float64)
    mask = torch.tensor([False, False, True, False, False, True])
    w, u = layer.w.detach().numpy(), layer.W_O.detach().numpy()[:, 0]
    np.testing.assert_allclose(
        layer(X, mask).detach().numpy(), tied_direct(X.numpy(), w, u, gamma, mask.numpy()),
        rtol=0, atol=1e-12,
    )  # fmt: skip
    dense = SelfAttention(5, head_dim=1, dtype=torch.float64).set_weights(**layer.weights())
    torch.testing.assert_close(layer(X, mask), dense(X, mask), rtol=0, atol=1e-12)
    W = layer.weights()  # tied: one projection for Q, K and V
    assert torch.equal(W["W_Q"], W["W_K"]) and torch.equal(W["W_K"], W["W_V"])
    assert W["W_Q"].shape == (1, 5) and W["W_O"].shape == (5, 1)


def test_tied_attention_is_the_boltzmann_operator_over_the_query_projection():
    layer = TiedSelfAttention(4, seed=1)
    X = torch.randn(7, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(2))
    p = (X @ layer.w).detach().numpy()
    u = layer.W_O.detach().numpy()[:, 0]
    delta = (layer(X) - X).detach().numpy()
    for q in range(7):  # x_q + u boltz(p_q p) / p_q, K&S Theorem 2 proof
        expected = boltzmann.boltz(p[q] * p) / p[q]
        np.testing.assert_allclose(delta[q], expected * u, rtol=1e-12, atol=1e-14)


def test_a_fixed_projection_is_not_trained():
    layer = TiedSelfAttention(3, fixed_projection=[1.0, 2.0, 2.0], gamma=4.0)
    assert [n for n, _ in layer.named_parameters()] == ["W_O"]
    layer(torch.randn(4, 3, dtype=torch.float64)).sum().backward()
    assert layer.W_O.grad is not None and "w" in dict(layer.named_buffers())
    with pytest.raises(ValueError, match="fixed_projection must be a finite, non-zero"):
        TiedSelfAttention(3, fixed_projection=[0.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="gamma"):
        TiedSelfAttention(3, gamma=0.0)


def test_tied_tagger_counts_its_parameters_and_refuses_mixed_settings():
    m = TokenTagger(50, 9, d=8, n_layers=2, tied=True)
    # embeddings, per block w and u (2 d) and the FFN (d -> 4d -> d), the head
    expected = 50 * 8 + 2 * (2 * 8 + FeedForward.parameter_count(8, 32, 8)) + 9 * 8 + 9
    assert sum(p.numel() for p in m.parameters()) == expected
    assert all(isinstance(a, TiedSelfAttention) for a in m.attn)
    with pytest.raises(ValueError, match="tied attention has head size 1 and rank 1"):
        TokenTagger(50, 9, d=8, tied=True, rank=2)
    with pytest.raises(ValueError, match="tied attention has head size 1 and rank 1"):
        TokenTagger(50, 9, d=8, tied=True, head_dim=4)
    with pytest.raises(ValueError, match="fixed_projection needs tied=True"):
        TokenTagger(50, 9, d=8, fixed_projection=np.ones(8))


def _toy_batches(seed=0):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(1, 30, (3, 4, 6), generator=g)
    ids[:, 0, 4:] = 0
    tags = torch.randint(0, 5, (3, 4, 6), generator=g)
    tags[ids == 0] = training.IGNORE
    return [(ids[i], tags[i]) for i in range(3)]


def test_sgd_is_plain_gradient_descent_and_sparse_rows_change_nothing():
    batches = _toy_batches()
    kw = dict(vocab_size=30, n_tags=5, d=6, tied=True, dtype=torch.float64, seed=4)
    dense, sparse, manual = (TokenTagger(**kw), TokenTagger(**kw, sparse_embedding=True),
                             TokenTagger(**kw))  # fmt: skip
    training.fit(dense, batches, epochs=2, lr=0.2, optimizer="sgd", seed=1, progress=False)
    training.fit(sparse, batches, epochs=2, lr=0.2, optimizer="sgd", seed=1, progress=False)
    gen = torch.Generator().manual_seed(1)  # fit's batch order, drawn as fit draws it
    for _ in range(2):
        for b in torch.randperm(3, generator=gen).tolist():
            x, y = batches[b]
            logits = manual(x)
            loss = torch.nn.functional.cross_entropy(
                logits.reshape(-1, 5), y.reshape(-1), ignore_index=training.IGNORE
            )
            grads = torch.autograd.grad(loss, list(manual.parameters()))
            with torch.no_grad():
                for p, g in zip(manual.parameters(), grads, strict=True):
                    p -= 0.2 * g
    for a, b, c in zip(dense.parameters(), sparse.parameters(), manual.parameters(), strict=True):
        torch.testing.assert_close(a, c, rtol=0, atol=1e-12)
        torch.testing.assert_close(b, c, rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match="optimizer must be one of"):
        training.fit(dense, batches, epochs=1, optimizer="rmsprop", progress=False)


def test_theorem2_projection_in_blocks_equals_the_pairwise_construction():
    rng = np.random.default_rng(5)
    V = rng.normal(size=(240, 4)) * rng.uniform(0.3, 4.0, size=(240, 1))
    got = contextual.theorem2_projection(V, 12, seed=2, chunk=17)  # blocks that do not divide K
    strict = separation.strict_constants(V)
    for name in ("r_min", "r_max", "eps"):
        assert math.isclose(got[name], strict[name], rel_tol=1e-10)
    assert math.isclose(got["c_w"], separation.projection_constant(got["w"], V), rel_tol=1e-9)
    layer = contextual.RankOneAttention(V, 12, w=got["w"])
    assert math.isclose(got["gamma"], layer.gamma, rel_tol=1e-8)
    assert math.isclose(np.linalg.norm(got["w"]), 1.0, rel_tol=1e-15)


@pytest.mark.parametrize(
    "vocab, n, match",
    [
        (np.vstack([np.ones((1, 3)), np.zeros((1, 3))]), 5, "zero token"),
        (np.ones((3, 3)), 5, "too close|equal tokens"),
        (np.eye(3), 1, "n must be"),
        (np.ones(3), 5, "vocab must have"),
    ],
)
def test_theorem2_projection_refuses(vocab, n, match):
    with pytest.raises(ValueError, match=match):
        contextual.theorem2_projection(vocab, n)


def test_repeat_share_counts_sentences_with_a_repeated_token():
    pairs = [(["a", "b", "a"], ["O"] * 3), (["a", "b"], ["O"] * 2), (["c", "c"], ["O"] * 2),
             (["d"], ["O"])]  # fmt: skip
    assert conll.repeat_share(pairs) == 2 / 4


def test_run_names_and_settings_of_the_configurations():
    assert conll.conll_run_settings(1, 1, "full")[0] == "layers-1-rank-1"
    name, s = conll.conll_run_settings(3, 1, "full", seed=2)
    assert name == "layers-3-rank-1-seed-2" and s["seed"] == 2
    name, s = conll.conll_run_settings(1, 1, "full", seed=1, kind="described")
    assert name == "described-seed-1" and s["tied"] and s["optimizer"] == "sgd"
    assert s["epochs"] == 800 and "stop" not in s  # the summaries' epochs, no stop rule
    name, s = conll.conll_run_settings(1, 1, "full", kind="described-fixed")
    assert name == "described-fixed-seed-0" and s["fixed_projection"] == "theorem2"
    with pytest.raises(ValueError, match="the described model has one rank-1 layer"):
        conll.conll_run_settings(3, 1, "full", kind="described")
    with pytest.raises(ValueError, match="kind must be one of"):
        conll.conll_run_settings(1, 1, "full", kind="tied")


def test_fixed_projection_run_holds_the_construction():
    pairs = conll.conll_subset("train", 40, seed=3)
    out = conll.conll_experiment(
        pairs, pairs[:10], n_layers=1, rank=1, d=8, batch_size=8, lr=0.1, epochs=1,
        eval_every=1, tied=True, optimizer="sgd", fixed_projection="theorem2", seed=3,
    )  # fmt: skip
    c = out.construction
    assert c["gamma"] == pytest.approx(
        lemma1.lemma1_gap(c["n"]) / (c["c_w"] ** 2 * c["r_min"] * c["eps"]), rel=1e-12
    )
    assert c["n"] == max(len(t) for t, _ in pairs)
    with pytest.raises(ValueError, match="fixed_projection needs tied=True"):
        conll.conll_experiment(
            pairs, pairs, n_layers=1, rank=1, d=8, batch_size=8, lr=0.1, epochs=1, eval_every=1,
            fixed_projection="theorem2",
        )  # fmt: skip


def test_clipping_sparse_gradients_is_torchs_clipping_of_the_dense_ones(monkeypatch):
    batches = _toy_batches(1)
    kw = dict(vocab_size=30, n_tags=5, d=6, tied=True, dtype=torch.float64, seed=2)
    sparse, dense, ref = (TokenTagger(**kw, sparse_embedding=True), TokenTagger(**kw),
                          TokenTagger(**kw))  # fmt: skip
    fit = dict(epochs=2, lr=0.5, optimizer="sgd", clip_norm=0.3, seed=0, progress=False)
    training.fit(sparse, batches, **fit)
    training.fit(dense, batches, **fit)
    monkeypatch.setattr(loop, "clip_gradients", torch.nn.utils.clip_grad_norm_)  # fit's step
    training.fit(ref, batches, **fit)
    moved = False
    for a, b, c, p0 in zip(sparse.parameters(), dense.parameters(), ref.parameters(),
                           TokenTagger(**kw).parameters(), strict=True):  # fmt: skip
        torch.testing.assert_close(a, c, rtol=0, atol=1e-12)
        torch.testing.assert_close(b, c, rtol=0, atol=1e-12)
        moved |= not torch.equal(c, p0)
    assert moved
    with pytest.raises(ValueError, match="clip_norm"):
        training.fit(dense, batches, epochs=1, clip_norm=0.0, progress=False)


def test_an_overflow_in_training_names_its_epoch():
    batches = _toy_batches(2)
    model = TokenTagger(30, 5, d=6, tied=True, dtype=torch.float64, seed=0)
    with torch.no_grad():
        model.attn[0].w.mul_(1e160)  # the scores (w.x)^2 overflow float64
    with pytest.raises(ValueError, match=r"in epoch 1 of training: the attention scores overflow"):
        training.fit(model, batches, epochs=1, optimizer="sgd", progress=False)
