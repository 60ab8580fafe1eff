"""Token buckets on a fake clock, tenacity retries, progress lines."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest
import tenacity

from loft_warehouse import interrupts
from loft_warehouse.inference import flow
from loft_warehouse.inference.flow import (
    RetryPolicy,
    TokenBucket,
    call_with_retries,
    wait_retry_after,
)
from loft_warehouse.inference.providers.base import PermanentError, RetryableError


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def test_bucket_allows_a_burst_then_refills_at_the_rate():
    clock = FakeClock()
    bucket = TokenBucket(60, capacity=2, clock=clock, sleep=clock.sleep)  # 1 per second
    assert bucket.acquire() == 0.0
    assert bucket.acquire() == 0.0
    assert bucket.acquire() == pytest.approx(1.0)
    clock.now += 0.5
    assert bucket.acquire() == pytest.approx(0.5)


def test_oversized_request_waits_for_a_full_bucket_and_leaves_debt():
    clock = FakeClock()
    bucket = TokenBucket(600, capacity=10, clock=clock, sleep=clock.sleep)  # 10 tokens per second
    assert bucket.acquire(30) == 0.0  # full bucket: taken, level -20
    assert bucket.acquire(5) == pytest.approx(2.5)  # needs 5: (5 - -20) / 10


def test_zero_rate_is_unlimited():
    assert TokenBucket(0).acquire(10**9) == 0.0


def test_retryable_errors_are_retried_until_success():
    outcomes = [RetryableError("429"), RetryableError("500"), "done"]

    def action():
        outcome = outcomes.pop(0)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    assert call_with_retries(action, RetryPolicy(5, 0.001, 0.002, 0.001)) == ("done", 3)


def test_attempts_are_capped_and_counted_on_the_error():
    def action():
        raise RetryableError("always 500")

    with pytest.raises(RetryableError) as info:
        call_with_retries(action, RetryPolicy(3, 0.001, 0.002, 0.001))
    assert info.value.attempts == 3


def test_permanent_errors_are_not_retried():
    calls = []

    def action():
        calls.append(1)
        raise PermanentError("400")

    with pytest.raises(PermanentError):
        call_with_retries(action, RetryPolicy(5, 0.001, 0.002, 0.001))
    assert calls == [1]


def _state(error: Exception, attempt: int) -> tenacity.RetryCallState:
    state = tenacity.RetryCallState(tenacity.Retrying(), fn=None, args=(), kwargs={})
    state.attempt_number = attempt
    state.set_exception((type(error), error, None))
    return state


def test_wait_honours_retry_after_else_backs_off_exponentially():
    wait = wait_retry_after(initial=1.0, maximum=60.0, jitter=0.0)
    assert wait(_state(RetryableError("429", retry_after=7.0), 1)) == 7.0
    assert wait(_state(RetryableError("500"), 1)) == 1.0
    assert wait(_state(RetryableError("500"), 4)) == 8.0
    assert wait(_state(RetryableError("500"), 10)) == 60.0


def test_every_attempt_passes_both_buckets_with_its_prompt_tokens(tmp_path, api_env, store, monkeypatch):
    from loft_warehouse.inference import flow, runner
    from tests.inference.support import inputs, make_prompts, openai_system, systems_from

    taken: list[tuple[float, float]] = []
    original = flow.TokenBucket.acquire

    def record(self, amount=1.0):
        taken.append((self.rate * 60, amount))
        return original(self, amount)

    monkeypatch.setattr(flow.TokenBucket, "acquire", record)
    api_env.state.faults.append("server_error")
    system = openai_system(concurrency=1, requests_per_minute=6000, tokens_per_minute=600000)
    runner.run(inputs(make_prompts(2, 0)), systems_from(tmp_path, [system]), store, "128k", {}, emit=lambda line: None)
    # 3 attempts (one retried): each takes 1 from the request bucket and 110 from the token bucket.
    assert taken == [(6000, 1), (600000, 110)] * 3


def test_map_stoppable_keeps_order_and_raises_the_first_error():
    assert flow.map_stoppable(lambda x: x * x, list(range(20)), workers=4) == [x * x for x in range(20)]

    def fail_on_three(x: int) -> int:
        if x == 3:
            raise ValueError("three")
        return x

    with pytest.raises(ValueError, match="three"):
        flow.map_stoppable(fail_on_three, list(range(10)), workers=2)


def test_ctrl_c_stops_map_stoppable_without_waiting_for_a_call_in_flight(monkeypatch):
    monkeypatch.setattr(interrupts, "STOP", threading.Event())
    started: list[int] = []
    never = threading.Event()

    def slow(x: int) -> int:
        started.append(x)
        never.wait(60)  # a call that would hold the run for a minute
        return x

    threading.Timer(0.3, interrupts.STOP.set).start()
    begun = time.monotonic()
    with pytest.raises(interrupts.Interrupted, match="rerun the same command"):
        flow.map_stoppable(slow, list(range(10)), workers=2, grace_s=0.5)
    assert time.monotonic() - begun < 3
    assert sorted(started) == [0, 1]


def test_ctrl_c_sets_stop_through_the_wakeup_fd_and_only_a_new_invocation_clears_it(monkeypatch):
    monkeypatch.setattr(interrupts, "STOP", threading.Event())
    interrupts.arm()  # the main thread here: the fd is set directly
    received: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: received.append(signum))
    try:
        os.kill(os.getpid(), signal.SIGINT)
        assert interrupts.STOP.wait(5)
        assert received == [signal.SIGINT]
        interrupts.listen()  # a model starting after the Ctrl-C keeps it
        assert interrupts.STOP.is_set()
        interrupts.arm()
        assert not interrupts.STOP.is_set()
    finally:
        signal.signal(signal.SIGINT, previous)
