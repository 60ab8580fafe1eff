"""Anthropic's Messages API through the official `anthropic` SDK, with prompt caching.

The shared prefix (the corpus and its instructions) is sent as its own text block marked
`cache_control`, so the first query of a prefix writes it to the cache and every later one
reads it; usage reports both (cache_creation_input_tokens, cache_read_input_tokens) and each is
priced on its own (writes cost more than input, reads less). A prefix below the system's
`cache.min_prefix_tokens` (the model's minimum cacheable length) or behind a head is sent
uncached. A multimodal prompt's images go as base64 image blocks where its media markers
stand, the prefix's with the cache mark on its last block. Responses stream by default, for
the time to the first token. The client's own retries are off: the flow owns retries.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any, TypeVar

import anthropic
import httpx2
from anthropic.types import Message

from loft_warehouse.inference.media import MediaLibrary, has_media, pieces_of
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

# Claude needs max_tokens on every request; this is used when the system sets none.
DEFAULT_MAX_TOKENS = 1024
BLOCKED_STOP_REASONS = ("refusal",)
T = TypeVar("T")


class AnthropicProvider:
    """messages.create / messages.stream per request; thread-safe (one shared client)."""

    def __init__(self, system: System) -> None:
        self.system = system
        self.client = anthropic.Anthropic(
            api_key=system.api_key() or "not-needed",
            base_url=system.endpoint(),
            max_retries=0,
            timeout=system.timeout_s,
        )
        cache = system.cache or {}
        self.min_prefix_tokens = int(cache.get("min_prefix_tokens") or 1024)
        self.cache_ttl = str(cache.get("ttl") or "5m")

    def _cacheable(self, request: Request) -> bool:
        n_prefix = int(request.row.get("n_tokens_prefix") or 0)
        return not request.head and bool(request.prefix) and n_prefix >= self.min_prefix_tokens

    def params(self, request: Request) -> dict[str, Any]:
        """The Messages request body of a Request (streamed, non-streamed and batched alike)."""
        messages: list[dict[str, Any]] = []
        for index, message in enumerate(request.messages):
            content = message["content"]
            if index == 0 and self._cacheable(request):
                if not content.startswith(request.prefix):
                    raise PermanentError("first message does not start with the prefix it claims")
                control: dict[str, str] = {"type": "ephemeral"}
                if self.cache_ttl != "5m":
                    control["ttl"] = self.cache_ttl
                blocks = _blocks(request.prefix, request.media)
                blocks[-1] = {**blocks[-1], "cache_control": control}
                rest = content[len(request.prefix) :]
                if rest:
                    blocks.extend(_blocks(rest, request.media))
                messages.append({"role": "user", "content": blocks})
            elif has_media(content):
                messages.append({"role": message["role"], "content": _blocks(content, request.media)})
            else:
                messages.append({"role": message["role"], "content": content or " "})
        generation = self.system.generation
        params: dict[str, Any] = {
            "model": self.system.model,
            "max_tokens": int(generation.get("max_output_tokens") or DEFAULT_MAX_TOKENS),
            "messages": messages,
        }
        for ours, theirs in (("temperature", "temperature"), ("top_p", "top_p"), ("stop", "stop_sequences")):
            if generation.get(ours) is not None:
                params[theirs] = generation[ours]
        if isinstance(self.system.thinking, int):
            params["thinking"] = {"type": "enabled", "budget_tokens": self.system.thinking}
        return params

    def complete(self, request: Request) -> Completion:
        params = self.params(request)
        # This SDK's signatures no longer name the sampling settings; the API takes them.
        sampling = {k: params.pop(k) for k in ("temperature", "top_p") if k in params}
        if sampling:
            params["extra_body"] = sampling
        started = time.monotonic()
        if not self.system.stream:
            return self._call(lambda: completion_of(self.client.messages.create(**params), None))

        def streamed() -> Completion:
            ttft = None
            budget = ResponseBudget()
            with self.client.messages.stream(**params) as stream:
                for event in stream:
                    if event.type == "thinking":
                        budget.take(event.thinking)
                    elif event.type == "text":
                        budget.take(event.text)
                        if event.text and ttft is None:
                            ttft = round(time.monotonic() - started, 6)
                message = stream.get_final_message()
            return completion_of(message, ttft)

        return self._call(streamed)

    def _call(self, action: Callable[[], T]) -> T:
        """Run a call of this client (a request, a batch operation), mapping its errors onto
        the flow's two kinds."""
        try:
            return action()
        except anthropic.APIStatusError as exc:
            if exc.status_code in (408, 429) or exc.status_code >= 500:
                raise RetryableError(
                    f"HTTP {exc.status_code}: {exc.message}", retry_after_seconds(exc.response.headers)
                ) from exc
            raise RejectedError(f"HTTP {exc.status_code}: {exc.message}") from exc
        except (anthropic.APITimeoutError, anthropic.APIConnectionError, httpx2.TransportError) as exc:
            # A stream the server cuts short fails while it is read, outside the SDK's own mapping.
            raise RetryableError(f"{type(exc).__name__}: {exc}") from exc
        except (json.JSONDecodeError, anthropic.APIError) as exc:
            raise RetryableError(f"malformed response body: {exc}"[:500]) from exc
        except (AttributeError, TypeError, ValueError, KeyError, IndexError, AssertionError) as exc:
            raise RetryableError(f"malformed response body: {type(exc).__name__}: {exc}"[:500]) from exc

    def close(self) -> None:
        self.client.close()


def _blocks(text: str, library: MediaLibrary | None) -> list[dict[str, Any]]:
    """Content blocks of a text: text blocks, and an image block (base64) per image it names."""
    blocks: list[dict[str, Any]] = []
    for piece in pieces_of(text, library):
        if isinstance(piece, str):
            blocks.append({"type": "text", "text": piece})
        elif piece.mime_type.startswith("image/"):
            blocks.append(
                {"type": "image", "source": {"type": "base64", "media_type": piece.mime_type, "data": piece.base64()}}
            )
        else:
            raise PermanentError(f"no Anthropic content block for media of type {piece.mime_type}")
    return blocks


def completion_of(message: Message, ttft: float | None) -> Completion:
    """A Message as a Completion: input_tokens counts uncached, cache-written and cache-read
    prompt tokens together (as the other providers report them)."""
    if not isinstance(message, Message):
        raise TypeError(f"a {type(message).__name__} body, not a message")
    text = "".join(block.text for block in message.content if block.type == "text")
    thought = "".join(block.thinking for block in message.content if block.type == "thinking")
    stop = message.stop_reason
    usage = message.usage
    written = usage.cache_creation_input_tokens or 0
    read = usage.cache_read_input_tokens or 0
    if not text and stop is None:
        raise ValueError("an empty reply with no stated reason (no stop_reason)")
    if not text and stop == "end_turn":
        # No answer, yet a normal end: sent again (bounded), never stored as a final empty answer.
        raise RetryableError("an empty reply: stop_reason end_turn with no text")
    if stop == "max_tokens" and not text:
        raise truncated_with_no_text("stop_reason max_tokens")
    return Completion(
        status="blocked" if stop in BLOCKED_STOP_REASONS and not text else "ok",
        raw_text=text if text or stop not in BLOCKED_STOP_REASONS else None,
        finish_reason=stop,
        input_tokens=usage.input_tokens + written + read,
        cached_tokens=read,
        output_tokens=usage.output_tokens,
        cache_write_tokens=written,
        ttft_s=ttft,
        thought_text=thought or None,
    )


def provider(system: System, run: RunData) -> AnthropicProvider:
    """The streaming client of a system (providers/registry.py)."""
    return AnthropicProvider(system)
