"""The SQL metrics (the int_turn_scores model, macros/scoring_scores.sql) on hand-made tables,
with hand-computed values.

Each case names a query; responses are raw generations, so parsing and ID mapping are part
of what is checked. Retrieval shows IDs "0".."9" for pids "p0".."p9".
"""

from __future__ import annotations

import sys

import pytest

from tests.scoring.sqlkit import Scenario, add_mixed_turns, connect, macros, model_sql


@pytest.fixture(scope="module")
def retrieval() -> Scenario:
    s = Scenario()
    s.case("retrieval", "nq", "first", ["p0"], "Final Answer: ['0', '1']", max_gold=1)
    s.case("retrieval", "nq", "second", ["p0"], "Final Answer: ['1', '0']")
    s.case("retrieval", "nq", "ints", ["p3"], "Final Answer: [3]")
    s.case("retrieval", "nq", "reasoning_bracket", ["p0"], "I compared [0] and [1].\nFinal Answer: ['0']")
    s.case("retrieval", "nq", "unknown_first", ["p0"], "Final Answer: ['99', '0']")
    s.case("retrieval", "nq", "padded", ["p0"], "Final Answer: [' 0']")
    s.case("retrieval", "nq", "empty", ["p0"], "Final Answer: []")
    s.case("retrieval", "hotpotqa", "dup", ["p0", "p1"], "Final Answer: ['0', '0', '1']", max_gold=2)
    s.case("retrieval", "hotpotqa", "both", ["p0", "p1"], "Final Answer: ['1', '0']")
    s.case("retrieval", "hotpotqa", "late", ["p0", "p1"], "Final Answer: ['0', '5', '6', '7', '1']")
    s.respond(s.query("retrieval", "nq", "blocked", ["p0"]), "Final Answer: ['0']", status="blocked")
    s.query("retrieval", "nq", "missing", ["p0"])
    return s.build() and s


def test_recall_at_1(retrieval: Scenario) -> None:
    assert retrieval.scores("first")["recall@1_loft"] == 1.0
    assert retrieval.scores("second")["recall@1_loft"] == 0.0
    assert retrieval.scores("second")["recall@2_loft"] == 1.0
    assert retrieval.scores("ints")["recall@1_loft"] == 1.0


def test_turn_scores_store_a_row_per_turn_and_the_scores_view_a_row_per_metric(retrieval: Scenario) -> None:
    con = retrieval.con
    assert con.execute("select count(*) from int_turn_scores where qid = 'both'").fetchone() == (1,)
    names = con.execute("select metric_name from scores where qid = 'both' order by metric_name").fetchall()
    expected = sorted(
        [f"{m}@{k}_{rule}" for m in ("recall", "mrecall") for k in (1, 2, 3, 5) for rule in ("loft", "strict")]
        + ["capped_recall@1_loft", "capped_recall@1_strict"]
    )
    assert [name for (name,) in names] == expected
    stored = con.execute(
        "select len(metric_values), list_sum(list_transform(metric_values, lambda m: m.value)) "
        "from int_turn_scores where qid = 'both'"
    ).fetchone()
    assert stored == (18, con.execute("select sum(value) from scores where qid = 'both'").fetchone()[0])
    kinds = dict(
        con.execute(
            "select table_name, table_type from information_schema.tables where table_schema = 'main'"
        ).fetchall()
    )
    assert (kinds["int_turn_scores"], kinds["scores"]) == ("BASE TABLE", "VIEW")


def test_first_bracketed_line_wins_under_loft_only(retrieval: Scenario) -> None:
    scores = retrieval.scores("reasoning_bracket")
    assert (scores["recall@1_loft"], scores["recall@1_strict"]) == (0.0, 1.0)


def test_unknown_id_drops_the_query_under_loft_and_takes_a_rank_under_strict(retrieval: Scenario) -> None:
    scores = retrieval.scores("unknown_first")
    assert scores["recall@5_loft"] == 0.0
    assert (scores["recall@1_strict"], scores["recall@2_strict"]) == (0.0, 1.0)
    row = retrieval.con.execute(
        "select pred_pids_loft, pred_pids_strict, unknown_ids_loft, unknown_ids_strict, query_dropped_loft "
        "from predictions where qid = 'unknown_first'"
    ).fetchone()
    assert row == ([], [None, "p0"], ["99"], ["99"], True)


def test_padded_id_is_unknown_upstream_but_trimmed_by_strict(retrieval: Scenario) -> None:
    scores = retrieval.scores("padded")
    assert (scores["recall@1_loft"], scores["recall@1_strict"]) == (0.0, 1.0)


def test_prefix_then_dedup_against_dedup_then_prefix(retrieval: Scenario) -> None:
    scores = retrieval.scores("dup")
    assert (scores["recall@2_loft"], scores["mrecall@2_loft"]) == (0.5, 0.0)
    assert (scores["recall@2_strict"], scores["mrecall@2_strict"]) == (1.0, 1.0)
    assert scores["recall@1_loft"] == 0.5  # two gold: recall@1 is at most 1/2


def test_mrecall(retrieval: Scenario) -> None:
    assert retrieval.scores("both")["mrecall@2_loft"] == 1.0
    assert retrieval.scores("both")["mrecall@1_loft"] == 1.0  # min(k, |gold|) = 1
    late = retrieval.scores("late")
    assert (late["mrecall@2_loft"], late["mrecall@3_loft"], late["mrecall@5_loft"]) == (0.0, 0.0, 1.0)
    assert (late["recall@3_loft"], late["recall@5_loft"]) == (0.5, 1.0)


def test_unanswered_rows_score_zero_and_are_kept(retrieval: Scenario) -> None:
    for qid, status in [("blocked", "blocked"), ("missing", "missing")]:
        rows = retrieval.con.execute(
            "select distinct status, is_answered, value from scores where qid = ?", [qid]
        ).fetchall()
        assert rows == [(status, False, 0.0)]
    empty = retrieval.con.execute(
        "select bool_and(is_empty_answer), max(value) from scores where qid = 'empty'"
    ).fetchone()
    assert empty == (True, 0.0)


def test_capped_recall_at_1_divides_by_one_when_there_are_several_gold(retrieval: Scenario) -> None:
    dup = retrieval.scores("dup")
    assert (dup["recall@1_loft"], dup["capped_recall@1_loft"], dup["capped_recall@1_strict"]) == (0.5, 1.0, 1.0)
    assert retrieval.scores("second")["capped_recall@1_loft"] == 0.0
    assert retrieval.scores("first")["capped_recall@1_loft"] == 1.0


def test_every_retrieval_turn_has_eighteen_scores_and_one_primary(retrieval: Scenario) -> None:
    counts = retrieval.con.execute(
        "select qid, count(*), count(*) filter (where is_primary), "
        "max(metric_name) filter (where is_primary) from scores group by qid"
    ).fetchall()
    assert len(counts) == 12
    for qid, n, n_primary, primary in counts:
        assert (n, n_primary) == (18, 1), qid
        assert primary == ("mrecall@2_loft" if qid in {"dup", "both", "late"} else "recall@1_loft")


@pytest.fixture(scope="module")
def rag() -> Scenario:
    s = Scenario()
    s.case("rag", "nq", "exact", ["Paris", "City of Light"], "Final Answer: ['the city of light']")
    s.case("rag", "nq", "sub", ["Paris"], "Final Answer: ['Paris, France']\nParis is the capital.")
    s.case("rag", "nq", "second_answer", ["Paris"], "Final Answer: ['Berlin', 'Paris']")
    s.case("rag", "nq", "article_gold", ["The"], "Final Answer: ['Berlin']")
    s.case("rag", "nq", "f1", ["red dog"], "The big red dog.\nFinal Answer: ['the big red dog']")
    s.case("rag", "nq", "unquoted", ["Paris"], "Final Answer: [Paris]")
    s.case("rag", "nq", "litm", ["Paris"], "Let me think.\nFinal Answer: ['Paris']")
    s.case("rag", "nq", "rr", ["Barack Obama"], "Final Answer: ['Obama']")
    s.case("rag", "quest", "multi_ok", ["Alpha", "Beta"], "Final Answer: ['beta', 'alpha centauri', 'gamma']")
    s.case("rag", "quest", "multi_short", ["New York", "York"], "Final Answer: ['new york city']")
    s.case("rag", "quest", "multi_empty_answer", ["Alpha"], "Final Answer: ['the', 'alpha']")
    s.case("icl", "bbh_date", "icl_b", ["(B)"], "Output: ['(B)']")
    s.case("icl", "bbh_date", "icl_a_article", ["(A)"], "Output: ['the']")
    s.case("icl", "bbh_date", "icl_bare", ["(C)"], "Output: (C)")
    s.case("icl", "lib_dialogue", "icl_words", ["per:title", "per:boss"], "Output: ['per:boss']")
    return s.build() and s


def test_rag_single_answer(rag: Scenario) -> None:
    exact = rag.scores("exact")
    assert (exact["em_loft"], exact["subspan_em_loft"], exact["f1_loft"]) == (1.0, 1.0, 1.0)
    sub = rag.scores("sub")
    assert (sub["em_loft"], sub["subspan_em_loft"], sub["f1_loft"]) == (0.0, 1.0, pytest.approx(2 / 3))
    assert rag.scores("second_answer")["subspan_em_loft"] == 0.0  # only the first answer counts
    article = rag.scores("article_gold")
    assert (article["subspan_em_loft"], article["subspan_em_strict"]) == (1.0, 0.0)
    assert rag.scores("f1")["f1_loft"] == pytest.approx(0.8)
    unquoted = rag.scores("unquoted")
    assert (unquoted["subspan_em_loft"], unquoted["subspan_em_strict"]) == (0.0, 1.0)


def test_related_method_metrics(rag: Scenario) -> None:
    assert rag.scores("rr")["rr_fuzzy_match_loft"] == 1.0
    assert rag.scores("rr")["em_loft"] == 0.0
    # Lost in the Middle reads the first line of the raw generation, not the parsed answer.
    litm = rag.scores("litm")
    assert (litm["litm_best_subspan_em_raw"], litm["subspan_em_loft"]) == (0.0, 1.0)
    assert rag.scores("f1")["litm_best_subspan_em_raw"] == 1.0  # "the big red dog" holds "red dog"
    assert rag.scores("exact")["litm_best_subspan_em_raw"] == 1.0


def test_rag_multi_answer(rag: Scenario) -> None:
    ok = rag.scores("multi_ok")
    assert (ok["subspan_em_loft"], ok["em_loft"], ok["coverage_loft"]) == (1.0, 0.0, 0.5)
    assert (ok["set_precision_loft"], ok["set_recall_loft"]) == (pytest.approx(1 / 3), 0.5)
    assert ok["set_f1_loft"] == pytest.approx(0.4)
    short = rag.scores("multi_short")
    assert short["subspan_em_loft"] == 0.0  # one answer cannot cover two golds
    empty = rag.scores("multi_empty_answer")
    assert (empty["set_accuracy_loft"], empty["set_accuracy_strict"]) == (0.0, 1.0)
    assert (empty["em_loft"], empty["em_strict"]) == (0.0, 1.0)
    assert len(ok) == 14


def test_icl(rag: Scenario) -> None:
    assert rag.scores("icl_b") == {"em_loft": 1.0, "em_strict": 1.0}
    assert rag.scores("icl_a_article") == {"em_loft": 1.0, "em_strict": 0.0}
    assert rag.scores("icl_bare") == {"em_loft": 0.0, "em_strict": 1.0}
    assert rag.scores("icl_words") == {"em_loft": 1.0, "em_strict": 0.0}


def test_primary_metrics(rag: Scenario) -> None:
    primary = rag.con.execute(
        "select distinct dataset, metric_name from scores where is_primary order by all"
    ).fetchall()
    assert primary == [
        ("bbh_date", "em_loft"),
        ("lib_dialogue", "em_loft"),
        ("nq", "subspan_em_loft"),
        ("quest", "subspan_em_loft"),
    ]


def test_ids_are_stripped_as_python_strips_them() -> None:
    """LOFT compares IDs as str(x).strip(): every character str.isspace() holds for, on both ends."""
    spaces = "".join(chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace())
    con = connect()
    strip = "loft_python_strip($text)"
    for text in [f"{spaces}d1{spaces}", "\u00a0d2\u2003", "\u200bd3", " d 4 ", "d5\n", "d6", "", "\x7fd7 ", "é"]:
        assert con.execute(f"select {strip}", {"text": text}).fetchone()[0] == text.strip(), repr(text)


def test_lists_are_stripped_only_where_python_whitespace_is_in_them() -> None:
    """The regex that decides whether a list needs stripping matches exactly the str.isspace() characters."""
    every = [chr(c) for c in range(1, sys.maxunicode + 1) if not 0xD800 <= c < 0xE000]
    con = connect()
    matched = con.execute(
        "select list_filter($chars, lambda c: regexp_matches(c, loft_python_whitespace_class()))",
        {"chars": every},
    ).fetchone()[0]
    assert matched == [c for c in every if c.isspace()]
    stripped = macros().scoring_stripped("$ids")
    for ids in [["d1", "d2"], [" d1", "d2\u3000"], ["d1", "\u0085d2\u0085", "d 3"], ["\u200bd4"], [], [""]]:
        assert con.execute(f"select {stripped}", {"ids": ids}).fetchone()[0] == [i.strip() for i in ids], ids


def test_one_exec_acc_call_scores_each_rule_on_its_own_gold_and_answer() -> None:
    con = connect()
    gold, gold_loft = '[["Paris", 3]]', '[["Paris", 3], ["Rome", 4]]'
    cases = [
        # (gold_loft, answer_loft, gold, answer_strict, ordered) -> (loft, strict)
        ((gold, '[["paris", "3.001"]]', gold, '[["paris", "3.001"]]', False), (1.0, 0.0)),
        ((gold, '[["Paris", 3]]', gold, '[[3, "Paris"]]', False), (1.0, 1.0)),
        ((gold_loft, '[["Paris", 3]]', gold, '[["Paris", 3]]', False), (0.0, 1.0)),
        ((gold_loft, '[["rome", 4], ["paris", 3]]', gold_loft, '[["Rome", 4], ["Paris", 3]]', True), (1.0, 0.0)),
    ]
    for arguments, expected in cases:
        row = con.execute("select unnest(loft_exec_acc(?, ?, ?, ?, ?))", list(arguments)).fetchone()
        assert row == expected, arguments


PRIMARY_COLUMNS = (
    "size, source, system, method, variant, task, dataset, split, qid, turn, metric_name, value, is_answered"
)


def test_the_primary_columns_are_the_primary_loft_turn_scores() -> None:
    """The marts that read only primary scores read int_turn_scores' primary columns
    (scoring_primary_loft_turns, here through scaling_scores at one size): row for row the
    scores with is_primary, rule loft and grain turn, over answered, wrong, skipped and missing
    turns, a revised gold and a conversation whose later turns keep no loft metric."""
    s = Scenario()
    add_mixed_turns(s)
    s.case("rag", "quest", "boston", ["The Scarlet Letter"], "Final Answer: ['The Scarlet Letter']")
    for turn in range(2):
        s.query("rag", "nq", "c1", ["x"], turn=turn, n_turns=2)
    s.build()
    expected = f"select {PRIMARY_COLUMNS} from scores where is_primary and rule = 'loft' and grain = 'turn'"
    actual = f"select {PRIMARY_COLUMNS} from ({model_sql('scaling_scores', sized=[('128k', 'int_turn_scores')])})"
    assert s.con.sql(f"({expected}) except all ({actual})").fetchall() == []
    assert s.con.sql(f"({actual}) except all ({expected})").fetchall() == []
    rows = s.con.sql(f"select qid, turn, metric_name, value from ({actual}) order by qid, turn").fetchall()
    assert rows == [
        ("boston", 0, "subspan_em_loft", 1.0),
        ("c1", 0, "subspan_em_loft", 0.0),
        ("i1", 0, "em_loft", 1.0),
        ("q1", 0, "recall@1_loft", 1.0),
        ("q2", 0, "recall@1_loft", 0.0),
        ("q3", 0, "recall@1_loft", 0.0),
        ("q4", 0, "recall@1_loft", 0.0),
        ("r1", 0, "subspan_em_loft", 1.0),
    ]
