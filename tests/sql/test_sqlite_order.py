"""SQLite's implicit row order written out for DuckDB, on hand-made tables in both engines.

Row ids follow the dump order below (visits 1..8, tickets 1..5); the expected rows are worked
out by hand from the rules in the `sqlite_order` docstring and checked against SQLite itself.
"""

import json
import sqlite3

import duckdb
import pytest

from loft_warehouse.sql.databases import load_duckdb, load_sqlite
from loft_warehouse.sql.gold import execute_sql
from loft_warehouse.sql.pgdump import parse_dump
from loft_warehouse.sql.rewrite import parse_duckdb, to_duckdb, to_sqlite
from loft_warehouse.sql.schema import Schema
from loft_warehouse.sql.sqlite_order import loop_order

DUMP = """CREATE TABLE public.visits (
    id integer,
    city text,
    visitor text,
    score integer
);

COPY public.visits (id, city, visitor, score) FROM stdin;
1\tParis\tann\t5
2\tOslo\tbob\t7
3\tRome\tcat\t7
4\tOslo\tdan\t3
5\tParis\teve\t7
6\tRome\tfay\t2
7\tLima\tgus\t\\N
8\tLima\thal\t\\N
\\.

CREATE TABLE public.tickets (
    city text,
    price integer,
    kind text
);

COPY public.tickets (city, price, kind) FROM stdin;
Oslo\t30\tday
Rome\t10\tday
Oslo\t20\tweek
Paris\t15\tday
Oslo\t20\tday
\\.
"""


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = tmp_path_factory.mktemp("order") / "order.sql"
    path.write_text(DUMP, encoding="utf-8")
    dump = parse_dump(path)
    duck = duckdb.connect(":memory:", config={"threads": 1})
    load_duckdb(dump, duck)
    lite = sqlite3.connect(":memory:")
    load_sqlite(dump, lite)
    return Schema.from_dump(dump), duck, lite


def both(db, sql):
    """(DuckDB rows of the rewrite with SQLite's row order, SQLite rows), in returned order."""
    schema, duck, lite = db
    duck_rows = duck.execute(to_duckdb(sql, schema, row_order=True)).fetchall()
    return duck_rows, lite.execute(to_sqlite(sql, schema)).fetchall()


def test_ties_before_limit_keep_rowid_order(db):
    sql = "SELECT visitor FROM visits ORDER BY score DESC LIMIT 2"  # bob, cat and eve score 7
    assert "ORDER BY visits.score DESC, visits.rowid LIMIT 2" in to_duckdb(sql, db[0], row_order=True)
    assert both(db, sql) == ([("bob",), ("cat",)], [("bob",), ("cat",)])


def test_limit_without_order_by_takes_rows_in_rowid_order(db):
    assert both(db, "SELECT visitor FROM visits WHERE score > 4 LIMIT 2") == ([("ann",), ("bob",)],) * 2


def test_groups_tied_on_count_follow_the_order_by_direction(db):
    # Lima, Oslo, Paris and Rome have two visits each.
    desc = "SELECT city FROM visits GROUP BY city ORDER BY count(*) DESC LIMIT 1"
    assert "ORDER BY COUNT(*) DESC, visits.city DESC LIMIT 1" in to_duckdb(desc, db[0], row_order=True)
    assert both(db, desc) == ([("Rome",)], [("Rome",)])
    asc = "SELECT city FROM visits GROUP BY city ORDER BY count(*) LIMIT 1"
    assert both(db, asc) == ([("Lima",)], [("Lima",)])


def test_groups_come_in_ascending_key_order_otherwise(db):
    # Two group keys, one ORDER BY term: keys ascending, NULL first. (Lima, NULL) occurs twice,
    # every other pair once.
    sql = "SELECT city, score FROM visits GROUP BY city, score ORDER BY count(*) DESC LIMIT 3"
    assert both(db, sql) == ([("Lima", None), ("Oslo", 3), ("Oslo", 7)],) * 2
    assert both(db, "SELECT city, count(*) FROM visits GROUP BY city LIMIT 1") == ([("Lima", 2)],) * 2


def test_bare_column_comes_from_the_first_row_holding_the_max(db):
    sql = "SELECT visitor, max(score) FROM visits"
    assert "FIRST(visits.visitor ORDER BY visits.score DESC, visits.rowid)" in to_duckdb(sql, db[0], row_order=True)
    assert both(db, sql) == ([("bob", 7)], [("bob", 7)])
    # Per group; Lima's scores are all NULL, so its row is the group's last.
    grouped = "SELECT city, visitor, max(score) FROM visits GROUP BY city ORDER BY city"
    expected = [("Lima", "hal", None), ("Oslo", "bob", 7), ("Paris", "eve", 7), ("Rome", "cat", 7)]
    assert both(db, grouped) == (expected, expected)


def test_bare_column_without_min_or_max_comes_from_the_first_row(db):
    sql = "SELECT city, visitor FROM visits GROUP BY city ORDER BY city"
    assert "FIRST(visits.visitor ORDER BY visits.rowid) AS visitor" in to_duckdb(sql, db[0], row_order=True)
    expected = [("Lima", "gus"), ("Oslo", "bob"), ("Paris", "ann"), ("Rome", "cat")]
    assert both(db, sql) == (expected, expected)


def test_inner_table_rows_come_in_used_column_order(db):
    # visits is outer; Oslo's tickets come through an automatic index on (city, kind): the two
    # 'day' tickets (rowids 1 and 5) before the 'week' one (rowid 3).
    sql = (
        "SELECT T1.visitor, T2.kind FROM visits AS T1 JOIN tickets AS T2 ON T1.city = T2.city "
        "ORDER BY T1.score DESC LIMIT 2"
    )
    order = "ORDER BY t1.score DESC, t1.rowid, t2.city NULLS FIRST, t2.kind NULLS FIRST, t2.rowid LIMIT 2"
    assert order in to_duckdb(sql, db[0], row_order=True)
    assert both(db, sql) == ([("bob", "day"), ("bob", "day")],) * 2


def test_filtered_table_is_the_outer_loop(db):
    # tickets (kind = 'day') is outer: its Oslo, Rome, Paris, Oslo rows in rowid order, each
    # followed by the visits of that city; the first two scores of 7 are bob's and cat's.
    sql = (
        "SELECT T1.visitor FROM visits AS T1 JOIN tickets AS T2 ON T1.city = T2.city "
        "WHERE T2.kind = 'day' ORDER BY T1.score DESC LIMIT 2"
    )
    assert "ORDER BY t1.score DESC, t2.rowid, t1.city NULLS FIRST" in to_duckdb(sql, db[0], row_order=True)
    assert both(db, sql) == ([("bob",), ("cat",)],) * 2


def test_order_dependent_gold_stays_excluded_though_the_engines_agree(db):
    schema, duck, lite = db
    row = execute_sql("SELECT visitor FROM visits ORDER BY score DESC LIMIT 1", schema, duck, lite)
    assert row["exclusion_reason"] == "order_dependent"
    assert row["agree_multiset"] and row["disagreement_cause"] is None
    assert json.loads(row["rows"]) == [["bob"]]
    row = execute_sql("SELECT city, visitor FROM visits GROUP BY city", schema, duck, lite)
    assert row["exclusion_reason"] == "arbitrary_row" and row["disagreement_cause"] is None


SCHEMA = Schema(
    {
        "a": {"x": "integer", "f": "text", "n": "integer"},
        "b": {"x": "integer", "y": "integer", "k": "text"},
        "c": {"y": "integer", "g": "text"},
        "d": {"y": "integer", "h": "text"},
    }
)


def loops(sql):
    return [(source.alias, searched) for source, searched in loop_order(parse_duckdb(sql), SCHEMA)]


def test_loop_order_starts_from_the_table_with_the_strongest_own_filter():
    three = "SELECT 1 FROM a AS t1 JOIN b AS t2 ON t1.x = t2.x JOIN c AS t3 ON t2.y = t3.y"
    assert loops(three) == [("t1", False), ("t2", True), ("t3", True)]
    assert loops(three + " WHERE t3.g = 'dog'") == [("t3", False), ("t2", True), ("t1", True)]
    # An equality with a constant keeps fewer rows than a range; the inner tables then follow
    # in FROM order, whatever their own filters.
    assert loops(three + " WHERE t1.n > 3 AND t2.k = 'T'") == [("t2", False), ("t1", True), ("t3", True)]
    assert loops(three + " WHERE t1.f = 'F' AND t3.g = 'dog'") == [("t1", False), ("t2", True), ("t3", True)]


def test_loop_order_scans_unsearchable_tables_first():
    # b and c cannot be searched (no equality): scanned outermost, a searched by its constant.
    assert loops("SELECT 1 FROM a AS t1, b AS t2, c AS t3 WHERE t1.f = 'F'") == [
        ("t2", False),
        ("t3", False),
        ("t1", True),
    ]


def test_loop_order_keeps_a_left_join_inner_unless_where_rejects_its_nulls():
    left = "SELECT 1 FROM a AS t1 LEFT JOIN b AS t2 ON t1.x = t2.x WHERE "
    assert loops(left + "t2.k IS NULL") == [("t1", False), ("t2", True)]
    assert loops(left + "t2.k = 'T'") == [("t2", False), ("t1", True)]
    assert loop_order(parse_duckdb("SELECT 1 FROM (SELECT 1) AS s"), SCHEMA) is None


SHAPES = [
    "a AS t1 JOIN b AS t2 ON t1.x = t2.x WHERE t1.x = 0",
    "a AS t1 JOIN b AS t2 ON t1.x = t2.x WHERE t1.x = 5",
    "a AS t1 JOIN b AS t2 ON t1.x = t2.x JOIN c AS t3 ON t2.y = t3.y WHERE t2.k = 'T' AND t3.g = 'x'",
    "c AS t3 JOIN b AS t2 ON t2.y = t3.y JOIN a AS t1 ON t1.x = t2.x WHERE t3.y = 1 AND t1.n < 4",
    "d AS t4 JOIN c AS t3 ON t4.y = t3.y JOIN b AS t2 ON t2.y = t3.y JOIN a AS t1 ON t1.x = t2.x WHERE t2.y = 7",
    "a AS t1, b AS t2, c AS t3 WHERE t1.f = t3.g",
    "b AS t1, d AS t2 JOIN c AS t3 ON t3.y = t1.x JOIN a AS t4 ON t4.f = t2.y",
    "a AS t1 LEFT JOIN b AS t2 ON t1.x = t2.x LEFT JOIN c AS t3 ON t2.y = t3.y WHERE t3.g = 'dog'",
    "b AS t1 LEFT JOIN d AS t2 ON t2.y = t1.y JOIN c AS t3 ON t3.y = t2.h WHERE t3.g = 'x'",
    "a AS t1 JOIN b AS t2 ON t1.x = t2.x WHERE t1.n = t1.x AND t2.y > 3",
]


@pytest.mark.parametrize("shape", SHAPES)
def test_loop_order_matches_sqlite_query_plan(shape):
    """The model against SQLite's own EXPLAIN QUERY PLAN (same tables, no indexes, no statistics)."""
    sql = f"SELECT t1.x FROM {shape}"
    lite = sqlite3.connect(":memory:")
    for table, columns in SCHEMA.tables.items():
        lite.execute(f"CREATE TABLE {table} ({', '.join(columns)})")
    plan = [row[3].split() for row in lite.execute(f"EXPLAIN QUERY PLAN {sql}")]
    expected = [(words[1].lower(), words[0] == "SEARCH") for words in plan if words[0] in ("SCAN", "SEARCH")]
    assert loops(to_duckdb(sql, SCHEMA)) == expected
