"""Operator bins of gold SQL (LOFT Figure 6), checked by hand on Spider-style queries."""

from __future__ import annotations

import duckdb
import pytest

from loft_warehouse.scoring.duckdb_functions import register
from loft_warehouse.sql.operators import ALL_BINS, gold_operators

CASES = [
    ("SELECT count(*) FROM singer", ["count"]),
    ("SELECT name FROM singer", ["no_operator"]),
    ("SELECT avg(age), min(age), max(age) FROM singer WHERE country = 'France'", ["avg", "min_max", "equality"]),
    ("SELECT sum(budget) FROM movie WHERE year >= 2000 AND year < 2010", ["sum", "inequality"]),
    # the join's ON equality pairs rows; only the WHERE comparison is a question of them
    ("SELECT T1.name FROM a AS T1 JOIN b AS T2 ON T1.id = T2.id WHERE T2.age > 30", ["inequality", "join"]),
    ("SELECT name FROM s WHERE id NOT IN (SELECT sid FROM c)", ["in", "negation", "nested"]),
    ("SELECT name FROM a INTERSECT SELECT name FROM b", ["set_operation"]),
    ("SELECT name FROM a UNION SELECT name FROM b EXCEPT SELECT name FROM c", ["set_operation"]),
    (
        "SELECT x FROM t GROUP BY x HAVING count(*) >= 2 ORDER BY x DESC LIMIT 1",
        ["count", "inequality", "group_by", "having", "order_by", "limit"],
    ),
    (
        "SELECT DISTINCT x FROM t WHERE y BETWEEN 1 AND 2 AND z LIKE '%a' AND w != 3",
        ["not_equal", "between", "like", "distinct"],
    ),
    ("SELECT * FROM (SELECT a FROM t)", ["nested"]),
    ("SELECT name FROM t WHERE age > (SELECT avg(age) FROM t)", ["avg", "inequality", "nested"]),
    ("SELEC x FROM", ["unparsable"]),
    ("", ["unparsable"]),
    (None, ["unparsable"]),
]


@pytest.mark.parametrize(("sql", "expected"), CASES)
def test_bins_by_hand(sql: str | None, expected: list[str]) -> None:
    assert gold_operators(sql) == expected


def test_bins_come_in_the_declared_order_without_repeats() -> None:
    bins = gold_operators("SELECT max(a), min(b), count(*), count(c) FROM t WHERE a = 1 OR b = 2 ORDER BY 1")
    assert bins == ["count", "min_max", "equality", "order_by"]
    assert bins == [b for b in ALL_BINS if b in bins]


def test_the_sql_function_gives_the_same_bins() -> None:
    con = register(duckdb.connect())
    rows = con.execute(
        "select loft_sql_operators(s) from (values (?), (?), (null)) as t(s)",
        ["SELECT count(*) FROM singer", "SELECT name FROM a INTERSECT SELECT name FROM b"],
    ).fetchall()
    assert rows == [(["count"],), (["set_operation"],), (["unparsable"],)]
