"""Gold SQL results kept across builds, keyed by what decides them.

A gold turn's result (both engines' rows and its eligibility) depends only on its SQL, the
database dump it runs on and the code that rewrites and compares it. The key is the sha256 of
(gold SQL, dump file sha256, code version: this package's sources and the sqlglot and DuckDB
versions), so a rebuild with nothing changed reads every turn here instead of parsing the
dumps and running ~1,200 queries in two engines, and a change to any of the three misses.
A result cut short by the timeout in either engine is not kept: that is the machine, not the
query.
The file lives in $LOFT_CACHE_DIR, else .loft_cache/ in the project.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Any

import duckdb
import sqlglot

from loft_warehouse.frame_cache import cache_dir

SQL_PACKAGE = Path(__file__).parent


@cache
def code_version() -> str:
    """sha256 of the SQL package's sources and the engine versions."""
    digest = hashlib.sha256(f"sqlglot {sqlglot.__version__} duckdb {duckdb.__version__}".encode())
    for path in sorted(SQL_PACKAGE.glob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def file_sha256(path: Path) -> str:
    """sha256 of a file's bytes."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def cache_key(gold_sql: str, dump_sha256: str) -> str:
    """The key of one gold query on one dump under this code."""
    payload = json.dumps([code_version(), dump_sha256, gold_sql], ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class GoldCache:
    """A SQLite file of result dicts by key."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or cache_dir() / "sql_gold.sqlite"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._con = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
        self._con.execute("PRAGMA journal_mode=WAL")
        self._con.execute("CREATE TABLE IF NOT EXISTS gold (key TEXT PRIMARY KEY, result TEXT NOT NULL)")

    def get(self, keys: Iterable[str]) -> dict[str, dict[str, Any]]:
        """Cached results of these keys."""
        keys = list(dict.fromkeys(keys))
        found: dict[str, dict[str, Any]] = {}
        for start in range(0, len(keys), 500):
            chunk = keys[start : start + 500]
            marks = ", ".join("?" for _ in chunk)
            for key, result in self._con.execute(f"SELECT key, result FROM gold WHERE key IN ({marks})", chunk):
                found[key] = json.loads(result)
        return found

    def put(self, results: dict[str, dict[str, Any]]) -> None:
        """Keep the results that say something about the query (not interrupted ones)."""
        rows = [
            (key, json.dumps(result, ensure_ascii=False))
            for key, result in results.items()
            if not result.get("interrupted")
        ]
        self._con.executemany("INSERT OR REPLACE INTO gold VALUES (?, ?)", rows)

    def close(self) -> None:
        self._con.close()
