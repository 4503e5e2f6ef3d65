"""lib.layers.SelfAttention against a direct formula, ranks, hardmax ties, masking, validation."""

import numpy as np
import pytest
import torch
from oracles import direct

from lib.cross_attention import CrossAttention
from lib.feedforward import FeedForward
from lib.layers import SelfAttention
from lib.models import PatchAttentionClassifier, TokenTagger


@pytest.mark.parametrize("dtype, tol", [(torch.float64, 1e-12), (torch.float32, 1e-5)])
@pytest.mark.parametrize("head_dim, rank", [(1, None), (3, None), (3, 1), (4, 2)])
def test_matches_direct_formula(dtype, tol, head_dim, rank):
    layer = SelfAttention(5, head_dim=head_dim, rank=rank, dtype=dtype, seed=3)
    X = torch.randn(2, 6, 5, generator=torch.Generator().manual_seed(1), dtype=torch.float64).to(
        dtype
    )
    W = {k: v.double().numpy() for k, v in layer.weights().items()}
    out = layer(X).detach().double().numpy()
    for b in range(2):
        np.testing.assert_allclose(out[b], direct(X[b].double().numpy(), W), rtol=tol, atol=tol)
    assert out.dtype == np.float64 and layer(X).dtype == dtype


def test_rank_factorisation_and_set_weights():
    layer = SelfAttention(4, head_dim=3, rank=1)
    for W in layer.weights().values():
        assert torch.linalg.matrix_rank(W) <= 1
    two = SelfAttention(5, head_dim=4, rank=2, seed=9)
    assert all(torch.linalg.matrix_rank(W) == 2 for W in two.weights().values())
    full = torch.randn(4, 5, dtype=torch.float64)
    with pytest.raises(ValueError, match="rank above 2"):
        two.set_weights(W_V=full)
    low = full[:, :2] @ torch.randn(2, 5, dtype=torch.float64)
    two.set_weights(W_V=low)
    assert torch.allclose(two.weights()["W_V"], low, atol=1e-10)
    u, v = torch.randn(3, 1, dtype=torch.float64), torch.randn(1, 4, dtype=torch.float64)
    layer.set_weights(W_Q=u @ v)
    assert torch.allclose(layer.weights()["W_Q"], u @ v, atol=1e-12)
    with pytest.raises(ValueError, match="rank above 1"):
        layer.set_weights(W_K=torch.eye(3, 4, dtype=torch.float64))
    with pytest.raises(ValueError, match="shape"):
        layer.set_weights(W_O=torch.zeros(3, 4))
    with pytest.raises(ValueError, match="weight name"):
        layer.set_weights(W_X=torch.zeros(3, 4))
    dense = SelfAttention(4, head_dim=3)
    dense.set_weights(W_K=torch.eye(3, 4))
    assert torch.equal(dense.weights()["W_K"], torch.eye(3, 4, dtype=torch.float64))


def test_hardmax_averages_ties_and_no_residual():
    layer = SelfAttention(2, head_dim=1, normalizer="hardmax", residual=False)
    layer.set_weights(
        W_Q=torch.zeros(1, 2),
        W_K=torch.ones(1, 2),
        W_V=torch.tensor([[1.0, 0.0]]),
        W_O=torch.tensor([[1.0], [0.0]]),
    )
    X = torch.tensor([[1.0, 0.0], [2.0, 0.0], [6.0, 0.0]], dtype=torch.float64)
    out = layer(X)  # all scores 0: every query averages the values 1, 2, 6
    assert torch.allclose(out[:, 0], torch.full((3,), 3.0, dtype=torch.float64))
    att = layer.attention(X)
    assert torch.allclose(att.sum(-1), torch.ones(3, dtype=torch.float64))


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"d": 0}, "d must be >= 1"),
        ({"d": 3, "rank": 2}, "rank must be <= 1"),
        ({"d": 3, "normalizer": "sparsemax"}, "normalizer"),
        ({"d": 3, "dtype": torch.float16}, "dtype"),
        ({"d": 3, "residual": 1}, "residual must be True or False"),
    ],
)
def test_constructor_validation(kwargs, match):
    with pytest.raises(ValueError, match=match):
        SelfAttention(**kwargs)


def test_forward_validation():
    layer = SelfAttention(3)
    with pytest.raises(ValueError, match="shape"):
        layer(torch.zeros(4, 2, dtype=torch.float64))
    with pytest.raises(ValueError, match="dtype"):
        layer(torch.zeros(4, 3, dtype=torch.float32))
    with pytest.raises(ValueError, match="finite"):
        layer(torch.full((4, 3), float("nan"), dtype=torch.float64))
    with pytest.raises(ValueError, match="torch tensor"):
        layer(np.zeros((4, 3)))


def test_overflow_and_bad_weights_raise():
    layer = SelfAttention(3, head_dim=2)
    X = torch.tensor([[1e160, -2e160, 3e159], [-1e160, 5e159, 1e160]], dtype=torch.float64)
    with pytest.raises(ValueError, match="overflow"):
        layer(X)
    before = layer.weights()["W_Q"]
    with pytest.raises(ValueError, match="W_K must have shape"):
        layer.set_weights(W_Q=torch.zeros(2, 3), W_K=torch.zeros(3, 3))
    assert torch.equal(layer.weights()["W_Q"], before)  # nothing changed: all-or-nothing
    small = SelfAttention(3, head_dim=2, dtype=torch.float32)
    with pytest.raises(ValueError, match="does not fit in torch.float32"):
        small.set_weights(W_Q=np.full((2, 3), 1e300))
    for bad, match in [(np.ones((2, 3)) * (1 + 1j), "real"), ("abc", "real"), (None, "real")]:
        with pytest.raises(ValueError, match=match):
            layer.set_weights(W_Q=bad)
    with torch.no_grad():
        layer.W_V[0, 0] = float("nan")
    with pytest.raises(ValueError, match="W_V is not finite"):
        layer(torch.ones(2, 3, dtype=torch.float64))


def test_set_weights_accepts_bfloat16_tensors():
    from lib.cross_attention import CrossAttention

    layer = CrossAttention(2, 2, head_dim=2).set_weights(W_Q=torch.ones(2, 2, dtype=torch.bfloat16))
    np.testing.assert_allclose(layer.weights()["W_Q"].numpy(), np.ones((2, 2)))


@pytest.mark.parametrize(
    "build, count",
    [
        (lambda: SelfAttention(10**18), 4 * 10**18),
        (
            lambda: SelfAttention(10**5, head_dim=10**4, rank=1),
            4 * (10**5 + 10**4),
        ),  # within: factors only
        (lambda: CrossAttention(10**9, 3), 10**9 + 2 * 3 + 10**9),
        (lambda: FeedForward(10**6, 10**6), 10**12 + 10**6 + 10**12 + 10**6),
        (lambda: TokenTagger(10**9, 5, d=8), None),
        (lambda: PatchAttentionClassifier(image_size=10**6, patch=1), None),
    ],
)
def test_layers_count_their_parameters_before_allocating(build, count):
    from lib import layers

    if count is not None and count <= layers.MAX_PARAMETERS:
        assert sum(p.numel() for p in build().parameters()) == count
        return
    with pytest.raises(
        ValueError, match="number of parameters would be .*MAX_PARAMETERS = 134,217,728"
    ):
        build()


def test_parameter_limit_is_inclusive(monkeypatch):
    from lib import layers

    n = FeedForward.parameter_count(3, 5, 2)
    assert n == sum(p.numel() for p in FeedForward(3, 5, 2).parameters()) == 5 * 3 + 5 + 2 * 5 + 2
    tagger = sum(p.numel() for p in TokenTagger(7, 3, d=4).parameters())
    patch = sum(
        p.numel() for p in PatchAttentionClassifier(image_size=8, patch=4, d=4).parameters()
    )
    monkeypatch.setattr(layers, "MAX_PARAMETERS", n)
    FeedForward(3, 5, 2)
    with pytest.raises(ValueError, match=f"MAX_PARAMETERS = {n}"):
        FeedForward(3, 6, 2)
    monkeypatch.setattr(layers, "MAX_PARAMETERS", tagger)
    TokenTagger(7, 3, d=4)
    with pytest.raises(ValueError, match="MAX_PARAMETERS"):
        TokenTagger(8, 3, d=4)
    monkeypatch.setattr(layers, "MAX_PARAMETERS", patch)
    PatchAttentionClassifier(image_size=8, patch=4, d=4)
    with pytest.raises(ValueError, match="MAX_PARAMETERS"):
        PatchAttentionClassifier(image_size=8, patch=4, d=4, n_classes=11)


@pytest.mark.parametrize(
    "value, match",
    [
        (np.ones((1, 2), dtype=bool), "W_Q must be a real array, not bool"),
        (torch.ones(1, 2, dtype=torch.bool), "W_Q must be a real array, not bool"),
        (np.ones((1, 2)) * 1j, "W_Q must be a real array, not complex"),
        (torch.ones(1, 2, dtype=torch.complex128), "W_Q must be a real array, not complex"),
        ([["a", "b"]], "W_Q must be a real array"),
    ],
)
def test_set_weights_refuses_bool_and_complex(value, match):
    with pytest.raises(ValueError, match=match):
        SelfAttention(2).set_weights(W_Q=value)
    with pytest.raises(ValueError, match=match.replace("W_Q", "W1")):
        FeedForward(2, 1).set_weights(W1=value)


def test_masked_attention_equals_attention_on_the_unpadded_prefix():
    layer = SelfAttention(4, head_dim=3, rank=1, seed=5)
    X = torch.randn(1, 6, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    mask = torch.tensor([[False, False, False, False, True, True]])
    torch.testing.assert_close(layer(X, mask)[:, :4], layer(X[:, :4]), rtol=0, atol=1e-14)
    assert torch.all(layer.attention(X, mask)[..., 4:] == 0)


@pytest.mark.parametrize(
    "call, match",
    [
        (
            lambda: SelfAttention(3)(torch.ones(1, 2, 3, dtype=torch.float64), torch.ones(1, 2)),
            "bool",
        ),
        (
            lambda: SelfAttention(3)(
                torch.ones(1, 2, 3, dtype=torch.float64), torch.zeros(1, 3, dtype=torch.bool)
            ),
            "shape",
        ),
    ],
)
def test_value_errors(call, match):
    with pytest.raises(ValueError, match=match):
        call()
