"""metrics (means, counts, intervals), SQL execution accuracy per turn and per conversation,
and the leaderboard beside the paper (the metrics, scores and leaderboard models)."""

from __future__ import annotations

import math
import random
import statistics
from fractions import Fraction

import duckdb
import pytest

from loft_warehouse.scoring import duckdb_functions
from loft_warehouse.scoring.intervals import bootstrap_interval, wilson_interval
from tests.scoring.sqlkit import Scenario, insert, macros

SEED = 7


@pytest.fixture(scope="module")
def scenario() -> Scenario:
    s = Scenario()
    s.case("retrieval", "nq", "a", ["p1"], "Final Answer: ['1']", max_gold=1)
    s.case("retrieval", "nq", "b", ["p1"], "Final Answer: ['2']")
    s.case("retrieval", "nq", "c", ["p1"], "Final Answer: ['1', '2']")
    s.case("retrieval", "nq", "d", ["p1"], "no list at all")
    s.query("retrieval", "nq", "e", ["p1"])
    s.case("rag", "nq", "f1", ["red dog"], "Final Answer: ['big red dog']")  # F1 0.8
    s.case("rag", "nq", "f2", ["red dog"], "Final Answer: ['red dog']")  # F1 1
    s.case("rag", "nq", "f3", ["red dog"], "Final Answer: ['cat']")  # F1 0
    # A system that never answered (no credentials) is kept in metrics, not on the leaderboard.
    for qid in "abcde":
        s.respond(f"retrieval/nq/nq/default/{qid}/0", None, system="api", status="skipped_no_credentials")
    s.build(seed=SEED)
    insert(
        s.con,
        "paper",
        [
            dict(
                task="retrieval", dataset="nq", paper_dataset="NQ", model="Gemini 1.5 Pro", metric="recall@1", value=1.0
            ),
            dict(task="retrieval", dataset="nq", paper_dataset="NQ", model="GPT-4o", metric="recall@1", value=0.99),
            dict(
                task="retrieval", dataset="fever", paper_dataset="FEVER", model="GPT-4o", metric="recall@1", value=0.96
            ),
        ],
    )
    s.build(seed=SEED)
    return s


def _metric(s: Scenario, name: str, dataset: str = "nq", system: str = "sys") -> tuple:
    return s.con.execute(
        "select n, n_unanswered, n_empty_answer, mean, ci_low, ci_high, ci_method from metrics "
        "where metric_name = ? and dataset = ? and system = ? and task = ?",
        [name, dataset, system, "rag" if name.startswith("f1") else "retrieval"],
    ).fetchone()


def test_counts_and_wilson_interval(scenario: Scenario) -> None:
    n, unanswered, empty, mean, low, high, method = _metric(scenario, "recall@1_loft")
    # a 1, b 0, c 1, d answered but unparsable (0, empty), e missing (0, unanswered)
    assert (n, unanswered, empty, mean, method) == (5, 1, 1, 0.4, "wilson")
    expected = wilson_interval(2, 5)
    assert (low, high) == pytest.approx((expected.low, expected.high))


def test_bootstrap_interval_for_continuous_scores(scenario: Scenario) -> None:
    n, unanswered, empty, mean, low, high, method = _metric(scenario, "f1_loft")
    assert (n, unanswered, empty, method) == (3, 0, 0, "bootstrap")
    assert mean == pytest.approx(0.6)
    expected = bootstrap_interval([0.8, 1.0, 0.0], SEED)  # values ordered by qid
    assert (low, high) == pytest.approx((expected.low, expected.high))


def test_a_system_that_never_answered_is_not_run_not_a_score_of_zero(scenario: Scenario) -> None:
    n, unanswered, _, mean, low, high, _ = _metric(scenario, "recall@1_loft", system="api")
    assert (n, unanswered, mean, low, high) == (5, 5, None, None, None)
    status = scenario.con.sql("select distinct run_status from metrics where system = 'api'").fetchall()
    assert status == [("not_run",)]
    assert scenario.con.sql("select count(*) from leaderboard where system = 'api'").fetchone() == (0,)


def test_leaderboard(scenario: Scenario) -> None:
    rows = scenario.con.sql(
        "select dataset, metric, source, system, value, rank, is_primary, is_paper_metric from leaderboard "
        "order by dataset, metric, rank_group, rank, system"
    ).fetchall()
    assert rows == [  # paper rows and this warehouse's rows are ranked apart
        ("fever", "recall@1", "paper", "GPT-4o", 0.96, 1, False, True),
        ("nq", "recall@1", "paper", "Gemini 1.5 Pro", 1.0, 1, True, True),
        ("nq", "recall@1", "paper", "GPT-4o", 0.99, 2, True, True),
        ("nq", "recall@1", "inference", "sys", 0.4, 1, True, True),
        ("nq", "subspan_em", "inference", "sys", pytest.approx(2 / 3), 1, True, False),
    ]
    origins = scenario.con.sql("select distinct rank_group, corpus_origin from leaderboard order by 1").fetchall()
    assert origins == [
        ("paper", "LOFT paper Table 2: 128k release corpus, test split"),
        ("warehouse", "this warehouse: 128k test split, corpus built from an unregistered source"),
    ]


def test_a_mean_is_the_same_to_the_last_bit_whatever_order_its_values_are_summed_in() -> None:
    # A DOUBLE sum depends on the order (0.1 + 0.2 + 0.3 != 0.3 + 0.2 + 0.1): rebuilt metrics
    # differed in the last bit as DuckDB split the sum across threads differently.
    rng = random.Random(5)
    values = [rng.choice([0.1, 0.2, 0.3, 1 / 3, 2 / 3, 0.7]) * rng.random() for _ in range(500)]
    means = set()
    con = duckdb_functions.register(duckdb.connect())
    for _ in range(6):
        rng.shuffle(values)
        con.execute("create or replace table rows (k varchar, qid varchar, turn bigint, value double)")
        con.executemany("insert into rows values ('g', ?, 0, ?)", [(f"q{i:04d}", v) for i, v in enumerate(values)])
        (mean,) = con.sql(macros().scoring_means("rows", ["k"], [], 7)).project("mean").fetchone()
        means.add(mean)
    assert len(means) == 1
    exact = sum(map(Fraction, values)) / len(values)
    assert abs(Fraction(means.pop()) - exact) <= Fraction(1, 10**17)


def test_a_standard_error_is_the_same_to_the_last_bit_whatever_order_its_rows_come_in() -> None:
    """scaling_curves' standard errors (stddev_samp's result changed in the last bits between
    builds as DuckDB ordered the rows differently): the sample standard deviation over sqrt(n),
    0 for one value, from exact sums."""
    rng = random.Random(11)
    values = [rng.choice([0.0, 1.0, 0.5, 1 / 3]) * rng.random() for _ in range(3000)]
    con = duckdb_functions.register(duckdb.connect())
    errors = set()
    for _ in range(6):
        rng.shuffle(values)
        con.execute("create or replace table rows as select unnest(?::double[]) as value", [values])
        errors.add(con.sql(f"select {macros().scoring_order_free_standard_error('value')} from rows").fetchone()[0])
    assert len(errors) == 1
    assert errors.pop() == pytest.approx(statistics.stdev(values) / math.sqrt(len(values)), rel=1e-12)
    con.execute("create or replace table rows as select 0.25 as value")
    assert con.sql(f"select {macros().scoring_order_free_standard_error('value')} from rows").fetchone() == (0.0,)


def test_sql_execution_accuracy_per_turn_and_conversation() -> None:
    # c1's second turn: right under the loft rule (two decimals, any order), wrong under strict.
    s = Scenario()
    sparc = [
        ("c1", [[[1]], [[2], [3]]], ["Final Answer: [[1]]", "Final Answer: [[3.001], [2]]"]),
        ("c2", [[[1]], [[2]]], ["Final Answer: [[1]]", "Final Answer: [[9]]"]),
    ]
    for qid, golds, texts in sparc:
        for turn, (gold, text) in enumerate(zip(golds, texts, strict=True)):
            s.respond(s.query("sql", "sparc", qid, gold, turn=turn, n_turns=2, gold_sql="select x"), text)
    s.build()
    per_turn = s.con.sql(
        "select qid, turn, metric_name, value from scores where grain = 'turn' order by all"
    ).fetchall()
    assert per_turn == [
        ("c1", 0, "exec_acc_loft", 1.0),
        ("c1", 0, "exec_acc_strict", 1.0),
        ("c1", 1, "exec_acc_loft", 1.0),
        ("c1", 1, "exec_acc_strict", 0.0),
        ("c2", 0, "exec_acc_loft", 1.0),
        ("c2", 0, "exec_acc_strict", 1.0),
        ("c2", 1, "exec_acc_loft", 0.0),
        ("c2", 1, "exec_acc_strict", 0.0),
    ]
    conversations = s.con.sql(
        "select qid, turn, metric_name, value from scores where grain = 'conversation' order by all"
    ).fetchall()
    assert conversations == [
        ("c1", 1, "exec_acc_conversation_loft", 1.0),
        ("c1", 1, "exec_acc_conversation_strict", 0.0),
        ("c2", 1, "exec_acc_conversation_loft", 0.0),
        ("c2", 1, "exec_acc_conversation_strict", 0.0),
    ]
    means = dict(s.con.sql("select metric_name, mean from metrics where rule = 'loft'").fetchall())
    assert means == {"exec_acc_loft": 0.75, "exec_acc_conversation_loft": 0.5}


def test_sql_scoring_calls_the_sql_track_scorer() -> None:
    s = Scenario()
    s.case("sql", "spider", "ordered", [[1], [2]], "Final Answer: [[2], [1]]", gold_sql="SELECT a FROM t ORDER BY a")
    s.case("sql", "spider", "unordered", [[1], [2]], "Final Answer: [[2], [1]]", gold_sql="SELECT a FROM t")
    s.case("sql", "spider", "membership", [["a"], ["b"]], "Final Answer: [['a'], ['a']]", gold_sql="SELECT x FROM t")
    s.case("sql", "spider", "flat", [["45"]], "Final Answer: [45.0]", gold_sql="SELECT count(*) FROM t")
    s.build()
    assert s.scores("ordered") == {
        "exec_acc_loft": 1.0,
        "exec_acc_strict": 0.0,
        "exec_acc_conversation_loft": 1.0,
        "exec_acc_conversation_strict": 0.0,
    }
    assert s.scores("unordered")["exec_acc_strict"] == 1.0
    assert (s.scores("membership")["exec_acc_loft"], s.scores("membership")["exec_acc_strict"]) == (1.0, 0.0)
    assert s.scores("flat")["exec_acc_loft"] == 1.0


def test_a_sql_query_without_gold_rows_stops_the_build() -> None:
    s = Scenario()
    s.case("sql", "spider", "no_gold", [], "Final Answer: [[1]]")
    with pytest.raises(duckdb.Error, match="SQL query spider/no_gold turn 0 has no gold rows"):
        s.build()
