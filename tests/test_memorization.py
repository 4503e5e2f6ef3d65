"""lib.memorization and lib.attention.FeedForward: interpolation exact on unseen points, counts."""

import mpmath
import numpy as np
import pytest
import torch

from lib import data, memorization
from lib.attention import FeedForward


def test_interpolating_ffn_float64_on_unseen_points():
    rng = np.random.default_rng(11)
    z = rng.uniform(-5, 5, size=12)
    y = rng.normal(size=(12, 3))
    ffn = memorization.interpolating_ffn(z, y)
    assert ffn.width == 12 and ffn.d_in == 1 and ffn.d_out == 3
    out = ffn(torch.as_tensor(z)[:, None]).detach().numpy()
    np.testing.assert_allclose(out, y, atol=1e-10)


def test_interpolation_mp_exact_where_float64_fails():
    # ids 1e-30 apart: float64 cannot even tell them apart, mpmath interpolates exactly
    with mpmath.workdps(60):
        z = [mpmath.mpf(1), mpmath.mpf(1) + mpmath.mpf("1e-30"), mpmath.mpf(2)]
    out = memorization.interpolation_mp(z, [0.0, 1.0, 2.0], dps=60)
    assert out["max_error"] < mpmath.mpf("1e-25")
    assert out["max_coeff"] > 1e29  # the price: weights of order 1 / gap
    with pytest.raises(ValueError, match="repeated id"):
        memorization.interpolating_ffn([1.0, 1.0 + 1e-30, 2.0], [0.0, 1.0, 2.0])


def test_knots_and_validation():
    order, b = memorization.interpolation_knots([3.0, 1.0, 2.0])
    assert list(order) == [1, 2, 0]
    np.testing.assert_allclose(b, [0.0, 1.5, 2.5])
    for z, y, match in [([1.0, np.nan], [0, 1], "finite"), ([[1.0, 2.0]], [0, 1], "1-D"),
                        ([1.0, 2.0], [0, 1, 2], "shape")]:
        with pytest.raises(ValueError, match=match):
            memorization.interpolating_ffn(z, y)
    with pytest.raises(ValueError, match="non-empty"):
        memorization.interpolation_mp([], [])


def test_parameter_count_hand_computed():
    # s = d = 1, n = 3, N = 10: 4 * 2 + 1 * (60 + 1) = 69 (K&S Corollary 1, check C11 of Chapter 3)
    assert memorization.corollary1_parameter_count(3, 10, 1, 1) == 69
    assert memorization.corollary1_parameter_count(2, 5, 3, 2) == 4 * 5 + 3 * (20 + 3)
    with pytest.raises(ValueError, match="N must be >= 1"):
        memorization.corollary1_parameter_count(3, 0, 1, 1)


def test_feedforward_formula_and_validation():
    ffn = FeedForward(3, 4, residual=True, seed=2)
    Z = torch.randn(5, 3, dtype=torch.float64)
    W = ffn.weights()
    want = Z + torch.relu(Z @ W["W1"].T + W["b1"]) @ W["W2"].T + W["b2"]
    assert torch.allclose(ffn(Z), want)
    with pytest.raises(ValueError, match="d_out == d_in"):
        FeedForward(3, 4, d_out=2, residual=True)
    with pytest.raises(ValueError, match="shape"):
        ffn(torch.zeros(5, 2, dtype=torch.float64))
    with pytest.raises(ValueError, match="b1 must have shape"):
        ffn.set_weights(b1=np.zeros(3))
    with pytest.raises(ValueError, match="finite in torch.float32"):
        FeedForward(3, 4, dtype=torch.float32).set_weights(W1=np.full((4, 3), 1e300))


def test_memorizing_transformer_exact_on_unseen_data():
    from lib import contextual

    V = np.array([[0.5], [1.7], [-1.2], [3.0]])  # not a chapter vocabulary
    X = contextual.subset_sequences(V, 2)
    Y = np.random.default_rng(5).integers(0, 4, size=X.shape[:2])
    res = memorization.memorizing_transformer(X, Y)
    assert res["max_error"] < mpmath.mpf("1e-20")
    assert res["contexts"] == 12
    assert res["parameters_built"] == res["parameters_corollary"] == memorization.corollary1_parameter_count(2, 6, 1, 1)


def test_memorizing_transformer_consistency_and_permutations():
    X = np.array([[[1.0], [2.0]], [[2.0], [1.0]], [[1.0], [3.0]]])
    Y = np.array([[0, 1], [1, 0], [5, 7]])  # sequence 1 is a permutation of 0 with consistent labels
    res = memorization.memorizing_transformer(X, Y)
    assert res["contexts"] == 4 and res["max_error"] < mpmath.mpf("1e-20")
    with pytest.raises(ValueError, match="inconsistent labels"):
        memorization.memorizing_transformer(X, np.array([[0, 1], [0, 1], [5, 7]]))
    with pytest.raises(ValueError, match="duplicate token"):
        memorization.memorizing_transformer(np.array([[[1.0], [1.0]]]), np.array([[0, 1]]))
    with pytest.raises(ValueError, match="Y must have shape"):
        memorization.memorizing_transformer(X, np.zeros((2, 2)))


def test_ceilings_hand_computed():
    corpus = [(["a", "b", "a"], ["X", "Y", "Z"]), (["b", "a"], ["Y", "X"]), (["a", "b"], ["Z", "Y"])]
    # context-free: 'a' has X, Z, X, Z -> best 2 of 4; 'b' has Y, Y, Y -> 3 of 3: 5 / 7
    assert memorization.context_free_ceiling(corpus) == pytest.approx(5 / 7)
    # permutation classes: {a,a,b}: a -> X, Z (1 of 2), b -> Y (1); {a,b}: a -> X, Z (1 of 2), b -> Y, Y (2)
    assert memorization.permutation_ceiling(corpus) == pytest.approx((1 + 1 + 1 + 2) / 7)
    assert memorization.permutation_ceiling(corpus) >= memorization.context_free_ceiling(corpus)
    with pytest.raises(ValueError, match="non-empty list"):
        memorization.context_free_ceiling([])
    with pytest.raises(ValueError, match="equal, non-zero length"):
        memorization.permutation_ceiling([(["a"], ["X", "Y"])])


def test_conll_subset_is_a_seeded_sample_in_corpus_order():
    full = data.load_conll2003("validation")
    sub = memorization.conll_subset("validation", 50, seed=3)
    assert len(sub) == 50 and sub == memorization.conll_subset("validation", 50, seed=3)
    positions = [full.index(pair) for pair in sub]
    assert positions == sorted(positions)
    assert memorization.conll_subset("validation", None) == full
    with pytest.raises(ValueError, match="sentences"):
        memorization.conll_subset("validation", len(full) + 1)


def test_conll_experiment_memorizes_a_small_corpus():
    pairs = memorization.conll_subset("train", 40, seed=1)
    result = memorization.conll_experiment(pairs, pairs[:5], n_layers=1, rank=1, d_model=16, batch_size=8,
                                           lr=1e-2, epochs=25, eval_every=5)
    assert result["train_acc"] > memorization.context_free_ceiling(pairs) - 0.02
    assert result["train_acc"] <= memorization.permutation_ceiling(pairs) + 1e-12  # no model can beat it
    assert result["tokens"] == sum(len(t) for t, _ in pairs)
    assert list(result["history"].epoch) == list(range(1, 26))


def test_conll_run_full_mode_in_a_build_needs_make_full(monkeypatch, tmp_path):
    from lib import config

    monkeypatch.setenv("BOOK_ARTIFACTS", str(tmp_path))
    monkeypatch.setattr(config, "IN_BUILD", True)
    with pytest.raises(RuntimeError, match="make full"):
        memorization.conll_run(1, 1, mode="full")
    with pytest.raises(ValueError, match="mode must be one of"):
        memorization.conll_run(1, 1, mode="medium")
    with pytest.raises(ValueError, match="n_layers"):  # checked before the (missing) result is looked up
        memorization.conll_run(-5, 1, mode="full")


def test_knot_layer_hand_computed():
    layer = memorization.knot_layer([0.0, 1.0], [[1.0], [-1.0]], [0.5])   # 0.5 + relu(z) - relu(z - 1)
    np.testing.assert_allclose(memorization.scalar_outputs(layer, [-1.0, 0.25, 3.0])[:, 0], [0.5, 0.75, 1.5])
    with pytest.raises(ValueError, match="knots"):
        memorization.knot_layer([np.nan], [[1.0]], [0.0])


def test_knot_layer_hand_computed_and_refuses_complex_and_bool():
    ffn = memorization.knot_layer([0.0, 1.0], [[1.0], [-2.0]], [0.5])
    z = np.array([-1.0, 0.25, 1.0, 3.0])
    want = 0.5 + np.maximum(z, 0) - 2 * np.maximum(z - 1, 0)     # 0.5 + relu(z) - 2 relu(z - 1)
    np.testing.assert_allclose(memorization.scalar_outputs(ffn, z)[:, 0], want, rtol=0, atol=1e-15)
    for kwargs, match in [
        ({"coeffs": [[1.0], [-2.0 + 1j]]}, "coeffs must be a real array, not complex"),
        ({"coeffs": np.array([[True], [False]])}, "coeffs must be a real array, not bool"),
        ({"offset": [0.5j]}, "offset must be a real array, not complex"),
        ({"offset": np.array([True])}, "offset must be a real array, not bool"),
        ({"knots": torch.tensor([0.0, 1.0], dtype=torch.complex64)}, "knots must be a real array, not complex"),
        ({"coeffs": [[1.0, 2.0, 3.0]]}, r"coeffs must have shape \(2, k\)"),
        ({"offset": [0.5, 0.5]}, r"offset must have shape \(1,\)"),
    ]:
        args = {"knots": [0.0, 1.0], "coeffs": [[1.0], [-2.0]], "offset": [0.5]} | kwargs
        with pytest.raises(ValueError, match=match):
            memorization.knot_layer(**args)


def test_more_arguments_follow_the_rule():
    with pytest.raises(ValueError, match="base must be finite, got nan"):
        memorization.interpolation_price([0.1], [0.0, 1.0], base=float("nan"))
    with pytest.raises(ValueError, match="base must be a real number, got True"):
        memorization.interpolation_price([0.1], [0.0, 1.0], base=True)
    X = np.array([[[1.0], [2.0]], [[1.0], [3.0]]])
    with pytest.raises(ValueError, match="directions must be <= 100000"):
        memorization.memorizing_transformer(X, np.zeros((2, 2)), directions=10**18)
    with pytest.raises(ValueError, match="dps must be <= 100000"):
        memorization.memorizing_transformer(X, np.zeros((2, 2)), dps=10**6)
    with pytest.raises(ValueError, match="Y must be a real array, not bool"):
        memorization.memorizing_transformer(X, np.zeros((2, 2), dtype=bool))


def test_scalar_outputs_checks_the_layer():
    with pytest.raises(ValueError, match="ffn must be a lib.attention.FeedForward with d_in = 1"):
        memorization.scalar_outputs(FeedForward(2, 3), [0.0, 1.0])
    with pytest.raises(ValueError, match="ffn must be"):
        memorization.scalar_outputs(None, [0.0])
