"""The strict build fails on every kind of dishonest page, and notices edits to lib/.

Each test builds a one-chapter book in a temporary folder with the project's own _config.yml.
"""

import re

import pytest

pytestmark = pytest.mark.build

CODE = "```{{code-cell}} ipython3\n{tags}{source}\n```\n"


def cell(source: str, tags: str = "") -> str:
    return CODE.format(tags=f":tags: [{tags}]\n\n" if tags else "", source=source.strip())


def test_clean_chapter_builds_with_figure_under_agg_and_no_progress_output(temp_book):
    """Control: a well-behaved chapter builds, even with MPLBACKEND=Agg and a progress bar."""
    temp_book.write_chapter([
        cell("from lib import config, plotting\nfrom lib.claims import glue\nplotting.use_style()"),
        cell("total = sum(config.progress(range(50), desc='loop'))\nglue('total', total)"),
        "The total is {glue:text}`total`.\n",
        "```{code-cell} ipython3\n---\nmystnb:\n  figure:\n    caption: A line.\n    name: fig-probe-line\n"
        "  image:\n    alt: A straight line.\n---\nfig, ax = plotting.figure('half')\nax.plot([0, 1], [0, 1])\nfig\n```\n",
        cell("raise ValueError('intended')", tags="raises-exception"),
    ])
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
    temp_book.write_chapter([cell("import time\ntime.sleep(8)")], front="mystnb:\n  execution_timeout: 2\n")
    result = temp_book.build()
    assert result.returncode != 0
    assert re.search(r"timed out|CellTimeoutError", result.stdout)


def test_stderr_output_fails_build(temp_book):
    temp_book.write_chapter([cell("import sys\nsys.stderr.write('stray-stderr-line\\n')")])
    result = temp_book.build()
    assert result.returncode != 0
    assert "stderr was found in the cell outputs" in result.stdout


def test_warning_fails_build(temp_book):
    temp_book.write_chapter([cell("from lib.claims import glue\nglue('present', 1.0)"),
                             "Missing key: {glue:text}`absent`.\n"])
    result = temp_book.build()
    assert result.returncode != 0
    assert "'absent'" in result.stdout


def test_unresolved_reference_fails_build(temp_book):
    temp_book.write_chapter([cell("x = 1"), "See {numref}`fig-does-not-exist`.\n"])
    result = temp_book.build()
    assert result.returncode != 0
    assert "fig-does-not-exist" in result.stdout


def test_editing_lib_reexecutes_chapter(temp_book):
    temp_book.write_chapter([
        cell("import uuid\nimport probe\nfrom lib.claims import glue\n"
             "glue('value', probe.VALUE)\nglue('run', uuid.uuid4().hex)"),
        "Value {glue:text}`value`, run {glue:text}`run`.\n",
    ])

    def shown():
        m = re.search(r"Value <span[^>]*>(\d+)</span>, run <span[^>]*>([0-9a-f]{32})</span>", temp_book.html())
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
