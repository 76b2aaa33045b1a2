# casework — two commands that work on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo tour test coverage check lint typecheck layers pytest docs setup clean bench phoenix-venv

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[test,ray,conformance]'
	# BFCL v4 as published (data + checker); its exact pins (numpy 1.26.4, torch) would
	# downgrade the test environment, so only the wheel itself is installed.
	$(BIN)/pip install -q --no-deps 'bfcl-eval==2026.3.23'
	# Presidio, the scrubber's peer (benchmarks/scrub_bench.py, `check --presidio` and its test):
	# asked for in one resolution with the extras above pip finds no versions (langfuse), so it
	# is added to what they installed.
	$(BIN)/pip install -q -e '.[presidio]'
	touch $(STAMP)

# Phoenix (arize-phoenix) in a venv of its own: its pins conflict with the test extra's. The
# OpenInference export's test starts `phoenix serve` from it (tests/interop/test_phoenix.py).
# The stamp names the version, so a new pin reinstalls and nothing else does.
PHOENIX       := 20.26.1
PHOENIX_VENV  := build/phoenix-venv
PHOENIX_STAMP := $(PHOENIX_VENV)/.installed-$(PHOENIX)

$(PHOENIX_STAMP):
	rm -rf $(PHOENIX_VENV)
	$(PYTHON) -m venv $(PHOENIX_VENV)
	$(PHOENIX_VENV)/bin/pip install -q --upgrade pip
	$(PHOENIX_VENV)/bin/pip install -q 'arize-phoenix==$(PHOENIX)'
	touch $(PHOENIX_STAMP)

phoenix-venv: $(PHOENIX_STAMP)

setup: $(STAMP) $(PHOENIX_STAMP)

## A first look at the main job on the bundled example project (a scratch copy under build/demo):
## release, blind labels, agreement, leakage, two agents run, the gate, the report.
demo: $(STAMP)
	PATH="$(CURDIR)/$(BIN):$$PATH" bash scripts/demo.sh

## The full tour: every station on the bundled example projects (scratch copies under build/tour).
tour: $(STAMP)
	PATH="$(CURDIR)/$(BIN):$$PATH" bash scripts/tour.sh

## Lint, type-check and run every test.
test: $(STAMP)
	$(MAKE) --no-print-directory check
	$(MAKE) --no-print-directory pytest

check: lint typecheck layers

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks examples
	$(BIN)/ruff format --check src tests benchmarks examples

typecheck: $(STAMP)
	$(BIN)/mypy

## The layers of DESIGN.md §4 (import-linter contracts in pyproject.toml) and the public API (docs/api.md).
layers: $(STAMP)
	$(BIN)/lint-imports --no-cache
	$(BIN)/python -m casework._api_check

# The tests' scratch files in memory where /dev/shm is a tmpfs (TMPDIR: pytest's tmp_path and
# every tempfile the tests and their subprocesses make). On this machine's ext4, mounted with online
# discard, each unlink, rmdir and fsync waited on the disk: a profile of tests/dataset and
# tests/grading spent 23 s of 215 s in them, 0.5 s on tmpfs. A passed test's tmp_path is removed
# when it ends, so the tmpfs holds little at a time; a failed test's stays for a look.
TEST_TMP := $(shell findmnt -n -o FSTYPE --target /dev/shm 2>/dev/null | grep -qx tmpfs && echo /dev/shm/casework-tests)

# Line and branch coverage with `COVERAGE=1` (`make test COVERAGE=1`, `make coverage`), which CI
# (.ci/run) always sets: its tracer adds about 40% CPU to the suite on Python 3.11, so the
# command one runs between edits leaves it out and the run that reports it stays in CI.
COVERAGE ?=
COV_ARGS := $(if $(COVERAGE),--cov --cov-report=term:skip-covered)

# Bytecode is cached even where the environment says not to (`PYTHONDONTWRITEBYTECODE`, set in
# many container images): otherwise every `casework` process a test starts compiles the package
# again, and each pytest-xdist worker rewrites every test module's asserts again.
pytest: $(STAMP) $(PHOENIX_STAMP)
	$(if $(TEST_TMP),mkdir -p $(TEST_TMP) && TMPDIR=$(TEST_TMP)) PYTHONDONTWRITEBYTECODE= COVERAGE_RCFILE=$(CURDIR)/pyproject.toml $(BIN)/pytest -q -p no:cacheprovider -n auto --dist loadgroup $(COV_ARGS) --durations=25 $(if $(TEST_TMP),-o tmp_path_retention_policy=failed)

## Every test with line and branch coverage (what CI runs).
coverage: $(STAMP)
	$(MAKE) --no-print-directory test COVERAGE=1

## Regenerate docs/cli.md from the commands' help.
docs: $(STAMP)
	$(BIN)/python -m casework.cli.reference > docs/cli.md
	$(BIN)/python -m casework.cli.reference formats docs/formats.md > docs/formats.md.tmp && mv docs/formats.md.tmp docs/formats.md

bench: $(STAMP)
	@for b in benchmarks/*_bench.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

clean:
	rm -rf build .pytest_cache .mypy_cache .ruff_cache
