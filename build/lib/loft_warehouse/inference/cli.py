"""`loft estimate-cost`, `loft responses-status`, `loft batches` and `loft fixture-server`.

estimate-cost prints what sending a built size's prompts would cost per system and dataset
(streamed and through the batch API, with and without prefix caching), reading the warehouse
read-only; it calls nothing. batches lists the provider batches the response store holds.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import duckdb
import polars as pl

from loft_warehouse.design import Design
from loft_warehouse.errors import ConfigurationError
from loft_warehouse.inference import cost
from loft_warehouse.inference.media import MM_TASK, MediaLibrary
from loft_warehouse.inference.store import DEFAULT_STORE, ResponseStore, store_path
from loft_warehouse.inference.systems import parse_selection, select
from loft_warehouse.inference.warehouse import ESTIMATE_COLUMNS, configured_systems, project
from loft_warehouse.settings import PROJECT_ROOT


def warehouse_path(configured: str | None) -> Path:
    """The DuckDB file: --database, else $LOFT_DUCKDB_PATH, else loft.duckdb in the project."""
    value = configured or os.environ.get("LOFT_DUCKDB_PATH") or "loft.duckdb"
    path = Path(value).expanduser()
    return path if path.is_absolute() else PROJECT_ROOT / path


def _estimate(args: argparse.Namespace) -> int:
    systems = select(configured_systems(args.systems_file, args.batch), parse_selection(args.systems))
    database = warehouse_path(args.database)
    schema = f"loft_{args.size}"
    with duckdb.connect(str(database), read_only=True) as con:
        tables = {name for (name,) in con.execute(
            "select table_name from information_schema.tables where table_schema = ?", [schema]
        ).fetchall()}  # fmt: skip
        if "prompts" not in tables:
            built = sorted(
                name.removeprefix("loft_")
                for (name,) in con.execute(
                    "select distinct table_schema from information_schema.tables where table_name = 'prompts'"
                ).fetchall()
                if name.startswith("loft_")
            )
            raise ConfigurationError(
                f"{database} has no {args.size} prompts (built: {', '.join(built) or 'no size'}); "
                f"build them first: dbt build --select {schema}"
            )
        prompts = project(con.table(f"{schema}.prompts"), ESTIMATE_COLUMNS)
        if args.split:
            prompts = prompts.filter(pl.col("split") == args.split)
        prefixes = dict(con.sql(f"SELECT prefix_id, text FROM {schema}.prompt_prefixes").fetchall())
        segments = (
            dict(con.sql(f"SELECT segment_id, text FROM {schema}.prompt_segments").fetchall())
            if "prompt_segments" in tables
            else {}
        )
        corpus = (
            con.sql(f"SELECT task, dataset, corpus_id, n_tokens FROM {schema}.corpus").pl()
            if "corpus" in tables
            else None
        )
        media = (
            MediaLibrary.from_frame(con.table(f"{schema}_internal.stg_mm_media").pl())
            if (prompts["task"] == MM_TASK).any()
            else None
        )
    prices = cost.load_prices()
    table = cost.estimate(prompts, systems, prices, args.size, prefixes, segments=segments, media=media)
    if corpus is not None:
        later = cost.later_stages(prompts, corpus, Design(), systems, prices, args.size)
        table = pl.concat([table, later]).sort("system", "task", "dataset", "method", "stage")
    print(cost.format_estimate(table))
    if args.csv:
        table.write_csv(args.csv)
    return 0


def _status(args: argparse.Namespace) -> int:
    with ResponseStore(store_path(args.store)) as store:
        rows = pl.DataFrame([r.__dict__ for r in store.rows()])
    if rows.height == 0:
        print("the response store is empty")
        return 0
    summary = rows.group_by("system", "status").agg(
        pl.len().alias("responses"),
        pl.col("input_tokens").sum(),
        pl.col("cached_tokens").sum(),
        pl.col("output_tokens").sum(),
        pl.col("cost_usd").sum(),
    )
    with pl.Config(tbl_rows=-1, tbl_hide_dataframe_shape=True):
        print(summary.sort("system", "status"))
    return 0


def _stores_to_list(configured: str | None) -> list[Path]:
    """The store given (--store, else $LOFT_RESPONSE_STORE); with neither, every store in the
    project's store folder: a fixture or planted-effects run writes its own store there."""
    if (configured or "").strip() or os.environ.get("LOFT_RESPONSE_STORE", "").strip():
        return [store_path(configured)]
    return sorted(DEFAULT_STORE.parent.glob("*.sqlite"))


def _batches(args: argparse.Namespace) -> int:
    stores = _stores_to_list(args.store)
    batches = []
    for path in stores:
        if path.is_file():
            with ResponseStore(path) as store:
                batches += [{**batch, "store": path.name} for batch in store.batches(args.system)]
    if not stores:
        print(f"no response store in {DEFAULT_STORE.parent}")
        return 0
    read = ", ".join(str(path) for path in stores)
    if not batches:
        print(f"no batches in {read}")
        return 0
    print(f"batches in {read}:")
    table = pl.DataFrame(batches, schema_overrides={"cost_usd": pl.Float64}).with_columns(
        pl.from_epoch(pl.col("submitted_at"), time_unit="s").dt.strftime("%Y-%m-%d %H:%M:%S").alias("submitted"),
        pl.col("cost_usd").round(4),
    )
    columns = [
        "store", "batch_id", "system", "provider_batch_id", "state", "provider_state", "n_requests", "n_succeeded",
        "n_errored", "n_expired", "n_canceled", "cost_usd", "submitted",
    ]  # fmt: skip
    with pl.Config(tbl_rows=-1, tbl_cols=-1, tbl_hide_dataframe_shape=True, tbl_width_chars=240, fmt_str_lengths=60):
        print(table.select(columns))
    return 0


def _serve(args: argparse.Namespace) -> int:
    from loft_warehouse.inference import fixture_server

    fixture_server.main(["--latency", str(args.latency), "--port", str(args.port)])
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the inference subcommands to the `loft` command."""
    estimate = subparsers.add_parser("estimate-cost", help="print the cost estimate of a built size's prompts")
    estimate.add_argument("--size", default="128k", choices=["32k", "128k", "1m"])
    estimate.add_argument("--systems", help="comma-separated system names (default: the default selection)")
    estimate.add_argument("--systems-file", help="systems YAML (default: $LOFT_SYSTEMS_FILE or the shipped one)")
    estimate.add_argument("--database", help="warehouse DuckDB file (default: $LOFT_DUCKDB_PATH or loft.duckdb)")
    estimate.add_argument("--split", choices=["dev", "test"], help="only this split's prompts (default: both)")
    estimate.add_argument("--batch", help="comma-separated systems to price in batch mode (as the batch var)")
    estimate.add_argument("--csv", help="also write the table to this CSV file")
    estimate.set_defaults(func=_estimate)

    status = subparsers.add_parser("responses-status", help="summarise the durable response store")
    status.add_argument("--store", help="store file (default: $LOFT_RESPONSE_STORE or .response_store/)")
    status.set_defaults(func=_status)

    batches = subparsers.add_parser("batches", help="list the provider batches in the response store")
    batches.add_argument(
        "--store", help="store file (default: $LOFT_RESPONSE_STORE, else every store in .response_store/)"
    )
    batches.add_argument("--system", help="only this system's batches")
    batches.set_defaults(func=_batches)

    serve = subparsers.add_parser(
        "fixture-server", help="serve the local OpenAI/Gemini/Anthropic stand-in on 127.0.0.1 (for dry runs)"
    )
    serve.add_argument("--latency", type=float, default=0.0, help="seconds per generation request")
    serve.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: any free one)")
    serve.set_defaults(func=_serve)
