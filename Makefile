# evalhouse — every target sets itself up: it finds a Python >= 3.12, creates .venv and installs
# the pinned dependencies (requirements.lock) the first time, and again only when pyproject.toml
# or the lock changes. The nightly job ('make run') installs the core only; 'make test', 'lint' and
# 'bench' add the extras (test tools, Spark, the wordllama encoder).
SHELL := /bin/sh
VENV := .venv
BIN := $(VENV)/bin
CORE := $(VENV)/.installed-core
FULL := $(VENV)/.installed-full
DB ?= $(or $(EVALHOUSE_DB),warehouse.duckdb)
MIRROR ?=
PYTEST_ARGS ?=
# pytest-xdist workers: one more than the cores, because much of the suite waits (loopback HTTP
# servers, subprocesses, deadlines, the JVM and Chromium starting) rather than computes. Measured on
# a 2-core machine: 2 workers 1,470 s wall, 3 workers 1,207 s (docs/development.md).
WORKERS ?= $(shell echo $$(( $$(nproc 2>/dev/null || echo 1) + 1 )))
# The suite starts a few hundred Python processes (the CLI under kill -9, concurrent writers, the
# EEE validator): with PYTHONDONTWRITEBYTECODE set, each of them compiled evalhouse again and every
# worker rewrote each test module's asserts again. The tests keep their bytecode (in __pycache__,
# ignored by git).
PYTEST := env -u PYTHONDONTWRITEBYTECODE $(BIN)/python -m pytest

.DEFAULT_GOAL := help

help: ## list the targets
	@if [ -t 1 ]; then b=$$(printf '\033[1m'); n=$$(printf '\033[0m'); else b=; n=; fi; \
	awk -v b="$$b" -v n="$$n" 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  %s%-14s%s %s\n", b, $$1, n, $$2}' $(MAKEFILE_LIST)

$(BIN)/python:
	@py=$$(scripts/find-python) || exit 1; echo "creating $(VENV) with $$py"; "$$py" -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(CORE): pyproject.toml requirements.lock | $(BIN)/python
	$(BIN)/python -m pip install --quiet -c requirements.lock -e .
	@touch $(CORE)

$(FULL): $(CORE)
	$(BIN)/python -m pip install --quiet -c requirements.lock -e '.[test,spark,embed]'
	@touch $(FULL)

venv: $(FULL) ## create .venv with every pinned dependency, extras included (tests, Spark, encoders)

run: $(CORE) ## the nightly refresh into ./warehouse.duckdb; MIRROR=dir|url replays pinned payloads (see 'make mirror')
	@status=0; $(BIN)/evalhouse --db $(DB) refresh $(if $(MIRROR),--mirror $(MIRROR)) || status=$$?; \
	$(BIN)/evalhouse --db $(DB) stats; exit $$status

mirror: $(CORE) ## build a replay mirror in build/mirror from ../shared, for offline runs: make run MIRROR=build/mirror
	$(BIN)/evalhouse mirror from-shared build/mirror

test: $(FULL) ## the whole suite on every core, CI profile (reads ../shared when present; installs Chromium)
	@scripts/ensure-chromium
	@start=$$(date +%s); $(PYTEST) -n $(WORKERS) --dist loadfile --no-loadscope-reorder $(PYTEST_ARGS); status=$$?; \
	echo "make test: $$(( $$(date +%s) - start )) s wall"; exit $$status

test-fast: $(FULL) ## the edit loop: everything but the fault suite and the slow reproductions
	$(PYTEST) -n $(WORKERS) --dist loadfile --no-loadscope-reorder -m "not slow and not faults" $(PYTEST_ARGS)

test-cpu: $(FULL) ## the whole suite, then the CPU each test module used (where the suite's time goes)
	@scripts/ensure-chromium
	@out=$$(mktemp); EVALHOUSE_TEST_CPU=$$out $(PYTEST) -n $(WORKERS) --dist loadfile --no-loadscope-reorder $(PYTEST_ARGS); status=$$?; \
	$(BIN)/python tests/cpu_account.py $$out; rm -f $$out; exit $$status

test-thorough: $(FULL) ## the whole suite with every Hypothesis example and kill -9 trial it was designed with
	@scripts/ensure-chromium
	EVALHOUSE_TEST_PROFILE=thorough $(PYTEST) -n $(WORKERS) --dist loadfile --no-loadscope-reorder $(PYTEST_ARGS)

lint: $(FULL) ## ruff check and format check
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports

format: $(FULL) ## apply ruff fixes and formatting
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

bench: $(FULL) ## run every performance script in benchmarks/
	@for f in benchmarks/*.py; do echo "== $$f"; $(BIN)/python $$f || exit 1; done

lock: ## re-resolve requirements.lock from pyproject.toml in a scratch venv
	@py=$$(scripts/find-python) || exit 1; rm -rf .lockenv; "$$py" -m venv .lockenv && \
	.lockenv/bin/python -m pip install --quiet -e '.[test,spark,embed]' && \
	.lockenv/bin/python -m pip freeze --exclude-editable | grep -v '^-e' > requirements.lock; rm -rf .lockenv

clean: ## remove the venv and caches (keeps the warehouse)
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis

.PHONY: help venv run mirror test test-fast test-cpu test-thorough lint format bench lock clean
