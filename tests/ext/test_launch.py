"""Launch buttons, the published notebooks and their set-up cell, the notebook zip, Binder's
configuration and the GitHub workflow that publishes them (_ext/book_sphinx/launch.py,
binder/, .github/workflows/book.yml).

The buttons are tested offline: a one-chapter book is built as the workflow builds it (with
``GITHUB_REPOSITORY`` and ``GITHUB_SHA`` set), and each button's notebook path is checked against
the files that build wrote and against the files the workflow publishes.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import parse_qs, urlparse

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
    """The path inside the branch ``notebooks`` that a Colab or Binder address opens.

    Binder's address starts the image of the branch ``binder-env`` and hands nbgitpuller a
    ``git-pull`` link, which clones ``notebooks`` into ``~/book`` and opens the notebook there."""
    parsed = urlparse(url)
    if parsed.netloc == "colab.research.google.com":
        parts = parsed.path.split("/")  # /github/<owner>/<name>/blob/<branch>/<path...>
        assert parts[1] == "github" and parts[5] == launch.NOTEBOOKS_BRANCH, url
        return "/".join(parts[6:])
    assert parsed.netloc == "mybinder.org", url
    parts = parsed.path.split("/")  # /v2/gh/<owner>/<name>/<branch>
    assert parts[1:3] == ["v2", "gh"] and parts[5] == launch.BINDER_BRANCH, url
    (pull,) = parse_qs(parsed.query)["urlpath"]
    handler, _, query = pull.partition("?")
    assert handler == "git-pull", pull
    pulled = {key: value for key, (value,) in parse_qs(query, strict_parsing=True).items()}
    assert set(pulled) == {"repo", "branch", "targetpath", "urlpath"}, pulled
    assert pulled["repo"] == f"https://github.com/{'/'.join(parts[3:5])}", pulled
    assert pulled["branch"] == launch.NOTEBOOKS_BRANCH, pulled
    folder = f"lab/tree/{pulled['targetpath']}/"
    assert pulled["urlpath"].startswith(folder), pulled
    return pulled["urlpath"].removeprefix(folder)


# -- unit tests -----------------------------------------------------------------------------------


def test_launch_urls_open_the_page_notebook_on_the_notebooks_branch():
    urls = launch.launch_urls(REPOSITORY, "chapters/01_boltzmann")
    assert urls["Colab"] == (
        "https://colab.research.google.com/github/someone/one-layer-book/blob/notebooks/"
        "chapters/01_boltzmann.ipynb"
    )
    assert urls["Binder"] == (
        "https://mybinder.org/v2/gh/someone/one-layer-book/binder-env?urlpath=git-pull%3Frepo%3D"
        "https%253A%252F%252Fgithub.com%252Fsomeone%252Fone-layer-book%26branch%3Dnotebooks"
        "%26targetpath%3Dbook%26urlpath%3Dlab%252Ftree%252Fbook%252Fchapters%252F01_boltzmann.ipynb"
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


def binder_env_script() -> str:
    """The shell of the workflow step that moves the branch ``binder-env``."""
    steps = workflow()["jobs"]["binder-env"]["steps"]
    return next(s["run"] for s in steps if "run" in s)


def test_binder_env_branch_moves_only_when_binder_the_lock_or_the_data_pins_change(tmp_path):
    """The workflow step, run against a local bare repository standing in for GitHub."""
    origin, work = tmp_path / "origin.git", tmp_path / "work"
    git = ["git", "-c", "init.defaultBranch=main"]

    def run(args, cwd, **env):
        done = subprocess.run(
            args, cwd=cwd, capture_output=True, text=True, timeout=60,
            env={"PATH": os.environ["PATH"], "HOME": str(tmp_path), **env},
        )  # fmt: skip
        assert done.returncode == 0, (args, done.stdout, done.stderr)
        return done.stdout.strip()

    run([*git, "init", "-q", "--bare", str(origin)], tmp_path)
    run([*git, "init", "-q", str(work)], tmp_path)
    for name in ("binder/requirements.txt", "binder/postBuild", "requirements.lock",
                 "requirements-data.txt", "chapters/01.md"):  # fmt: skip
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_text(f"{name} v1\n")
    identity = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                "GIT_COMMITTER_EMAIL": "t@t"}  # fmt: skip

    def push_main(message: str) -> str:
        run(["git", "add", "-A"], work)
        run(["git", "commit", "-q", "-m", message], work, **identity)
        run(["git", "push", "-q", str(origin), "HEAD:main"], work)
        return run(["git", "rev-parse", "HEAD"], work)

    def step(sha: str) -> str | None:
        run(["bash", "-euo", "pipefail", "-c", binder_env_script()], work,
            GITHUB_SHA=sha, RUNNER_TEMP=str(tmp_path))  # fmt: skip
        heads = run(["git", "ls-remote", str(origin), "refs/heads/binder-env"], work)
        return heads.split()[0] if heads else None

    run(["git", "remote", "add", "origin", str(origin)], work)
    first = step(push_main("one"))
    assert first is not None
    files = run(["git", "ls-tree", "-r", "--name-only", first], work).split()
    assert files == ["binder/postBuild", "binder/requirements.txt", "requirements-data.txt",
                     "requirements.lock"]  # fmt: skip
    (work / "chapters/01.md").write_text("a chapter changed\n")
    assert step(push_main("a chapter")) == first  # Binder keeps the image it built
    (work / "requirements.lock").write_text("requirements.lock v2\n")
    second = step(push_main("the lock"))
    assert second not in (None, first)
    assert run(["git", "rev-parse", f"{second}^"], work) == first  # history kept, no force push
    assert run(["git", "show", f"{second}:requirements.lock"], work) == "requirements.lock v2"
    assert (work / "chapters/01.md").read_text() == "a chapter changed\n"  # checkout untouched
    assert run(["git", "status", "--porcelain"], work) == ""


def test_binder_environment_has_the_data_and_the_puller_its_links_need():
    """apt.txt installs the Debian package lib reads Fashion-MNIST from (Chapter 5);
    requirements.txt adds nbgitpuller at a pin, which the Binder links call; postBuild points
    Python at the folder those links pull the notebooks into."""
    from lib import datasets

    apt = (ROOT / "binder" / "apt.txt").read_text().split()
    assert apt == ["dataset-fashion-mnist"]
    if shutil.which("dpkg") and Path(datasets.FASHION_MNIST_ROOT).is_dir():
        owner = subprocess.run(["dpkg", "-S", datasets.FASHION_MNIST_ROOT], capture_output=True,
                               text=True, check=True).stdout  # fmt: skip
        assert owner.split(":")[0] == apt[0], owner
    requirements = (ROOT / "binder" / "requirements.txt").read_text().splitlines()
    assert "nbgitpuller==1.3.0" in requirements
    assert "-r ../requirements.lock" in requirements
    post = (ROOT / "binder" / "postBuild").read_text()
    assert f'"$HOME/{launch.BINDER_FOLDER}"' in post and ".pth" in post
    assert "-e ." not in post  # the image holds no copy of lib: the pulled branch has it
