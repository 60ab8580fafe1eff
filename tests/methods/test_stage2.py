"""Stage-2 prompts are built from exactly what stage 1 chose (read strictly); answers that give
stage 2 nothing to build on build nothing."""

from __future__ import annotations

import json
import re

import polars as pl
import pytest

from loft_warehouse.design import Design
from loft_warehouse.methods import stage2

TITLES = ["Cats", "Dogs", "Seas", "Suns", "Moons", "Stars"]
CORPUS = pl.DataFrame(
    {
        "task": ["rag"] * 6,
        "dataset": ["nq"] * 6,
        "corpus_id": ["nq"] * 6,
        "doc_id": list(range(6)),
        "pid": [f"p{i}" for i in range(6)],
        "title": TITLES,
        "text": [f"All about {t.lower()}." for t in TITLES],
        "answer": [None] * 6,
        "min_context": ["128k"] * 6,
        "n_tokens": [5] * 6,
    }
)
QUERIES = pl.DataFrame(
    {
        "task": ["rag"] * 3,
        "dataset": ["nq"] * 3,
        "corpus_id": ["nq"] * 3,
        "split": ["few_shot", "test", "test"],
        "qid": ["f1", "q1", "q2"],
        "turn": [0, 0, 0],
        "n_turns": [1, 1, 1],
        "query_text": ["what do dogs do", "what purrs", "what is salty"],
        "gold": ['["bark"]', '["cats"]', '["seas"]'],
        "gold_pids": [["p1"], ["p0"], ["p2"]],
        "query_rank": [0, 1, 2],
    }
)
DATASETS = pl.DataFrame({"task": ["rag"], "dataset": ["nq"], "has_title": [True], "contexts": [["128k"]]})
DOC_IDS = pl.DataFrame(
    {
        "task": ["rag"] * 6,
        "dataset": ["nq"] * 6,
        "corpus_id": ["nq"] * 6,
        "variant": ["default"] * 6,
        "position": list(range(6)),
        "shown_id": [str(i) for i in range(6)],
        "pid": [f"p{i}" for i in range(6)],
    }
)


def _answer(method: str, qid: str, answers: list[str] | None, call_index: int = 0, **extra) -> dict:
    row = {
        "system": "sys",
        "task": "rag",
        "dataset": "nq",
        "corpus_id": "nq",
        "variant": "default",
        "method": method,
        "stage": 1,
        "split": "test",
        "qid": qid,
        "turn": 0,
        "call_index": call_index,
        "status": "ok",
        "answers_strict": answers,
        "payload_strict": None,
    }
    return {**row, **extra}


def _build(rows: list[dict], tokens, design: Design | None = None) -> pl.DataFrame:
    answers = pl.DataFrame(rows, schema_overrides={"answers_strict": pl.List(pl.String), "payload_strict": pl.String})
    return stage2.build(answers, CORPUS, QUERIES, DATASETS, DOC_IDS, design or Design(), tokens)


def _pages(text: str) -> list[str]:
    return re.findall(r"<PAGE (\d+)>", text)


def test_icr_answers_from_exactly_the_pages_stage_one_named(tokens):
    built = _build(
        [
            _answer("icr", "q1", ["5", "1", "99", "5", "x", "3"]),  # 99 and x are no pages; 5 twice
            _answer("icr", "q2", ["no pages here"]),
            _answer("icr", "q2", None, call_index=1, status="error"),
        ],
        tokens,
        Design(icr_pages=2),
    )
    assert built["qid"].to_list() == ["q1"]
    row = built.row(0, named=True)
    # The first two valid pages (5 and 1), shown in document order with their own numbers.
    assert _pages(row["suffix"]) == ["1", "5"]
    assert row["context_pids"] == ["p0", "p4"]
    assert row["gold_positions"] == [0]
    assert (row["prompt_id"], row["stage"], row["system"]) == ("rag/nq/nq/default/q1/0/icr/s2/c0", 2, "sys")
    assert row["n_tokens_total"] == tokens.count([row["prefix_text"] + row["suffix"]])[0]


def test_chunked_icr_pools_the_pages_of_every_chunk(tokens):
    built = _build(
        [
            _answer("chunked_icr", "q1", ["2"], call_index=0),
            _answer("chunked_icr", "q1", ["6", "2"], call_index=1),
            _answer("chunked_icr", "q1", [], call_index=2),
        ],
        tokens,
    )
    assert _pages(built.row(0, named=True)["suffix"]) == ["2", "6"]


def test_retrieve_then_read_shows_bm25s_passages_in_rank_order(tokens):
    built = _build([_answer("rag_top2", "q2", ["2", "0", "4"])], tokens)
    row = built.row(0, named=True)
    assert row["context_pids"] == ["p2", "p0"]
    assert row["suffix"].startswith(
        "====== Now let's start! ======\n"
        "ID: 0 | TITLE: Seas | CONTENT: All about seas. | END ID: 0\n"
        "ID: 1 | TITLE: Cats | CONTENT: All about cats. | END ID: 1\n"
    )
    # The few-shot example brings its own top-2 passages and its answer.
    assert row["prefix_text"].count("====== Example 1 ======") == 1
    assert "query: what do dogs do" in row["prefix_text"] and "Final Answer: ['bark']" in row["prefix_text"]


def test_retrieve_then_justified_read_shows_bm25s_passages_with_their_ids(tokens):
    built = _build([_answer("rag_top2_justified_quest", "q2", ["2", "0", "4"])], tokens)
    row = built.row(0, named=True)
    assert row["context_pids"] == ["p2", "p0"]
    assert row["prefix_text"].startswith("Your task is to answer a given question based on the provided documents")
    assert row["suffix"].startswith(
        "ID: 2 | TITLE: Seas | CONTENT: All about seas.\nID: 0 | TITLE: Cats | CONTENT: All about cats.\n====="
    )
    assert row["suffix"].count("ID: ") == 2 and "what is salty" in row["suffix"]
    assert "names of Wikipedia categories" in row["prefix_text"]


def test_verification_shows_each_candidate_its_cited_documents_only(tokens):
    payload = {
        "candidates": [
            {"candidate": "cats", "judgment": "TRUE", "doc_ids": ["0", "3"]},
            {"candidate": "dogs", "judgment": "FALSE", "doc_ids": ["42"]},  # cites nothing shown: not verified
            {"candidate": "suns", "judgment": "FALSE", "doc_ids": ["3"]},
        ],
        "answer_doc_ids": ["0"],
    }
    built = _build([_answer("justified_verify", "q1", ["cats"], payload_strict=json.dumps(payload))], tokens)
    assert built["call_index"].to_list() == [0, 2]
    assert built["context_pids"].to_list() == [["p0", "p3"], ["p3"]]
    assert [json.loads(p)["candidate"] for p in built["payload"]] == ["cats", "suns"]
    first = built.row(0, named=True)["suffix"]
    assert "ID: 0 | TITLE: Cats" in first and "ID: 3 | TITLE: Suns" in first and "Dogs" not in first
    assert first.endswith("===== Candidate Answer =====\ncats")


def test_retrieve_then_verify_asks_once_per_retrieved_entity(tokens):
    built = _build([_answer("rag_top2_verify_cot", "q2", ["2", "0", "4"])], tokens)
    assert built["call_index"].to_list() == [0, 1]
    assert built["context_pids"].to_list() == [["p2"], ["p0"]]
    assert [json.loads(p)["candidate"] for p in built["payload"]] == ["Seas", "Cats"]
    first = built.row(0, named=True)
    assert "ID: 2 | TITLE: Seas" in first["suffix"] and "Cats" not in first["suffix"].partition("=====")[0]
    assert first["suffix"].endswith("===== Candidate Answer =====\nSeas")
    # the gold document (q2: p2) is the first call's; its ID as the prompt shows it
    assert (first["gold_shown_ids"], built.row(1, named=True)["gold_shown_ids"]) == ('["2"]', "[]")


def test_a_third_stage_verifies_the_candidates_of_the_second(tokens):
    """rag_top{k}_justified_verify: stage 3 is built from stage 2's justified answer, as
    justified_verify's stage 2 is from stage 1's."""
    payload = {"candidates": [{"candidate": "seas", "judgment": "TRUE", "doc_ids": ["2"]}], "answer_doc_ids": ["2"]}
    justified = _answer("rag_top2_justified_verify", "q2", ["seas"], stage=2, payload_strict=json.dumps(payload))
    assert _build([justified], tokens).height == 0  # stage 2 rows build no stage-2 prompt
    answers = pl.DataFrame([justified], schema_overrides={"answers_strict": pl.List(pl.String)})
    built = stage2.build(answers, CORPUS, QUERIES, DATASETS, DOC_IDS, Design(), tokens, stage=3)
    row = built.row(0, named=True)
    assert (row["stage"], row["prompt_id"], row["context_pids"]) == (
        3,
        "rag/nq/nq/default/q2/0/rag_top2_justified_verify/s3/c0",
        ["p2"],
    )
    assert row["suffix"].endswith("===== Candidate Answer =====\nseas") and row["gold_shown_ids"] == '["2"]'


def test_later_stages_record_the_gold_ids_they_show(tokens):
    pages = _build([_answer("icr", "q1", ["5", "1"])], tokens).row(0, named=True)
    reader = _build([_answer("rag_top2", "q1", ["2", "0"])], tokens).row(0, named=True)
    justified = _build([_answer("rag_top2_justified", "q1", ["2", "0"])], tokens).row(0, named=True)
    assert (pages["gold_shown_ids"], reader["gold_shown_ids"], justified["gold_shown_ids"]) == (
        '["1"]',  # page 1 is p0, the gold of q1
        '["1"]',  # the reader numbers its passages 0..k-1 in rank order: p0 is second
        '["0"]',  # justified QA shows the variant's own IDs
    )


@pytest.mark.parametrize("status", ["error", "skipped_no_credentials"])
def test_a_stage_one_call_that_did_not_answer_builds_nothing(tokens, status):
    assert _build([_answer("icr", "q1", ["1"], status=status)], tokens).height == 0
