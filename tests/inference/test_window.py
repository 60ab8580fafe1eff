"""The context-window check: the system's own tokenizer decides every prompt, SentencePiece without one."""

from __future__ import annotations

import polars as pl
import pytest

from loft_warehouse.inference import runner
from tests.inference.support import (
    PREFIX_A,
    gemini_system,
    inputs,
    needs_tiktoken_files,
    openai_system,
    prompt_row,
    systems_from,
)

SUFFIX = "====== Now let's start! ======\nquery a0\n"
# As sent, in o200k_base: user (3) + "user" (1) + PREFIX_A (66) + SUFFIX (11) + priming (3) = 84.
PROMPT_TOKENS = 84


def _prompts(*rows: tuple[str, str, int]) -> pl.DataFrame:
    return pl.DataFrame([prompt_row("pa", qid, suffix, n_tokens_total=sp) for qid, suffix, sp in rows])


def _run(tmp_path, store, prompts, lines, **system):
    systems = systems_from(tmp_path, [openai_system(**system)])
    return runner.run(inputs(prompts), systems, store, "128k", {}, emit=lines.append).sort("qid")


def test_over_the_window_in_sentencepiece_but_within_it_in_o200k_is_sent(tmp_path, api_env, store):
    needs_tiktoken_files()
    lines: list[str] = []
    # max_output_tokens 32: a window of 116 leaves 84 prompt tokens, exactly qa0's o200k count;
    # qa1 is one token longer ("query a0 x": " x" is one more token).
    prompts = _prompts(("qa0", SUFFIX, 1000), ("qa1", SUFFIX.replace("a0", "a0 x"), 1000), ("qa2", SUFFIX, 50))
    frame = _run(tmp_path, store, prompts, lines, context_window=PROMPT_TOKENS + 32, tokenizer="tiktoken:o200k_base")
    assert frame["status"].to_list() == ["ok", "skipped_too_long", "ok"]
    # qa0 and qa2 send the same messages: one call answers both.
    assert len(api_env.state.generation_requests()) == 1
    assert "gpt-fixture: 3 prompt(s) counted in o200k_base tokens: 2 within 84" in lines
    assert "gpt-fixture: 1 prompt(s) skipped_too_long (> 84 o200k_base tokens)" in lines


def test_without_a_tokenizer_the_sentencepiece_count_decides(tmp_path, api_env, store):
    lines: list[str] = []
    frame = _run(tmp_path, store, _prompts(("qa0", SUFFIX, 1000)), lines, context_window=PROMPT_TOKENS + 32)
    assert frame["status"].to_list() == ["skipped_too_long"]
    assert lines[0] == "gpt-fixture: 1 prompt(s) skipped_too_long (> 84 SentencePiece tokens)"
    assert api_env.state.generation_requests() == []


def test_a_prompt_within_the_window_in_sentencepiece_but_over_it_in_o200k_is_skipped(tmp_path, api_env, store):
    needs_tiktoken_files()
    lines: list[str] = []
    # 50 SentencePiece tokens fit a window of 83 prompt tokens; the 84 o200k tokens sent do not.
    frame = _run(tmp_path, store, _prompts(("qa0", SUFFIX, 50)), lines, context_window=PROMPT_TOKENS - 1 + 32,
                 tokenizer="tiktoken:o200k_base")  # fmt: skip
    assert frame["status"].to_list() == ["skipped_too_long"]
    assert api_env.state.generation_requests() == []
    assert "gpt-fixture: 1 prompt(s) counted in o200k_base tokens: 0 within 83" in lines


@pytest.mark.parametrize(("window", "statuses"), [(91, ["ok", "skipped_too_long"]), (92, ["ok", "ok"])])
def test_a_later_turn_is_counted_again_with_the_earlier_answers(tmp_path, api_env, store, window, statuses):
    needs_tiktoken_files()
    api_env.state.answer = lambda prompt: "Final Answer: ['x']"
    second = "Q: first\n<<MODEL_ANSWER turn=0>>Q: second\n"
    # Turn 1 as sent: user 3 + 1 + PREFIX_A 66 + "Q: first\n" 4; assistant 3 + 1 + answer;
    # user 3 + 1 + "Q: second\n" 4; priming 3. With "[]" fed back (1) that is 90, with what
    # LOFT feeds back for the real answer, "['x']" (3), it is 92.
    prompts = pl.DataFrame(
        [
            prompt_row(
                "pa",
                "conv",
                suffix,
                turn=turn,
                n_turns=2,
                n_tokens_total=sp,
                prompt_id=f"sql/ds_pa/ds_pa/default/conv/{turn}",
            )  # fmt: skip
            for turn, suffix, sp in ((0, "Q: first\n", 50), (1, second, 1000))
        ]
    )
    lines: list[str] = []
    systems = systems_from(tmp_path, [openai_system(context_window=window + 32, tokenizer="tiktoken:o200k_base")])
    frame = runner.run(
        runner.RunInputs(prompts, {"pa": PREFIX_A}), systems, store, "128k", {}, emit=lines.append,
    )  # fmt: skip
    assert frame.sort("turn")["status"].to_list() == statuses
    assert len(api_env.state.generation_requests()) == statuses.count("ok")
    assert f"gpt-fixture: 2 prompt(s) counted in o200k_base tokens: 2 within {window}" in lines
    skipped_late = f"1 more prompt(s) skipped_too_long with their earlier answers (> {window} o200k_base tokens)"
    assert (f"gpt-fixture: {skipped_late}" in lines) == (statuses[1] == "skipped_too_long")


@pytest.mark.parametrize(("spare", "status"), [(20, "ok"), (-20, "skipped_too_long")])
def test_gemini_counts_with_count_tokens_once_per_prefix(tmp_path, api_env, store, spare, status):
    from loft_warehouse.inference.fixture_server import count_words

    sent = count_words(PREFIX_A + SUFFIX)  # the fixture's countTokens: words
    lines: list[str] = []
    prompts = _prompts(("qa0", SUFFIX, 1000), ("qa1", SUFFIX.replace("a0", "a1"), 1000))
    systems = systems_from(tmp_path, [gemini_system(context_window=sent + spare + 32, cache={})])
    frame = runner.run(inputs(prompts), systems, store, "128k", {}, emit=lines.append).sort("qid")
    assert frame["status"].to_list() == [status, status]
    counted = [r for r in api_env.state.requests if r.api == "gemini_count"]
    # The prefix once, each prompt's rest once: 3 calls for 2 prompts.
    assert len(counted) == 3
    fit = 2 if status == "ok" else 0
    assert f"gemini-fixture: 2 prompt(s) counted in Gemini tokens: {fit} within {sent + spare}" in lines


def test_the_cost_estimate_makes_no_count_tokens_call(tmp_path, api_env):
    from loft_warehouse.inference import cost

    systems = systems_from(tmp_path, [gemini_system(context_window=10)])
    prompts = _prompts(("qa0", SUFFIX, 1000)).with_columns(pl.lit(20).alias("n_tokens_prefix"))
    estimate = cost.estimate(prompts, systems, {}, "128k", {"pa": PREFIX_A})
    assert estimate.height == 0  # over the window in SentencePiece, which decides here
    assert not [r for r in api_env.state.requests if r.api == "gemini_count"]


def test_without_the_local_extra_the_estimate_still_prices_a_local_system(tmp_path, monkeypatch):
    from loft_warehouse.inference import cost
    from loft_warehouse.inference.providers import local

    monkeypatch.setattr(local, "llama_available", lambda: False)
    entry = {"name": "tiny-local", "provider": "local", "model": "m", "context_window": 1000}
    systems = systems_from(tmp_path, [entry])
    assert systems[0].tokenizer == "gguf"
    prompts = _prompts(("qa0", SUFFIX, 100)).with_columns(pl.lit(20).alias("n_tokens_prefix"))
    estimate = cost.estimate(prompts, systems, {}, "32k", {"pa": PREFIX_A})
    assert estimate["n_requests"].to_list() == [1]
    with pytest.raises(runner.ConfigurationError, match="gguf needs llama-cpp-python: make setup-local"):
        runner.run(inputs(prompts), systems, None, "32k", {}, emit=lambda line: None)
