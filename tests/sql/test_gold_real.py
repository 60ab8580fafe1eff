"""The gold table over the real Spider/SParC dev data (about 15 s, memoised)."""

import json

import polars as pl
import pytest

from loft_warehouse.sql.gold import gold_frame


@pytest.fixture(scope="module")
def gold(root):
    return gold_frame(root)


def test_one_row_per_turn_including_wta_1(gold):
    assert gold.height == 1034 + 1203
    assert gold.filter(pl.col("exclusion_reason") == "no_database").height == 62 + 59
    assert gold.select(pl.struct("dataset", "qid", "turn").is_unique().all()).item()


def test_known_gold_rows(gold):
    first = gold.filter(pl.col("qid") == "spider-dev-0").row(0, named=True)
    assert json.loads(first["rows"]) == [[6]]
    assert first["eligible"] and first["agree_multiset"]
    jetblue = gold.filter((pl.col("qid") == "sparc-dev-0") & (pl.col("turn") == 2)).row(0, named=True)
    assert json.loads(jetblue["rows"]) == [["USA"]]


def test_engines_agree_on_99_percent_of_well_defined_executable_gold(gold):
    executed = gold.filter((pl.col("status") != "error") & (pl.col("sqlite_status") != "error"))
    defined = executed.filter(~pl.col("exclusion_reason").is_in(["order_dependent", "arbitrary_row"]).fill_null(False))
    agree = defined.filter(pl.col("disagreement_cause").is_null())
    assert agree.height / defined.height >= 0.99
    assert set(gold["disagreement_cause"].drop_nulls()) <= {"tie_at_limit", "arbitrary_row", "value_types"}


def test_every_ineligible_turn_has_a_reason(gold):
    assert gold.filter(~pl.col("eligible") & pl.col("exclusion_reason").is_null()).height == 0
    assert gold.filter(pl.col("eligible") & pl.col("exclusion_reason").is_not_null()).height == 0
    assert gold.filter(pl.col("eligible") & (pl.col("n_rows") == 0)).height == 0


def test_dataset_selection(gold, root):
    assert gold_frame(root, "sql/sparc")["dataset"].unique().to_list() == ["sparc"]
    assert gold_frame(root, "rag/nq, sql/spider").height == 1034
    assert gold_frame(root, "retrieval/arguana").height == 0
    # The selection as dbt hands over a YAML list, and the task wildcard.
    assert gold_frame(root, ["rag/nq", "sql/spider"]).height == 1034
    assert gold_frame(root, ["sql/*"]).height == gold_frame(root).height
    assert gold_frame(root, "").height == gold.height
