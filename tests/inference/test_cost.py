"""Cost estimates from token counts and prices, actual cost from usage, the max_cost_usd guard."""

from __future__ import annotations

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from loft_warehouse.errors import BadInputError, CostLimitError
from loft_warehouse.inference import cost, runner
from loft_warehouse.inference.systems import Prices, System
from tests.inference.support import (
    PREFIX_A,
    inputs,
    make_prompts,
    needs_tiktoken_files,
    openai_system,
    prompt_row,
    systems_from,
)

PRICES = Prices(input=2.0, cached_input=0.5, output=10.0)


def test_actual_cost_splits_cached_and_uncached_input():
    # 1000 input of which 400 cached, 100 output: (600*2 + 400*0.5 + 100*10) / 1e6
    assert cost.actual_cost(PRICES, 1000, 400, 100) == pytest.approx(2400 / 1e6)
    assert cost.actual_cost(Prices(input=2.0), 1000, 0, 100) is None
    assert cost.actual_cost(Prices(input=2.0), 1000, 0, 0) == pytest.approx(2000 / 1e6)
    assert cost.actual_cost(PRICES, None, None, None) is None


def test_system_prices_override_the_seed_field_by_field():
    seed = {"m": Prices(1.0, 0.25, 4.0), "n": Prices(3.0, None, 6.0)}
    assert cost.resolve_prices(System("a", "openai", "m", prices=Prices(output=9.0)), seed) == Prices(
        1.0, 0.25, 9.0, 1.0
    )
    # No cached discount known: cached input costs the input price; no cache-write surcharge
    # known: a write costs the input price; no batch ratio known: unknown.
    assert cost.resolve_prices(System("b", "openai", "n"), seed) == Prices(3.0, 3.0, 6.0, 3.0)
    assert cost.resolve_prices(System("c", "bm25", "bm25s"), seed) == Prices(0.0, 0.0, 0.0, 0.0, 1.0)
    assert cost.resolve_prices(System("d", "gemini", "unknown"), seed) == Prices()


def test_estimate_per_dataset_with_and_without_caching():
    prompts = pl.DataFrame(
        {
            "task": ["retrieval"] * 3,
            "dataset": ["nq"] * 3,
            "variant": ["default"] * 3,
            "prefix_id": ["p1", "p1", "p1"],
            "n_tokens_prefix": [1000, 1000, 1000],
            "n_tokens_total": [1010, 1020, 1030],
        }
    )
    system = System("s", "openai", "m", prices=PRICES, expected_output_tokens=50)
    table = cost.estimate(prompts, [system], {}, "128k")
    row = table.row(0, named=True)
    assert (row["n_requests"], row["n_prefixes"], row["input_tokens"]) == (3, 1, 3060)
    assert (row["cacheable_tokens"], row["output_tokens"]) == (2000, 150)
    # no cache: 3060*2 + 150*10 = 7620; cached: 1060*2 + 2000*0.5 + 1500 = 4620 (per 1e6)
    assert row["cost_usd_no_cache"] == pytest.approx(7620 / 1e6)
    assert row["cost_usd_with_cache"] == pytest.approx(4620 / 1e6)
    text = cost.format_estimate(table)
    assert "retrieval/nq" in text and "total s" in text


def test_prompts_that_open_with_their_question_cache_nothing_and_cost_what_they_send():
    """R&R's ICR prompts share a prefix id but open with the question (head): no cache reads, no
    writes, and never a negative estimate (issue 35: an unsigned count minus one wrapped round)."""
    prompts = pl.DataFrame(
        {
            "task": ["rag"] * 2,
            "dataset": ["nq"] * 2,
            "variant": ["default"] * 2,
            "method": ["icr"] * 2,
            "prefix_id": ["p1", "p1"],
            "head": ["question one\n", "question two\n"],
            "n_tokens_prefix": [1000, 1000],
            "n_tokens_total": [1010, 1020],
        }
    )
    system = System("s", "openai", "m", prices=PRICES, expected_output_tokens=50)
    row = cost.estimate(prompts, [system], {}, "128k").row(0, named=True)
    assert (row["n_requests"], row["input_tokens"], row["cacheable_tokens"], row["cache_write_tokens"]) == (
        2,
        2030,
        0,
        0,
    )
    assert row["cost_usd_with_cache"] == row["cost_usd_no_cache"] == pytest.approx((2030 * 2 + 100 * 10) / 1e6)


def test_estimate_counts_prompts_over_the_window_in_the_systems_tokenizer():
    needs_tiktoken_files()
    suffix = "====== Now let's start! ======\nquery a0\n"
    # qa0: 84 o200k tokens as sent (see test_window); qa1 one more. Both are over the
    # 84-token limit in SentencePiece (1000), so only the tokenizer can keep qa0.
    prompts = pl.DataFrame(
        [
            prompt_row("pa", "qa0", suffix, n_tokens_total=1000),
            prompt_row("pa", "qa1", suffix + "x\n", n_tokens_total=1000),
        ]
    ).with_columns(pl.lit("").alias("head"))
    system = System("s", "openai", "m", context_window=116, generation={"max_output_tokens": 32},
                    tokenizer="tiktoken:o200k_base", prices=PRICES)  # fmt: skip
    with_texts = cost.estimate(prompts, [system], {}, "128k", {"pa": PREFIX_A})
    # The estimate still charges the SentencePiece count of what is sent.
    assert with_texts.select("n_requests", "input_tokens").row(0) == (1, 1000)
    assert cost.estimate(prompts, [system], {}, "128k").height == 0


def test_seed_prices_load_and_bad_rows_name_the_line(tmp_path):
    prices = cost.load_prices()
    assert prices["gemini-1.5-pro-001"] == Prices(3.5, 0.875, 10.5)
    assert prices["gpt-4o-2024-05-13"].cached_input is None
    bad = tmp_path / "prices.csv"
    bad.write_text("model,input_usd_per_mtok,cached_input_usd_per_mtok,output_usd_per_mtok\na,1,1,1\nb,x,1,1\n")
    with pytest.raises(BadInputError, match=r"prices.csv:3: input_usd_per_mtok 'x'"):
        cost.load_prices(bad)


def test_cache_writes_and_reads_are_priced_apart_and_batch_halves_every_price():
    # Claude 3 Opus's prices: input 15, cache read 1.5, output 75, cache write 18.75, batch 0.5.
    opus = Prices(15.0, 1.5, 75.0, 18.75, 0.5)
    # 10,000 prompt tokens: 8,000 written to the cache, 0 read, 2,000 plain; 100 output:
    # 2000*15 + 8000*18.75 + 100*75 = 30,000 + 150,000 + 7,500 = 187,500 per 1e6.
    assert cost.actual_cost(opus, 10_000, 0, 100, 8_000) == pytest.approx(0.1875)
    # The next query reads them: 2000*15 + 8000*1.5 + 100*75 = 49,500 per 1e6; batch: half.
    assert cost.actual_cost(opus, 10_000, 8_000, 100, 0) == pytest.approx(0.0495)
    assert cost.actual_cost(opus, 10_000, 8_000, 100, 0, batch=True) == pytest.approx(0.02475)
    assert cost.actual_cost(Prices(15.0, 1.5, 75.0), 10_000, 0, 100, 0, batch=True) is None
    # The estimate: 3 queries of one 1000-token prefix (+10, +20, +30), 50 output each:
    # with cache, the prefix is written once (1000 at 18.75), read twice (2000 at 1.5), and
    # 60 plain tokens at 15: 18,750 + 3,000 + 900 + 150*75 = 33,900 per 1e6; batch: half.
    prompts = pl.DataFrame({
        "task": ["retrieval"] * 3, "dataset": ["nq"] * 3, "variant": ["default"] * 3, "prefix_id": ["p1"] * 3,
        "n_tokens_prefix": [1000] * 3, "n_tokens_total": [1010, 1020, 1030],
    })  # fmt: skip
    system = System("c", "anthropic", "m", prices=opus, expected_output_tokens=50, mode="batch")
    row = cost.estimate(prompts, [system], {}, "128k").row(0, named=True)
    assert (row["cacheable_tokens"], row["cache_write_tokens"], row["mode"]) == (2000, 1000, "batch")
    assert row["cost_usd_no_cache"] == pytest.approx((3060 * 15 + 150 * 75) / 1e6)
    assert row["cost_usd_with_cache"] == pytest.approx(33_900 / 1e6)
    assert row["cost_usd_batch"] == pytest.approx((3060 * 15 + 150 * 75) / 2e6)
    assert row["cost_usd_batch_with_cache"] == pytest.approx(33_900 / 2e6)


def test_paper_costs_are_reproduced_from_the_seed_for_all_three_models():
    # LOFT 128k test: ~448M input tokens: $2,240 on GPT-4o at $5/M, $6,720 on Claude 3 Opus at $15/M.
    prices = cost.load_prices()
    assert 448e6 * prices["gpt-4o-2024-05-13"].input / 1e6 == pytest.approx(2240)
    assert 448e6 * prices["claude-3-opus-20240229"].input / 1e6 == pytest.approx(6720)


def test_paper_cost_is_reproduced_from_the_seed():
    # LOFT 128k test: ~448M input tokens cost $1,568 on Gemini 1.5 Pro at $3.50/M.
    assert 448e6 * cost.load_prices()["gemini-1.5-pro-001"].input / 1e6 == pytest.approx(1568)


def test_run_above_max_cost_is_refused_before_any_call(tmp_path, api_env, store):
    systems = systems_from(tmp_path, [openai_system(prices={"input": 1000.0, "output": 0.0})])
    # 5 prompts x 110 tokens x $1000/M = $0.55
    with pytest.raises(CostLimitError, match=r"estimated \$0.55 exceeds max_cost_usd=\$0.50"):
        runner.run(inputs(), systems, store, "128k", {}, max_cost_usd=0.5, emit=lambda line: None)
    assert api_env.state.requests == []
    frame = runner.run(inputs(), systems, store, "128k", {}, max_cost_usd=0.6, emit=lambda line: None)
    assert frame.height == 5


def test_stored_responses_do_not_count_against_the_limit(tmp_path, api_env, store):
    systems = systems_from(tmp_path, [openai_system(prices={"input": 1000.0, "output": 0.0})])
    runner.run(inputs(make_prompts(3, 0)), systems, store, "128k", {}, emit=lambda line: None)
    # 2 new prompts x 110 tokens = $0.22 <= 0.25 although all 5 would cost $0.55.
    frame = runner.run(inputs(), systems, store, "128k", {}, max_cost_usd=0.25, emit=lambda line: None)
    assert frame.height == 5


def test_the_plan_prices_what_this_build_sends_beside_the_full_run(tmp_path, api_env, store):
    systems = systems_from(tmp_path, [openai_system(prices={"input": 1000.0, "output": 0.0})])
    runner.run(inputs(make_prompts(3, 0)), systems, store, "128k", {}, emit=lambda line: None)
    # Full run: 5 prompts x 110 tokens = $0.55 plus $1.00 of later stages. This build sends
    # 2 prompts ($0.22) and 2/5 of the later stages ($0.40).
    full_runs = {"gpt-fixture": cost.FullRun(full_usd=1.55, later_usd=1.0)}
    lines: list[str] = []
    with pytest.raises(CostLimitError, match=r"estimated \$0.62 exceeds max_cost_usd=\$0.60"):
        runner.run(inputs(), systems, store, "128k", {}, max_cost_usd=0.6, emit=lines.append, full_runs=full_runs)
    plan = next(line for line in lines if line.startswith("cost of this build"))
    row = next(line for line in plan.splitlines() if line.startswith("gpt-fixture"))
    assert row.split() == ["gpt-fixture", "5", "3", "0", "2", "0.62", "1.55"]
    assert lines[-1] == "max_cost_usd=$0.60: this build's estimate is $0.62"
    assert len(api_env.state.requests) == 3
    frame = runner.run(inputs(), systems, store, "128k", {}, max_cost_usd=0.7, emit=lines.append, full_runs=full_runs)
    assert frame.height == 5


def test_a_limit_without_a_key_says_it_did_not_apply(tmp_path, api_env, store, monkeypatch):
    monkeypatch.delenv("LOFT_TEST_OPENAI_KEY")
    systems = systems_from(tmp_path, [openai_system(prices={"input": 1000.0, "output": 0.0})])
    full_runs = {"gpt-fixture": cost.FullRun(full_usd=1.55, later_usd=1.0)}
    lines: list[str] = []
    frame = runner.run(inputs(), systems, store, "128k", {}, max_cost_usd=50, emit=lines.append, full_runs=full_runs)
    assert set(frame["status"]) == {"skipped_no_credentials"}
    row = next(line for line in lines[-2].splitlines() if line.startswith("gpt-fixture"))
    assert row.split()[:2] == ["gpt-fixture", "5"] and "no key (set LOFT_TEST_OPENAI_KEY)" in row
    assert row.split()[-1] == "1.55"
    assert lines[-1] == "max_cost_usd=$50.00 did not apply: this build sends no paid request (gpt-fixture: no key)"


def test_full_runs_price_each_system_in_its_own_mode():
    base = {"model": "m", "size": "128k", "task": "rag", "dataset": "nq", "method": "rag_top5", "executor": "x"}
    estimate = pl.DataFrame(
        [
            {**base, "system": "a", "mode": "stream", "stage": 1, "is_estimated_from_settings": False,
             "cost_usd_no_cache": 2.0, "cost_usd_batch": 1.0},
            {**base, "system": "a", "mode": "stream", "stage": 2, "is_estimated_from_settings": True,
             "cost_usd_no_cache": 4.0, "cost_usd_batch": 2.0},
            {**base, "system": "b", "mode": "batch", "stage": 1, "is_estimated_from_settings": False,
             "cost_usd_no_cache": 2.0, "cost_usd_batch": 1.0},
            {**base, "system": "c", "mode": "stream", "stage": 1, "is_estimated_from_settings": False,
             "cost_usd_no_cache": None, "cost_usd_batch": None},
        ]
    )  # fmt: skip
    assert cost.full_runs(estimate) == {
        "a": cost.FullRun(6.0, 4.0),
        "b": cost.FullRun(1.0, 0.0),
        "c": cost.FullRun(None, 0.0),
    }


@pytest.mark.parametrize("mode", ["stream", "batch"])
@pytest.mark.parametrize(
    ("provider", "model"),
    [("openai", "gpt-4o-2024-08-06"), ("gemini", "gemini-1.5-pro-002"), ("anthropic", "claude-opus-4-5-20251101")],
)
def test_every_method_costs_at_least_nothing_and_caching_never_costs_more(provider, model, mode):
    """Issue 35: over every catalogued method, each provider's seed prices and both modes, each
    stage's estimate is >= 0, with caching <= without, and at the batch price <= streamed."""
    from loft_warehouse.design import Design
    from loft_warehouse.methods.catalogue import METHODS

    seed = cost.load_prices()
    assert model in seed
    system = System("s", provider, model, expected_output_tokens=100, mode=mode)
    rows = []
    names = [*METHODS, "rag_top5", "rag_top5_verify", "rag_top5_justified_cot_quest_verify"]
    for name in names:
        # nq: prefixes shared by 3, 1 and 0 prompts that open with them; hotpotqa: only prompts
        # that open with their question (ICR's `head`): every branch of the cache arithmetic.
        shapes = {"nq": [("a", ""), ("a", ""), ("a", ""), ("b", ""), ("c", "q?")], "hotpotqa": [("d", "q?")] * 2}
        for dataset, shape in shapes.items():
            for i, (prefix, head) in enumerate(shape):
                rows.append(
                    {"task": "rag", "dataset": dataset, "variant": "default", "method": name, "stage": 1,
                     "prefix_id": prefix, "head": head, "n_tokens_prefix": 1000, "n_tokens_total": 1010 + i,
                     "qid": f"q{i}", "turn": 0}
                )  # fmt: skip
    prompts = pl.DataFrame(rows)
    corpus = pl.DataFrame({"task": ["rag", "rag"], "dataset": ["nq", "hotpotqa"], "n_tokens": [120, 150]})
    table = pl.concat(
        [
            cost.estimate(prompts, [system], seed, "128k"),
            cost.later_stages(prompts, corpus, Design.from_config({}), [system], seed, "128k"),
        ]
    )
    assert set(table["method"]) == set(names)
    money = ["cost_usd_no_cache", "cost_usd_with_cache", "cost_usd_batch", "cost_usd_batch_with_cache"]
    assert table.select(pl.col(money).null_count()).sum_horizontal().item() == 0
    bad = table.filter(
        pl.any_horizontal(pl.col(money) < 0)
        | (pl.col("cost_usd_with_cache") > pl.col("cost_usd_no_cache") + 1e-12)
        | (pl.col("cost_usd_batch") > pl.col("cost_usd_no_cache") + 1e-12)
        | (pl.col("cost_usd_batch_with_cache") > pl.col("cost_usd_batch") + 1e-12)
        | (pl.col("cacheable_tokens") < 0)
        | (pl.col("cacheable_tokens") + pl.col("cache_write_tokens") > pl.col("input_tokens"))
    )
    assert bad.is_empty(), bad.select("method", "stage", *money)


def test_actual_cost_is_stored_per_response(tmp_path, api_env, store):
    systems = systems_from(tmp_path, [openai_system(prices={"input": 2.0, "cached_input": 0.5, "output": 10.0})])
    frame = runner.run(inputs(make_prompts(1, 0)), systems, store, "128k", {}, emit=lambda line: None)
    row = frame.row(0, named=True)
    expected = (row["input_tokens"] * 2.0 + row["output_tokens"] * 10.0) / 1e6
    assert row["cost_usd"] == pytest.approx(expected)


def test_limit_parsing():
    assert cost.parse_limit("") is None
    assert cost.parse_limit(None) is None
    assert cost.parse_limit("12.5") == 12.5
    with pytest.raises(Exception, match="must be a number"):
        cost.parse_limit("lots")


def test_the_estimate_is_kept_until_a_prompt_a_price_or_a_system_changes(tmp_path, monkeypatch):
    import duckdb

    from loft_warehouse.inference import warehouse
    from tests.inference.support import write_systems
    from tests.spies import spy

    monkeypatch.setenv("LOFT_CACHE_DIR", str(tmp_path / "cache"))
    calls = spy(monkeypatch, cost, "estimate")
    con = duckdb.connect()
    prices = pl.read_csv("seeds/model_prices.csv", infer_schema=False)
    con.register("prompts", make_prompts())
    con.register("prices", prices)

    def estimated_with(window: int) -> pl.DataFrame:
        systems = write_systems(tmp_path / f"systems_{window}.yaml", [openai_system(context_window=window)])
        relations = con.sql("select * from prompts"), con.sql("select * from prices")
        return warehouse.cost_estimates("128k", str(systems), *relations)

    first = estimated_with(1000)
    assert_frame_equal(estimated_with(1000), first)
    assert len(calls) == 1 and first["n_requests"].sum() == 5
    estimated_with(5000)
    assert len(calls) == 2
    con.register("prompts", make_prompts().head(4))
    assert estimated_with(5000)["n_requests"].sum() == 4 and len(calls) == 3
    con.register("prices", prices.with_columns(pl.col("input_usd_per_mtok").str.replace("^2.50$", "3.00")))
    assert estimated_with(5000)["input_usd_per_mtok"].unique().to_list() == [3.0] and len(calls) == 4
