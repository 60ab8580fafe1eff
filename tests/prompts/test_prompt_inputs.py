"""Reading the marts into collections: order, grouping and errors that name the row."""

from __future__ import annotations

import polars as pl
import pytest

from loft_warehouse.errors import BadInputError
from loft_warehouse.prompts.inputs import collections


def test_collections_group_by_corpus_and_split(corpus, queries, datasets):
    found = {c.dataset: c for c in collections(corpus, queries, datasets)}
    assert sorted(found) == ["arguana", "bbh_web", "hotpotqa", "nq", "topiocqa"]
    hotpotqa = found["hotpotqa"]
    assert [d.pid for d in hotpotqa.docs] == ["h-okazaki", "h-song", "h-award", "h-lodger"]
    assert [q.qid for q in hotpotqa.few_shot] == ["hq-f1", "hq-f2"]
    assert [q.qid for q in hotpotqa.evaluated] == ["hq-t1"]
    assert found["hotpotqa"].few_shot[0].turns[0].gold == ["h-award", "h-okazaki"]
    assert [t.text for t in found["topiocqa"].evaluated[0].turns] == [
        "who were rixton",
        "what was their debut single",
    ]
    assert found["arguana"].has_title is False
    assert found["bbh_web"].contexts == ("2k", "4k")


def test_bad_gold_json_names_the_query(corpus, queries, datasets):
    broken = queries.with_columns(
        pl.when(pl.col("qid") == "nq-t1").then(pl.lit("[oops")).otherwise(pl.col("gold")).alias("gold")
    )
    with pytest.raises(BadInputError, match=r"queries rag/nq/nq:qid=nq-t1 turn=0: gold is not JSON"):
        list(collections(corpus, broken, datasets))


def test_doc_id_gap_is_an_error(corpus, queries, datasets):
    gapped = corpus.filter(~((pl.col("dataset") == "nq") & (pl.col("doc_id") == 1)))
    with pytest.raises(BadInputError, match="corpus rag/nq/nq: doc_id is not 0..N-1"):
        list(collections(gapped, queries, datasets))


def test_missing_turn_is_an_error(corpus, queries, datasets):
    partial = queries.filter(~((pl.col("qid") == "tq-1") & (pl.col("turn") == 0)))
    with pytest.raises(BadInputError, match=r"qid=tq-1: turns \[1\] but n_turns=2"):
        list(collections(corpus, partial, datasets))


def test_missing_column_and_missing_dataset_row(corpus, queries, datasets):
    with pytest.raises(BadInputError, match="corpus: missing column"):
        list(collections(corpus.drop("pid"), queries, datasets))
    with pytest.raises(BadInputError, match="no row for rag/nq"):
        list(collections(corpus, queries, datasets.filter(pl.col("dataset") != "nq")))


def test_queries_of_a_corpus_without_documents_are_an_error(corpus, queries, datasets):
    with pytest.raises(BadInputError, match=r"queries of corpora with no documents: \['rag/nq/nq'\]"):
        list(collections(corpus.filter(pl.col("dataset") != "nq"), queries, datasets))
