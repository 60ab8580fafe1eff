"""What writing one imported set's rows into a DuckDB file costs, whole and by column kind.

    .venv/bin/python benchmarks/write_floor.py /tmp/vs/retrieval --rounds 3

The folder is a set of benchmarks/vs_loft.py after a warehouse run on it (its `warehouse/`
landing holds the import as `loft import-predictions` lands it). The script builds the
int_imported_predictions frame from it, as the dbt model does, and times `create table` plus
a checkpoint into a fresh database file: all columns, then each kind of column alone. Every
row-level table the warehouse keeps for an import (imports, predictions, turn scores) pays
about this; it is the floor under a scoring path that persists its rows.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import duckdb
import pyarrow as pa

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


def _write_seconds(table: pa.Table, folder: Path) -> tuple[float, float]:
    """Seconds to write `table` into a new database file, and that file's MiB."""
    path = folder / f"floor-{time.monotonic_ns()}.duckdb"
    with duckdb.connect(str(path)) as con:
        con.register("source", table)
        started = time.perf_counter()
        con.execute("create table written as select * from source")
        con.execute("checkpoint")
        seconds = time.perf_counter() - started
    size = path.stat().st_size / 2**20
    path.unlink()
    return seconds, size


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
            runs = [_write_seconds(frame.select(names), Path(scratch)) for _ in range(args.rounds)]
            seconds = [s for s, _ in runs]
            print(
                f"{kind:<16} {len(names):3} col  {statistics.median(seconds):6.2f} s "
                f"({min(seconds):.2f}-{max(seconds):.2f})  {runs[0][1]:7.1f} MiB"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
