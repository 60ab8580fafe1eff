"""The three providers' batch APIs behind one small interface: submit, find, state, results.

Each request is submitted under its request key (OpenAI custom_id, Anthropic custom_id, Gemini
request metadata), so results map back to keys whatever order they come in. `find` looks a
batch up at the provider by the warehouse's own batch id (OpenAI metadata, Gemini display
name; Anthropic batches carry no label, so one created just after the intent was stored with
the same number of requests, and not already known, is taken): a build killed between the
provider accepting a batch and the store recording its id finds it instead of paying twice.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from loft_warehouse.inference.media import encoded_size
from loft_warehouse.inference.providers.base import Completion, PermanentError, Request, RetryableError
from loft_warehouse.inference.systems import System

# How far the provider's clock and ours may disagree when an unlabelled batch is looked up.
FIND_SLACK_S = 120.0
T = TypeVar("T")


@dataclass(frozen=True)
class BatchState:
    """What the provider says of a batch: its id and own state word, whether processing ended,
    whether the whole batch failed, its request counts, and the object the provider returned
    (`handle`: its output file ids or inlined results, read by results() without asking again)."""

    provider_batch_id: str
    provider_state: str
    ended: bool
    failed: bool = False
    succeeded: int | None = None
    errored: int | None = None
    expired: int | None = None
    canceled: int | None = None
    error: str | None = None
    handle: Any = None


@dataclass(frozen=True)
class BatchResult:
    """One request's outcome in an ended batch: a completion, or an error (kind errored,
    expired, canceled; rejected marks a request the provider refused as invalid)."""

    request_key: str
    completion: Completion | None
    kind: str
    error: str | None = None
    rejected: bool = False


class BatchClient(Protocol):
    """A provider's batch API; call() runs one of its operations with the provider's own
    mapping of errors (retryable, refused, other)."""

    def call(self, action: Callable[[], T]) -> T: ...

    def submit(self, batch_id: str, requests: list[Request]) -> str: ...

    def find(self, batch_id: str, submitted_at: float, n_requests: int, known: set[str]) -> str | None: ...

    def state(self, provider_batch_id: str) -> BatchState: ...

    def results(self, state: BatchState, keys: list[str]) -> Iterator[BatchResult]: ...

    def close(self) -> None: ...


def body_size(request: Request) -> int:
    """Bytes a request adds to a batch (its text and its media as base64; framing is small
    beside a corpus)."""
    media = sum(encoded_size(m["content"], request.media) for m in request.messages)
    return sum(len(m["content"].encode("utf-8")) for m in request.messages) + media + 512


class OpenAIBatches:
    """Batch API: the requests as a JSONL file, then a batch over it; results from its output
    and error files."""

    def __init__(self, system: System) -> None:
        from loft_warehouse.inference.providers.openai_chat import OpenAIChatProvider

        self.chat = OpenAIChatProvider(system)
        self.client = self.chat.client

    def call(self, action: Callable[[], T]) -> T:
        return self.chat._call(action)

    def submit(self, batch_id: str, requests: list[Request]) -> str:
        from loft_warehouse.inference.providers.openai_chat import chat_messages

        lines = [
            json.dumps({
                "custom_id": r.key,
                "method": "POST",
                "url": "/v1/chat/completions",
                "body": {"model": self.chat.system.model, "messages": chat_messages(r), **self.chat._settings()},
            })
            for r in requests
        ]  # fmt: skip
        data = ("\n".join(lines) + "\n").encode("utf-8")
        upload = self.client.files.create(file=(f"loft-{batch_id}.jsonl", data), purpose="batch")
        batch = self.client.batches.create(
            input_file_id=upload.id,
            endpoint="/v1/chat/completions",
            completion_window="24h",
            metadata={"loft_batch_id": batch_id},
        )
        return batch.id

    def find(self, batch_id: str, submitted_at: float, n_requests: int, known: set[str]) -> str | None:
        for batch in self.client.batches.list(limit=100):
            if (batch.metadata or {}).get("loft_batch_id") == batch_id:
                return batch.id
        return None

    def state(self, provider_batch_id: str) -> BatchState:
        batch = self.client.batches.retrieve(provider_batch_id)
        counts = batch.request_counts
        errors = "; ".join(e.message or "" for e in (batch.errors.data or [])) if batch.errors else None
        return BatchState(
            provider_batch_id,
            batch.status,
            ended=batch.status in ("completed", "failed", "expired", "cancelled"),
            failed=batch.status == "failed",
            succeeded=counts.completed if counts else None,
            errored=counts.failed if counts else None,
            error=errors or None,
            handle=batch,
        )

    def results(self, state: BatchState, keys: list[str]) -> Iterator[BatchResult]:
        from openai.types.chat import ChatCompletion

        from loft_warehouse.inference.providers.openai_chat import _completion

        batch = state.handle
        for file_id in (batch.output_file_id, batch.error_file_id):
            if not file_id:
                continue
            # Lines end at "\n" only (str.splitlines() also cuts at U+2028 inside a string).
            for line in self.client.files.content(file_id).text.split("\n"):
                if not line.strip():
                    continue
                item = json.loads(line)
                key = item["custom_id"]
                response, error = item.get("response"), item.get("error")
                if response and response.get("status_code") == 200:
                    try:
                        completion = _completion(ChatCompletion.model_validate(response["body"]))
                    except (PermanentError, ValueError, TypeError) as exc:
                        yield BatchResult(key, None, "errored", f"{type(exc).__name__}: {exc}"[:500])
                        continue
                    yield BatchResult(key, completion, "succeeded")
                elif error:
                    kind = "expired" if error.get("code") == "batch_expired" else "errored"
                    yield BatchResult(key, None, kind, f"{error.get('code')}: {error.get('message')}")
                else:
                    status = int((response or {}).get("status_code") or 0)
                    message = json.dumps((response or {}).get("body"))[:500]
                    rejected = 400 <= status < 500 and status not in (408, 429)
                    yield BatchResult(key, None, "errored", f"HTTP {status}: {message}", rejected)

    def close(self) -> None:
        self.chat.close()


class AnthropicBatches:
    """Message Batches: every request's Messages body (prefix marked cache_control, so batch
    requests share the cache too) under its key as custom_id."""

    def __init__(self, system: System) -> None:
        from loft_warehouse.inference.providers.anthropic_messages import AnthropicProvider

        self.messages = AnthropicProvider(system)
        self.client = self.messages.client

    def call(self, action: Callable[[], T]) -> T:
        return self.messages._call(action)

    def submit(self, batch_id: str, requests: list[Request]) -> str:
        batch = self.client.messages.batches.create(
            requests=[{"custom_id": r.key, "params": self.messages.params(r)} for r in requests]  # type: ignore[typeddict-item]
        )
        return batch.id

    def find(self, batch_id: str, submitted_at: float, n_requests: int, known: set[str]) -> str | None:
        candidates = []
        for batch in self.client.messages.batches.list(limit=100):
            counts = batch.request_counts
            total = counts.processing + counts.succeeded + counts.errored + counts.canceled + counts.expired
            recent = batch.created_at.timestamp() >= submitted_at - FIND_SLACK_S
            if recent and total == n_requests and batch.id not in known:
                candidates.append(batch.id)
        return candidates[0] if len(candidates) == 1 else None

    def state(self, provider_batch_id: str) -> BatchState:
        batch = self.client.messages.batches.retrieve(provider_batch_id)
        counts = batch.request_counts
        return BatchState(
            provider_batch_id,
            batch.processing_status,
            ended=batch.processing_status == "ended",
            succeeded=counts.succeeded,
            errored=counts.errored,
            expired=counts.expired,
            canceled=counts.canceled,
        )

    def results(self, state: BatchState, keys: list[str]) -> Iterator[BatchResult]:
        from loft_warehouse.inference.providers.anthropic_messages import completion_of

        for item in self.client.messages.batches.results(state.provider_batch_id):
            result = item.result
            if result.type == "succeeded":
                try:
                    yield BatchResult(item.custom_id, completion_of(result.message, None), "succeeded")
                except (PermanentError, ValueError) as exc:
                    yield BatchResult(item.custom_id, None, "errored", str(exc))
            elif result.type == "errored":
                error = result.error.error
                rejected = error.type == "invalid_request_error"
                yield BatchResult(item.custom_id, None, "errored", f"{error.type}: {error.message}", rejected)
            else:
                yield BatchResult(item.custom_id, None, result.type, f"batch request {result.type}")

    def close(self) -> None:
        self.messages.close()


class GeminiBatches:
    """Batch mode with inlined requests, each with its key as metadata; results inlined in the
    finished batch (matched by metadata, else by position)."""

    def __init__(self, system: System) -> None:
        from loft_warehouse.inference.providers.gemini import GeminiProvider

        self.gemini = GeminiProvider(system)
        self.client = self.gemini.client

    def call(self, action: Callable[[], T]) -> T:
        result: T = self.gemini._call(action)
        return result

    def submit(self, batch_id: str, requests: list[Request]) -> str:
        from google.genai import types

        from loft_warehouse.inference.providers.gemini import _contents

        inlined = [
            types.InlinedRequest(
                contents=_contents(list(r.messages), r.media), config=self.gemini._config(None), metadata={"key": r.key}
            )
            for r in requests
        ]
        job = self.client.batches.create(
            model=self.gemini.system.model,
            src=inlined,
            config=types.CreateBatchJobConfig(display_name=f"loft-{batch_id}"),
        )
        if not job.name:
            raise RetryableError("batch created without a name")
        return job.name

    def find(self, batch_id: str, submitted_at: float, n_requests: int, known: set[str]) -> str | None:
        for job in self.client.batches.list():
            if job.display_name == f"loft-{batch_id}" and job.name:
                return job.name
        return None

    def state(self, provider_batch_id: str) -> BatchState:
        job = self.client.batches.get(name=provider_batch_id)
        name = getattr(job.state, "name", None) or str(job.state)
        ended = name in ("JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED", "JOB_STATE_CANCELLED", "JOB_STATE_EXPIRED")
        error = job.error.message if job.error else None
        return BatchState(
            provider_batch_id, name, ended=ended, failed=name == "JOB_STATE_FAILED", error=error, handle=job
        )

    def results(self, state: BatchState, keys: list[str]) -> Iterator[BatchResult]:
        from loft_warehouse.inference.providers.gemini import completion_of

        job = state.handle
        responses = (job.dest.inlined_responses if job.dest else None) or []
        for index, item in enumerate(responses):
            key = (item.metadata or {}).get("key") or (keys[index] if index < len(keys) else None)
            if key is None:
                continue
            if item.response is not None:
                try:
                    yield BatchResult(key, completion_of([item.response], None), "succeeded")
                except (PermanentError, RetryableError) as exc:
                    yield BatchResult(key, None, "errored", str(exc))
            else:
                code = item.error.code if item.error else None
                message = item.error.message if item.error else "no response"
                yield BatchResult(key, None, "errored", f"{code}: {message}", rejected=code == 3)

    def close(self) -> None:
        self.gemini.close()
