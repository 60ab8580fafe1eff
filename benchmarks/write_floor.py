"""What writing one imported set's rows into a DuckDB file costs, whole and by column kind.

    .venv/bin/python benchmarks/write_floor.py /tmp/vs/retrieval --rounds 3

The folder is a set of benchmarks/vs_loft.py after a warehouse run on it (its `warehouse/`
landing holds the import as `loft import-predictions` lands it). The script builds the
int_imported_predictions frame from it, as the dbt model does, and times `create table` plus
a checkpoint into a fresh database file: all columns, then each kind of column alone.

Then every row-level table the warehouse run stored for the set (warehouse/scoring.duckdb:
the imported queries, the import, int_predictions, int_turn_scores) is read into memory and
written the same way, and their sum printed: what a scoring path that keeps these rows pays
before it reads a line of either file or computes a score (compare LOFT's whole run in
vs_loft.py's table).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import duckdb
import pyarrow as pa

from loft_warehouse.scoring.bulk_files import sql_string
from loft_warehouse.scoring.importer import imported_queries_relation, imported_relation


def _kinds(table: pa.Table) -> dict[str, list[str]]:
    """Column names grouped as the table's columns differ in write cost."""
    groups: dict[str, list[str]] = {"all columns": table.column_names}
    for name, column in zip(table.column_names, table.columns, strict=True):
        if pa.types.is_list(column.type) or pa.types.is_large_list(column.type):
            kind = "lists of text"
        elif pa.types.is_integer(column.type):
            kind = "integers"
        elif column.null_count == len(column):
            kind = "text, all null"
        elif len(column.unique()) == 1:
            kind = "text, one value"
        else:
            kind = "text, per row"
        groups.setdefault(kind, []).append(name)
    return groups


def _write_seconds(folder: Path, fill: Callable[[duckdb.DuckDBPyConnection], None]) -> tuple[float, float]:
    """Seconds to write `source` (which `fill` makes on the connection, untimed) into a new
    database file as a table, checkpoint included, and that file's MiB."""
    path = folder / f"floor-{time.monotonic_ns()}.duckdb"
    with duckdb.connect(str(path)) as con:
        fill(con)
        started = time.perf_counter()
        con.execute("create table written as select * from source")
        con.execute("checkpoint")
        seconds = time.perf_counter() - started
    size = path.stat().st_size / 2**20
    path.unlink()
    return seconds, size


def _arrow_source(table: pa.Table) -> Callable[[duckdb.DuckDBPyConnection], None]:
    return lambda con: con.register("source", table)


def _stored_source(database: Path, name: str) -> Callable[[duckdb.DuckDBPyConnection], None]:
    """The stored table `name` copied into memory inside DuckDB (not through Arrow, which would
    turn the ENUM columns into text and time a different write)."""

    def fill(con: duckdb.DuckDBPyConnection) -> None:
        con.execute(f"attach {sql_string(database)} as run (read_only)")
        con.execute(f"create temp table source as select * from run.{name}")
        con.execute("detach run")

    return fill


# The row-level tables of a warehouse scoring run (tests/scoring/sqlkit.py's names for
# int_imported_queries and int_imported_predictions).
STORED_TABLES = ("imported_queries", "imports", "int_predictions", "int_turn_scores")


def _print_runs(label: str, columns: int, runs: list[tuple[float, float]]) -> float:
    """One line of figures; the median seconds."""
    seconds = [s for s, _ in runs]
    median = statistics.median(seconds)
    print(
        f"{label:<28} {columns:3} col  {median:6.2f} s ({min(seconds):.2f}-{max(seconds):.2f})  {runs[0][1]:7.1f} MiB"
    )
    return median


def _stored_tables(database: Path, rounds: int, scratch: Path) -> None:
    """Each stored row-level table of the run, rewritten into a fresh file; then their sum."""
    if not database.exists():
        print(f"no {database}: run vs_loft.py --warehouse-scoring on the set first")
        return
    print(f"\nthe run's row-level tables ({database}), each written whole:")
    total = 0.0
    for name in STORED_TABLES:
        with duckdb.connect(str(database), read_only=True) as con:
            shape = con.execute(f"select count(*), (select count(*) from (describe {name})) from {name}").fetchone()
        rows, columns = shape if shape else (0, 0)
        runs = [_write_seconds(scratch, _stored_source(database, name)) for _ in range(rounds)]
        total += _print_runs(f"{name} ({rows:,})", columns, runs)
    print(f"{'sum of medians':<28}          {total:6.2f} s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder", type=Path, help="a vs_loft.py set folder a warehouse run has landed")
    parser.add_argument("--size", default="128k")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    landing = args.folder / "warehouse"
    with duckdb.connect() as con:
        queries = imported_queries_relation(con, landing, args.size)
        frame = imported_relation(con, landing, args.size, queries).to_arrow_table()
    if frame.num_rows == 0:
        print(f"nothing landed under {landing / args.size}: run vs_loft.py --warehouse-scoring on the set first")
        return 1
    print(f"{frame.num_rows:,} imported rows, {frame.num_columns} columns; {args.rounds} round(s), median (min-max)")
    with tempfile.TemporaryDirectory() as scratch:
        for kind, names in _kinds(frame).items():
            source = _arrow_source(frame.select(names))
            _print_runs(kind, len(names), [_write_seconds(Path(scratch), source) for _ in range(args.rounds)])
        del frame
        _stored_tables(landing / "scoring.duckdb", args.rounds, Path(scratch))
    return 0


if __name__ == "__main__":
    sys.exit(main())
