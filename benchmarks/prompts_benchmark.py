"""Prompt rendering at one size: time and peak memory to render (and token-count) every prompt of
every variant, and the bytes the prefix + suffix tables store against the bytes of the same
prompts fully materialised.

Reads the `corpus`, `queries` and `stg_datasets` tables of a built warehouse:

    LOFT_DUCKDB_PATH=/tmp/me/loft.duckdb dbt build --select loft_128k
    .venv/bin/python benchmarks/prompts_benchmark.py --database /tmp/me/loft.duckdb --size 128k
"""

from __future__ import annotations

import argparse
import os
import resource
import time
from pathlib import Path

import duckdb
import polars as pl

from loft_warehouse import settings
from loft_warehouse.design import Design
from loft_warehouse.prompts.inputs import collections
from loft_warehouse.prompts.render import render
from loft_warehouse.prompts.store import build
from loft_warehouse.prompts.variants import resolve
from loft_warehouse.tokens import TokenCounter


def peak_rss_mb() -> float:
    """Peak resident memory of this process so far (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--database", default=os.environ.get("LOFT_DUCKDB_PATH", "loft.duckdb"))
    parser.add_argument("--size", default="128k")
    parser.add_argument("--variants", default="all", help="comma-separated names or 'all'")
    parser.add_argument("--seed", type=int, default=20240612)
    args = parser.parse_args()

    schema = f"loft_{settings.size(args.size).label}"
    with duckdb.connect(str(Path(args.database)), read_only=True) as con:
        corpus = con.sql(f"select * from {schema}.corpus").pl()
        queries = con.sql(f"select * from {schema}.queries").pl()
        datasets = con.sql(f"select * from {schema}_internal.stg_datasets").pl()
    variants = resolve(args.variants)
    rss_inputs = peak_rss_mb()
    print(f"inputs: {corpus.height} documents, {queries.height} query turns, {len(variants)} variants")

    started = time.perf_counter()
    n_rendered = 0
    for collection in collections(corpus, queries, datasets):
        for variant in variants:
            if variant.applies_to(collection):
                n_rendered += len(render(collection, variant, args.seed).rows)
    render_s = time.perf_counter() - started

    tokens = TokenCounter(settings.tokenizer_model())
    started = time.perf_counter()
    tables = build(corpus, queries, datasets, Design(variants=tuple(variants)), tokens, args.seed)
    build_s = time.perf_counter() - started
    rss_built = peak_rss_mb()

    prefix_bytes = tables.prefixes.select(pl.col("text").str.len_bytes().cast(pl.Int64).sum()).item()
    row_bytes = tables.prompts.select(
        (pl.col("head").str.len_bytes().cast(pl.Int64) + pl.col("suffix").str.len_bytes().cast(pl.Int64)).sum()
    ).item()
    joined = tables.prompts.select("prefix_id", "head", "suffix").join(
        tables.prefixes.select("prefix_id", pl.col("text").str.len_bytes().cast(pl.Int64).alias("prefix_bytes")),
        on="prefix_id",
    )
    materialised = joined.select(
        (
            pl.col("prefix_bytes")
            + pl.col("head").str.len_bytes().cast(pl.Int64)
            + pl.col("suffix").str.len_bytes().cast(pl.Int64)
        ).sum()
    ).item()
    stored = prefix_bytes + row_bytes

    print(
        f"prompts: {tables.prompts.height} rows ({n_rendered} rendered), "
        f"{tables.prefixes.height} prefixes, {tables.doc_ids.height} doc-id rows"
    )
    print(f"render only (no token counts): {render_s:.1f} s")
    print(
        f"render + exact token counts (cold tokenizer cache): {build_s:.1f} s, "
        f"{tokens.encoded_tokens / 1e6:.1f} M tokens encoded in {tokens.encoded_texts} texts"
    )
    print(f"peak RSS: {rss_built:.0f} MiB (after loading inputs: {rss_inputs:.0f} MiB)")
    print(f"text bytes stored (prefixes + heads + suffixes): {stored / 1e6:.1f} MB")
    print(f"text bytes fully materialised (one whole prompt per row): {materialised / 1e6:.1f} MB")
    print(f"materialised / stored: {materialised / stored:.0f}x")


if __name__ == "__main__":
    main()
