"""`loft export-prompts`: a size's prompts as files, for runs outside the warehouse.

One JSONL and one CSV file per (task, dataset, variant) under OUT/{size}/, named
`{task}__{dataset}__{variant}.{jsonl,csv}`, each row `prompt_id, prompt, targets` with the whole
prompt (head + prefix + suffix). Multi-turn rows still hold their `<<MODEL_ANSWER turn=s>>`
placeholders: fill them with loft_warehouse.prompts.fill_model_answers as the answers arrive.
Rows are streamed one group at a time, so memory stays at one prefix plus one batch.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
from dataclasses import dataclass
from pathlib import Path

import duckdb

from loft_warehouse import settings
from loft_warehouse.errors import ConfigurationError
from loft_warehouse.prompts.store import prompt_text

FIELDS = ("prompt_id", "prompt", "targets")
BATCH_ROWS = 500


@dataclass(frozen=True)
class ExportedFile:
    """One written pair of files and how many prompts each holds."""

    task: str
    dataset: str
    variant: str
    jsonl: Path
    csv: Path
    n_prompts: int


def default_database() -> Path:
    """The warehouse file dbt writes: $LOFT_DUCKDB_PATH, else loft.duckdb in the project."""
    value = os.environ.get("LOFT_DUCKDB_PATH", "").strip()
    return Path(value) if value else settings.PROJECT_ROOT / "loft.duckdb"


def export_prompts(
    con: duckdb.DuckDBPyConnection, size: str, out: Path, variants: list[str] | None = None
) -> list[ExportedFile]:
    """Write the prompts of schema loft_{size} (all variants built, or only `variants`)."""
    schema = f"loft_{settings.size(size).label}"
    tables = {
        name
        for (name,) in con.execute(
            "select table_name from information_schema.tables where table_schema = ?", [schema]
        ).fetchall()
    }
    if not {"prompts", "prompt_prefixes"} <= tables:
        raise ConfigurationError(
            f"{schema}.prompts / prompt_prefixes not found: build them first (dbt build --select {schema})"
        )
    groups = con.execute(f"select distinct task, dataset, variant from {schema}.prompts order by all").fetchall()
    if variants:
        built = {v for _, _, v in groups}
        missing = sorted(set(variants) - built)
        if missing:
            raise ConfigurationError(
                f"variant(s) {missing} not built in {schema}; built: {sorted(built)} "
                "(add them with dbt --vars '{prompt_variants: [...]}')"
            )
        groups = [g for g in groups if g[2] in variants]
    folder = out / settings.size(size).label
    folder.mkdir(parents=True, exist_ok=True)
    return [_export_group(con, schema, folder, *group) for group in groups]


def _export_group(
    con: duckdb.DuckDBPyConnection, schema: str, folder: Path, task: str, dataset: str, variant: str
) -> ExportedFile:
    stem = f"{task}__{dataset}__{variant}"
    jsonl_path, csv_path = folder / f"{stem}.jsonl", folder / f"{stem}.csv"
    prefixes = dict(
        con.execute(
            f"select prefix_id, text from {schema}.prompt_prefixes where task = ? and dataset = ? and variant = ?",
            [task, dataset, variant],
        ).fetchall()
    )
    cursor = con.execute(
        f"select prompt_id, prefix_id, head, suffix, targets from {schema}.prompts "
        "where task = ? and dataset = ? and variant = ? order by corpus_id, split, qid, turn",
        [task, dataset, variant],
    )
    n = 0
    with (
        open(jsonl_path, "w", encoding="utf-8") as jsonl,
        open(csv_path, "w", encoding="utf-8", newline="") as csv_file,
    ):
        writer = csv.writer(csv_file)
        writer.writerow(FIELDS)
        while batch := cursor.fetchmany(BATCH_ROWS):
            for prompt_id, prefix_id, head, suffix, targets in batch:
                prompt = prompt_text(head, prefixes[prefix_id], suffix)
                record = {"prompt_id": prompt_id, "prompt": prompt, "targets": json.loads(targets)}
                jsonl.write(json.dumps(record, ensure_ascii=False) + "\n")
                writer.writerow((prompt_id, prompt, targets))
                n += 1
    return ExportedFile(task, dataset, variant, jsonl_path, csv_path, n)


def _run(args: argparse.Namespace) -> int:
    database = Path(args.database) if args.database else default_database()
    if not database.is_file():
        raise ConfigurationError(f"warehouse file {database} not found (--database or LOFT_DUCKDB_PATH)")
    with duckdb.connect(str(database), read_only=True) as con:
        written = export_prompts(con, args.size, Path(args.out), args.variant or None)
    for item in written:
        print(f"{item.n_prompts:6d} prompts  {item.jsonl}  {item.csv.name}")
    print(f"{len(written)} dataset/variant groups, {sum(i.n_prompts for i in written)} prompts")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `export-prompts` to the `loft` command."""
    parser = subparsers.add_parser(
        "export-prompts",
        help="write a size's prompts as JSONL and CSV (prompt_id, prompt, targets)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--size", required=True, choices=list(settings.SIZES), help="benchmark size")
    parser.add_argument("--out", required=True, help="output folder (files go to OUT/SIZE/)")
    parser.add_argument(
        "--variant",
        action="append",
        help="only this prompt variant (repeatable); default: every variant built",
    )
    parser.add_argument("--database", help="DuckDB file (default: $LOFT_DUCKDB_PATH or loft.duckdb)")
    parser.set_defaults(func=_run)
