"""The results expectation suites (expectations/results__*.json) pass on a consistent scoring
run and catch each kind of inconsistency they exist for."""

from __future__ import annotations

import logging

import pytest

from loft_warehouse.quality import run_suites
from tests.scoring.sqlkit import Scenario, add_mixed_turns, insert


def _scenario() -> Scenario:
    s = Scenario()
    add_mixed_turns(s)
    revised = []
    for qid, question, answer in [
        ("boston", "Novels about families set in Boston and New England.", "The Scarlet Letter"),
        ("finnish", "Finnish television and animated films", "Moomins and the Comet Chase"),
    ]:
        s.case("rag", "quest", qid, [answer], f"Final Answer: ['{answer}']")
        s._rows["queries"][-1]["query_text"] = question
        revised.append(dict(gold_version="quest_loft_revised", dataset="quest", question=question,
                            rating="MATCH", answer=answer, source_file="t.csv",
                            source_row=len(revised) + 2))  # fmt: skip
    insert(s.con, "adjudications", revised)
    s.build()
    return s


def _failures(s: Scenario) -> dict[str, list[str]]:
    return {r.suite: r.failures for r in run_suites(s.con, "main", "results")}


def test_suites_pass_on_a_consistent_run() -> None:
    failures = _failures(_scenario())
    assert set(failures) == {
        "results_prediction_rows",
        "results_score_rows",
        "results_score_rows_complete",
        "results_primary_metric",
        "results_unanswered_match_statuses",
        "results_metric_rows",
    }
    assert failures == {name: [] for name in failures}


def test_suites_pass_on_a_quick_try() -> None:
    """With var limit only the first queries are owed: unsent prompts are not unanswered."""
    s = Scenario()
    for rank, qid in enumerate(["c", "a", "b"]):
        s.case("rag", "nq", qid, ["x"], "Final Answer: ['x']")
        s._rows["queries"][-1]["query_rank"] = rank
    s.query("rag", "nq", "d", ["x"])
    s._rows["queries"][-1]["query_rank"] = 3
    s.build(query_limit=2)
    assert s.con.sql("select n, n_unanswered from metrics where metric_name = 'em_loft'").fetchall() == [(2, 0)]
    failures = _failures(s)
    assert failures == {name: [] for name in failures}


CORRUPTIONS: dict[str, tuple[str, str]] = {
    "duplicate prediction": (
        "insert into predictions select * from predictions where qid = 'q1'",
        "results_prediction_rows",
    ),
    "unknown status": ("update predictions set status = 'lost' where qid = 'q1'", "results_prediction_rows"),
    "unknown parse status": (
        "update predictions set parse_status_strict = 'guessed' where qid = 'q2'",
        "results_prediction_rows",
    ),
    "duplicate score": (
        "insert into scores select * from scores where qid = 'q1' and metric_name = 'recall@1_loft'",
        "results_score_rows",
    ),
    "value above 1": (
        "update scores set value = 1.5 where qid = 'q1' and metric_name = 'recall@2_loft'",
        "results_score_rows",
    ),
    "unanswered scored": (
        "update scores set value = 1 where qid = 'q3' and metric_name = 'recall@1_strict'",
        "results_score_rows",
    ),
    "null primary flag": (
        "update scores set is_primary = null where qid = 'q1' and metric_name = 'recall@1_strict'",
        "results_score_rows",
    ),
    "null gold version": ("update scores set gold_version = null where qid = 'r1'", "results_score_rows"),
    "missing score": (
        "delete from scores where qid = 'q2' and metric_name = 'mrecall@3_strict'",
        "results_score_rows_complete",
    ),
    "unscored prediction": ("delete from scores where qid = 'r1'", "results_score_rows_complete"),
    "missing revised score": (
        "delete from scores where qid = 'boston' and metric_name = 'set_f1_revised'",
        "results_score_rows_complete",
    ),
    "no primary": ("update metrics set is_primary = false where dataset = 'bbh_web'", "results_primary_metric"),
    "wrong unanswered count": (
        "update metrics set n_unanswered = 1 where dataset = 'nq' and task = 'retrieval'",
        "results_unanswered_match_statuses",
    ),
    "mean outside interval": (
        "update metrics set ci_high = mean - 0.1 where metric_name = 'em_loft'",
        "results_metric_rows",
    ),
}


@pytest.mark.parametrize("corruption", CORRUPTIONS)
def test_suites_catch_corruptions(corruption: str) -> None:
    s = _scenario()
    statement, suite = CORRUPTIONS[corruption]
    # scores and predictions are views over int_turn_scores and int_predictions: the suites read
    # whatever relation bears the name, so table copies stand in for them to be corrupted row by row.
    for view in ("scores", "predictions"):
        s.con.execute(f"create table {view}_copy as select * from {view}")
        s.con.execute(f"drop view {view} cascade")
        s.con.execute(f"alter table {view}_copy rename to {view}")
    s.con.execute(statement)
    failures = _failures(s)
    assert failures[suite], f"{suite} missed: {corruption}"


def test_suites_log_nothing_at_info(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    _failures(_scenario())
    assert [r.getMessage() for r in caplog.records if r.name.startswith("great_expectations")] == []


def test_unanswered_counts_under_revised_gold_cover_only_the_queries_it_adjudicates() -> None:
    """Issue 33 item 6: a rag/quest release whose queries are only partly in the revised gold.
    Revised scores exist for the adjudicated query alone, so the other query, unanswered, is no
    unanswered row of theirs (it failed results_unanswered_match_statuses on main @a868e28)."""
    s = Scenario()
    question = "Novels about families set in Boston and New England."
    s.case("rag", "quest", "boston", ["The Scarlet Letter"], "Final Answer: ['The Scarlet Letter']")
    s._rows["queries"][-1]["query_text"] = question
    s.query("rag", "quest", "whales", ["Moby-Dick"])
    s._rows["queries"][-1]["query_text"] = "Novels about whales"
    insert(s.con, "adjudications", [dict(gold_version="quest_loft_revised", dataset="quest", question=question,
                                         rating="MATCH", answer="The Scarlet Letter", source_file="t.csv",
                                         source_row=2)])  # fmt: skip
    s.build()
    revised = s.con.sql("select n, n_unanswered from metrics where rule = 'revised' and metric = 'set_f1'").fetchall()
    assert revised == [(1, 0)]
    assert _failures(s)["results_unanswered_match_statuses"] == []
