"""`make lint` / `make format` for the chapters' code cells, with the project's ruff settings.

The chapters are MyST Markdown notebooks, which ruff does not read. For each notebook chapter this
joins its code cells, in order, into one Python module (so names defined in an earlier cell count
as defined) and runs ``ruff check`` on it; every finding is reported with the chapter, the cell
and the line in the chapter's source. ``--format`` rewrites each code cell with ``ruff format``
and saves the chapter in the form jupytext writes; without it, ``ruff format --check`` reports the
cells that would change.

Usage: ``python tools/lint_chapters.py [--format] [chapters/x.md ...]`` (default: every notebook
chapter). Exit status 1 when a finding or an unformatted cell remains.

The cells are checked as files of ``chapters/``, so ruff reads ``chapters/ruff.toml``: the
project's settings with the line length of a code box on the website (see that file).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import jupytext

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from lib import _env  # noqa: E402

RUFF = str(Path(sys.executable).parent / "ruff")
#: Rules that do not apply to notebook cells: a cell may import where it is used (E402), and its
#: last line may be an expression whose value the page shows (B018).
CELL_IGNORES = ["E402", "B018"]
#: Where ruff takes a cell to be, for its settings (chapters/ruff.toml).
CELLS = ROOT / "chapters"
CELL = str(CELLS / "cell.py")


def notebooks(paths: list[str]) -> list[Path]:
    if paths:
        return [Path(p).resolve() for p in paths]
    found = sorted((ROOT / "chapters").glob("*.md"))
    return [p for p in found if "jupytext:" in p.read_text(encoding="utf8").split("\n---\n", 1)[0]]


def code_cells(path: Path) -> list[tuple[int, str, int]]:
    """``(cell number, source, line of the source in the file)`` for each code cell."""
    nb = jupytext.read(path)
    lines = path.read_text(encoding="utf8").splitlines()
    cells, cursor = [], 0
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        first = cell.source.splitlines()[0] if cell.source.strip() else ""
        line = next((i for i in range(cursor, len(lines)) if lines[i] == first), cursor)
        cursor = line + 1
        cells.append((len(cells) + 1, cell.source, line + 1))
    return cells


def check(path: Path) -> list[str]:
    cells = code_cells(path)
    module, where = [], []
    for number, source, line in cells:
        module.append("# %% cell\n")
        where.append(None)
        for k, _ in enumerate(source.splitlines() or [""]):
            where.append((number, line + k))
        module.append(source.rstrip("\n") + "\n")
    text = "".join(module)
    with tempfile.NamedTemporaryFile("w", suffix=".py", dir=CELLS, delete=False) as tmp:
        tmp.write(text)
    try:
        out = subprocess.run(
            [
                RUFF,
                "check",
                "--output-format",
                "json",
                "--ignore",
                ",".join(CELL_IGNORES),
                tmp.name,
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
        )
        findings = json.loads(out.stdout or "[]")
    finally:
        Path(tmp.name).unlink()
    report = []
    for f in findings:
        row = f["location"]["row"] - 1
        cell, line = where[row] if 0 <= row < len(where) and where[row] else ("?", "?")
        report.append(
            f"{path.relative_to(ROOT)}:{line}: code cell {cell}: {f['code']} {f['message']}"
        )
    return report


def ruff_format(source: str) -> str:
    """The cell as ``make format`` writes it: imports sorted (ruff's I rules), then formatted."""
    out = subprocess.run(
        [RUFF, "check", "--select", "I", "--fix-only", "--stdin-filename", CELL, "-"],
        cwd=ROOT,
        input=source,
        capture_output=True,
        text=True,
    )
    if out.returncode != 0:
        raise SystemExit(f"ruff check --fix-only failed: {out.stderr.strip()}")
    out = subprocess.run(
        [RUFF, "format", "--stdin-filename", CELL, "-"],
        cwd=ROOT,
        input=out.stdout,
        capture_output=True,
        text=True,
    )
    if out.returncode != 0:
        raise SystemExit(f"ruff format failed: {out.stderr.strip()}")
    return out.stdout.rstrip("\n")


def unformatted(path: Path) -> list[str]:
    return [
        f"{path.relative_to(ROOT)}:{line}: code cell {number} is not formatted (make format)"
        for number, source, line in code_cells(path)
        if ruff_format(source) != source.rstrip("\n")
    ]


def reformat(path: Path) -> int:
    """Format every code cell and save the chapter as jupytext's contents manager writes it."""
    from jupyter_server.services.contents.filemanager import FileContentsManager
    from jupytext.sync_contentsmanager import build_sync_jupytext_contents_manager_class

    manager = build_sync_jupytext_contents_manager_class(FileContentsManager)(root_dir=str(ROOT))
    relative = path.relative_to(ROOT).as_posix()
    model = manager.get(relative, content=True, type="notebook")
    changed = 0
    for cell in model["content"]["cells"]:
        if cell["cell_type"] == "code":
            new = ruff_format(cell["source"])
            changed += new != cell["source"].rstrip("\n")
            cell["source"] = new
    manager.save(model, relative)
    return changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python tools/lint_chapters.py",
        description="ruff check (and format) of the chapters' code cells.",
    )
    parser.add_argument(
        "--format", action="store_true", help="rewrite the code cells with ruff format"
    )
    parser.add_argument(
        "chapters", nargs="*", help="chapter sources (default: every notebook chapter)"
    )
    args = _env.parse_args(parser, argv)
    fix = args.format
    paths = notebooks(args.chapters)
    problems = []
    for path in paths:
        if fix:
            n = reformat(path)
            if n:
                print(f"{path.relative_to(ROOT)}: {n} code cell(s) reformatted")
        else:
            problems += unformatted(path)
        problems += check(path)
    print("\n".join(problems) if problems else f"chapters: {len(paths)} notebooks, ruff clean")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
