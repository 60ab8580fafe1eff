"""The real google-genai client against the fixture: context caches, usage, blocks, retries."""

from __future__ import annotations

import polars as pl
import pytest

from loft_warehouse.inference import runner
from loft_warehouse.inference.fixture_server import count_words
from tests.inference.support import (
    PREFIX_A,
    PREFIX_B,
    gemini_system,
    inputs,
    make_prompts,
    systems_from,
)


def _run(tmp_path, store, prompts=None, **system):
    systems = systems_from(tmp_path, [gemini_system(**system)])
    return runner.run(inputs(prompts), systems, store, "128k", {}, emit=lambda line: None)


def test_one_cache_per_prefix_is_created_reused_and_deleted(tmp_path, api_env, store):
    frame = _run(tmp_path, store)
    state = api_env.state
    creates = [r for r in state.requests if r.api == "gemini_cache_create"]
    assert len(creates) == 2
    cached_texts = sorted(r.body["contents"][0]["parts"][0]["text"] for r in creates)
    assert cached_texts == sorted([PREFIX_A, PREFIX_B])
    generations = state.generation_requests("gemini")
    assert len(generations) == 5
    # Each query refers to its prefix's cache and sends only its own suffix.
    names = {r.body["cachedContent"] for r in generations}
    assert len(names) == 2
    for request in generations:
        sent = request.body["contents"][0]["parts"][0]["text"]
        assert sent.startswith("====== Now let's start! ======\nquery ")
    assert sorted(state.deleted_caches) == sorted(names)
    assert state.caches == {}
    row = frame.filter(pl.col("qid") == "qa1").row(0, named=True)
    assert row["cached_tokens"] == count_words(PREFIX_A)
    assert row["input_tokens"] == count_words(PREFIX_A + "====== Now let's start! ======\nquery a1\n")
    assert row["status"] == "ok"
    assert row["finish_reason"] == "STOP"


def test_prefixes_below_the_minimum_are_sent_whole(tmp_path, api_env, store):
    frame = _run(tmp_path, store, make_prompts(2, 0), cache={"min_prefix_tokens": 101, "ttl_s": 60})
    state = api_env.state
    assert [r for r in state.requests if r.api.startswith("gemini_cache")] == []
    sent = state.generation_requests()[0].body
    assert "cachedContent" not in sent
    assert sent["contents"][0]["parts"][0]["text"].startswith(PREFIX_A)
    assert frame["cached_tokens"].to_list() == [0, 0]


def test_generation_settings_are_sent(tmp_path, api_env, store):
    _run(tmp_path, store, make_prompts(1, 0))
    body = api_env.state.generation_requests()[0].body
    assert body["generationConfig"] == {"temperature": 0.0, "maxOutputTokens": 32}
    assert api_env.state.generation_requests()[0].headers["x-goog-api-key"] == "gm-test-key"


def test_safety_blocks_are_blocked_and_empty_replies_are_retried(tmp_path, api_env, store):
    """A reply with no candidate and no block reason says nothing: an error, retried (bounded),
    never a final `blocked`; a safety block is final."""
    api_env.state.fault_rule = lambda p: "blocked" if "query a0" in p else "empty" if "query a1" in p else None
    frame = _run(tmp_path, store, make_prompts(3, 0), max_attempts=3).sort("qid")
    assert frame["status"].to_list() == ["blocked", "error", "ok"]
    assert frame["finish_reason"].to_list() == ["BLOCKED_SAFETY", None, "STOP"]
    assert frame["attempts"].to_list() == [1, 3, 1]
    assert "an empty reply with no stated reason" in frame["error"].to_list()[1]


def test_an_empty_reply_is_sent_again_and_answered(tmp_path, api_env, store):
    api_env.state.faults.append("empty")
    frame = _run(tmp_path, store, make_prompts(1, 0), concurrency=1)
    assert frame.select("status", "attempts").row(0) == ("ok", 2)


def test_transient_gemini_faults_are_retried(tmp_path, api_env, store):
    api_env.state.faults.extend(["rate_limit", "server_error", "malformed"])
    frame = _run(tmp_path, store, make_prompts(1, 0), concurrency=1)
    assert frame.select("status", "attempts").row(0) == ("ok", 4)


def test_without_a_key_no_cache_is_created(tmp_path, server, store, monkeypatch):
    monkeypatch.delenv("LOFT_TEST_GEMINI_KEY", raising=False)
    frame = _run(tmp_path, store)
    assert set(frame["status"]) == {"skipped_no_credentials"}
    assert server.state.requests == []


def test_retry_after_of_a_429_reaches_the_backoff(tmp_path, api_env):
    from loft_warehouse.inference.providers.base import Request, RetryableError
    from loft_warehouse.inference.providers.gemini import GeminiProvider

    api_env.state.retry_after_s = 7
    api_env.state.faults.append("rate_limit")
    provider = GeminiProvider(systems_from(tmp_path, [gemini_system()])[0])
    request = Request("k", "pa", PREFIX_A, ({"role": "user", "content": PREFIX_A + "q"},), 10)
    with pytest.raises(RetryableError) as info:
        provider.complete(request)
    provider.close()
    assert info.value.retry_after == 7.0
