"""The working file's unpublished mark (publish.py): a run that did not publish is never built on."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from loft_warehouse.dbt_boundary.publish import begin_build, publish, restore_unpublished, unpublished_marker
from loft_warehouse.errors import ConfigurationError


def _database(path: Path, value: str) -> Path:
    with duckdb.connect(str(path)) as con:
        con.execute("create or replace table t as select ? as v", [value])
    return path


def _value(path: Path) -> str:
    with duckdb.connect(str(path), read_only=True) as con:
        return con.sql("select v from t").fetchone()[0]


def test_a_published_run_leaves_nothing_to_restore(tmp_path: Path) -> None:
    working, published = _database(tmp_path / "w.duckdb.build", "new"), tmp_path / "w.duckdb"
    begin_build(str(working), str(published))
    assert unpublished_marker(working).exists()
    assert publish(str(working), str(published)).startswith(f"published {published}")
    assert not unpublished_marker(working).exists()
    assert restore_unpublished(str(working), str(published)) is None
    assert _value(working) == _value(published) == "new"


def test_an_unpublished_run_is_replaced_by_the_published_build_wal_included(tmp_path: Path) -> None:
    published = _database(tmp_path / "w.duckdb", "published")
    working = _database(tmp_path / "w.duckdb.build", "published")
    begin_build(str(working), str(published))
    killed = (
        f"import duckdb, os; con = duckdb.connect({str(working)!r}); "
        "con.execute(\"set checkpoint_threshold = '1GB'\"); con.execute(\"update t set v = 'killed'\"); "
        "os.kill(os.getpid(), 9)"
    )
    subprocess.run([sys.executable, "-c", killed], check=False)
    assert Path(f"{working}.wal").exists()  # the killed build's last writes, which must not be replayed
    line = restore_unpublished(str(working), str(published))
    assert line is not None and "did not publish; starting from the published build" in line
    assert not unpublished_marker(working).exists() and not Path(f"{working}.wal").exists()
    assert _value(working) == "published"


def test_an_unpublished_run_with_nothing_published_starts_empty(tmp_path: Path) -> None:
    working, published = _database(tmp_path / "w.duckdb.build", "half"), tmp_path / "w.duckdb"
    begin_build(str(working), str(published))
    line = restore_unpublished(str(working), str(published))
    assert line is not None and "nothing is published yet" in line
    assert not working.exists() and not unpublished_marker(working).exists()


def test_a_deleted_working_file_starts_again_from_the_published_build(tmp_path: Path) -> None:
    published, working = _database(tmp_path / "w.duckdb", "published"), tmp_path / "w.duckdb.build"
    line = restore_unpublished(str(working), str(published))
    assert line == f"no working copy {working}; starting from the published build {published}"
    assert _value(working) == "published"
    assert restore_unpublished(str(working), str(published)) is None


def test_a_first_build_has_nothing_to_restore(tmp_path: Path) -> None:
    assert restore_unpublished(str(tmp_path / "w.duckdb.build"), str(tmp_path / "w.duckdb")) is None
    assert not (tmp_path / "w.duckdb.build").exists()


def test_a_working_file_another_process_holds_is_left_alone(tmp_path: Path) -> None:
    published = _database(tmp_path / "w.duckdb", "published")
    working = _database(tmp_path / "w.duckdb.build", "running")
    begin_build(str(working), str(published))
    hold = f"import duckdb, sys; c = duckdb.connect({str(working)!r}); print('open', flush=True); sys.stdin.read()"
    holder = subprocess.Popen([sys.executable, "-c", hold], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "open"
    try:
        assert restore_unpublished(str(working), str(published)) is None
        assert unpublished_marker(working).exists()
    finally:
        holder.communicate("")
    assert _value(working) == "running"


def test_building_in_place_has_no_mark(tmp_path: Path) -> None:
    database = _database(tmp_path / "w.duckdb", "in place")
    begin_build(str(database), str(database))
    assert not unpublished_marker(database).exists()
    assert restore_unpublished(str(database), str(database)) is None


def _killed_writer(database: Path) -> None:
    """A read-write session on `database` that wrote and died before a checkpoint: its WAL stays."""
    killed = (
        f"import duckdb, os; con = duckdb.connect({str(database)!r}); "
        "con.execute(\"set checkpoint_threshold = '1GB'\"); con.execute(\"update t set v = 'dead session'\"); "
        "con.execute('create table extra as select 1 as x'); os.kill(os.getpid(), 9)"
    )
    subprocess.run([sys.executable, "-c", killed], check=False)
    assert Path(f"{database}.wal").exists()


def test_a_stale_wal_on_the_warehouse_file_is_set_aside_never_replayed_over_a_new_build(tmp_path: Path) -> None:
    published = _database(tmp_path / "w.duckdb", "old build")
    _killed_writer(published)
    working = _database(tmp_path / "w.duckdb.build", "new build")
    line = publish(str(working), str(published))
    assert "a write-ahead log left by a session that died on it was set aside as" in line
    assert not Path(f"{published}.wal").exists()
    assert _value(published) == "new build"
    with duckdb.connect(str(published), read_only=True) as con:
        assert con.sql("select table_name from duckdb_tables()").fetchall() == [("t",)]
    (aside,) = tmp_path.glob("w.duckdb.wal.stale-*")
    assert aside.stat().st_size > 0
    assert publish(str(working), str(published)).startswith(f"published {published}")


def test_publishing_over_a_file_open_for_writing_is_refused_in_one_line(tmp_path: Path) -> None:
    published = _database(tmp_path / "w.duckdb", "old build")
    working = _database(tmp_path / "w.duckdb.build", "new build")
    hold = f"import duckdb, sys; c = duckdb.connect({str(published)!r}); print('open', flush=True); sys.stdin.read()"
    holder = subprocess.Popen([sys.executable, "-c", hold], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "open"
    try:
        with pytest.raises(ConfigurationError, match=r"^not published: .*w\.duckdb is open for writing in another"):
            publish(str(working), str(published))
    finally:
        holder.communicate("")
    assert _value(published) == "old build"


def test_readers_of_the_warehouse_file_never_stop_a_publish(tmp_path: Path) -> None:
    published = _database(tmp_path / "w.duckdb", "old build")
    working = _database(tmp_path / "w.duckdb.build", "new build")
    with duckdb.connect(str(published), read_only=True) as reader:
        assert publish(str(working), str(published)).startswith(f"published {published}")
        assert reader.sql("select v from t").fetchone() == ("old build",)
    assert _value(published) == "new build"
