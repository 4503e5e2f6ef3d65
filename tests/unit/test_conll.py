"""lib.experiments.conll: the corpus ceilings of K&S Section 5's CoNLL-2003 experiment."""

import pytest

from lib.experiments import conll, conll_runs


def test_ceilings_hand_computed():
    corpus = [
        (["a", "b", "a"], ["X", "Y", "Z"]),
        (["b", "a"], ["Y", "X"]),
        (["a", "b"], ["Z", "Y"]),
    ]
    # context-free: 'a' has X, Z, X, Z -> best 2 of 4; 'b' has Y, Y, Y -> 3 of 3: 5 / 7
    assert conll.context_free_ceiling(corpus) == pytest.approx(5 / 7)
    # permutation classes: {a,a,b}: a -> X, Z (1 of 2), b -> Y (1);
    # {a,b}: a -> X, Z (1 of 2), b -> Y, Y (2)
    assert conll.permutation_ceiling(corpus) == pytest.approx((1 + 1 + 1 + 2) / 7)
    assert conll.permutation_ceiling(corpus) >= conll.context_free_ceiling(corpus)
    with pytest.raises(ValueError, match="non-empty list"):
        conll.context_free_ceiling([])
    with pytest.raises(ValueError, match="equal, non-zero length"):
        conll.permutation_ceiling([(["a"], ["X", "Y"])])


def test_ceilings_by_counting_agree_with_the_ceilings():
    corpus = [
        (["a", "b", "a"], ["X", "Y", "Z"]),
        (["b", "a"], ["Y", "X"]),
        (["a", "b"], ["Z", "Y"]),
    ]
    assert conll.ceilings_by_counting(corpus) == pytest.approx((5 / 7, 5 / 7))
    pairs = conll_runs.conll_subset("validation", 200, seed=4)
    cf, perm = conll.ceilings_by_counting(pairs)
    assert cf == pytest.approx(conll.context_free_ceiling(pairs), abs=1e-12)
    assert perm == pytest.approx(conll.permutation_ceiling(pairs), abs=1e-12)
