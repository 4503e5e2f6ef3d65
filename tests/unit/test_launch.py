"""Launch buttons, the published notebooks and their set-up cell, the notebook zip, Binder's
configuration and the GitHub workflow that publishes them (_ext/book_sphinx/launch.py,
binder/, .github/workflows/book.yml).

The buttons are tested offline: a one-chapter book is built as the workflow builds it (with
``GITHUB_REPOSITORY`` and ``GITHUB_SHA`` set), and each button's notebook path is checked against
the files that build wrote and against the files the workflow publishes.
"""

from __future__ import annotations

import subprocess
import sys
from urllib.parse import parse_qs, unquote, urlparse

import pytest
import yaml

from book_sphinx import launch

from conftest import ROOT

WORKFLOW = ROOT / ".github" / "workflows" / "book.yml"
REPOSITORY, REVISION = "someone/one-layer-book", "0123456789abcdef0123456789abcdef01234567"


def workflow() -> dict:
    return yaml.safe_load(WORKFLOW.read_text())


def published_notebooks_glob() -> str:
    """The files the workflow uploads for the branch ``notebooks`` (relative to the repository)."""
    steps = workflow()["jobs"]["build"]["steps"]
    step = next(s for s in steps if s.get("with", {}).get("name") == "notebooks")
    return step["with"]["path"]


def notebook_path_in_branch(url: str) -> str:
    """The path inside the branch ``notebooks`` that a Colab or Binder address opens."""
    parsed = urlparse(url)
    if parsed.netloc == "colab.research.google.com":
        parts = parsed.path.split("/")  # /github/<owner>/<name>/blob/<branch>/<path...>
        assert parts[1] == "github" and parts[5] == launch.NOTEBOOKS_BRANCH, url
        return "/".join(parts[6:])
    assert parsed.netloc == "mybinder.org", url
    parts = parsed.path.split("/")  # /v2/gh/<owner>/<name>/<branch>
    assert parts[1:3] == ["v2", "gh"] and parts[5] == launch.NOTEBOOKS_BRANCH, url
    return unquote(parse_qs(parsed.query)["labpath"][0])


# -- unit tests -----------------------------------------------------------------------------------


def test_launch_urls_open_the_page_notebook_on_the_notebooks_branch():
    urls = launch.launch_urls(REPOSITORY, "chapters/01_boltzmann")
    assert urls["Colab"] == (
        "https://colab.research.google.com/github/someone/one-layer-book/blob/notebooks/"
        "chapters/01_boltzmann.ipynb"
    )
    assert urls["Binder"] == (
        "https://mybinder.org/v2/gh/someone/one-layer-book/notebooks"
        "?labpath=chapters%2F01_boltzmann.ipynb"
    )
    for url in urls.values():
        assert notebook_path_in_branch(url) == "chapters/01_boltzmann.ipynb"


@pytest.mark.parametrize("repository", ["", "someone", "a/b/c", "https://github.com/a/b", "a b/c"])
def test_launch_urls_refuse_a_repository_that_is_not_owner_name(repository):
    with pytest.raises(ValueError, match="repository"):
        launch.launch_urls(repository, "chapters/01_boltzmann")


def test_launch_urls_refuse_an_empty_page():
    with pytest.raises(ValueError, match="pagename"):
        launch.launch_urls(REPOSITORY, "")


def test_report_buttons_link_the_repository_its_issues_and_the_edit_branch():
    options = launch.report_buttons(REPOSITORY)
    assert options["repository_url"] == "https://github.com/someone/one-layer-book"
    assert options["repository_branch"] == launch.EDIT_BRANCH == "main"
    for button in ("use_repository_button", "use_issues_button", "use_edit_page_button"):
        assert options[button] is True, button
    assert launch.report_buttons("") == {}  # no repository known: no button at all
    with pytest.raises(ValueError, match="book_repository"):
        launch.report_buttons("https://github.com/a/b")


def test_setup_cell_is_python_that_names_the_repository_and_revision():
    code = launch.setup_cell(REPOSITORY, REVISION)
    compile(code, "setup-cell", "exec")  # valid Python
    assert f'"https://github.com/{REPOSITORY}", "{REVISION}"' in code
    assert 'find_spec("lib") is None' in code  # does nothing where lib imports
    # the packages it installs are pinned in requirements.txt, so the cell's filter finds them
    pinned = {
        line.split("==")[0].strip()
        for line in (ROOT / "requirements.txt").read_text().splitlines()
        if "==" in line.split("#")[0]
    }
    assert set(launch.RUNTIME_PACKAGES) <= pinned
    with pytest.raises(ValueError, match="revision"):
        launch.setup_cell(REPOSITORY, "not a revision")


def test_setup_cell_does_nothing_where_lib_imports(tmp_path):
    """Run the cell here, where lib imports: no clone, no install, the working folder unchanged."""
    code = launch.setup_cell(REPOSITORY, REVISION)
    script = f"import os\nos.chdir({str(tmp_path)!r})\n{code}\nprint(os.getcwd())\n"
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    assert out.stdout.strip() == str(tmp_path)
    assert not any(tmp_path.iterdir())


# -- the workflow ---------------------------------------------------------------------------------


def test_workflow_runs_ci_run_and_pins_every_action_to_a_commit():
    flow = workflow()
    text = WORKFLOW.read_text()
    triggers = flow[True] if True in flow else flow["on"]  # YAML 1.1 reads "on" as True
    assert {"push", "pull_request", "schedule"} <= set(triggers)
    build = flow["jobs"]["build"]
    runs = [s.get("run", "") for s in build["steps"]]
    assert any(r.strip() == "bash .ci/run" for r in runs)  # the same steps as CI here
    uses = [s["uses"] for job in flow["jobs"].values() for s in job["steps"] if "uses" in s]
    assert uses
    for use in uses:
        name, _, ref = use.partition("@")
        assert len(ref) == 40 and all(c in "0123456789abcdef" for c in ref), use
    for line in text.splitlines():
        if "uses:" in line:
            assert "# v" in line, f"no release named beside the commit: {line.strip()}"
    deploy = flow["jobs"]["deploy"]
    assert deploy["permissions"] == {"pages": "write", "id-token": "write"}
    assert any("deploy-pages" in s["uses"] for s in deploy["steps"])
    assert any("upload-pages-artifact" in s.get("uses", "") for s in build["steps"])
    assert any(s.get("if") == "failure()" for s in build["steps"])  # reports when it fails


def test_workflow_caches_what_the_execution_guard_hashes_and_saves_it_after_a_failure():
    steps = workflow()["jobs"]["build"]["steps"]
    uses = [s.get("uses", "") for s in steps]
    restore = steps[next(i for i, u in enumerate(uses) if "actions/cache/restore@" in u)]
    save_at = next(i for i, u in enumerate(uses) if "actions/cache/save@" in u)
    run_at = next(i for i, s in enumerate(steps) if s.get("run", "").strip() == "bash .ci/run")
    key = restore["with"]["key"]
    for inputs in (
        "lib/**",
        "results/**",
        "requirements*.txt",
        "requirements*.lock",
        "_config.yml",
        "chapters/**",
    ):
        assert f"'{inputs}'" in key, inputs
    assert "github.run_id" in key  # a new key per run: a failed run's cache is saved too
    save = steps[save_at]
    assert save_at > run_at and save["if"].startswith("always()")  # also when the tests fail
    assert save["with"]["key"] == "${{ steps.restore-cache.outputs.cache-primary-key }}"
    assert save["with"]["path"] == restore["with"]["path"]
    assert restore["id"] == "restore-cache"


def test_workflow_checks_pages_first_and_runs_the_nightly_build_in_its_own_group():
    flow = workflow()
    steps = flow["jobs"]["build"]["steps"]
    pages = next(i for i, s in enumerate(steps) if "actions/configure-pages@" in s.get("uses", ""))
    run_at = next(i for i, s in enumerate(steps) if s.get("run", "").strip() == "bash .ci/run")
    assert pages < run_at  # a Pages misconfiguration fails before the hour-long build
    assert flow["jobs"]["build"]["permissions"]["pages"] == "read"
    group = flow["concurrency"]["group"]
    assert "github.event_name == 'schedule'" in group and "'book-nightly'" in group


def test_dependabot_updates_the_actions_and_the_python_pins():
    config = yaml.safe_load((ROOT / ".github" / "dependabot.yml").read_text())
    assert config["version"] == 2
    assert {u["package-ecosystem"] for u in config["updates"]} == {"github-actions", "pip"}


# -- the built pages ------------------------------------------------------------------------------


# -- Binder ---------------------------------------------------------------------------------------
