"""Flow control: token buckets and retries with backoff (tenacity).

Each system gets a request bucket (requests per minute) and a token bucket (prompt tokens per
minute); a request waits for both before it is sent. Retries cover 429, 5xx, timeouts and
malformed bodies (RetryableError), honour a server's Retry-After, otherwise back off
exponentially with jitter, and stop after max_attempts; the last error becomes the request's
terminal status 'error'.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar, cast

import tenacity
from tenacity.wait import wait_base

from loft_warehouse import interrupts
from loft_warehouse.inference.providers.base import RetryableError

T = TypeVar("T")
R = TypeVar("R")
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
    """Retry-After when the server sent one, capped by the system's backoff_max_s (a server
    asking for an hour does not stall a run), plus jitter; else exponential backoff with jitter."""

    def __init__(self, initial: float, maximum: float, jitter: float) -> None:
        self.maximum = maximum
        self.backoff = tenacity.wait_exponential_jitter(initial=initial, max=maximum, jitter=jitter)
        self.jitter = tenacity.wait_random(0, jitter)

    def __call__(self, retry_state: tenacity.RetryCallState) -> float:
        error = retry_state.outcome.exception() if retry_state.outcome else None
        retry_after = getattr(error, "retry_after", None)
        if retry_after is not None:
            return min(retry_after, self.maximum) + self.jitter(retry_state)
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
        sleep=_sleep_unless_stopped,
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


def _sleep_unless_stopped(seconds: float) -> None:
    """A backoff wait that Ctrl-C cuts short."""
    if interrupts.STOP.wait(seconds):
        interrupts.check("a retry backoff")


def map_stoppable(function: Callable[[T], R], items: Sequence[T], workers: int, grace_s: float = 5.0) -> list[R]:
    """[function(item) for item in items] on `workers` daemon threads, stopping within seconds
    of Ctrl-C (interrupts.STOP): no new item starts, workers get `grace_s` to reach a check
    point, and Interrupted is raised. Daemon threads, unlike an executor's, never hold the
    process open on a call still in flight. The first error stops the others and is raised.
    """
    results: list[R | None] = [None] * len(items)
    errors: list[BaseException] = []
    lock = threading.Lock()
    position = 0

    def work() -> None:
        nonlocal position
        while True:
            with lock:
                if errors or interrupts.STOP.is_set() or position >= len(items):
                    return
                index = position
                position += 1
            try:
                results[index] = function(items[index])
            except BaseException as exc:  # noqa: BLE001 - re-raised in the calling thread
                with lock:
                    errors.append(exc)
                return

    threads = [threading.Thread(target=work, daemon=True) for _ in range(max(1, min(workers, len(items))))]
    for thread in threads:
        thread.start()
    while any(t.is_alive() for t in threads) and not interrupts.STOP.is_set():
        for thread in threads:
            thread.join(timeout=0.2)
    if interrupts.STOP.is_set():
        deadline = time.monotonic() + grace_s
        for thread in threads:
            thread.join(timeout=max(0.0, deadline - time.monotonic()))
        interrupts.check("inference")
    if errors:
        raise errors[0]
    return cast(list[R], results)
