"""What every provider receives and returns, and the two kinds of failure the flow tells apart."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from loft_warehouse.readers import max_response_bytes, utf8_size

if TYPE_CHECKING:
    import polars as pl

    from loft_warehouse.inference.media import MediaLibrary

# The HTTP clients log every request at INFO; a build shows progress lines instead.
for _name in ("httpx", "httpx2", "httpcore", "openai", "google_genai", "anthropic"):
    logging.getLogger(_name).setLevel(logging.WARNING)


@dataclass(frozen=True)
class Request:
    """One call: the conversation to send, its shared prefix, and what it answers.

    messages is the full conversation ({role: user|assistant, content}); the first user message
    starts with `head` ('' except when the query comes first) and then `prefix`, the text
    shared by every query of a (dataset, variant), which providers may cache. `row` carries
    the prompt row (task, dataset, qid, ...) for providers that need more than text (bm25).
    A multimodal prompt's texts hold media markers; `media` has the bytes they name
    (inference/media.py), which each provider sends as its own parts.
    """

    key: str
    prefix_id: str
    prefix: str
    messages: tuple[dict[str, str], ...]
    n_tokens: int
    row: dict[str, Any] = field(default_factory=dict)
    head: str = ""
    media: MediaLibrary | None = None

    @property
    def text(self) -> str:
        """The whole conversation as one text (what a completion model sees)."""
        return "".join(m["content"] for m in self.messages)


@dataclass(frozen=True)
class Completion:
    """A returned response: status 'ok' or 'blocked' (safety block, content filter, refusal).

    input_tokens counts every prompt token, cached_tokens (read from a cache) and
    cache_write_tokens (written to one, Anthropic) included; output_tokens counts every billed
    output token, thinking included, and thinking_tokens how many of them were thinking (None
    where the provider does not say); thought_text is the thinking the provider returned as text
    (Gemini's thought summaries, Anthropic's thinking blocks, an OpenAI-compatible server's
    reasoning_content), kept beside the answer and never parsed as it; ttft_s is the seconds from
    sending to the first streamed text (None when not streamed)."""

    status: str
    raw_text: str | None
    finish_reason: str | None
    input_tokens: int | None = None
    cached_tokens: int | None = None
    output_tokens: int | None = None
    cache_write_tokens: int | None = None
    ttft_s: float | None = None
    thinking_tokens: int | None = None
    thought_text: str | None = None


class RetryableError(RuntimeError):
    """429, 5xx, timeouts, connection resets, malformed bodies: worth another attempt.

    retry_after is the server's Retry-After in seconds when it sent one.
    """

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class PermanentError(RuntimeError):
    """A request the provider will never answer (bad request, auth): no retry."""


def truncated_with_no_text(reason: str) -> PermanentError:
    """A completion cut at the output limit before any text. Every provider says it in these words:
    int_answer_health counts an error row as truncated by their start."""
    return PermanentError(f"truncated completion with no text ({reason}): raise max_output_tokens")


class RejectedError(PermanentError):
    """The server refused this request (HTTP 4xx other than 408/429): sent again, it gets the
    same refusal, so a rerun does not send it again unless asked (`retry_errors`)."""


class ResponseBudget:
    """The bytes of text one reply may still carry (readers.max_response_bytes), counted as a
    stream arrives: a server that ignores max_output_tokens is cut off there, not read to its end
    and stored as an answer. The refusal is a RejectedError: sent again, the request would be
    answered the same way."""

    def __init__(self) -> None:
        self.cap = max_response_bytes()
        self.left = self.cap

    def take(self, *pieces: str | None) -> None:
        for piece in pieces:
            if piece:
                self.left -= utf8_size(piece)
        if self.left < 0:
            raise RejectedError(
                f"reply over {self.cap} bytes of text (LOFT_MAX_RESPONSE_BYTES), more than any output "
                "limit allows: the server ignored max_output_tokens; the reply was not kept"
            )


class RunData(Protocol):
    """What a run gives a provider besides its system (runner.RunInputs): the prompt rows, and the
    size's corpus, shown-ID maps and queries where a provider answers from them."""

    prompts: pl.DataFrame
    corpus: pl.DataFrame | None
    doc_ids: pl.DataFrame | None
    queries: pl.DataFrame | None
    size: str
    media: MediaLibrary | None


class Provider(Protocol):
    """A client for one system; complete() is called from several threads at once."""

    def complete(self, request: Request) -> Completion: ...

    def close(self) -> None: ...


def retry_after_seconds(headers: Any) -> float | None:
    """Parse a Retry-After header given in seconds (dates are ignored: backoff applies)."""
    if headers is None:
        return None
    value = headers.get("retry-after") if hasattr(headers, "get") else None
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None
