"""The systems file: loading, defaults, selection, credentials, scope."""

from __future__ import annotations

import polars as pl
import pytest

from loft_warehouse.errors import ConfigurationError
from loft_warehouse.inference.systems import (
    load_systems,
    parse_selection,
    scope,
    select,
    systems_file,
)
from tests.inference.support import make_prompts, write_systems


def test_the_shipped_file_loads_and_defaults_to_bm25_plus_api_systems():
    systems = load_systems()
    default = [s.name for s in select(systems, None)]
    assert default == ["bm25", "gemini-1.5-pro", "gemini-2.5-flash", "gpt-4o", "claude-opus-4.5"]
    assert all(systems[n].generation["temperature"] == 0.0 for n in systems)
    assert systems["bm25"].tasks == ("retrieval",)
    assert systems["gpt-4o"].max_output_tokens == 256
    assert systems["gpt-4o"].tokenizer == "tiktoken:o200k_base"
    assert systems["gemini-1.5-pro"].tokenizer == "gemini"
    assert systems["gemma3-270m-local"].tokenizer == "gguf"
    assert systems["gemma3-270m-local"].max_output_tokens == 64


def test_selection_from_vars_and_env_strings():
    assert parse_selection(None) is None
    assert parse_selection("") is None
    assert parse_selection("bm25, gpt-4o") == ["bm25", "gpt-4o"]
    assert parse_selection("[bm25, gpt-4o]") == ["bm25", "gpt-4o"]
    assert parse_selection(["bm25"]) == ["bm25"]
    systems = load_systems()
    assert [s.name for s in select(systems, ["gpt-4o", "bm25", "gpt-4o"])] == ["gpt-4o", "bm25"]
    with pytest.raises(ConfigurationError, match="unknown system"):
        select(systems, ["gpt-5"])
    typo = r"unknown system\(s\) \['gtp-4o'\] \('gtp-4o': did you mean 'gpt-4o'\?\)"
    with pytest.raises(ConfigurationError, match=typo):
        select(systems, ["gtp-4o"])


def test_bad_entries_are_configuration_errors(tmp_path):
    path = write_systems(tmp_path / "s.yaml", [{"name": "x", "provider": "cohere"}])
    with pytest.raises(ConfigurationError, match=r"systems\[0\] \(x\): provider 'cohere'"):
        load_systems(path)
    path = write_systems(tmp_path / "s.yaml", [{"name": "x", "provider": "bm25"}] * 2)
    with pytest.raises(ConfigurationError, match="defined twice"):
        load_systems(path)
    path = write_systems(tmp_path / "s.yaml", [{"name": "x", "provider": "bm25", "colour": 1}])
    with pytest.raises(ConfigurationError, match="colour"):
        load_systems(path)


def test_credentials_come_from_the_environment(tmp_path, monkeypatch):
    entries = [
        {"name": "o", "provider": "openai", "api_key_env": "LOFT_TEST_K"},
        {"name": "c", "provider": "openai_compatible", "base_url_env": "LOFT_TEST_URL"},
    ]
    systems = load_systems(write_systems(tmp_path / "s.yaml", entries))
    monkeypatch.delenv("LOFT_TEST_K", raising=False)
    monkeypatch.delenv("LOFT_TEST_URL", raising=False)
    assert systems["o"].missing_credentials() == ["LOFT_TEST_K"]
    assert systems["c"].missing_credentials() == ["LOFT_TEST_URL"]
    monkeypatch.setenv("LOFT_TEST_K", "k")
    monkeypatch.setenv("LOFT_TEST_URL", "http://127.0.0.1:1/v1")
    assert systems["o"].missing_credentials() == []
    assert systems["c"].endpoint() == "http://127.0.0.1:1/v1"


def test_scope_filters_sizes_tasks_datasets_variants(tmp_path):
    entries = [
        {"name": "a", "provider": "bm25", "datasets": ["ds_pb"]},
        {"name": "b", "provider": "bm25", "sizes": ["32k"]},
    ]
    systems = load_systems(write_systems(tmp_path / "s.yaml", entries))
    prompts = make_prompts()
    assert scope(prompts, systems["a"], "128k")["qid"].to_list() == ["qb0", "qb1"]
    assert scope(prompts, systems["b"], "128k").height == 0
    assert scope(prompts.with_columns(pl.lit("sql").alias("task")), systems["b"], "32k").height == 5


def test_systems_file_setting(monkeypatch, tmp_path):
    monkeypatch.delenv("LOFT_SYSTEMS_FILE", raising=False)
    assert systems_file().name == "systems.yaml"
    path = write_systems(tmp_path / "mine.yaml", [])
    monkeypatch.setenv("LOFT_SYSTEMS_FILE", str(path))
    assert systems_file() == path
    with pytest.raises(ConfigurationError, match="not found"):
        systems_file(str(tmp_path / "missing.yaml"))
