"""Issue 58's acceptance at 128k: a real `dbt build --select loft_128k` (NQ, 2 dev + 2 test queries)
of one thinking configuration per provider, streamed and in batch, against the 127.0.0.1 fixture,
then the same Gemini system at another budget through the `thinking` var. The ledger and the
estimate count thinking as output, each response's cost is the provider's rule on the fixture's
usage, the budget is on every response and run (two budgets: two runs, compared as a pair), the
thought text is kept beside the answer, and every run has its answer health; a system whose
thinking leaves too little of its output limit for the answer is flagged, and the build's results
table says so."""

from __future__ import annotations

import json

import pytest

from loft_warehouse.inference.fixture_server import FixtureServer, FixtureState, thought_text
from tests.conftest import query, run_dbt
from tests.inference.support import anthropic_system, fixture_env, gemini_system, openai_system, write_systems

pytestmark = pytest.mark.slow
ROOM = {"max_output_tokens": 2048}
CLAUDE = {"model": "claude-haiku-4-5-20251001", "generation": {**ROOM, "temperature": 1, "thinking": 1024}}
# name -> (entry, thinking setting, thinking_tokens reported per response, thought text returned)
THINKERS = {
    "gemini-think": (gemini_system("gemini-think", generation={**ROOM, "thinking": 16}), "16", 16, thought_text(16)),
    "gpt-think": (openai_system("gpt-think", generation={**ROOM, "thinking": "medium"}), "medium", 32, None),
    "claude-think": (anthropic_system("claude-think", **CLAUDE), "1024", None, thought_text(64)),
}
BATCH = {f"{name}-batch": (entry, *rest) for name, (entry, *rest) in THINKERS.items()}
# Thinking spends 16 of 18 output tokens: two words of answer left, cut at the limit.
TIGHT = gemini_system("gemini-tight", generation={"max_output_tokens": 18, "thinking": 16})
PRICES = {  # seeds/model_prices.csv, USD per million: input, cached input, output, cache write
    "gpt-4o-2024-08-06": (2.5, 1.25, 10.0, 0.0),
    "gemini-1.5-pro-002": (1.25, 0.3125, 5.0, 0.0),
    "claude-haiku-4-5-20251001": (1.0, 0.1, 5.0, 1.25),
}


def _vars(systems: list[str], **extra: object) -> str:
    return json.dumps({"datasets": "rag/nq", "limit": 2, "systems": systems, **extra})


def test_thinking_runs_count_every_token_keep_their_budget_and_report_answer_health(tmp_path, shared_data):
    database = tmp_path / "loft.duckdb"
    entries = [{**entry, "context_window": 1_000_000, "cache": {}} for entry, *_ in THINKERS.values()]
    entries += [
        {**entry, "name": name, "mode": "batch", "context_window": 1_000_000, "cache": {}}
        for name, (entry, *_) in BATCH.items()
    ]
    entries.append({**TIGHT, "context_window": 1_000_000, "cache": {}})
    names = [*THINKERS, *BATCH, "gemini-tight"]
    with FixtureServer(FixtureState()) as server:
        env = {
            "LOFT_SYSTEMS_FILE": str(write_systems(tmp_path / "systems.yaml", entries)),
            "LOFT_RESPONSE_STORE": str(tmp_path / "store.sqlite"),
            **fixture_env(server),
        }
        first = run_dbt(["build", "--select", "loft_128k", "--vars", _vars(names)], database, env)
        assert first.returncode == 0, (first.stdout + first.stderr)[-5000:]
        server.state.complete_batches()
        collected = run_dbt(["build", "--select", "loft_128k", "--vars", _vars(names)], database, env)
        assert collected.returncode == 0, (collected.stdout + collected.stderr)[-5000:]
        budgets = _vars(["gemini-think"], thinking={"gemini-think": "off"})
        other = run_dbt(["build", "--select", "loft_128k", "--vars", budgets], database, env)
        output = other.stdout + other.stderr
        assert other.returncode == 0, output[-5000:]
    flagged = [line for line in (first.stdout + first.stderr).splitlines() if "no answer 100%" in line]
    assert len(flagged) == 2 and all("gemini-tight" in line.split() for line in flagged), flagged
    assert "gemini-think@thinking-off" in output[output.index("results:") :]

    responses = query(
        database,
        "select system, model, status, thinking, max_output_tokens, thinking_tokens, thought_text, raw_text, "
        "input_tokens, coalesce(cached_tokens, 0), coalesce(cache_write_tokens, 0), output_tokens, cost_usd, "
        "batch_id is not null "
        "from loft_128k.responses left join (select distinct system, model from loft_128k.cost_estimates) "
        "using (system) where system <> 'gemini-tight' order by system",
    )
    assert {row[0] for row in responses} == {*THINKERS, *BATCH, "gemini-think@thinking-off"}
    for (
        system,
        model,
        status,
        setting,
        cap,
        thinking,
        thought,
        raw,
        inp,
        cached,
        written,
        out,
        usd,
        batched,
    ) in responses:
        entry, want_setting, want_thinking, want_thought = {**THINKERS, **BATCH}.get(system) or (
            None, "off", 0, None
        )  # fmt: skip
        assert (status, setting, cap, batched) == ("ok", want_setting, 2048, system.endswith("-batch")), system
        assert (thinking, thought) == (want_thinking, want_thought), system
        assert "considering" not in raw
        answer_words = len(raw.split())
        words = {"16": 16, "medium": 32, "1024": 64, "off": 0}[setting]
        assert out == answer_words + words, system
        price_in, price_cached, price_out, price_write = PRICES[model]
        rule = (inp - cached - written) * price_in + cached * price_cached + written * price_write + out * price_out
        assert usd == pytest.approx(rule / 1e6 * (0.5 if batched else 1)), system

    ledger = query(
        database,
        "select system, sum(thinking_tokens), sum(output_tokens) from loft_128k.cost_ledger "
        "where system in ('gemini-think', 'gpt-think', 'claude-think', 'gemini-think@thinking-off') "
        "group by all order by all",
    )
    assert [(s, t) for s, t, _ in ledger] == [
        ("claude-think", None), ("gemini-think", 64), ("gemini-think@thinking-off", 0), ("gpt-think", 128)
    ]  # fmt: skip
    estimates = dict(
        query(
            database,
            "select system, sum(output_tokens) / sum(n_requests) from loft_128k.cost_estimates "
            "where method = 'cic' and task = 'rag' and system in ('gemini-think', 'gemini-think@thinking-off') "
            "group by all",
        )
    )
    assert estimates["gemini-think"] == estimates["gemini-think@thinking-off"] + 16

    runs = query(
        database,
        "select system, split, thinking, max_output_tokens, n_calls, empty_share, truncated_share, blocked_share, "
        "unparsable_share, no_answer_share, is_health_flagged from loft_128k.metrics "
        "where is_primary and system like 'gemini-t%' and system not like '%-batch' "
        "and variant = 'default' and method = 'cic' order by all",
    )
    assert runs == [
        ("gemini-think", "dev", "16", 2048, 2, 0.0, 0.0, 0.0, 0.0, 0.0, False),
        ("gemini-think", "test", "16", 2048, 2, 0.0, 0.0, 0.0, 0.0, 0.0, False),
        ("gemini-think@thinking-off", "dev", "off", 2048, 2, 0.0, 0.0, 0.0, 0.0, 0.0, False),
        ("gemini-think@thinking-off", "test", "off", 2048, 2, 0.0, 0.0, 0.0, 0.0, 0.0, False),
        ("gemini-tight", "dev", "16", 18, 2, 0.0, 1.0, 0.0, 1.0, 1.0, True),
        ("gemini-tight", "test", "16", 18, 2, 0.0, 1.0, 0.0, 1.0, 1.0, True),
    ]
    board = query(
        database,
        "select system, thinking, no_answer_share, is_health_flagged from loft_128k.leaderboard "
        "where system like 'gemini-t%' and system not like '%-batch' and split = 'test' order by system",
    )
    assert board == [
        ("gemini-think", "16", 0.0, False),
        ("gemini-think@thinking-off", "off", 0.0, False),
        ("gemini-tight", "16", 1.0, True),
    ]
    pairs = query(
        database,
        "select system_a, system_b, n_common from loft_128k.paired_comparisons "
        "where split = 'test' and list_sort([system_a, system_b]) = ['gemini-think', 'gemini-think@thinking-off']",
    )
    assert len(pairs) == 1 and pairs[0][2] == 2, pairs
