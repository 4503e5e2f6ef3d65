"""Static checks of the chapter sources: budgets, figure metadata, short cells, no path hacks."""

from __future__ import annotations

import io
import re
import statistics
import subprocess
import tokenize

import jupytext
import pytest

from conftest import FRONT_MATTER, ROOT

CHAPTERS = sorted(p for p in (ROOT / "chapters").glob("[0-9][0-9]_*.md"))


def code_cells(path):
    return [c for c in jupytext.read(path).cells if c.cell_type == "code"]


def logical_lines(source: str) -> int:
    """Python statements on their own lines: a call that ruff format wraps over several
    physical lines is one logical line, so the length rule measures code, not layout."""
    tokens = tokenize.generate_tokens(io.StringIO(source + "\n").readline)
    return sum(t.type == tokenize.NEWLINE for t in tokens)


def test_logical_lines_counts_statements_not_wrapping():
    assert logical_lines("x = 1\ny = f(\n    1,\n    2,\n)\n# note\n\nz") == 3


# A chapter executes within 90 s on the reference machine; the chapters that train models
# have 120 s.
MAX_BUDGET = {"03_memorization": 120, "05_max_affine_partition": 120}


@pytest.mark.parametrize("path", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_budget_declared_and_timeout_left_to_the_safety_net(path):
    """The cell timeout is derived from budget_seconds by the book's extension (at least 4 x the
    budget and 300 s); a chapter must not set a tighter one, which would break any loaded
    machine."""
    import yaml

    from book_sphinx.execution import cell_timeout

    meta = jupytext.read(path).metadata
    budget = meta.get("budget_seconds")
    limit = MAX_BUDGET.get(path.stem, 90)
    assert isinstance(budget, int) and 0 < budget <= limit, (
        f"{path.stem}: budget must be <= {limit} s"
    )
    assert "execution_timeout" not in (meta.get("mystnb") or {})
    config = yaml.safe_load((ROOT / "_config.yml").read_text())["sphinx"]["config"]

    class Config:
        book_timeout_factor = config["book_timeout_factor"]
        book_timeout_floor = config["book_timeout_floor"]
        book_full_timeout_factor = config["book_full_timeout_factor"]
        book_full_timeout_floor = config["book_full_timeout_floor"]

    fast = cell_timeout(Config, budget, "fast")
    assert fast == max(4 * budget, 300) and fast >= 4 * budget and fast >= 300
    assert cell_timeout(Config, budget, "full") > fast


@pytest.mark.parametrize("path", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_figures_have_caption_name_and_alt(path):
    figures = 0
    for c in code_cells(path):
        fig = c.metadata.get("mystnb", {}).get("figure")
        if "\nfig" in "\n" + c.source.splitlines()[-1] and fig is None:
            pytest.fail(f"figure cell without caption: {c.source[:60]!r}")
        if fig is None:
            continue
        figures += 1
        assert fig.get("caption", "").strip() and re.fullmatch(
            r"fig-[a-z0-9]+-[a-z0-9-]+", fig.get("name", "")
        )
        assert c.metadata["mystnb"].get("image", {}).get("alt", "").strip(), fig["name"]
        assert "set_title" not in c.source, "the caption is the title"
    assert figures >= 3


#: Tags that keep a cell's code out of view: removed from the page, or folded behind a toggle.
NOT_VISIBLE = {"remove-cell", "remove-input", "hide-input", "hide-cell"}


def visible(cell) -> bool:
    """A code cell whose code the page shows unfolded."""
    return not NOT_VISIBLE & set(cell.metadata.get("tags", []))


SEEDED = sorted(p for p in (ROOT / "chapters").glob("*.md") if "seed_everything(" in p.read_text())


@pytest.mark.parametrize("path", SEEDED, ids=[p.stem for p in SEEDED])
def test_pages_say_which_seeds_their_numbers_come_from(path):
    """A page that seeds its draws says so in its opening, before its first section: the seed it
    glues, and the seeds of any stored runs it reads (their experiment's settings, not the page's
    seed: a reader should not take the one for the other)."""
    text = path.read_text(encoding="utf8")
    setup_end = text.index("\n```\n", text.index("seed_everything(")) + 5
    opening = text[setup_end : text.index("\n## ", setup_end)]
    assert "{glue:text}`seed`" in opening, "the page's seed is said before its first section"
    if re.search(r"^from lib\.experiments import .*\b(conll|noise|trained)\b", text, re.M):
        assert re.search(r"seeds\s+\{glue:text\}`\w+`\s+to\s+\{glue:text\}`\w+`", opening), (
            "a page that reads stored training runs says their seeds"
        )


@pytest.mark.parametrize("path", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_cells_short_and_no_path_hacks(path):
    cells = code_cells(path)
    shown = [c for c in cells if visible(c)]  # a folded cell is not visible
    assert shown, "a chapter shows some of its code"
    assert statistics.median(logical_lines(c.source) for c in shown) <= 8, (
        "visible cells stay short"
    )
    first = cells[0]
    assert "remove-cell" in first.metadata.get("tags", [])
    assert "use_style()" in first.source and "seed_everything(" in first.source
    assert 'glue("seed"' in first.source, "the reproducibility page lists each chapter's seed"
    for c in cells:
        assert "sys.path" not in c.source
        assert not re.search(r"\bopen\(|read_(csv|json|text)\(|np\.load\(", c.source), c.source[:80]
        assert "plt.show" not in c.source and "import matplotlib.pyplot" not in c.source


#: What a removed cell may call: the glue and record functions, with arguments that only format.
GLUE_CALLS = {"glue", "glue_many", "record", "not_run"}
FORMATTING = {
    "say",  # a phrase of the chapter's table (lib.book.phrases): words chosen, nothing computed
    "fmt",
    "float",
    "int",
    "str",
    "bool",
    "len",
    "round",
    "tenpow",
    "versus",
    "joined",
    "repr",
    "dict",
    "list",
    "tuple",
    "sorted",
    "zip",
    "enumerate",
    "range",
    "abs",
    "min",
    "max",
    "sum",
    "any",
    "all",
    "map",
    "set",
}
STRING_METHODS = {
    "join",
    "format",
    "replace",
    "items",
    "values",
    "keys",
    "get",
    "upper",
    "lower",
    "capitalize",
    "strip",
    "removeprefix",
    "removesuffix",
    "title",
}


def computing_statements(source: str) -> list[str]:
    """Statements of a cell other than glue/record calls whose arguments only format values."""
    import ast

    found = []
    for statement in ast.parse(source).body:
        call = (
            statement.value
            if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)
            else None
        )
        name = getattr(call.func, "id", getattr(call.func, "attr", None)) if call else None
        if name not in GLUE_CALLS:
            found.append(ast.unparse(statement).splitlines()[0][:90])
            continue
        for node in ast.walk(call):
            if isinstance(node, ast.Call) and node is not call:
                inner = node.func
                if not (
                    getattr(inner, "id", None) in FORMATTING
                    or getattr(inner, "attr", None) in STRING_METHODS
                ):
                    found.append(f"{ast.unparse(inner)}(...) inside {name}")
    return found


@pytest.mark.parametrize(
    "path",
    [*CHAPTERS, ROOT / "chapters" / "atlas.md", ROOT / "chapters" / "epilogue.md"],
    ids=lambda p: p.stem,
)
def test_chapters_show_their_work(path):
    """A cell that computes a check or a number the prose relies on is visible or folded
    (hide-input), never removed: remove-cell is for the set-up cell and for cells that only glue or
    record (their arguments may format values, not compute them)."""
    hidden = {}
    for i, c in enumerate(code_cells(path)[1:], start=2):
        if "remove-cell" in c.metadata.get("tags", []):
            found = computing_statements(c.source)
            if found:
                hidden[f"code cell {i}"] = found[:3]
    assert not hidden, hidden


def maths_names(source: str) -> set[str]:
    """The names a chapter binds to a module of lib's mathematics (``from lib import lookup``,
    ``from lib.experiments import noise as noise_experiment``); ``lib.book`` is not mathematics."""
    import ast

    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module in ("lib", "lib.experiments"):
            names |= {a.asname or a.name for a in node.names if a.name != "book"}
    return names


def calls_maths(source: str, names: set[str]) -> bool:
    """Whether the code calls a function of one of the modules bound to ``names``."""
    import ast

    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            func = node.func
            while isinstance(func, ast.Attribute):
                func = func.value
            if isinstance(func, ast.Name) and func.id in names and func is not node.func:
                return True
    return False


def construction_cells(path) -> list[str]:
    """The visible code cells outside exercise solutions that call a module of lib's mathematics
    (the first line of each)."""
    nb = jupytext.read(path)
    names = maths_names("\n".join(c.source for c in nb.cells if c.cell_type == "code"))
    found, in_solution = [], False
    for c in nb.cells:
        if c.cell_type == "markdown":
            for m in re.finditer(r"\{solution-(start|end)\}", c.source):
                in_solution = m.group(1) == "start"
        elif not in_solution and visible(c) and calls_maths(c.source, names):
            found.append(c.source.splitlines()[0])
    return found


def test_construction_cells_finds_visible_calls_outside_solutions(tmp_path):
    path = tmp_path / "x.md"
    path.write_text(
        FRONT_MATTER.format(extra="") + "\n"
        "```{code-cell} ipython3\n:tags: [remove-cell]\n\nfrom lib import lookup, maxaffine\n"
        "from lib.book import plotting\nfrom lib.experiments import noise as nx\n```\n\n"
        "```{code-cell} ipython3\nc = maxaffine.grid_centres(4, 2)\n```\n\n"
        "```{code-cell} ipython3\n:tags: [hide-input]\n\nf = lookup.soft_lookup(c)\n```\n\n"
        "```{code-cell} ipython3\nfig = plotting.figure('half')\n```\n\n"
        "```{code-cell} ipython3\nt = nx.trend_test([1], [2])\n```\n\n"
        "```{code-cell} ipython3\nw = lookup.wave\n```\n\n"
        ":::{solution-start} ex\n:::\n\n"
        "```{code-cell} ipython3\nc = maxaffine.grid_centres(8, 2)\n```\n\n"
        ":::{solution-end}\n:::\n"
    )
    assert construction_cells(path) == [
        "c = maxaffine.grid_centres(4, 2)",
        "t = nx.trend_test([1], [2])",
    ]


@pytest.mark.parametrize("path", [*CHAPTERS, ROOT / "chapters" / "atlas.md"], ids=lambda p: p.stem)
def test_chapters_show_their_constructions(path):
    """Every chapter shows, unfolded, at least three cells that build or check its construction
    with lib's mathematics (exercise solutions do not count): the code is the point where it
    builds the lookup, the partition or the layer; folding is for plotting."""
    found = construction_cells(path)
    assert len(found) >= 3, found


#: Tags that fold a cell's code behind a toggle (the page shows its output).
FOLDED = {"hide-input", "hide-cell"}


def folded_computations(source: str, names: set[str]) -> list[str]:
    """What a folded cell computes rather than draws: calls of a module of lib's mathematics
    (``names``, from :func:`maths_names`), of torch, and of glue or record."""
    import ast

    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        func, parts = node.func, []
        while isinstance(func, ast.Attribute):
            parts.append(func.attr)
            func = func.value
        root = getattr(func, "id", None)
        if parts and root in names | {"torch"} or (not parts and root in GLUE_CALLS):
            found.append(ast.unparse(node.func))
    return sorted(set(found))


def test_folded_computations_finds_maths_torch_and_glue():
    names = {"boltzmann", "nx"}
    source = (
        "y = [boltzmann.boltz(a, beta=b) for b in betas]\n"
        "w = torch.softmax(t, dim=0)\nglue('x', 1)\nnx.results.load()\n"
        "fig, ax = plotting.figure('full')\nax.plot(np.linspace(0, 1, 3))\nfig"
    )
    assert folded_computations(source, names) == [
        "boltzmann.boltz",
        "glue",
        "nx.results.load",
        "torch.softmax",
    ]
    assert folded_computations("ax.plot(x, curves[0])\nfigures.slider(a, b)", names) == []


@pytest.mark.parametrize(
    "path",
    [*CHAPTERS, ROOT / "chapters" / "atlas.md", ROOT / "chapters" / "epilogue.md"],
    ids=lambda p: p.stem,
)
def test_folded_cells_only_draw(path):
    """A folded cell draws a figure or lays out a table from values computed in view: the calls
    of lib's mathematics, of torch and of glue/record that produce what it shows sit in a
    visible cell before it, so that a reader sees the computation and folds away only the
    plotting."""
    nb = jupytext.read(path)
    names = maths_names("\n".join(c.source for c in nb.cells if c.cell_type == "code"))
    computing = {}
    for i, c in enumerate(code_cells(path), start=1):
        if FOLDED & set(c.metadata.get("tags", [])):
            found = folded_computations(c.source, names)
            if found:
                computing[f"code cell {i}"] = found
    assert not computing, computing


@pytest.mark.parametrize("path", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_prose_numbers_are_glued(path):
    """Prose cites computed results through {glue:text}; flag scientific notation typed by hand."""
    text = "\n".join(c.source for c in jupytext.read(path).cells if c.cell_type == "markdown")
    text = re.sub(r"\$[^$]*\$|`[^`]*`", "", text)  # maths and code are not results
    assert not re.findall(r"\b\d\.\d+e-?\d+\b", text)
    assert "glue:text" in text


def _text_files():
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    return [
        ROOT / f
        for f in tracked
        if f.endswith((".md", ".py", ".yml", ".toml", ".txt", ".bib")) or f.endswith("run")
    ]


def test_no_file_refers_to_a_path_outside_the_repository():
    """A reader has the repository and nothing beside it: no tracked text names a relative path
    with more parent steps than its file has folders above it; what a reader needs is in the
    repository, and the Sources page says what the book rests on."""
    climb = re.compile(r"(?<![\w./])((?:\.\./)+)[\w.-]")
    hits = []
    for path in _text_files():
        depth = len(path.relative_to(ROOT).parts) - 1  # folders between the file and the root
        for i, line in enumerate(path.read_text().splitlines(), 1):
            for m in climb.finditer(line):
                if m.group(1).count("../") > depth:
                    hits.append(f"{path.relative_to(ROOT)}:{i}: {line.strip()[:80]}")
    assert not hits, hits


def test_gamma_and_beta_are_inverse_temperatures():
    """One term, used consistently: every "temperature" in the book and lib is an inverse
    temperature, except where a sentence explains the word itself (a cold, sharp softmax)."""
    files = [
        *CHAPTERS,
        ROOT / "chapters" / "epilogue.md",
        ROOT / "intro.md",
        *sorted((ROOT / "lib").rglob("*.py")),
    ]
    bad = []
    for path in files:
        text = re.sub(r"\s+", " ", path.read_text())
        for m in re.finditer(r"(\w+)\s+(temperatures?)\b", text, flags=re.I):
            if m.group(1).lower() != "inverse" and "cold" not in text[m.end() : m.end() + 40]:
                bad.append(f"{path.name}: ...{text[max(0, m.start() - 40) : m.end() + 20]}...")
    assert not bad, bad


@pytest.mark.parametrize("path", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_only_verdicts_are_bold_among_glued_values(path):
    """A glued value reads as the prose around it (book.css undoes myst-nb's bold); a check's
    verdict is the one glued value set in bold, in the source: **{glue:text}`verdict-<id>`**."""
    text = path.read_text()
    verdicts = re.findall(r"\{glue:text\}`verdict-[^`]+`", text)
    assert verdicts, "a chapter states the verdicts of its checks"
    plain = [v for v in verdicts if f"**{v}**" not in text]
    assert not plain, f"verdicts not in bold: {plain[:3]}"
    bold = re.findall(r"\*\*\{glue(?::\w+)?\}`([^`]+)`\*\*", text)
    assert [b for b in bold if not b.startswith("verdict-")] == []
    css = (ROOT / "_static" / "book.css").read_text()
    assert ".bd-article span.pasted-text { font-weight: inherit; }" in css


#: Every page whose cells compute: the chapters, the atlas, the epilogue and the book's own pages.
COMPUTING_PAGES = sorted(
    p for p in (ROOT / "chapters").glob("*.md") if any(c.source.strip() for c in code_cells(p))
)


def defined_helpers(source: str) -> list[str]:
    """The functions and classes a cell defines (``def``, ``async def``, ``class``, any depth)."""
    import ast

    kinds = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    python = "\n".join(
        "" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines()
    )  # IPython magics are not Python
    return [n.name for n in ast.walk(ast.parse(python)) if isinstance(n, kinds)]


def test_defined_helpers_finds_every_definition():
    assert defined_helpers("def f(x):\n    def g():\n        pass\nclass C:\n    pass") == [
        "f",
        "C",
        "g",
    ]
    assert defined_helpers("rows = sorted(xs, key=lambda r: r.x)\ny = f(1)") == []


@pytest.mark.parametrize("path", COMPUTING_PAGES, ids=[p.stem for p in COMPUTING_PAGES])
def test_pages_define_no_helpers_lib_holds_them(path):
    """What a page's cells need lives in lib, where it is documented and tested; a cell calls it
    (a reader of the source reads calls, not a second library)."""
    found = {
        name: i
        for i, cell in enumerate(code_cells(path), start=1)
        for name in defined_helpers(cell.source)
    }
    assert not found, (
        f"{path.name} defines {sorted(found)} (code cells {sorted(set(found.values()))})"
    )
