"""The multimodal prompts of a size as rows of the prompt tables, so that the runner sends them,
the store keeps their responses and scoring reads them as it reads text prompts.

Each mm dataset is one prefix (its mm_prompt_parts prefix as a marked text, media_markers.py)
and one prompt row per evaluated query (its suffix as a marked text), task `mm`, corpus_id the
dataset, variant `default`, method `cic`; the shown-ID map is the corpus order the prompt shows.
Token counts are the text parts' SentencePiece counts: what media cost depends on the provider,
and the runner adds it per system (media_tokens.py).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import polars as pl

from loft_warehouse.prompts.media_markers import marked_text, text_only
from loft_warehouse.prompts.multimodal import Part
from loft_warehouse.prompts.store import DOC_ID_SCHEMA, PREFIX_SCHEMA, PROMPT_SCHEMA, prefix_id, prompt_id

TASK = "mm"
VARIANT = "default"
METHOD = "cic"


@dataclass(frozen=True)
class MultimodalTables:
    """The mm share of prompt_prefixes, int_prompt_rows and prompt_doc_ids."""

    prefixes: pl.DataFrame
    prompts: pl.DataFrame
    doc_ids: pl.DataFrame


def _marked(rows: pl.DataFrame) -> str:
    ordered = rows.sort("part_index").iter_rows(named=True)
    return marked_text(Part(r["mime_type"], r["text"], r["media_sha256"]) for r in ordered)


def tables(
    parts: pl.DataFrame,
    queries: pl.DataFrame,
    corpus: pl.DataFrame,
    count: Callable[[Sequence[str]], list[int]],
) -> MultimodalTables:
    """Prefix, prompt and shown-ID rows from mm_prompt_parts, stg_mm_queries and stg_mm_corpus."""
    prefixes: list[dict] = []
    prompts: list[dict] = []
    gold = {(r["dataset"], r["split"], r["qid"]): r for r in queries.iter_rows(named=True)}
    n_documents = dict(corpus.group_by("dataset").len().iter_rows())
    for (dataset,), dataset_parts in parts.group_by("dataset", maintain_order=True):
        name = str(dataset)
        prefix = _marked(dataset_parts.filter(section="prefix"))
        suffixes = [
            (str(split), str(qid), _marked(group))
            for (split, qid), group in dataset_parts.filter(section="suffix").group_by(
                "split", "qid", maintain_order=True
            )
        ]
        n_prefix, *n_suffixes = count([text_only(prefix), *(text_only(s) for _, _, s in suffixes)])
        pid = prefix_id(TASK, name, name, VARIANT, prefix)
        prefixes.append(
            {
                "prefix_id": pid,
                "task": TASK,
                "dataset": name,
                "corpus_id": name,
                "variant": VARIANT,
                "method": METHOD,
                "text": prefix,
                "content_hash": hashlib.sha256(prefix.encode("utf-8")).hexdigest(),
                "n_tokens": n_prefix,
                "n_chars": len(prefix),
            }
        )
        for (split, qid, suffix), n_suffix in zip(suffixes, n_suffixes, strict=True):
            query = gold[(name, split, qid)]
            shown = json.dumps(list(query["gold_shown_ids"]), ensure_ascii=False)
            prompts.append(
                {
                    "prompt_id": prompt_id(TASK, name, name, VARIANT, qid, 0),
                    "task": TASK,
                    "dataset": name,
                    "corpus_id": name,
                    "variant": VARIANT,
                    "method": METHOD,
                    "stage": 1,
                    "split": split,
                    "qid": qid,
                    "turn": 0,
                    "call_index": 0,
                    "n_turns": 1,
                    "prefix_id": pid,
                    "head": "",
                    "segment_ids": [],
                    "suffix": suffix,
                    "n_tokens_prefix": n_prefix,
                    "n_tokens_total": n_prefix + n_suffix,
                    "gold": json.dumps(list(query["gold_pids"]), ensure_ascii=False),
                    "gold_shown_ids": shown,
                    "targets": shown,
                    "n_documents": n_documents.get(name),
                }
            )
    doc_ids = corpus.select(
        pl.lit(TASK).alias("task"),
        "dataset",
        pl.col("dataset").alias("corpus_id"),
        pl.lit(VARIANT).alias("variant"),
        pl.col("corpus_index").alias("position"),
        "shown_id",
        "pid",
    )
    return MultimodalTables(
        prefixes=pl.DataFrame(prefixes, schema=PREFIX_SCHEMA),
        prompts=pl.DataFrame(prompts, schema=PROMPT_SCHEMA),
        doc_ids=doc_ids.cast(DOC_ID_SCHEMA),  # type: ignore[arg-type]
    )
