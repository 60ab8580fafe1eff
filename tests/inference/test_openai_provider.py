"""The real openai client against the fixture: usage, retries, terminal statuses, skips."""

from __future__ import annotations

import polars as pl
import pytest

from loft_warehouse.inference import runner
from loft_warehouse.inference.fixture_server import count_words
from tests.inference.support import PREFIX_A, inputs, make_prompts, openai_system, systems_from

NO_PRICES: dict = {}


def _run(tmp_path, store, prompts=None, **system):
    systems = systems_from(tmp_path, [openai_system(**system)])
    return runner.run(inputs(prompts), systems, store, "128k", NO_PRICES, emit=lambda line: None)


def test_every_prompt_gets_the_models_answer_and_usage(tmp_path, api_env, store):
    frame = _run(tmp_path, store)
    assert frame.height == 5
    assert set(frame["status"]) == {"ok"}
    first = frame.filter(pl.col("qid") == "qa0").row(0, named=True)
    prompt = PREFIX_A + "====== Now let's start! ======\nquery a0\n"
    assert first["raw_text"] == f"Final Answer: ['{count_words(prompt) % 97}']"
    assert first["input_tokens"] == count_words(prompt)
    assert first["output_tokens"] == 3
    assert first["finish_reason"] == "stop"
    assert first["attempts"] == 1
    sent = api_env.state.generation_requests("openai")
    assert len(sent) == 5
    body = sent[0].body
    assert body["model"] == "gpt-4o-2024-08-06"
    assert body["temperature"] == 0.0
    assert body["max_completion_tokens"] == 32
    assert sent[0].headers["authorization"] == "Bearer sk-test-key"


def test_cached_prompt_tokens_are_recorded(tmp_path, api_env, store):
    long_prefix = " ".join(f"w{i}" for i in range(1300))
    prompts = make_prompts(2, 0).with_columns(pl.lit("long").alias("prefix_id"))
    frame = runner.run(
        runner.RunInputs(prompts, {"long": long_prefix}),
        systems_from(tmp_path, [openai_system(concurrency=1, context_window=10_000)]),
        store,
        "128k",
        NO_PRICES,
        emit=lambda line: None,
    )
    # The second prompt shares the 1300-word prefix (plus "======"): 1301 words -> 1280 cached.
    assert sorted(frame["cached_tokens"].to_list()) == [0, 1280]


def test_transient_faults_are_retried_until_an_answer(tmp_path, api_env, store):
    api_env.state.faults.extend(["rate_limit", "server_error", "timeout", "malformed"])
    api_env.state.timeout_sleep_s = 1.5
    prompts = make_prompts(1, 0)
    frame = _run(tmp_path, store, prompts, timeout_s=0.5, concurrency=1)
    row = frame.row(0, named=True)
    assert row["status"] == "ok"
    assert row["attempts"] == 5
    assert row["error"] is None
    assert [r.fault for r in api_env.state.generation_requests()] == [
        "rate_limit",
        "server_error",
        "timeout",
        "malformed",
        None,
    ]


def test_retries_stop_at_max_attempts_with_status_error(tmp_path, api_env, store):
    api_env.state.fault_rule = lambda prompt: "server_error"
    frame = _run(tmp_path, store, make_prompts(1, 0), max_attempts=3)
    row = frame.row(0, named=True)
    assert (row["status"], row["attempts"]) == ("error", 3)
    assert "HTTP 500" in row["error"]
    assert len(api_env.state.generation_requests()) == 3


def test_bad_request_is_not_retried(tmp_path, api_env, store):
    api_env.state.fault_rule = lambda prompt: "bad_request"
    frame = _run(tmp_path, store, make_prompts(1, 0))
    row = frame.row(0, named=True)
    assert (row["status"], row["attempts"]) == ("error", 1)
    assert "HTTP 400" in row["error"]


def test_content_filter_is_blocked_and_empty_content_is_ok(tmp_path, api_env, store):
    api_env.state.fault_rule = lambda p: "blocked" if "query a0" in p else "empty" if "query a1" in p else None
    frame = _run(tmp_path, store, make_prompts(3, 0)).sort("qid")
    assert frame["status"].to_list() == ["blocked", "ok", "ok"]
    assert frame["finish_reason"].to_list() == ["content_filter", "stop", "stop"]
    assert frame["raw_text"].to_list()[:2] == [None, ""]


@pytest.mark.parametrize("stream", [False, True])
def test_an_empty_reply_with_no_finish_reason_is_retried(tmp_path, api_env, store, stream):
    api_env.state.faults.append("silent")
    frame = _run(tmp_path, store, make_prompts(1, 0), concurrency=1, stream=stream)
    assert frame.select("status", "attempts").row(0) == ("ok", 2)


def test_without_a_key_rows_are_skipped_with_one_warning(tmp_path, server, store, monkeypatch):
    monkeypatch.delenv("LOFT_TEST_OPENAI_KEY", raising=False)
    lines: list[str] = []
    systems = systems_from(tmp_path, [openai_system()])
    frame = runner.run(inputs(), systems, store, "128k", NO_PRICES, emit=lines.append)
    assert set(frame["status"]) == {"skipped_no_credentials"}
    assert frame.height == 5
    assert [line for line in lines if "WARNING" in line] == [
        "WARNING: gpt-fixture: 5 prompt(s) skipped_no_credentials (set LOFT_TEST_OPENAI_KEY)"
    ]
    assert server.state.requests == []
    assert store.count() == 0


def test_prompts_over_the_context_window_are_skipped_too_long(tmp_path, api_env, store):
    prompts = make_prompts(2, 0).with_columns(
        pl.when(pl.col("qid") == "qa0").then(969).otherwise(968).alias("n_tokens_total")
    )
    frame = _run(tmp_path, store, prompts).sort("qid")
    # window 1000 minus max_output_tokens 32 leaves 968 prompt tokens.
    assert frame["status"].to_list() == ["skipped_too_long", "ok"]
    assert len(api_env.state.generation_requests()) == 1


def test_openai_compatible_uses_its_base_url_and_max_tokens(tmp_path, server, store, monkeypatch):
    monkeypatch.setenv("LOFT_TEST_VLLM_URL", f"{server.url}/v1")
    system = {
        "name": "vllm-fixture",
        "provider": "openai_compatible",
        "model": "open/model",
        "base_url_env": "LOFT_TEST_VLLM_URL",
        "context_window": 1000,
    }
    frame = runner.run(
        inputs(make_prompts(1, 0)),
        systems_from(tmp_path, [system]),
        store,
        "128k",
        NO_PRICES,
        emit=lambda line: None,
    )
    assert frame["status"].to_list() == ["ok"]
    body = server.state.generation_requests()[0].body
    assert (body["model"], body["max_tokens"]) == ("open/model", 32)


def test_retry_after_of_a_429_reaches_the_backoff(tmp_path, api_env):
    from loft_warehouse.inference.providers.base import Request, RetryableError
    from loft_warehouse.inference.providers.openai_chat import OpenAIChatProvider

    api_env.state.retry_after_s = 7
    api_env.state.faults.append("rate_limit")
    provider = OpenAIChatProvider(systems_from(tmp_path, [openai_system()])[0])
    request = Request("k", "pa", PREFIX_A, ({"role": "user", "content": PREFIX_A + "q"},), 10)
    with pytest.raises(RetryableError) as info:
        provider.complete(request)
    provider.close()
    assert info.value.retry_after == 7.0


def test_requests_in_flight_never_exceed_the_concurrency(tmp_path, api_env, store):
    api_env.state.latency_s = 0.05
    frame = _run(tmp_path, store, make_prompts(5, 5), concurrency=3)
    assert frame.height == 10
    assert api_env.state.max_in_flight <= 3
