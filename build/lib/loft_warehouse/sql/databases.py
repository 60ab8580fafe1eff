"""The Spider dev databases: found in the dumps, shown as CSV, loaded into DuckDB and SQLite.

Both engines get the same tables with the same values. Types follow SQLite's storage classes,
because Spider's gold results were produced by SQLite: integers are 64-bit, real and numeric
columns are doubles, timestamps stay text (SQLite has no time type). Booleans stay BOOLEAN in
DuckDB (the dump's type) and become 0/1 in SQLite; the DuckDB rewrite casts them to 0/1.
"""

from __future__ import annotations

import csv
import io
import sqlite3
import threading
from functools import cache
from pathlib import Path

import duckdb
import pyarrow as pa

from loft_warehouse.errors import BadInputError
from loft_warehouse.readers import read_json
from loft_warehouse.sql.pgdump import Dump, Table, parse_dump

DUMP_FOLDER = Path("raw", "spider", "postgres_dumps_dev_spider4sparql")
SPIDER_TABLES = Path("raw", "spider", "tables.json")
DUCKDB_TYPES = {
    "integer": "BIGINT",
    "real": "DOUBLE",
    "numeric": "DOUBLE",
    "text": "VARCHAR",
    "boolean": "BOOLEAN",
    "timestamp": "VARCHAR",
    "date": "VARCHAR",
}
SQLITE_TYPES = {
    "integer": "INTEGER",
    "real": "REAL",
    "numeric": "NUMERIC",
    "text": "TEXT",
    "boolean": "INTEGER",
    "timestamp": "TEXT",
    "date": "TEXT",
}
_BOOLEAN_TEXT = {"t": "1", "f": "0", "true": "1", "false": "0", "1": "1", "0": "0"}


def dump_dir(root: Path) -> Path:
    """Folder of the PostgreSQL dumps under the data root."""
    return root / DUMP_FOLDER


def cell_text(
    kind: str, value: str | None, path: Path | str = "", table: str = "", line: int | None = None
) -> str | None:
    """A cell as both engines store it in text: booleans as SQLite's 1/0, the rest verbatim."""
    if value is None or kind != "boolean":
        return value
    try:
        return _BOOLEAN_TEXT[value.lower()]
    except KeyError as exc:
        raise BadInputError(path, line, f"table {table}: {value!r} is not a boolean") from exc


def table_csv(table: Table) -> str:
    """The table as the model sees it: CSV header + rows, NULL as an empty cell, no final newline."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(table.column_names())
    kinds = [c.kind for c in table.columns]
    for row in table.rows:
        writer.writerow(["" if v is None else cell_text(k, v) for k, v in zip(kinds, row, strict=True)])
    return buffer.getvalue().rstrip("\n")


def _canonical_ids(root: Path) -> dict[str, str]:
    """Spider's spelling of each db_id (the dumps' file names are lower-cased)."""
    path = root / SPIDER_TABLES
    if not path.exists():
        return {}
    return {entry["db_id"].lower(): entry["db_id"] for entry in read_json(path)}


def dump_paths(root: Path) -> dict[str, Path]:
    """Every dump file keyed by Spider db_id (the file name in Spider's spelling), unparsed."""
    folder = dump_dir(root).resolve()
    if not folder.is_dir():
        raise BadInputError(folder, None, "folder of Spider database dumps not found")
    canonical = _canonical_ids(root)
    return {canonical.get(path.stem.lower(), path.stem): path for path in sorted(folder.glob("*.sql"))}


@cache
def _databases(root: Path) -> dict[str, Dump]:
    found = {db_id: parse_dump(path) for db_id, path in dump_paths(root).items()}
    if not found:
        raise BadInputError(dump_dir(root).resolve(), None, "no *.sql dumps found")
    return found


def databases(root: Path) -> dict[str, Dump]:
    """Every dumped database keyed by Spider db_id (parsed once per process)."""
    return _databases(root.resolve())


def _text_columns(table: Table, path: Path) -> list[list[str | None]]:
    columns: list[list[str | None]] = [[] for _ in table.columns]
    for row, line in zip(table.rows, table.row_lines, strict=True):
        for j, (column, value) in enumerate(zip(table.columns, row, strict=True)):
            columns[j].append(cell_text(column.kind, value, path, table.name, line))
    return columns


def _first_bad_cell(con: duckdb.DuckDBPyConnection, table: Table, path: Path) -> BadInputError | None:
    """The first row (in dump order) holding a value DuckDB cannot cast to its column's type."""
    bad = []
    for j, column in enumerate(table.columns):
        found = con.execute(
            f"SELECT row_index, c{j} FROM _staged_rows WHERE c{j} IS NOT NULL "
            f"AND TRY_CAST(c{j} AS {DUCKDB_TYPES[column.kind]}) IS NULL ORDER BY row_index LIMIT 1"
        ).fetchone()
        if found is not None:
            bad.append((found[0], column, found[1]))
    if not bad:
        return None
    index, column, value = min(bad, key=lambda item: item[0])
    what = f"table {table.name}, column {column.name}: {value!r} is not a valid {column.pg_type}"
    return BadInputError(path, table.row_lines[index], what)


def load_duckdb(dump: Dump, con: duckdb.DuckDBPyConnection) -> None:
    """Create and fill every table in a DuckDB connection; values are cast by DuckDB itself."""
    for table in dump.tables:
        declared = ", ".join(f'"{c.name}" {DUCKDB_TYPES[c.kind]}' for c in table.columns)
        con.execute(f'CREATE TABLE "{table.name}" ({declared})')
        if not table.rows:
            continue
        columns = _text_columns(table, dump.path)
        staged = pa.table(
            {"row_index": pa.array(range(len(table.rows)), pa.int64())}
            | {f"c{j}": pa.array(col, pa.string()) for j, col in enumerate(columns)}
        )
        casts = ", ".join(f"CAST(c{j} AS {DUCKDB_TYPES[c.kind]})" for j, c in enumerate(table.columns))
        con.register("_staged_rows", staged)
        try:
            con.execute(f'INSERT INTO "{table.name}" SELECT {casts} FROM _staged_rows')
        except duckdb.Error as exc:
            located = _first_bad_cell(con, table, dump.path)
            raise located or BadInputError(dump.path, table.create_line, f"table {table.name}: {exc}") from exc
        finally:
            con.unregister("_staged_rows")


def load_sqlite(dump: Dump, con: sqlite3.Connection) -> None:
    """Create and fill every table in SQLite; column affinity converts text as SQLite would."""
    for table in dump.tables:
        declared = ", ".join(f'"{c.name}" {SQLITE_TYPES[c.kind]}' for c in table.columns)
        con.execute(f'CREATE TABLE "{table.name}" ({declared})')
        marks = ", ".join("?" for _ in table.columns)
        rows = zip(*_text_columns(table, dump.path), strict=True) if table.rows else []
        con.executemany(f'INSERT INTO "{table.name}" VALUES ({marks})', rows)
    con.commit()


_LOCK = threading.Lock()
_DUCKDB: dict[tuple[Path, str], duckdb.DuckDBPyConnection] = {}


def duckdb_database(root: Path, db_id: str) -> duckdb.DuckDBPyConnection:
    """A process-wide in-memory DuckDB holding one database (callers use .cursor()).

    One thread: results of tiny tables come back in a reproducible order.
    """
    key = (dump_dir(root).resolve(), db_id)
    with _LOCK:
        if key not in _DUCKDB:
            con = duckdb.connect(":memory:", config={"threads": 1})
            load_duckdb(databases(root)[db_id], con)
            _DUCKDB[key] = con
        return _DUCKDB[key]


def sqlite_database(root: Path, db_id: str) -> sqlite3.Connection:
    """A fresh in-memory SQLite holding one database."""
    con = sqlite3.connect(":memory:", check_same_thread=False)
    load_sqlite(databases(root)[db_id], con)
    return con
