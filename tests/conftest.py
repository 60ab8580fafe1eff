"""Shared fixtures: running dbt against throw-away DuckDB files."""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import duckdb
import pytest

from loft_warehouse import settings
from loft_warehouse.errors import ConfigurationError
from loft_warehouse.settings import PROJECT_ROOT, data_dir
from loft_warehouse.tokens import TokenCounter, counter
from tests import docs_commands

DBT = str(Path(sys.executable).with_name("dbt"))
# Tests change warehouse files between dbt runs, so every dbt the tests start builds in place;
# tests/spine/test_publish.py covers the publishing a user's build does.
os.environ["LOFT_BUILD_IN_PLACE"] = "1"
# One gold SQL cache for the session (filled by its first build), not the developer's; removed
# when the session's process exits.
SESSION_CACHE = tempfile.mkdtemp(prefix="loft-test-cache-")
os.environ["LOFT_CACHE_DIR"] = SESSION_CACHE
atexit.register(shutil.rmtree, SESSION_CACHE, ignore_errors=True)


def run_dbt(
    args: list[str], database: Path, env: dict[str, str] | None = None, *, publish: bool = False
) -> subprocess.CompletedProcess:
    """Run the dbt CLI on the project against `database`, artifacts beside it.

    dbt builds `database` in place (see BUILD_IN_PLACE), unless `publish`: then it builds
    `<database>.build` and publishes it to `database`, as a user's build does."""
    work = database.parent
    full_env = {
        **os.environ,
        "LOFT_DUCKDB_PATH": str(database),
        "LOFT_BUILD_IN_PLACE": "" if publish else "1",
        "DO_NOT_TRACK": "1",
        **(env or {}),
    }
    return subprocess.run(
        [DBT, *args, "--target-path", str(work / "target"), "--log-path", str(work / "logs")],
        cwd=PROJECT_ROOT,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=1800,
    )


def build_as_documented(work: Path, run_id: str, env: dict[str, str] | None = None) -> Path:
    """The dbt commands of the docs block marked `run: run_id` (tests/docs_commands.py), in order,
    into work/loft.duckdb instead of the warehouse file the block names, with their own response
    store and imports folder and `env`; the warehouse file."""
    database = work / "loft.duckdb"
    own = {"LOFT_RESPONSE_STORE": str(work / "store.sqlite"), "LOFT_IMPORTS_DIR": str(work / "imports"), **(env or {})}
    for command in docs_commands.dbt_runs(run_id):
        documented = {name: value for name, value in command.env.items() if name != "LOFT_DUCKDB_PATH"}
        result = run_dbt(command.args, database, {**documented, **own})
        assert result.returncode == 0, result.stdout[-5000:]
    return database


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The real shared data root (tests that need it are skipped without it)."""
    try:
        return data_dir()
    except Exception as exc:  # noqa: BLE001 - any configuration problem means no data here
        pytest.skip(f"no shared data: {exc}")


@pytest.fixture(scope="session")
def tokens() -> TokenCounter:
    """The shared SentencePiece model (skips when the shared data is absent)."""
    try:
        return counter(settings.tokenizer_model())
    except ConfigurationError:
        pytest.skip("shared tokenizer model not available")


@pytest.fixture(scope="session")
def spine_warehouse(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> Path:
    """loft_32k and loft_128k built once from the shared data (spine models only)."""
    database = tmp_path_factory.mktemp("spine") / "loft.duckdb"
    result = run_dbt(["build", "--select", "+loft_32k__corpus_quality", "+loft_128k__corpus_quality"], database)
    assert result.returncode == 0, result.stdout[-5000:]
    return database


@pytest.fixture
def warehouse_copy(spine_warehouse: Path, tmp_path: Path) -> Callable[[], Path]:
    """A private copy of the built warehouse that a test may corrupt."""

    def copy() -> Path:
        target = tmp_path / "loft.duckdb"
        shutil.copy(spine_warehouse, target)
        return target

    return copy


def query(database: Path, sql: str) -> list[tuple]:
    """Rows of a read-only query."""
    with duckdb.connect(str(database), read_only=True) as con:
        return con.sql(sql).fetchall()
