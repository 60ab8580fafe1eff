"""Flow control: token buckets, retries with backoff (tenacity), and progress lines.

Each system gets a request bucket (requests per minute) and a token bucket (prompt tokens per
minute); a request waits for both before it is sent. Retries cover 429, 5xx, timeouts and
malformed bodies (RetryableError), honour a server's Retry-After, otherwise back off
exponentially with jitter, and stop after max_attempts; the last error becomes the request's
terminal status 'error'.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import tenacity
from tenacity.wait import wait_base

from loft_warehouse.inference.providers.base import RetryableError

T = TypeVar("T")
BURST_SECONDS = 10.0


class TokenBucket:
    """Refills at rate_per_minute; holds at most `capacity` (default: 10 s worth, >= 1).

    acquire(n) waits until the bucket is full enough, then takes n; a request larger than the
    capacity waits for a full bucket and leaves it in debt, so the long-run rate still holds.
    """

    def __init__(
        self,
        rate_per_minute: float,
        capacity: float | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.rate = rate_per_minute / 60.0
        self.capacity = capacity if capacity is not None else max(1.0, self.rate * BURST_SECONDS)
        self._level = self.capacity
        self._clock = clock
        self._sleep = sleep
        self._stamp = clock()
        self._lock = threading.Lock()

    def _refill(self) -> None:
        now = self._clock()
        self._level = min(self.capacity, self._level + (now - self._stamp) * self.rate)
        self._stamp = now

    def acquire(self, amount: float = 1.0) -> float:
        """Take `amount`, waiting as needed; returns the seconds waited. Unlimited if rate <= 0."""
        if self.rate <= 0:
            return 0.0
        need = min(amount, self.capacity)
        waited = 0.0
        while True:
            with self._lock:
                self._refill()
                if self._level >= need:
                    self._level -= amount
                    return waited
                delay = (need - self._level) / self.rate
            self._sleep(delay)
            waited += delay


class Limiter:
    """Requests-per-minute and tokens-per-minute buckets of one system."""

    def __init__(self, requests_per_minute: float, tokens_per_minute: float) -> None:
        self.requests = TokenBucket(requests_per_minute)
        self.tokens = TokenBucket(tokens_per_minute)

    def acquire(self, n_tokens: int) -> None:
        self.requests.acquire(1)
        self.tokens.acquire(n_tokens)


class wait_retry_after(wait_base):  # noqa: N801 - tenacity's naming for wait strategies
    """Retry-After when the server sent one (plus jitter), else exponential backoff with jitter."""

    def __init__(self, initial: float, maximum: float, jitter: float) -> None:
        self.backoff = tenacity.wait_exponential_jitter(initial=initial, max=maximum, jitter=jitter)
        self.jitter = tenacity.wait_random(0, jitter)

    def __call__(self, retry_state: tenacity.RetryCallState) -> float:
        error = retry_state.outcome.exception() if retry_state.outcome else None
        retry_after = getattr(error, "retry_after", None)
        if retry_after is not None:
            return retry_after + self.jitter(retry_state)
        return self.backoff(retry_state)


@dataclass(frozen=True)
class RetryPolicy:
    """Attempts and backoff of one system (seconds)."""

    max_attempts: int = 6
    initial_s: float = 1.0
    max_s: float = 60.0
    jitter_s: float = 1.0


def call_with_retries(action: Callable[[], T], policy: RetryPolicy) -> tuple[T, int]:
    """Run action, retrying RetryableError per the policy; returns (result, attempts).

    The final RetryableError (or any other exception) propagates with `attempts` set on it.
    """
    retrying = tenacity.Retrying(
        stop=tenacity.stop_after_attempt(max(1, policy.max_attempts)),
        wait=wait_retry_after(policy.initial_s, policy.max_s, policy.jitter_s),
        retry=tenacity.retry_if_exception_type(RetryableError),
        reraise=True,
    )
    attempts = 0

    def counted() -> T:
        nonlocal attempts
        attempts += 1
        return action()

    try:
        return retrying(counted), attempts
    except Exception as exc:
        exc.attempts = attempts  # type: ignore[attr-defined]
        raise


def emit_stderr(line: str) -> None:
    """Default sink for progress and warning lines."""
    print(line, file=sys.stderr, flush=True)


class Progress:
    """done / total, rate and cost so far, printed at most every `interval_s` and at the end."""

    def __init__(
        self,
        label: str,
        total: int,
        emit: Callable[[str], None] = emit_stderr,
        interval_s: float = 10.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.label = label
        self.total = total
        self.emit = emit
        self.interval_s = interval_s
        self.clock = clock
        self.started = clock()
        self._last = self.started
        self.done = 0
        self.errors = 0
        self.cost_usd = 0.0
        self._lock = threading.Lock()

    def line(self) -> str:
        elapsed = max(self.clock() - self.started, 1e-9)
        return (
            f"{self.label}: {self.done}/{self.total} done, {self.done / elapsed:.1f} req/s, "
            f"{self.errors} error(s), cost so far ${self.cost_usd:,.4f}"
        )

    def tick(self, status: str, cost_usd: float | None) -> None:
        with self._lock:
            self.done += 1
            self.errors += status == "error"
            self.cost_usd += cost_usd or 0.0
            now = self.clock()
            if now - self._last >= self.interval_s and self.done < self.total:
                self._last = now
                self.emit(self.line())

    def finish(self) -> None:
        self.emit(self.line())
