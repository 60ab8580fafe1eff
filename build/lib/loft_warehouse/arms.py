"""Arms: the settings that define each run's prompts, as columns.

A run's rows are keyed by (task, dataset, variant, method) within a size; this table says what
those names mean in numbers: the method's settings as this build resolved them (bm25's top k,
the reminder interval, ICR's page count, the chunk size: from the method's name when it carries
them, `reprompt_r5000`, else the build's vars), and the variant's (few-shot examples, many-shot
context, the ablation switched on, Lost in the Middle's documents and gold index, R&R's document
length and answer position). arm_id is a stable hash of every setting and the size, so the same
arm has the same id in every build and two sweeps of one method are two arms.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

import polars as pl

from loft_warehouse import settings
from loft_warehouse.design import Design
from loft_warehouse.methods.catalogue import method
from loft_warehouse.prompts.store import VARIANT_SCHEMA
from loft_warehouse.prompts.variants import ABLATIONS, VARIANTS

# prompt_variants' columns that say where and how a variant places its documents, as they are.
PLACEMENT_COLUMNS = tuple(name for name in VARIANT_SCHEMA if name not in ("task", "dataset", "variant", "family"))
ARM_SCHEMA: dict[str, Any] = {
    "arm_id": pl.String,
    "size": pl.String,
    "context_tokens": pl.Int64,
    "task": pl.String,
    "dataset": pl.String,
    "method": pl.String,
    "method_family": pl.String,
    "n_stages": pl.Int64,
    "top_k": pl.Int64,
    "reprompt_every": pl.Int64,
    "icr_pages": pl.Int64,
    "chunk_tokens": pl.Int64,
    "variant": pl.String,
    "variant_family": pl.String,
    "ablation": pl.String,
    "n_few_shot": pl.Int64,
    "icl_context": pl.String,
    **{name: VARIANT_SCHEMA[name] for name in PLACEMENT_COLUMNS},
}
# Columns that name a row rather than set it: left out of the hash.
_NOT_SETTINGS = ("arm_id", "task", "dataset")
_SETTINGS_SUFFIX = re.compile(r"(_[rkc][1-9][0-9]*)+$")


def method_family(name: str) -> str:
    """The method without its settings: rag_top40_justified -> rag_top{k}_justified, reprompt_r5000 -> reprompt."""
    return _SETTINGS_SUFFIX.sub("", re.sub(r"^rag_top[0-9]+", "rag_top{k}", name)) if name != "cic" else name


def method_settings(name: str, design: Design) -> dict[str, Any]:
    """A method's settings as this build resolves them; null where the method has no such setting."""
    chosen = method(name)
    return {
        "method": name,
        "method_family": method_family(name),
        "n_stages": chosen.n_stages,
        "top_k": chosen.top_k,
        "reprompt_every": chosen.every(design) if chosen.uses_interval else None,
        "icr_pages": chosen.pages(design) if chosen.uses_pages else None,
        "chunk_tokens": chosen.chunk(design) if chosen.chunked else None,
    }


def variant_settings(row: dict[str, Any]) -> dict[str, Any]:
    """A prompt_variants row's settings, with the LOFT variant's own switches."""
    variant = VARIANTS.get(row["variant"]) if row.get("family") == "loft" else None
    return {
        "variant": row["variant"],
        "variant_family": row.get("family"),
        "ablation": row["variant"] if row["variant"] in ABLATIONS else None,
        "n_few_shot": variant.n_few_shot if variant else None,
        "icl_context": variant.context if variant else None,
        **{name: row.get(name) for name in PLACEMENT_COLUMNS},
    }


def arm_id(row: dict[str, Any]) -> str:
    """16 hex digits of sha256 over the row's settings (canonical JSON, names sorted)."""
    keyed = {name: row.get(name) for name in ARM_SCHEMA if name not in _NOT_SETTINGS}
    text = json.dumps(keyed, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def arms_frame(prompts: pl.DataFrame, variants: pl.DataFrame, design: Design, size: str) -> pl.DataFrame:
    """One row per (task, dataset, variant, method) that `prompts` holds (stage 1)."""
    present = prompts.select("task", "dataset", "variant", "method").unique()
    by_variant = {(r["task"], r["dataset"], r["variant"]): r for r in variants.iter_rows(named=True)}
    tokens = settings.size(size).tokens
    rows = []
    for task, dataset, variant, name in present.sort(["task", "dataset", "variant", "method"]).iter_rows():
        row: dict[str, Any] = {"size": size, "context_tokens": tokens, "task": task, "dataset": dataset}
        row |= method_settings(name, design)
        row |= variant_settings(by_variant.get((task, dataset, variant), {"variant": variant}))
        row["arm_id"] = arm_id(row)
        rows.append(row)
    return pl.DataFrame(rows, schema=ARM_SCHEMA)
