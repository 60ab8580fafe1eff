"""Gemini via google-genai, with one explicit context cache per (system, prefix).

A multimodal prompt's media go where its markers stand: as inline data, or as files uploaded
once per run when a call's media exceed `options.inline_media_bytes` (20 MB by default, Gemini's
inline limit); a context cache holds the shared prefix's media too.

A prefix at or above the system's `cache.min_prefix_tokens` is uploaded once as cached content
on first use; every query of that prefix then sends only its own suffix and refers to the cache,
and the usage metadata reports the cached tokens. All caches this provider created are deleted
in close(), after the run (a killed run's caches expire after `cache.ttl_s`). Safety blocks and
empty candidate lists come back as status 'blocked' (scored as incorrect, as in the paper).
"""

from __future__ import annotations

import io
import json
import logging
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

import httpx2
import pydantic
from google import genai
from google.genai import errors, types

from loft_warehouse.errors import ConfigurationError
from loft_warehouse.inference.flow import RetryPolicy, call_with_retries
from loft_warehouse.inference.media import MediaItem, MediaLibrary, encoded_size, pieces_of
from loft_warehouse.inference.providers.base import (
    Completion,
    PermanentError,
    RejectedError,
    Request,
    ResponseBudget,
    RetryableError,
    RunData,
    retry_after_seconds,
    truncated_with_no_text,
)
from loft_warehouse.inference.systems import System

LOG = logging.getLogger(__name__)
BLOCK_FINISH_REASONS = {
    "SAFETY",
    "PROHIBITED_CONTENT",
    "BLOCKLIST",
    "SPII",
    "RECITATION",
    "IMAGE_SAFETY",
}
_ROLES = {"user": "user", "assistant": "model"}
# Gemini takes inline data up to a 20 MB request; larger media go up as files.
INLINE_MEDIA_BYTES = 20_000_000


def _parts(text: str, library: MediaLibrary | None, media: Callable[[MediaItem], types.Part]) -> list[types.Part]:
    """A message's parts: its text, and each media item it names (as `media` sends it), in order."""
    return [types.Part(text=piece) if isinstance(piece, str) else media(piece) for piece in pieces_of(text, library)]


def _inline(item: MediaItem) -> types.Part:
    return types.Part.from_bytes(data=item.data, mime_type=item.mime_type)


def _contents(
    messages: list[dict[str, str]],
    library: MediaLibrary | None = None,
    media: Callable[[MediaItem], types.Part] = _inline,
) -> list[types.Content]:
    return [
        types.Content(role=_ROLES[m["role"]], parts=_parts(m["content"], library, media))
        for m in messages
        if m["content"]
    ]


def _thinking_config(thinking: int | str | None) -> types.ThinkingConfig | None:
    """generation.thinking as Gemini's: a budget (off: 0) or a thinking level, with thought
    summaries asked for whenever it thinks (stored beside the answer, Completion.thought_text)."""
    if thinking is None:
        return None
    if thinking == "off":
        return types.ThinkingConfig(thinking_budget=0)
    if isinstance(thinking, int):
        return types.ThinkingConfig(thinking_budget=thinking, include_thoughts=thinking > 0)
    return types.ThinkingConfig(thinking_level=types.ThinkingLevel(thinking.upper()), include_thoughts=True)


def _enum_name(value: object) -> str | None:
    if value is None:
        return None
    return getattr(value, "name", None) or str(value)


class GeminiProvider:
    """generate_content per request; context caches created once per prefix, shared by threads."""

    def __init__(self, system: System) -> None:
        self.system = system
        # Keep the client referenced: a temporary client is closed before its request is sent.
        self.client = genai.Client(
            api_key=system.api_key(),
            http_options=types.HttpOptions(
                base_url=system.endpoint(),
                timeout=int(system.timeout_s * 1000),
                retry_options=types.HttpRetryOptions(attempts=1),
            ),
        )
        self.min_prefix_tokens = int((system.cache or {}).get("min_prefix_tokens") or 0)
        self.ttl_s = int((system.cache or {}).get("ttl_s") or 3600)
        self.inline_media_bytes = int(system.options.get("inline_media_bytes") or INLINE_MEDIA_BYTES)
        self._files: dict[str, types.File] = {}
        self._file_locks: dict[str, threading.Lock] = {}
        self._caches: dict[str, str | None] = {}
        self._cache_locks: dict[str, threading.Lock] = {}
        self._lock = threading.Lock()

    def _config(self, cache_name: str | None) -> types.GenerateContentConfig:
        generation = self.system.generation
        return types.GenerateContentConfig(
            temperature=generation.get("temperature"),
            top_p=generation.get("top_p"),
            seed=generation.get("seed"),
            max_output_tokens=generation.get("max_output_tokens"),
            stop_sequences=generation.get("stop"),
            cached_content=cache_name,
            thinking_config=_thinking_config(self.system.thinking),
        )

    def _wants_cache(self, request: Request) -> bool:
        n_prefix = int(request.row.get("n_tokens_prefix") or 0)
        return not request.head and bool(self.min_prefix_tokens) and n_prefix >= self.min_prefix_tokens

    def _cache_for(self, request: Request) -> str | None:
        """The cache name for this request's prefix, creating it on first use (None: uncached)."""
        with self._lock:
            if request.prefix_id in self._caches:
                return self._caches[request.prefix_id]
            lock = self._cache_locks.setdefault(request.prefix_id, threading.Lock())
        with lock:
            with self._lock:
                if request.prefix_id in self._caches:
                    return self._caches[request.prefix_id]
            try:
                cache = self._call(
                    lambda: self.client.caches.create(
                        model=self.system.model,
                        config=types.CreateCachedContentConfig(
                            contents=self.contents([{"role": "user", "content": request.prefix}], request.media),
                            display_name=f"loft-{self.system.name}-{request.prefix_id}"[:120],
                            ttl=f"{self.ttl_s}s",
                        ),
                    )
                )
                name = cache.name
            except PermanentError as exc:
                LOG.warning(
                    "%s: no context cache for prefix %s (%s); sending it uncached",
                    self.system.name,
                    request.prefix_id,
                    self.system.scrub(str(exc)),
                )
                name = None
            with self._lock:
                self._caches[request.prefix_id] = name
            return name

    def contents(self, messages: list[dict[str, str]], library: MediaLibrary | None) -> list[types.Content]:
        """The contents of a call: media inline, or, when the call's media (base64) exceed
        `inline_media_bytes`, each item as a file uploaded once per run (Files API)."""
        inline = sum(encoded_size(m["content"], library) for m in messages) <= self.inline_media_bytes
        return _contents(messages, library, _inline if inline else self._file_part)

    def _file_part(self, item: MediaItem) -> types.Part:
        with self._lock:
            lock = self._file_locks.setdefault(item.sha256, threading.Lock())
        with lock:
            if item.sha256 not in self._files:
                self._files[item.sha256] = self._call(
                    lambda: self.client.files.upload(
                        file=io.BytesIO(item.data),
                        config=types.UploadFileConfig(
                            mime_type=item.mime_type, display_name=f"loft-{item.sha256[:16]}"
                        ),
                    )
                )
            uploaded = self._files[item.sha256]
        if uploaded.state is not None and _enum_name(uploaded.state) != "ACTIVE":
            raise RetryableError(f"uploaded file {uploaded.name} is {_enum_name(uploaded.state)}, not ACTIVE yet")
        return types.Part.from_uri(file_uri=str(uploaded.uri), mime_type=item.mime_type)

    def _call(self, action):  # noqa: ANN001, ANN202 - thin error-mapping wrapper
        try:
            return action()
        except errors.APIError as exc:
            code = int(exc.code or 0)
            if code in (408, 429) or code >= 500:
                headers = getattr(getattr(exc, "response", None), "headers", None)
                raise RetryableError(f"HTTP {code}: {exc.message or exc.status}", retry_after_seconds(headers)) from exc
            raise RejectedError(f"HTTP {code}: {exc.message or exc.status}") from exc
        except (httpx2.TimeoutException, httpx2.TransportError) as exc:
            raise RetryableError(f"{type(exc).__name__}: {exc}") from exc
        except (
            json.JSONDecodeError,
            errors.UnknownApiResponseError,
            pydantic.ValidationError,
            AttributeError,
            TypeError,
            ValueError,
        ) as exc:
            raise RetryableError(f"malformed response body: {type(exc).__name__}: {exc}"[:500]) from exc

    def complete(self, request: Request) -> Completion:
        messages = list(request.messages)
        cache_name = self._cache_for(request) if self._wants_cache(request) else None
        if cache_name:
            first = messages[0]
            if not first["content"].startswith(request.prefix):
                raise PermanentError("first message does not start with the prefix it claims")
            messages[0] = {**first, "content": first["content"][len(request.prefix) :]}
        config = self._config(cache_name)
        started = time.monotonic()
        if not self.system.stream:
            response = self._call(
                lambda: self.client.models.generate_content(
                    model=self.system.model, contents=self.contents(messages, request.media), config=config
                )
            )
            return completion_of([response], None)
        chunks, ttft = self._call(
            lambda: _collect(
                self.client.models.generate_content_stream(
                    model=self.system.model, contents=self.contents(messages, request.media), config=config
                ),
                started,
            )
        )
        return completion_of(chunks, ttft)

    def close(self) -> None:
        """Delete every context cache and uploaded file this run created (caches also expire
        after ttl_s, files after 48 hours)."""
        with self._lock:
            names = [n for n in self._caches.values() if n]
            files = [f.name for f in self._files.values() if f.name]
            self._caches.clear()
            self._files.clear()
        for name in names:
            try:
                self.client.caches.delete(name=name)
            except (errors.APIError, httpx2.TransportError) as exc:
                LOG.warning(
                    "%s: could not delete context cache %s: %s", self.system.name, name, self.system.scrub(str(exc))
                )
        for name in files:
            try:
                self.client.files.delete(name=name)
            except (errors.APIError, httpx2.TransportError) as exc:
                LOG.warning("%s: could not delete file %s: %s", self.system.name, name, self.system.scrub(str(exc)))


def _collect(stream: Iterable[types.GenerateContentResponse], started: float) -> tuple[list, float | None]:
    """Every chunk of a streamed generation, and the seconds to the first one with answer text
    (a thought summary is not the answer's first token); a stream over the response budget is cut off."""
    chunks: list[types.GenerateContentResponse] = []
    budget = ResponseBudget()
    ttft = None
    for chunk in stream:
        parts = [p for c in chunk.candidates or [] if c.content for p in c.content.parts or []]
        budget.take(*(p.text for p in parts))
        if ttft is None and any(p.text and not p.thought for p in parts):
            ttft = round(time.monotonic() - started, 6)
        chunks.append(chunk)
    if not chunks:
        raise ValueError("the stream ended without a chunk")
    return chunks, ttft


def completion_of(chunks: list[types.GenerateContentResponse], ttft: float | None) -> Completion:
    """A Completion from a generation's response (one) or streamed chunks (text joined; the
    finish reason and usage of the last chunk that has them). Batch results read the same way."""
    usage = next((c.usage_metadata for c in reversed(chunks) if c.usage_metadata), None)
    # Thoughts are billed at the output rate but not counted in candidates_token_count.
    thoughts = (usage.thoughts_token_count or 0) if usage else None
    usage_fields: dict[str, Any] = {
        "input_tokens": usage.prompt_token_count if usage else None,
        "cached_tokens": (usage.cached_content_token_count or 0) if usage else None,
        "output_tokens": (usage.candidates_token_count or 0) + (thoughts or 0) if usage else None,
        "thinking_tokens": thoughts,
        "ttft_s": ttft,
    }
    feedback = next((c.prompt_feedback for c in chunks if c.prompt_feedback), None)
    if feedback is not None and feedback.block_reason is not None:
        return Completion("blocked", None, f"BLOCKED_{_enum_name(feedback.block_reason)}", **usage_fields)
    candidates = [c.candidates[0] for c in chunks if c.candidates]
    finish = next((_enum_name(c.finish_reason) for c in reversed(candidates) if c.finish_reason), None)
    parts = [(p.text, p.thought) for c in candidates if c.content for p in c.content.parts or [] if p.text]
    text = "".join(piece for piece, thought in parts if not thought)
    usage_fields["thought_text"] = "".join(piece for piece, thought in parts if thought) or None
    if not text and finish is None:
        raise RetryableError(f"an empty reply with no stated reason ({len(candidates)} candidate(s), no block reason)")
    if finish == "MAX_TOKENS" and not text:
        raise truncated_with_no_text("finish_reason MAX_TOKENS")
    status = "blocked" if finish in BLOCK_FINISH_REASONS and not text else "ok"
    return Completion(status, text, finish, **usage_fields)


def token_counter(system: System) -> Callable[[str], int]:
    """countTokens for the system's model, retried like its requests. A failure stops the run
    with one line: no prompt is sent or skipped on a guessed count."""
    provider = GeminiProvider(system)
    policy = RetryPolicy(system.max_attempts, system.backoff_initial_s, system.backoff_max_s)

    def count(text: str) -> int:
        contents = _contents([{"role": "user", "content": text}])
        try:
            response, _ = call_with_retries(
                lambda: provider._call(
                    lambda: provider.client.models.count_tokens(model=system.model, contents=contents)
                ),
                policy,
            )
        except (RetryableError, PermanentError) as exc:
            raise ConfigurationError(f"{system.name}: countTokens failed: {exc}") from exc
        return int(response.total_tokens or 0)

    return count


def provider(system: System, run: RunData) -> GeminiProvider:
    """The streaming client of a system (providers/registry.py)."""
    return GeminiProvider(system)
