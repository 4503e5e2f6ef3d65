"""lib.context_ids: the exact context ids of every subset sequence, and how their order moves
with gamma."""

import math

import mpmath
import numpy as np
import pytest
import torch

from lib import context_ids, contextual, hardmax, separation


def test_context_ids_result():
    V = np.array([[0.5], [1.7], [-1.2], [3.0]])
    res = context_ids.context_ids(V, 2, w=[1.0])
    assert len(res.ids) == 12 and res.log10_gap > res.delta.construction
    small = context_ids.context_ids(V, 2, w=[1.0], gamma=0.05)
    assert small.gap > res.gap  # a cooler layer separates these contexts more
    with pytest.raises(ValueError, match="digits_beyond"):
        context_ids.context_ids(V, 2, digits_beyond=3)


def test_enumerations_are_sized_before_they_start(monkeypatch):
    vocab = np.arange(1.0, 41.0)[:, None]  # 40 tokens
    with pytest.raises(
        ValueError,
        match=r"binom\(40, 20\) \* 20 \* 1 would be 2,756,930,576,400.*MAX_SEQUENCE_ENTRIES",
    ):
        context_ids.subset_sequences(vocab, 20)
    with pytest.raises(ValueError, match=r"pairs of the binom\(40, 20\) \* 20 ids.*MAX_PAIRS"):
        context_ids.context_ids(vocab, 20, w=[1.0])
    with pytest.raises(ValueError, match="draws must be <= 100000"):
        hardmax.hardmax_trials(hardmax.hardmax_counterexample([1.0]), draws=10**18)
    with pytest.raises(ValueError, match="draws must be <= 100000"):
        separation.best_direction(vocab, draws=10**18)
    # the limits are inclusive: binom(5, 3) * 3 * 1 = 30 entries
    monkeypatch.setattr(context_ids, "MAX_SEQUENCE_ENTRIES", 30)
    assert context_ids.subset_sequences(np.arange(1.0, 6.0)[:, None], 3).shape == (10, 3, 1)
    with pytest.raises(ValueError, match="MAX_SEQUENCE_ENTRIES = 30"):
        context_ids.subset_sequences(np.arange(1.0, 7.0)[:, None], 3)
    # 5 tokens and 0: binom(6, 2) = 15 pairs
    monkeypatch.setattr(separation, "MAX_PAIR_ENTRIES", 15)
    assert separation.projection_constant([1.0], np.arange(1.0, 6.0)[:, None]) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="MAX_PAIR_ENTRIES = 15"):
        separation.projection_constant([1.0], np.arange(1.0, 7.0)[:, None])


def test_order_flips_counts_swaps_seen_in_float64():
    """Between gamma = 0.06 and 1 the ids of V = {1..5}, n = 3 swap order (gaps ~1e-4 there, which
    float64 resolves): count the swaps independently from the float64 layer."""
    V = np.arange(1.0, 6.0)[:, None]
    gammas = [0.06, 0.1, 0.15, 0.25, 0.4, 0.7, 1.0]
    runs = [context_ids.context_ids(V, 3, w=[1.0], gamma=g) for g in gammas]
    flips = context_ids.order_flips(runs)
    assert [(a, b) for a, b, _ in flips] == list(zip(gammas, gammas[1:], strict=False))
    X = runs[0].X
    tokens = X.reshape(-1)

    def signs(run):
        ids = run.layer(torch.as_tensor(X)).reshape(-1).numpy()
        return {
            (i, j): np.sign(ids[i] - ids[j])
            for t in np.unique(tokens)
            for i in np.flatnonzero(tokens == t)
            for j in np.flatnonzero(tokens == t)
            if i < j
        }

    want = []
    for a, b in zip(runs, runs[1:], strict=False):
        sa, sb = signs(a), signs(b)
        want.append(sum(1 for key in sa if sa[key] * sb[key] < 0))
    assert [f for *_, f in flips] == want and sum(want) > 0
    with pytest.raises(ValueError, match="increasing order of gamma"):
        context_ids.order_flips(runs[::-1])
    with pytest.raises(ValueError, match="at least two"):
        context_ids.order_flips(runs[:1])
    with pytest.raises(ValueError, match="share their sequences"):
        context_ids.order_flips([runs[0], context_ids.context_ids(V, 2, w=[1.0], gamma=0.2)])


def test_limit_reversals_by_hand_and_against_small_gamma():
    """V = {1, 2, 3}, n = 2: the only pair that can reverse is token 3 in {1, 3} (mean 2) and {2, 3}
    (mean 2.5); along u its ids differ by a positive factor times boltz(0, -6 gamma) -
    boltz(0, -3 gamma) (shift equivariance), with boltz(0, -x) = -x e^-x / (1 + e^-x)."""
    V = np.array([[1.0], [2.0], [3.0]])

    def boltz0(x):
        return -x * math.exp(-x) / (1 + math.exp(-x))

    for g in (0.1, 0.3, 1.0, 2.0):
        got = context_ids.limit_reversals(context_ids.context_ids(V, 2, w=[1.0], gamma=g))
        assert got == context_ids.LimitReversals(int(boltz0(6 * g) > boltz0(3 * g)), 0, 3)
    # V = {1..5}, n = 3 at gamma = 1: the limit order read from the float64 layer at gamma = 1e-3
    # (ids of different means differ by about 1e-2 there), the order at gamma = 1 from float64 too
    V5 = np.arange(1.0, 6.0)[:, None]
    run = context_ids.context_ids(V5, 3, w=[1.0], gamma=1.0)
    X = run.X
    tokens, sums = X.reshape(-1), np.repeat(X.sum(axis=(1, 2)), 3)
    ids = {
        g: contextual.RankOneAttention(V5, 3, w=[1.0], gamma=g)(torch.as_tensor(X))
        .reshape(-1)
        .numpy()
        for g in (1e-3, 1.0)
    }
    pairs = [
        (i, j)
        for t in np.unique(tokens)
        for i in np.flatnonzero(tokens == t)
        for j in np.flatnonzero(tokens == t)
        if i < j
    ]
    tied = sum(1 for i, j in pairs if sums[i] == sums[j])
    reversed_ = sum(
        1
        for i, j in pairs
        if sums[i] != sums[j]
        and np.sign(ids[1e-3][i] - ids[1e-3][j]) * np.sign(ids[1.0][i] - ids[1.0][j]) < 0
    )
    assert context_ids.limit_reversals(run) == context_ids.LimitReversals(
        reversed_, tied, len(pairs)
    )
    # equal sums and a common token: {1,2,5}/{1,3,4}, {1,3,5}/{2,3,4}, {1,4,5}/{2,3,5}
    assert reversed_ > 0 and tied == 3
    with pytest.raises(ValueError, match="result of context_ids"):
        context_ids.limit_reversals({"X": X})


def test_id_shifts_are_the_attention_term_of_the_residual_layer():
    V = np.array([[1.0], [2.0], [3.0], [4.0]])
    run = context_ids.context_ids(V, 2, w=[1.0], gamma=0.5)
    shifts = context_ids.id_shifts(run)
    assert shifts.shape == run.X.shape and shifts.dtype == np.float64
    # the ids minus the tokens, exactly: entry by entry at the run's precision
    with mpmath.workdps(run.dps):
        want = [
            float(i[0] - mpmath.mpf(t)) for i, t in zip(run.ids, run.X.reshape(-1), strict=True)
        ]
    np.testing.assert_array_equal(shifts.reshape(-1), want)
    # the float64 layer's output minus its input: the same attention term, to rounding
    with torch.no_grad():
        out = run.layer(torch.as_tensor(run.X)).numpy()
    np.testing.assert_allclose(shifts, out - run.X, rtol=1e-10, atol=1e-13)
    with pytest.raises(ValueError, match="run must be a result of context_ids"):
        context_ids.id_shifts(run.ids)
