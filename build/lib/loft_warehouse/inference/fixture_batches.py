"""The fixture's three batch protocols: OpenAI's Batch API (file upload, create, poll, output
and error files), Gemini's batch mode (inlined requests, a long-running batch operation) and
Anthropic's Message Batches (create, poll, JSONL results).

A batch the fixture accepts stays in progress until the test (or `POST /loft-fixture/batches`)
completes or expires it; each request then gets the answer its synchronous endpoint would give,
unless `FixtureState.batch_outcome` says it errored, was invalid or expired. A create can be
held open for `batch_accept_delay_s` before the batch exists (a slow upload: the provider knows
nothing yet) and for `batch_create_delay_s` after, so a test can kill the caller between the
provider accepting a batch and the caller learning its id.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol


class FixtureState(Protocol):
    """What the batch endpoints read and change of the fixture server's state (fixture_server.FixtureState)."""

    lock: threading.Lock
    batches: dict[str, FixtureBatch]
    files: dict[str, bytes]
    batch_accept_delay_s: float
    batch_create_delay_s: float
    batch_outcome: Callable[[str], str | None] | None


# What batch_outcome may say of a request (None: answered like a synchronous request).
BATCH_OUTCOMES = ("errored", "invalid", "expired")


@dataclass
class FixtureBatch:
    """One accepted batch: its requests by custom id, in submission order."""

    api: str
    id: str
    created_at: float
    requests: list[tuple[str, dict[str, Any]]]
    label: str = ""
    model: str = ""
    state: str = "in_progress"
    results: dict[str, tuple[str, Any]] = field(default_factory=dict)
    polls: int = 0


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat().replace("+00:00", "Z")


def register(state: FixtureState, api: str, requests: list[tuple[str, dict[str, Any]]], **extra: Any) -> FixtureBatch:
    """Accept a batch after batch_accept_delay_s, then hold the reply for batch_create_delay_s
    (the batch exists already)."""
    if state.batch_accept_delay_s:
        time.sleep(state.batch_accept_delay_s)
    prefix = {"openai": "batch_", "anthropic": "msgbatch_", "gemini": "batches/"}[api]
    batch = FixtureBatch(api, f"{prefix}{uuid.uuid4().hex[:20]}", time.time(), requests, **extra)
    with state.lock:
        state.batches[batch.id] = batch
    if state.batch_create_delay_s:
        time.sleep(state.batch_create_delay_s)
    return batch


def _counts(batch: FixtureBatch) -> dict[str, int]:
    kinds = [kind for kind, _ in batch.results.values()]
    return {
        "processing": len(batch.requests) - len(kinds),
        "succeeded": kinds.count("succeeded"),
        "errored": kinds.count("errored") + kinds.count("invalid"),
        "expired": kinds.count("expired"),
        "canceled": 0,
    }


# OpenAI ------------------------------------------------------------------------------------


def openai_upload(state: FixtureState, content_type: str, data: bytes) -> dict[str, Any]:
    """POST /v1/files (multipart): keep the uploaded JSONL under a new file id."""
    boundary = content_type.split("boundary=", 1)[1].strip('"').encode()
    content = b""
    for part in data.split(b"--" + boundary):
        head, _, body = part.partition(b"\r\n\r\n")
        if b'name="file"' in head:
            content = body.removesuffix(b"\r\n")
    file_id = f"file-{uuid.uuid4().hex[:20]}"
    with state.lock:
        state.files[file_id] = content
    return {"id": file_id, "object": "file", "bytes": len(content), "created_at": int(time.time()),
            "filename": "batch.jsonl", "purpose": "batch", "status": "processed"}  # fmt: skip


def openai_create(state: FixtureState, body: dict[str, Any]) -> dict[str, Any]:
    """POST /v1/batches: the uploaded file's lines become the batch's requests."""
    with state.lock:
        content = state.files[body["input_file_id"]]
    # JSONL lines end at "\n" only: str.splitlines() would also cut at U+2028 and friends,
    # which JSON leaves unescaped inside strings.
    lines = [json.loads(line) for line in content.decode("utf-8").split("\n") if line.strip()]
    batch = register(state, "openai", [(line["custom_id"], line["body"]) for line in lines],
                     label=json.dumps(body.get("metadata") or {}))  # fmt: skip
    return openai_batch(state, batch)


def openai_batch(state: FixtureState, batch: FixtureBatch) -> dict[str, Any]:
    """The Batch object; an ended batch has its output and error files written once."""
    counts = _counts(batch)
    status = {"in_progress": "in_progress", "ended": "completed", "expired": "expired"}[batch.state]
    output_id = error_id = None
    if batch.state != "in_progress":
        output_id, error_id = f"file-out-{batch.id}", f"file-err-{batch.id}"
        with state.lock:
            if output_id not in state.files:
                state.files[output_id], state.files[error_id] = _openai_files(batch)
    return {
        "id": batch.id,
        "object": "batch",
        "endpoint": "/v1/chat/completions",
        "errors": None,
        "input_file_id": "file-input",
        "completion_window": "24h",
        "status": status,
        "output_file_id": output_id,
        "error_file_id": error_id,
        "created_at": int(batch.created_at),
        "request_counts": {
            "total": len(batch.requests),
            "completed": counts["succeeded"],
            "failed": counts["errored"] + counts["expired"],
        },
        "metadata": json.loads(batch.label or "{}"),
    }


def _openai_files(batch: FixtureBatch) -> tuple[bytes, bytes]:
    output, errors = [], []
    for custom_id, (kind, reply) in batch.results.items():
        line: dict[str, Any] = {"id": f"batch_req_{uuid.uuid4().hex[:12]}", "custom_id": custom_id}
        if kind == "succeeded":
            output.append({**line, "response": {"status_code": 200, "request_id": "r", "body": reply}, "error": None})
        elif kind == "expired":
            error = {"code": "batch_expired", "message": "This request could not be executed before the batch expired."}
            errors.append({**line, "response": None, "error": error})
        else:
            code = 400 if kind == "invalid" else 500
            body = {"error": {"message": f"fixture batch request {kind}", "type": "invalid_request_error"}}
            errors.append({**line, "response": {"status_code": code, "request_id": "r", "body": body}, "error": None})
    # Unescaped non-ASCII, as a provider may write it (U+2028 included).
    return tuple(
        "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in rows).encode("utf-8") for rows in (output, errors)
    )  # type: ignore[return-value]


# Anthropic ---------------------------------------------------------------------------------


def anthropic_create(state: FixtureState, body: dict[str, Any]) -> FixtureBatch:
    """POST /v1/messages/batches."""
    return register(state, "anthropic", [(r["custom_id"], r["params"]) for r in body.get("requests", [])])


def anthropic_batch(batch: FixtureBatch, base_url: str) -> dict[str, Any]:
    ended = batch.state != "in_progress"
    return {
        "id": batch.id,
        "type": "message_batch",
        "processing_status": "ended" if ended else "in_progress",
        "request_counts": _counts(batch),
        "created_at": _iso(batch.created_at),
        "expires_at": _iso(batch.created_at + 86400),
        "ended_at": _iso(time.time()) if ended else None,
        "archived_at": None,
        "cancel_initiated_at": None,
        "results_url": f"{base_url}/v1/messages/batches/{batch.id}/results" if ended else None,
    }


def anthropic_results(batch: FixtureBatch) -> bytes:
    lines = []
    for custom_id, (kind, reply) in batch.results.items():
        if kind == "succeeded":
            result: dict[str, Any] = {"type": "succeeded", "message": reply}
        elif kind == "expired":
            result = {"type": "expired"}
        else:
            error_type = "invalid_request_error" if kind == "invalid" else "api_error"
            error = {"type": error_type, "message": f"fixture {kind}"}
            result = {"type": "errored", "error": {"type": "error", "error": error}}
        lines.append(json.dumps({"custom_id": custom_id, "result": result}, ensure_ascii=False) + "\n")
    return "".join(lines).encode("utf-8")


# Gemini ------------------------------------------------------------------------------------


def gemini_create(state: FixtureState, model: str, body: dict[str, Any]) -> FixtureBatch:
    """POST models/{model}:batchGenerateContent with inlined requests (each with its metadata)."""
    batch_body = body.get("batch") or {}
    inlined = (((batch_body.get("inputConfig") or {}).get("requests") or {}).get("requests")) or []
    requests = [(json.dumps(item.get("metadata") or {}), item.get("request") or {}) for item in inlined]
    return register(state, "gemini", requests, label=batch_body.get("displayName") or "", model=model)


def gemini_operation(batch: FixtureBatch) -> dict[str, Any]:
    """The batch as its long-running operation; an ended one carries its inlined responses."""
    state = {"in_progress": "BATCH_STATE_RUNNING", "ended": "BATCH_STATE_SUCCEEDED",
             "expired": "BATCH_STATE_EXPIRED"}[batch.state]  # fmt: skip
    metadata: dict[str, Any] = {
        "@type": "type.googleapis.com/google.ai.generativelanguage.v1beta.GenerateContentBatch",
        "model": f"models/{batch.model}",
        "displayName": batch.label,
        "createTime": _iso(batch.created_at),
        "state": state,
        "name": batch.id,
    }
    operation: dict[str, Any] = {"name": batch.id, "metadata": metadata}
    if batch.state == "ended":
        responses = []
        for custom_id, (kind, reply) in batch.results.items():
            item: dict[str, Any] = {"metadata": json.loads(custom_id)}
            if kind == "succeeded":
                item["response"] = reply
            else:
                code = {"invalid": 3, "expired": 4}.get(kind, 13)
                item["error"] = {"code": code, "message": f"fixture {kind}"}
            responses.append(item)
        metadata["output"] = {"inlinedResponses": {"inlinedResponses": responses}}
        metadata["endTime"] = _iso(time.time())
        operation["done"] = True
    elif batch.state == "expired":
        operation["done"] = True
    return operation
