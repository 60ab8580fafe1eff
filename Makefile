# Fresh machine: `make build` sets up .venv from pinned wheels and builds loft_128k; `make test` runs the suite.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

$(STAMP): requirements.lock pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q -r requirements.lock
	$(BIN)/pip install -q --no-deps -e .
	touch $(STAMP)

.PHONY: setup build build-all test lint
setup: $(STAMP)

build: $(STAMP)
	$(BIN)/dbt build --select loft_128k

build-all: $(STAMP)
	$(BIN)/dbt build --select loft_32k loft_128k loft_1m

lint: $(STAMP)
	$(BIN)/ruff check python tests benchmarks

test: $(STAMP)
	$(BIN)/ruff check python tests benchmarks
	$(BIN)/pytest
