"""tools/mutate.py (`make mutate`): its table of mutants stays applicable to lib, an edit lands
inside the function it names, and only a test that passed without the mutant catches it."""

from __future__ import annotations

import importlib.util
import json
import sys

import pytest

from conftest import ROOT

_spec = importlib.util.spec_from_file_location("mutate", ROOT / "tools" / "mutate.py")
mutate = importlib.util.module_from_spec(_spec)
sys.modules["mutate"] = mutate  # its dataclasses look their module up by name
_spec.loader.exec_module(mutate)

MUTANTS = mutate.mutants()


@pytest.mark.parametrize("mutant", MUTANTS, ids=[m.id for m in MUTANTS])
def test_every_mutant_applies_once_inside_its_function(mutant):
    source = (ROOT / mutant.path).read_text(encoding="utf8")
    changed = mutate.apply(mutant, source)
    assert changed != source
    assert len(changed) - len(source) == len(mutant.replace) - len(mutant.find)
    start, end = mutate.function_span(source, mutant.name)
    assert changed[:start] == source[:start]  # nothing before the function moves
    compile(changed, mutant.path, "exec")  # a mutant is a bug, not a syntax error


def test_the_table_covers_every_chapter_and_the_kinds_the_review_named():
    kinds = {m.kind for m in MUTANTS}
    for kind in ("a dropped square", "a wrong constant", "a max for a log-sum-exp", "sign"):
        assert kind in kinds
    assert {"a wrong log base", "a missing root"} <= kinds
    chapters = {c for m in MUTANTS for c in m.chapters}
    assert chapters == {p.stem for p in (ROOT / "chapters").glob("[0-9][0-9]_*.md")}
    assert len({m.function for m in MUTANTS}) == len(MUTANTS)  # one mutant per function
    assert 1 <= sum(m.quick for m in MUTANTS) <= 3  # what make test runs stays short


def test_an_edit_outside_its_function_or_twice_in_it_is_refused():
    source = (
        "from typing import overload\n\n"
        "def f(x):\n    return x + 1\n\n"
        "@overload\ndef g(x: int) -> int: ...\n"
        "def g(x):\n    return x + 1 + x + 1\n"
    )
    one = mutate.Mutant("m", "lib/x.py:f", "sign", "x + 1", "x - 1", ("01_boltzmann",))
    assert mutate.apply(one, source).count("x - 1") == 1
    assert "def g(x):\n    return x + 1 + x + 1" in mutate.apply(one, source)
    twice = mutate.Mutant("m", "lib/x.py:g", "sign", "x + 1", "x - 1", ("01_boltzmann",))
    with pytest.raises(ValueError, match="occurs 2 times in lib/x.py:g"):
        mutate.apply(twice, source)
    absent = mutate.Mutant("m", "lib/x.py:f", "sign", "x * 2", "x", ("01_boltzmann",))
    with pytest.raises(ValueError, match="occurs 0 times"):
        mutate.apply(absent, source)
    start, end = mutate.function_span(source, "g")  # the implementation, not the overload stub
    assert source[start:end].startswith("def g(x):\n")
    with pytest.raises(ValueError, match="no module-level function 'h'"):
        mutate.function_span(source, "h")


def test_only_a_check_that_passed_without_the_mutant_notices_it():
    def run(checks, errors=()):
        return mutate.ChapterRun(
            {k: {"kind": kind, "passed": passed} for k, (kind, passed) in checks.items()},
            list(errors),
        )

    failing = {"03_memorization": ["B3.6"]}
    same = run({"B3.6": ("test", False), "C10": ("test", True)})
    assert mutate.outcome({"03_memorization": same}, failing) == ("survived", [])
    shown = run({"C11": ("demonstration", False), "B3.6": ("test", False)})
    assert mutate.outcome({"03_memorization": shown}, failing) == ("shown", ["C11"])
    new = run({"B3.6": ("test", False), "C10": ("test", False), "C11": ("demonstration", False)})
    assert mutate.outcome({"03_memorization": new}, failing) == ("caught", ["C10"])
    raised = run({"C10": ("test", True)}, ["ValueError: x"])
    assert mutate.outcome({"03_memorization": raised}, failing) == ("stopped", [])
    rows = [{"outcome": o} for o in ("caught", "caught", "shown", "stopped")]
    assert mutate.summary(rows) == {
        "mutants": 4,
        "caught": 2,
        "shown": 1,
        "stopped": 1,
        "survived": 0,
        "caught_share": 0.5,
    }


def test_the_stored_run_is_of_this_table():
    """The claims page reports results/mutation/last.json: it must be of today's mutants (a
    mutant added, removed or edited needs `make mutate`)."""
    stored = json.loads((ROOT / "results" / "mutation" / "last.json").read_text())
    assert stored["version"] == mutate.MUTATION_VERSION
    table = [m.__dict__ | {"chapters": list(m.chapters)} for m in MUTANTS]
    assert stored["settings"]["mutants"] == table, "run `make mutate`: the table changed"
    rows = stored["result"]["mutants"]
    assert [r["id"] for r in rows] == [m.id for m in MUTANTS]
    assert stored["result"]["summary"] == mutate.summary(rows)


def _row(mutant_id, runs, failing):
    """A row as run_mutant writes it, from chapter runs made by hand."""
    word, found = mutate.outcome(runs, failing)
    return {
        "id": mutant_id,
        "chapters": list(runs),
        "outcome": word,
        "failed_checks": found,
        "errors": [e for r in runs.values() for e in r.errors][:3],
        "seconds": 1.5 * len(runs),
    }


def test_a_merged_row_is_the_row_of_a_run_over_all_the_chapters():
    """--extend merges a stored row with the row of the chapters a mutant newly lists: the merge
    must equal outcome() over every chapter at once, for every pair of outcomes."""
    R = mutate.ChapterRun

    def chapter(test=None, demo=None, error=None):
        checks = {"T1": {"kind": "test", "passed": True}}
        if test:
            checks[test] = {"kind": "test", "passed": False}
        if demo:
            checks[demo] = {"kind": "demonstration", "passed": False}
        return R(checks, [error] if error else [])

    kinds = {
        "caught": lambda c: chapter(test=f"T-{c}"),
        "shown": lambda c: chapter(demo=f"D-{c}"),
        "stopped": lambda c: chapter(error=f"E-{c}"),
        "survived": lambda c: chapter(),
    }
    failing = {c: [] for c in ("a", "b", "c")}
    for first in kinds:
        for second in kinds:
            old = {"a": kinds[first]("a"), "b": kinds["survived"]("b")}
            new = {"c": kinds[second]("c")}
            merged = mutate.merge_rows(_row("m", old, failing), _row("m", new, failing))
            whole = _row("m", old | new, failing)
            assert merged == whole, (first, second)
    # a check that fails without the mutant catches nothing, in either part
    old = {"a": chapter(test="T-a")}
    assert (
        mutate.merge_rows(_row("m", old, {"a": ["T-a"]}), _row("m", {"c": chapter()}, failing))[
            "outcome"
        ]
        == "survived"
    )
    with pytest.raises(ValueError, match="different mutants"):
        mutate.merge_rows(_row("m", old, failing), _row("n", {"c": chapter()}, failing))
    with pytest.raises(ValueError, match="share chapters"):
        mutate.merge_rows(_row("m", old, failing), _row("m", old, failing))


def test_extend_runs_only_what_the_table_changed():
    one, two, three = MUTANTS[:3]
    entry = lambda m, chapters=None: m.__dict__ | {"chapters": list(chapters or m.chapters)}  # noqa: E731
    stored = {
        "settings": {"mutants": [entry(one), entry(two, two.chapters[:1]), entry(three)]},
        "result": {"mutants": [{"id": m.id} for m in (one, two, three)]},
    }
    grown = tuple(two.chapters[1:])
    if not grown:  # give the second mutant a chapter more than its stored entry
        two = mutate.Mutant(**(two.__dict__ | {"chapters": (*two.chapters, "07_trained")}))
        grown = ("07_trained",)
    edited = mutate.Mutant(**(three.__dict__ | {"replace": three.replace + " "}))
    fresh = mutate.Mutant(**(one.__dict__ | {"id": "fresh-one"}))
    plan = mutate.extension([one, two, edited, fresh], stored)
    assert plan == {one.id: (), two.id: grown, three.id: None, "fresh-one": None}
    assert mutate.extension([one], None) == {one.id: None}
