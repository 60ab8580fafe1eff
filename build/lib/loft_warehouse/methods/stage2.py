"""Later-stage prompts: stage s + 1 built from the parsed answers of stage s (int_stage{s}_answers;
int_stage2_prompts from stage 1, int_stage3_prompts from stage 2).

Each method's later stage is built by the function its catalogue entry names (methods.stages),
from exactly what the stage before chose, read with the strict rule:
- rag_top{k}: bm25's top k shown IDs -> the reader prompt over those passages
  (retrieve_read.reader);
- icr, r_and_r: the first icr_pages valid pages the model listed; chunked_icr: those of every
  chunk, pooled in chunk order -> R&R's QA prompt over those pages, in document order, numbered
  as in the document (paginated.answer_from_pages);
- *_verify: one prompt per candidate of the justified JSON, over the documents it cites as
  evidence for it, the candidate in the row's payload (justified.verification_calls); for
  rag_top{k}_justified*_verify that JSON is stage 2's, so the verification is stage 3;
- rag_top{k}_verify: one prompt per document of bm25's top k (justified.verify_retrieved).

Defined behaviour for answers that give the next stage nothing to work with (documented in the
README): a call that failed or was skipped, an answer that does not parse, or one that names no
page / passage of the prompt builds no next-stage prompt; the query's final prediction is then
`skipped_upstream` (scored 0, counted unanswered). Page numbers outside the document and IDs that
are not shown are dropped. A candidate citing no shown document is not verified (not in the
final answer); a justified answer without candidates gives an empty final answer.
"""

from __future__ import annotations

import json
from typing import Any

import polars as pl

from loft_warehouse.design import Design
from loft_warehouse.methods.catalogue import Method, method
from loft_warehouse.methods.stages import Call, DocumentMaps, Upstream, builder
from loft_warehouse.prompts.inputs import Collection, Query, collections
from loft_warehouse.prompts.store import PROMPT_SCHEMA, PartCounts, PromptTokens, prefix_id, prompt_id
from loft_warehouse.prompts.variants import VARIANTS, for_variant
from loft_warehouse.tokens import TokenCounter

STAGE2_SCHEMA: dict[str, pl.DataType | type[pl.DataType]] = {
    "system": pl.String,
    **PROMPT_SCHEMA,
    "prefix_text": pl.String,
    "context_pids": pl.List(pl.String),
}
ANSWER_COLUMNS = (
    "system", "task", "dataset", "corpus_id", "variant", "method", "stage", "split", "qid", "turn", "call_index",
    "status", "answers_strict", "payload_strict",
)  # fmt: skip


def build(
    answers: pl.DataFrame,
    corpus: pl.DataFrame,
    queries: pl.DataFrame,
    datasets: pl.DataFrame,
    doc_ids: pl.DataFrame,
    design: Design,
    tokens: TokenCounter,
    stage: int = 2,
) -> pl.DataFrame:
    """Every prompt of `stage` built from every system's answers in the stage before."""
    counts = PartCounts(PromptTokens(tokens))
    answers = answers.filter(pl.col("stage") == stage - 1)
    if answers.height == 0:
        return pl.DataFrame(schema=STAGE2_SCHEMA)
    wanted = answers.select("task", "dataset", "corpus_id").unique()
    corpus = corpus.join(wanted, on=["task", "dataset", "corpus_id"])
    queries = queries.join(wanted, on=["task", "dataset", "corpus_id"])
    by_key = {(c.task, c.dataset, c.corpus_id): c for c in collections(corpus, queries, datasets)}
    maps = DocumentMaps(doc_ids.join(wanted, on=["task", "dataset", "corpus_id"]))
    cache: dict[Any, Any] = {}
    out: list[dict[str, Any]] = []
    groups = answers.select(ANSWER_COLUMNS).partition_by(
        ["system", "task", "dataset", "corpus_id", "variant", "method", "qid", "turn"],
        as_dict=True,
        maintain_order=True,
    )
    shown: dict[tuple[str, str, str, str], Collection] = {}
    for (system, task, dataset, corpus_id, variant, name, qid, turn), group in groups.items():
        collection = by_key.get((task, dataset, corpus_id))
        if collection is not None:
            key = (task, dataset, corpus_id, variant)
            if key not in shown:
                shown[key] = for_variant(collection, VARIANTS.get(variant))
            collection = shown[key]
        query = next((q for q in collection.evaluated if q.qid == qid), None) if collection else None
        if collection is None or query is None:
            continue
        chosen = method(name)
        if chosen.n_stages < stage:
            continue
        upstream = Upstream(chosen, collection, query, variant, group.to_dicts(), maps, design, cache)
        for call in builder(chosen.stage(stage).build)(upstream):
            out.append(_row(system, chosen, collection, query, variant, int(turn), call, counts, stage))
    return pl.DataFrame(out, schema=STAGE2_SCHEMA)


def _row(
    system: str,
    chosen: Method,
    collection: Collection,
    query: Query,
    variant: str,
    turn: int,
    call: Call,
    counts: PartCounts,
    stage: int,
) -> dict[str, Any]:
    key = (collection.task, collection.dataset, collection.corpus_id)
    gold = set(query.turns[turn].gold_pids)
    positions = [i for i, d in enumerate(call.context) if d.pid in gold]
    n_prefix = counts.start(call.prefix)
    total = counts.total([call.prefix, call.suffix])
    return {
        "system": system,
        "prompt_id": prompt_id(*key, variant, query.qid, turn, chosen.name, stage, call.call_index),
        "task": key[0],
        "dataset": key[1],
        "corpus_id": key[2],
        "variant": variant,
        "method": chosen.name,
        "stage": stage,
        "split": query.split,
        "qid": query.qid,
        "turn": turn,
        "call_index": call.call_index,
        "n_turns": len(query.turns),
        "prefix_id": prefix_id(*key, variant, call.prefix, f"{chosen.name}/s{stage}"),
        "head": "",
        "segment_ids": [],
        "suffix": call.suffix,
        "n_tokens_prefix": n_prefix,
        "n_tokens_total": total,
        "gold": query.turns[turn].gold_json,
        "gold_shown_ids": json.dumps([call.shown[i] for i in positions] if call.shown else []),
        "targets": query.turns[turn].gold_json or "null",
        "gold_positions": positions or None,
        "gold_depth": (min(positions) / (len(call.context) - 1) if len(call.context) > 1 else 0.0)
        if positions
        else None,
        "gold_token_offset": None,
        "n_documents": len(call.context),
        "payload": call.payload,
        "prefix_text": call.prefix,
        "context_pids": [d.pid for d in call.context],
    }
