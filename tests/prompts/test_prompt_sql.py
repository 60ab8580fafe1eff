"""SQL rows: the SQL track's prompt, split so that each database is stored once."""

from __future__ import annotations

import json

import polars as pl
import pytest

from loft_warehouse.design import Design
from loft_warehouse.prompts.inputs import collections
from loft_warehouse.prompts.render import render
from loft_warehouse.prompts.sql import sql_prefix, sql_prompt
from loft_warehouse.prompts.store import build
from loft_warehouse.prompts.variants import VARIANTS, resolve

LEAD_IN = "Answer: Here's a step-by-step approach using the provided tables:"
INTRO = (
    "Given a query, find from the following tables all the information relevant to the query. Then "
    "answer the query. Then format the answer into a list of lists."
)
SINGER = "singer_id,name\n1,Joe Sharp\n2,Timbaland"
CONCERT = "concert_id,year\n1,2014"
TABLES = [("singer", SINGER), ("concert", CONCERT)]


DATABASE_TABLES = {"concert_singer": ["concert_singer.singer", "concert_singer.concert"], "pets_1": ["pets_1.pets"]}


def corpus() -> pl.DataFrame:
    rows = [
        ("spider", "concert_singer", 0, "concert_singer.singer", "singer", SINGER),
        ("spider", "concert_singer", 1, "concert_singer.concert", "concert", CONCERT),
        ("spider", "pets_1", 0, "pets_1.pets", "pets", "pet_id\n1"),
        ("sparc", "concert_singer", 0, "concert_singer.singer", "singer", SINGER),
        ("sparc", "concert_singer", 1, "concert_singer.concert", "concert", CONCERT),
    ]
    return pl.DataFrame(
        [
            {
                "task": "sql",
                "dataset": d,
                "corpus_id": c,
                "doc_id": i,
                "pid": p,
                "title": t,
                "text": x,
                "answer": None,
                "min_context": "128k",
            }
            for d, c, i, p, t, x in rows
        ]
    )


def queries() -> pl.DataFrame:
    rows = [
        ("spider", "pets_1", "few_shot", "s-f", 0, 1, "How many pets?", [[1]]),
        ("spider", "concert_singer", "test", "s-1", 0, 1, "How many singers are there?", [[2]]),
        ("spider", "concert_singer", "dev", "s-2", 0, 1, "Which year had a concert?", [[2014]]),
        ("sparc", "concert_singer", "test", "c-1", 0, 2, "List the singers.", [["Joe Sharp"], ["Timbaland"]]),
        ("sparc", "concert_singer", "test", "c-1", 1, 2, "Only Joe?", [["Joe Sharp"]]),
    ]
    return pl.DataFrame(
        [
            {
                "task": "sql",
                "dataset": d,
                "corpus_id": c,
                "split": s,
                "qid": q,
                "turn": t,
                "n_turns": n,
                "query_text": text,
                "gold": json.dumps(g),
                "gold_pids": DATABASE_TABLES[c],  # the candidate tables: every table, as raw Spider has them
                "query_rank": i,
            }
            for i, (d, c, s, q, t, n, text, g) in enumerate(rows)
        ],
        schema_overrides={"gold_pids": pl.List(pl.String)},
    )


def datasets() -> pl.DataFrame:
    return pl.DataFrame(
        [{"task": "sql", "dataset": d, "has_title": True, "contexts": ["128k"]} for d in ("spider", "sparc")]
    )


@pytest.fixture
def by_dataset():
    return {c.dataset: c for c in collections(corpus(), queries(), datasets())}


def test_only_databases_with_evaluated_queries(by_dataset):
    assert [(c.dataset, c.corpus_id) for c in collections(corpus(), queries(), datasets())] == [
        ("sparc", "concert_singer"),
        ("spider", "concert_singer"),
    ]


def test_prefix_holds_the_database_and_suffix_the_question(by_dataset):
    rendered = render(by_dataset["spider"], VARIANTS["default"], seed=1)
    assert rendered.prefix == sql_prefix("spider") + (
        "====== Now let's start! ======\n"
        f"{INTRO}\n"
        "TABLES\n"
        "Table: singer\nsinger_id,name\n1,Joe Sharp\n2,Timbaland\n\n"
        "Table: concert\nconcert_id,year\n1,2014\n\n"
    )
    first, second = rendered.rows
    assert (first.qid, first.split, second.qid, second.split) == ("s-1", "test", "s-2", "dev")
    assert first.suffix == f"Query: How many singers are there?\n{LEAD_IN}\n"
    assert first.gold_json == "[[2]]" and first.gold_shown_ids == ()
    for row, question in ((first, "How many singers are there?"), (second, "Which year had a concert?")):
        assert rendered.prefix + row.suffix == sql_prompt("spider", TABLES, [question])


def test_a_query_with_other_candidate_tables_carries_its_own_tables():
    concert_only = pl.when(pl.col("qid") == "s-2").then(pl.lit(["concert_singer.concert"]))
    frame = queries().with_columns(gold_pids=concert_only.otherwise(pl.col("gold_pids")))
    spider = {c.dataset: c for c in collections(corpus(), frame, datasets())}["spider"]
    rendered = render(spider, VARIANTS["default"], seed=1)
    first, second = rendered.rows
    assert first.prefix is None
    assert rendered.prefix + first.suffix == sql_prompt("spider", TABLES, ["How many singers are there?"])
    assert second.prefix == sql_prefix("spider")
    assert second.prefix + second.suffix == sql_prompt("spider", TABLES[1:], ["Which year had a concert?"])


def test_sparc_turns_keep_placeholders_and_join_to_the_sql_prompt(by_dataset):
    rendered = render(by_dataset["sparc"], VARIANTS["default"], seed=1)
    questions = ["List the singers.", "Only Joe?"]
    for row in rendered.rows:
        assert rendered.prefix + row.suffix == sql_prompt("sparc", TABLES, questions, row.turn)
        assert row.n_turns == 2
    assert rendered.rows[1].suffix == (
        f"Query: List the singers.\n{LEAD_IN}\n<<MODEL_ANSWER turn=0>>"
        f"====== Now let's start! ======\n{INTRO}\n\nQuery: Only Joe?\n\nAnswer:\n"
    )


def test_sql_rows_in_the_tables(tokens):
    tables = build(
        corpus(), queries(), datasets(), Design(variants=tuple(resolve(["default", "no_cot"]))), tokens, seed=1
    )
    assert tables.prefixes.select("dataset", "corpus_id", "variant").sort("dataset").rows() == [
        ("sparc", "concert_singer", "default"),
        ("spider", "concert_singer", "default"),
    ]
    assert tables.prompts.sort("prompt_id")["prompt_id"].to_list() == [
        "sql/sparc/concert_singer/default/c-1/0",
        "sql/sparc/concert_singer/default/c-1/1",
        "sql/spider/concert_singer/default/s-1/0",
        "sql/spider/concert_singer/default/s-2/0",
    ]
    row = tables.prompts.filter(qid="s-1").row(0, named=True)
    assert (row["targets"], row["gold"], row["gold_shown_ids"]) == ("[[2]]", "[[2]]", "[]")
    text = tables.prefixes.filter(dataset="spider")["text"].item() + row["suffix"]
    assert row["n_tokens_total"] == tokens.count([text])[0]
    assert tables.doc_ids.height == 0
