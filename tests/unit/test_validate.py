"""lib._validate: one input rule for every public function (real numbers only, sizes checked
first)."""

import math
import re

import numpy as np
import pytest
import torch

from lib import (
    _validate,
    boltzmann,
    contextual,
    datasets,
    exact,
    hardmax,
    interpolation,
    lemma1,
    maxaffine,
    memorization,
    quantize,
    separation,
)
from lib import _validate as V

from conftest import ROOT


def test_capped_comb_is_exact_where_it_matters():
    for n in range(0, 70):
        for k in range(0, n + 1):
            assert V.capped_comb(n, k, 10**6) == math.comb(n, k) or (
                math.comb(n, k) > 10**6
                and V.capped_comb(n, k, 10**6) in (math.comb(n, k), math.inf)
            )
    assert V.capped_comb(2000, 6, 10) == math.comb(2000, 6)  # small k: exact at any size
    assert V.capped_comb(10**18, 10**9, 2**20) == math.inf  # instantly, without the huge number
    assert (
        V.capped_comb(300, 150, 10**100) == math.comb(300, 150)
        or V.capped_comb(300, 150, 10**100) == math.inf
    )
    assert V.capped_comb(5, 7, 10) == 0


def test_require_size_is_inclusive_and_names_the_limit():
    assert V.require_size("things", 10, 10, "lib.x.MAX") is None
    with pytest.raises(
        ValueError, match=re.escape("things would be 11, more than the limit lib.x.MAX = 10")
    ):
        V.require_size("things", 11, 10, "lib.x.MAX")
    with pytest.raises(ValueError, match="astronomically large"):
        V.require_size("things", math.inf, 10, "lib.x.MAX")


@pytest.mark.parametrize(
    "value", [True, np.True_, None, 1j, "1.0", float("nan"), float("inf"), [1.0]]
)
def test_finite_real_refuses_what_is_not_a_finite_real(value):
    with pytest.raises(ValueError, match=r"^beta must be"):
        V.finite_real("beta", value)


@pytest.mark.parametrize(
    "value", [np.float32(0.5), np.int64(3), 2, np.array(1.5), torch.tensor(2.5)]
)
def test_finite_real_accepts_real_scalars_exactly(value):
    assert V.finite_real("beta", value) == float(np.asarray(value))


@pytest.mark.parametrize(
    "value, match",
    [
        (np.array([True]), "not bool"),
        (torch.tensor([False]), "not bool"),
        (np.array([1j]), "not complex"),
        (torch.tensor([1j]), "not complex"),
        (["a"], "dtype <U1"),
        ([[1.0], [1.0, 2.0]], r"got \[\[1.0\], \[1.0, 2.0\]\]"),
        (None, "dtype object"),
    ],
)
def test_arrays_must_be_real(value, match):
    with pytest.raises(ValueError, match=r"^x must be a real array.*" + match):
        V.as_float_array("x", value)


def test_flag():
    assert (
        V.flag("exact", np.bool_(True)) is True and V.flag("exact", None, allow_none=True) is None
    )
    for bad in (1, "yes", None):
        with pytest.raises(ValueError, match="exact must be True or False"):
            V.flag("exact", bad)


BOOL = np.ones((2, 3, 1), dtype=bool)
COMPLEX = np.ones((2, 3, 1)) * 1j


@pytest.mark.parametrize(
    "call",
    [
        lambda x: boltzmann.boltz(x[:, :, 0]),
        lambda x: boltzmann.soft_max_lse(x[:, :, 0]),
        lambda x: separation.tokenwise_separation(x),
        lambda x: separation.vocabulary(x),
        lambda x: quantize.bad_sets(x, 4, 0.01),
        lambda x: exact.attention_mp(
            x, contextual.RankOneAttention([[1.0], [2.0]], 2, w=[1.0]), 20
        ),
        lambda x: maxaffine.max_affine(x[0], [[1.0]], [0.0]),
        lambda x: maxaffine.voronoi_affine(x[0]),
        lambda x: maxaffine.indicator_bound(1.0, x[0, :, 0], 3),
        lambda x: interpolation.interpolating_ffn(x[0, :, 0], [0.0, 1.0, 2.0]),
        lambda x: interpolation.knot_layer([0.0, 1.0, 2.0], x[0, :, 0], [0.0]),
        lambda x: datasets.add_input_noise(x, 0.1, 0),
        lambda x: datasets.add_input_noise(torch.from_numpy(x), 0.1, 0),
    ],
)
@pytest.mark.parametrize("bad", ["bool", "complex"])
def test_bool_and_complex_arrays_are_refused_everywhere(call, bad):
    with pytest.raises(ValueError, match=f"not {bad}"):
        call(BOOL if bad == "bool" else COMPLEX)


def test_label_noise_keeps_refusing_bool_and_input_noise_is_unchanged_for_real_input():
    with pytest.raises(ValueError, match="integer array"):
        datasets.add_label_noise(np.array([True, False]), 0.5, 2, 0)
    x = np.arange(6, dtype=np.int64).reshape(2, 3)
    np.testing.assert_array_equal(datasets.add_input_noise(x, 0.0, 0), x.astype(np.float32))
    t = torch.tensor([[0.1, 0.2]], dtype=torch.float64)
    np.testing.assert_array_equal(datasets.add_input_noise(t, 0.0, 0), t.to(torch.float32).numpy())
    b = torch.tensor([[0.5, 0.25]], dtype=torch.bfloat16)
    np.testing.assert_array_equal(datasets.add_input_noise(b, 0.0, 0), b.to(torch.float32).numpy())


# Yes/no options: every public function or class of lib reads a bool-default parameter through
# _validate.flag, so "False" (a string, which is truthy) or 0 is refused instead of obeyed.
_DELEGATED = {
    # parameter handed unchanged to a callee that reads it through flag
    ("layers.py", "__init__", "residual"),
    ("cross_attention.py", "__init__", "residual"),
    ("experiments/conll_runs.py", "conll_experiment", "sparse_embedding"),
    ("experiments/trained.py", "phase_run", "cosine"),  # phase_run_settings reads it
    # fit checks its settings in one place, FitSettings.checked
    ("training/loop.py", "fit", "progress"),
    ("training/loop.py", "fit", "train_eval"),
}


def _bool_options_not_read_by_flag():
    import ast

    root = ROOT / "lib"
    found = []
    for path in sorted(root.rglob("*.py")):
        if path.name == "_validate.py":
            continue
        text = path.read_text()
        for node in ast.walk(ast.parse(text)):
            if not isinstance(node, ast.FunctionDef) or (
                node.name.startswith("_") and node.name != "__init__"
            ):
                continue
            a = node.args
            pos = a.posonlyargs + a.args
            defaults = [None] * (len(pos) - len(a.defaults)) + list(a.defaults)
            src = ast.get_source_segment(text, node)
            for arg, default in [
                *zip(pos, defaults, strict=True),
                *zip(a.kwonlyargs, a.kw_defaults, strict=True),
            ]:
                if isinstance(default, ast.Constant) and isinstance(default.value, bool):
                    key = (str(path.relative_to(root)), node.name, arg.arg)
                    if f'flag("{arg.arg}"' not in src and key not in _DELEGATED:
                        found.append(key)
    return found


def test_every_yes_no_option_is_read_by_flag():
    assert _bool_options_not_read_by_flag() == []


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: lemma1.lemma1_bound(3, 2.0, log10="False"), "log10"),
        (lambda: exact.min_gap([1.0, 2.0], distinct="False"), "distinct"),
        (
            lambda: exact.min_distance([[0.0], [1.0]], distinct=0),
            "distinct",
        ),
        (
            lambda: interpolation.ffn_mp(
                [[1.0]], {"W1": [[1.0]], "b1": [0.0], "W2": [[1.0]], "b2": [0.0]}, residual="False"
            ),
            "residual",
        ),
    ],
)
def test_string_or_int_for_a_yes_no_option_is_refused(call, name):
    with pytest.raises(ValueError, match=rf"{name} must be True or False"):
        call()


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: memorization.weight_lower_bound([0.0, float("nan")], [[0], [1]]), r"z\[1\]"),
        (lambda: memorization.weight_lower_bound([0.0, 1.0], [[0], [float("inf")]]), "targets"),
        (lambda: memorization.weight_lower_bound([0.0, True], [[0], [1]]), r"z\[1\]"),
        (lambda: memorization.weight_lower_bound("01", [[0], [1]]), "z must be"),
        (
            lambda: memorization.float64_memorization(np.ones((1, 2, 1)), np.ones((1, 2)), None),
            "gamma",
        ),
        (
            lambda: maxaffine.grid_centres(2, 21),
            "the number of cells m\\*\\*dim would be 2,097,152",
        ),
        (lambda: hardmax.hardmax_trials([[1.0]]), "^pair must"),
        (lambda: hardmax.id_distance(None, np.ones((2, 2))), "^pair must"),
        (lambda: lemma1.lattice_vectors(10**18, 3, 1.0), "^n must be <="),
    ],
)
def test_refusals_name_the_argument_at_fault(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_values_that_were_refused_by_mistake():
    # one cell in 21 dimensions is a valid grid
    assert maxaffine.grid_centres(1, 21).tolist() == [[0.5] * 21]
    # mellowmax is finite although the distance to the maximum overflows: the far entry's weight
    # is 0, so mm(a) = max a + log(1/2) exactly as in real arithmetic (rounded to 1e308)
    assert boltzmann.mellowmax([1e308, -1e308]) == 1e308 - math.log(2)
    assert boltzmann.mellowmax([4.0, -1e308]) == pytest.approx(4.0 - math.log(2), abs=1e-15)
    # closed form of the weight bound: slopes 1/1 and 3/2 over M = 3 units -> 0.5
    assert memorization.weight_lower_bound([0.0, 1.0, 3.0], [[0], [1], [4]]) == 0.5


def _vocab_layer():
    V = np.array([[1.0], [2.0], [3.0]])
    return contextual.RankOneAttention(V, 2, w=[1.0], gamma=0.01)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        # one point and 40,000 pieces: a 40,000-entry answer, not a 40,000^2 identity matrix
        (
            lambda: maxaffine.partition_indicator(
                np.zeros((4000, 2)), np.ones((40000, 2)), np.zeros(40000)
            ),
            "MAX_MATRIX_ENTRIES",
        ),
        (lambda: quantize.cell_representatives(10**9), "m must be <="),
        (lambda: quantize.bad_sets(np.zeros((1, 2, 1)), 10**9, 1e-12), "m must be <="),
        (
            lambda: contextual.RankOneAttention(np.array([[1.0], [2.0]]), 2, head_dim=10**9),
            "MAX_PARAMETERS",
        ),
        (
            lambda: memorization.memorizing_transformer(
                np.array([[[1.0], [2.0]]]), np.array([[0.0, 1.0]]), head_dim=10**9
            ),
            "MAX_PARAMETERS",
        ),
        (
            lambda: exact.attention_mp(np.arange(1.0, 5001.0)[:, None], _vocab_layer()),
            "MAX_MP_TERMS",
        ),
        (
            lambda: interpolation.interpolation_mp(np.arange(20000.0), np.zeros(20000)),
            "MAX_MP_TERMS",
        ),
    ],
)
def test_work_beyond_the_limits_is_refused_at_once(call, match):
    import time

    start = time.perf_counter()
    with pytest.raises(ValueError, match=match):
        call()
    assert time.perf_counter() - start < 1.0  # refused before any work, not after it


def test_partition_indicator_is_the_one_hot_of_the_nearest_centre():
    c = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    A, b = maxaffine.voronoi_affine(c)
    x = np.array([[0.1, 0.1], [0.9, 0.2], [0.2, 0.7]])
    assert maxaffine.partition_indicator(x, A, b).tolist() == np.eye(3).tolist()
    one = maxaffine.partition_indicator(
        np.array([[0.5, 0.5]]), np.ones((40000, 2)), np.zeros(40000)
    )
    assert one.shape == (1, 40000) and one[0, 0] == 1 and one.sum() == 1  # ties: lowest index


def test_docstring_promises_kept_at_the_extremes():
    # theorem2_delta: log space all the way; a logarithm beyond float64 is refused, not -inf
    assert contextual.theorem2_delta(3, 5, 1, 1.0, 5.0, 1.0, c_w=1e-100).construction < -1e200
    with pytest.raises(ValueError, match="beyond float64's range"):
        contextual.theorem2_delta(3, 5, 1, 1.0, 5.0, 1.0, c_w=1e-300)
    # grid_margin: inf means "no rival" (m = 1); an overflowing margin is refused instead
    assert maxaffine.grid_margin([[0.3]], 1).tolist() == [math.inf]
    with pytest.raises(ValueError, match="overflows float64"):
        maxaffine.grid_margin([[0.4e308]], 2, low=-0.8e308, high=0.8e308)


def test_float64_memorization_accepts_permuted_sequences():
    # the second sequence permutes the first: its tokens share their ids by equivariance and
    # carry the same labels, as memorizing_transformer accepts; it is no collision
    X = np.array([[[1.0], [2.0], [3.0]], [[3.0], [1.0], [2.0]], [[1.0], [2.0], [4.0]]])
    Y = np.array([[0.0, 1.0, 2.0], [2.0, 0.0, 1.0], [1.0, 1.0, 0.0]])
    run = memorization.float64_memorization(X, Y, 0.5)
    assert run.min_gap64 > 0 and run.max_error < 1e-12
    layer = contextual.RankOneAttention(separation.vocabulary(X), 3, w=[1.0], gamma=0.5)
    with torch.no_grad():
        ids = layer(torch.as_tensor(X[[0, 2]])).numpy().ravel()  # the six distinct contexts
    assert run.min_gap64 == np.diff(np.sort(ids)).min()
    with pytest.raises(ValueError, match="inconsistent labels"):
        memorization.float64_memorization(X, Y[[0, 0, 2]], 0.5)


def test_one_of_and_float_dtype():
    assert _validate.one_of("mode", "fast", ("fast", "full")) == "fast"
    for bad in ("slow", None, ["fast"], True):
        with pytest.raises(ValueError, match=r"mode must be one of \('fast', 'full'\)"):
            _validate.one_of("mode", bad, ("fast", "full"))
    assert _validate.float_dtype("dtype", torch.float64) is torch.float64
    for bad in (torch.float16, "float32", np.float64):
        with pytest.raises(ValueError, match="dtype must be torch.float32 or torch.float64"):
            _validate.float_dtype("dtype", bad)
