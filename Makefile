# The book's commands. `make book` and `make test` do all set-up on a fresh machine.
SHELL := /bin/bash
.DEFAULT_GOAL := book

VENV    ?= .venv
LABVENV ?= .venv-lab
PYTHON  ?= python3
PY      := $(VENV)/bin/python
STAMP   := $(VENV)/.installed
BUILD   := $(VENV)/bin/jupyter-book build . -W -n --keep-going

.PHONY: book test bench full lab clean distclean env

# Create the build environment when absent and reinstall when the pins change.
$(STAMP): requirements.txt requirements-data.txt pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check -r requirements.txt
	$(PY) -m pip install -q --disable-pip-version-check --no-deps -r requirements-data.txt
	$(PY) -m pip install -q --disable-pip-version-check --no-deps -e .
	@touch $(STAMP)

env: $(STAMP)

## book: build the website into _build/html (strict: any warning, error or stderr fails)
book: $(STAMP)
	$(BUILD)
	@echo "Open _build/html/index.html"

## test: unit tests, build tests, a strict build of the book, HTML and browser checks
test: $(STAMP)
	$(PY) -m pytest

## bench: cold build, rebuild with nothing changed, each chapter's execution time, training tokens/s
bench: $(STAMP)
	$(PY) tools/bench.py

## full: the papers' experiments at paper scale (hours on a CPU), then the book built from them
full: $(STAMP)
	BOOK_MODE=full $(PY) tools/full_mode.py
	BOOK_MODE=full $(BUILD)

## lab: JupyterLab with jupytext in its own environment (kept out of the build environment)
lab: requirements.txt requirements-lab.txt requirements-data.txt pyproject.toml
	@test -x $(LABVENV)/bin/python || $(PYTHON) -m venv $(LABVENV)
	$(LABVENV)/bin/python -m pip install -q -r requirements.txt -r requirements-lab.txt
	$(LABVENV)/bin/python -m pip install -q --no-deps -r requirements-data.txt
	$(LABVENV)/bin/python -m pip install -q --no-deps -e .
	@mkdir -p $(LABVENV)/share/jupyter/lab/settings
	@echo '{"@jupyterlab/docmanager-extension:plugin": {"defaultViewers": {"markdown": "Jupytext Notebook", "myst": "Jupytext Notebook"}}}' \
		> $(LABVENV)/share/jupyter/lab/settings/overrides.json
	$(LABVENV)/bin/jupyter lab chapters $(if $(filter 0,$(shell id -u)),--allow-root,)

clean:
	rm -rf _build

distclean: clean
	rm -rf $(VENV) $(LABVENV) *.egg-info
