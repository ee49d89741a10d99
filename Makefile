# evalhouse — every target sets itself up: it finds a Python >= 3.12, creates .venv and
# installs the pinned dependencies (requirements.lock) the first time, and again only when
# pyproject.toml or the lock changes.
SHELL := /bin/sh
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DB ?= $(or $(EVALHOUSE_DB),warehouse.duckdb)
MIRROR ?=
PYTEST_ARGS ?=

.DEFAULT_GOAL := help

help: ## list the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  \033[1m%-12s\033[0m %s\n", $$1, $$2}' $(MAKEFILE_LIST)

$(STAMP): pyproject.toml requirements.lock
	@py=$$(scripts/find-python) || exit 1; \
	if [ ! -x $(BIN)/python ]; then echo "creating $(VENV) with $$py"; "$$py" -m venv $(VENV) || exit 1; fi
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c requirements.lock -e '.[test,spark]'
	@touch $(STAMP)

venv: $(STAMP) ## create .venv and install the pinned dependencies

run: $(STAMP) ## the nightly refresh into ./warehouse.duckdb; MIRROR=dir|url replays pinned payloads (see 'make mirror')
	@status=0; $(BIN)/evalhouse --db $(DB) refresh $(if $(MIRROR),--mirror $(MIRROR)) || status=$$?; \
	$(BIN)/evalhouse --db $(DB) stats; exit $$status

mirror: $(STAMP) ## build a replay mirror in build/mirror from ../shared, for offline runs: make run MIRROR=build/mirror
	$(BIN)/evalhouse mirror from-shared build/mirror

test: $(STAMP) ## run the test suite (reads ../shared when present; installs Chromium for the browser test)
	@scripts/ensure-chromium
	$(BIN)/python -m pytest $(PYTEST_ARGS)

lint: $(STAMP) ## ruff check and format check
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports

format: $(STAMP) ## apply ruff fixes and formatting
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

bench: $(STAMP) ## run every performance script in benchmarks/
	@for f in benchmarks/*.py; do echo "== $$f"; $(BIN)/python $$f || exit 1; done

lock: ## re-resolve requirements.lock from pyproject.toml in a scratch venv
	@py=$$(scripts/find-python) || exit 1; rm -rf .lockenv; "$$py" -m venv .lockenv && \
	.lockenv/bin/python -m pip install --quiet -e '.[test,spark]' && \
	.lockenv/bin/python -m pip freeze --exclude-editable | grep -v '^-e' > requirements.lock; rm -rf .lockenv

clean: ## remove the venv and caches (keeps the warehouse)
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis

.PHONY: help venv run mirror test lint format bench lock clean
