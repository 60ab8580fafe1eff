"""The SQL metrics agree with the Python reference on seeded random cases (edge cases mixed in:
duplicates, unknown and padded IDs, empty answers, answers that normalise to "", accents)."""

from __future__ import annotations

import random

import pytest

from loft_warehouse.answers.parse import parse_loft, parse_strict
from loft_warehouse.scoring import metrics as m
from tests.scoring.sqlkit import Scenario

WORDS = ["Paris", "the", "a", "Röntgen", "red dog", "New York", "york", "Alpha", "beta!", "(A)", "(B)", "5"]
N_CASES = 120


def _answer_list(rng: random.Random, pool: list[str], max_len: int) -> list[str]:
    return [rng.choice(pool) for _ in range(rng.randint(0, max_len))]


@pytest.fixture(scope="module")
def scenario() -> tuple[Scenario, dict[str, tuple]]:
    rng = random.Random(20240612)
    s = Scenario()
    cases: dict[str, tuple] = {}
    ids = [str(i) for i in range(10)] + ["42", " 3"]
    for i in range(N_CASES):
        gold = sorted({f"p{rng.randint(0, 9)}" for _ in range(rng.randint(1, 3))})
        shown = _answer_list(rng, ids, 6)
        text = f"Final Answer: {shown!r}"
        s.case("retrieval", "hotpotqa", f"r{i}", gold, text)
        cases[f"r{i}"] = ("retrieval", gold, text)
    for task, dataset in [("rag", "nq"), ("rag", "quest"), ("icl", "bbh_date")]:
        for i in range(N_CASES):
            gold = _answer_list(rng, WORDS, 3) or ["Paris"]
            answers = _answer_list(rng, WORDS, 3)
            marker = "Output:" if task == "icl" else "Final Answer:"
            text = f"{rng.choice(WORDS)}\n{marker} {answers!r}"
            qid = f"{dataset}{i}"
            s.case(task, dataset, qid, gold, text)
            cases[qid] = (task, gold, text)
    s.build()
    return s, cases


def _retrieval_expected(gold: list[str], text: str) -> dict[str, float]:
    shown_to_pid = {str(i): f"p{i}" for i in range(10)}
    loft_keys = [str(a) for a in parse_loft(text)]
    loft = [] if any(k not in shown_to_pid for k in loft_keys) else [shown_to_pid[k] for k in loft_keys]
    strict = [shown_to_pid.get(k) for k in m.dedupe(str(a).strip() for a in parse_strict(text, "retrieval"))]
    expected = {}
    for k in m.RECALL_KS:
        expected[f"recall@{k}_loft"] = m.recall_at_k_loft(gold, loft, k)
        expected[f"mrecall@{k}_loft"] = m.mrecall_at_k_loft(gold, loft, k)
        expected[f"recall@{k}_strict"] = m.recall_at_k_strict(gold, strict, k)
        expected[f"mrecall@{k}_strict"] = m.mrecall_at_k_strict(gold, strict, k)
    expected["capped_recall@1_loft"] = m.capped_recall_at_k_loft(gold, loft, 1)
    expected["capped_recall@1_strict"] = m.capped_recall_at_k_strict(gold, strict, 1)
    return expected


def _rag_expected(dataset: str, gold: list[str], text: str) -> dict[str, float]:
    loft, strict = parse_loft(text), parse_strict(text, "rag")
    if dataset == "quest":
        sets_loft, sets_strict = m.set_scores_loft(gold, loft), m.set_scores_strict(gold, strict)
        return {
            **{f"{key}_loft": value for key, value in m.multi_value_scores_loft(gold, loft).items()},
            "subspan_em_strict": m.multi_subspan_em_strict(gold, strict),
            "em_strict": m.multi_em_strict(gold, strict),
            "coverage_strict": m.coverage_strict(gold, strict),
            **{f"set_{name}_loft": getattr(sets_loft, name) for name in ("precision", "recall", "f1", "accuracy")},
            **{f"set_{name}_strict": getattr(sets_strict, name) for name in ("precision", "recall", "f1", "accuracy")},
        }
    return {
        "em_loft": m.em_loft(gold, loft),
        "em_strict": m.em_strict(gold, strict),
        "subspan_em_loft": m.subspan_em_loft(gold, loft),
        "subspan_em_strict": m.subspan_em_strict(gold, strict),
        "f1_loft": m.f1_loft(gold, loft),
        "f1_strict": m.f1_strict(gold, strict),
        "rr_fuzzy_match_loft": m.rr_fuzzy_match(gold, loft),
        "rr_fuzzy_match_strict": m.rr_fuzzy_match(gold, strict),
        "litm_best_subspan_em_raw": m.litm_best_subspan_em(gold, text),
    }


def test_sql_equals_reference(scenario: tuple[Scenario, dict[str, tuple]]) -> None:
    s, cases = scenario
    checked = 0
    for qid, (task, gold, text) in cases.items():
        if task == "retrieval":
            expected = _retrieval_expected(gold, text)
        elif task == "icl":
            expected = {
                "em_loft": m.icl_em_loft(gold, parse_loft(text)),
                "em_strict": m.icl_em_strict(gold, parse_strict(text, "icl")),
            }
        else:
            expected = _rag_expected("quest" if qid.startswith("quest") else "nq", gold, text)
        actual = s.scores(qid)
        assert actual == pytest.approx(expected), (qid, gold, text)
        checked += len(expected)
    assert checked == N_CASES * (18 + 9 + 14 + 2)  # retrieval, rag (nq), rag (quest), icl


def test_the_random_cases_reach_the_edge_cases(scenario: tuple[Scenario, dict[str, tuple]]) -> None:
    s, _ = scenario
    flags = s.con.execute(
        "select bool_or(query_dropped_loft), bool_or(list_count(pred_pids_strict) < len(pred_pids_strict)), "
        "bool_or(len(answer_loft) = 0), bool_or(len(pred_pids_loft) > len(list_distinct(pred_pids_loft))) "
        "from predictions where task = 'retrieval'"
    ).fetchone()
    assert flags == (True, True, True, True)
    differing = s.con.execute(
        "select count(distinct metric) from (select metric, qid from scores group by metric, qid "
        "having count(distinct value) filter (where rule in ('loft', 'strict')) > 1)"
    ).fetchone()[0]
    assert differing >= 10
