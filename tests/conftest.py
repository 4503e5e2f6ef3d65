"""Shared fixtures: paths, a strict build of the real book, small temporary books and a small
registry of checks."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "_ext"))  # the book's Sphinx extension, for its tests in ext/
#: The test folders and the markers each test in them carries (added here, so folder and marker
#: cannot disagree): unit tests of lib and of the tooling; unit tests of the book's Sphinx
#: extension (``_ext/book_sphinx``), unmarked like the first, so that ``make unit`` runs both;
#: tests that build the book; browser checks of the built site; the PDF.
FOLDERS = {
    "unit": (),
    "ext": (),
    "book": ("build",),
    "browser": ("build", "browser"),
    "pdf": ("build", "pdf"),
}
#: The folders of tests that must not build the book.
UNBUILT = ("unit", "ext")
for _folder in FOLDERS:  # a test module may import helpers from another folder's module
    sys.path.insert(0, str(Path(__file__).parent / _folder))
BIN = Path(sys.executable).parent
JUPYTER_BOOK = str(BIN / "jupyter-book")
STRICT = ["build", ".", "-W", "-n", "--keep-going"]
FRONT_MATTER = """\
---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
    format_version: 0.13
kernelspec:
  display_name: Python 3
  language: python
  name: python3
{extra}---
"""


def required(message: str):
    """Skip a check whose tools or data are missing, with ``message`` saying what to install; or
    fail it where ``CI=true`` (``.ci/run``) makes it required."""
    if os.environ.get("CI", "").strip().lower() in ("1", "true", "yes"):
        pytest.fail(message + "; CI=true makes it required")
    pytest.skip(message)


def run_build(
    root: Path, env: dict | None = None, timeout: int = 900, builder: str = "html"
) -> subprocess.CompletedProcess:
    """Run the strict build in ``root`` with ``builder`` (``html``, or ``pdflatex`` for the PDF);
    return the completed process (stdout+stderr merged)."""
    full_env = {
        **os.environ,
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        **(env or {}),
    }
    return subprocess.run(
        [JUPYTER_BOOK, *STRICT, "--builder", builder],
        cwd=root,
        env=full_env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        timeout=timeout,
    )


@pytest.fixture(scope="session")
def site() -> Path:
    """The real book, built strictly (incrementally when the cache is valid); its HTML folder."""
    result = run_build(ROOT)
    assert result.returncode == 0, failure_report(result.stdout)
    return ROOT / "_build" / "html"


def failure_report(log: str, tail: int = 3000) -> str:
    """What a failed build said: its error and warning lines (a failing chapter's cause is one
    of them, far above the log's end), then the log's last ``tail`` characters."""
    flagged = [line for line in log.splitlines() if "ERROR" in line or "WARNING:" in line]
    return "\n".join(["errors and warnings:", *flagged[:60], "...", log[-tail:]])


class TempBook:
    """A one-chapter book in a temporary folder that uses the project's own ``_config.yml``."""

    def __init__(self, root: Path):
        self.root = root
        shutil.copy(ROOT / "_config.yml", root / "_config.yml")
        shutil.copy(ROOT / "references.bib", root / "references.bib")
        shutil.copytree(ROOT / "_ext", root / "_ext", ignore=shutil.ignore_patterns("__pycache__"))
        (root / "_static").mkdir()
        shutil.copy(ROOT / "_static" / "favicon.svg", root / "_static")  # named by _config.yml
        (root / "intro.md").write_text("# Temporary book\n\nA test book.\n")
        (root / "_toc.yml").write_text(
            "format: jb-book\nroot: intro\nchapters:\n  - file: chapters/probe\n"
        )
        (root / "chapters").mkdir()
        (root / "lib").mkdir()
        self.write_lib("VALUE = 1\n")

    def write_lib(self, text: str) -> None:
        (self.root / "lib" / "probe.py").write_text(text)

    def write_chapter(
        self, cells: list[str], front: str = "", name: str = "probe", title: str = "Probe"
    ) -> None:
        body = "\n".join(textwrap.dedent(c).strip("\n") + "\n" for c in cells)
        (self.root / "chapters" / f"{name}.md").write_text(
            FRONT_MATTER.format(extra=front) + f"\n# {title}\n\n" + body
        )

    def write_toc(self, *names: str) -> None:
        chapters = "".join(f"  - file: chapters/{n}\n" for n in names)
        (self.root / "_toc.yml").write_text(f"format: jb-book\nroot: intro\nchapters:\n{chapters}")

    def build(self, **env) -> subprocess.CompletedProcess:
        # the chapter imports the temporary lib/probe.py as `probe`
        return run_build(self.root, env={"PYTHONPATH": str(self.root / "lib"), **env}, timeout=600)

    def html(self, name: str = "probe") -> str:
        return (self.root / "_build" / "html" / "chapters" / f"{name}.html").read_text()


@pytest.fixture
def temp_book(tmp_path) -> TempBook:
    return TempBook(tmp_path)


#: The small registry of checks of the :func:`registry` fixture.
REGISTRY = """
["T1"]
section = "sec-a"
kind = "test"
basis = "paper"
scale = "sampled"
claim = "gap above {bound:.1f} in {{all}} cases"
expected = "<= 1"
threshold = "the statement"
why = "measured independently"
source = "K&S Thm 2"
verdict = ["holds at {bound}", "fails at {bound}"]

["D1"]
section = "sec-b"
kind = "demonstration"
basis = "definition"
scale = ["exact", "sampled"]
claim = "equal by construction"
expected = "0"
why = "an identity"
source = "book"

["V"]
variants = ["x", "y"]
section = "sec-c"
kind = "test"
basis = "paper"
scale = "fast subset"
claim = "declines ({where})"
expected = "p < 0.05"
threshold = "conventional level"
why = "trained models"
source = "LHSL"
"""


@pytest.fixture
def registry(tmp_path, monkeypatch):
    """A small registry of three entries (one with two variants) in place of the book's own
    (the tests of lib.book.registry and of lib.book.checks' records read it)."""
    from lib import _env
    from lib.book import checks
    from lib.book import registry as check_registry

    path = tmp_path / "checks.toml"
    path.write_text(REGISTRY, encoding="utf8")
    monkeypatch.setattr(check_registry, "REGISTRY_FILE", path)  # checks re-exports the registry
    monkeypatch.setattr(_env, "_CHECKS_FILE", path)  # BOOK_FORCE_FAIL is validated against it
    checks.registry.cache_clear()
    _env.check_ids.cache_clear()
    yield path
    checks.registry.cache_clear()
    _env.check_ids.cache_clear()


def pytest_collection_modifyitems(config, items):
    """Mark each test with its folder's markers (:data:`FOLDERS`); refuse a test outside those
    folders, and a unit or extension test (:data:`UNBUILT`) that builds the book."""
    here = Path(__file__).parent
    for item in items:
        folder = Path(item.path).relative_to(here).parts[0]
        if folder not in FOLDERS:
            raise pytest.UsageError(f"{item.nodeid}: tests live in tests/{{{','.join(FOLDERS)}}}/")
        for name in FOLDERS[folder]:
            item.add_marker(getattr(pytest.mark, name))
        if folder in UNBUILT and item.get_closest_marker("build"):
            raise pytest.UsageError(f"{item.nodeid} builds the book: move it to tests/book/")


@pytest.fixture
def glued(monkeypatch):
    """What the chapters glue, kept in a dict ``key -> (value, display)`` instead of myst-nb's
    outputs, with no check recorded before or after (the tests of lib.book.checks and
    lib.book.prose read it)."""
    from lib.book import checks

    store = {}
    import myst_nb

    monkeypatch.setattr(
        myst_nb, "glue", lambda key, value, display=True: store.__setitem__(key, (value, display))
    )
    checks._RECORDED.clear()
    yield store
    checks._RECORDED.clear()
