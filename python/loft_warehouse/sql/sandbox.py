"""Run SQL written by a model (the text-to-SQL baseline) without letting it do harm.

Three layers, each enough on its own for the cases tested:
1. a static check (sqlglot): one statement, a query (SELECT / set operation, CTEs allowed),
   every table one of the database's tables or a CTE, no table functions and no file-reading
   functions;
2. the engine: each database is a DuckDB file opened read-only, with external access disabled
   (no files, no ATTACH/INSTALL/LOAD/COPY), extension autoloading off and the configuration
   locked, one thread and a memory cap;
3. a time limit per query (the query is interrupted) and a cap on the rows fetched.

Bad or hostile SQL yields a result with status 'rejected' (static check) or 'error' (engine,
time limit, size), never an exception or a side effect. Model SQL is read as SQLite (Spider's
dialect) and rewritten with the gold rewrites, so it gets the same semantics as the gold.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import sqlglot
from sqlglot import exp

from loft_warehouse.sql import databases, rewrite
from loft_warehouse.sql.gold import json_safe, schemas

TIMEOUT_S = 5.0
MAX_ROWS = 10_000
MEMORY_LIMIT = "512MB"
LOCKED_CONFIG: dict[str, str | bool | int | float | list[str]] = {
    "enable_external_access": False,
    "autoload_known_extensions": False,
    "autoinstall_known_extensions": False,
    "allow_community_extensions": False,
    "threads": 1,
    "memory_limit": MEMORY_LIMIT,
    "lock_configuration": True,
}
_FORBIDDEN_NODES = (
    exp.DDL,
    exp.DML,
    exp.Command,
    exp.Copy,
    exp.Pragma,
    exp.Set,
    exp.Attach,
    exp.Detach,
    exp.Use,
    exp.Transaction,
    exp.Commit,
    exp.Rollback,
    exp.Describe,
    exp.Export,
)
_QUERY_ROOTS = (exp.Select, exp.SetOperation, exp.Subquery)
_FILE_FUNCTIONS = ("read_", "glob", "sniff_csv", "parquet_", "load", "install", "import", "export")


class Rejected(ValueError):
    """SQL refused by the static check."""


@dataclass
class SandboxResult:
    """Outcome of one model query: status 'ok' | 'empty' | 'error' | 'rejected'."""

    status: str
    rows: list[tuple] = field(default_factory=list)
    error: str | None = None
    sql: str | None = None

    def rows_json(self) -> str | None:
        if self.status not in ("ok", "empty"):
            return None
        return json.dumps([[json_safe(v) for v in row] for row in self.rows], ensure_ascii=False)


def check_query(sql: str, tables: set[str], dialect: str = "sqlite") -> exp.Expr:
    """Parse and vet one statement; Rejected says why it may not run."""
    try:
        trees = [t for t in sqlglot.parse(sql, read=dialect) if t is not None]
    except sqlglot.errors.SqlglotError as exc:
        raise Rejected(f"unparseable SQL: {rewrite.plain(str(exc))}") from exc
    if len(trees) != 1:
        raise Rejected(f"expected one statement, found {len(trees)}")
    tree = trees[0]
    if not isinstance(tree, _QUERY_ROOTS):
        raise Rejected(f"only queries may run, not {type(tree).__name__.upper()}")
    ctes = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
    for node in tree.walk():
        if isinstance(node, _FORBIDDEN_NODES):
            raise Rejected(f"{type(node).__name__.upper()} is not allowed")
        if isinstance(node, exp.Table):
            if not isinstance(node.this, exp.Identifier) or node.args.get("db") or node.args.get("catalog"):
                raise Rejected(f"table {node.sql(dialect=dialect)!r} is not a table of the database")
            if node.name.lower() not in tables | ctes:
                raise Rejected(f"unknown table {node.name!r}")
        if isinstance(node, exp.Func):
            name = (node.sql_name() if not isinstance(node, exp.Anonymous) else node.name).lower()
            if name.startswith(_FILE_FUNCTIONS):
                raise Rejected(f"function {name} is not allowed")
    return tree


class Sandbox:
    """Read-only, locked DuckDB copies of the databases, built once in a private folder."""

    def __init__(self, root: Path, timeout_s: float = TIMEOUT_S, max_rows: int = MAX_ROWS) -> None:
        self.root = root
        self.timeout_s = timeout_s
        self.max_rows = max_rows
        self.schemas = schemas(root)
        self._folder = Path(tempfile.mkdtemp(prefix="loft-sql-sandbox-"))
        self._connections: dict[str, duckdb.DuckDBPyConnection] = {}
        self._lock = threading.Lock()

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Close every connection and delete the database files."""
        with self._lock:
            for con in self._connections.values():
                con.close()
            self._connections.clear()
        shutil.rmtree(self._folder, ignore_errors=True)

    def connection(self, db_id: str) -> duckdb.DuckDBPyConnection:
        """The locked read-only connection of one database (built on first use)."""
        with self._lock:
            if db_id not in self._connections:
                path = self._folder / f"{db_id}.duckdb"
                writer = duckdb.connect(str(path))
                try:
                    databases.load_duckdb(databases.databases(self.root)[db_id], writer)
                finally:
                    writer.close()
                self._connections[db_id] = duckdb.connect(str(path), read_only=True, config=LOCKED_CONFIG)
            return self._connections[db_id]

    def run(self, db_id: str, sql: str, dialect: str = "sqlite") -> SandboxResult:
        """Vet, rewrite (SQLite semantics) and run one query; never raises for bad SQL."""
        schema = self.schemas.get(db_id)
        if schema is None:
            return SandboxResult("error", error=f"unknown database {db_id!r}")
        tables = set(schema.tables) | set(schema.table_aliases)
        try:
            check_query(sql, tables, dialect)
            duckdb_sql = rewrite.to_duckdb(sql, schema, row_order=True) if dialect == "sqlite" else sql
            check_query(duckdb_sql, set(schema.tables), "duckdb")
        except (Rejected, rewrite.RewriteError) as exc:
            return SandboxResult("rejected", error=str(exc))
        return self._execute(db_id, duckdb_sql)

    def _execute(self, db_id: str, duckdb_sql: str) -> SandboxResult:
        cursor = self.connection(db_id).cursor()
        timer = threading.Timer(self.timeout_s, cursor.interrupt)
        timer.start()
        try:
            cursor.execute(duckdb_sql)
            rows = cursor.fetchmany(self.max_rows + 1)
        except (duckdb.Error, RuntimeError) as exc:
            message = str(exc).split("\n")[0]
            if "INTERRUPT" in message.upper():
                message = f"time limit of {self.timeout_s:g} s exceeded ({message})"
            return SandboxResult("error", error=message, sql=duckdb_sql)
        finally:
            timer.cancel()
            cursor.close()
        if len(rows) > self.max_rows:
            return SandboxResult("error", error=f"more than {self.max_rows} rows", sql=duckdb_sql)
        return SandboxResult("ok" if rows else "empty", rows, sql=duckdb_sql)
