"""A server that ignores max_output_tokens and sends far more text than any limit allows is cut
off at the response budget ($LOFT_MAX_RESPONSE_BYTES) as the stream arrives, and the request is
an error row that a rerun does not send again, never a final `ok` answer of hundreds of MiB
(issue 60 item 2: a 300 MiB streamed answer grew the store by 601 MiB and every later build past
4 GiB)."""

from __future__ import annotations

import pytest

from loft_warehouse.inference import runner
from loft_warehouse.inference.store import REJECTED
from tests.inference.support import anthropic_system, gemini_system, inputs, make_prompts, openai_system, systems_from

SYSTEMS = {"openai": openai_system, "gemini": gemini_system, "anthropic": anthropic_system}
BUDGET = 50_000


def _run(tmp_path, store, provider: str, stream: bool):
    systems = systems_from(tmp_path, [SYSTEMS[provider](stream=stream)])
    return runner.run(inputs(make_prompts(1, 0)), systems, store, "128k", {}, emit=lambda line: None)


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "whole"])
@pytest.mark.parametrize("provider", list(SYSTEMS))
def test_a_reply_over_the_budget_is_an_error_row_sent_once(tmp_path, api_env, store, monkeypatch, provider, stream):
    monkeypatch.setenv("LOFT_MAX_RESPONSE_BYTES", str(BUDGET))
    monkeypatch.setattr(api_env.state, "answer", lambda prompt: "Final Answer: ['" + "é " * 20_000 + "']")
    sent = len(api_env.state.generation_requests())
    row = _run(tmp_path, store, provider, stream).row(0, named=True)
    assert (row["status"], row["raw_text"], row["finish_reason"]) == ("error", None, REJECTED)
    assert row["error"].startswith(f"reply over {BUDGET} bytes of text (LOFT_MAX_RESPONSE_BYTES)"), row["error"]
    assert len(api_env.state.generation_requests()) == sent + 1  # not retried
    if not stream:  # read whole, the reply's usage is known and kept
        assert row["output_tokens"] > 20_000
    again = _run(tmp_path, store, provider, stream).row(0, named=True)
    assert again["status"] == "error" and len(api_env.state.generation_requests()) == sent + 1


@pytest.mark.parametrize("provider", list(SYSTEMS))
def test_a_reply_within_the_budget_is_answered(tmp_path, api_env, store, monkeypatch, provider):
    monkeypatch.setenv("LOFT_MAX_RESPONSE_BYTES", str(BUDGET))
    answer = "Final Answer: ['" + "é " * 10_000 + "']"  # 40,019 bytes: within
    monkeypatch.setattr(api_env.state, "answer", lambda prompt: answer)
    row = _run(tmp_path, store, provider, True).row(0, named=True)
    assert row["status"] == "ok" and row["raw_text"].strip() == answer.strip()


def test_a_batch_result_over_the_budget_is_an_error_row_with_its_cost(tmp_path, api_env, store, monkeypatch):
    """The same budget holds for results collected from a provider batch (all three APIs)."""
    monkeypatch.setenv("LOFT_MAX_RESPONSE_BYTES", str(BUDGET))
    monkeypatch.setattr(api_env.state, "answer", lambda prompt: "Final Answer: ['" + "é " * 20_000 + "']")
    entries = [entry(mode="batch") for entry in SYSTEMS.values()]
    systems = systems_from(tmp_path, entries)
    assert set(
        runner.run(inputs(make_prompts(1, 0)), systems, store, "128k", {}, emit=lambda line: None)["status"]
    ) == {"batch_pending"}
    api_env.state.complete_batches()
    frame = runner.run(inputs(make_prompts(1, 0)), systems, store, "128k", {}, emit=lambda line: None)
    assert frame.select("status", "raw_text", "finish_reason").unique().rows() == [("error", None, REJECTED)]
    assert all(error.startswith(f"reply over {BUDGET} bytes") for error in frame["error"])
    assert frame["output_tokens"].min() > 20_000
