"""What a run makes of each prompt row: conversations to walk and the response rows they get.

Shared by the streaming run (runner.py) and batch mode (batch_run.py).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import polars as pl

from loft_warehouse.inference import cost
from loft_warehouse.inference.providers.base import Completion, RejectedError, ResponseBudget
from loft_warehouse.inference.store import REJECTED, StoredResponse, now_utc
from loft_warehouse.inference.systems import Prices, System

# One answered (or skipped) prompt row: the row and the response it got.
Outcome = tuple[dict[str, Any], StoredResponse]


@dataclass
class Conversation:
    """The prompt rows of one query for one system, in turn order (one row if single-turn)."""

    rows: list[dict[str, Any]]


def conversations(rows: pl.DataFrame) -> list[Conversation]:
    """Group prompt rows into conversations, ordered by prefix so caches are reused in order."""
    grouped: dict[tuple, list[dict[str, Any]]] = {}
    for row in rows.sort("prefix_id", "qid", "turn").iter_rows(named=True):
        grouped.setdefault((row["task"], row["dataset"], row["corpus_id"], row["variant"], row["qid"]), []).append(row)
    return [Conversation(group) for group in grouped.values()]


def completed(response: StoredResponse, completion: Completion, prices: Prices, batch: bool) -> StoredResponse:
    """A response row filled from a returned completion, priced (at the batch price for a
    batch result)."""
    return replace(
        response,
        status=completion.status,
        raw_text=completion.raw_text,
        finish_reason=completion.finish_reason,
        input_tokens=completion.input_tokens,
        cached_tokens=completion.cached_tokens,
        output_tokens=completion.output_tokens,
        cache_write_tokens=completion.cache_write_tokens,
        thinking_tokens=completion.thinking_tokens,
        thought_text=completion.thought_text,
        ttft_s=completion.ttft_s,
        cost_usd=cost.actual_cost(
            prices,
            completion.input_tokens,
            completion.cached_tokens,
            completion.output_tokens,
            completion.cache_write_tokens,
            batch=batch,
        ),
    )


def within_reply_budget(response: StoredResponse) -> StoredResponse:
    """A returned response, or, when its text passes the reply budget (providers.base
    .ResponseBudget), an error row that keeps its tokens and cost but not its text."""
    try:
        ResponseBudget().take(response.raw_text, response.thought_text)
    except RejectedError as exc:
        return replace(
            response, status="error", raw_text=None, thought_text=None, error=str(exc), finish_reason=REJECTED
        )
    return response


def row_response(row: dict[str, Any], system: System, status: str, key: str | None = None) -> StoredResponse:
    """A response row for a prompt row, before (or without) a call."""
    return StoredResponse(
        request_key=key or "",
        system=system.name,
        prompt_id=row["prompt_id"],
        task=row["task"],
        dataset=row["dataset"],
        corpus_id=row["corpus_id"],
        variant=row["variant"],
        split=row["split"],
        qid=row["qid"],
        turn=int(row["turn"]),
        status=status,
        attempts=0,
        created_at=now_utc(),
        max_output_tokens=system.max_output_tokens or None,
        thinking=None if system.thinking is None else str(system.thinking),
    )
