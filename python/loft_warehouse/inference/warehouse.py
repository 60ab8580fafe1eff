"""What the dbt models `responses` and `cost_estimates` of a size compute (the model files are thin).

Settings come from dbt vars (see models/loft_128k/marts/_marts__inference.yml): `systems`
(selection), `systems_file`, `max_cost_usd`, `response_store`; each falls back to its
environment variable (LOFT_SYSTEMS, LOFT_SYSTEMS_FILE, LOFT_MAX_COST_USD, LOFT_RESPONSE_STORE).
The data root (the project's `loft.data_dir` setting) locates the files of systems' tokenizers.
API keys are never settings: providers read them from the environment when they call.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import polars as pl

from loft_warehouse.inference import cost, runner
from loft_warehouse.inference.flow import emit_stderr
from loft_warehouse.inference.store import ResponseStore, store_path
from loft_warehouse.inference.systems import System, load_systems, parse_selection, select, systems_file

PROMPT_COLUMNS = (
    "prompt_id", "task", "dataset", "corpus_id", "variant", "split", "qid", "turn", "n_turns",
    "prefix_id", "head", "suffix", "n_tokens_prefix", "n_tokens_total",
)  # fmt: skip
ESTIMATE_COLUMNS = (
    "prompt_id", "task", "dataset", "variant", "turn", "prefix_id", "head", "suffix", "n_tokens_prefix",
    "n_tokens_total",
)  # fmt: skip


def _frame(relation: Any, columns: tuple[str, ...] | None = None) -> pl.DataFrame:
    """A DuckDB relation (what dbt.ref returns) as polars, optionally only some columns."""
    if columns is not None:
        present = [c for c in columns if c in relation.columns]
        relation = relation.project(", ".join(f'"{c}"' for c in present))
    return relation.pl()


def configured_systems(systems_file_setting: str | None) -> dict[str, System]:
    """All systems of the configured systems file."""
    return load_systems(systems_file(systems_file_setting))


def _prefix_texts(prefixes: Any, prompt_rows: pl.DataFrame) -> dict[str, str]:
    """Prefix text by prefix_id, for the prefixes the prompt rows use."""
    needed = prompt_rows["prefix_id"].unique().to_list()
    rows = _frame(prefixes, ("prefix_id", "text")).filter(pl.col("prefix_id").is_in(needed))
    return dict(zip(rows["prefix_id"], rows["text"], strict=True))


def cost_estimates(
    size: str,
    systems_file_setting: str | None,
    prompts: Any,
    prices: Any,
    prefixes: Any = None,
    data_dir: str | None = None,
) -> pl.DataFrame:
    """The estimate of every configured system on this size's prompts (before any call).

    With the prefixes relation, systems with a `tokenizer` count the prompts over their window
    in SentencePiece tokens again in their own tokens, as the run does.
    """
    frame = _frame(prompts, ESTIMATE_COLUMNS)
    systems = list(configured_systems(systems_file_setting).values())
    texts = None if prefixes is None else _prefix_texts(prefixes, frame)
    return cost.estimate(frame, systems, cost.prices_from_frame(_frame(prices)), size, texts, data_dir)


def responses(
    size: str,
    *,
    selection: Any,
    systems_file_setting: str | None,
    max_cost_usd: Any,
    store_setting: str | None,
    prompts: Any,
    prefixes: Any,
    doc_ids: Any,
    corpus: Any,
    queries: Any,
    prices: Any,
    estimates: Any,
    emit: Callable[[str], None] = emit_stderr,
    data_dir: str | None = None,
) -> pl.DataFrame:
    """Send the size's prompts for the selected systems; the `responses` rows from the store."""
    systems = select(configured_systems(systems_file_setting), parse_selection(selection))
    names = [s.name for s in systems]
    estimate = _frame(estimates).filter(pl.col("system").is_in(names))
    if estimate.height:
        emit(f"cost estimate for loft_{size} (before any call):\n{cost.format_estimate(estimate)}")
    prompt_rows = _frame(prompts, PROMPT_COLUMNS)
    uses_bm25 = any(s.provider == "bm25" for s in systems)
    inputs = runner.RunInputs(
        prompts=prompt_rows,
        prefixes=_prefix_texts(prefixes, prompt_rows),
        corpus=_frame(corpus, ("task", "dataset", "corpus_id", "pid", "title", "text")) if uses_bm25 else None,
        doc_ids=_frame(doc_ids, ("task", "dataset", "corpus_id", "variant", "shown_id", "pid")) if uses_bm25 else None,
        queries=_frame(queries, ("task", "dataset", "corpus_id", "qid", "turn", "query_text")) if uses_bm25 else None,
    )
    with ResponseStore(store_path(store_setting)) as store:
        frame = runner.run(
            inputs,
            systems,
            store,
            size,
            cost.prices_from_frame(_frame(prices)),
            max_cost_usd=cost.parse_limit(max_cost_usd),
            emit=emit,
            data_dir=data_dir,
        )
    created = pl.col("created_at").str.to_datetime(format="%Y-%m-%dT%H:%M:%S%.f%z")
    return frame.with_columns(created.dt.convert_time_zone("UTC"))
