"""lib.models: the token tagger (padding, equivariance, rank, validation) and the patch
classifier of the noise experiment."""

import numpy as np
import pytest
import torch
from test_training_loop import _model, toy_batches

from lib import training
from lib.models import TokenTagger
from lib.training import scoring


def test_patch_classifier_patches_shapes_and_norms():
    from lib.models import PatchAttentionClassifier

    model = PatchAttentionClassifier(image_size=4, patch=2, d=3, n_classes=2, seed=0)
    img = torch.arange(16, dtype=torch.float32).reshape(1, 4, 4)
    # patches in row-major order, pixels row-major inside each patch
    np.testing.assert_array_equal(
        model.patches(img)[0].numpy(),
        [[0, 1, 4, 5], [2, 3, 6, 7], [8, 9, 12, 13], [10, 11, 14, 15]],
    )
    assert model(img).shape == (1, 2)
    colour = PatchAttentionClassifier(image_size=4, patch=2, channels=3, d=3, n_classes=2)
    assert colour(torch.zeros(5, 4, 4, 3)).shape == (5, 2)
    W_K = torch.tensor([[3.0, 0, 0], [0, 4.0, 0], [0, 0, 0]])
    model.attn.set_weights(W_K=W_K)
    norms = model.attention_norms()
    assert norms["w_k_spectral"] == pytest.approx(4.0) and norms["w_k_frobenius"] == pytest.approx(
        5.0
    )
    # qk_init scales the initial W_Q and W_K only
    small = PatchAttentionClassifier(image_size=4, patch=2, d=3, n_classes=2, qk_init=0.1, seed=0)
    big = PatchAttentionClassifier(image_size=4, patch=2, d=3, n_classes=2, seed=0)
    assert small.attention_norms()["w_q_frobenius"] == pytest.approx(
        0.1 * big.attention_norms()["w_q_frobenius"], rel=1e-5
    )
    torch.testing.assert_close(small.attn.W_V, big.attn.W_V)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"image_size": 28, "patch": 5}, "multiple of patch"),
        ({"qk_init": 0.0}, "qk_init must be >= 1e-06"),
        ({"qk_init": 1e39}, "qk_init must be <= 1000000"),
        ({"n_classes": 1}, "n_classes must be >= 2"),
    ],
)
def test_patch_classifier_bad_arguments(kwargs, match):
    from lib.models import PatchAttentionClassifier

    with pytest.raises(ValueError, match=match):
        PatchAttentionClassifier(**kwargs)


def test_patch_classifier_bad_images():
    from lib.models import PatchAttentionClassifier

    model = PatchAttentionClassifier()
    with pytest.raises(ValueError, match="images must have shape"):
        model(torch.zeros(2, 27, 28))
    with pytest.raises(ValueError, match="images must be a torch.float32"):
        model(torch.zeros(2, 28, 28, dtype=torch.float64))
    with pytest.raises(ValueError, match="images must be finite"):
        model(torch.full((1, 28, 28), float("nan")))


def test_patch_classifier_entropy_bounds_and_controls():
    from lib.models import PatchAttentionClassifier

    model = PatchAttentionClassifier(image_size=4, patch=2, d=3, n_classes=2, seed=0)
    img = torch.rand(3, 4, 4)
    model.attn.set_weights(W_Q=np.zeros((3, 3)))  # all scores 0: uniform attention
    assert model.attention_entropy(img) == pytest.approx(np.log(4))
    model.attn.set_weights(W_Q=np.eye(3), W_K=np.diag([2.0, 0.0, 0.0]))
    assert 0 <= model.attention_entropy(img) <= np.log(4)
    norms = model.attention_norms()
    assert norms["qk_spectral"] == pytest.approx(2.0)
    assert norms["w_v_frobenius"] == pytest.approx(
        float(torch.linalg.matrix_norm(model.attn.W_V.detach().double()))
    )


def test_patch_classifier_relu_head_is_the_linear_model_plus_a_hidden_layer():
    """With ``head_width`` the logits are W2 relu(W1 pooled + b1) + b2 of the same pooled
    attention output (computed here by hand), the parameter count adds (d + 1) h and the head
    takes h inputs; without it the model is unchanged (same draws, same logits)."""
    from lib.models import PatchAttentionClassifier

    kw = dict(image_size=4, patch=2, d=3, n_classes=2, seed=0, dtype=torch.float64)
    plain, wide = PatchAttentionClassifier(**kw), PatchAttentionClassifier(**kw, head_width=5)
    images = torch.rand(7, 4, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    x = wide.patches(images)
    z = torch.nn.functional.linear(x, wide.embed_weight, wide.embed_bias) + wide.position
    pooled = wide.attn(z).mean(dim=1)
    hidden = torch.relu(pooled @ wide.hidden_weight.T + wide.hidden_bias)
    expected = hidden @ wide.head_weight.T + wide.head_bias
    torch.testing.assert_close(wide(images), expected, rtol=0, atol=1e-14)
    count = lambda m: sum(p.numel() for p in m.parameters())  # noqa: E731
    assert count(wide) - count(plain) == 5 * (3 + 1) + 2 * (5 - 3)
    torch.testing.assert_close(wide.embed_weight, plain.embed_weight, rtol=0, atol=0)
    assert "head_width=5" in repr(wide) and "head_width" not in repr(plain)
    with pytest.raises(ValueError, match="head_width"):
        PatchAttentionClassifier(**kw, head_width=0)


def test_padding_changes_nothing():
    """A sentence alone and the same sentence padded beside a longer one: same logits, same loss."""
    torch.manual_seed(0)
    model = TokenTagger(20, 5, d=8, n_layers=2, rank=1, dtype=torch.float64, seed=1)
    short, long = torch.tensor([[3, 7, 4]]), torch.tensor([[5, 6, 8, 9, 10, 11]])
    batch = torch.cat([torch.cat([short, torch.zeros(1, 3, dtype=torch.int64)], 1), long])
    alone, padded = model(short), model(batch)
    torch.testing.assert_close(padded[0, :3], alone[0], rtol=0, atol=1e-13)
    torch.testing.assert_close(padded[1], model(long)[0], rtol=0, atol=1e-13)
    tags = torch.tensor([[1, 2, 0]])
    loss_alone, *_ = scoring.counts(alone, tags)
    loss_padded, *_ = scoring.counts(
        padded[:1], torch.cat([tags, torch.full((1, 3), training.IGNORE)], 1)
    )
    torch.testing.assert_close(loss_padded, loss_alone, rtol=0, atol=1e-12)


def test_permutation_equivariance_and_rank():
    model = TokenTagger(30, 4, d=12, n_layers=3, rank=1, dtype=torch.float64, seed=2)
    ids = torch.tensor([[4, 9, 2, 17, 5]])
    perm = torch.tensor([3, 0, 4, 1, 2])
    torch.testing.assert_close(model(ids[:, perm]), model(ids)[:, perm], rtol=0, atol=1e-12)
    for layer in model.attn:
        for W in layer.weights().values():
            assert torch.linalg.matrix_rank(W) == 1
    full = TokenTagger(30, 4, d=12, n_layers=1, rank=None, seed=2)
    assert torch.linalg.matrix_rank(full.attn[0].weights()["W_Q"]) == 12


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: TokenTagger(1, 3), "vocab_size"),
        (lambda: TokenTagger(10, 3, d=0), "d must be"),
        (lambda: TokenTagger(10, 3, d=4, rank=5), "rank"),
        (lambda: TokenTagger(10, 3, pad_id=10), "pad_id"),
        (lambda: TokenTagger(10, 3, dtype=torch.int32), "dtype"),
        (lambda: _model()(torch.tensor([[1.0, 2.0]])), "int64"),
        (lambda: _model()(torch.tensor([1, 2])), r"shape \(batch, n\)"),
        (lambda: _model()(torch.tensor([[1, 12]])), r"\[0, 10\)"),
        (lambda: _model()(torch.tensor([[0, 0]])), "every token"),
    ],
)
def test_value_errors(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_diverging_loss_is_reported():
    vocab, batches = toy_batches()
    model = TokenTagger(len(vocab), 9, d=8, seed=0)
    with torch.no_grad():
        model.head.weight.fill_(float("nan"))
    with pytest.raises(ValueError, match="logits overflow torch.float32 or are NaN"):
        training.fit(model, batches, epochs=2)
