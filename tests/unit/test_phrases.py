"""The chapters' words live in their phrase tables (lib/book/phrases/<chapter>.toml), not in
Python: a cell computes which case holds and the table holds what the page then says."""

from __future__ import annotations

import ast
import re

import jupytext
import pytest

from lib.book import phrases as P

from conftest import ROOT

PAGES = [
    *sorted((ROOT / "chapters").glob("[0-9][0-9]_*.md")),
    ROOT / "chapters" / "atlas.md",
    ROOT / "chapters" / "epilogue.md",
]

#: Calls that put a string on the page: a glued value or a check record.
GLUERS = {"glue", "glue_many", "record"}


def words(node: ast.AST) -> int:
    """Words of a string literal, an f-string (each field one word) or a sum of them."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return len(node.value.split())
    if isinstance(node, ast.JoinedStr):
        return sum(len(v.value.split()) if isinstance(v, ast.Constant) else 1 for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return words(node.left) + words(node.right)
    return 0


def sentence_choices(source: str) -> list[str]:
    """Where a cell writes prose: a conditional that chooses between strings of two words or
    more, or a string of six words or more that it glues or records."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.IfExp) and max(words(node.body), words(node.orelse)) >= 2:
            found.append(ast.unparse(node)[:80])
        if isinstance(node, ast.Call):
            f = node.func
            name = getattr(f, "id", getattr(f, "attr", None))
            if name in GLUERS:
                for arg in [*node.args, *(k.value for k in node.keywords)]:
                    if words(arg) >= 6:
                        found.append(ast.unparse(arg)[:80])
    return found


def test_sentence_choices_finds_prose_built_in_python():
    assert sentence_choices('glue("x", "grows" if up else "does not always grow")')
    assert sentence_choices('glue_many(a=f"the error falls to {e} at {m} cells")')
    assert not sentence_choices('glue("x", f"{e:.2f} s")')  # a number with its unit
    assert not sentence_choices('say.glue("x", up)')
    assert not sentence_choices('ax.set_title("error against the number of cells per axis")')


@pytest.mark.parametrize("path", PAGES, ids=lambda p: p.stem)
def test_no_cell_writes_a_sentence(path):
    """Every choice of words is in the chapter's phrase table, not in its cells."""
    found = {
        f"code cell {i}": s
        for i, c in enumerate(jupytext.read(path).cells)
        if c.cell_type == "code" and (s := sentence_choices(c.source))
    }
    assert not found, found


@pytest.mark.parametrize("path", PAGES, ids=lambda p: p.stem)
def test_every_phrase_is_used_and_every_used_phrase_exists(path):
    table_file = P.PHRASES_DIR / f"{path.stem}.toml"
    source = path.read_text()
    uses = set(re.findall(r"""\bsay(?:\.glue|\.join)?\(\s*["']([\w\-.]+)["']""", source))
    if not table_file.exists():
        assert not uses, f"{path.stem} calls say() without a phrase table"
        return
    table = P.phrases(path.stem).table
    assert uses == set(table), (
        f"unused: {sorted(set(table) - uses)}; missing: {sorted(uses - set(table))}"
    )


def test_a_phrase_is_chosen_by_its_case_and_filled_by_its_fields():
    say = P.Phrases(
        "t",
        {
            "trend": ["falls", "does not fall"],
            "order": {"later": "later at {k} layers", "same": "at the same epoch"},
            "fixed": "{err:.2f} of the bound",
            "named": "{name} at {case}",
        },
    )
    assert say("named", name="MNIST", case=3) == "MNIST at 3"  # fields may use any name
    assert say("trend", True) == "falls" and say("trend", False) == "does not fall"
    assert say("order", "later", k=3) == "later at 3 layers"
    assert say("fixed", err=0.4567) == "0.46 of the bound"
    for bad, match in [
        (lambda: say("nope", True), "name 'nope' is not in the phrase table"),
        (lambda: say("trend", 1), "case of 'trend' must be True or False"),
        (lambda: say("order", "earlier"), r"must be one of \['later', 'same'\]"),
        (lambda: say("order", "later"), "needs the field 'k'"),
        (lambda: say("fixed", True), "has one case"),
    ]:
        with pytest.raises(ValueError, match=match):
            bad()
    with pytest.raises(ValueError, match="must be"):
        P.Phrases("t", {"bad": ["only one"]})
    with pytest.raises(ValueError, match="has no phrase table"):
        P.phrases("no_such_chapter")


def test_join_lists_a_phrase_per_case_and_count_case_names_the_count():
    say = P.Phrases(
        "t", {"curves": {"label": "{k} of {n} label-flip curves", "input": "{k} of {n} others"}}
    )
    assert say.join("curves", {"label": {"k": 3, "n": 8}}) == "3 of 8 label-flip curves"
    assert (
        say.join("curves", {"input": {"k": 1, "n": 8}, "label": {"k": 3, "n": 8}})
        == "1 of 8 others and 3 of 8 label-flip curves"  # in the order of the cases
    )
    for bad, match in [
        (lambda: say.join("curves", {}), "non-empty mapping"),
        (lambda: say.join("curves", {"label": 3}), "must be a mapping"),
        (lambda: say.join("curves", {"label": {"k": 3}}), "needs the field 'n'"),
        (lambda: say.join("curves", {"other": {}}), "must be one of"),
    ]:
        with pytest.raises(ValueError, match=match):
            bad()
    # the source-scan of the test above sees say.join as a use of its phrase
    assert re.findall(r"""\bsay(?:\.glue|\.join)?\(\s*["']([\w\-.]+)["']""", 'say.join("x", c)')
    assert [P.count_case(k, 4) for k in range(5)] == ["none", "some", "some", "some", "every"]
    assert P.count_case(0, 0) == "every"  # every one of none: the case k == n comes first
    for k, n in [(-1, 3), (4, 3), (True, 3), (1.0, 3)]:
        with pytest.raises(ValueError, match="0 <= k <= n"):
            P.count_case(k, n)


def test_every_phrase_table_belongs_to_a_page():
    stems = {p.stem for p in PAGES}
    assert {f.stem for f in P.PHRASES_DIR.glob("*.toml")} <= stems
