"""Stages scored one by one (the stage_retrieval, stage_metrics, error_attribution and
verification_scores models) recover a planted retrieval and a planted reading effect.

Hand-made predictions of four methods on 60 RAG test queries, each with one gold document:
- rag_top5: bm25's stage 1 names 5 shown IDs; the gold is among them for q0..q47 (0.8), at rank
  q % 5 + 1; the reader (stage 2) is right on 36 of those 48 hits (0.75) and on 1 of the 12
  misses;
- icr: stage 1 names pages (page p = position p - 1) and one page that names no document; the
  gold page for q0..q29 (0.5);
- chunked_icr: two calls per query, the gold page only in the second, for q0..q9 of 10;
- justified (one stage): the answer cites the gold and one other document for q0..q19 of 40,
  one other document only for the rest; q39 was not answered.
"""

from __future__ import annotations

import json
from typing import Any

import duckdb
import pytest

from loft_warehouse.scoring.duckdb_functions import register
from loft_warehouse.settings import PROJECT_ROOT
from tests.scoring.sqlkit import model_sql, scores_table

SEED = 7
N = 60
FILLERS = ["90", "91", "92", "93", "94", "95", "96", "97", "98", "99"]


def _prediction(method: str, stage: int, qid: str, **kwargs: Any) -> dict[str, Any]:
    row = {
        "source": "inference", "system": "planted", "method": method, "stage": stage, "is_final": False,
        "task": "rag", "dataset": "nq", "corpus_id": "nq", "variant": "default", "split": "test", "qid": qid,
        "turn": 0, "call_index": 0, "status": "ok", "is_answered": True, "answer_strict": None,
        "answer_payload_strict": None,
    }  # fmt: skip
    return {**row, **kwargs}


def _planted_predictions() -> list[dict[str, Any]]:
    rows = []
    for q in range(N):
        ranked = FILLERS[:4]
        top5 = ranked[: q % 5] + [str(q)] + ranked[q % 5 :] if q < 48 else FILLERS[:5]
        rows.append(_prediction("rag_top5", 1, f"q{q}", answer_strict=top5))
        rows.append(_prediction("rag_top5", 2, f"q{q}", is_final=True, answer_strict=["an answer"]))
        pages = [str(q + 1), "999"] if q < 30 else ["91", "999"]
        rows.append(_prediction("icr", 1, f"q{q}", answer_strict=pages))
    for q in range(10):
        rows.append(_prediction("chunked_icr", 1, f"q{q}", call_index=0, answer_strict=["92"]))
        rows.append(_prediction("chunked_icr", 1, f"q{q}", call_index=1, answer_strict=[str(q + 1)]))
    for q in range(40):
        cited = [str(q), "95"] if q < 20 else ["95"]
        payload = json.dumps({"candidates": [], "answer_doc_ids": cited})
        answered = q != 39
        rows.append(
            _prediction(
                "justified",
                1,
                f"q{q}",
                is_final=True,
                answer_strict=["a title"],
                answer_payload_strict=payload,
                status="ok" if answered else "error",
                is_answered=answered,
            )  # fmt: skip
        )
    rows.append(_prediction("cic", 1, "q0", is_final=True, answer_strict=["0"]))  # no stage to score
    return rows


def _predictions_table(con: duckdb.DuckDBPyConnection, rows: list[dict[str, Any]]) -> None:
    """The predictions columns the stage models read, holding `rows`."""
    columns = {
        "source": "varchar", "system": "varchar", "method": "varchar", "stage": "bigint", "is_final": "boolean",
        "task": "varchar", "dataset": "varchar", "corpus_id": "varchar", "variant": "varchar", "split": "varchar",
        "qid": "varchar", "turn": "bigint", "call_index": "bigint", "status": "varchar", "is_answered": "boolean",
        "answer_strict": "varchar[]", "answer_payload_strict": "varchar",
    }  # fmt: skip
    con.execute(f"create table predictions ({', '.join(f'{k} {v}' for k, v in columns.items())})")
    con.executemany(
        f"insert into predictions values ({', '.join('?' * len(columns))})", [[r[k] for k in columns] for r in rows]
    )


@pytest.fixture(scope="module")
def stages() -> duckdb.DuckDBPyConnection:
    con = register(duckdb.connect())
    predictions = _planted_predictions()
    _predictions_table(con, predictions)
    con.execute(
        "create table doc_ids as select 'rag' as task, 'nq' as dataset, 'nq' as corpus_id, 'default' as variant, "
        "i::bigint as position, i::varchar as shown_id, 'p' || i as pid from range(100) t(i)"
    )
    con.execute(
        "create table queries as select 'rag' as task, 'nq' as dataset, 'nq' as corpus_id, 'test' as split, "
        "'q' || i as qid, 0::bigint as turn, ['p' || i] as gold_pids from range(60) t(i)"
    )
    reader = [
        {
            "system": "planted",
            "method": "rag_top5",
            "task": "rag",
            "dataset": "nq",
            "variant": "default",
            "qid": f"q{q}",
            "metric": "subspan_em",
            "value": 1.0 if q < 36 or q == 50 else 0.0,
        }  # fmt: skip
        for q in range(N)
    ]
    scores_table(con, reader)
    sql = model_sql("stage_retrieval", prompt_doc_ids="doc_ids")
    con.execute(f"create table stage_retrieval as {sql}")
    con.execute(f"create table stage_metrics as {model_sql('stage_metrics', seed=SEED)}")
    sql = model_sql("error_attribution", seed=SEED)
    con.execute(f"create table error_attribution as {sql}")
    return con


def _measures(con: duckdb.DuckDBPyConnection, method: str) -> dict[str, tuple[int, float, float, float]]:
    rows = con.sql(
        f"select measure, n, mean, ci_low, ci_high from stage_metrics where method = '{method}' and stage = 1"
    ).fetchall()
    return {measure: (n, mean, low, high) for measure, n, mean, low, high in rows}


def _holds(measure: tuple[int, float, float, float], n: int, planted: float) -> None:
    assert measure[0] == n
    assert measure[1] == pytest.approx(planted)
    assert measure[2] <= planted <= measure[3]


def test_bm25_stage_recall_at_k(stages: duckdb.DuckDBPyConnection) -> None:
    got = _measures(stages, "rag_top5")
    _holds(got["recall_at_5"], N, 0.8)
    _holds(got["recall_at_1"], N, 10 / N)  # q0, q5, ..., q45 have the gold first
    _holds(got["recall_at_100"], N, 0.8)
    _holds(got["found_all_gold"], N, 0.8)
    _holds(got["precision"], N, 48 / (N * 5))


def test_icr_pages_map_to_documents_and_unmapped_pages_are_counted(stages: duckdb.DuckDBPyConnection) -> None:
    _holds(_measures(stages, "icr")["recall"], N, 0.5)
    assert stages.sql(
        "select min(n_unmapped), max(n_unmapped) from stage_retrieval where method = 'icr'"
    ).fetchone() == (1, 1)
    pooled = stages.sql(
        "select n_calls, retrieved_pids from stage_retrieval where method = 'chunked_icr' and qid = 'q3'"
    ).fetchone()
    assert pooled == (2, ["p91", "p3"])  # page p is the document at position p - 1
    _holds(_measures(stages, "chunked_icr")["found_all_gold"], 10, 1.0)


def test_cited_documents_of_a_justified_answer(stages: duckdb.DuckDBPyConnection) -> None:
    got = _measures(stages, "justified")
    _holds(got["recall"], 40, 0.5)
    # precision over the 39 answered turns that cite something: 20 at 1/2, 19 at 0
    _holds(got["precision"], 39, 10 / 39)
    unanswered = stages.sql(
        "select n_retrieved, recall from stage_retrieval where qid = 'q39' and method = 'justified'"
    )
    assert unanswered.fetchone() == (0, 0.0)
    assert stages.sql("select count(*) from stage_retrieval where method = 'cic'").fetchone() == (0,)


def test_error_attribution_separates_retrieval_from_reading(stages: duckdb.DuckDBPyConnection) -> None:
    relation = stages.sql("select * from error_attribution where method = 'rag_top5'")
    [row] = [dict(zip(relation.columns, r, strict=True)) for r in relation.fetchall()]
    assert (row["n"], row["n_retrieval_hit"], row["n_retrieval_miss"], row["n_reading_miss"]) == (60, 48, 12, 12)
    assert (row["retrieval_stage"], row["metric_name"]) == (1, "subspan_em_loft")
    assert row["accuracy"] == pytest.approx(37 / 60)
    assert row["accuracy_given_hit"] == pytest.approx(0.75)
    assert row["accuracy_given_hit_ci_low"] <= 0.75 <= row["accuracy_given_hit_ci_high"]
    assert row["accuracy_given_miss"] == pytest.approx(1 / 12)
    # one gold document per turn: every miss found none, and given-miss has its Wilson interval
    assert (row["n_retrieval_partial"], row["n_retrieval_none"]) == (0, 12)
    assert row["accuracy_given_none"] == pytest.approx(1 / 12)
    assert row["accuracy_given_partial"] is None
    low, high = _wilson(1, 12)
    assert row["accuracy_given_miss_ci_low"] == pytest.approx(low)
    assert row["accuracy_given_miss_ci_high"] == pytest.approx(high)
    # icr has no final scores here, justified no earlier stage: neither is attributed
    assert stages.sql("select count(*) from error_attribution").fetchone() == (1,)


def _wilson(hits: int, n: int) -> tuple[float, float]:
    z = 1.959963984540054
    p = hits / n
    centre, spread = p + z * z / (2 * n), z * (p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5
    return max(0.0, (centre - spread) / (1 + z * z / n)), min(1.0, (centre + spread) / (1 + z * z / n))


def test_error_attribution_tells_a_partial_retrieval_from_none() -> None:
    """20 two-gold HotpotQA turns: bm25's top 5 holds both golds of q0..q9 (the reader right on
    8), one of q10..q14 (right on 2) and neither of q15..q19 (right on 1); a partial retrieval is
    a miss, reported apart from one that found nothing."""
    con = register(duckdb.connect())
    con.execute(
        "create table doc_ids as select 'retrieval' as task, 'hotpotqa' as dataset, 'hotpotqa' as corpus_id, "
        "'default' as variant, i::bigint as position, i::varchar as shown_id, 'p' || i as pid from range(100) t(i)"
    )
    con.execute(
        "create table queries as select 'retrieval' as task, 'hotpotqa' as dataset, 'hotpotqa' as corpus_id, "
        "'test' as split, 'q' || i as qid, 0::bigint as turn, ['p' || i, 'p' || (i + 20)] as gold_pids "
        "from range(20) t(i)"
    )
    rows = []
    for q in range(20):
        found = [str(q), str(q + 20)] if q < 10 else [str(q)] if q < 15 else []
        top5 = (found + FILLERS)[:5]
        rows.append(_prediction("rag_top5", 1, f"q{q}", task="retrieval", dataset="hotpotqa", corpus_id="hotpotqa",
                                answer_strict=top5))  # fmt: skip
    _predictions_table(con, rows)
    right = {f"q{q}" for q in [*range(8), 10, 11, 15]}
    reader = [
        {"system": "planted", "method": "rag_top5", "task": "retrieval", "dataset": "hotpotqa", "variant": "default",
         "qid": f"q{q}", "metric": "mrecall@2", "value": 1.0 if f"q{q}" in right else 0.0}
        for q in range(20)
    ]  # fmt: skip
    scores_table(con, reader)
    con.execute(f"create table stage_retrieval as {model_sql('stage_retrieval', prompt_doc_ids='doc_ids')}")
    relation = con.sql(model_sql("error_attribution", seed=SEED))
    [row] = [dict(zip(relation.columns, r, strict=True)) for r in relation.fetchall()]
    counts = ("n", "n_retrieval_hit", "n_retrieval_miss", "n_retrieval_partial", "n_retrieval_none", "n_reading_miss")
    assert tuple(row[c] for c in counts) == (20, 10, 10, 5, 5, 2)
    for outcome, hits, n in [("hit", 8, 10), ("miss", 3, 10), ("partial", 2, 5), ("none", 1, 5)]:
        assert row[f"accuracy_given_{outcome}"] == pytest.approx(hits / n), outcome
        low, high = _wilson(hits, n)
        assert row[f"accuracy_given_{outcome}_ci_low"] == pytest.approx(low), outcome
        assert row[f"accuracy_given_{outcome}_ci_high"] == pytest.approx(high), outcome


# ---------------------------------------------------------------- verification (QUEST-LOFT Tables 9-11)


@pytest.fixture(scope="module")
def verdicts() -> duckdb.DuckDBPyConnection:
    """justified_cot_verify on 40 questions with gold answer "Paris" (aliases ignored): a planted
    verifier keeps the gold candidate for q0..q29 (recall 0.75) and a wrong candidate "Lyon"
    for q0..q9 (of 40 wrong candidates: false positive rate 0.25), one verdict unreadable."""
    con = register(duckdb.connect())
    columns = {
        "source": "varchar", "system": "varchar", "method": "varchar", "stage": "bigint", "task": "varchar",
        "dataset": "varchar", "variant": "varchar", "split": "varchar", "qid": "varchar", "turn": "bigint",
        "call_index": "bigint", "is_answered": "boolean", "parse_status_strict": "varchar", "payload": "varchar",
        "answer_strict": "varchar[]",
    }  # fmt: skip
    con.execute(f"create table predictions ({', '.join(f'{k} {v}' for k, v in columns.items())})")
    rows = []
    for q in range(40):
        for index, (candidate, kept) in enumerate((("paris", q < 30), ("Lyon", q < 10))):
            status = "no_json" if (q, index) == (39, 1) else "ok"
            rows.append(
                ("inference", "planted", "justified_cot_verify", 2, "rag", "nq", "default", "test", f"q{q}", 0, index,
                 True, status, json.dumps({"candidate": candidate}), [candidate] if kept else [])
            )  # fmt: skip
    # stage 1 and a non-verify method's stage 2 are no verdicts
    rows.append(("inference", "planted", "justified_cot_verify", 1, "rag", "nq", "default", "test", "q0", 0, 0,
                 True, "ok", None, ["paris"]))  # fmt: skip
    rows.append(("inference", "planted", "rag_top5", 2, "rag", "nq", "default", "test", "q0", 0, 0,
                 True, "ok", None, ["paris"]))  # fmt: skip
    con.executemany(f"insert into predictions values ({', '.join('?' * len(columns))})", rows)
    con.execute(
        "create table queries as select 'rag' as task, 'nq' as dataset, 'test' as split, 'q' || i as qid, "
        "0::bigint as turn, 'Question ' || i || '?' as query_text, '[\"Paris\"]' as gold from range(40) t(i)"
    )
    # The revised gold adjudicates q0..q9 (Lyon is gold too, q9 named by its question) and q10
    # (Lyon debatable); q11..q39 keep the release gold.
    con.execute(
        "create table adjudications (gold_version varchar, task varchar, dataset varchar, qid varchar, "
        "question varchar, answer varchar, rating varchar)"
    )
    verdict_rows = [("quest_loft_revised", "rag", "nq", f"q{q}", None, answer, "MATCH")
                    for q in range(9) for answer in ("Paris", "Lyon")]  # fmt: skip
    verdict_rows += [
        ("quest_loft_revised", "rag", "nq", None, "question 9", answer, "MATCH") for answer in ("Paris", "Lyon")
    ]
    verdict_rows += [("quest_loft_revised", "rag", "nq", "q10", None, "Paris", "MATCH"),
                     ("quest_loft_revised", "rag", "nq", "q10", None, "Lyon", "DEBATABLE")]  # fmt: skip
    con.executemany("insert into adjudications values (?, ?, ?, ?, ?, ?, ?)", verdict_rows)
    con.execute(
        f"create table paper as select * from read_csv('{PROJECT_ROOT / 'seeds' / 'paper_quest_loft.csv'}', "
        "header = true, auto_detect = true)"
    )
    sql = model_sql("verification_scores", paper_quest_loft="paper", stg_gold_adjudications="adjudications", seed=SEED)
    con.execute(f"create table verification as {sql}")
    return con


def test_planted_verifier_is_recovered(verdicts: duckdb.DuckDBPyConnection) -> None:
    relation = verdicts.sql("select * from verification where gold_version = 'release' order by measure")
    rows = {
        row[relation.columns.index("measure")]: dict(zip(relation.columns, row, strict=True))
        for row in relation.fetchall()
    }
    assert set(rows) == {"verdict_precision", "verdict_recall", "verdict_accuracy", "verdict_f1"}
    first = rows["verdict_accuracy"]
    # 79 readable verdicts: 30 TP, 10 FP, 10 FN, 29 TN
    assert (first["n"], first["n_true_positive"], first["n_false_positive"], first["n_false_negative"]) == (
        79,
        30,
        10,
        10,
    )
    assert (first["n_true_negative"], first["n_unreadable"], first["verifier"]) == (29, 1, "CoT")
    assert rows["verdict_recall"]["value"] == pytest.approx(0.75)
    assert rows["verdict_precision"]["value"] == pytest.approx(0.75)
    assert rows["verdict_f1"]["value"] == pytest.approx(0.75)
    assert first["value"] == pytest.approx(59 / 79)
    assert first["ci_low"] <= 59 / 79 <= first["ci_high"]
    # the paper measured against the revised and Simple28 gold: not beside the release gold
    assert (first["paper_pro_revised"], first["paper_flash_revised"], first["paper_pro_simple28"]) == (None, None, None)


def test_verdicts_are_judged_against_each_gold_version(verdicts: duckdb.DuckDBPyConnection) -> None:
    """Under quest_loft_revised the 10 Lyon verdicts kept on q0..q9 are true positives (Lyon is
    gold there), q10's Lyon is debatable and not judged, and q11..q39 keep the release gold:
    78 verdicts, 40 TP, 0 FP, 10 FN, 28 TN, the whole split judged, not only the adjudicated."""
    relation = verdicts.sql("select * from verification where gold_version = 'quest_loft_revised' order by measure")
    rows = {
        r[relation.columns.index("measure")]: dict(zip(relation.columns, r, strict=True)) for r in relation.fetchall()
    }
    first = rows["verdict_accuracy"]
    counts = ("n", "n_true_positive", "n_false_positive", "n_false_negative", "n_true_negative", "n_unreadable")
    assert tuple(first[c] for c in counts) == (78, 40, 0, 10, 28, 1)
    assert first["value"] == pytest.approx(68 / 78)
    assert rows["verdict_precision"]["value"] == pytest.approx(1.0)
    assert rows["verdict_recall"]["value"] == pytest.approx(0.8)
    # the paper's CoT verifier on the revised gold: Tables 9 and 10; Table 11 is Simple28's
    assert (first["paper_pro_revised"], first["paper_flash_revised"], first["paper_pro_simple28"]) == (0.83, 0.80, None)
    versions = verdicts.sql("select distinct gold_version from verification order by 1").fetchall()
    assert versions == [("quest_loft_revised",), ("release",)]
