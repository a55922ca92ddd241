# tracegrad developer commands. GNU make.
#
#   make lab     set up .venv, then open JupyterLab on notebooks/
#   make test    set up .venv, then lint and run the whole test suite
#
# Everything runs non-interactively (CI runs `make test` with CI=true and no stdin).

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DELETE_ON_ERROR:
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMPS := .make-stamps
VENV_STAMP := $(STAMPS)/venv-$(subst /,_,$(VENV))

PYTEST_WORKERS ?= 2
PYTEST_TIMEOUT ?= 300
PYTEST_ARGS ?=
LINT_PATHS := $(wildcard src tests benchmarks)

# Extra options for `jupyter lab`; as root (containers, CI boxes) Jupyter refuses to start without --allow-root.
LAB_ARGS ?= $(if $(filter 0,$(shell id -u)),--allow-root)

# The test extra pins torch==2.13.0, which on the project's machines is a CPU wheel lying in a local
# directory; point pip at it explicitly so a missing pip config can never turn into a multi-GB CUDA download.
TORCH_WHEELS ?= /opt/wheels
PIP_FIND_LINKS_OPT := $(if $(wildcard $(TORCH_WHEELS)/torch-*.whl),--find-links $(TORCH_WHEELS))

export PIP_NO_INPUT := 1
export PIP_DISABLE_PIP_VERSION_CHECK := 1

.PHONY: help venv sysdeps lab extension jest galata kernelspec test lint bench clean distclean

help:
	@echo "make lab        set up .venv and open JupyterLab on notebooks/"
	@echo "make test       set up .venv, lint, and run the test suite (pytest -n $(PYTEST_WORKERS))"
	@echo "make lint       ruff check $(LINT_PATHS)"
	@echo "make extension  build the JupyterLab extension (extension/) and link it into .venv"
	@echo "make jest       TypeScript unit tests of the extension"
	@echo "make galata     UI tests in a real JupyterLab with Debian's Chromium (screenshots to docs/images/)"
	@echo "make bench      run the benchmarks (python -m benchmarks.run)"
	@echo "make venv       create/update .venv with tracegrad installed editable plus the dev extra"
	@echo "make clean      remove build output and caches (keeps .venv)"
	@echo "make distclean  clean, and also remove .venv"

# ---- environment --------------------------------------------------------------------------------------

venv: $(VENV_STAMP)

# pyvenv.cfg (a real file, unlike the bin/python symlink) is written when the venv is created, so a
# recreated venv is newer than the stamp and triggers a reinstall; so does any edit to pyproject.toml.
$(VENV)/pyvenv.cfg:
	$(PYTHON) -m venv $(VENV)

$(VENV_STAMP): pyproject.toml $(VENV)/pyvenv.cfg
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet $(PIP_FIND_LINKS_OPT) -e '.[dev]'
	@$(PY) -c 'import torch; print("torch", torch.__version__, "(CUDA " + str(torch.version.cuda) + ")")'
	@mkdir -p $(STAMPS)
	@touch $@

# System packages the tests need: Debian's Chromium (Galata drives it; no browser download) and Graphviz's
# `dot` (the static SVG renderer; its fallback without `dot` is tested by hiding it). Installed with apt-get
# when missing and when we may (root, or passwordless sudo); otherwise the tests that need them say so.
SYSDEPS := chromium graphviz
sysdeps:
	@missing=""; \
	command -v chromium >/dev/null || missing="$$missing chromium"; \
	command -v dot >/dev/null || missing="$$missing graphviz"; \
	if [ -n "$$missing" ]; then \
		if [ "$$(id -u)" = 0 ]; then SUDO=""; elif sudo -n true 2>/dev/null; then SUDO="sudo -n"; else SUDO=none; fi; \
		if [ "$$SUDO" = none ]; then echo "warning: cannot install$$missing (not root)"; \
		else $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
		     $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; fi; \
	fi

# ---- notebooks ----------------------------------------------------------------------------------------

lab: venv extension kernelspec
	$(VENV)/bin/jupyter lab $(LAB_ARGS) notebooks/

# The JupyterLab extension (extension/): jlpm (JupyterLab's pinned yarn, in the venv) installs the locked npm
# packages, builds the extension into src/tracegrad/labextension and links that into the venv. Needs Node.js:
# without it these targets warn and skip (the sidebar is then missing), except under CI, where they fail.
EXT_DIR := extension
VENV_BIN = $(abspath $(VENV))/bin
WITH_VENV = PATH="$(VENV_BIN):$$PATH"
CHROMIUM ?= /usr/bin/chromium
define require_node
command -v node >/dev/null || { echo "warning: Node.js not found; skipping $(1)" >&2; exit $(if $(CI),1,0); }
endef

extension: venv
	@$(call require_node,the JupyterLab extension); \
	cd $(EXT_DIR) && $(WITH_VENV) jlpm install --immutable && $(WITH_VENV) jlpm build && \
	cd .. && $(WITH_VENV) jupyter-builder develop --overwrite . >/dev/null && \
	$(VENV_BIN)/jupyter labextension list 2>&1 | grep -E 'tracegrad-inspector .*OK'

# TypeScript unit tests (store, collapse, protocol parsing), with jest.
define run_jest
@$(call require_node,the jest tests); \
cd $(EXT_DIR) && $(WITH_VENV) jlpm test
endef

# UI tests: Galata (Playwright) drives a JupyterLab started from the venv in Debian's Chromium. Playwright
# never downloads a browser. Screenshots are written to docs/images/.
define run_galata
@$(call require_node,the Galata UI tests); \
command -v $(CHROMIUM) >/dev/null || { echo "warning: $(CHROMIUM) not found; skipping the Galata UI tests" >&2; exit $(if $(CI),1,0); }; \
cd $(EXT_DIR)/ui-tests && export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 && $(WITH_VENV) jlpm install --immutable && \
CHROMIUM_PATH=$(CHROMIUM) JUPYTER=$(VENV_BIN)/jupyter $(WITH_VENV) jlpm test
endef

jest: extension
	$(run_jest)

galata: sysdeps extension kernelspec
	$(run_galata)

# Install the "Python 3 (tracegrad)" kernel spec (kernel/tracegrad) into the venv, running the venv's Python.
kernelspec: venv
	$(PY) -m tracegrad.notebook install-kernel --sys-prefix

# ---- checks -------------------------------------------------------------------------------------------

lint: venv
	$(PY) -m ruff check $(LINT_PATHS)

test: lint sysdeps extension kernelspec
	$(PY) -m pytest -n $(PYTEST_WORKERS) -q --timeout=$(PYTEST_TIMEOUT) $(PYTEST_ARGS)
	$(run_jest)
	$(run_galata)

bench: venv
	$(PY) -m benchmarks.run

# ---- cleaning -----------------------------------------------------------------------------------------

clean:
	rm -rf build dist src/*.egg-info .pytest_cache .ruff_cache .hypothesis $(STAMPS)
	find . -path ./$(VENV) -prune -o -path ./extension/node_modules -prune -o \
		-type d \( -name __pycache__ -o -name .ipynb_checkpoints \) -prune -exec rm -rf {} +

distclean: clean
	rm -rf $(VENV)
