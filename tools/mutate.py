"""`make mutate`: would the ledger's tests notice a plausible bug in lib?

Each mutant of ``tools/mutants.toml`` changes one expression of one function of ``lib`` (a dropped
square, a wrong constant, a max for a log-sum-exp, a wrong log base, a sign, a missing root, an
argument ignored, an index off by one). For each, in a scratch copy of the checkout (the
checkout itself is never edited):

1. the edit is applied to the copy's file, after checking that its text occurs exactly once
   inside the named function (a mutant whose text has moved stops the run: the table is out of
   date, and a silent skip would inflate the share);
2. every chapter the mutant lists is executed in a fresh kernel in fast mode, as a reader's Jupyter
   runs it (jupytext, then nbclient), with the copy's ``lib`` first on the kernel's path and
   errors allowed, so that the cells after a failing one still run and record their checks;
3. the records of the checks (``lib.book.checks.record``) are read from each chapter. The mutant
   is **caught** when a check of kind *test* records FAIL, **shown** when only a *demonstration*
   does (the claims page shows FAIL, but no test supports the finding), **stopped** when no check
   fails but a cell raised (a build would stop, often at a refusal of lib's own, yet no check said
   why), **survived** otherwise.

Before the mutants, the same chapters run without any mutant: no cell may raise there (or the run
stops), and the tests that fail there (a stored full-data result that misses the paper's number)
cannot catch a mutant: only a test that passes without the mutant and fails with it does.

``make mutate`` runs every mutant and stores the outcome in ``results/mutation/last.json`` (with
its provenance), which the claims page reports; ``--quick`` runs only the mutants marked
``quick`` (``make test`` runs those through ``tests/book/test_mutants.py``), and ``--only ID``
chosen ones; neither stores anything. ``--extend`` brings the stored run up to date with the
table at the cost of what changed: a mutant whose entry is unchanged keeps its stored row, one
that only lists more chapters runs in those chapters alone and its row is merged with the stored
one (:func:`merge_rows`: the outcome rule ranks caught, shown, stopped, survived across all of a
mutant's chapters, so the merge equals a full run's row), and a new or edited mutant runs in
full; the stored run then says which rows it carried and the stored run's wall time
(``result["carried"]``), and its own wall time is both runs' (the computing behind its rows).
The nightly workflow runs ``make mutate``.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import json
import os
import shutil
import sys
import tempfile
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from lib import _env  # noqa: E402

MUTANTS_FILE = Path(__file__).with_name("mutants.toml")
#: Raised when the stored outcome's meaning changes (the mutants table or what counts as caught).
MUTATION_VERSION = 1
#: The fields of a mutant, and the outcomes.
_FIELDS = {"id", "function", "kind", "find", "replace", "chapters", "quick"}
OUTCOMES = ("caught", "shown", "stopped", "survived")
#: What the scratch copy holds: lib (mutated there), the chapters and what they read.
_COPIED = ("lib", "chapters", "results", "_config.yml", "references.bib", "pyproject.toml")


@dataclass(frozen=True)
class Mutant:
    """One planted bug: ``replace`` for ``find`` inside ``function`` (``path:name``)."""

    id: str
    function: str
    kind: str
    find: str
    replace: str
    chapters: tuple[str, ...]
    quick: bool = False

    @property
    def path(self) -> str:
        return self.function.split(":", 1)[0]

    @property
    def name(self) -> str:
        return self.function.split(":", 1)[1]


@dataclass
class ChapterRun:
    """What one chapter recorded: each check's ``passed`` and ``kind``, and the cells that
    raised (their first line of error)."""

    checks: dict[str, dict] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)

    def failed(self, kind: str = "test") -> list[str]:
        """The checks of ``kind`` (``test`` or ``demonstration``) that recorded FAIL."""
        return sorted(
            i for i, r in self.checks.items() if r["kind"] == kind and r["passed"] is False
        )


def mutants(path: Path = MUTANTS_FILE) -> list[Mutant]:
    """The mutants of ``path``, validated: known fields, unique ids, existing chapters and files.

    Raises:
        ValueError: naming the mutant and the field.
    """
    raw = tomllib.loads(path.read_text(encoding="utf8")).get("mutant", [])
    out, seen = [], set()
    chapters = {p.stem for p in (ROOT / "chapters").glob("[0-9][0-9]_*.md")}
    for i, entry in enumerate(raw):
        where = f"{path.name} mutant {i + 1} ({entry.get('id', '?')})"
        unknown = set(entry) - _FIELDS
        missing = _FIELDS - {"quick"} - set(entry)
        if unknown or missing:
            raise ValueError(
                f"{where}: unknown fields {sorted(unknown)}, missing {sorted(missing)}"
            )
        if entry["id"] in seen:
            raise ValueError(f"{where}: the id is used twice")
        seen.add(entry["id"])
        if not set(entry["chapters"]) <= chapters or not entry["chapters"]:
            raise ValueError(f"{where}: chapters must name chapters, got {entry['chapters']}")
        if entry["find"] == entry["replace"]:
            raise ValueError(f"{where}: replace must differ from find")
        out.append(Mutant(**(entry | {"chapters": tuple(entry["chapters"])})))
    return out


def function_span(source: str, name: str) -> tuple[int, int]:
    """Character offsets of the module-level function ``name`` in ``source`` (its decorators
    excluded, its docstring included; of an overloaded function, the implementation).

    Raises:
        ValueError: when ``source`` defines no such function.
    """
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    # the last definition: the implementation after any typing.overload stubs
    found = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name]
    if not found:
        raise ValueError(f"no module-level function {name!r}")
    return starts[found[-1].lineno - 1], starts[found[-1].end_lineno]


def apply(mutant: Mutant, source: str) -> str:
    """``source`` with the mutant's edit applied inside its function.

    Raises:
        ValueError: when ``find`` does not occur exactly once in the function.
    """
    start, end = function_span(source, mutant.name)
    body = source[start:end]
    count = body.count(mutant.find)
    if count != 1:
        raise ValueError(
            f"mutant {mutant.id}: its text occurs {count} times in {mutant.function}, not once: "
            "tools/mutants.toml is out of date"
        )
    return source[:start] + body.replace(mutant.find, mutant.replace) + source[end:]


def scratch_copy(target: Path) -> Path:
    """The files a chapter needs, copied to ``target`` (the unpacked data linked, not copied)."""
    for name in _COPIED:
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, target / name, ignore=shutil.ignore_patterns("__pycache__"))
        elif src.exists():
            shutil.copy2(src, target / name)
    if (ROOT / "_data").exists():
        (target / "_data").symlink_to(ROOT / "_data")
    return target


#: A last cell that prints what the chapter recorded (the records also go to glue outputs, which
#: only myst-nb reads back).
_REPORT = (
    "import json as _json\n"
    "from lib.book import checks as _checks\n"
    "print('MUTATE-RECORDS ' + _json.dumps("
    "{k: {'kind': v['kind'], 'passed': v['passed']} for k, v in _checks._RECORDED.items()}))"
)


def run_chapter(copy: Path, chapter: str, timeout: int) -> ChapterRun:
    """Execute ``chapter`` of the scratch ``copy`` in a fresh kernel (fast mode, errors allowed)
    and read what it recorded."""
    import jupytext
    import nbformat
    from nbclient import NotebookClient

    path = copy / "chapters" / f"{chapter}.md"
    nb = jupytext.read(path)
    nb.cells.append(nbformat.v4.new_code_cell(_REPORT))
    saved = {k: os.environ.get(k) for k in ("PYTHONPATH", "BOOK_MODE", "BOOK_BUILD")}
    os.environ.update(PYTHONPATH=str(copy), BOOK_MODE="fast", BOOK_BUILD="1")
    try:
        NotebookClient(
            nb,
            timeout=timeout,
            kernel_name="python3",
            allow_errors=True,
            resources={"metadata": {"path": str(path.parent)}},
        ).execute()
    finally:
        for k, v in saved.items():
            os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)
    run = ChapterRun()
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                run.errors.append(f"{output['ename']}: {output['evalue']}"[:300])
            text = output.get("text", "") if output.get("name") == "stdout" else ""
            for line in text.splitlines():
                if line.startswith("MUTATE-RECORDS "):
                    run.checks = json.loads(line[len("MUTATE-RECORDS ") :])
    if not run.checks and not run.errors:
        run.errors.append("the chapter recorded no check")
    return run


def outcome(runs: dict[str, ChapterRun], failing: dict[str, list[str]]) -> tuple[str, list[str]]:
    """The outcome of a mutant and the checks that noticed it: ``caught`` when a test that passes
    without the mutant (``failing``: the checks that fail without it, by chapter) fails; else
    ``shown`` when such a demonstration fails (the claims page shows FAIL, but no test); else
    ``stopped`` when a cell raised; else ``survived``."""
    for kind, word in (("test", "caught"), ("demonstration", "shown")):
        found = sorted({t for c, r in runs.items() for t in r.failed(kind) if t not in failing[c]})
        if found:
            return word, found
    return ("stopped" if any(r.errors for r in runs.values()) else "survived"), []


def run_mutant(mutant: Mutant, copy: Path, timeout: int, failing: dict[str, list[str]]) -> dict:
    """Apply ``mutant`` in ``copy``, run its chapters, restore the file; the outcome as a row."""
    file = copy / mutant.path
    original = file.read_text(encoding="utf8")
    file.write_text(apply(mutant, original), encoding="utf8")
    start = time.perf_counter()
    try:
        runs = {c: run_chapter(copy, c, timeout) for c in mutant.chapters}
    finally:
        file.write_text(original, encoding="utf8")
    result, caught = outcome(runs, failing)
    return {
        "id": mutant.id,
        "function": mutant.function,
        "kind": mutant.kind,
        "chapters": list(mutant.chapters),
        "outcome": result,
        "failed_checks": caught,
        "errors": [e for r in runs.values() for e in r.errors][:3],
        "seconds": round(time.perf_counter() - start, 1),
    }


def baseline(copy: Path, chapters: set[str], timeout: int) -> dict[str, list[str]]:
    """Run ``chapters`` unmutated: no cell may raise. Returns each chapter's tests that fail
    without any mutant (a stored full-data result the paper's number is not met by, C19.full):
    only a test that passes here and fails under a mutant catches it.

    Raises:
        RuntimeError: naming the chapter and the errors.
    """
    out = {}
    for chapter in sorted(chapters):
        run = run_chapter(copy, chapter, timeout)
        if run.errors:
            raise RuntimeError(
                f"{chapter} without any mutant raised {run.errors}: fix the book before measuring "
                "its tests"
            )
        out[chapter] = run.failed() + run.failed("demonstration")
        tests = sum(r["kind"] == "test" for r in run.checks.values())
        failing = f", failing without a mutant: {', '.join(out[chapter])}" if out[chapter] else ""
        print(f"  baseline {chapter}: {tests} tests{failing}", flush=True)
    return out


def merge_rows(stored: dict, added: dict) -> dict:
    """A mutant's row over the chapters of both ``stored`` (its stored row) and ``added`` (a row
    of the same mutant in other chapters only), as :func:`outcome` would give over all of them:
    the higher outcome of the two in the order caught, shown, stopped, survived, with the checks
    of both where both are caught (or shown), the errors of both (at most three) and the seconds
    of both.

    Raises:
        ValueError: if the rows are of different mutants or share a chapter.
    """
    if stored["id"] != added["id"]:
        raise ValueError(f"rows of different mutants: {stored['id']!r} and {added['id']!r}")
    if set(stored["chapters"]) & set(added["chapters"]):
        raise ValueError(f"mutant {stored['id']}: the rows share chapters, so they cannot merge")
    rank = {o: i for i, o in enumerate(OUTCOMES)}
    best = min(stored["outcome"], added["outcome"], key=rank.__getitem__)
    found = sorted({c for r in (stored, added) if r["outcome"] == best for c in r["failed_checks"]})
    return stored | {
        "chapters": list(stored["chapters"]) + list(added["chapters"]),
        "outcome": best,
        "failed_checks": found,
        "errors": (stored["errors"] + added["errors"])[:3],
        "seconds": round(stored["seconds"] + added["seconds"], 1),
    }


def extension(table: list[Mutant], stored: dict | None) -> dict[str, tuple[str, ...] | None]:
    """What ``--extend`` runs of each mutant of ``table``, given the stored run's settings and
    result (``None`` when there is none): ``()`` nothing (its stored row stands), the chapters it
    newly lists (its entry otherwise unchanged), or ``None`` all of it (a new or edited mutant)."""
    before = {m["id"]: m for m in (stored or {}).get("settings", {}).get("mutants", [])}
    rows = {r["id"] for r in (stored or {}).get("result", {}).get("mutants", [])}
    out: dict[str, tuple[str, ...] | None] = {}
    for m in table:
        entry = m.__dict__ | {"chapters": list(m.chapters)}
        old = before.get(m.id)
        if old is None or m.id not in rows:
            out[m.id] = None
        elif old == entry:
            out[m.id] = ()
        elif {k: v for k, v in old.items() if k != "chapters"} == {
            k: v for k, v in entry.items() if k != "chapters"
        } and set(old["chapters"]) <= set(m.chapters):
            out[m.id] = tuple(c for c in m.chapters if c not in old["chapters"])
        else:
            out[m.id] = None
    return out


def summary(rows: list[dict]) -> dict:
    """The counts of each outcome and the share caught by a test."""
    counts = {o: sum(r["outcome"] == o for r in rows) for o in OUTCOMES}
    return {"mutants": len(rows), **counts, "caught_share": counts["caught"] / len(rows)}


def _stored_run() -> dict | None:
    """The stored run of ``make mutate`` as JSON, or ``None`` when there is none of this
    :data:`MUTATION_VERSION`."""
    stored_file = ROOT / "results" / "mutation" / "last.json"
    if not stored_file.exists():
        return None
    previous = json.loads(stored_file.read_text(encoding="utf8"))
    return previous if previous.get("version") == MUTATION_VERSION else None


def _result(
    chosen: list[Mutant], plan: dict, computed: dict[str, dict], previous: dict | None
) -> dict:
    """The rows of ``chosen`` (computed, carried from ``previous`` or merged with its row, as
    ``plan`` says: :func:`extension`), their summary, and what was carried."""
    stored_rows = {r["id"]: r for r in (previous or {}).get("result", {}).get("mutants", [])}
    rows = []
    for m in chosen:
        if plan[m.id] is None:
            rows.append(computed[m.id])
        elif plan[m.id] == ():
            rows.append(stored_rows[m.id])
        else:
            merged = merge_rows(stored_rows[m.id], computed[m.id])
            rows.append(merged | {"chapters": list(m.chapters)})
    result: dict = {"summary": summary(rows), "mutants": rows}
    if previous is not None:  # what this run took from the stored one
        result["carried"] = {
            "from_commit": previous["provenance"].get("commit"),
            "wall_s": previous["provenance"]["wall_s"],
            "rows": [m.id for m in chosen if plan[m.id] == ()],
            "extended": [m.id for m in chosen if plan[m.id]],
        }
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python tools/mutate.py",
        description="Plant each mutant of tools/mutants.toml in a scratch copy of lib and run the "
        "chapters it touches: does a test of the ledger fail?",
    )
    parser.add_argument("--quick", action="store_true", help="only the mutants marked quick")
    parser.add_argument("--only", nargs="+", metavar="ID", help="only these mutants")
    parser.add_argument(
        "--extend",
        action="store_true",
        help="run only what the table changed since the stored run, and store the merged run",
    )
    parser.add_argument(
        "--timeout", type=int, default=900, help="seconds a cell may run (default 900)"
    )
    args = _env.parse_args(parser, argv)
    if args.extend and (args.only or args.quick):
        parser.error("--extend runs what the table changed: not with --only or --quick")
    table = chosen = mutants()
    if args.only:
        unknown = set(args.only) - {m.id for m in chosen}
        if unknown:
            parser.error(f"unknown mutants: {sorted(unknown)}")
        chosen = [m for m in chosen if m.id in args.only]
    if args.quick:
        chosen = [m for m in chosen if m.quick]
    stores = not (args.quick or args.only)
    previous, plan = None, {m.id: None for m in chosen}
    if args.extend:
        previous = _stored_run()
        plan = extension(table, previous)
    runs = [
        m if plan[m.id] is None else dataclasses.replace(m, chapters=plan[m.id])
        for m in chosen
        if plan[m.id] != ()
    ]
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="book-mutate-") as tmp:
        copy = scratch_copy(Path(tmp))
        for m in runs:  # every edit is checked before any chapter runs
            apply(m, (copy / m.path).read_text(encoding="utf8"))
        print(f"{len(runs)} mutants; the chapters without them first", flush=True)
        failing = baseline(copy, {c for m in runs for c in m.chapters}, args.timeout)
        computed = {}
        for m in runs:
            r = computed[m.id] = run_mutant(m, copy, args.timeout, failing)
            why = ", ".join(r["failed_checks"]) or "; ".join(r["errors"])[:120]
            print(f"  {r['outcome']:8} {m.id} ({m.kind}, {r['seconds']} s) {why}", flush=True)
    result = _result(chosen, plan, computed, previous)
    s = result["summary"]
    print(
        f"caught by a test: {s['caught']} of {s['mutants']} ({s['caught_share']:.0%}); "
        f"shown by a demonstration only: {s['shown']}; stopped a chapter: {s['stopped']}; "
        f"survived: {s['survived']}"
    )
    if stores:
        from lib.experiments import store

        settings = {"mutants": [m.__dict__ | {"chapters": list(m.chapters)} for m in chosen]}
        stored = store.save(
            "mutation",
            "last",
            MUTATION_VERSION,
            settings,
            result,
            # a merged run took this run's time and the stored run's, whose rows it carries
            wall_s=time.perf_counter() - start + result.get("carried", {}).get("wall_s", 0.0),
        )
        print(f"stored {stored.path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
