"""Hand-made prompt tables and systems files for the inference tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import pytest
import yaml

from loft_warehouse.inference.fixture_server import FixtureServer
from loft_warehouse.inference.runner import RunInputs
from loft_warehouse.inference.systems import load_systems

PREFIX_A = "Instruction A.\n" + "".join(
    f"ID: {i} | CONTENT: passage {i} about topic {i} | END ID: {i}\n" for i in range(3)
)
PREFIX_B = "Instruction B.\n" + "".join(f"ID: {i} | CONTENT: other {i} | END ID: {i}\n" for i in range(2))
PREFIXES = {"pa": PREFIX_A, "pb": PREFIX_B}


def prompt_row(prefix_id: str, qid: str, suffix: str, **overrides: Any) -> dict[str, Any]:
    row = {
        "prompt_id": f"retrieval/ds_{prefix_id}/ds_{prefix_id}/default/{qid}/0",
        "task": "retrieval",
        "dataset": f"ds_{prefix_id}",
        "corpus_id": f"ds_{prefix_id}",
        "variant": "default",
        "split": "dev",
        "qid": qid,
        "turn": 0,
        "n_turns": 1,
        "prefix_id": prefix_id,
        "suffix": suffix,
        "n_tokens_prefix": 100,
        "n_tokens_total": 110,
    }
    row.update(overrides)
    return row


def make_prompts(n_a: int = 3, n_b: int = 2) -> pl.DataFrame:
    rows = [prompt_row("pa", f"qa{i}", f"====== Now let's start! ======\nquery a{i}\n") for i in range(n_a)]
    rows += [prompt_row("pb", f"qb{i}", f"====== Now let's start! ======\nquery b{i}\n") for i in range(n_b)]
    return pl.DataFrame(rows)


def write_systems(path: Path, systems: list[dict[str, Any]], defaults: dict[str, Any] | None = None) -> Path:
    base = {
        "generation": {"temperature": 0.0, "max_output_tokens": 32},
        "concurrency": 2,
        "max_attempts": 5,
        "timeout_s": 5,
        "backoff_initial_s": 0.01,
        "backoff_max_s": 0.05,
    }
    path.write_text(yaml.safe_dump({"defaults": {**base, **(defaults or {})}, "systems": systems}))
    return path


def openai_system(name: str = "gpt-fixture", **overrides: Any) -> dict[str, Any]:
    return {
        "name": name,
        "provider": "openai",
        "model": "gpt-4o-2024-08-06",
        "api_key_env": "LOFT_TEST_OPENAI_KEY",
        "base_url_env": "LOFT_TEST_OPENAI_BASE_URL",
        "context_window": 1000,
        **overrides,
    }


def gemini_system(name: str = "gemini-fixture", **overrides: Any) -> dict[str, Any]:
    return {
        "name": name,
        "provider": "gemini",
        "model": "gemini-1.5-pro-002",
        "api_key_env": "LOFT_TEST_GEMINI_KEY",
        "base_url_env": "LOFT_TEST_GEMINI_BASE_URL",
        "context_window": 100000,
        "cache": {"min_prefix_tokens": 50, "ttl_s": 60},
        **overrides,
    }


def anthropic_system(name: str = "claude-fixture", **overrides: Any) -> dict[str, Any]:
    return {
        "name": name,
        "provider": "anthropic",
        "model": "claude-3-opus-20240229",
        "api_key_env": "LOFT_TEST_ANTHROPIC_KEY",
        "base_url_env": "LOFT_TEST_ANTHROPIC_BASE_URL",
        "context_window": 100000,
        "cache": {"min_prefix_tokens": 50},
        **overrides,
    }


def fixture_env(server: FixtureServer) -> dict[str, str]:
    """Keys and endpoints of the three test systems, pointed at the fixture."""
    return {
        "LOFT_TEST_OPENAI_KEY": "sk-test-key",
        "LOFT_TEST_OPENAI_BASE_URL": f"{server.url}/v1",
        "LOFT_TEST_GEMINI_KEY": "gm-test-key",
        "LOFT_TEST_GEMINI_BASE_URL": server.url,
        "LOFT_TEST_ANTHROPIC_KEY": "sk-ant-test-key",
        "LOFT_TEST_ANTHROPIC_BASE_URL": server.url,
    }


def systems_from(tmp_path: Path, entries: list[dict[str, Any]], **defaults: Any):
    return list(load_systems(write_systems(tmp_path / "systems.yaml", entries, defaults)).values())


def inputs(prompts: pl.DataFrame | None = None, **extra: Any) -> RunInputs:
    return RunInputs(prompts=make_prompts() if prompts is None else prompts, prefixes=dict(PREFIXES), **extra)


def needs_tiktoken_files() -> None:
    """Skip when the shared tiktoken rank files are not there (no data root)."""
    from loft_warehouse.errors import ConfigurationError
    from loft_warehouse.model_tokens import TIKTOKEN_SHA256, rank_file

    try:
        missing = [name for name in TIKTOKEN_SHA256 if not rank_file(name).is_file()]
    except ConfigurationError as exc:
        pytest.skip(f"no shared data: {exc}")
    if missing:
        pytest.skip(f"shared tiktoken rank files missing: {missing}")
