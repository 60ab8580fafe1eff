"""Gold SQL results kept across builds: a rebuild with nothing changed executes nothing and
parses no dump, and returns the same rows; the key changes with the SQL, the dump or the code."""

from __future__ import annotations

import sqlite3

import duckdb

from loft_warehouse.sql import gold, gold_cache
from loft_warehouse.sql.gold_cache import GoldCache
from loft_warehouse.sql.schema import Schema
from tests.spies import spy


def test_a_cached_rebuild_executes_nothing_and_returns_the_same_rows(root, tmp_path, monkeypatch):
    cache = GoldCache(tmp_path / "gold.sqlite")
    executed = spy(monkeypatch, gold, "_execute", lambda _root, queries: len(queries))
    first = gold.execute_all(root, cache)
    assert executed and executed[0] == 1034 + 1203 - (62 + 59)  # every turn with a database

    def no_dumps(_root):
        raise AssertionError("a fully cached rebuild parsed the dumps")

    monkeypatch.setattr(gold, "schemas", no_dumps)
    second = gold.execute_all(root, cache)
    assert executed == [executed[0]]
    assert second == first
    cache.close()


def test_the_key_changes_with_the_sql_the_dump_and_the_code(monkeypatch):
    key = gold_cache.cache_key("select 1", "a" * 64)
    assert key == gold_cache.cache_key("select 1", "a" * 64)
    assert key != gold_cache.cache_key("select 2", "a" * 64)
    assert key != gold_cache.cache_key("select 1", "b" * 64)
    monkeypatch.setattr(gold_cache, "code_version", lambda: "another version")
    assert key != gold_cache.cache_key("select 1", "a" * 64)


def test_a_query_cut_short_by_the_timeout_is_not_kept_an_error_of_the_query_is(tmp_path, monkeypatch):
    run_duckdb, run_sqlite = gold.run_duckdb, gold.run_sqlite
    monkeypatch.setattr(gold, "run_duckdb", lambda con, sql: run_duckdb(con, sql, 0.2))
    monkeypatch.setattr(gold, "run_sqlite", lambda con, sql: run_sqlite(con, sql, 0.2))
    slow = "with recursive n(i) as (select 1 union all select i + 1 from n where i < 1000000000) select sum(i) from n"
    duck, lite = duckdb.connect(), sqlite3.connect(":memory:")
    interrupted = gold.execute_sql(slow, Schema({}), duck, lite)
    failing = gold.execute_sql("select no_such_column from nowhere", Schema({}), duck, lite)
    assert interrupted["interrupted"] and interrupted["status"] == "error" == interrupted["sqlite_status"]
    assert not failing["interrupted"] and failing["status"] == "error"
    cache = GoldCache(tmp_path / "gold.sqlite")
    cache.put({"slow": interrupted, "bad": failing})
    assert set(cache.get(["slow", "bad"])) == {"bad"}
    cache.close()
