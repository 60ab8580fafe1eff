"""The real anthropic client against the fixture: prompt caching written once and read after,
cache-write/read tokens priced apart, streaming with time to first token, errors mapped."""

from __future__ import annotations

import polars as pl
import pytest

from loft_warehouse.inference import runner
from loft_warehouse.inference.fixture_server import count_words
from loft_warehouse.inference.systems import Prices
from loft_warehouse.prompts.multiturn import placeholder
from tests.inference.support import PREFIX_A, anthropic_system, inputs, make_prompts, systems_from

# USD per million tokens (Claude 3 Opus's): input 15, cache read 1.5, output 75, cache write
# 18.75, batch half.
OPUS = {"claude-haiku-4-5-20251001": Prices(15.0, 1.5, 75.0, 18.75, 0.5)}


def _run(tmp_path, store, prompts=None, **system):
    systems = systems_from(tmp_path, [anthropic_system(model="claude-haiku-4-5-20251001", **system)])
    return runner.run(inputs(prompts), systems, store, "128k", OPUS, emit=lambda line: None)


def test_the_prefix_is_written_to_the_cache_once_and_read_by_every_later_query(tmp_path, api_env, store):
    frame = _run(tmp_path, store, make_prompts(3, 0), concurrency=1)
    assert set(frame["status"]) == {"ok"}
    rows = frame.sort("qid").to_dicts()
    prefix_words = count_words(PREFIX_A)
    assert [r["cache_write_tokens"] for r in rows] == [prefix_words, 0, 0]
    assert [r["cached_tokens"] for r in rows] == [0, prefix_words, prefix_words]
    for row in rows:
        prompt = PREFIX_A + f"====== Now let's start! ======\nquery {row['qid'].replace('q', '')}\n"
        assert row["input_tokens"] == count_words(prompt)
        assert row["raw_text"] == f"Final Answer: ['{count_words(prompt) % 97}']"
        rest = row["input_tokens"] - row["cached_tokens"] - row["cache_write_tokens"]
        by_hand = (rest * 15 + row["cached_tokens"] * 1.5 + row["cache_write_tokens"] * 18.75 + 3 * 75) / 1e6
        assert row["cost_usd"] == pytest.approx(by_hand)
        assert 0 < row["ttft_s"] <= row["latency_s"]
    body = api_env.state.generation_requests("anthropic")[0].body
    assert body["stream"] is True
    assert body["max_tokens"] == 32
    blocks = body["messages"][0]["content"]
    assert blocks[0] == {"type": "text", "text": PREFIX_A, "cache_control": {"type": "ephemeral"}}
    assert blocks[1]["text"].startswith("====== Now let's start!")
    headers = api_env.state.generation_requests("anthropic")[0].headers
    assert "sk-ant-test-key" in (headers.get("x-api-key") or headers.get("authorization") or "")


def test_a_short_prefix_is_sent_without_cache_control(tmp_path, api_env, store):
    _run(tmp_path, store, make_prompts(1, 0), cache={"min_prefix_tokens": 5000})
    content = api_env.state.generation_requests("anthropic")[0].body["messages"][0]["content"]
    assert isinstance(content, str)


def test_unstreamed_requests_have_no_time_to_first_token(tmp_path, api_env, store):
    frame = _run(tmp_path, store, make_prompts(1, 0), stream=False)
    assert frame["ttft_s"].to_list() == [None]
    assert "stream" not in api_env.state.generation_requests("anthropic")[0].body


@pytest.mark.parametrize(
    ("fault", "status", "finish"),
    [("blocked", "blocked", "refusal"), ("truncated_empty", "error", None), ("bad_request", "error", "rejected")],
)
def test_refusals_truncations_and_bad_requests(tmp_path, api_env, store, fault, status, finish):
    api_env.state.faults.append(fault)
    frame = _run(tmp_path, store, make_prompts(1, 0), concurrency=1, max_attempts=1)
    row = frame.row(0, named=True)
    assert (row["status"], row["finish_reason"]) == (status, finish)


@pytest.mark.parametrize("fault", ["rate_limit", "server_error", "malformed", "html", "silent"])
def test_transient_faults_are_retried(tmp_path, api_env, store, fault):
    api_env.state.faults.append(fault)
    frame = _run(tmp_path, store, make_prompts(1, 0), concurrency=1)
    assert frame.select("status", "attempts").row(0) == ("ok", 2)


def test_multi_turn_conversations_go_through_it(tmp_path, api_env, store):
    prompts = pl.DataFrame([
        {**make_prompts(1, 0).row(0, named=True), "turn": t, "n_turns": 2,
         "prompt_id": f"p/{t}", "suffix": "turn 0\n" + (placeholder(0) + "turn 1\n" if t else "")} for t in range(2)
    ])  # fmt: skip
    frame = _run(tmp_path, store, prompts, concurrency=1)
    assert frame["status"].to_list() == ["ok", "ok"]
    second = api_env.state.generation_requests("anthropic")[1].body["messages"]
    assert [m["role"] for m in second] == ["user", "assistant", "user"]


def test_an_empty_end_turn_is_sent_again_and_never_a_final_empty_answer(tmp_path, api_env, store):
    api_env.state.faults.append("empty")
    frame = _run(tmp_path, store, make_prompts(1, 0), concurrency=1)
    assert frame.select("status", "attempts").row(0) == ("ok", 2)
    api_env.state.faults.extend(["empty"] * 3)
    frame = _run(tmp_path, store, make_prompts(2, 0).tail(1), concurrency=1, max_attempts=3)
    row = frame.row(0, named=True)
    assert (row["status"], row["attempts"], row["raw_text"]) == ("error", 3, None)
    assert "an empty reply: stop_reason end_turn with no text" in row["error"]
