"""The strict build fails on every kind of dishonest page, and notices edits to lib/.

Each test builds a one-chapter book in a temporary folder with the project's own _config.yml.
"""

import re
import shutil

import pytest

from conftest import run_build

pytestmark = pytest.mark.build

CODE = "```{{code-cell}} ipython3\n{tags}{source}\n```\n"


def cell(source: str, tags: str = "") -> str:
    return CODE.format(tags=f":tags: [{tags}]\n\n" if tags else "", source=source.strip())


def test_clean_chapter_builds_with_figure_under_agg_and_no_progress_output(temp_book):
    """Control: a well-behaved chapter builds, even with MPLBACKEND=Agg and a progress bar."""
    temp_book.write_chapter(
        [
            cell(
                "from lib import runtime\nfrom lib.book import plotting\n"
                "from lib.book.prose import glue\nplotting.use_style()"
            ),
            cell("total = sum(runtime.progress(range(50), desc='loop'))\nglue('total', total)"),
            "The total is {glue:text}`total`.\n",
            "```{code-cell} ipython3\n---\nmystnb:\n  figure:\n    caption: A line.\n"
            "    name: fig-probe-line\n  image:\n    alt: A straight line.\n---\n"
            "fig, ax = plotting.figure('half')\nax.plot([0, 1], [0, 1])\nfig\n```\n",
            cell("raise ValueError('intended')", tags="raises-exception"),
        ]
    )
    result = temp_book.build(MPLBACKEND="Agg")
    assert result.returncode == 0, result.stdout[-4000:]
    html = temp_book.html()
    assert "The total is" in html and ">1225<" in html
    assert re.search(r'<img[^>]+alt="A straight line\."', html)
    assert "loop:" not in html and "it/s" not in html  # tqdm silent in builds
    assert "intended" in html  # the tagged error is shown, and allowed


def test_failing_cell_fails_build(temp_book):
    temp_book.write_chapter([cell("raise ValueError('boom-from-cell')")])
    result = temp_book.build()
    assert result.returncode != 0
    assert "boom-from-cell" in result.stdout


def test_cell_past_timeout_fails_build(temp_book):
    temp_book.write_chapter(
        [cell("import time\ntime.sleep(8)")], front="mystnb:\n  execution_timeout: 2\n"
    )
    result = temp_book.build()
    assert result.returncode != 0
    assert re.search(r"timed out|CellTimeoutError", result.stdout)


def test_stderr_output_fails_build(temp_book):
    temp_book.write_chapter([cell("import sys\nsys.stderr.write('stray-stderr-line\\n')")])
    result = temp_book.build()
    assert result.returncode != 0
    assert "stderr was found in the cell outputs" in result.stdout


def test_warning_fails_build(temp_book):
    temp_book.write_chapter(
        [
            cell("from lib.book.prose import glue\nglue('present', 1.0)"),
            "Missing key: {glue:text}`absent`.\n",
        ]
    )
    result = temp_book.build()
    assert result.returncode != 0
    assert "'absent'" in result.stdout


def test_unresolved_reference_fails_build(temp_book):
    temp_book.write_chapter([cell("x = 1"), "See {numref}`fig-does-not-exist`.\n"])
    result = temp_book.build()
    assert result.returncode != 0
    assert "fig-does-not-exist" in result.stdout


def test_editing_lib_reexecutes_chapter(temp_book):
    temp_book.write_chapter(
        [
            cell(
                "import uuid\nimport probe\nfrom lib.book.prose import glue\n"
                "glue('value', probe.VALUE)\nglue('run', uuid.uuid4().hex)"
            ),
            "Value {glue:text}`value`, run {glue:text}`run`.\n",
        ]
    )

    def shown():
        m = re.search(
            r"Value <span[^>]*>(\d+)</span>, run <span[^>]*>([0-9a-f]{32})</span>", temp_book.html()
        )
        assert m, temp_book.html()[-2000:]
        return m.groups()

    assert temp_book.build().returncode == 0
    value1, run1 = shown()
    assert temp_book.build().returncode == 0
    assert shown() == (value1, run1)  # nothing changed: served from the cache, not re-executed
    temp_book.write_lib("VALUE = 2\n")
    result = temp_book.build()
    assert result.returncode == 0, result.stdout[-3000:]
    value3, run3 = shown()
    assert value3 == "2" and run3 != run1  # lib/ changed: cache cleared, chapter re-executed


def test_stderr_in_a_removed_cell_fails_build_naming_chapter_and_cell(temp_book):
    """myst-nb checks only rendered outputs; the extension checks every cell of the executed
    notebook."""
    temp_book.write_chapter(
        [
            cell("x = 1"),
            cell(
                "import sys  # quiet set-up\nsys.stderr.write('hidden-stderr-line\\n')",
                tags="remove-cell",
            ),
        ]
    )
    result = temp_book.build()
    assert result.returncode != 0
    line = next(ln for ln in result.stdout.splitlines() if "wrote to stderr" in ln)
    assert (
        "chapters/probe" in line and "code cell 2" in line and "import sys  # quiet set-up" in line
    )
    assert "hidden-stderr-line" in line


def test_failing_cell_is_named_in_one_line_without_a_build_traceback(temp_book):
    temp_book.write_chapter(
        [cell("x = 1"), cell("y = 2  # the culprit\nraise KeyError('missing-key')")]
    )
    result = temp_book.build()
    assert result.returncode != 0
    line = next(ln for ln in result.stdout.splitlines() if "failed at" in ln)
    assert "chapters/probe" in line and "code cell 2" in line and "y = 2  # the culprit" in line
    assert "KeyError" in line and "missing-key" in line
    assert (
        "There was an error in building your book" not in result.stdout
    )  # no crash of the build itself
    assert not (temp_book.root / "_build" / "html" / "chapters" / "probe.html").exists()


@pytest.mark.parametrize(
    "code, cause",
    [
        ("import os\nos.abort()", "SIGABRT"),
        ("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)", "out-of-memory"),
    ],
)
def test_dead_kernel_is_named_and_its_stale_page_removed(temp_book, code, cause):
    temp_book.write_chapter([cell("x = 1"), cell("print('fine')")])
    assert temp_book.build().returncode == 0
    page = temp_book.root / "_build" / "html" / "chapters" / "probe.html"
    assert page.is_file()
    temp_book.write_chapter([cell("x = 1"), cell(f"# about to die\n{code}")])
    result = temp_book.build()
    assert result.returncode != 0
    line = next(ln for ln in result.stdout.splitlines() if "failed at" in ln)
    assert (
        "chapters/probe" in line
        and "code cell 2" in line
        and "# about to die" in line
        and cause in line
    )
    assert "Traceback" not in result.stdout
    assert not page.exists(), "the previous build's page of the failed chapter is still served"


def test_timeout_is_a_safety_net_derived_from_the_budget(temp_book):
    """budget_seconds: 1 gives a cell timeout of max(4 x 1, floor) s: a 3 s cell passes; an explicit
    execution_timeout still applies (the timeout test above)."""
    temp_book.write_chapter([cell("import time\ntime.sleep(3)")], front="budget_seconds: 1\n")
    result = temp_book.build(BOOK_MODE="fast")
    assert result.returncode == 0, result.stdout[-3000:]


def test_renamed_chapter_rebuilds_like_a_clean_build(temp_book, tmp_path_factory):
    """After renaming a chapter and reordering the toc, an incremental build equals a clean one."""
    for name, title in (("alpha", "Alpha"), ("beta", "Beta"), ("gamma", "Gamma")):
        temp_book.write_chapter([cell(f"x = '{name}'")], name=name, title=title)
    (temp_book.root / "chapters" / "probe.md").unlink(missing_ok=True)
    temp_book.write_toc("alpha", "beta", "gamma")
    assert temp_book.build().returncode == 0
    (temp_book.root / "chapters" / "beta.md").rename(temp_book.root / "chapters" / "delta.md")
    temp_book.write_toc("gamma", "delta", "alpha")
    result = temp_book.build()
    assert result.returncode == 0, result.stdout[-3000:]
    assert "rebuilding the HTML from clean" in result.stdout

    clean = tmp_path_factory.mktemp("clean")
    shutil.copytree(
        temp_book.root, clean, dirs_exist_ok=True, ignore=shutil.ignore_patterns("_build")
    )
    assert run_build(clean, env={"PYTHONPATH": str(clean / "lib")}).returncode == 0

    def pages(root):
        html = root / "_build" / "html"
        return {
            p.relative_to(html).as_posix(): re.findall(r'href="([^"#]+\.html)[^"]*"', p.read_text())
            for p in html.rglob("*.html")
            if "_sources" not in p.parts
        }

    incremental, fresh = pages(temp_book.root), pages(clean)
    assert set(incremental) == set(fresh) and "chapters/beta.html" not in incremental
    for page, links in fresh.items():
        assert incremental[page] == links, page


def test_fuzzy_links_are_not_made(temp_book):
    temp_book.write_chapter(
        [cell("x = 1"), "Our notes (notes.md §2.4), the file setup.py and https://example.org.\n"]
    )
    assert temp_book.build().returncode == 0
    hrefs = re.findall(r'href="([^"]+)"', temp_book.html())
    assert "https://example.org" in hrefs
    assert not [h for h in hrefs if re.fullmatch(r"http://[\w.-]+\.(md|py)/?", h)]


def test_aggregate_pages_ignore_what_the_book_did_not_record(temp_book):
    """A chapter that glues a figure and numpy scalars with plain myst_nb.glue does not break the
    checks and budget tables; a figure pasted into another page shows."""
    temp_book.write_chapter(
        [
            cell(
                "import numpy as np\nfrom myst_nb import glue as nb_glue\n"
                "from lib.book import plotting\nfrom lib.book.checks import record\n"
                "from lib.book.prose import glue\n"
                "plotting.use_style()\nglue('seed', 3)\n"
                "fig, ax = plotting.figure('half')\nax.plot([0, 1], [1, 0])\n"
                "nb_glue('probe_fig', fig, display=False)\n"
                "nb_glue('np_value', np.float64(2.5), display=False)\n"
                "record('C13', 'one equals one', True)"
            ),
            "(sec-maxaffine-partitions)=\n## The section of C13\n",
        ],
        front="budget_seconds: 30\n",
    )
    (temp_book.root / "chapters" / "claims.md").write_text(
        "# Claims\n\n```{checks-table}\n```\n\n```{budget-table}\n```\n\n"
        "Pasted from the probe page:\n\n```{glue:any} probe_fig\n:doc: probe.md\n```\n"
    )
    temp_book.write_toc("probe", "claims")
    result = temp_book.build()
    assert result.returncode == 0, result.stdout[-4000:]
    html = temp_book.html("claims")
    assert re.search(r'href="probe.html#sec-maxaffine-partitions">C13<', html), html[:3000]
    assert "within budget" in html and "one equals one" in html
    srcs = re.findall(r'<img[^>]+src="([^"]+)"', html)
    assert srcs and all(
        (temp_book.root / "_build" / "html" / "chapters" / s).resolve().is_file() for s in srcs
    )


def test_a_malformed_record_is_named(temp_book):
    temp_book.write_chapter(
        [cell("from myst_nb import glue\nglue('check-X1', {'not': 'json text'}, display=False)")]
    )
    (temp_book.root / "chapters" / "claims.md").write_text("# Claims\n\n```{checks-table}\n```\n")
    temp_book.write_toc("probe", "claims")
    result = temp_book.build()
    assert result.returncode != 0
    assert re.search(
        r"chapters/probe: glued value 'check-X1' is not a record written by "
        r"lib\.book\.checks\.record",
        result.stdout,
    ), result.stdout[-3000:]


def test_an_output_the_page_cannot_show_fails_build(temp_book):
    """An output with no MIME type the builder can render (a plotly figure's JSON alone, as
    ``fig.show()`` leaves it without a renderer) is an empty box on the page: the strict build
    fails on myst-nb's warning instead of letting it through."""
    temp_book.write_chapter(
        [
            cell(
                "from IPython.display import publish_display_data\n"
                "publish_display_data("
                "{'application/vnd.plotly.v1+json': {'data': [], 'layout': {}}})"
            )
        ]
    )
    result = temp_book.build()
    assert result.returncode != 0
    assert "unknown_mime_type" in result.stdout or "No renderer" in result.stdout, result.stdout[
        -3000:
    ]


def test_exercise_with_a_computing_solution_builds_folded(temp_book):
    """The chapters' exercise pattern (sphinx-exercise): an ``exercise`` box, then a gated
    ``solution-start`` ... ``solution-end`` around a code cell. The strict build runs the cell, the
    solution is folded (sphinx-togglebutton's ``dropdown``), refers to its exercise by number and
    holds the cell's output. A folded proof box reads "Proof sketch" as its title."""
    temp_book.write_chapter(
        [
            ":::{exercise}\n:label: ex-probe\n\nCompute $6 \\times 7$.\n:::\n",
            ":::{solution-start} ex-probe\n:class: dropdown\n:::\n",
            "The product, computed:\n",
            cell("print(6 * 7)"),
            ":::{solution-end}\n:::\n",
            "```{prf:proof}\n:class: dropdown\n\n*Sketch.* Multiply.\n```\n",
        ]
    )
    result = temp_book.build()
    assert result.returncode == 0, result.stdout[-3000:]
    html = temp_book.html()
    solution = re.search(r'<div class="solution[^"]*"[^>]*>.*?42', html, re.S)
    assert solution, html[-3000:]
    assert "dropdown" in solution.group(0).split(">", 1)[0]
    assert re.search(r"Solution to.*?Exercise 1", solution.group(0), re.S)
    # a folded proof gets a title to click (sphinx-togglebutton folds a box under its title)
    proof = re.search(r'<div class="proof dropdown admonition"[^>]*>\s*<p[^>]*>([^<]*)<', html)
    assert proof and proof.group(1) == "Proof sketch", html[-2000:]
    assert "Proof. " not in html


def _links(html: str) -> list[str]:
    """The page's stylesheet and script links into _static, in order."""
    return re.findall(r'(?:href|src)="(?:\.\./)?_static/([^"]+)"', html)


def test_a_notebook_beside_its_chapter_is_ignored_and_the_site_kept(temp_book):
    """The page's own download saved beside its source: one line says it is ignored, the build
    succeeds and the site stays (myst-nb crashed on two sources after the site was emptied)."""
    temp_book.write_chapter([cell("print('from the markdown source')")])
    assert temp_book.build().returncode == 0
    notebook = temp_book.root / "_build" / "jupyter_execute" / "chapters" / "probe.ipynb"
    shutil.copy(notebook, temp_book.root / "chapters" / "probe.ipynb")
    result = temp_book.build()
    assert result.returncode == 0, result.stdout[-3000:]
    assert "chapters/probe.ipynb is ignored: chapters/probe.md is that page's source" in (
        result.stdout
    )
    assert "from the markdown source" in temp_book.html()
    assert "rebuilding the HTML from clean" not in result.stdout  # nothing was set aside


def test_two_sources_of_which_none_is_markdown_stop_the_build_naming_both(temp_book):
    temp_book.write_chapter([cell("print('the markdown page')")])
    assert temp_book.build().returncode == 0
    (temp_book.root / "chapters" / "probe.md").rename(temp_book.root / "chapters" / "probe.rst")
    (temp_book.root / "chapters" / "probe.ipynb").write_text("{}")
    result = temp_book.build()
    assert result.returncode != 0
    assert re.search(r"chapters/probe\.\w+ and chapters/probe\.\w+ are two sources", result.stdout)
    assert "the markdown page" in temp_book.html()  # the site is as it was


def test_references_follow_a_renumbering_edit_in_another_chapter(temp_book):
    """A definition and an equation inserted at the top of chapter one (Markdown only): chapter
    two, unchanged, cites the new numbers after an incremental build (Sphinx issue 5506)."""
    first = """
        ```{prf:definition} First thing
        :label: def-first

        A thing.
        ```

        $$ a = b $$ (eq-first)
        """
    inserted = """
        ```{prf:definition} Zeroth thing
        :label: def-zero

        Earlier.
        ```

        $$ c = d $$ (eq-zero)
        """
    temp_book.write_chapter([first], name="one", title="One")
    temp_book.write_chapter(["See {prf:ref}`def-first` and {eq}`eq-first`."], name="two")
    (temp_book.root / "_toc.yml").write_text(
        "format: jb-book\nroot: intro\nparts:\n  - caption: C\n    numbered: true\n"
        "    chapters:\n      - file: chapters/one\n      - file: chapters/two\n"
    )
    assert temp_book.build().returncode == 0
    cited = r"Definition 1\.{0}.*\(1\.{0}\)"
    assert re.search(cited.format(1), temp_book.html("two"), re.S)
    temp_book.write_chapter([inserted, first], name="one", title="One")
    result = temp_book.build()
    assert result.returncode == 0, result.stdout[-3000:]
    assert "numbers changed: every page is rewritten" in result.stdout
    assert re.search(cited.format(2), temp_book.html("two"), re.S), temp_book.html("two")[-3000:]


def test_a_damaged_execution_cache_is_cleared_and_the_build_goes_on(temp_book):
    temp_book.write_chapter([cell("print('ran')")])
    assert temp_book.build().returncode == 0
    db = temp_book.root / "_build" / ".jupyter_cache" / "global.db"
    db.write_bytes(b"not a database" * 500)
    result = temp_book.build()
    assert result.returncode == 0, result.stdout[-3000:]
    assert f"the execution cache {db.parent} is damaged" in result.stdout
    assert "chapters/probe.md: Executing notebook" in result.stdout
    assert temp_book.build().returncode == 0  # and the new cache reads


def test_a_bad_setting_stops_the_build_in_one_line_and_leaves_the_site(temp_book):
    temp_book.write_chapter([cell("x = 1")])
    assert temp_book.build().returncode == 0
    page = temp_book.html()
    result = temp_book.build(BOOK_THREADS="99")
    assert result.returncode != 0
    assert result.returncode == 2
    assert (
        result.stdout.strip()
        .splitlines()[-1]
        .startswith("book_sphinx: BOOK_THREADS='99': must be a whole number from 1 to")
    ), result.stdout[-2000:]
    assert "Traceback" not in result.stdout
    result = temp_book.build(BOOK_RESULT="/tmp")
    assert result.returncode != 0 and "did you mean BOOK_RESULTS?" in result.stdout
    assert temp_book.html() == page


def test_new_stored_results_re_execute_the_chapters(temp_book, tmp_path_factory):
    """BOOK_RESULTS names where the stored results are: new or changed files there clear the
    execution cache, so no page keeps numbers from the old results."""
    results = tmp_path_factory.mktemp("results")
    temp_book.write_chapter([cell("print('ran')")])
    assert temp_book.build(BOOK_RESULTS=str(results)).returncode == 0
    again = temp_book.build(BOOK_RESULTS=str(results))
    assert "Executing notebook" not in again.stdout
    (results / "noise").mkdir()
    (results / "noise" / "mnist.json").write_text('{"result": 1}')
    result = temp_book.build(BOOK_RESULTS=str(results))
    assert "chapters/probe.md: Executing notebook" in result.stdout
    assert "a BOOK_* setting changed" in result.stdout


def test_every_stylesheet_is_versioned_and_a_rewritten_page_links_the_same(temp_book):
    """Every extension's CSS is in _static before the first page is written, so the first build's
    pages carry ?v= as a rewritten page does, and rebuilds write the same bytes."""
    temp_book.write_chapter(
        [
            cell("x = 1"),
            "```{exercise}\n:label: ex-probe\n\nShow it.\n```\n",
            "```{prf:theorem}\n:label: thm-probe\n\nIt holds.\n```\n",
        ]
    )
    assert temp_book.build().returncode == 0
    first = _links(temp_book.html())
    stylesheets = [x for x in first if ".css" in x]
    assert "exercise.css" in " ".join(stylesheets) and "proof.css" in " ".join(stylesheets)
    assert all(re.search(r"\?(v|digest)=", x) for x in stylesheets), stylesheets
    (temp_book.root / "chapters" / "probe.md").write_text(
        (temp_book.root / "chapters" / "probe.md").read_text() + "\nOne more line.\n"
    )
    assert temp_book.build().returncode == 0
    assert _links(temp_book.html()) == first


SHOWN = "input_marker = 'shown output'\nprint(input_marker)"


def test_a_tag_that_only_changes_the_page_does_not_re_execute_its_chapter(temp_book):
    """``remove-input`` added to a cell: the cached outputs are used and the page drops the input
    (MyST-NB issue 350); ``raises-exception`` changes execution, so the chapter runs again."""
    temp_book.write_chapter([cell(SHOWN)])
    assert temp_book.build().returncode == 0
    assert "input_marker" in temp_book.html()
    temp_book.write_chapter([cell(SHOWN, tags="remove-input")])
    result = temp_book.build()
    assert result.returncode == 0, result.stdout[-3000:]
    assert "Executing notebook" not in result.stdout
    assert "shown output" in temp_book.html() and "input_marker" not in temp_book.html()
    temp_book.write_chapter([cell(SHOWN, tags="raises-exception")])
    result = temp_book.build()
    assert "chapters/probe.md: Executing notebook" in result.stdout


def test_chapters_execute_ahead_several_at_a_time_and_the_pages_read_them_from_the_cache(
    temp_book,
):
    """Two chapters, two kernels of one thread each: both execute before Sphinx reads the pages
    (each kernel sees the plan's BOOK_THREADS), both pages come from the execution cache, and a
    chapter that fails ahead is reported once, in one line, as a failure always is."""
    show = "import os\nprint('threads', os.environ['BOOK_THREADS'])"
    temp_book.write_chapter([cell(show)], name="one", title="One")
    temp_book.write_chapter([cell(show), cell("y = 2\nraise KeyError('ahead')")], name="two")
    temp_book.write_toc("one", "two")
    result = temp_book.build(BOOK_PAGE_JOBS="2", BOOK_THREADS="1")
    log = result.stdout
    assert "executing 2 chapters ahead, 2 at a time, each kernel with 1 torch thread" in log, log
    assert "chapters/one executed ahead" in log
    assert "chapters/two failed when executed ahead" in log
    assert "one.md: Using cached notebook" in log  # read from the cache, not executed again
    assert "one.md: Executing notebook" not in log
    assert "threads 1" in temp_book.html("one")
    failures = [ln for ln in log.splitlines() if "failed at" in ln]
    assert len(failures) == 1 and "chapters/two" in failures[0] and "KeyError" in failures[0]
    assert result.returncode != 0
    assert not (temp_book.root / "_build" / "html" / "chapters" / "two.html").exists()


def test_kernels_whose_threads_outnumber_the_cores_stop_the_build_in_one_line(temp_book):
    import os

    cores = os.cpu_count() or 1
    temp_book.write_chapter([cell("x = 1")])
    result = temp_book.build(BOOK_PAGE_JOBS=str(cores), BOOK_THREADS=str(cores))
    if cores == 1:
        assert result.returncode == 0, result.stdout[-2000:]
        return
    assert result.returncode == 2
    assert (
        result.stdout.strip()
        .splitlines()[-1]
        .startswith(f"book_sphinx: BOOK_PAGE_JOBS={cores} x BOOK_THREADS={cores}: must be at most")
    ), result.stdout[-2000:]
