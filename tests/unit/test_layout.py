"""The hand-kept lists of the package layout agree with the tree: every public module of ``lib``,
``lib.book``, ``lib.experiments`` and ``lib.experiments.noise`` is in its package's ``__all__``,
reachable as an attribute after ``import lib`` (the packages load submodules on first use), and
documented on the API page, and so is every module of ``lib.training`` (whose ``__all__`` is its
API, each name taken from one of its modules); ``lib.datasets`` re-exports exactly the public
names of its modules, each documented on the API page; every repository path the prose, the
docstrings and the comments name in a code span exists."""

import importlib
import pkgutil
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("lib", "lib.book", "lib.experiments", "lib.experiments.noise")
#: Packages whose ``__all__`` is an API re-exported from their modules, not a list of modules.
API_PACKAGES = ("lib.training",)
#: Packages whose ``__all__`` re-exports the public names of their modules (``datasets.load_mnist``)
#: rather than naming the modules.
FACADES = ("lib.datasets",)


def public_modules(package: str) -> set[str]:
    path = ROOT.joinpath(*package.split("."))
    return {m.name for m in pkgutil.iter_modules([str(path)]) if not m.name.startswith("_")}


@pytest.mark.parametrize("package", PACKAGES)
def test_all_names_every_public_module_and_each_resolves(package):
    module = importlib.import_module(package)
    assert set(module.__all__) == public_modules(package)
    for name in module.__all__:
        assert getattr(module, name).__name__ == f"{package}.{name}"
    with pytest.raises(AttributeError, match="no attribute 'nonexistent'"):
        module.nonexistent  # noqa: B018


@pytest.mark.parametrize("package", FACADES)
def test_a_facade_exports_the_public_names_of_its_modules(package):
    module = importlib.import_module(package)
    names = [
        name
        for m in sorted(public_modules(package))
        for name in importlib.import_module(f"{package}.{m}").__all__
    ]
    assert sorted(module.__all__) == sorted(names) and len(set(names)) == len(names)
    for m in public_modules(package):
        sub = importlib.import_module(f"{package}.{m}")
        assert getattr(module, m) is sub
        for name in sub.__all__:
            assert getattr(module, name) is getattr(sub, name)


def test_the_api_page_documents_every_public_module():
    documented = set(re.findall(r"automodule:: ([\w.]+)", (ROOT / "chapters/api.md").read_text()))
    modules = {f"{p}.{m}" for p in PACKAGES + API_PACKAGES + FACADES for m in public_modules(p)} - {
        "lib.book",
        "lib.experiments",
        "lib.experiments.noise",
        *FACADES,
    }
    assert modules == documented


# --- paths named in the prose, the docstrings and the comments ---------------------------------

#: What names repository paths for a reader: lib, the tooling, the extension, the tests, the
#: contributor's guide, the README and the chapters (``CHANGELOG.md`` records paths as they were).
DOCUMENTED = (
    "lib/**/*",
    "tools/**/*",
    "_ext/**/*",
    "tests/**/*.py",
    "CONTRIBUTING.md",
    "README.md",
    "chapters/*.md",
)
TEXT_SUFFIXES = {".py", ".md", ".toml", ".js", ".cjs", ".css", ".mplstyle", ".yml"}
#: A code span: ``double`` or `single` backticks.
CODE_SPAN = re.compile(r"``(.+?)``|`([^`\n]+)`")
#: A repository path inside a code span, up to the first character a path does not hold; a path
#: that goes on with a placeholder (``tests/unit/test_<module>.py``) names its folder.
REPO_PATH = re.compile(
    r"(?<![\w./-])((?:lib|tools|tests|_ext|_static|_latex|binder)/[\w./-]*)([<*{]?)"
)
#: The configuration files at the top of the tree, whose comments name paths without backticks
#: (and no path that is only an example).
CONFIGURATION = (
    "CITATION.cff",
    "Makefile",
    "environment.yml",
    "jupytext.toml",
    "package.json",
    "pyproject.toml",
    "_config.yml",
    "_toc.yml",
    "requirements*.txt",
    ".ci/run",
    ".github/**/*.yml",
)
#: A test file named from the ``tests`` folder (``ext/test_launch.py``).
TEST_PATH = re.compile(r"(?<![\w./-])((?:unit|ext|book|browser|pdf)/test_\w+\.py)")


def documented_files() -> list[Path]:
    files = {p for pattern in DOCUMENTED for p in ROOT.glob(pattern)}
    return sorted(
        p
        for p in files
        if p.is_file()
        and p.suffix in TEXT_SUFFIXES
        and not p.name.endswith(".min.js")
        and "__pycache__" not in p.parts
    )


def missing_paths(text: str, spans: bool = True) -> list[str]:
    """The repository paths that ``text`` names in code spans (anywhere, without ``spans``) and
    that do not exist in the tree."""
    missing = []
    for span in CODE_SPAN.finditer(text) if spans else [None]:
        code = (span.group(1) or span.group(2)) if span else text
        found = [
            path[: path.rindex("/") + 1] if placeholder else path.rstrip(".:")
            for path, placeholder in REPO_PATH.findall(code)
        ]
        found += ["tests/" + path for path in TEST_PATH.findall(code)]
        missing += [path for path in found if not (ROOT / path).exists()]
    return missing


def test_missing_paths_finds_stale_paths_in_either_kind_of_code_span():
    text = "`lib/book/config.py`, ``tests/test_pins.py``, `unit/test_gone.py`, `lib/runtime.py`"
    assert missing_paths(text) == [
        "lib/book/config.py",
        "tests/test_pins.py",
        "tests/unit/test_gone.py",
    ]
    assert missing_paths("``python tools/lint_chapters.py [chapters/x.md]``, `lib/book/`.") == []
    assert missing_paths("`tests/unit/test_<module>.py`, `tools/gone/<x>.py`") == ["tools/gone/"]
    assert missing_paths("tests/test_pins.py outside a code span is prose") == []
    assert missing_paths("# tests/test_pins.py checks it", spans=False) == ["tests/test_pins.py"]


def test_every_path_named_in_a_code_span_exists():
    """A file moved or renamed leaves no pointer to its old place in the prose, a docstring or a
    comment (tests/test_batched.py after the tests moved into folders, say). This file names stale
    paths on purpose, in the test above."""
    files = [p for p in documented_files() if p != Path(__file__).resolve()]
    stale = [
        f"{path.relative_to(ROOT)}: {name}"
        for path in files
        for name in missing_paths(path.read_text(encoding="utf8"))
    ]
    assert len(files) > 150  # the globs found the sources
    assert not stale, stale


def test_every_path_a_configuration_file_names_exists():
    """The same for the comments of the configuration files (requirements.txt naming
    tests/test_pins.py after the tests moved into folders, say), backticks or not."""
    files = sorted({p for pattern in CONFIGURATION for p in ROOT.glob(pattern) if p.is_file()})
    stale = [
        f"{path.relative_to(ROOT)}: {name}"
        for path in files
        for name in missing_paths(path.read_text(encoding="utf8"), spans=False)
    ]
    assert len(files) >= 12  # the globs found them
    assert not stale, stale


# --- issue numbers a reader can open -------------------------------------------------------------

#: "issue 42", "Issue 26", "#27" (also in parentheses): a reference to an issue by its number.
ISSUE_NUMBER = re.compile(r"\b[Ii]ssues?\s+#?\d+|(?<![\w&/#-])#\d{1,5}\b(?![\w-])")
#: Words that do not name an upstream project when they stand before "issue <number>".
NOT_A_PROJECT = {"a", "an", "and", "as", "at", "book", "by", "for", "from", "in", "of", "on"}
NOT_A_PROJECT |= {"or", "our", "per", "project", "repository", "see", "that", "the", "this", "to"}


def internal_issue_references(text: str) -> list[str]:
    """The issue numbers ``text`` cites without the upstream project they belong to: a reader can
    open "Sphinx issue 11908" or "pytorch/pytorch issue 188792", not "issue 47" of a tracker they
    cannot see. A project's name, or "its" after one, stands right before "issue"."""
    found = []
    for match in ISSUE_NUMBER.finditer(text):
        before = re.search(r"([\w'./-]*\w)\s+$", text[max(0, match.start() - 80) : match.start()])
        word = before.group(1).lower().removesuffix("'s") if before else ""
        if match.group().startswith("#") or not word or word in NOT_A_PROJECT:
            found.append(match.group())
    return found


def test_internal_issue_references_are_told_from_upstream_ones():
    internal = (
        "Chapter 3 at version 3 (" + "issue 47 items 1-4); Issue 26 items 1, 2 landed.\nIssue 5 "
        "too, see issue 42, the book's issue 7 and #27."
    )
    assert internal_issue_references(internal) == [
        "issue 47",
        "Issue 26",
        "Issue 5",
        "issue 42",
        "issue 7",
        "#27",
    ]
    upstream = (
        "(a pinned patch of Sphinx 7.4.7, Sphinx\n  issue 11908), (MyST-NB issue 350), MathJax "
        "issue 3124, pytorch/pytorch issue 188792, pydata-sphinx-theme#2379 and its issue 2451; "
        'colours "#000000" and "#0072b2"'
    )
    assert internal_issue_references(upstream) == []


def test_the_changelog_and_the_tests_cite_no_internal_issue_number():
    """A public reader cannot open the project's internal issues: the changelog and the tests
    say what changed or what is tested instead. This file cites some on purpose, above."""
    files = [ROOT / "CHANGELOG.md"] + [
        p for p in sorted((ROOT / "tests").rglob("*.py")) if p != Path(__file__).resolve()
    ]
    cited = [
        f"{path.relative_to(ROOT)}: {ref}"
        for path in files
        for ref in internal_issue_references(path.read_text(encoding="utf8"))
    ]
    assert len(files) > 80  # the changelog and the tests were read
    assert not cited, cited


@pytest.mark.parametrize("package", API_PACKAGES)
def test_a_package_api_is_its_modules_names(package):
    module = importlib.import_module(package)
    home = {}
    for name in sorted(public_modules(package)):
        sub = importlib.import_module(f"{package}.{name}")
        for attr in sub.__all__:
            assert attr not in home, f"{attr} is in the __all__ of {home.get(attr)} and {name}"
            home[attr] = name
            getattr(sub, attr)
    for attr in module.__all__:
        assert getattr(module, attr) is getattr(
            importlib.import_module(f"{package}.{home[attr]}"), attr
        )


def test_the_contributing_guide_names_every_module():
    """CONTRIBUTING's "Every module" table names each module of lib, tools and the extension, and
    nothing that is not one."""
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf8")
    table = text[text.index("### Every module") :]
    table = table[: table.index("\n## ")]
    named = set(re.findall(r"^\| `([\w/.]+\.py)` \|", table, re.M))
    modules = {
        str(p.relative_to(ROOT))
        for folder in ("lib", "tools", "_ext")
        for p in (ROOT / folder).rglob("*.py")
        if "__pycache__" not in p.parts
    }
    assert sorted(modules - named) == [], "modules the guide does not name"
    assert sorted(named - modules) == [], "rows of the guide that name no module"


def _imports() -> dict[str, set[str]]:
    """Each module of lib and the modules of lib it imports (at its top or inside a function)."""
    import ast

    modules = {}
    for path in (ROOT / "lib").rglob("*.py"):
        name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        modules[name.removesuffix(".__init__")] = path
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf8"))):
            if isinstance(node, ast.ImportFrom):
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + [node.module] if node.module else base)
                if not node.level:
                    target = node.module or ""
                # `from . import x` imports the module x, not (only) its package
                names = [f"{target}.{a.name}" for a in node.names]
                found = [n for n in names if n in modules] or [target]
            elif isinstance(node, ast.Import):
                found = [a.name for a in node.names]
            else:
                continue
            graph[name] |= {t for t in found if t in modules and t != name}
    return graph


def test_no_import_runs_upward_and_none_forms_a_cycle():
    """lib's mathematics imports neither the book's machinery (lib.book) nor the experiments
    (lib.experiments), and no chain of imports among lib's modules (a package's ``__init__``
    importing its modules included) returns to where it started."""
    graph = _imports()
    upward = sorted(
        (m, t)
        for m, ts in graph.items()
        for t in ts
        if not m.startswith(("lib.book", "lib.experiments"))
        and t.startswith(("lib.book", "lib.experiments"))
    )
    assert upward == []
    edges = graph
    state: dict[str, int] = {}
    cycles = []

    def visit(m, path):
        state[m] = 1
        for t in sorted(edges[m]):
            if state.get(t) == 1:
                cycles.append(path[path.index(t) :] + [t])
            elif t not in state:
                visit(t, path + [t])
        state[m] = 2

    for m in sorted(edges):
        if m not in state:
            visit(m, [m])
    assert cycles == []


def test_every_module_of_lib_has_a_test_file_of_its_name():
    """``tests/unit/test_<module>.py``, or ``test_<package>_<module>.py`` for a module of a
    package (``lib/book/prose.py``: ``test_book_prose.py``; a leading underscore dropped)."""
    unit = ROOT / "tests" / "unit"
    missing = []
    for path in sorted((ROOT / "lib").rglob("*.py")):
        if path.name == "__init__.py" or "__pycache__" in path.parts:
            continue
        name, package = path.stem.lstrip("_"), path.parent.name
        if not any((unit / f"test_{n}.py").exists() for n in (name, f"{package}_{name}")):
            missing.append(str(path.relative_to(ROOT)))
    assert missing == []
