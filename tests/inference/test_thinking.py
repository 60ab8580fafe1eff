"""Thinking models through the real clients against the fixture: every billed thinking token is
counted in output_tokens and priced, how many were thinking is kept beside them, thought text is
never the answer, generation.thinking reaches each provider's own field, and a setting a
provider cannot take is refused at load."""

from __future__ import annotations

import pytest

from loft_warehouse.errors import ConfigurationError
from loft_warehouse.inference import runner
from loft_warehouse.inference.fixture_server import THINKING_WORDS_BY_EFFORT, count_words, thought_text
from loft_warehouse.inference.systems import Prices, load_systems, with_thinking
from tests.inference.support import (
    anthropic_system,
    gemini_system,
    inputs,
    make_prompts,
    openai_system,
    systems_from,
    write_systems,
)

PRICES = {
    "gpt-4o-2024-08-06": Prices(2.5, 1.25, 10.0, None, 0.5),
    "gemini-1.5-pro-002": Prices(1.25, 0.3125, 5.0, None, 0.5),
    "claude-haiku-4-5-20251001": Prices(1.0, 0.1, 5.0, 1.25, 0.5),
}
# (system entry, words of thinking the fixture gives it, thinking_tokens the provider reports)
ROOM = {"max_output_tokens": 2048}
THINKERS = {
    "gemini-default": (gemini_system("gemini-default", generation=ROOM), 20, 20),
    "gemini-budget": (gemini_system("gemini-budget", generation={**ROOM, "thinking": 16}), 16, 16),
    "gemini-off": (gemini_system("gemini-off", generation={**ROOM, "thinking": "off"}), 0, 0),
    "gpt-medium": (openai_system("gpt-medium", generation={**ROOM, "thinking": "medium"}), 32, 32),
    # Anthropic bills thinking as output and does not say how much of it was thinking.
    "claude-think": (
        anthropic_system(
            "claude-think", model="claude-haiku-4-5-20251001", generation={**ROOM, "temperature": 1, "thinking": 1024}
        ),
        64,
        None,
    ),
}


def _run(tmp_path, store, api_env, names, mode):
    api_env.state.thinking_words = 20  # Gemini 2.5 thinks unless told not to
    entries = [{**THINKERS[name][0], "mode": mode, "cache": {}, "context_window": 100_000} for name in names]
    systems = systems_from(tmp_path, entries)
    frame = runner.run(inputs(make_prompts(2, 1)), systems, store, "128k", PRICES, emit=lambda line: None)
    if mode == "batch":
        api_env.state.complete_batches()
        frame = runner.run(inputs(make_prompts(2, 1)), systems, store, "128k", PRICES, emit=lambda line: None)
    return frame


@pytest.mark.parametrize("mode", ["stream", "batch"])
def test_every_billed_thinking_token_is_counted_and_priced(tmp_path, api_env, store, mode):
    frame = _run(tmp_path, store, api_env, list(THINKERS), mode)
    assert frame.height == 3 * len(THINKERS)
    for row in frame.iter_rows(named=True):
        entry, words, reported = THINKERS[row["system"]]
        assert row["status"] == "ok", row
        # The answer is the text, never the thought.
        assert row["raw_text"].startswith("Final Answer: ['") and "considering" not in row["raw_text"]
        assert row["output_tokens"] == count_words(row["raw_text"]) + words
        assert row["thinking_tokens"] == reported
        prices = PRICES[entry["model"]]
        uncached = row["input_tokens"] - (row["cached_tokens"] or 0) - (row["cache_write_tokens"] or 0)
        usd = (
            uncached * prices.input
            + (row["cached_tokens"] or 0) * prices.cached_input
            + (row["cache_write_tokens"] or 0) * (prices.cache_write or 0)
            + row["output_tokens"] * prices.output
        ) / 1e6
        assert row["cost_usd"] == pytest.approx(usd * (prices.batch_ratio if mode == "batch" else 1))


def test_the_thinking_setting_reaches_each_providers_own_field(tmp_path, api_env, store):
    _run(tmp_path, store, api_env, list(THINKERS), "stream")
    sent = {r.api: [] for r in api_env.state.generation_requests()}
    for request in api_env.state.generation_requests():
        sent[request.api].append(request.body)
    gemini = [body["generationConfig"].get("thinkingConfig") for body in sent["gemini_generate"]]
    budget = {"include_thoughts": True, "thinking_budget": 16}
    expected = [None] * 3 + [budget] * 3 + [{"thinking_budget": 0}] * 3
    assert sorted(map(str, gemini)) == sorted(map(str, expected))
    assert {body.get("reasoning_effort") for body in sent["openai_chat"]} == {"medium"}
    assert {str(body.get("thinking")) for body in sent["anthropic_messages"]} == {
        str({"type": "enabled", "budget_tokens": 1024})
    }


@pytest.mark.parametrize("mode", ["stream", "batch"])
def test_thought_text_is_kept_beside_the_answer_and_the_budget_on_every_row(tmp_path, api_env, store, mode):
    """Gemini (asked for its thoughts whenever a budget is set) and Anthropic return thinking as
    text: stored as thought_text, never in raw_text. OpenAI returns none; a Gemini left to its
    default thinking is not asked. Every row carries the output cap and thinking it was sent with."""
    frame = _run(tmp_path, store, api_env, list(THINKERS), mode)
    thoughts = {"gemini-budget": thought_text(16), "claude-think": thought_text(64)}
    settings = {"gemini-budget": "16", "gemini-off": "off", "gpt-medium": "medium", "claude-think": "1024"}
    for row in frame.iter_rows(named=True):
        assert row["thought_text"] == thoughts.get(row["system"]), row["system"]
        assert (row["max_output_tokens"], row["thinking"]) == (2048, settings.get(row["system"]))
        assert "considering" not in row["raw_text"]


@pytest.mark.parametrize("stream", [True, False])
def test_an_openai_compatible_servers_reasoning_content_is_kept_as_thought_text(
    tmp_path, server, store, monkeypatch, stream
):
    monkeypatch.setenv("LOFT_TEST_VLLM_URL", f"{server.url}/v1")
    entry = {
        "name": "vllm-thinker",
        "provider": "openai_compatible",
        "model": "open/reasoner",
        "base_url_env": "LOFT_TEST_VLLM_URL",
        "context_window": 100_000,
        "stream": stream,
        "generation": {"max_output_tokens": 512, "thinking": "low"},
    }
    frame = runner.run(
        inputs(make_prompts(1, 0)), systems_from(tmp_path, [entry]), store, "128k", {}, emit=lambda line: None
    )
    row = frame.row(0, named=True)
    assert (row["status"], row["thought_text"], row["thinking"]) == (
        "ok",
        thought_text(THINKING_WORDS_BY_EFFORT["low"]),
        "low",
    )
    assert row["raw_text"].startswith("Final Answer: [") and "considering" not in row["raw_text"]
    assert server.state.generation_requests()[0].body["reasoning_effort"] == "low"


def test_the_thinking_setting_runs_a_system_under_its_own_name(tmp_path):
    """The `thinking` setting gives a system other thinking for a build: it runs as
    <name>@thinking-<value> (its own runs and request keys), stays selectable by its file name,
    is checked as generation.thinking is, and leaves a system given its own setting as it was."""
    entries = [gemini_system("flash", generation={"max_output_tokens": 4096, "thinking": 2048}), openai_system()]
    systems = load_systems(write_systems(tmp_path / "systems.yaml", entries, {}))
    changed = with_thinking(systems, "{flash: 0, gpt-fixture: high}")
    assert (changed["flash"].name, changed["flash"].thinking) == ("flash@thinking-0", 0)
    assert (changed["gpt-fixture"].name, changed["gpt-fixture"].thinking) == ("gpt-fixture@thinking-high", "high")
    assert systems["flash"].name == "flash"
    assert with_thinking(systems, {"flash": 2048})["flash"] is systems["flash"]
    assert with_thinking(systems, "") is systems
    for value, message in [
        ({"flsh": 0}, "thinking: unknown system(s) ['flsh'] ('flsh': did you mean 'flash'?)"),
        ({"gpt-fixture": 100}, "thinking gpt-fixture: provider openai takes effort, not 100"),
        ({"flash": 4096}, "a budget of 4096 leaves no room for the answer under max_output_tokens 4096"),
        ("[0]", "thinking must map system names to a budget, off or an effort"),
    ]:
        with pytest.raises(ConfigurationError) as refused:
            with_thinking(systems, value)
        assert message in str(refused.value) and "\n" not in str(refused.value)


def test_thinking_that_spends_the_output_limit_is_an_error_not_an_empty_answer(tmp_path, api_env, store):
    """Gemini's max_output_tokens counts thoughts: 64 words of thinking under a limit of 32 leave
    no answer (finish MAX_TOKENS), a permanent error that names the setting."""
    api_env.state.thinking_words = 64
    systems = systems_from(tmp_path, [gemini_system(cache={})])
    frame = runner.run(inputs(make_prompts(1, 0)), systems, store, "128k", PRICES, emit=lambda line: None)
    assert frame.select("status", "attempts").row(0) == ("error", 1)
    assert "raise max_output_tokens" in frame["error"][0]


def test_estimates_price_the_thinking_budget_as_output(tmp_path):
    budget, effort, default = systems_from(
        tmp_path,
        [
            gemini_system("budget", generation={"max_output_tokens": 2048, "thinking": 1000}),
            openai_system("effort", generation={"max_output_tokens": 4096, "thinking": "high"}),
            gemini_system("default"),
        ],
        expected_output_tokens=50,
    )
    assert (budget.expected_billed_output_tokens, effort.expected_billed_output_tokens) == (1050, 4096)
    assert default.expected_billed_output_tokens == 50


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (openai_system(generation={"thinking": 2000}), "provider openai takes effort, not 2000"),
        (openai_system(generation={"thinking": "off"}), "provider openai takes effort, not 'off'"),
        (anthropic_system(generation={"thinking": "high"}), "provider anthropic takes budget or off, not 'high'"),
        (anthropic_system(generation={"temperature": 1, "max_output_tokens": 4096, "thinking": 512}),
         "Anthropic takes a budget of at least 1024 tokens"),
        (anthropic_system(generation={"max_output_tokens": 4096, "thinking": 2048}),
         "Anthropic thinks only at temperature 1"),
        (gemini_system(generation={"max_output_tokens": 1024, "thinking": 1024}),
         "a budget of 1024 leaves no room for the answer under max_output_tokens 1024"),
        (gemini_system(generation={"thinking": "lots"}), "'lots' is not a budget in tokens, off, or one of"),
        (gemini_system(generation={"thinking": True}), "True is not a budget in tokens"),
        ({"name": "bm25x", "provider": "bm25", "generation": {"thinking": 10}}, "provider bm25 takes no thinking"),
    ],
)  # fmt: skip
def test_a_thinking_setting_the_provider_cannot_take_is_refused_in_one_line(tmp_path, entry, message):
    with pytest.raises(ConfigurationError, match="generation.thinking") as refused:
        systems_from(tmp_path, [entry])
    assert message in str(refused.value) and "\n" not in str(refused.value)
