"""What answering the multimodal prompts would cost each configured system, before any call.

Per system, dataset and split: the requests (one per evaluated query), the text tokens of their
text parts (the warehouse's SentencePiece counts, as the text estimate uses) and the media
tokens of their media parts by the provider's documented rule (media_tokens.py), apart, then
input and output tokens and the cost without and with caching the shared prefix (written once
at the input price, read by every other request of the split at the cached-input price). A
system whose provider does not take a modality the dataset sends is skipped_unsupported, with
the types it lacks; a count its provider does not document leaves the tokens and cost null.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import polars as pl

from loft_warehouse.inference import media_tokens
from loft_warehouse.inference.systems import Prices, System
from loft_warehouse.prompts.multimodal import TEXT

ESTIMATE_SCHEMA = pl.Schema(
    {
        "system": pl.String(),
        "model": pl.String(),
        "provider": pl.String(),
        "dataset": pl.String(),
        "split": pl.String(),
        "status": pl.String(),
        "unsupported_media": pl.String(),
        "n_requests": pl.Int64(),
        "prefix_tokens": pl.Int64(),
        "text_tokens": pl.Int64(),
        "media_tokens": pl.Int64(),
        "input_tokens": pl.Int64(),
        "output_tokens": pl.Int64(),
        "input_usd_per_mtok": pl.Float64(),
        "cached_input_usd_per_mtok": pl.Float64(),
        "output_usd_per_mtok": pl.Float64(),
        "cost_usd_no_cache": pl.Float64(),
        "cost_usd_with_cache": pl.Float64(),
    }
)


def _media_tokens(provider: str, items: list[dict[str, Any]]) -> int | None:
    return media_tokens.sent_tokens(provider, ((item["mime_type"], item["duration_ms"]) for item in items))


def _usd(tokens: int | None, price: float | None) -> float | None:
    return None if tokens is None or price is None else tokens * price / 1e6


def _sum(values: Sequence[float | None]) -> float | None:
    return None if any(v is None for v in values) else sum(v for v in values if v is not None)


class _Section:
    """The text and media of one prefix or suffix."""

    def __init__(self, rows: list[dict[str, Any]], media: dict[str, dict[str, Any]]) -> None:
        ordered = sorted(rows, key=lambda row: row["part_index"])
        self.text = "".join(row["text"] for row in ordered if row["mime_type"] == TEXT)
        self.media = [media[row["media_sha256"]] for row in ordered if row["mime_type"] != TEXT]


def estimate(
    parts: pl.DataFrame,
    media: pl.DataFrame,
    systems: Sequence[System],
    prices_of: Callable[[System], Prices],
    count: Callable[[list[str]], list[int]],
    size: str,
) -> pl.DataFrame:
    """One row per (system, dataset, split) of mm_prompt_parts that the system's scope takes."""
    rows: list[dict[str, Any]] = []
    for (dataset,), dataset_parts in parts.group_by("dataset", maintain_order=True):
        by_hash = {item["sha256"]: item for item in media.filter(dataset=dataset).iter_rows(named=True)}
        prefix = _Section(dataset_parts.filter(section="prefix").to_dicts(), by_hash)
        suffixes = dataset_parts.filter(section="suffix")
        types = sorted({item["mime_type"] for item in by_hash.values()})
        for (split,), split_parts in suffixes.group_by("split", maintain_order=True):
            queries = [
                _Section(group.to_dicts(), by_hash) for _, group in split_parts.group_by("qid", maintain_order=True)
            ]
            prefix_text, *suffix_texts = count([prefix.text, *(q.text for q in queries)])
            for system in systems:
                if not system.applies(size, "mm", str(dataset), "default"):
                    continue
                rows.append(_row(system, prices_of(system), str(dataset), str(split), types, prefix, queries,
                                 prefix_text, suffix_texts))  # fmt: skip
    return pl.DataFrame(rows, schema=ESTIMATE_SCHEMA)


def _row(
    system: System,
    prices: Prices,
    dataset: str,
    split: str,
    types: list[str],
    prefix: _Section,
    queries: list[_Section],
    prefix_text: int,
    suffix_texts: list[int],
) -> dict[str, Any]:
    n = len(queries)
    row: dict[str, Any] = {
        "system": system.name,
        "model": system.model,
        "provider": system.provider,
        "dataset": dataset,
        "split": split,
        "n_requests": n,
        "input_usd_per_mtok": prices.input,
        "cached_input_usd_per_mtok": prices.cached_input,
        "output_usd_per_mtok": prices.output,
    }
    extra = media_tokens.extra_modalities(system.name, system.options)
    lacking = [t for t in types if not media_tokens.supported(system.provider, t, extra)]
    if lacking:
        return {**row, "status": "skipped_unsupported", "unsupported_media": ", ".join(lacking)}
    prefix_media = _media_tokens(system.provider, prefix.media)
    suffix_media = [_media_tokens(system.provider, q.media) for q in queries]
    media_total = _sum([None if prefix_media is None else n * prefix_media, *suffix_media])
    text_total = n * prefix_text + sum(suffix_texts)
    prefix_tokens = None if prefix_media is None else prefix_text + prefix_media
    input_tokens = None if media_total is None else int(text_total + media_total)
    output_tokens = n * system.expected_billed_output_tokens
    output_usd = _usd(output_tokens, prices.output)
    suffix_tokens = None if input_tokens is None or prefix_tokens is None else input_tokens - n * prefix_tokens
    cached = _sum(
        [_usd(prefix_tokens, prices.input), _usd(None if prefix_tokens is None else (n - 1) * prefix_tokens,
         prices.cached_input), _usd(suffix_tokens, prices.input), output_usd]
    )  # fmt: skip
    return {
        **row,
        "status": "estimated",
        "prefix_tokens": prefix_tokens,
        "text_tokens": text_total,
        "media_tokens": None if media_total is None else int(media_total),
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "cost_usd_no_cache": _sum([_usd(input_tokens, prices.input), output_usd]),
        "cost_usd_with_cache": cached,
    }
