# Two commands on a fresh machine: `make demo` and `make test` (see README.md).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-dev
IPYKERNEL_MATRIX ?= 7.0.1 7.3.0 6.29.5 5.5.6

.PHONY: demo test lint js unit kernel kernel-matrix browser notebooks bench build clean

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

unit: $(STAMP)
	$(PY) -m pytest -q -m "not kernel and not browser" tests

kernel: $(STAMP)
	$(PY) -m pytest -q -m kernel tests

## the kernel layer again on other ipykernel releases, each in its own small venv: older 7.x ones, and
## the 6.x and 5.x that hosted runtimes ship (no shell-channel thread: a blocking call in a cell answers
## "deferred"). ipykernel 5 calls IPython's should_run_async the way IPython < 8 takes it, so its venv
## gets the IPython those hosts pair it with (Colab's 7.34). pydantic-ai-slim and pint: the chat panel's
## agent (the offline planner) answers in tests/test_kernel_hosts.py.
kernel-matrix: $(STAMP)
	@for v in $(IPYKERNEL_MATRIX); do \
	  env=.venv-ipykernel-$$v; \
	  case $$v in 5.*) pins="ipython==7.34.0";; *) pins="";; esac; \
	  [ -x $$env/bin/python ] || $(PYTHON) -m venv $$env; \
	  [ -f $$env/.ok-agent ] || { $$env/bin/pip install -q "ipykernel==$$v" $$pins anywidget pydantic \
	    "pydantic-ai-slim>=2.68,<3" pint && touch $$env/.ok-agent; } || exit 1; \
	  echo "== kernel tests on ipykernel $$v"; \
	  SPLITBRAIN_KERNEL_PYTHON=$$PWD/$$env/bin/python $(PY) -m pytest -q -m kernel tests || exit 1; \
	done

browser: $(STAMP)
	$(PY) -m pytest -q -m browser tests

## make notebooks: nbval on notebooks/, their calls on headless pages (notebooks/conftest.py: skips without Chromium)
notebooks: $(STAMP)
	SPLITBRAIN_HEADLESS=1 $(PY) -m pytest -q --nbval notebooks --nbval-sanitize-with notebooks/sanitize.cfg

bench: $(STAMP)
	$(PY) -m benchmarks

clean:
	rm -rf $(VENV) .venv-ipykernel-* js/node_modules dist build .pytest_cache .mypy_cache .ruff_cache
