"""A local stand-in for the OpenAI, Gemini and Anthropic REST APIs, for tests, benchmarks and dry runs.

It serves `POST /v1/chat/completions` (OpenAI), the Gemini `models/{m}:generateContent`,
`:streamGenerateContent`, `:countTokens` and `cachedContents` endpoints and its resumable file
upload (files a fileData part names, deleted with DELETE), Anthropic's
`POST /v1/messages` (with prompt caching: cache_creation / cache_read usage), each streamed
(SSE) when asked, and the three batch APIs (fixture_batches.py) on 127.0.0.1, so the real
`openai`, `google-genai` and `anthropic` clients run unchanged against it; `GET /loft-fixture`
lets a build tell it is answered by the fixture (its responses then go to their own store) and
`POST /loft-fixture/batches` ({"expire": true} to expire) ends the batches in progress.
Latency and faults are injectable: a queue of faults consumed by generation requests in
arrival order, or a rule that picks a fault from the prompt text (deterministic under
concurrency). Faults: rate_limit (429 with Retry-After), server_error (500), bad_request (400),
timeout (answers after `timeout_sleep_s`), malformed (200 with a broken body), html (200 with
an HTML page), wrong_types (200 with JSON of the wrong shape), retry_after_long (429 asking to
wait an hour), blocked (safety block / content filter / refusal), empty (Gemini: no candidates
and no block reason; OpenAI and Anthropic: empty content that says why it stopped), silent
(empty content with no finish or stop reason), truncated_empty (cut at the output limit before
any text).
A media part (an OpenAI image_url data URL or input_audio, a Gemini inlineData part, an
Anthropic base64 image block) reads as the warehouse's media marker of the bytes it decodes to,
so the prompt an answer rule sees is the marked text that was sent when every part arrived
intact and in order (a Gemini fileData part: the bytes uploaded). Tokens are counted as
whitespace-separated words. OpenAI-style automatic prefix caching is simulated: a prompt
sharing >= 1024 leading words with an earlier one reports the shared
words, rounded down to 128, as cached_tokens.
"""

from __future__ import annotations

import argparse
import base64
import binascii
import functools
import hashlib
import json
import threading
import time
import urllib.parse
import urllib.request
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from loft_warehouse.inference import fixture_batches
from loft_warehouse.inference.fixture_batches import FixtureBatch
from loft_warehouse.prompts import media_markers

IDENTITY_PATH = "/loft-fixture"
GEMINI_UPLOAD_PATH = "/loft-fixture/uploads/"
IDENTITY = {"server": "loft-fixture"}
LOOPBACK = ("127.0.0.1", "localhost", "::1")
FAULTS = ("rate_limit", "server_error", "bad_request", "timeout", "malformed", "blocked", "empty", "silent")
OPENAI_CACHE_MIN_WORDS = 1024
OPENAI_CACHE_BLOCK = 128
# Words of thinking for a requested budget (at most) or effort; billed as output, as each API bills them.
THINKING_WORDS_AT_MOST = 64
THINKING_WORDS_BY_EFFORT = {"minimal": 0, "low": 16, "medium": 32, "high": 64}


def count_words(text: str) -> int:
    """The fixture's token count: whitespace-separated words."""
    return len(text.split())


def default_answer(prompt: str) -> str:
    """Answer that depends on the prompt, so tests can tell responses apart."""
    return f"Final Answer: ['{count_words(prompt) % 97}']"


@dataclass
class Recorded:
    """One request the fixture received."""

    api: str
    method: str
    path: str
    body: dict[str, Any] | None
    headers: dict[str, str]
    fault: str | None = None


@dataclass
class FixtureState:
    """What the server does next and what it has seen; mutate between requests in tests."""

    latency_s: float = 0.0
    timeout_sleep_s: float = 2.0
    retry_after_s: float = 0.01
    answer: Callable[[str], str] = default_answer
    faults: deque[str] = field(default_factory=deque)
    fault_rule: Callable[[str], str | None] | None = None
    requests: list[Recorded] = field(default_factory=list)
    caches: dict[str, str] = field(default_factory=dict)
    deleted_caches: list[str] = field(default_factory=list)
    seen_blocks: set[bytes] = field(default_factory=set)
    anthropic_cache: set[str] = field(default_factory=set)
    files: dict[str, bytes] = field(default_factory=dict)
    gemini_files: dict[str, bytes] = field(default_factory=dict)  # by file id
    gemini_uploads: dict[str, bytearray] = field(default_factory=dict)
    batches: dict[str, FixtureBatch] = field(default_factory=dict)
    batch_accept_delay_s: float = 0.0
    batch_create_delay_s: float = 0.0
    batch_outcome: Callable[[str], str | None] | None = None
    # A model that thinks unasked (Gemini 2.5, OpenAI's reasoning models): words of thinking
    # before each answer when the request sets no thinking of its own.
    thinking_words: int = 0
    in_flight: int = 0
    max_in_flight: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def cached_words(self, prompt: str) -> int:
        """OpenAI-style prefix caching: the longest earlier-seen prefix of whole 128-word blocks
        (at least 1024 words); then this prompt's blocks count as seen."""
        running = hashlib.blake2b(digest_size=16)
        digests: dict[bytes, int] = {}
        for n, word in enumerate(prompt.split(), start=1):
            running.update(word.encode("utf-8") + b" ")
            if n >= OPENAI_CACHE_MIN_WORDS and n % OPENAI_CACHE_BLOCK == 0:
                digests[running.digest()] = n
        with self.lock:
            cached = max((n for d, n in digests.items() if d in self.seen_blocks), default=0)
            self.seen_blocks.update(digests)
        return cached

    def complete_batches(self) -> int:
        """End every batch in progress with its results (see fixture_batches)."""
        return _finish_batches(self)

    def expire_batches(self) -> int:
        """End every batch in progress with every request expired."""
        return _finish_batches(self, expire=True)

    def batch_creates(self) -> list[Recorded]:
        """Batch submissions received, in arrival order (all three APIs)."""
        return [r for r in self.requests if r.api.endswith("_batch_create")]

    def next_fault(self, prompt: str) -> str | None:
        with self.lock:
            if self.faults:
                return self.faults.popleft()
        return self.fault_rule(prompt) if self.fault_rule else None

    def generation_requests(self, api: str | None = None) -> list[Recorded]:
        """Generation calls received (optionally of one API), in arrival order."""
        kinds = {"openai_chat", "gemini_generate", "anthropic_messages"}
        return [r for r in self.requests if r.api in kinds and (api is None or r.api.startswith(api))]


def media_marker(mime_type: str, encoded: str) -> str:
    """A media part as the fixture reads it: the marker of the bytes it decodes to, so a prompt
    that arrived intact and in order reads as the warehouse's marked text, and a part that did
    not (another byte, another place) does not."""
    standard = encoded.replace("-", "+").replace("_", "/")  # google-genai sends URL-safe base64
    try:
        data = base64.b64decode(standard + "=" * (-len(standard) % 4), validate=True)
    except (binascii.Error, ValueError):
        return "<<undecodable media>>"
    return bytes_marker(mime_type, data)


def bytes_marker(mime_type: str, data: bytes) -> str:
    return media_markers.marker(mime_type, hashlib.sha256(data).hexdigest())


def _openai_part_text(part: Any) -> str:
    if not isinstance(part, dict):
        return str(part)
    if part.get("type") == "image_url":
        url = str((part.get("image_url") or {}).get("url") or "")
        head, _, encoded = url.partition(";base64,")
        return media_marker(head.removeprefix("data:"), encoded)
    if part.get("type") == "input_audio":
        audio = part.get("input_audio") or {}
        return media_marker(f"audio/{audio.get('format')}", str(audio.get("data") or ""))
    return str(part.get("text") or "")


def _openai_prompt(body: dict[str, Any]) -> str:
    texts = []
    for message in body.get("messages", []):
        content = message.get("content") or ""
        texts.append("".join(map(_openai_part_text, content)) if isinstance(content, list) else str(content))
    return "".join(texts)


def _gemini_part_text(part: dict[str, Any], files: dict[str, bytes]) -> str:
    inline = part.get("inlineData") or part.get("inline_data")
    if inline:
        return media_marker(str(inline.get("mimeType") or inline.get("mime_type")), str(inline.get("data") or ""))
    uploaded = part.get("fileData") or part.get("file_data")
    if uploaded:
        data = files.get(str(uploaded.get("fileUri") or uploaded.get("file_uri")).rsplit("/", 1)[-1])
        mime_type = str(uploaded.get("mimeType") or uploaded.get("mime_type"))
        return "<<unknown file>>" if data is None else bytes_marker(mime_type, data)
    return str(part.get("text") or "")


def _gemini_text(contents: list[dict[str, Any]] | None, files: dict[str, bytes] | None = None) -> str:
    """A Gemini request's text, media as markers (an uploaded file's: the bytes uploaded)."""
    return "".join(
        _gemini_part_text(part, files or {}) for content in contents or [] for part in content.get("parts", [])
    )


def _anthropic_prompt(body: dict[str, Any]) -> str:
    return "".join(_anthropic_blocks_text(m.get("content")) for m in body.get("messages", []))


def _anthropic_block_text(block: dict[str, Any]) -> str:
    if block.get("type") == "image":
        source = block.get("source") or {}
        return media_marker(str(source.get("media_type")), str(source.get("data") or ""))
    return str(block.get("text") or "")


def _anthropic_blocks_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(_anthropic_block_text(block) for block in content or [])


def thought_text(words: int) -> str:
    """The fixture's thinking: `words` words, never an answer line."""
    return " ".join(["considering"] * words)


def _gemini_thinking(body: dict[str, Any], field: str) -> Any:
    """A field of a Gemini request's thinkingConfig, named in camel case (google-genai writes
    them in snake case, the API takes either)."""
    config = (body.get("generationConfig") or {}).get("thinkingConfig") or {}
    snake = "".join(f"_{c.lower()}" if c.isupper() else c for c in field)
    return config.get(field, config.get(snake))


def _requested_thinking(state: FixtureState, api: str, body: dict[str, Any]) -> int:
    """Words of thinking a request gets: its own budget or effort, else the model's default."""
    if api == "gemini":
        budget = _gemini_thinking(body, "thinkingBudget")
        level = _gemini_thinking(body, "thinkingLevel")
        if budget is not None and budget >= 0:
            return min(int(budget), THINKING_WORDS_AT_MOST)
        if level:
            return THINKING_WORDS_BY_EFFORT.get(str(level).lower(), THINKING_WORDS_AT_MOST)
    elif api == "openai" and body.get("reasoning_effort"):
        return THINKING_WORDS_BY_EFFORT.get(body["reasoning_effort"], THINKING_WORDS_AT_MOST)
    elif api == "anthropic":
        thinking = body.get("thinking") or {}
        if thinking.get("type") != "enabled":
            return 0
        return min(int(thinking.get("budget_tokens") or 0), THINKING_WORDS_AT_MOST)
    return state.thinking_words


def _within_limit(text: str, thinking: int, limit: Any) -> tuple[str, bool]:
    """The answer words left once thinking has spent its share of the output limit (the limit
    counts both), and whether the answer was cut. Without thinking, answers are never cut."""
    if not limit or not thinking:
        return text, False
    words = text.split()
    room = max(int(limit) - thinking, 0)
    return (text, False) if len(words) <= room else (" ".join(words[:room]), True)


def openai_reply(state: FixtureState, body: dict[str, Any], fault: str | None) -> dict[str, Any]:
    """A chat completion for a request body (streamed replies are cut from it)."""
    prompt = _openai_prompt(body)
    cached = state.cached_words(prompt)
    if fault == "blocked":
        content, finish = None, "content_filter"
    elif fault == "empty":
        content, finish = "", "stop"
    elif fault == "silent":
        content, finish = "", None
    elif fault == "truncated_empty":
        content, finish = None, "length"
    else:
        content, finish = state.answer(prompt), "stop"
    thinking = _requested_thinking(state, "openai", body)
    if content:
        content, cut = _within_limit(content, thinking, body.get("max_completion_tokens") or body.get("max_tokens"))
        content, finish = (content or None, "length") if cut else (content, finish)
    prompt_tokens = count_words(prompt)
    output_tokens = count_words(content or "") + thinking
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if thinking and "max_completion_tokens" not in body:
        # A server that takes max_tokens (vLLM, llama.cpp) returns its thinking as text; OpenAI's does not.
        message["reasoning_content"] = thought_text(thinking)
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "fixture"),
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": output_tokens,
            "total_tokens": prompt_tokens + output_tokens,
            "prompt_tokens_details": {"cached_tokens": cached},
            "completion_tokens_details": {"reasoning_tokens": thinking},
        },
    }


def gemini_reply(
    state: FixtureState, model: str, body: dict[str, Any], cached_text: str, fault: str | None
) -> dict[str, Any]:
    """A GenerateContentResponse for a request body (with the text of the cache it names)."""
    prompt = cached_text + _gemini_text(body.get("contents"), state.gemini_files)
    prompt_tokens = count_words(prompt)
    usage: dict[str, Any] = {"promptTokenCount": prompt_tokens}
    if cached_text:
        usage["cachedContentTokenCount"] = count_words(cached_text)
    if fault == "blocked":
        return {
            "promptFeedback": {"blockReason": "SAFETY"},
            "usageMetadata": {**usage, "totalTokenCount": prompt_tokens},
        }
    if fault == "empty":
        return {"candidates": [], "usageMetadata": {**usage, "totalTokenCount": prompt_tokens}}
    if fault == "truncated_empty":
        return {
            "candidates": [{"content": {"role": "model"}, "finishReason": "MAX_TOKENS", "index": 0}],
            "usageMetadata": {**usage, "candidatesTokenCount": 0, "totalTokenCount": prompt_tokens},
        }
    thinking = _requested_thinking(state, "gemini", body)
    config = body.get("generationConfig") or {}
    text, cut = _within_limit(state.answer(prompt), thinking, config.get("maxOutputTokens"))
    output = count_words(text)
    parts: list[dict[str, Any]] = [{"text": text}] if text else []
    if thinking and _gemini_thinking(body, "includeThoughts"):
        parts.insert(0, {"text": thought_text(thinking), "thought": True})
    if thinking:
        usage["thoughtsTokenCount"] = thinking
    content: dict[str, Any] = {"role": "model", "parts": parts} if parts else {"role": "model"}
    return {
        "candidates": [{"content": content, "finishReason": "MAX_TOKENS" if cut else "STOP", "index": 0}],
        # Gemini's total counts thoughts, its candidatesTokenCount does not.
        "usageMetadata": {
            **usage,
            "candidatesTokenCount": output,
            "totalTokenCount": prompt_tokens + output + thinking,
        },
        "modelVersion": model,
    }


def anthropic_reply(state: FixtureState, body: dict[str, Any], fault: str | None) -> dict[str, Any]:
    """A Messages API message; prompt caching simulated: the text up to a block marked
    cache_control is written to the cache the first time and read every later time."""
    cached_prefix = ""
    for message in body.get("messages", []):
        content = message.get("content")
        if isinstance(content, list):
            running = ""
            for block in content:
                running += _anthropic_block_text(block)
                if block.get("cache_control"):
                    cached_prefix = cached_prefix or running
        if cached_prefix:
            break
    prompt = _anthropic_prompt(body)
    written = read = 0
    if cached_prefix:
        digest = hashlib.sha256(cached_prefix.encode("utf-8")).hexdigest()
        with state.lock:
            seen = digest in state.anthropic_cache
            state.anthropic_cache.add(digest)
        if seen:
            read = count_words(cached_prefix)
        else:
            written = count_words(cached_prefix)
    if fault == "blocked":
        text, stop = "", "refusal"
    elif fault == "truncated_empty":
        text, stop = "", "max_tokens"
    elif fault == "empty":
        text, stop = "", "end_turn"
    elif fault == "silent":
        text, stop = "", None
    else:
        text, stop = state.answer(prompt), "end_turn"
    thinking = _requested_thinking(state, "anthropic", body) if text else 0
    blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    if thinking:
        signature = hashlib.sha256(prompt.encode("utf-8")).hexdigest()[:32]
        blocks.insert(0, {"type": "thinking", "thinking": thought_text(thinking), "signature": signature})
    return {
        "id": f"msg_{uuid.uuid4().hex[:16]}",
        "type": "message",
        "role": "assistant",
        "model": body.get("model", "fixture"),
        "content": blocks,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {
            "input_tokens": count_words(prompt) - written - read,
            "cache_creation_input_tokens": written,
            "cache_read_input_tokens": read,
            "output_tokens": count_words(text) + thinking,
        },
    }


def _halves(text: str) -> list[str]:
    """A text in two streamed pieces (one when it is shorter than two characters)."""
    middle = len(text) // 2
    return [piece for piece in (text[:middle], text[middle:]) if piece]


def _sse(events: list[tuple[str | None, Any]]) -> bytes:
    lines = []
    for name, data in events:
        payload = data if isinstance(data, str) else json.dumps(data)
        lines.append((f"event: {name}\n" if name else "") + f"data: {payload}\n\n")
    return "".join(lines).encode("utf-8")


def sse_openai(reply: dict[str, Any]) -> bytes:
    """A chat completion as the chunks of a stream with include_usage."""
    choice = reply["choices"][0]
    base = {k: reply[k] for k in ("id", "created", "model")} | {"object": "chat.completion.chunk"}
    deltas = [{"reasoning_content": piece} for piece in _halves(choice["message"].get("reasoning_content") or "")]
    deltas += [{"content": piece} for piece in _halves(choice["message"]["content"] or "")]
    events: list[tuple[str | None, Any]] = [
        (None, {**base, "choices": [{"index": 0, "delta": {"role": "assistant", **delta}, "finish_reason": None}]})
        for delta in deltas
    ]
    events.append((None, {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}]}))
    events.append((None, {**base, "choices": [], "usage": reply["usage"]}))
    events.append((None, "[DONE]"))
    return _sse(events)


def sse_gemini(reply: dict[str, Any]) -> bytes:
    """A GenerateContentResponse as streamed chunks: the text in two, usage and finish last."""
    candidates = reply.get("candidates")
    if not candidates or not candidates[0].get("content", {}).get("parts"):
        return _sse([(None, reply)])
    candidate = candidates[0]
    parts = candidate["content"]["parts"]
    events: list[tuple[str | None, Any]] = [
        (None, {"candidates": [{"content": {"role": "model", "parts": [part]}, "index": 0}]})
        for part in parts
        if part.get("thought")
    ]
    answer = next((part["text"] for part in parts if not part.get("thought")), "")
    pieces = _halves(answer) or [""]
    for index, piece in enumerate(pieces):
        chunk: dict[str, Any] = {"candidates": [{"content": {"role": "model", "parts": [{"text": piece}]}, "index": 0}]}
        if index == len(pieces) - 1:
            chunk["candidates"][0]["finishReason"] = candidate["finishReason"]
            chunk["usageMetadata"] = reply["usageMetadata"]
            chunk["modelVersion"] = reply.get("modelVersion")
        events.append((None, chunk))
    return _sse(events)


def sse_anthropic(reply: dict[str, Any]) -> bytes:
    """A message as the Messages streaming events."""
    usage = reply["usage"]
    start = {**reply, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 1}}
    events: list[tuple[str | None, Any]] = [("message_start", {"type": "message_start", "message": start})]
    for index, block in enumerate(reply["content"]):
        if block["type"] == "thinking":
            opened = {"type": "thinking", "thinking": "", "signature": ""}
            deltas = [{"type": "thinking_delta", "thinking": piece} for piece in _halves(block["thinking"])]
            deltas.append({"type": "signature_delta", "signature": block["signature"]})
        else:
            opened = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": piece} for piece in _halves(block["text"])]
        events.append(("content_block_start", {"type": "content_block_start", "index": index, "content_block": opened}))
        events.extend(("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta})
                      for delta in deltas)  # fmt: skip
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    events.append((
        "message_delta",
        {"type": "message_delta", "delta": {"stop_reason": reply["stop_reason"], "stop_sequence": None},
         "usage": {"output_tokens": usage["output_tokens"]}},
    ))  # fmt: skip
    events.append(("message_stop", {"type": "message_stop"}))
    return _sse(events)


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        return

    def _raw(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _body(self) -> dict[str, Any] | None:
        raw = self._raw()
        return json.loads(raw) if raw else None

    def _not_found(self, path: str) -> None:
        self._send(404, {"error": {"code": 404, "message": f"no route {path}", "status": "NOT_FOUND"}})

    def _batch(self, batch_id: str) -> FixtureBatch | None:
        state = self.server.state
        with state.lock:
            batch = state.batches.get(batch_id)
            if batch is not None:
                batch.polls += 1
        return batch

    def _base_url(self) -> str:
        return f"http://{self.headers.get('Host') or '127.0.0.1'}"

    def _send(
        self, status: int, payload: Any, headers: dict[str, str] | None = None, content_type: str = "application/json"
    ) -> None:
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _record(self, api: str, body: dict[str, Any] | None, fault: str | None = None) -> None:
        state = self.server.state
        with state.lock:
            state.requests.append(
                Recorded(
                    api,
                    self.command,
                    self.path,
                    body,
                    {k.lower(): v for k, v in self.headers.items()},
                    fault,
                )
            )

    def _wait(self, seconds: float) -> None:
        """The injected latency, counting how many generation requests wait at once."""
        state = self.server.state
        with state.lock:
            state.in_flight += 1
            state.max_in_flight = max(state.max_in_flight, state.in_flight)
        time.sleep(seconds)
        with state.lock:
            state.in_flight -= 1

    def _fault_response(self, fault: str, api: str) -> bool:
        """Send a transport-level fault; True when the request is answered."""
        state = self.server.state
        if fault == "rate_limit":
            status = "RESOURCE_EXHAUSTED" if api == "gemini" else "rate_limit_exceeded"
            self._send(
                429,
                {"error": {"code": 429, "message": "rate limited by fixture", "status": status}},
                {"Retry-After": f"{state.retry_after_s:g}"},
            )
            return True
        if fault == "server_error":
            self._send(500, {"error": {"code": 500, "message": "fixture failure", "status": "INTERNAL"}})
            return True
        if fault == "bad_request":
            error = {"code": 400, "message": "fixture rejects this", "status": "INVALID_ARGUMENT"}
            self._send(400, {"error": error})
            return True
        if fault == "malformed":
            self._send(200, b'{"choices": [ {"broken')
            return True
        if fault == "html":
            self._send(200, b"<html><body><h1>502 Bad Gateway</h1></body></html>", content_type="text/html")
            return True
        if fault == "wrong_types":
            key = "candidates" if api == "gemini" else "choices"
            self._send(200, {key: "not a list", "usageMetadata": 7, "usage": "none"})
            return True
        if fault == "retry_after_long":
            error = {"code": 429, "message": "come back in an hour", "status": "RESOURCE_EXHAUSTED"}
            self._send(429, {"error": error}, {"Retry-After": "3600"})
            return True
        if fault == "timeout":
            time.sleep(state.timeout_sleep_s)
        return False

    def do_GET(self) -> None:  # noqa: N802 - stdlib name
        path = self.path.split("?", 1)[0]
        state = self.server.state
        if path == IDENTITY_PATH:
            self._send(200, IDENTITY)
            return
        self._record("batch_get", None)
        with state.lock:
            batches = list(state.batches.values())
        gemini = "x-goog-api-key" in self.headers or "x-goog-api-client" in self.headers
        if path == "/v1/batches" and not gemini:
            data = [fixture_batches.openai_batch(state, b) for b in batches if b.api == "openai"][::-1]
            self._send(200, {"object": "list", "data": data, "has_more": False})
        elif path.startswith("/v1/batches/") and (batch := self._batch(path.rsplit("/", 1)[1])):
            self._send(200, fixture_batches.openai_batch(state, batch))
        elif path.startswith("/v1/files/") and path.endswith("/content"):
            with state.lock:
                content = state.files.get(path.split("/")[3])
            if content is None:
                self._not_found(path)
            else:
                self._send(200, content, content_type="application/octet-stream")
        elif path == "/v1/messages/batches":
            data = [fixture_batches.anthropic_batch(b, self._base_url()) for b in batches if b.api == "anthropic"]
            self._send(200, {"data": data[::-1], "has_more": False, "first_id": None, "last_id": None})
        elif path.startswith("/v1/messages/batches/") and path.endswith("/results"):
            batch = self._batch(path.split("/")[4])
            if batch is None or batch.state == "in_progress":
                self._not_found(path)
            else:
                self._send(200, fixture_batches.anthropic_results(batch), content_type="application/x-jsonl")
        elif path.startswith("/v1/messages/batches/") and (batch := self._batch(path.rsplit("/", 1)[1])):
            self._send(200, fixture_batches.anthropic_batch(batch, self._base_url()))
        elif path.endswith("/batches"):
            operations = [fixture_batches.gemini_operation(b) for b in batches if b.api == "gemini"]
            self._send(200, {"operations": operations[::-1]})
        elif "/batches/" in path and (batch := self._batch("batches/" + path.rsplit("/", 1)[1])):
            self._send(200, fixture_batches.gemini_operation(batch))
        else:
            self._not_found(path)

    def do_POST(self) -> None:  # noqa: N802 - stdlib name
        path = self.path.split("?", 1)[0]
        state = self.server.state
        if (path.startswith("/upload/") and path.endswith("/files")) or path.startswith(GEMINI_UPLOAD_PATH):
            self._gemini_upload(path)
            return
        if path == "/v1/files":
            raw = self._raw()
            self._record("openai_file_upload", None)
            self._send(200, fixture_batches.openai_upload(state, self.headers.get("Content-Type") or "", raw))
            return
        body = self._body() or {}
        if path == IDENTITY_PATH + "/batches":
            ended = state.expire_batches() if body.get("expire") else state.complete_batches()
            self._send(200, {"ended": ended})
        elif path == "/v1/batches":
            self._record("openai_batch_create", body)
            self._send(200, fixture_batches.openai_create(state, body))
        elif path == "/v1/messages/batches":
            self._record("anthropic_batch_create", body)
            batch = fixture_batches.anthropic_create(state, body)
            self._send(200, fixture_batches.anthropic_batch(batch, self._base_url()))
        elif path.endswith(":batchGenerateContent"):
            self._record("gemini_batch_create", body)
            model = path.rsplit("/", 1)[-1].split(":")[0]
            self._send(200, fixture_batches.gemini_operation(fixture_batches.gemini_create(state, model, body)))
        elif path.endswith("/chat/completions"):
            self._openai_chat(body)
        elif path.endswith(":generateContent"):
            self._gemini_generate(path, body)
        elif path.endswith(":streamGenerateContent"):
            self._gemini_generate(path, body, stream=True)
        elif path.endswith("/v1/messages"):
            self._anthropic_messages(body)
        elif path.endswith(":countTokens"):
            self._record("gemini_count", body)
            words = count_words(_gemini_text(body.get("contents"), state.gemini_files))
            self._send(200, {"totalTokens": words})
        elif path.endswith("/cachedContents"):
            self._gemini_create_cache(body)
        else:
            self._record("unknown", body)
            self._send(404, {"error": {"code": 404, "message": f"no route {path}", "status": "NOT_FOUND"}})

    def do_DELETE(self) -> None:  # noqa: N802 - stdlib name
        path = self.path.split("?", 1)[0]
        if "/files/" in path:
            self._record("gemini_file_delete", None)
            with self.server.state.lock:
                found = self.server.state.gemini_files.pop(path.rsplit("/", 1)[-1], None) is not None
            self._send(200 if found else 404, {} if found else {"error": {"code": 404, "message": f"no file {path}"}})
            return
        self._record("gemini_cache_delete", None)
        name = path[path.index("cachedContents/") :] if "cachedContents/" in path else ""
        state = self.server.state
        with state.lock:
            found = state.caches.pop(name, None) is not None
            if found:
                state.deleted_caches.append(name)
        if found:
            self._send(200, {})
        else:
            self._send(404, {"error": {"code": 404, "message": f"no cache {name}", "status": "NOT_FOUND"}})

    def _generate(
        self,
        recorded_as: str,
        body: dict[str, Any],
        prompt: str,
        reply: Callable[[str | None], dict[str, Any]],
        sse: Callable[[dict[str, Any]], bytes],
        stream: bool,
    ) -> None:
        """One generation request of any API: the next fault, the injected latency, then the
        reply (built for the fault) as JSON or as its server-sent events."""
        state = self.server.state
        fault = state.next_fault(prompt)
        self._record(recorded_as, body, fault)
        self._wait(state.latency_s)
        if self._fault_response(fault or "", recorded_as.split("_", 1)[0]):
            return
        if stream:
            self._send(200, sse(reply(fault)), content_type="text/event-stream")
        else:
            self._send(200, reply(fault))

    def _openai_chat(self, body: dict[str, Any]) -> None:
        state = self.server.state
        reply = functools.partial(openai_reply, state, body)
        self._generate("openai_chat", body, _openai_prompt(body), reply, sse_openai, bool(body.get("stream")))

    def _gemini_generate(self, path: str, body: dict[str, Any], stream: bool = False) -> None:
        state = self.server.state
        cache_name = body.get("cachedContent")
        with state.lock:
            cached_text = state.caches.get(cache_name, "") if cache_name else ""
        if cache_name and not cached_text:
            self._record("gemini_generate", body, "unknown_cache")
            error = {"code": 400, "message": f"no cache {cache_name}", "status": "INVALID_ARGUMENT"}
            self._send(400, {"error": error})
            return
        model = path.rsplit("/", 1)[-1].split(":")[0]
        reply = functools.partial(gemini_reply, state, model, body, cached_text)
        prompt = cached_text + _gemini_text(body.get("contents"), state.gemini_files)
        self._generate("gemini_generate", body, prompt, reply, sse_gemini, stream)

    def _anthropic_messages(self, body: dict[str, Any]) -> None:
        state = self.server.state
        reply = functools.partial(anthropic_reply, state, body)
        self._generate(
            "anthropic_messages", body, _anthropic_prompt(body), reply, sse_anthropic, bool(body.get("stream"))
        )

    def _gemini_upload(self, path: str) -> None:
        """Gemini's resumable upload: `start` hands out an upload URL; `upload` appends the
        bytes sent, `finalize` files them under a URI that fileData parts then name."""
        state = self.server.state
        command = (self.headers.get("X-Goog-Upload-Command") or "").lower()
        if "start" in command:
            body = self._body() or {}
            self._record("gemini_file_start", body)
            upload_id = uuid.uuid4().hex[:12]
            with state.lock:
                state.gemini_uploads[upload_id] = bytearray()
            url = f"{self._base_url()}{GEMINI_UPLOAD_PATH}{upload_id}"
            self._send(200, {}, headers={"x-goog-upload-url": url, "x-goog-upload-status": "active"})
            return
        upload_id = path.removeprefix(GEMINI_UPLOAD_PATH)
        data = self._raw()
        self._record("gemini_file_upload", None)
        with state.lock:
            pending = state.gemini_uploads.get(upload_id)
            if pending is None:
                self._not_found(path)
                return
            pending.extend(data)
            if "finalize" not in command:
                self._send(200, {}, headers={"x-goog-upload-status": "active"})
                return
            del state.gemini_uploads[upload_id]
            uri = f"{self._base_url()}/v1beta/files/{upload_id}"
            state.gemini_files[upload_id] = bytes(pending)
        file = {"name": f"files/{upload_id}", "uri": uri, "sizeBytes": str(len(pending)), "state": "ACTIVE"}
        self._send(200, {"file": file}, headers={"x-goog-upload-status": "final"})

    def _gemini_create_cache(self, body: dict[str, Any]) -> None:
        self._record("gemini_cache_create", body)
        state = self.server.state
        text = _gemini_text(body.get("contents"), state.gemini_files)
        name = f"cachedContents/fixture{uuid.uuid4().hex[:10]}"
        with state.lock:
            state.caches[name] = text
        self._send(
            200,
            {
                "name": name,
                "model": body.get("model"),
                "usageMetadata": {"totalTokenCount": count_words(text)},
                "expireTime": "2099-01-01T00:00:00Z",
            },
        )


def is_fixture(endpoint: str | None) -> bool:
    """Whether an endpoint is this fixture (asked on loopback hosts only, never elsewhere)."""
    if not endpoint:
        return False
    url = urllib.parse.urlsplit(endpoint)
    if url.hostname not in LOOPBACK:
        return False
    try:
        with urllib.request.urlopen(f"{url.scheme}://{url.netloc}{IDENTITY_PATH}", timeout=2) as reply:
            return json.loads(reply.read() or b"null") == IDENTITY
    except (OSError, ValueError):
        return False


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that gave up (timeout) leaves a broken pipe: expected, not worth a trace."""

    def __init__(self, state: FixtureState, port: int = 0) -> None:
        super().__init__(("127.0.0.1", port), _Handler)
        self.state = state


class FixtureServer:
    """The fixture on a 127.0.0.1 port (0: an ephemeral one), serving from a background thread."""

    def __init__(self, state: FixtureState | None = None, port: int = 0) -> None:
        self.state = state or FixtureState()
        self._server = _Server(self.state, port)
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def url(self) -> str:
        """Root URL; OpenAI clients use f'{url}/v1', Gemini clients the root."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> FixtureServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> FixtureServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _finish_batches(state: FixtureState, expire: bool = False) -> int:
    """End every batch in progress: each request answered (or errored, invalid or expired as
    batch_outcome says); expire=True expires every request instead. Returns how many ended."""
    with state.lock:
        open_batches = [b for b in state.batches.values() if b.state == "in_progress"]
    for batch in open_batches:
        for custom_id, body in batch.requests:
            prompt = _batch_prompt(batch.api, body, state.gemini_files)
            outcome = "expired" if expire else (state.batch_outcome(prompt) if state.batch_outcome else None)
            if outcome is not None:
                batch.results[custom_id] = (outcome, None)
            elif batch.api == "openai":
                batch.results[custom_id] = ("succeeded", openai_reply(state, body, None))
            elif batch.api == "anthropic":
                batch.results[custom_id] = ("succeeded", anthropic_reply(state, body, None))
            else:
                batch.results[custom_id] = ("succeeded", gemini_reply(state, batch.model, body, "", None))
        batch.state = "expired" if expire else "ended"
    return len(open_batches)


def _batch_prompt(api: str, body: dict[str, Any], gemini_files: dict[str, bytes]) -> str:
    if api == "openai":
        return _openai_prompt(body)
    if api == "anthropic":
        return _anthropic_prompt(body)
    return _gemini_text(body.get("contents"), gemini_files)


def main(argv: list[str] | None = None) -> None:
    """Serve the fixture in the foreground (for a dry-run build pointed at it)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.0, help="seconds per generation request")
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: any free one)")
    args = parser.parse_args(argv)
    server = FixtureServer(FixtureState(latency_s=args.latency), args.port).start()
    print(f"fixture serving on {server.url} (OpenAI base_url {server.url}/v1)", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        server.stop()


if __name__ == "__main__":
    main()
