"""What the dbt models `responses` and `cost_estimates` of a size compute (the model files are thin).

Settings come from dbt vars (see models/loft_128k/marts/_marts__inference.yml): `systems`
(selection), `systems_file`, `max_cost_usd`, `response_store`; each falls back to its
environment variable (LOFT_SYSTEMS, LOFT_SYSTEMS_FILE, LOFT_MAX_COST_USD, LOFT_RESPONSE_STORE).
The data root (the project's `loft.data_dir` setting) locates the files of systems' tokenizers.
API keys are never settings: providers read them from the environment when they call.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import polars as pl

from loft_warehouse import current_build, frame_cache, settings
from loft_warehouse.design import Design
from loft_warehouse.errors import ConfigurationError
from loft_warehouse.inference import cost, media_cost, runner
from loft_warehouse.inference.fixture_server import is_fixture
from loft_warehouse.inference.media import MEDIA_COLUMNS, MM_TASK, MediaLibrary
from loft_warehouse.inference.providers.registry import BATCH_PROVIDERS
from loft_warehouse.inference.store import FIXTURE_STORE, PLANTED_STORE, ResponseStore, store_path
from loft_warehouse.inference.systems import (
    System,
    load_systems,
    parse_selection,
    select,
    systems_file,
    unknown_systems,
    with_thinking,
)
from loft_warehouse.model_tokens import rank_dir
from loft_warehouse.progress import emit_stderr
from loft_warehouse.tokens import counter

# What dbt.ref() and dbt.source() hand a Python model.
Relation = duckdb.DuckDBPyRelation

PROMPT_COLUMNS = (
    "prompt_id", "task", "dataset", "corpus_id", "variant", "method", "stage", "split", "qid", "turn", "call_index",
    "n_turns", "prefix_id", "head", "segment_ids", "suffix", "n_tokens_prefix", "n_tokens_total", "system",
    "prefix_text", "gold", "gold_shown_ids", "gold_depth", "payload", "n_documents", "build_id", "prompt_digest",
)  # fmt: skip
PARTITION_COLUMNS = ("task", "dataset", "variant", "method")
BM25_CORPUS_COLUMNS = ("task", "dataset", "corpus_id", "doc_id", "pid", "title", "text")
ESTIMATE_COLUMNS = (
    "prompt_id", "task", "dataset", "variant", "method", "stage", "split", "qid", "turn", "call_index", "prefix_id",
    "head", "segment_ids", "suffix", "n_tokens_prefix", "n_tokens_total", "n_documents",
)  # fmt: skip


def _feeds_back_pids(prompt_rows: pl.DataFrame) -> bool:
    """Multi-turn retrieval feeds the earlier answers back as pids (runner.Work.shown_to_pid)."""
    return prompt_rows.filter((pl.col("task") == "retrieval") & (pl.col("n_turns") > 1)).height > 0


def project(relation: Relation, columns: tuple[str, ...] | None = None) -> pl.DataFrame:
    """A DuckDB relation (what dbt.ref returns) as polars, optionally only some columns."""
    if columns is not None:
        present = [c for c in columns if c in relation.columns]
        relation = relation.project(", ".join(f'"{c}"' for c in present))
    return relation.pl()


def query_limit(value: object) -> int | None:
    """The `limit` var: a positive number of queries per dataset and split, or None."""
    if value is None or not str(value).strip() or str(value).strip().lower() in ("none", "null"):
        return None
    try:
        number = int(str(value).strip())
    except ValueError as exc:
        raise ConfigurationError(f"limit must be a positive integer, got {value!r}") from exc
    if number < 1:
        raise ConfigurationError(f"limit must be a positive integer, got {value!r}")
    return number


def first_queries(queries: pl.DataFrame, n: int) -> pl.DataFrame:
    """(task, dataset, split, qid) of the first n dev and n test queries of each dataset, in
    the seeded query order (query_rank), the same that the int_prediction_rows model keeps."""
    distinct = queries.filter(pl.col("split").is_in(["dev", "test"])).unique(["task", "dataset", "split", "qid"])
    ranked = distinct.sort("query_rank", "qid").with_columns(
        pl.int_range(pl.len()).over("task", "dataset", "split").alias("position")
    )
    return ranked.filter(pl.col("position") < n).select("task", "dataset", "split", "qid")


def _has_steps(prompt_rows: pl.DataFrame) -> bool:
    """Whether any row belongs to a stage that a non-model step (bm25) answers."""
    from loft_warehouse.methods.catalogue import method

    if "method" not in prompt_rows.columns:
        return False
    pairs = prompt_rows.select("method", "stage").unique().iter_rows()
    return any(method(name).stage(stage).executor == "bm25" for name, stage in pairs)


def configured_systems(
    systems_file_setting: str | None, batch: str | list[str] | None = None, thinking: Any = None
) -> dict[str, System]:
    """All systems of the configured systems file, those named by the `batch` setting (var, then
    $LOFT_BATCH) switched to batch mode, and the `thinking` setting (var, then $LOFT_THINKING)
    applied (systems.with_thinking)."""
    value = thinking if thinking is not None and str(thinking).strip() else os.environ.get("LOFT_THINKING", "")
    systems = with_thinking(load_systems(systems_file(systems_file_setting)), value)
    value = batch if batch is not None and str(batch).strip() else os.environ.get("LOFT_BATCH", "")
    names = parse_selection(value) or []
    unknown = [n for n in names if n not in systems]
    if unknown:
        raise ConfigurationError(f"batch: {unknown_systems(unknown, list(systems))}")
    for name in names:
        if systems[name].kind.batch is None:
            raise ConfigurationError(
                f"batch: {name} is a {systems[name].provider} system; batch APIs exist for {list(BATCH_PROVIDERS)}"
            )
        systems[name] = dataclasses.replace(systems[name], mode="batch")
    return systems


def _prefix_texts(prefixes: Relation | None, prompt_rows: pl.DataFrame) -> dict[str, str]:
    """Prefix text by prefix_id, for the prefixes the prompt rows use (rows of later stages
    carry their prefix text themselves; stage 1 passes the prefixes relation)."""
    if "prefix_text" in prompt_rows.columns:
        pairs = prompt_rows.select("prefix_id", "prefix_text").unique("prefix_id")
        return dict(zip(pairs["prefix_id"], pairs["prefix_text"], strict=True))
    assert prefixes is not None, "stage 1 prompt rows without the prefixes relation"
    needed = prompt_rows["prefix_id"].unique().to_list()
    rows = project(prefixes, ("prefix_id", "text")).filter(pl.col("prefix_id").is_in(needed))
    return dict(zip(rows["prefix_id"], rows["text"], strict=True))


def _segment_texts(segments: Relation | None, prompt_rows: pl.DataFrame) -> dict[str, str]:
    """Segment text by segment_id, for the segments the prompt rows list."""
    if segments is None or "segment_ids" not in prompt_rows.columns:
        return {}
    needed = prompt_rows["segment_ids"].explode().drop_nulls().unique().to_list()
    if not needed:
        return {}
    rows = project(segments, ("segment_id", "text")).filter(pl.col("segment_id").is_in(needed))
    return dict(zip(rows["segment_id"], rows["text"], strict=True))


def _media(media: Relation | None, prompt_rows: pl.DataFrame) -> MediaLibrary | None:
    """The media of the datasets whose mm prompts the rows hold (None: no mm prompt)."""
    datasets = prompt_rows.filter(pl.col("task") == MM_TASK)["dataset"].unique().to_list()
    if not datasets:
        return None
    if media is None:
        raise ConfigurationError("multimodal prompt rows, but this stage was given no stg_mm_media")
    return MediaLibrary.from_frame(
        project(media, ("dataset", *MEDIA_COLUMNS)).filter(pl.col("dataset").is_in(datasets))
    )


def cost_estimates(
    size: str,
    systems_file_setting: str | None,
    prompts: Relation,
    prices: Relation,
    prefixes: Relation | None = None,
    data_dir: str | None = None,
    segments: Relation | None = None,
    corpus: Relation | None = None,
    design: Design | None = None,
    batch: str | list[str] | None = None,
    media: Relation | None = None,
    thinking: Any = None,
) -> pl.DataFrame:
    """The estimate of every configured system on this size's prompts (before any call), for
    every stage of every method: stage 1 from the prompts (multimodal ones with their media
    tokens), later stages from the methods' settings (design) and the corpus's document sizes.

    With the prefixes relation, systems with a `tokenizer` count the prompts over their window
    in SentencePiece tokens again in their own tokens, as the run does. The estimate is kept
    (frame_cache) under everything it reads, tiktoken's rank files included.
    """
    frame = project(prompts, ESTIMATE_COLUMNS)
    # Every configured system as its file has it ({}: no thinking setting), and as the thinking setting runs it.
    as_filed = configured_systems(systems_file_setting, batch, {}).values()
    as_run = configured_systems(systems_file_setting, batch, thinking).values()
    systems = list({system.name: system for system in (*as_filed, *as_run)}.values())
    texts = None if prefixes is None else _prefix_texts(prefixes, frame)
    segment_texts = _segment_texts(segments, frame)
    library = _media(media, frame)
    price_frame = project(prices)
    documents = (
        None if corpus is None or design is None else project(corpus, ("task", "dataset", "corpus_id", "n_tokens"))
    )

    def estimates() -> dict[str, pl.DataFrame]:
        seed_prices = cost.prices_from_frame(price_frame)
        stage1 = cost.estimate(frame, systems, seed_prices, size, texts, data_dir, segment_texts, library)
        if documents is None:
            return {"estimates": stage1}
        later = cost.later_stages(frame, documents, design, systems, seed_prices, size)
        return {"estimates": pl.concat([stage1, later]).sort("system", "task", "dataset", "method", "stage")}

    media_hashes = None if library is None else sorted(library.items)
    parts = [
        size, systems, design, _tokenizer_stamps(data_dir), frame, price_frame, texts, segment_texts, documents,
        media_hashes,
    ]  # fmt: skip
    key = frame_cache.key_of("cost_estimates", parts)
    return frame_cache.kept("cost_estimates", key, ["estimates"], estimates)[0]["estimates"]


def mm_cost_estimates(
    size: str,
    systems_file_setting: str | None,
    parts: Relation,
    media: Relation,
    prices: Relation,
    tokenizer_model: str | None = None,
    data_dir: str | None = None,
) -> pl.DataFrame:
    """The estimate of every configured system on this size's multimodal prompts (media_cost.py)."""
    systems = list(configured_systems(systems_file_setting).values())
    seed_prices = cost.prices_from_frame(project(prices))
    count = counter(settings.build_tokenizer_model(tokenizer_model, data_dir)).count
    return media_cost.estimate(
        project(parts),
        project(media, ("dataset", "sha256", "mime_type", "duration_ms")),
        systems,
        lambda system: cost.resolve_prices(system, seed_prices),
        count,
        size,
    )


def _tokenizer_stamps(data_dir: str | None) -> list[str]:
    """The shared tiktoken rank files an estimate may count with, by path, size and time."""
    try:
        folder = rank_dir(data_dir)
    except ConfigurationError:
        return []
    return [frame_cache.file_stamp(p) for p in sorted(folder.glob("*"))] if folder.is_dir() else []


def response_store(
    store_setting: str | None,
    systems: list[System],
    emit: Callable[[str], None],
    fixture_answered: set[str] | None = None,
) -> Path:
    """The store setting (var, then $LOFT_RESPONSE_STORE); unset, the default store, unless a
    selected system is answered by the fixture server (a dry run then has its own store) or is
    the planted-effects system (its own store too). fixture_answered: the names of the systems
    whose endpoint is the fixture, when the caller has asked already (each ask is a request)."""
    if (store_setting or "").strip() or os.environ.get("LOFT_RESPONSE_STORE", "").strip():
        return store_path(store_setting)
    if any(s.kind.planted for s in systems):
        emit(f"planted effects: responses go to {PLANTED_STORE}")
        return PLANTED_STORE
    if fixture_answered is None:
        fixture_answered = {s.name for s in systems if is_fixture(s.endpoint())}
    dry = [s.name for s in systems if not s.missing_credentials() and s.name in fixture_answered]
    if dry:
        emit(f"{', '.join(dry)}: answered by the loft fixture server, so responses go to {FIXTURE_STORE}")
        return FIXTURE_STORE
    return store_path(None)


@dataclass(frozen=True)
class InferenceSettings:
    """The settings a stage's responses read: dbt_project.yml's `loft` block, as the models get it
    (each a --vars key or its environment fallback, so text unless a var gave a list or number)."""

    systems: str | list[str] | None = None
    systems_file: str | None = None
    max_cost_usd: str | float | None = None
    response_store: str | None = None
    retry_errors: str | bool | None = None
    batch: str | list[str] | None = None
    thinking: Any = None
    data_dir: str | None = None
    limit: str | int | None = None

    @classmethod
    def from_loft(cls, loft: Mapping[str, object] | None) -> InferenceSettings:
        """The settings out of a model's `loft` config."""
        values = loft or {}
        return cls(**{f.name: values.get(f.name) for f in dataclasses.fields(cls)})  # type: ignore[arg-type]


@dataclass(frozen=True)
class StageRelations:
    """What one stage's responses read: its prompt rows, the size's corpus, shown-ID maps and
    queries, the price seed, and for stage 1 the prefix and segment texts and the cost estimate
    of every stage (later stages' rows carry their prefix_text), and the multimodal media
    (stg_mm_media) its mm prompts send."""

    prompts: Relation
    doc_ids: Relation
    corpus: Relation
    queries: Relation
    prices: Relation
    prefixes: Relation | None = None
    segments: Relation | None = None
    estimates: Relation | None = None
    media: Relation | None = None
    scope: Relation | None = None


def this_builds_rows(prompt_rows: pl.DataFrame, scope: Relation | None, build: str | None) -> pl.DataFrame:
    """The prompt rows of the partitions (dataset, variant, method) this build rendered: stage-1
    rows by their own build_id, later stages' by that of the stage-1 prompts (`scope`). Rows of
    partitions carried from earlier builds are neither sent nor read here; their responses are
    carried with them (macros/accumulate.sql). Outside a build (build None) every row counts."""
    if build is None:
        return prompt_rows
    if "build_id" in prompt_rows.columns:
        return prompt_rows.filter(pl.col("build_id") == build)
    if scope is None or "build_id" not in scope.columns:
        return prompt_rows
    rendered = project(scope, (*PARTITION_COLUMNS, "build_id")).filter(pl.col("build_id") == build)
    return prompt_rows.join(rendered.select(PARTITION_COLUMNS).unique(), on=list(PARTITION_COLUMNS), how="semi")


def responses(
    size: str,
    config: InferenceSettings,
    relations: StageRelations,
    emit: Callable[[str], None] = emit_stderr,
) -> pl.DataFrame:
    """Send one stage's prompts for the selected systems; the `responses` rows from the store,
    each with its source ('planted' for the planted-effects test system, 'dry_run' for a system
    answered by the loft fixture server, else 'inference').

    Stage 1 passes the cost estimate of every stage (cost_estimates: the full run, beside which
    the runner prints what this build sends and checks max_cost_usd against it); later stages
    pass their own prompt rows (with a `system` and their `prefix_text`). With a limit, only the
    first N dev and N test queries of each dataset are sent, and every row carries N
    (query_limit): scoring reads a run's limit from its rows, never from a later build's vars."""
    systems = select(
        configured_systems(config.systems_file, config.batch, config.thinking), parse_selection(config.systems)
    )
    names = [s.name for s in systems]
    full_runs = None
    if relations.estimates is not None:
        full_runs = cost.full_runs(project(relations.estimates).filter(pl.col("system").is_in(names)))
    prompt_rows = this_builds_rows(
        project(relations.prompts, PROMPT_COLUMNS), relations.scope, current_build.build_id()
    )
    n_queries = query_limit(config.limit)
    if n_queries is not None:
        kept = first_queries(project(relations.queries, ("task", "dataset", "split", "qid", "query_rank")), n_queries)
        prompt_rows = prompt_rows.join(kept, on=["task", "dataset", "split", "qid"], how="semi")
        emit(f"limit {n_queries}: {prompt_rows.height} prompt row(s) of the first {n_queries} dev and test queries")
    uses_bm25 = any(s.kind.reads_corpus for s in systems) or _has_steps(prompt_rows)
    inputs = runner.RunInputs(
        prompts=prompt_rows.drop("prefix_text", "build_id", "prompt_digest", strict=False),
        prefixes=_prefix_texts(relations.prefixes, prompt_rows),
        corpus=project(relations.corpus, BM25_CORPUS_COLUMNS) if uses_bm25 else None,
        doc_ids=project(relations.doc_ids, ("task", "dataset", "corpus_id", "variant", "shown_id", "pid"))
        if uses_bm25 or _feeds_back_pids(prompt_rows)
        else None,
        queries=project(relations.queries, ("task", "dataset", "corpus_id", "qid", "turn", "query_text"))
        if uses_bm25
        else None,
        segments=_segment_texts(relations.segments, prompt_rows),
        size=size,
        media=_media(relations.media, prompt_rows),
    )
    fixture_answered = {s.name for s in systems if is_fixture(s.endpoint())}
    with ResponseStore(response_store(config.response_store, systems, emit, fixture_answered)) as store:
        frame = runner.run(
            inputs,
            systems,
            store,
            size,
            cost.prices_from_frame(project(relations.prices)),
            max_cost_usd=cost.parse_limit(config.max_cost_usd),
            full_runs=full_runs,
            emit=emit,
            data_dir=config.data_dir,
            retry_errors=settings.flag(config.retry_errors, "retry_errors"),
        )
    created = pl.col("created_at").str.to_datetime(format="%Y-%m-%dT%H:%M:%S%.f%z")
    planted = [s.name for s in systems if s.kind.planted]
    source = (
        pl.when(pl.col("system").is_in(planted))
        .then(pl.lit("planted"))
        .when(pl.col("system").is_in(sorted(fixture_answered)))
        .then(pl.lit("dry_run"))
        .otherwise(pl.lit("inference"))
    )
    frame = frame.with_columns(
        created.dt.convert_time_zone("UTC"),
        source.alias("source"),
        pl.lit(n_queries, pl.Int64).alias("query_limit"),
    )
    if "prompt_digest" not in prompt_rows.columns:
        return frame.with_columns(pl.lit(None, pl.String).alias("prompt_digest"))
    digests = prompt_rows.select("prompt_id", "prompt_digest").unique("prompt_id")
    return frame.join(digests, on="prompt_id", how="left")
