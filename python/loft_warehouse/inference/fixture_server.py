"""A local stand-in for the OpenAI and Gemini REST APIs, for tests, benchmarks and dry runs.

It serves `POST /v1/chat/completions` (OpenAI) and the Gemini `models/{m}:generateContent`,
`models/{m}:countTokens` and `cachedContents` endpoints on 127.0.0.1, so the real `openai` and
`google-genai` clients run unchanged against it, and `GET /loft-fixture` so a build can tell it
is answered by the fixture (its responses then go to their own store). Latency and faults are injectable: a queue of
faults consumed by generation requests in arrival order, or a rule that picks a fault from the
prompt text (deterministic under concurrency). Faults: rate_limit (429 with Retry-After),
server_error (500), bad_request (400), timeout (answers after `timeout_sleep_s`), malformed (200 with a broken
body), html (200 with an HTML page), wrong_types (200 with JSON of the wrong shape),
retry_after_long (429 asking to wait an hour), blocked (safety block / content filter), empty
(no candidates / empty content), truncated_empty (cut at the output limit before any text).
Tokens are counted as whitespace-separated words. OpenAI-style automatic prefix caching is
simulated: a prompt sharing >= 1024 leading words with an earlier one reports the shared
words, rounded down to 128, as cached_tokens.
"""

from __future__ import annotations

import argparse
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

IDENTITY_PATH = "/loft-fixture"
IDENTITY = {"server": "loft-fixture"}
LOOPBACK = ("127.0.0.1", "localhost", "::1")
FAULTS = ("rate_limit", "server_error", "bad_request", "timeout", "malformed", "blocked", "empty")
OPENAI_CACHE_MIN_WORDS = 1024
OPENAI_CACHE_BLOCK = 128


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

    def next_fault(self, prompt: str) -> str | None:
        with self.lock:
            if self.faults:
                return self.faults.popleft()
        return self.fault_rule(prompt) if self.fault_rule else None

    def generation_requests(self, api: str | None = None) -> list[Recorded]:
        """Generation calls received (optionally of one API), in arrival order."""
        kinds = {"openai_chat", "gemini_generate"}
        return [r for r in self.requests if r.api in kinds and (api is None or r.api.startswith(api))]


def _openai_prompt(body: dict[str, Any]) -> str:
    return "".join(str(m.get("content") or "") for m in body.get("messages", []))


def _gemini_text(contents: list[dict[str, Any]] | None) -> str:
    return "".join(str(part.get("text") or "") for content in contents or [] for part in content.get("parts", []))


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        return

    def _body(self) -> dict[str, Any] | None:
        length = int(self.headers.get("Content-Length") or 0)
        if not length:
            return None
        return json.loads(self.rfile.read(length) or b"null")

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
        if self.path.split("?", 1)[0] == IDENTITY_PATH:
            self._send(200, IDENTITY)
        else:
            self._send(404, {"error": {"code": 404, "message": f"no route {self.path}", "status": "NOT_FOUND"}})

    def do_POST(self) -> None:  # noqa: N802 - stdlib name
        body = self._body() or {}
        path = self.path.split("?", 1)[0]
        if path.endswith("/chat/completions"):
            self._openai_chat(body)
        elif path.endswith(":generateContent"):
            self._gemini_generate(path, body)
        elif path.endswith(":countTokens"):
            self._record("gemini_count", body)
            words = count_words(_gemini_text(body.get("contents")))
            self._send(200, {"totalTokens": words})
        elif path.endswith("/cachedContents"):
            self._gemini_create_cache(body)
        else:
            self._record("unknown", body)
            self._send(404, {"error": {"code": 404, "message": f"no route {path}", "status": "NOT_FOUND"}})

    def do_DELETE(self) -> None:  # noqa: N802 - stdlib name
        path = self.path.split("?", 1)[0]
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

    def _openai_chat(self, body: dict[str, Any]) -> None:
        state = self.server.state
        prompt = _openai_prompt(body)
        fault = state.next_fault(prompt)
        self._record("openai_chat", body, fault)
        self._wait(state.latency_s)
        if self._fault_response(fault or "", "openai"):
            return
        cached = state.cached_words(prompt)
        if fault == "blocked":
            content, finish = None, "content_filter"
        elif fault == "empty":
            content, finish = "", "stop"
        elif fault == "truncated_empty":
            content, finish = None, "length"
        else:
            content, finish = state.answer(prompt), "stop"
        prompt_tokens = count_words(prompt)
        output_tokens = count_words(content or "")
        self._send(
            200,
            {
                "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model", "fixture"),
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": content},
                        "finish_reason": finish,
                    }
                ],
                "usage": {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": output_tokens,
                    "total_tokens": prompt_tokens + output_tokens,
                    "prompt_tokens_details": {"cached_tokens": cached},
                },
            },
        )

    def _gemini_generate(self, path: str, body: dict[str, Any]) -> None:
        state = self.server.state
        cache_name = body.get("cachedContent")
        with state.lock:
            cached_text = state.caches.get(cache_name, "") if cache_name else ""
        if cache_name and not cached_text:
            self._record("gemini_generate", body, "unknown_cache")
            self._send(
                400,
                {
                    "error": {
                        "code": 400,
                        "message": f"no cache {cache_name}",
                        "status": "INVALID_ARGUMENT",
                    }
                },
            )
            return
        prompt = cached_text + _gemini_text(body.get("contents"))
        fault = state.next_fault(prompt)
        self._record("gemini_generate", body, fault)
        self._wait(state.latency_s)
        if self._fault_response(fault or "", "gemini"):
            return
        prompt_tokens = count_words(prompt)
        usage: dict[str, Any] = {"promptTokenCount": prompt_tokens}
        if cached_text:
            usage["cachedContentTokenCount"] = count_words(cached_text)
        if fault == "blocked":
            payload: dict[str, Any] = {
                "promptFeedback": {"blockReason": "SAFETY"},
                "usageMetadata": {**usage, "totalTokenCount": prompt_tokens},
            }
        elif fault == "empty":
            payload = {
                "candidates": [],
                "usageMetadata": {**usage, "totalTokenCount": prompt_tokens},
            }
        elif fault == "truncated_empty":
            payload = {
                "candidates": [{"content": {"role": "model"}, "finishReason": "MAX_TOKENS", "index": 0}],
                "usageMetadata": {**usage, "candidatesTokenCount": 0, "totalTokenCount": prompt_tokens},
            }
        else:
            text = state.answer(prompt)
            output = count_words(text)
            payload = {
                "candidates": [
                    {
                        "content": {"role": "model", "parts": [{"text": text}]},
                        "finishReason": "STOP",
                        "index": 0,
                    }
                ],
                "usageMetadata": {
                    **usage,
                    "candidatesTokenCount": output,
                    "totalTokenCount": prompt_tokens + output,
                },
                "modelVersion": path.rsplit("/", 1)[-1].split(":")[0],
            }
        self._send(200, payload)

    def _gemini_create_cache(self, body: dict[str, Any]) -> None:
        self._record("gemini_cache_create", body)
        state = self.server.state
        text = _gemini_text(body.get("contents"))
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
