"""tools/: every tool parses its command line and checks the BOOK_* settings before it acts."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lib import _env

ROOT = Path(__file__).resolve().parents[2]
TOOLS = sorted(p.name for p in (ROOT / "tools").glob("*.py"))


@pytest.fixture
def copy(tmp_path):
    """The tools and lib in a scratch checkout whose _build holds a sentinel file."""
    shutil.copytree(ROOT / "tools", tmp_path / "tools")
    shutil.copytree(ROOT / "lib", tmp_path / "lib", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "_build" / "html").mkdir(parents=True)
    (tmp_path / "_build" / "html" / "index.html").write_text("the site")
    return tmp_path


def _run(copy, tool, *args, **env):
    environ = {k: v for k, v in os.environ.items() if not k.startswith("BOOK_")} | env
    environ["PYTHONPATH"] = str(copy)  # the copy's lib, not the checkout's
    return subprocess.run(
        [sys.executable, str(copy / "tools" / tool), *args],
        cwd=copy,
        env=environ,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_every_tool_is_covered():
    assert TOOLS == [
        "bench.py",
        "fetch_data.py",
        "full_mode.py",
        "lint_chapters.py",
        "mutate.py",
        "projection.py",
        "sync_environment.py",
    ]


@pytest.mark.parametrize("tool", TOOLS)
def test_an_unknown_option_stops_a_tool_before_it_touches_anything(copy, tool):
    done = _run(copy, tool, "--batched-onyl")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "unrecognized arguments: --batched-onyl" in done.stderr
    assert (copy / "_build" / "html" / "index.html").read_text() == "the site"
    assert sorted(p.name for p in copy.iterdir()) == ["_build", "lib", "tools"]


def test_an_abbreviated_option_is_refused(copy):
    done = _run(copy, "bench.py", "--batched")
    assert done.returncode == 2 and "unrecognized arguments: --batched" in done.stderr
    assert (copy / "_build" / "html" / "index.html").is_file()


@pytest.mark.parametrize(
    "tool", ["bench.py", "fetch_data.py", "full_mode.py", "lint_chapters.py", "mutate.py"]
)
def test_a_bad_setting_stops_a_tool_with_one_line(copy, tool):
    done = _run(copy, tool, BOOK_THREADS="0")
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"python tools/{tool}: BOOK_THREADS='0': must be a whole number from 1 to "
        f"{os.cpu_count()} (this machine's cores); unset: " + _env.SETTINGS["BOOK_THREADS"].unset
    ]
    done = _run(copy, tool, BOOK_MOD="full")
    assert done.returncode == 2 and "did you mean BOOK_MODE?" in done.stderr
    assert (copy / "_build" / "html" / "index.html").read_text() == "the site"


def test_the_settings_check_of_the_makefile(copy):
    environ = {k: v for k, v in os.environ.items() if not k.startswith("BOOK_")}
    done = subprocess.run(
        [sys.executable, "-m", "lib._env"],
        cwd=copy,
        env=environ | {"BOOK_DEVICE": "gpu"},
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("book settings: BOOK_DEVICE='gpu': must be 'cpu', 'cuda'")
    done = subprocess.run(
        [sys.executable, "-m", "lib._env", "--table"], cwd=copy, env=environ, capture_output=True
    )
    assert done.returncode == 0 and b"| `BOOK_TIMEOUT_SCALE` |" in done.stdout


def test_the_makefile_lets_jupyter_book_start_under_pythonwarnings_error():
    """make book under PYTHONWARNINGS=error: the one start-up warning of click is filtered, the
    rest still turn into errors. Runs the build command make would run, with --version."""
    shown = subprocess.run(
        ["make", "-n", "--no-print-directory", "book"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout
    (command,) = [line for line in shown.splitlines() if "jupyter-book build" in line]
    command = command.replace("jupyter-book build . -W -n --keep-going", "jupyter-book --version")
    done = subprocess.run(
        ["bash", "-c", command],
        cwd=ROOT,
        env=os.environ | {"PYTHONWARNINGS": "error"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Jupyter Book" in done.stdout


def test_bench_memory_probe_sees_what_a_notebook_allocates(tmp_path, monkeypatch):
    """make bench's memory probe (tools/bench_measures/memory.py): a page that holds a 1.6 GB
    array peaks at least 95 % of that above one that holds nothing, in the kernel's own peak and
    in the sampled part that is not shared; each page from a fresh kernel, so the first page's
    peak does not carry over. The array is large because two fresh kernels' baselines differ by a
    few tens of MB (a 400 MB array measured 383 MB above the baseline), which must stay within
    the 5 %."""
    import json

    monkeypatch.syspath_prepend(str(ROOT / "tools"))
    from bench_measures import memory

    header = "---\njupytext:\n  text_representation:\n    extension: .md\n    format_name: myst\n"
    header += "kernelspec:\n  display_name: Python 3\n  language: python\n  name: python3\n---\n"
    cell = "```{{code-cell}} ipython3\nimport time\nimport numpy as np\n{}\ntime.sleep(0.5)\n```\n"
    peaks = {}
    for name, body in (("big", "x = np.ones(200_000_000)"), ("small", "x = np.ones(1)")):
        page = tmp_path / f"{name}.md"
        page.write_text(header + cell.format(body))
        done = subprocess.run(
            [sys.executable, "-c", memory._MEMORY_PROBE, str(page), "0.02", "120", str(tmp_path),
             "python3"],
            cwd=tmp_path, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-3000:]
        peaks[name] = json.loads(done.stdout.strip().splitlines()[-1])
    for key in ("kernel_bytes", "anonymous_bytes", "sampled_bytes"):
        assert peaks["big"][key] - peaks["small"][key] >= 0.95 * 1.6e9, (key, peaks)
    assert peaks["small"]["kernel_bytes"] < 4e8, peaks  # the baseline alone is far below


def test_chapter_cells_take_the_line_length_of_their_box():
    """lint_chapters formats and checks a cell with chapters/ruff.toml: the project's rules at the
    line length that fits the website's code box (72), not lib's 100."""
    import tomllib

    sys.path.insert(0, str(ROOT / "tools"))
    import lint_chapters

    limit = tomllib.loads((ROOT / "chapters" / "ruff.toml").read_text())["line-length"]
    assert limit == 72
    call = "value = some_function(first_argument, second_argument, third_arg)"
    assert len(call) == limit - 7  # fits: unchanged
    assert lint_chapters.ruff_format(call) == call
    longer = call.replace("third_arg", "the_third_argument")  # 72 < 74 <= 100
    assert lint_chapters.ruff_format(longer) == (
        "value = some_function(\n    first_argument, second_argument, the_third_argument\n)"
    )
