# optzoo: `make test` and `make run` set everything up themselves on a machine with Python 3.11+.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.optzoo-installed
# Two workers by default: the project's machines have two cores.
PYTEST_WORKERS ?= 2

.PHONY: install test run bench lint docs clean

$(STAMP): pyproject.toml constraints.txt
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet -c constraints.txt -e ".[all,dev,bench,docs]"
	@# MovieLens-100K ships inside the recbole wheel; only its data files are read (optzoo.recsys)
	$(BIN)/python -m pip install --quiet --no-deps recbole==1.2.1
	@touch $(STAMP)

install: $(STAMP)

# pytest exits 5 when it collected no tests: that is a failure here, not a pass.
test: $(STAMP)
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
