"""`loft forget --system X [--dataset D] [--size S]`: the one way a run leaves the warehouse.

Builds add up (macros/accumulate.sql): a run a build does not select is carried as it was. To
remove one, this command deletes its responses from the working copy of the warehouse, sets its
landed imports aside, and rebuilds what is downstream of them (no model calls anything: the
response models themselves are not run), so the removal is published like any build, or not at
all. The response store is not touched: building the system again reads its responses back
without a call.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

from loft_warehouse import registry
from loft_warehouse.dbt_boundary.build import environment_from, run_build
from loft_warehouse.dbt_boundary.publish import refuse_a_second_writer, restore_unpublished, working_file
from loft_warehouse.errors import ConfigurationError
from loft_warehouse.inference.cli import warehouse_path
from loft_warehouse.scoring.importer import imports_dir
from loft_warehouse.settings import SIZES

RESPONSE_TABLES = tuple(f"int_stage{stage}_responses" for stage in (1, 2, 3))


@dataclass(frozen=True)
class Forgotten:
    """What one size lost: response rows per table, and the landed import files set aside."""

    size: str
    rows: dict[str, int]
    imports: list[Path]

    def line(self, what: str) -> str:
        counts = ", ".join(f"{n} row(s) of {table}" for table, n in self.rows.items() if n) or "no response row"
        moved = f"; {len(self.imports)} landed import(s) set aside in {self.imports[0].parent}" if self.imports else ""
        return f"forgot {what} at {self.size}: {counts}{moved}"


def _dataset_filter(dataset: str | None) -> tuple[str, list[str]]:
    """SQL condition and parameters for --dataset: `task/dataset` or a bare dataset name."""
    if not dataset:
        return "", []
    task, slash, name = dataset.partition("/")
    if slash:
        return " and task = ? and dataset = ?", [task, name]
    return " and dataset = ?", [dataset]


def _built_sizes(con: duckdb.DuckDBPyConnection) -> list[str]:
    schemas = {row[0] for row in con.execute("select schema_name from duckdb_schemas()").fetchall()}
    return [size for size in SIZES if f"loft_{size}_internal" in schemas]


def _forget_responses(con: duckdb.DuckDBPyConnection, size: str, system: str, dataset: str | None) -> dict[str, int]:
    condition, parameters = _dataset_filter(dataset)
    tables = {row[0] for row in con.execute(
        "select table_name from duckdb_tables() where schema_name = ?", [f"loft_{size}_internal"]
    ).fetchall()}  # fmt: skip
    removed = {}
    for table in RESPONSE_TABLES:
        if table not in tables:
            continue
        relation = f"loft_{size}_internal.{table}"
        where = f"where system = ?{condition}"
        deleted = con.execute(f"delete from {relation} {where}", [system, *parameters]).fetchall()
        removed[table] = int(deleted[0][0]) if deleted else 0
    return removed


def _set_imports_aside(folder: Path, system: str, dataset: str | None) -> list[Path]:
    """Move the system's landed prediction files of the size (and dataset) to folder/forgotten/."""
    if not folder.is_dir():
        return []
    task, slash, name = (dataset or "").partition("/")
    moved = []
    for path in sorted(folder.glob(f"{system}__*.parquet")):
        parts = path.stem.split("__")
        if len(parts) != 5 or parts[0] != system:
            continue
        if dataset and (parts[2] != (name if slash else dataset) or (slash and parts[1] != task)):
            continue
        aside = folder / "forgotten" / path.name
        aside.parent.mkdir(exist_ok=True)
        os.replace(path, aside)
        moved.append(aside)
    return moved


def forget(system: str, dataset: str | None, sizes: list[str] | None) -> int:
    """Remove the runs, then rebuild and publish what reads them; dbt's exit code."""
    environ = environment_from(Path.cwd(), dict(os.environ))
    published = warehouse_path(environ.get("LOFT_DUCKDB_PATH"))
    working = working_file(published, environ)
    if not published.is_file():
        raise ConfigurationError(f"no warehouse at {published}: nothing to forget")
    if dataset:
        registry.parse_selection(dataset)
    refuse_a_second_writer(working)
    restore_unpublished(str(working), str(published))
    with duckdb.connect(str(working)) as con:
        chosen = sizes or _built_sizes(con)
        forgotten = []
        for size in chosen:
            rows = _forget_responses(con, size, system, dataset)
            imports = _set_imports_aside(imports_dir(environ.get("LOFT_IMPORTS_DIR")) / size, system, dataset)
            forgotten.append(Forgotten(size, rows, imports))
        con.execute("checkpoint")
    what = system + (f" on {dataset}" if dataset else "")
    if not any(sum(f.rows.values()) or f.imports for f in forgotten):
        print(f"loft forget: {what} is in no run at {', '.join(chosen) or 'any size'}; nothing changed")
        return 0
    for entry in forgotten:
        print(entry.line(what))
    print("the response store keeps every response: building the system again reads them back without a call")
    selection = [
        term
        for entry in forgotten
        for term in (f"loft_{entry.size}__int_stage1_responses+", f"loft_{entry.size}__int_imported_queries+")
    ]
    excluded = [f"loft_{entry.size}__{table}" for entry in forgotten for table in RESPONSE_TABLES]
    return run_build(["--select", *selection, "--exclude", *excluded])


def _run(args: argparse.Namespace) -> int:
    return forget(args.system, args.dataset, [args.size] if args.size else None)


def register(subparsers: Any) -> None:
    """Add the `forget` subcommand."""
    parser = subparsers.add_parser(
        "forget", help="remove a system's runs (and imports) from the warehouse", description=__doc__
    )
    parser.add_argument("--system", required=True, help="the system or import name, as in leaderboard.system")
    parser.add_argument("--dataset", default=None, help="only this dataset (arguana or retrieval/arguana)")
    parser.add_argument("--size", default=None, choices=list(SIZES), help="only this size (default: every built one)")
    parser.set_defaults(func=_run)
