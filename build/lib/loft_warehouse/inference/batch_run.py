"""Batch mode of a system: collect what earlier builds submitted, then submit what is left.

A build first asks the provider about every open batch of the system in the store; an ended
batch's results are stored as responses exactly like streamed ones (same keys and statuses,
usage, cost at the batch price, the batch's id), and a request the batch did not answer
(errored, expired, canceled, or missing from the results) is stored as an error, sent again by
a later build. Then every prompt row still without a final response is either waiting in a
batch (status batch_pending in this build's `responses`) or is submitted now: the batch and its
request keys are committed to the store before the provider is called, and its provider id
right after, so a killed build never submits twice. Multi-turn conversations advance one turn
per collected batch, because a turn is built from the earlier turns' answers.
"""

from __future__ import annotations

import functools
import json
import uuid
from collections.abc import Callable
from dataclasses import replace
from typing import Any, Protocol, TypeVar

from loft_warehouse.inference.batch_clients import (
    BatchClient,
    BatchResult,
    BatchState,
    body_size,
)
from loft_warehouse.inference.flow import RetryPolicy, call_with_retries
from loft_warehouse.inference.outcomes import Conversation, Outcome, completed, row_response, within_reply_budget
from loft_warehouse.inference.providers.base import PermanentError, RejectedError, Request, RetryableError
from loft_warehouse.inference.store import BATCH_PENDING, REJECTED, ResponseStore, StoredResponse
from loft_warehouse.inference.systems import Prices, System

T = TypeVar("T")
ROW_FIELDS = ("prompt_id", "task", "dataset", "corpus_id", "variant", "split", "qid", "turn")


class SystemWork(Protocol):
    """What batch mode reads of a system's share of a run (runner.SystemRun)."""

    system: System
    store: ResponseStore
    prices: Prices
    policy: RetryPolicy
    known: dict[str, StoredResponse]
    retry_errors: bool
    report_as: str

    def turn_request(self, row: dict[str, Any], answers: list[str]) -> Request: ...

    def answer_of(self, stored: StoredResponse, row: dict[str, Any]) -> str: ...


class BatchWork:
    """One batch-mode system's share of a build."""

    def __init__(self, work: SystemWork, emit: Callable[[str], None]) -> None:
        self.work = work
        self.system = work.system
        self.store = work.store
        self.emit = emit
        self.client: BatchClient = work.system.kind.batch_client(work.system)
        self.refused: set[str] = set()

    def call(self, action: Callable[[], T]) -> T:
        """A batch API operation, retried under the system's policy."""
        result, _ = call_with_retries(lambda: self.client.call(action), self.work.policy)
        return result

    def collect(self) -> dict[str, str]:
        """Poll every open batch of the system; store the results of those that ended. Returns
        the request keys still waiting in a batch, with the batch's id."""
        name = self.system.name
        known_ids = {str(b["provider_batch_id"]) for b in self.store.batches(name) if b["provider_batch_id"]}
        waiting: dict[str, str] = {}
        for batch in self.store.batches(name, open_only=True):
            batch_id = str(batch["batch_id"])
            provider_id = batch["provider_batch_id"]
            if provider_id is None:
                if self.store.submitting_elsewhere(batch_id):
                    entries = self.store.batch_entries(batch_id)
                    waiting.update((key, batch_id) for key, _ in entries)
                    self.emit(f"{name}: batch {batch_id} is being submitted by another build: {len(entries)} requests")
                    continue
                # Its submit may have returned (or its build died) since the batches were read.
                provider_id = self.store.batch(batch_id)["provider_batch_id"]
            if provider_id is None:
                found = functools.partial(
                    self.client.find,
                    batch_id,
                    float(str(batch["submitted_at"])),
                    int(str(batch["n_requests"])),
                    known_ids,
                )
                provider_id = self.call(found)
                if provider_id is None:
                    self.store.update_batch(batch_id, state="abandoned", error="not found at the provider")
                    self.emit(f"{name}: batch {batch_id} never reached the provider; its requests are sent again")
                    continue
                known_ids.add(provider_id)
                self.store.update_batch(batch_id, provider_batch_id=provider_id, state="submitted")
                self.emit(f"{name}: found batch {batch_id} at the provider ({provider_id}); not submitting it again")
            state = self.call(functools.partial(self.client.state, str(provider_id)))
            counts = {
                "n_succeeded": state.succeeded, "n_errored": state.errored, "n_expired": state.expired,
                "n_canceled": state.canceled,
            }  # fmt: skip
            self.store.update_batch(batch_id, provider_state=state.provider_state, error=state.error, **counts)
            entries = self.store.batch_entries(batch_id)
            if not state.ended:
                waiting.update((key, batch_id) for key, _ in entries)
                self.emit(
                    f"{name}: batch {batch_id} ({provider_id}) is {state.provider_state}: {len(entries)} requests"
                )
                continue
            self._store_results(batch_id, state, entries)
        return waiting

    def _store_results(self, batch_id: str, state: BatchState, entries: list[tuple[str, str]]) -> None:
        rows = {key: json.loads(row) for key, row in entries}
        provider_id, provider_state = state.provider_batch_id, state.provider_state
        results: dict[str, BatchResult] = {}
        if not state.failed:
            for result in self.call(lambda: list(self.client.results(state, list(rows)))):
                if result.request_key in rows:
                    results.setdefault(result.request_key, result)
        total = 0.0
        kinds: dict[str, int] = {}
        for key, row in rows.items():
            result = results.get(key) or BatchResult(key, None, "missing", f"no result in a {provider_state} batch")
            stored = self.response(row, key, result, batch_id)
            self.store.put(stored)
            total += stored.cost_usd or 0.0
            kinds[result.kind] = kinds.get(result.kind, 0) + 1
        self.store.update_batch(
            batch_id,
            state="failed" if state.failed else "collected",
            n_succeeded=kinds.get("succeeded", 0),
            n_errored=kinds.get("errored", 0) + kinds.get("missing", 0),
            n_expired=kinds.get("expired", 0),
            n_canceled=kinds.get("canceled", 0),
            cost_usd=total,
        )
        summary = ", ".join(f"{n} {kind}" for kind, n in sorted(kinds.items()))
        self.emit(f"{self.system.name}: batch {batch_id} ({provider_id}) {provider_state}: stored {summary}")

    def response(self, row: dict[str, Any], key: str, result: BatchResult, batch_id: str) -> StoredResponse:
        """A batch result as a response row: priced at the batch price; an unanswered request
        is an error (refused ones marked rejected, the rest sent again by a later build)."""
        base = replace(row_response(row, self.system, "error", key), attempts=1, batch_id=batch_id)
        if result.completion is not None:
            return within_reply_budget(completed(base, result.completion, self.work.prices, batch=True))
        finish = REJECTED if result.rejected else f"batch_{result.kind}"
        return replace(base, error=self.system.scrub(result.error or result.kind)[:2000], finish_reason=finish)

    def walk(self, conversations: list[Conversation], waiting: dict[str, str]) -> list[Outcome]:
        """Every row's outcome: stored, waiting in a batch, or submitted now."""
        work = self.work
        outcomes: list[Outcome] = []
        to_submit: dict[str, Request] = {}
        for conversation in conversations:
            answers: list[str] = []
            for index, row in enumerate(conversation.rows):
                request = work.turn_request(row, answers)
                if request.key not in work.known:
                    work.known.update(self.store.final([request.key], work.retry_errors))
                stored = work.known.get(request.key)
                if stored is not None:
                    outcomes.append(({**row, "system": work.report_as}, stored))
                    answers.append(work.answer_of(stored, row))
                    continue
                if request.key not in waiting:
                    to_submit.setdefault(request.key, request)
                outcomes.append(({**row, "system": work.report_as}, self.pending(row, request.key)))
                later = conversation.rows[index + 1 :]
                outcomes.extend(({**r, "system": work.report_as}, self.pending(r, None)) for r in later)
                break
        waiting = {**waiting, **self.submit(list(to_submit.values()))}
        refused = self.store.get(self.refused)
        return [
            (row, refused.get(stored.request_key) or replace(stored, batch_id=waiting.get(stored.request_key)))
            if stored.status == BATCH_PENDING
            else (row, stored)
            for row, stored in outcomes
        ]

    def pending(self, row: dict[str, Any], key: str | None) -> StoredResponse:
        """A row waiting in a batch (key: its request; None: waiting for an earlier turn)."""
        return row_response(row, self.system, BATCH_PENDING, key)

    def chunks(self, requests: list[Request]) -> list[list[Request]]:
        """Requests split under the provider's limits per batch (count and bytes)."""
        api = self.system.kind.batch
        assert api is not None
        max_requests = int(self.system.options.get("batch_max_requests") or api.max_requests)
        max_bytes = api.max_bytes
        out: list[list[Request]] = []
        size = 0
        for request in requests:
            grows = body_size(request)
            if not out or len(out[-1]) >= max_requests or size + grows > max_bytes:
                out.append([])
                size = 0
            out[-1].append(request)
            size += grows
        return out

    def submit(self, requests: list[Request]) -> dict[str, str]:
        """Submit requests in as many batches as the limits need; the batch id of each key."""
        name = self.system.name
        batch_of: dict[str, str] = {}
        for chunk in self.chunks(requests):
            batch_id = uuid.uuid4().hex[:16]
            entries = [(r.key, json.dumps({f: r.row[f] for f in ROW_FIELDS}, default=str)) for r in chunk]
            taken = self.store.record_batch(batch_id, name, self.system.provider, entries)
            held = {key: taken[key] for key, _ in entries if key in taken}
            if held:
                batch_of.update(held)
                self.emit(f"{name}: {len(held)} request(s) are already in a batch another build just submitted")
                chunk = [r for r in chunk if r.key not in held]
                if not chunk:
                    continue
            try:
                self._submit(batch_id, chunk)
            finally:
                self.store.end_submit(batch_id)
            batch_of.update((r.key, batch_id) for r in chunk)
        return batch_of

    def _submit(self, batch_id: str, chunk: list[Request]) -> None:
        """One recorded batch to the provider; its id (or the refusal) stored."""
        name = self.system.name
        try:
            # Never retried here: a submit that timed out may have created the batch, and
            # the next build's find() tells.
            provider_id = self.client.call(functools.partial(self.client.submit, batch_id, chunk))
        except RetryableError as exc:
            self.emit(
                f"WARNING: {name}: submitting batch {batch_id} failed ({self.system.scrub(str(exc))}); "
                "the next build looks for it at the provider before sending its requests again"
            )
            return
        except PermanentError as exc:
            message = self.system.scrub(str(exc))
            self.store.update_batch(batch_id, state="failed", error=message[:2000])
            for request in chunk:
                self.refused.add(request.key)
                result = BatchResult(request.key, None, "errored", message, isinstance(exc, RejectedError))
                self.store.put(self.response(request.row, request.key, result, batch_id))
            self.emit(f"WARNING: {name}: the provider refused batch {batch_id}: {message}")
            return
        self.store.update_batch(batch_id, provider_batch_id=provider_id, state="submitted", provider_state="submitted")
        self.emit(
            f"{name}: submitted batch {batch_id} ({provider_id}) of {len(chunk)} request(s); "
            "a later build collects it (`loft batches` lists batches)"
        )

    def close(self) -> None:
        self.client.close()
