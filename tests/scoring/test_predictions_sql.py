"""The predictions table (the int_predictions model): runs, statuses, parse statuses, and
the loft whole-query drop for multi-turn retrieval."""

from __future__ import annotations

import pytest

from tests.scoring.sqlkit import Scenario


@pytest.fixture(scope="module")
def scenario() -> Scenario:
    s = Scenario()
    # A two-turn retrieval conversation whose second turn names an ID the corpus lacks.
    t0 = s.query("retrieval", "topiocqa", "conv", ["p1"], turn=0, n_turns=2)
    t1 = s.query("retrieval", "topiocqa", "conv", ["p2"], turn=1, n_turns=2)
    s.respond(t0, "Final Answer: ['1']")
    s.respond(t1, "Final Answer: ['2', '77']")
    s.respond(s.query("retrieval", "topiocqa", "blocked", ["p1"]), "Final Answer: ['1']", status="blocked")
    s.respond(s.query("retrieval", "topiocqa", "no_text", ["p1"]), None)
    s.query("retrieval", "topiocqa", "unanswered", ["p1"])
    # Another system ran only rag/nq: it owes nothing on topiocqa.
    s.respond(s.query("rag", "nq", "r1", ["Paris"]), "Final Answer: ['Paris']", system="other")
    s.build()
    return s


def test_rows_are_the_prompts_of_each_run(scenario: Scenario) -> None:
    rows = scenario.con.sql("select system, dataset, qid, turn, status from predictions order by all").fetchall()
    assert rows == [
        ("other", "nq", "r1", 0, "ok"),
        ("sys", "topiocqa", "blocked", 0, "blocked"),
        ("sys", "topiocqa", "conv", 0, "ok"),
        ("sys", "topiocqa", "conv", 1, "ok"),
        ("sys", "topiocqa", "no_text", 0, "ok"),
        ("sys", "topiocqa", "unanswered", 0, "missing"),
    ]


def test_parse_statuses(scenario: Scenario) -> None:
    statuses = dict(
        scenario.con.sql(
            "select qid, parse_status_loft || '/' || parse_status_strict from predictions where turn = 0"
        ).fetchall()
    )
    assert statuses == {
        "blocked": "not_answered/not_answered",
        "conv": "ok/ok",
        "no_text": "no_text/no_text",
        "unanswered": "not_answered/not_answered",
        "r1": "ok/ok",
    }
    raw, answers = scenario.con.sql("select raw_text, answer_loft from predictions where qid = 'blocked'").fetchone()
    assert (raw, answers) == ("Final Answer: ['1']", [])


def test_an_unknown_id_in_a_later_turn_drops_the_whole_conversation_under_loft(scenario: Scenario) -> None:
    rows = scenario.con.sql(
        "select turn, pred_pids_loft, pred_pids_strict, unknown_ids_loft, query_dropped_loft "
        "from predictions where qid = 'conv' order by turn"
    ).fetchall()
    assert rows == [(0, [], ["p1"], [], True), (1, [], ["p2", None], ["77"], True)]
    assert scenario.scores("conv")["recall@1_strict"] == 1.0  # turn 1 (the last row wins in scores())
    values = scenario.con.sql(
        "select turn, value from scores where qid = 'conv' and metric_name = 'recall@1_loft' order by turn"
    ).fetchall()
    assert values == [(0, 0.0), (1, 0.0)]


def test_non_retrieval_rows_have_no_pid_lists(scenario: Scenario) -> None:
    row = scenario.con.sql(
        "select pred_pids_loft, pred_pids_strict, answer_loft_json from predictions where qid = 'r1'"
    ).fetchone()
    assert row == (None, None, '["Paris"]')


def test_strict_lists_are_stored_only_where_they_differ_from_the_loft_ones() -> None:
    s = Scenario()
    s.respond(s.query("retrieval", "nq", "differ", ["p2"]), "['1']\nFinal Answer: ['2']")
    s.respond(s.query("retrieval", "nq", "same", ["p1"]), "Final Answer: ['1', '1']")
    s.respond(s.query("rag", "nq", "rag", ["Paris"]), "Final Answer: ['Paris']")
    s.build()
    stored = s.stored_lists()
    assert stored == [
        ("differ", ["2"], '["2"]', ["p1"], ["p2"]),
        ("rag", None, None, None, None),
        ("same", None, None, ["p1", "p1"], ["p1"]),
    ]
    shown = s.con.sql(
        "select qid, answer_loft, answer_strict, answer_strict_json, pred_pids_loft, pred_pids_strict "
        "from predictions order by qid"
    ).fetchall()
    assert shown == [
        ("differ", ["1"], ["2"], '["2"]', ["p1"], ["p2"]),
        ("rag", ["Paris"], ["Paris"], '["Paris"]', None, None),
        ("same", ["1", "1"], ["1", "1"], '["1", "1"]', ["p1", "p1"], ["p1"]),
    ]
