"""The data-directory setting (explicit value, environment, ../shared/data default, clear error) and
the DuckDB memory limit."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from loft_warehouse import settings
from loft_warehouse.errors import ConfigurationError


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    monkeypatch.setattr(settings, "PROJECT_ROOT", root)
    monkeypatch.delenv("LOFT_DATA_DIR", raising=False)
    return root


def test_default_is_shared_data_beside_the_project(project: Path) -> None:
    shared = project.parent / "shared" / "data"
    shared.mkdir(parents=True)
    assert settings.data_dir() == shared


def test_missing_default_says_what_to_set(project: Path) -> None:
    with pytest.raises(ConfigurationError, match="set LOFT_DATA_DIR"):
        settings.data_dir()


def test_environment_wins_over_default(project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (project.parent / "shared" / "data").mkdir(parents=True)
    mine = tmp_path / "mine"
    mine.mkdir()
    monkeypatch.setenv("LOFT_DATA_DIR", str(mine))
    assert settings.data_dir() == mine


def test_explicit_setting_wins_and_relative_paths_are_project_relative(project: Path, monkeypatch) -> None:
    monkeypatch.setenv("LOFT_DATA_DIR", "/nonexistent")
    (project / "data").mkdir()
    assert settings.data_dir("data") == project / "data"


def test_a_setting_that_does_not_exist_is_an_error(project: Path) -> None:
    with pytest.raises(ConfigurationError, match="does not exist"):
        settings.data_dir("/no/such/folder")


def test_budgets_are_ninety_percent() -> None:
    assert [s.budget for s in settings.SIZES.values()] == [28_800, 115_200, 900_000]
    with pytest.raises(ConfigurationError):
        settings.size("2m")
    assert settings.context("2k").budget == 1_800 and settings.context("1m") == settings.size("1m")
    with pytest.raises(ConfigurationError, match="unknown context length"):
        settings.context("3k")


def _memory_limit(con: duckdb.DuckDBPyConnection) -> str:
    row = con.execute("select current_setting('memory_limit'), current_setting('temp_directory')").fetchone()
    assert row is not None
    return f"{row[0]} in {row[1]}"


def test_a_memory_limit_is_always_set_by_default_a_quarter_of_the_machine(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("LOFT_DUCKDB_MEMORY_LIMIT", raising=False)
    default = _memory_limit(duckdb.connect())
    quarter = settings.machine_memory_bytes() // 4 // 2**20
    assert settings.duckdb_memory_limit() == f"{max(quarter, 1024)}MiB"
    sized = duckdb.connect()
    sized.execute(f"set memory_limit = '{max(quarter, 1024)}MiB'")
    machine_sized = _memory_limit(settings.limit_memory(duckdb.connect(), tmp_path / "spill"))
    assert machine_sized == f"{_memory_limit(sized).split(' in ')[0]} in {tmp_path / 'spill'}"
    assert machine_sized.split(" in ")[0] != default.split(" in ")[0]
    monkeypatch.setattr(settings, "machine_memory_bytes", lambda: 2 * 2**30)
    assert settings.duckdb_memory_limit() == "1024MiB"
    monkeypatch.setenv("LOFT_DUCKDB_MEMORY_LIMIT", " 300MB ")
    expected = duckdb.connect()
    expected.execute("set memory_limit = '300MB'")
    limited = _memory_limit(settings.limit_memory(duckdb.connect(), tmp_path / "spill"))
    assert limited != default
    assert limited == f"{_memory_limit(expected).split(' in ')[0]} in {tmp_path / 'spill'}"


@pytest.mark.parametrize("value", ["lots", "2 G", "-1GB", "1GB; drop table x"])
def test_a_memory_limit_that_is_no_size_is_refused_by_name(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("LOFT_DUCKDB_MEMORY_LIMIT", value)
    with pytest.raises(ConfigurationError, match="LOFT_DUCKDB_MEMORY_LIMIT must be a size"):
        settings.limit_memory(duckdb.connect())


def test_dbt_connections_and_file_imports_take_the_memory_limit(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from loft_warehouse.dbt_boundary.plugin import Plugin
    from loft_warehouse.scoring import bulk_files

    monkeypatch.setenv("LOFT_DUCKDB_MEMORY_LIMIT", "200MB")
    expected = duckdb.connect()
    expected.execute("set memory_limit = '200MB'")
    limit = _memory_limit(expected).split(" in ")[0]
    dbt_connection = duckdb.connect()
    Plugin.configure_connection(Plugin.__new__(Plugin), dbt_connection)  # not initialize(): it arms Ctrl-C
    assert _memory_limit(dbt_connection).startswith(f"{limit} in ")
    lines = tmp_path / "preds.jsonl"
    lines.write_text('{"qid": "q1", "num_turns": 1, "model_outputs": [["d1"]]}\n')
    reader = bulk_files._connect(lines, bulk_files.PREDICTION_FIELDS, allow_nan=True, line_cap=2**20)
    assert reader is not None
    assert _memory_limit(reader).startswith(f"{limit} in ")
    assert "loft-spill-" in _memory_limit(reader)
