"""Inference survives any reply: bodies the clients cannot read, replies of the wrong shape,
truncations with no text, hour-long Retry-After, refused requests on rerun, keys in warnings."""

from __future__ import annotations

import time

import polars as pl
import pytest

from loft_warehouse.inference import runner
from loft_warehouse.inference.providers.base import PermanentError, Request
from loft_warehouse.inference.providers.gemini import GeminiProvider
from tests.inference.support import gemini_system, inputs, openai_system, prompt_row, systems_from

SYSTEMS = {"openai": openai_system, "gemini": lambda: gemini_system(cache={})}
MAX_ATTEMPTS = 5  # support.write_systems


def _one_prompt() -> pl.DataFrame:
    return pl.DataFrame([prompt_row("pa", "qa0", "====== Now let's start! ======\nquery a0\n")])


def _run(tmp_path, store, provider: str, **settings) -> dict:
    systems = systems_from(tmp_path, [SYSTEMS[provider]()], **settings)
    frame = runner.run(inputs(_one_prompt()), systems, store, "128k", {}, emit=lambda line: None)
    return frame.row(0, named=True)


@pytest.mark.parametrize("provider", ["openai", "gemini"])
@pytest.mark.parametrize("fault", ["html", "wrong_types", "malformed"])
def test_an_unreadable_200_is_retried_then_a_terminal_error(tmp_path, api_env, store, provider, fault):
    api_env.state.faults.extend([fault] * MAX_ATTEMPTS)
    row = _run(tmp_path, store, provider)
    assert row["status"] == "error"
    assert row["attempts"] == MAX_ATTEMPTS
    assert "malformed response" in row["error"]
    assert len(api_env.state.generation_requests()) == MAX_ATTEMPTS


@pytest.mark.parametrize("provider", ["openai", "gemini"])
def test_an_unreadable_200_then_a_good_one_is_ok(tmp_path, api_env, store, provider):
    api_env.state.faults.extend(["html", "wrong_types"])
    row = _run(tmp_path, store, provider)
    assert (row["status"], row["attempts"]) == ("ok", 3)
    assert row["raw_text"].startswith("Final Answer:")


@pytest.mark.parametrize("provider", ["openai", "gemini"])
def test_a_truncation_before_any_text_is_an_error_not_an_ok_without_text(tmp_path, api_env, store, provider):
    api_env.state.faults.append("truncated_empty")
    row = _run(tmp_path, store, provider)
    assert row["status"] == "error"
    assert row["raw_text"] is None
    assert "no text" in row["error"] and "max_output_tokens" in row["error"]
    assert row["attempts"] == 1  # the same request would be cut at the same place


@pytest.mark.parametrize("provider", ["openai", "gemini"])
def test_retry_after_is_capped_by_backoff_max_s(tmp_path, api_env, store, provider):
    api_env.state.faults.append("retry_after_long")  # asks for 3600 s; backoff_max_s is 0.05
    begun = time.monotonic()
    row = _run(tmp_path, store, provider)
    assert row["status"] == "ok"
    assert time.monotonic() - begun < 10


@pytest.mark.parametrize("provider", ["openai", "gemini"])
def test_a_refused_request_is_not_sent_again_unless_asked(tmp_path, api_env, store, provider):
    api_env.state.faults.append("bad_request")
    first = _run(tmp_path, store, provider)
    assert (first["status"], first["finish_reason"], first["attempts"]) == ("error", "rejected", 1)
    assert _run(tmp_path, store, provider)["status"] == "error"
    assert len(api_env.state.generation_requests()) == 1  # the rerun sent nothing
    systems = systems_from(tmp_path, [SYSTEMS[provider]()])
    frame = runner.run(inputs(_one_prompt()), systems, store, "128k", {}, emit=lambda line: None, retry_errors=True)
    assert frame["status"].to_list() == ["ok"]
    assert len(api_env.state.generation_requests()) == 2


def test_other_errors_are_sent_again_on_a_rerun(tmp_path, api_env, store):
    api_env.state.faults.extend(["server_error"] * MAX_ATTEMPTS)
    assert _run(tmp_path, store, "openai")["status"] == "error"
    assert _run(tmp_path, store, "openai")["status"] == "ok"


def test_a_key_echoed_in_a_cache_warning_is_masked(tmp_path, api_env, caplog, monkeypatch):
    echoed = "gm-test-key"  # api_env's Gemini key, echoed back by a server in its error text

    def refuse(self, action):
        raise PermanentError(f"HTTP 400: bad cache request for key={echoed}")

    monkeypatch.setattr(GeminiProvider, "_call", refuse)
    system = systems_from(tmp_path, [gemini_system(cache={"min_prefix_tokens": 1, "ttl_s": 60})])[0]
    request = Request("k", "pa", "prefix", ({"role": "user", "content": "prefix q"},), 3, {"n_tokens_prefix": 5})
    assert GeminiProvider(system)._cache_for(request) is None
    assert echoed not in caplog.text
    assert "key=***" in caplog.text


def test_the_endpoint_is_part_of_the_key_only_when_one_is_set(tmp_path, monkeypatch):
    import hashlib
    import json

    monkeypatch.setenv("LOFT_TEST_OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
    system = systems_from(tmp_path, [openai_system()])[0]
    messages = [{"role": "user", "content": "prefix q"}]
    sha = hashlib.sha256(b"prefix").hexdigest()
    at_fixture = runner.request_key(system, "", sha, "prefix", messages)
    monkeypatch.setenv("LOFT_TEST_OPENAI_BASE_URL", "http://127.0.0.1:2/v1")
    assert runner.request_key(system, "", sha, "prefix", messages) != at_fixture
    monkeypatch.delenv("LOFT_TEST_OPENAI_BASE_URL")
    public = runner.request_key(system, "", sha, "prefix", messages)
    # The public endpoint keeps the keys stores already hold.
    payload = {
        "system": system.name,
        "model": system.model,
        "settings": {"generation": system.generation, "options": system.options},
        "head": "",
        "prefix_sha256": sha,
        "messages": [{"role": "user", "content": " q"}],
    }
    encoded = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    assert public == hashlib.sha256(encoded).hexdigest()
