"""Each corpus contract holds on the real build, and fails (dbt test and GX suite) once the
table it guards is corrupted."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from loft_warehouse.quality import run_suites
from tests.conftest import query, run_dbt

CORRUPTIONS = {
    "duplicate_pid": (
        "loft_128k",
        "insert into loft_128k.corpus select * replace (doc_id + 100000 as doc_id) "
        "from loft_128k.corpus where dataset = 'arguana' and doc_id = 0",
        "loft_128k__corpus",
        "unique_combination_loft_128k__corpus_task__dataset__corpus_id__pid",
        "corpus_keys",
    ),
    "duplicate_doc_id": (
        "loft_128k",
        "update loft_128k.corpus set doc_id = 0 where dataset = 'nq' and task = 'retrieval' and doc_id = 1",
        "loft_128k__corpus",
        "unique_combination_loft_128k__corpus_task__dataset__corpus_id__doc_id",
        "corpus_keys",
    ),
    "gold_missing": (
        "loft_128k",
        "delete from loft_128k.corpus where task = 'retrieval' and dataset = 'hotpotqa' "
        "and pid = (select min(pid) from loft_128k.corpus where dataset = 'hotpotqa' and is_gold)",
        "loft_128k__queries",
        "gold_documents_in_corpus",
        "gold_in_corpus",
    ),
    "filler_not_a_draw_prefix": (
        "loft_128k",
        "delete from loft_128k.corpus where task = 'retrieval' and dataset = 'nq' and draw_rank = 3",
        "loft_128k__corpus",
        "fillers_are_draw_prefix",
        "fillers_nest_across_sizes",
    ),
    "over_budget": (
        "loft_128k",
        "update loft_128k.corpus_stats set n_tokens = budget + 1 where dataset = 'msmarco'",
        "loft_128k__corpus_stats",
        "within_budget",
        "corpus_within_budget",
    ),
    "icl_class_missing": (
        "loft_32k",
        "delete from loft_32k.corpus where dataset = 'bbh_tracking7' and label = '(A)'",
        "loft_32k__corpus",
        "icl_classes_present",
        "icl_classes_present",
    ),
    "sql_table_missing": (
        "loft_128k",
        "delete from loft_128k.corpus where task = 'sql' and dataset = 'spider' "
        "and pid = (select min(pid) from loft_128k.corpus where dataset = 'spider')",
        "loft_128k__queries",
        "sql_databases_complete",
        "sql_databases_complete",
    ),
}


def _failing_tests(output: str) -> list[str]:
    return [line for line in output.splitlines() if " FAIL " in line]


def test_contracts_hold_on_the_real_build(spine_warehouse: Path) -> None:
    with duckdb.connect(str(spine_warehouse), read_only=True) as con:
        for schema in ("loft_32k", "loft_128k"):
            results = run_suites(con, schema, "corpus")
            assert results and all(r.success for r in results), [r.failures for r in results]


@pytest.mark.parametrize("name", sorted(CORRUPTIONS))
def test_corruption_breaks_its_contract(name: str, warehouse_copy, tmp_path: Path) -> None:
    schema, corruption, model, dbt_test, suite = CORRUPTIONS[name]
    database = warehouse_copy()
    with duckdb.connect(str(database)) as con:
        con.execute(corruption)
        results = {r.suite: r for r in run_suites(con, schema, "corpus")}
    assert not results[suite].success, f"GX suite {suite} did not notice {name}"

    outcome = run_dbt(["test", "--select", model], database)
    assert outcome.returncode != 0, outcome.stdout[-3000:]
    failing = _failing_tests(outcome.stdout)
    assert any(dbt_test in line for line in failing), failing


def test_icl_class_corruption_target_exists(spine_warehouse: Path) -> None:
    labels = query(spine_warehouse, "select distinct label from loft_32k.corpus where dataset = 'bbh_tracking7'")
    assert ("(A)",) in labels


def test_declared_not_null_constraints_are_enforced_by_the_tables(spine_warehouse: Path, warehouse_copy) -> None:
    manifest = json.loads((spine_warehouse.parent / "target" / "manifest.json").read_text(encoding="utf-8"))
    declared = {
        (node["schema"], node["alias"], column)
        for node in manifest["nodes"].values()
        if node["resource_type"] == "model" and node["config"]["contract"]["enforced"]
        for column, spec in node["columns"].items()
        if any(c["type"] == "not_null" for c in spec["constraints"])
    }
    tables = set(query(spine_warehouse, "select schema_name, table_name from duckdb_tables()"))
    built = {d for d in declared if d[:2] in tables}
    enforced = set(
        query(
            spine_warehouse,
            "select schema_name, table_name, unnest(constraint_column_names) from duckdb_constraints() "
            "where constraint_type = 'NOT NULL'",
        )
    )
    assert {("loft_128k", "corpus", "pid"), ("loft_32k", "queries", "qid")} <= built
    assert built - enforced == set()
    with duckdb.connect(str(warehouse_copy())) as con, pytest.raises(duckdb.ConstraintException, match="NOT NULL"):
        con.execute("update loft_128k.corpus set pid = null where dataset = 'arguana'")


def test_a_test_split_that_ends_up_empty_breaks_its_contract(warehouse_copy) -> None:
    """Issue 33 item 4: a dataset whose size takes a test split but has no test query left fails
    `scored_split_present`, instead of building a warehouse with nothing to score for it."""
    database = warehouse_copy()
    with duckdb.connect(str(database)) as con:
        con.execute("delete from loft_128k.queries where task = 'retrieval' and dataset = 'arguana' and split = 'test'")
    outcome = run_dbt(["test", "--select", "loft_128k__queries"], database)
    assert outcome.returncode != 0, outcome.stdout[-3000:]
    failing = _failing_tests(outcome.stdout)
    assert [line for line in failing if "scored_split_present" in line], failing
