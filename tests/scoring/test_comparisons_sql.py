"""Paired comparisons and the cost ledger (issue 11, item 2), on hand-made tables with values
computed by hand (the paired_comparisons and cost_ledger models)."""

from __future__ import annotations

import duckdb
import pytest

from loft_warehouse.scoring.duckdb_functions import register
from loft_warehouse.scoring.intervals import bootstrap_interval
from tests.scoring.sqlkit import model_sql, primary_turns_view

SEED = 7
RIGHT_A = set(range(8))  # a answers q0..q7 right
RIGHT_B = {0, 1, 8}  # b answers q0, q1 and q8 right


def _scores(con: duckdb.DuckDBPyConnection) -> None:
    con.execute(
        "create table scores (size varchar, source varchar, system varchar, method varchar, variant varchar, "
        "task varchar, dataset varchar, split varchar, metric_name varchar, qid varchar, turn bigint, value double, "
        "is_answered boolean, is_primary boolean, rule varchar, grain varchar)"
    )
    rows = []
    for system, right, qids, answered in (
        ("a", RIGHT_A, range(10), True),
        ("b", RIGHT_B, range(10), True),
        ("c", {0}, range(5), True),  # scored on 5 of the 10 queries only
        ("api", set(), range(10), False),  # never answered
    ):
        for q in qids:
            value = 1.0 if q in right else 0.0
            rows.append(("128k", "inference", system, "cic", "default", "retrieval", "nq", "test", "recall@1_loft",
                         f"q{q}", 0, value, answered, True, "loft", "turn"))  # fmt: skip
    con.executemany("insert into scores values (" + ", ".join("?" * 16) + ")", rows)
    primary_turns_view(con)


def test_paired_comparison_by_hand() -> None:
    con = register(duckdb.connect())
    _scores(con)
    con.execute(f"create table pairs as {model_sql('paired_comparisons', seed=SEED)}")
    rows = con.sql(
        "select system_a, system_b, n_a, n_b, n_common, is_same_queries, mean_a, mean_b, difference, "
        "n_only_a, n_only_b, mcnemar_p, note from pairs order by system_a, system_b"
    ).fetchall()
    assert [r[:2] for r in rows] == [("a", "b"), ("a", "c"), ("b", "c")]  # api never answered: left out
    a_b = rows[0]
    assert a_b[2:8] == (10, 10, 10, True, 0.8, 0.3)
    assert a_b[8] == pytest.approx(-0.5)
    # discordant: q2..q7 right only in a (6), q8 right only in b (1); exact p = 2 * P(X <= 1 | 7, 1/2)
    assert a_b[9:11] == (6, 1)
    assert a_b[11] == pytest.approx(2 * (1 + 7) / 2**7)
    assert a_b[12] is None
    differences = [(1.0 if q in RIGHT_B else 0.0) - (1.0 if q in RIGHT_A else 0.0) for q in range(10)]
    expected = bootstrap_interval(differences, SEED)
    low, high = con.sql("select difference_ci_low, difference_ci_high from pairs where system_b = 'b'").fetchone()
    assert (low, high) == (pytest.approx(expected.low), pytest.approx(expected.high))
    a_c = rows[1]
    assert a_c[2:6] == (10, 5, 5, False)
    assert a_c[6:12] == (None, None, None, None, None, None)
    assert a_c[12] == "not compared: the arms were scored on different query turns (10 and 5, 5 in common)"


def test_cost_ledger_by_hand() -> None:
    con = register(duckdb.connect())
    _scores(con)
    con.execute(
        "create table estimates as select * from (values "
        "('a', 'a', 'retrieval', 'nq', 'cic', 10::bigint, 2.0, 1.0, 1.0, 0.5, 2.5, 1.25, 2.5, 0.5), "
        "('b', 'b', 'retrieval', 'nq', 'cic', 2::bigint, 1.0, 0.5, 0.5, 0.25, 15.0, 1.5, 18.75, 0.5)) "
        "as t(system, executor, task, dataset, method, n_requests, cost_usd_no_cache, cost_usd_with_cache, "
        "cost_usd_batch, cost_usd_batch_with_cache, input_usd_per_mtok, cached_input_usd_per_mtok, "
        "cache_write_usd_per_mtok, batch_price_ratio)"
    )
    con.execute(
        "create table responses as select 'inference' as source, 'a' as system, 'retrieval' as task, "
        "'nq' as dataset, 'cic' as method, "
        "'ok' as status, 100000::bigint as input_tokens, 80000::bigint as cached_tokens, "
        "0::bigint as cache_write_tokens, 10::bigint as output_tokens, 0.16::double as cost_usd, "
        "range::double as latency_s, null::varchar as batch_id, 4::bigint as thinking_tokens from range(10) "
        # b: two batch results, one writing 8,000 prefix tokens to the cache, one reading them
        "union all select 'inference', 'b', 'retrieval', 'nq', 'cic', 'ok', 10000, 8000 * (range = 1)::int, "
        "8000 * (range = 0)::int, 10, 0.1, null, 'x', null from range(2)"
    )
    ledger = model_sql("cost_ledger", cost_estimates="estimates")
    columns = (
        "n_responses, input_tokens, cached_tokens, uncached_input_tokens, actual_usd, n_correct, usd_per_correct, "
        "caching_saved_usd, estimated_usd_no_cache, estimated_usd_batch, estimated_usd_batch_with_cache, n_batch, "
        "n_pending, cache_write_tokens, latency_p50_s, latency_p95_s"
    )
    row = con.sql(f"select {columns} from ({ledger}) where system = 'a'").fetchone()
    assert row[:4] == (10, 1_000_000, 800_000, 200_000)
    assert row[4] == pytest.approx(1.6)
    assert row[5] == 8.0  # a is right on 8 turns
    assert row[6] == pytest.approx(0.2)
    assert row[7] == pytest.approx(800_000 * (2.5 - 1.25) / 1e6)  # $1.00 saved by the cache
    assert row[8:11] == (2.0, 1.0, 0.5)
    assert row[11:14] == (0, 0, 0)
    # latencies 0..9 s: median 4.5, p95 by linear interpolation 0.95 * 9 = 8.55
    assert row[14] == pytest.approx(4.5) and row[15] == pytest.approx(8.55)
    b = con.sql(f"select {columns} from ({ledger}) where system = 'b'").fetchone()
    assert b[0] == 2 and b[2:4] == (8000, 20000 - 8000 - 8000) and b[11:14] == (2, 0, 8000)
    # read 8,000 at 15 - 1.5 saved 0.108; wrote 8,000 at 18.75 - 15 cost 0.03 more; batch: half
    assert b[7] == pytest.approx((8000 * 13.5 - 8000 * 3.75) / 1e6 * 0.5)
    assert b[14] is None  # batch results have no comparable latency
    # thinking: a's 10 responses say 4 each; b's providers said nothing, which is not 0
    thinking = "select system, output_tokens, thinking_tokens from ({}) order by system"
    assert con.sql(thinking.format(ledger)).fetchall() == [("a", 100, 40), ("b", 20, None)]


def test_a_pair_whose_differences_never_vary_has_no_interval() -> None:
    """Two arms answering the 10 queries alike (a prompt variant that changed nothing): the
    bootstrap of ten zero differences is [0, 0], a certainty the pair does not hold; the pair
    says no information instead, and keeps its difference and McNemar's p."""
    con = register(duckdb.connect())
    con.execute(
        "create table scores as select '128k' as size, 'inference' as source, 'a' as system, 'cic' as method, "
        "v.variant, 'retrieval' as task, 'nq' as dataset, 'test' as split, 'recall@1_loft' as metric_name, "
        "'q' || q as qid, 0::bigint as turn, (q < 6)::int::double as value, true as is_answered, "
        "true as is_primary, 'loft' as rule, 'turn' as grain "
        "from range(10) t(q), (values ('default'), ('titles_only')) v(variant)"
    )
    primary_turns_view(con)
    [row] = con.sql(
        f"select difference, difference_ci_low, difference_ci_high, mcnemar_p, note "
        f"from ({model_sql('paired_comparisons', seed=SEED)})"
    ).fetchall()
    assert row[:4] == (0.0, None, None, 1.0)
    assert row[4] == "no information: all 10 paired differences are 0.0, so resampling cannot size an interval"
