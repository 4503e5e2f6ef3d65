"""The domain table of lib's public maths functions (used by tests/unit/test_domain.py).

Where :mod:`bad_inputs` replaces each argument of a valid call by values a function must refuse,
this table moves each argument across the *valid* domain, to the edges of float64, and asks
for the contract of every public function: a finite, right answer, or a ``ValueError`` naming
the argument, within a second; never another exception, a silent NaN or infinity, or a hang.

* ``extreme_values``: each real argument (a scalar or an array) of the valid call of
  :func:`bad_inputs.baselines` multiplied by decades from 1e-300 to 1e300, its sign flipped,
  shifted by 1e15 and by -1e200, nudged by one ulp, and (arrays) with its first two entries made
  a 1-ulp pair and all entries tied to the first. Each call is classified as in
  :func:`bad_inputs.classify`, with one defect more: ``inf``, a result holding an infinity
  where the function does not document one.
* ``LAWS``: for functions with an exact scaling law, :math:`f(c^{k_1} x_1, c^{k_2} x_2, \\dots)
  = c^{m} f(x_1, x_2, \\dots)` for a power of two :math:`c` (so that the scaled inputs are exact
  and every rounding of the scaled evaluation is the rounding at scale 1 times :math:`c^m`), the
  scaled call is compared with the law applied to the call at scale 1, to ``LAW_RTOL`` (derived
  below) for :math:`c = 2^{\\pm 500}` and :math:`2^{\\pm 990}`. A function that rounds its
  squares below the normal range or its sums above the largest float breaks its law there.
"""

from __future__ import annotations

import dataclasses
import math
import signal
import time
from collections.abc import Callable

import bad_inputs as B
import mpmath
import numpy as np
import pandas as pd
import torch

#: Unit roundoff of float64.
U = 2.0**-53

#: Decades an argument is multiplied by.
DECADES = (1e-300, 1e-150, 1e-12, 1e12, 1e150, 1e300)

#: Powers of two for the scaling laws: exact scalings near the middle and the edges of float64.
LAW_SCALES = (2.0**-990, 2.0**-500, 2.0**500, 2.0**990)

#: Relative tolerance of a scaling law. Scaling every input by a power of two scales every
#: intermediate of a float64 evaluation exactly (sums, products, quotients and square roots
#: commute with it; an exponential sees the same argument ``beta a``) unless an intermediate
#: leaves the normal range, so the two results agree to the last bit. The slack of 8 ulp allows
#: for a library that blocks a reduction differently by magnitude (none here is known to).
LAW_RTOL = 8 * U

#: Functions whose results hold infinity by their documentation, with where it says so.
DOCUMENTED_INF = {
    "exact.min_gap": "Returns: mpmath.inf when distinct and all entries are equal",
    "exact.min_distance": "Returns: mpmath.inf if distinct and all points coincide",
}

#: Functions whose results hold NaN by their documentation (besides
#: :data:`bad_inputs.DOCUMENTED_NAN`), with where it says so.
DOCUMENTED_NAN = {
    **{name: "as in bad_inputs.DOCUMENTED_NAN" for name in B.DOCUMENTED_NAN},
    "memorization.float64_memorization": (
        "Float64Memorization: largest_weight and max_error NaN when the float64 ids collide"
    ),
}


def _as_float(value) -> np.ndarray:
    return np.asarray(value.detach() if isinstance(value, torch.Tensor) else value, dtype=float)


def _like(template, arr: np.ndarray):
    """``arr`` in the container type of ``template`` (list, tensor of its dtype, or array)."""
    if isinstance(template, torch.Tensor):
        return torch.from_numpy(arr.copy()).to(template.dtype)
    if isinstance(template, list | tuple):
        return arr.tolist()
    if isinstance(template, float | np.floating):
        return float(arr)
    return arr


def extreme_values(value) -> list[tuple[str, object]]:
    """``(label, value)`` pairs: ``value`` moved across float64's range (see the module doc)."""
    kind = B._kind(value)
    if kind not in ("float", "array"):
        return []
    arr = _as_float(value)
    if arr.dtype.kind != "f" or arr.size == 0:
        return []
    out = []
    with np.errstate(over="ignore", under="ignore"):
        for c in DECADES:
            scaled = arr * c
            if np.isfinite(scaled).all():
                out.append((f"times {c:g}", _like(value, scaled)))
        out.append(("negated", _like(value, -arr)))
        for shift in (1e15, -1e200):
            out.append((f"shifted by {shift:g}", _like(value, arr + shift)))
        out.append(("one ulp up", _like(value, np.nextafter(arr, np.inf))))
        if kind == "array" and arr.size >= 2:
            pair = arr.copy().reshape(-1)
            pair[1] = np.nextafter(pair[0], np.inf)
            out.append(("a 1-ulp pair", _like(value, pair.reshape(arr.shape))))
            tied = np.full(arr.shape, arr.reshape(-1)[0])
            out.append(("all tied", _like(value, tied)))
    return out


def same_values(value) -> list[tuple[str, object]]:
    """``(label, value)`` pairs holding the same numbers as ``value`` in another dtype: numpy
    float32, float16 and int64 arrays, numpy float32 and int scalars, where the cast is exact.
    A function must treat them as the float64 value (the same result, to the bit)."""
    kind = B._kind(value)
    if kind not in ("float", "array") or isinstance(value, torch.Tensor):
        return []
    arr = _as_float(value)
    if arr.dtype.kind != "f" or arr.size == 0:
        return []
    out = []
    for dtype in (np.float32, np.float16, np.int64):
        with np.errstate(over="ignore", invalid="ignore"):
            cast = arr.astype(dtype)
        if np.array_equal(cast.astype(float), arr):
            name = np.dtype(dtype).name
            out.append((f"as {name}", cast[()] if kind == "float" else cast))
    if kind == "float" and float(arr) == int(arr):
        out.append(("as a Python int", int(arr)))
    return out


def has_inf(result) -> bool:
    """Whether ``result`` holds an infinity: as :func:`bad_inputs._leaves` walks it, except that
    an mpmath number is asked itself (one beyond float64's range is finite, not inf)."""
    if isinstance(result, mpmath.mpf):
        return bool(mpmath.isinf(result))
    if isinstance(result, list | tuple):
        return any(has_inf(v) for v in result)
    if dataclasses.is_dataclass(result) and not isinstance(result, type):
        return any(has_inf(getattr(result, f.name)) for f in dataclasses.fields(result))
    if isinstance(result, dict):
        return any(has_inf(v) for v in result.values())
    return any(np.isinf(leaf).any() for leaf in B._leaves(result))


def classify(
    name: str, fn: Callable, kwargs: dict, arg: str, value, want=None, same: bool = False
) -> tuple[str, str]:
    """:func:`bad_inputs.classify` for a valid-domain value, with ``inf`` as a defect; a call
    over the time limit is timed once more (the first call of a function may import modules)."""
    outcome, detail = B.classify(fn, kwargs, arg, value, same, want)
    if outcome == "slow":
        outcome, detail = B.classify(fn, kwargs, arg, value, same, want)
    if same and outcome == "refused":  # the same numbers in another dtype or layout
        return "refused valid", detail
    if outcome == "nan" and name in DOCUMENTED_NAN:
        outcome = "accepted"
    if outcome == "accepted" and name not in DOCUMENTED_INF:
        result = fn(**dict(kwargs, **{arg: value}))
        if has_inf(result):
            return "inf", "a result holding infinity"
    return outcome, detail


DEFECTS = (*B.DEFECTS, "inf", "refused valid")


def table(names: list[str] | None = None) -> pd.DataFrame:
    """One row per call: function, argument, extreme value, outcome, detail."""
    rows = []
    for name, (fn, kwargs) in B.baselines().items():
        if names is not None and name not in names:
            continue
        want = fn(**kwargs)
        for arg, value in kwargs.items():
            calls = [(label, v, False) for label, v in extreme_values(value)]
            calls += [(label, v, True) for label, v in same_values(value)]
            if B._kind(value) == "array":
                calls += [(label, v, True) for label, v in B._same_arrays(value)]
            for label, v, same in calls:
                outcome, detail = classify(name, fn, kwargs, arg, v, want, same)
                rows.append(
                    dict(function=name, argument=arg, value=label, outcome=outcome, detail=detail)
                )
    return pd.DataFrame(rows)


# --- scaling laws --------------------------------------------------------------------------

#: name -> ({argument: power of c it is multiplied by}, power of c of each leaf of the result
#: (one int for every leaf)). Only exact laws of the mathematics, each with its reason.
LAWS: dict[str, tuple[dict[str, int], int | tuple[int, ...]]] = {
    # boltz, lse and mellowmax see beta a (omega a): homogeneous of degree 1
    "boltzmann.boltz": ({"a": 1, "beta": -1}, 1),
    "boltzmann.soft_max_lse": ({"a": 1, "beta": -1}, 1),
    "boltzmann.mellowmax": ({"a": 1, "omega": -1}, 1),
    # the derivative in beta is a variance: degree 2
    "boltzmann.dboltz_dbeta": ({"a": 1, "beta": -1}, 2),
    # distances and gaps: degree 1; projections: linear in the rows
    "exact.min_gap": ({"values": 1}, 1),
    "exact.min_distance": ({"points": 1}, 1),
    "exact.project_mp": ({"rows": 1}, 1),
    "separation.tokenwise_separation": ({"X": 1}, 1),
    # the projection constant is a ratio of lengths: degree 0 (the direction too)
    "separation.projection_constant": ({"vocab": 1}, 0),
    "separation.best_direction": ({"vocab": 1}, 0),
    # the knots are midpoints (degree 1), their order is not scaled
    "interpolation.interpolation_knots": ({"z": 1}, (0, 1)),
    # affine scores a.x + b with x and b scaled: degree 1; the argmax cell and indicators: 0
    "maxaffine.affine_scores": ({"x": 1, "b": 1}, 1),
    "maxaffine.max_affine": ({"x": 1, "b": 1}, 1),
    "maxaffine.cell_index": ({"x": 1, "b": 1}, 0),
    "maxaffine.partition_indicator": ({"x": 1, "b": 1}, 0),
    "maxaffine.margin": ({"x": 1, "b": 1}, 1),
    "maxaffine.soft_indicator": ({"x": 1, "b": 1, "beta": -1}, 0),
    "maxaffine.indicator_error": ({"x": 1, "b": 1, "beta": -1}, 0),
    # Voronoi pieces: A = centres (degree 1), b = -|c|^2 / 2 (degree 2)
    "maxaffine.voronoi_affine": ({"centres": 1}, (1, 2)),
    # nearest centre, and softmax of beta (x.c - |c|^2 / 2) (degree 2) or of -|x - c|^2 / (2 h^2)
    "lookup.hard_lookup": ({"x": 1, "centres": 1}, 0),
    "lookup.soft_lookup": ({"x": 1, "centres": 1, "beta": -2}, 0),
    "lookup.nadaraya_watson": ({"x": 1, "centres": 1, "bandwidth": 1}, 0),
    # L_p norms of errors, their standard errors, the sup: degree 1
    "metrics.lp_from_errors": ({"errors": 1}, 1),
    "metrics.error_summary": ({"errors": 1}, 1),
    # the median and range of seeds; the order of two groups
    "seeds.band": ({"values": 1}, 1),
    "seeds.separated": ({"a": 1, "b": 1}, 0),
    # digits and bits depend on ratios only
    "atlas.digits_needed": ({"gap": 1, "spread": 1}, 0),
    "atlas.bits_per_number": ({"largest": 1, "resolution": 1}, 0),
}


def _power(c: float, k: int) -> float:
    """``c**k`` for a power of two ``c``: exact, 0 or inf where it leaves float64."""
    return (
        float(np.ldexp(1.0, round(math.log2(c)) * k))
        if abs(k * math.log2(c)) < 1100
        else (math.inf if k * math.log2(c) > 0 else 0.0)
    )


def _normal(arr: np.ndarray) -> bool:
    """Whether every entry of ``arr`` is finite and 0 or in float64's normal range."""
    return bool(np.isfinite(arr).all() and not ((arr != 0) & (np.abs(arr) < 2.0**-1022)).any())


def _scaled(value, power: int, c: float):
    """``value`` times ``c**power``, or None where an entry would leave the normal range."""
    with np.errstate(over="ignore", under="ignore"):
        out = _as_float(value) * _power(c, power)
    if not _normal(out) or (np.count_nonzero(out) < np.count_nonzero(_as_float(value))):
        return None
    return float(out) if B._kind(value) == "float" else _like(value, out)


def law_outcome(
    fn: Callable, kwargs: dict, law: tuple[dict[str, int], int | tuple[int, ...]], c: float
) -> tuple[str, str]:
    """``("holds" | "broken" | "refused" | "skipped", detail)`` for ``law`` (as in
    :data:`LAWS`) of ``fn`` at the valid call ``kwargs`` and the scale ``c``.

    ``skipped``: the law's expected value, or a scaled argument, leaves float64's normal range;
    ``refused``: the function refuses the scaled call with a ValueError naming an argument it
    scales (its documented range ends there)."""
    powers, degree = law
    name = getattr(fn, "__qualname__", "")
    base = list(B._leaves(fn(**kwargs)))
    degrees = degree if isinstance(degree, tuple) else (degree,) * len(base)
    with np.errstate(over="ignore", under="ignore"):
        want = [leaf * _power(c, k) for leaf, k in zip(base, degrees, strict=True)]
    if not all(_normal(w) for w in want):
        return "skipped", "the expected value leaves float64's normal range"
    call = dict(kwargs)
    for arg, k in powers.items():
        call[arg] = _scaled(kwargs[arg], k, c)
        if call[arg] is None:
            return "skipped", f"{arg} scaled leaves float64's normal range"
    try:
        got = list(B._leaves(fn(**call)))
    except ValueError as e:
        if any(B.names(str(e), arg, name) for arg in powers):
            return "refused", str(e)[:160]
        return "broken", f"unnamed refusal: {str(e)[:160]}"
    except Exception as e:  # noqa: BLE001 - every other exception breaks the contract
        return "broken", f"{type(e).__name__}: {str(e)[:160]}"
    for g, w in zip(got, want, strict=True):
        if g.shape != w.shape or not np.allclose(g, w, rtol=LAW_RTOL, atol=0):
            worst = np.max(np.abs(g - w) / np.maximum(np.abs(w), np.finfo(float).tiny))
            return "broken", f"got {g.ravel()[:4]} for {w.ravel()[:4]} (relative {worst:.2g})"
    return "holds", ""


def law_table() -> pd.DataFrame:
    rows = []
    baselines = B.baselines()
    for name, law in LAWS.items():
        fn, kwargs = baselines[name]
        for c in LAW_SCALES:
            start = time.perf_counter()
            outcome, detail = law_outcome(fn, kwargs, law, c)
            rows.append(
                dict(
                    function=name,
                    scale=f"2^{round(math.log2(c))}",
                    outcome=outcome,
                    detail=detail,
                    seconds=time.perf_counter() - start,
                )
            )
    return pd.DataFrame(rows)


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.default_int_handler)
    with pd.option_context(
        "display.max_rows", None, "display.max_colwidth", 120, "display.width", 250
    ):
        laws = law_table()
        print(laws.outcome.value_counts().to_string())
        print(laws[laws.outcome != "holds"].to_string())
        t = table()
        print(len(t), "calls;", t.outcome.value_counts().to_dict())
        print(t[t.outcome.isin(DEFECTS)].to_string())
