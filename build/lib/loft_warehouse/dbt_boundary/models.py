"""The bodies of the Python models (models/loft_128k/*/*.py and their size copies): each takes
the model's `loft` settings and size and the relations dbt hands it, and returns its table."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import duckdb
import pandas as pd
import polars as pl

from loft_warehouse import frame_cache, media_tables, quality, settings, staging
from loft_warehouse.design import Design
from loft_warehouse.methods import stage2
from loft_warehouse.prompts import multimodal_rows, store
from loft_warehouse.scoring import adjudications, importer
from loft_warehouse.tokens import counter

Loft = dict[str, Any]
Relation = duckdb.DuckDBPyRelation


def staged_frame(loft: Loft, size: str, frame: str) -> pl.DataFrame:
    """One of a size's landed frames (stg_datasets, stg_documents, stg_queries)."""
    landed = staging.staged(
        loft.get("data_dir"),
        size,
        loft.get("tokenizer_model"),
        loft["seed"],
        loft.get("datasets"),
    )
    return getattr(landed, frame)


def media_table(loft: Loft, size: str, table: str) -> pl.DataFrame:
    """One of a size's multimodal tables (stg_mm_media, stg_mm_corpus, stg_mm_queries,
    mm_prompt_parts), built once for all of them."""
    return getattr(media_tables.built(loft.get("data_dir"), size, loft.get("datasets")), table)


def prompt_table(
    loft: Loft | None, size: str, table: str, corpus: Relation, queries: Relation, datasets: Relation
) -> pl.DataFrame:
    """One of a size's prompt tables (int_prompt_rows, prompt_prefixes, prompt_doc_ids,
    prompt_segments, prompt_variants), rendered once for all of them; the first three with the
    size's multimodal prompts after the text ones.

    Only the datasets this build lands are rendered: the corpus and queries of the others are
    carried from earlier builds (macros/accumulate.sql), and so are their prompts. The prompt
    rows carry a `build_id` column that their post-hook sets to this build's invocation, so the
    stage models send only what this build selected."""
    config = loft or {}
    landed = staged_frame(config, size, "datasets").select("task", "dataset")
    tables = store.built(
        corpus.pl().join(landed, on=["task", "dataset"], how="semi"),
        queries.pl().join(landed, on=["task", "dataset"], how="semi"),
        datasets.pl().join(landed, on=["task", "dataset"], how="semi"),
        Design.from_config(config, config.get("prompt_variants")),
        config.get("tokenizer_model"),
        config.get("data_dir"),
        config.get("seed") or 0,
    )
    text = getattr(tables, table)
    if table in MM_PROMPT_TABLES:
        mm = getattr(_mm_prompt_tables(config, size), table)
        text = pl.concat([text, mm]) if mm.height else text
    return text.with_columns(pl.lit(None, pl.String).alias(BUILD_COLUMN)) if table == "prompts" else text


BUILD_COLUMN = "build_id"


MM_PROMPT_TABLES = ("prompts", "prefixes", "doc_ids")
_MM_PROMPTS: frame_cache.SharedInProcess[multimodal_rows.MultimodalTables] = frame_cache.SharedInProcess(keep=1)


def _mm_prompt_tables(config: Loft, size: str) -> multimodal_rows.MultimodalTables:
    """The mm prompt rows of a size, once per process for the three models that show them."""
    mm = media_tables.built(config.get("data_dir"), size, config.get("datasets"))

    def count(texts: Sequence[str]) -> list[int]:
        """SentencePiece counts; the tokenizer is only looked up when there is an mm prompt."""
        model = settings.build_tokenizer_model(config.get("tokenizer_model"), config.get("data_dir"))
        return counter(model).count(texts)

    def build() -> multimodal_rows.MultimodalTables:
        return multimodal_rows.tables(mm.prompt_parts, mm.queries, mm.corpus, count)

    key = (id(mm), str(config.get("tokenizer_model")))
    return _MM_PROMPTS.get(key, build)


def stage_prompts(
    loft: Loft | None,
    answers: Relation,
    corpus: Relation,
    queries: Relation,
    datasets: Relation,
    doc_ids: Relation,
    stage: int = 2,
) -> pl.DataFrame:
    """int_stage{stage}_prompts: the prompts built from each system's answers to the stage before."""
    config = loft or {}
    model = settings.build_tokenizer_model(config.get("tokenizer_model"), config.get("data_dir"))
    return stage2.build(
        answers.pl(),
        corpus.pl(),
        queries.pl(),
        datasets.pl(),
        doc_ids.pl(),
        Design.from_config(config, config.get("prompt_variants")),
        counter(model),
        stage,
    )


def gold_adjudications(loft: Loft | None, seed: Relation) -> pl.DataFrame:
    """stg_gold_adjudications: the seed's revised gold and the adjudications folder's files."""
    return adjudications.collect(seed.pl(), adjudications.adjudications_dir((loft or {}).get("adjudications_dir")))


def imported_predictions(
    session: duckdb.DuckDBPyConnection, size: str, queries: duckdb.DuckDBPyRelation, stored: str | None
) -> duckdb.DuckDBPyRelation:
    """int_imported_predictions: the prediction files landed for this size, checked against its
    queries; `stored` is the model's table on an incremental build (only new files are read)."""
    return importer.imported_relation(session, importer.imports_dir(), size, queries, stored)


def imported_queries(session: duckdb.DuckDBPyConnection, size: str, stored: str | None) -> duckdb.DuckDBPyRelation:
    """int_imported_queries: the answer files landed with `loft import-predictions --queries`;
    `stored` as for imported_predictions."""
    return importer.imported_queries_relation(session, importer.imports_dir(), size, stored)


def quality_results(session: duckdb.DuckDBPyConnection, schema: str, group: str) -> pd.DataFrame:
    """corpus_quality, results_quality: the group's suites on this size's schema, failing the
    build on any failure (one line per suite either way)."""
    results = quality.run_suites(session, schema, group)
    for result in results:
        print(f"quality {result.summary()}", file=sys.stderr)
    quality.enforce(results)
    return quality.results_frame(results)
