"""The launch buttons and the Binder environment, on books built as the workflow builds them
(the URL and workflow checks are in ``ext/test_launch.py``)."""

from __future__ import annotations

import fnmatch
import os
import subprocess
import sys
import zipfile
from pathlib import Path, PurePosixPath

import nbformat
import pytest
from bs4 import BeautifulSoup
from test_launch import REPOSITORY, REVISION, notebook_path_in_branch, published_notebooks_glob

from book_sphinx import launch

from conftest import ROOT


@pytest.mark.build
def test_a_book_built_as_the_workflow_builds_it_has_buttons_to_the_notebooks_it_publishes(
    temp_book,
):
    temp_book.write_chapter(["```{code-cell} ipython3\nx = 6 * 7\nx\n```\n"])
    result = temp_book.build(GITHUB_REPOSITORY=REPOSITORY, GITHUB_SHA=REVISION)
    assert result.returncode == 0, result.stdout[-4000:]
    site = temp_book.root / "_build" / "html"
    html = BeautifulSoup(temp_book.html(), "html.parser")
    links = {
        a.get_text(strip=True): a["href"]
        for a in html.select(".dropdown-launch-buttons a, [class*='launch'] a")
        if "colab" in a["href"] or "mybinder" in a["href"]
    }
    assert set(links) == {"Colab", "Binder"}, links
    # a reader who finds an error reports it, or proposes the fix, from the page
    hrefs = {a["href"] for a in html.select(".article-header-buttons a[href]")}
    repo = f"https://github.com/{REPOSITORY}"
    assert repo in hrefs, sorted(hrefs)
    assert any(h.startswith(f"{repo}/issues/new") for h in hrefs), sorted(hrefs)
    edit = f"{repo}/edit/{launch.EDIT_BRANCH}/chapters/probe.md"
    assert edit in hrefs, sorted(hrefs)  # the page's own source, on the branch readers edit
    published = published_notebooks_glob()  # _build/html/_sources/chapters/*.ipynb
    prefix = PurePosixPath(published).parent  # the artifact keeps the files' names only
    for name, url in links.items():
        path = notebook_path_in_branch(url)  # chapters/probe.ipynb in the branch
        built = site / "_sources" / path
        assert built.is_file(), (name, path)  # a file the build wrote ...
        relative = built.relative_to(temp_book.root).as_posix()
        assert fnmatch.fnmatch(relative, published), (relative, published)  # uploaded
        assert PurePosixPath(path).parent == PurePosixPath(prefix.name)  # and put back there
    notebook = nbformat.read(site / "_sources" / "chapters" / "probe.ipynb", as_version=4)
    assert "the next cell does this for you" in notebook.cells[0].source
    assert notebook.cells[1].cell_type == "code"
    assert notebook.cells[1].source == launch.setup_cell(REPOSITORY, REVISION)
    with zipfile.ZipFile(site / launch.ZIP_NAME) as archive:
        assert archive.namelist() == ["chapters/probe.ipynb"]
        assert archive.read("chapters/probe.ipynb") == built.read_bytes()


@pytest.mark.build
def test_the_real_site_zips_every_notebook_and_shows_buttons_only_with_a_repository(site):
    sources = site / "_sources"
    notebooks = sorted(p.relative_to(sources).as_posix() for p in sources.rglob("*.ipynb"))
    assert len(notebooks) >= 7
    with zipfile.ZipFile(site / launch.ZIP_NAME) as archive:
        assert sorted(archive.namelist()) == notebooks
        for name in notebooks:
            assert archive.read(name) == (sources / name).read_bytes()
    intro = BeautifulSoup((site / "intro.html").read_text(), "html.parser")
    assert intro.select_one(f'a[href="{launch.ZIP_NAME}"]') is not None
    page = (site / "chapters" / "01_boltzmann.html").read_text()
    has_buttons = "mybinder.org/v2/gh/" in page and "colab.research.google.com" in page
    assert has_buttons == bool(os.environ.get("GITHUB_REPOSITORY", "").strip())
    has_report = "/issues/new" in page and "/edit/" in page
    assert has_report == has_buttons  # no link to a repository the build cannot name


@pytest.mark.build
def test_binder_requirements_install_in_a_fresh_venv_and_lib_imports(tmp_path):
    """What Binder runs: binder/requirements.txt, then binder/postBuild, in a new environment,
    then what a launch does: the branch ``notebooks`` in ``~/book`` (here the checkout itself,
    linked there from a scratch home folder) and ``import lib`` from a notebook's folder.

    PyTorch's CPU index (named in the file) is out of reach offline: pip is told not to retry it,
    and torch comes from the machine's own wheels where the index cannot be reached."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    env = {
        **os.environ,
        "PIP_RETRIES": "0",
        "PIP_TIMEOUT": "10",
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }
    env.pop("PYTHONPATH", None)
    home = tmp_path / "home"
    home.mkdir()
    env["HOME"] = str(home)

    def run(args: list[str], cwd: Path, timeout: int) -> str:
        done = subprocess.run(
            args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
        )
        assert done.returncode == 0, (args, done.stderr[-4000:])
        return done.stdout

    run([str(python), "-m", "pip", "install", "-q", "-r", "binder/requirements.txt"], ROOT, 1800)
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    run(["bash", "binder/postBuild"], ROOT, 600)
    # nbgitpuller's server extension, which the Binder links call, is enabled by its install
    assert (venv / "etc" / "jupyter" / "jupyter_server_config.d" / "nbgitpuller.json").is_file()
    (home / launch.BINDER_FOLDER).symlink_to(ROOT)  # what nbgitpuller pulls at launch
    probe = (
        "import lib, lib.experiments.conll, torch, jupyter_book; "
        "from importlib.metadata import version; print(lib.__file__, version('torch'))"
    )
    out = run([str(python), "-c", probe], ROOT / "chapters", 300)
    lib_file, torch_version = out.split()
    assert Path(lib_file).parent == home / launch.BINDER_FOLDER / "lib"  # beside its results/
    locked = dict(
        line.split("#")[0].strip().split("==")
        for line in (ROOT / "requirements.lock").read_text().splitlines()
        if "==" in line.split("#")[0]
    )
    assert torch_version == locked["torch"]
