"""A small hand-written warehouse: the corpus / queries / stg_datasets marts, same columns.

HotPotQA-style retrieval reproduces the documents of paper Figure 11; ArguAna is titleless;
NQ RAG has an empty title; BBH has two many-shot contexts; TopiOCQA has a two-turn query.
"""

from __future__ import annotations

import json

import polars as pl
import pytest

OKAZAKI = "Shinji Okazaki is a Japanese footballer who plays as a forward."
SONG = "\"Ain't Thinkin' 'Bout You\" is a song by the band Rixton."
AWARD = "The Best Footballer in Asia 2016 was awarded to Shinji Okazaki."
LODGER = "The Lodger is a 2009 thriller film."

CORPUS = [
    # task, dataset, corpus_id, doc_id, pid, title, text, answer, min_context
    ("retrieval", "hotpotqa", "hotpotqa", 0, "h-okazaki", "Shinji Okazaki", OKAZAKI, None, "128k"),
    (
        "retrieval",
        "hotpotqa",
        "hotpotqa",
        1,
        "h-song",
        "Ain't Thinkin' 'Bout You",
        SONG,
        None,
        "128k",
    ),
    (
        "retrieval",
        "hotpotqa",
        "hotpotqa",
        2,
        "h-award",
        "Best Footballer in Asia 2016",
        AWARD,
        None,
        "128k",
    ),
    (
        "retrieval",
        "hotpotqa",
        "hotpotqa",
        3,
        "h-lodger",
        "The Lodger (2009 film)",
        LODGER,
        None,
        "128k",
    ),
    (
        "retrieval",
        "arguana",
        "arguana",
        0,
        "a-0",
        "",
        "Zoos protect endangered species.",
        None,
        "128k",
    ),
    ("retrieval", "arguana", "arguana", 1, "a-1", "", "Zoos keep animals in cages.", None, "128k"),
    ("retrieval", "arguana", "arguana", 2, "a-2", "", "Homework builds discipline.", None, "128k"),
    ("rag", "nq", "nq", 0, "n-0", "Paris", "Paris is the capital of France.", None, "128k"),
    ("rag", "nq", "nq", 1, "n-1", "", "Rome is the capital of Italy.", None, "128k"),
    ("rag", "nq", "nq", 2, "n-2", "Berlin", "Berlin is the capital of Germany.", None, "128k"),
    (
        "icl",
        "bbh_web",
        "bbh_web",
        0,
        "example-0",
        None,
        "Question: Does Ann tell the truth?",
        "Yes",
        "2k",
    ),
    (
        "icl",
        "bbh_web",
        "bbh_web",
        1,
        "example-1",
        None,
        "Question: Does Bob tell the truth?",
        "No",
        "4k",
    ),
    (
        "icl",
        "bbh_web",
        "bbh_web",
        2,
        "example-2",
        None,
        "Question: Does Cid tell the truth?",
        "No",
        "2k",
    ),
    (
        "retrieval",
        "topiocqa",
        "topiocqa",
        0,
        "t-0",
        "Rixton",
        "Rixton were an English pop band.",
        None,
        "128k",
    ),
    (
        "retrieval",
        "topiocqa",
        "topiocqa",
        1,
        "t-1",
        "Me and My Broken Heart",
        "Their debut single.",
        None,
        "128k",
    ),
]

QUERIES = [
    # task, dataset, corpus_id, split, qid, turn, n_turns, query_text, gold, gold_pids, query_rank
    (
        "retrieval",
        "hotpotqa",
        "hotpotqa",
        "few_shot",
        "hq-f1",
        0,
        1,
        "What year was the recipient of the 2016 Best Footballer in Asia born?",
        ["h-award", "h-okazaki"],
        ["h-award", "h-okazaki"],
        0,
    ),
    (
        "retrieval",
        "hotpotqa",
        "hotpotqa",
        "few_shot",
        "hq-f2",
        0,
        1,
        "Which film came out in 2009?",
        ["h-lodger"],
        ["h-lodger"],
        1,
    ),
    (
        "retrieval",
        "hotpotqa",
        "hotpotqa",
        "test",
        "hq-t1",
        0,
        1,
        'How many records had the team sold before performing "aint thinkin bout you"?',
        ["h-song"],
        ["h-song"],
        2,
    ),
    (
        "retrieval",
        "arguana",
        "arguana",
        "few_shot",
        "aq-f1",
        0,
        1,
        "Zoos are good for animals.",
        ["a-1"],
        ["a-1"],
        0,
    ),
    (
        "retrieval",
        "arguana",
        "arguana",
        "dev",
        "aq-d1",
        0,
        1,
        "Homework is useless.",
        ["a-2"],
        ["a-2"],
        1,
    ),
    (
        "rag",
        "nq",
        "nq",
        "few_shot",
        "nq-f1",
        0,
        1,
        "what is the capital of france",
        ["Paris", "Paris, France"],
        ["n-0"],
        0,
    ),
    (
        "rag",
        "nq",
        "nq",
        "test",
        "nq-t1",
        0,
        1,
        "what is the capital of italy",
        ["Rome"],
        ["n-1"],
        1,
    ),
    (
        "icl",
        "bbh_web",
        "bbh_web",
        "dev",
        "dev-0",
        0,
        1,
        "Question: Does Dee tell the truth?",
        ["Yes"],
        [],
        0,
    ),
    (
        "retrieval",
        "topiocqa",
        "topiocqa",
        "test",
        "tq-1",
        0,
        2,
        "who were rixton",
        ["t-0"],
        ["t-0"],
        0,
    ),
    (
        "retrieval",
        "topiocqa",
        "topiocqa",
        "test",
        "tq-1",
        1,
        2,
        "what was their debut single",
        ["t-1"],
        ["t-1"],
        0,
    ),
]

DATASETS = [
    ("retrieval", "hotpotqa", True, ["128k"]),
    ("retrieval", "arguana", False, ["128k"]),
    ("rag", "nq", True, ["128k"]),
    ("icl", "bbh_web", True, ["2k", "4k"]),
    ("retrieval", "topiocqa", True, ["128k"]),
]


def corpus_frame() -> pl.DataFrame:
    columns = [
        "task",
        "dataset",
        "corpus_id",
        "doc_id",
        "pid",
        "title",
        "text",
        "answer",
        "min_context",
    ]
    return pl.DataFrame([dict(zip(columns, row, strict=True)) for row in CORPUS])


def queries_frame() -> pl.DataFrame:
    columns = [
        "task",
        "dataset",
        "corpus_id",
        "split",
        "qid",
        "turn",
        "n_turns",
        "query_text",
        "gold",
        "gold_pids",
        "query_rank",
    ]
    rows = [dict(zip(columns, row, strict=True)) for row in QUERIES]
    for row in rows:
        row["gold"] = json.dumps(row["gold"])
    return pl.DataFrame(rows, schema_overrides={"gold_pids": pl.List(pl.String)})


def datasets_frame() -> pl.DataFrame:
    columns = ["task", "dataset", "has_title", "contexts"]
    return pl.DataFrame([dict(zip(columns, row, strict=True)) for row in DATASETS])


@pytest.fixture
def corpus() -> pl.DataFrame:
    return corpus_frame()


@pytest.fixture
def queries() -> pl.DataFrame:
    return queries_frame()


@pytest.fixture
def datasets() -> pl.DataFrame:
    return datasets_frame()
