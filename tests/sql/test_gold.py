import datetime as dt
import json
from decimal import Decimal

import duckdb
import pytest

from loft_warehouse.sql.gold import (
    Execution,
    canonical,
    cuts_through_ties,
    disagreement_cause,
    execute_sql,
    json_safe,
    rows_json,
    run_duckdb,
    run_sqlite,
    same_order_up_to_ties,
)
from tests.sql.tiny import engines, schema, tiny_dump


@pytest.fixture
def tiny(tmp_path):
    dump = tiny_dump(tmp_path)
    duck, lite = engines(dump)
    return schema(dump), duck, lite


def run(tiny, sql):
    db_schema, duck, lite = tiny
    return execute_sql(sql, db_schema, duck, lite)


def test_cells_become_json_safe():
    assert json_safe(Decimal("1.50")) == 1.5
    assert json_safe(True) == 1
    assert json_safe(dt.datetime(2018, 3, 9, 19, 3, 21)) == "2018-03-09 19:03:21"
    assert json_safe(dt.date(2018, 3, 9)) == "2018-03-09"
    assert json_safe(float("inf")) == "inf"
    assert rows_json([(1, Decimal("2.5"), None, "é")]) == '[[1, 2.5, null, "é"]]'


def test_every_duckdb_result_type_becomes_json():
    """UUID, INTERVAL, lists and structs (with decimals and NaN inside) are cells, not crashes."""
    con = duckdb.connect()
    row = con.sql(
        "select '0f8fad5b-d9cb-469f-a165-70867728950e'::uuid, interval 90 minute, [1.5::decimal(3, 1), 'nan'::double], "
        "{'a': 2.5::decimal(3, 1)}"
    ).fetchone()
    text = rows_json([row])
    assert json.loads(text) == [["0f8fad5b-d9cb-469f-a165-70867728950e", "1:30:00", [1.5, "nan"], {"a": 2.5}]]


def test_numbers_compare_by_value_across_engines():
    assert canonical(45) == canonical(45.0) == canonical(Decimal("45.000"))
    assert canonical(0.1 + 0.2) == canonical(0.3)
    assert canonical("45") == "45"


def test_limit_cutting_through_ties():
    keys = [(3,), (2,), (2,), (1,)]
    assert cuts_through_ties(keys, limit=2, offset=0)
    assert not cuts_through_ties(keys, limit=1, offset=0)
    assert not cuts_through_ties(keys, limit=3, offset=0)
    assert cuts_through_ties(keys, limit=1, offset=2)
    assert not cuts_through_ties(keys, limit=10, offset=0)


def test_order_up_to_ties():
    keys = [(1,), (2,), (2,), (3,)]
    assert same_order_up_to_ties([("a",), ("b",), ("c",), ("d",)], [("a",), ("c",), ("b",), ("d",)], keys)
    assert not same_order_up_to_ties([("a",), ("b",), ("c",), ("d",)], [("b",), ("a",), ("c",), ("d",)], keys)


def test_disagreement_causes():
    ok = Execution("ok", [(1,)])
    error = Execution("error", [], "boom")
    assert disagreement_cause(error, error, True, False, False) is None
    assert disagreement_cause(error, ok, True, False, False) == "duckdb_error_only"
    assert disagreement_cause(ok, error, True, False, False) == "sqlite_error_only"
    assert disagreement_cause(ok, Execution("ok", [(1.0,)]), True, False, False) is None
    assert disagreement_cause(ok, ok, False, False, False) == "row_order"
    assert disagreement_cause(Execution("ok", [("3",)]), Execution("ok", [(3,)]), True, False, False) == "value_types"
    assert disagreement_cause(ok, Execution("ok", [(2,)]), True, True, False) == "tie_at_limit"
    assert disagreement_cause(ok, Execution("ok", [(2,)]), True, False, True) == "arbitrary_row"
    assert disagreement_cause(ok, Execution("ok", [(1,), (1,)]), True, False, False) == "row_count"
    assert disagreement_cause(ok, Execution("ok", [(2,)]), True, False, False) == "values"


def test_well_defined_gold_is_eligible(tiny):
    row = run(tiny, "SELECT name FROM people WHERE age > 20 ORDER BY age DESC, name")
    assert json.loads(row["rows"]) == [["Carol"], ["Dan"], ["Alice"]]
    assert row["status"] == "ok" and row["sqlite_status"] == "ok"
    assert row["has_order_by"] and row["agree_ordered"] and row["agree_multiset"]
    assert row["eligible"] and row["exclusion_reason"] is None


def test_limit_through_ties_is_order_dependent(tiny):
    row = run(tiny, "SELECT name FROM people ORDER BY age DESC LIMIT 1")  # Carol and Dan are 45
    assert row["exclusion_reason"] == "order_dependent"
    assert not row["eligible"]
    assert run(tiny, "SELECT name FROM people ORDER BY age LIMIT 3")["exclusion_reason"] is None


def test_limit_without_order_by_that_drops_rows_is_order_dependent(tiny):
    assert run(tiny, "SELECT name FROM people LIMIT 2")["exclusion_reason"] == "order_dependent"
    assert run(tiny, "SELECT count(*) FROM people LIMIT 1")["exclusion_reason"] is None


def test_bare_column_from_an_arbitrary_row_is_excluded(tiny):
    row = run(tiny, "SELECT team, name FROM people GROUP BY team")
    assert row["exclusion_reason"] == "arbitrary_row"
    row = run(tiny, "SELECT name, max(age) FROM people")  # two people are 45
    assert row["exclusion_reason"] == "arbitrary_row"
    row = run(tiny, "SELECT name, max(height) FROM people")
    assert row["exclusion_reason"] is None
    assert json.loads(row["rows"]) == [["Bob", 1.8]]


def test_empty_null_and_error_results_are_excluded(tiny):
    assert run(tiny, "SELECT name FROM people WHERE age > 99")["exclusion_reason"] == "empty_result"
    assert run(tiny, "SELECT max(age) FROM people WHERE age > 99")["exclusion_reason"] == "null_result"
    row = run(tiny, "SELECT nope FROM people")
    assert row["status"] == "error" and row["exclusion_reason"] == "error"
    assert row["sqlite_status"] == "error" and row["disagreement_cause"] is None


def test_ties_in_order_by_without_limit_stay_eligible(tiny):
    row = run(tiny, "SELECT name FROM people ORDER BY team")
    assert row["eligible"] and row["has_order_by"]


def test_runaway_queries_are_stopped():
    import sqlite3

    import duckdb

    slow = "SELECT count(*) FROM range(100000) a, range(100000) b"
    assert run_duckdb(duckdb.connect(), slow, timeout_s=0.2).status == "error"
    lite = sqlite3.connect(":memory:")
    recursive = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"
    result = run_sqlite(lite, recursive, timeout_s=0.2)
    assert result.status == "error" and "interrupted" in result.error
