"""Executing a chapter twice in fresh kernels gives identical glued values, and on a CPU with
other vector instructions the page says the same.

Each execution holds the machine-wide execution lock of the book's builds, as a build's chapter
does: two kernels at once oversubscribe a 2-core machine (a Chapter 5 cell of 25 s passed a
300 s timeout while a build ran beside this test).

The second test runs each chapter under ``ATEN_CPU_CAPABILITY=default`` and ``avx2`` (what torch
runs on a CPU without AVX-512, and without any vector extension) and compares what a reader of
the page sees with the machine's own capability: every ``{glue:text}`` reference as myst-nb
formats it, every check's outcome and every shown cell's text output. Numbers may differ in
their last digits; no word, verdict, check outcome or count may.
"""

from __future__ import annotations

import functools
import json
import os
import re

import jupytext
import pytest
from myst_nb.core.variables import format_plain_text
from nbclient import NotebookClient

from book_sphinx.execution import execution_slot

from conftest import ROOT

pytestmark = pytest.mark.build
CHAPTERS = sorted((ROOT / "chapters").glob("[0-9][0-9]_*.md")) + [ROOT / "chapters" / "atlas.md"]
#: torch's CPU kernels other than the machine's own: without AVX-512, and without any.
CAPABILITIES = ("avx2", "default")
GLUE_REF = re.compile(r"\{glue:text\}`([^`]+)`")
NUMBER = re.compile(r"[-+−]?(?:\d[\d,]*\.?\d*|\.\d+)(?:[eE][-+−]?\d+)?")


def execute(path, **env) -> list:
    """The chapter's code cells after a run in a fresh kernel (with ``env`` set)."""
    nb = jupytext.read(path)
    client = NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    )
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        with execution_slot(f"the determinism test of {path.stem}"):
            client.execute()
    finally:
        for k, v in saved.items():
            os.environ.pop(k) if v is None else os.environ.__setitem__(k, v)
    return [c for c in nb.cells if c.cell_type == "code"]


def glued(cells) -> dict:
    out = {}
    for cell in cells:
        for output in cell.get("outputs", []):
            key = output.get("metadata", {}).get("scrapbook", {}).get("name")
            if key:  # outside myst-nb the mime types carry scrapbook's prefix
                out[key] = next(v for k, v in output["data"].items() if k.endswith("text/plain"))
    return out


def glued_values(path) -> dict:
    return glued(execute(path))


@functools.cache
def own(path) -> list:
    """The chapter run under the machine's own CPU capability (once per session)."""
    return execute(path, BOOK_BUILD="1")


def shown(path, cells) -> dict[str, str]:
    """What the page shows: each glue reference formatted, each check's outcome, each text
    output of a shown cell (figures apart)."""
    values = glued(cells)
    out = {}
    for ref in GLUE_REF.findall(path.read_text()):
        name, _, spec = ref.partition(":")
        out[f"glue {ref}"] = format_plain_text(values[name], spec)
    for name, value in values.items():
        if name.startswith("check-"):
            record = json.loads(format_plain_text(value, ""))
            out[f"{name} passed"] = str(record["passed"])
            out[f"{name} measured"] = str(record.get("measured"))
    for i, cell in enumerate(cells):
        if "remove-cell" in cell.metadata.get("tags", []) or "remove-output" in cell.metadata.get(
            "tags", []
        ):
            continue
        for j, output in enumerate(cell.get("outputs", [])):
            data = output.get("data", {})
            if output.get("metadata", {}).get("scrapbook") or any(
                k.startswith("image/") for k in data
            ):
                continue
            text = data.get("text/plain", output.get("text"))
            if text:
                out[f"cell {i + 1} output {j + 1}"] = text
    return out


def _unit(token: str) -> float:
    """One unit in the last printed place of a decimal number."""
    mantissa, _, exponent = token.replace("−", "-").lower().partition("e")
    decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
    return 10.0 ** (-decimals + (int(exponent) if exponent else 0))


def _number(token: str) -> float:
    return float(token.replace("−", "-").replace(",", ""))


#: float64 rounding error of values of order one is counted in units of 2**-52 (2.2e-16); an
#: error below 1e-13 (fewer than about 450 such units) is rounding, and summing in another order
#: moves it by a few units.
ROUNDING_LEVEL, ROUNDING_FACTOR, FEW_UNITS = 1e-13, 4.0, 4 * 2.0**-52


def _rounding_level(u: float, v: float) -> bool:
    """Two float64 rounding errors that agree: both below ``ROUNDING_LEVEL`` and within a factor
    ``ROUNDING_FACTOR`` of each other (two bits), or both within a few units of 2**-52."""
    a, b = sorted((abs(u), abs(v)))
    if b >= ROUNDING_LEVEL:
        return False
    return b <= FEW_UNITS or (a > 0 and b / a <= ROUNDING_FACTOR)


def differences(a: str, b: str) -> list[str]:
    """How two displays of one value differ beyond the last digits of their numbers: the words
    around the numbers, a count (a number printed without decimals), or a decimal number by more
    than one unit in its last printed place (relative 1e-5 for one printed with more than six
    significant digits, a full-precision value the book rounds before it states it). Two float64
    rounding errors (both below ``ROUNDING_LEVEL``) need only agree within a factor of four."""
    if NUMBER.sub("#", a) != NUMBER.sub("#", b):
        return [f"words: {a[:300]!r} != {b[:300]!r}"]
    out = []
    for x, y in zip(NUMBER.findall(a), NUMBER.findall(b), strict=True):
        if x == y:
            continue
        if not re.search(r"[.eE]", x + y):
            out.append(f"count {x} != {y}")
            continue
        u, v = _number(x), _number(y)
        if _rounding_level(u, v):
            continue
        digits = len(re.sub(r"\D", "", x.lower().partition("e")[0]).lstrip("0"))
        allowed = 1e-5 * max(abs(u), abs(v)) if digits > 6 else max(_unit(x), _unit(y)) * 1.000001
        if abs(u - v) > allowed:
            out.append(f"number {x} != {y}")
    return out


@pytest.mark.parametrize("path", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_two_runs_identical(path):
    first, second = glued(own(path)), glued(execute(path, BOOK_BUILD="1"))
    assert len(first) >= 20
    assert first == second


@pytest.mark.parametrize("capability", CAPABILITIES)
@pytest.mark.parametrize("path", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_the_page_says_the_same_on_another_cpu(path, capability):
    mine = shown(path, own(path))
    other = shown(path, execute(path, BOOK_BUILD="1", ATEN_CPU_CAPABILITY=capability))
    assert mine.keys() == other.keys()
    assert any(k.endswith(" passed") for k in mine) or path.stem == "atlas"
    found = {k: d for k in mine if (d := differences(mine[k], other[k]))}
    assert not found, f"{len(found)} of {len(mine)} displays differ: {found}"


def test_differences_allow_last_digits_only():
    assert differences("0.0044 above", "0.0045 above") == []
    assert differences("0.0044 above", "0.0046 above") == ["number 0.0044 != 0.0046"]
    assert differences("38 more tokens", "39 more tokens") == ["count 38 != 39"]
    assert differences("epoch 15", "epoch 16") == ["count 15 != 16"]
    assert differences("0.0044 above", "0.0044 below")[0].startswith("words")
    assert differences("1.1367890313476956", "1.1367752491300518") == [
        "number 1.1367890313476956 != 1.1367752491300518"
    ]
    assert differences("1.4727799618006612", "1.4727799618006678") == []
    assert differences("6.20e-14", "6.21e-14") == [] and differences("2.3e-08", "2.5e-08") != []
    assert differences("1,184 passed", "1,184 passed") == []
    assert differences("3.21e-16 apart", "3.23e-16 apart") == []  # rounding: a few units
    assert differences("2.78e-17", "1.39e-17") == []  # one unit of 2**-52 against a half
    assert differences("4.0e-14", "1.5e-13") != []  # not both rounding-level
    assert differences("1.0e-14", "8.0e-14") != []  # three bits apart
