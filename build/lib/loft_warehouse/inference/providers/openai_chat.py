"""OpenAI chat completions, and any OpenAI-compatible server (vLLM, llama.cpp, Ollama) via base_url.

A multimodal prompt's images go as image_url parts (base64 data URLs) and its audio as
input_audio parts, where its media markers stand. Responses are streamed (unless the system sets
`stream: false`) to record the time to the first
token. OpenAI caches long shared prompt prefixes automatically; the prefix is the start of the first
user message, so every query of a dataset reuses it, and usage reports the cached tokens.
The client's own retries are off: the flow owns retries (one policy, counted attempts).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, TypeVar, cast

import httpx2
import openai
from openai.types import CompletionUsage
from openai.types.chat import ChatCompletion, ChatCompletionChunk

from loft_warehouse.errors import ConfigurationError
from loft_warehouse.inference.media import MediaItem, pieces_of
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

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletionMessageParam

BLOCKED_FINISH_REASONS = ("content_filter",)
T = TypeVar("T")


class OpenAIChatProvider:
    """Sends each request as chat messages; thread-safe (one shared client)."""

    def __init__(self, system: System) -> None:
        key = system.api_key()
        if system.kind.needs_endpoint and not system.endpoint():
            raise ConfigurationError(f"system {system.name}: openai_compatible needs base_url or base_url_env")
        self.system = system
        self.client = openai.OpenAI(
            api_key=key or "not-needed",
            base_url=system.endpoint(),
            max_retries=0,
            timeout=system.timeout_s,
        )

    def _settings(self) -> dict:
        generation = dict(self.system.generation)
        settings: dict = {}
        max_tokens = generation.pop("max_output_tokens", None)
        if max_tokens:
            key = "max_completion_tokens" if self.system.provider == "openai" else "max_tokens"
            settings[key] = int(max_tokens)
        for name in ("temperature", "top_p", "seed", "stop"):
            if generation.get(name) is not None:
                settings[name] = generation[name]
        if self.system.thinking is not None:
            settings["reasoning_effort"] = self.system.thinking
        return settings

    def complete(self, request: Request) -> Completion:
        messages = cast("list[ChatCompletionMessageParam]", chat_messages(request))
        started = time.monotonic()
        if self.system.stream:

            def streamed() -> Completion:
                with self.client.chat.completions.create(
                    model=self.system.model,
                    messages=messages,
                    stream=True,
                    stream_options={"include_usage": True},
                    **self._settings(),
                ) as chunks:
                    return _streamed(chunks, started)

            return self._call(streamed)
        return self._call(
            lambda: _completion(
                self.client.chat.completions.create(model=self.system.model, messages=messages, **self._settings())
            )
        )

    def _call(self, action: Callable[[], T]) -> T:
        """Run a call of this client (a request, a batch operation), mapping its errors onto
        the flow's two kinds."""
        try:
            return action()
        except openai.APIStatusError as exc:
            if exc.status_code == 429 or exc.status_code >= 500 or exc.status_code == 408:
                raise RetryableError(
                    f"HTTP {exc.status_code}: {exc.message}",
                    retry_after_seconds(exc.response.headers),
                ) from exc
            raise RejectedError(f"HTTP {exc.status_code}: {exc.message}") from exc
        except (openai.APITimeoutError, openai.APIConnectionError, httpx2.TransportError) as exc:
            # A stream the server cuts short fails while it is read, outside the SDK's own mapping.
            raise RetryableError(f"{type(exc).__name__}: {exc}") from exc
        except (json.JSONDecodeError, openai.APIResponseValidationError, openai.APIError) as exc:
            raise RetryableError(f"malformed response body: {exc}") from exc
        except (AttributeError, TypeError, ValueError, IndexError) as exc:
            # The client builds models without validating them: a 200 whose body is an HTML
            # page or JSON of another shape only fails here.
            raise RetryableError(f"malformed response body: {type(exc).__name__}: {exc}"[:500]) from exc

    def close(self) -> None:
        self.client.close()


def chat_messages(request: Request) -> list[dict[str, Any]]:
    """The chat messages of a request: a message naming media gets a list of content parts
    (text, an image as a base64 data URL, audio as input_audio), one that does not stays text."""
    messages: list[dict[str, Any]] = []
    for message in request.messages:
        pieces = pieces_of(message["content"], request.media)
        if all(isinstance(piece, str) for piece in pieces):
            messages.append(dict(message))
            continue
        messages.append({"role": message["role"], "content": [_content_part(piece) for piece in pieces]})
    return messages


def _content_part(piece: str | MediaItem) -> dict[str, Any]:
    if isinstance(piece, str):
        return {"type": "text", "text": piece}
    if piece.mime_type.startswith("image/"):
        return {"type": "image_url", "image_url": {"url": f"data:{piece.mime_type};base64,{piece.base64()}"}}
    if piece.mime_type == "audio/wav":
        return {"type": "input_audio", "input_audio": {"data": piece.base64(), "format": "wav"}}
    raise PermanentError(f"no OpenAI content part for media of type {piece.mime_type}")


def _completion(response: ChatCompletion) -> Completion:
    """A chat completion as a Completion; a reply that is not one raises (malformed)."""
    if not isinstance(response, ChatCompletion):
        raise TypeError(f"a {type(response).__name__} body, not a chat completion")
    if not response.choices:
        raise ValueError("no choices")
    choice = response.choices[0]
    message = choice.message
    return _result(
        message.content if message else None, choice.finish_reason, response.usage, None, _reasoning(message)
    )


def _reasoning(message: object) -> str | None:
    """The thinking an OpenAI-compatible server (vLLM, llama.cpp) returns as reasoning_content."""
    value = getattr(message, "reasoning_content", None)
    return value if isinstance(value, str) and value else None


def _streamed(chunks: Iterable[ChatCompletionChunk], started: float) -> Completion:
    """A streamed completion: text pieces joined, time to the first one, usage from the last
    chunk (stream_options.include_usage). A stream with no chunk is malformed; one over the
    response budget is cut off."""
    pieces: list[str] = []
    thoughts: list[str] = []
    budget = ResponseBudget()
    finish = usage = ttft = None
    for chunk in chunks:
        if not isinstance(chunk, ChatCompletionChunk):
            raise TypeError(f"a {type(chunk).__name__} chunk, not a chat completion chunk")
        usage = chunk.usage or usage
        for choice in chunk.choices[:1]:
            piece = choice.delta.content if choice.delta else None
            thoughts.append(_reasoning(choice.delta) or "")
            budget.take(piece, thoughts[-1])
            if piece:
                if ttft is None:
                    ttft = round(time.monotonic() - started, 6)
                pieces.append(piece)
            finish = choice.finish_reason or finish
    if finish is None:
        raise ValueError("the stream ended without a finish reason")
    return _result("".join(pieces) if pieces or finish not in ("length", *BLOCKED_FINISH_REASONS) else None,
                   finish, usage, ttft, "".join(thoughts) or None)  # fmt: skip


def _result(
    text: str | None, finish: str | None, usage: CompletionUsage | None, ttft: float | None, thought: str | None
) -> Completion:
    details = getattr(usage, "prompt_tokens_details", None) if usage else None
    # completion_tokens already counts the reasoning tokens; the details say how many they were.
    reasoning = getattr(getattr(usage, "completion_tokens_details", None), "reasoning_tokens", None)
    if not text and finish is None:
        raise ValueError("an empty reply with no stated reason (no finish_reason)")
    if finish not in BLOCKED_FINISH_REASONS and text is None:
        if finish == "length":
            raise truncated_with_no_text("finish_reason length")
        raise ValueError(f"no text with finish_reason {finish!r}")
    if text is not None and not isinstance(text, str):
        raise TypeError(f"content of type {type(text).__name__}")
    return Completion(
        status="blocked" if finish in BLOCKED_FINISH_REASONS else "ok",
        raw_text=text,
        finish_reason=finish,
        input_tokens=usage.prompt_tokens if usage else None,
        cached_tokens=(details.cached_tokens or 0) if details else (0 if usage else None),
        output_tokens=usage.completion_tokens if usage else None,
        thinking_tokens=reasoning,
        ttft_s=ttft,
        thought_text=thought,
    )


def provider(system: System, run: RunData) -> OpenAIChatProvider:
    """The streaming client of a system (providers/registry.py)."""
    return OpenAIChatProvider(system)
