import pytest

from loft_warehouse.sql.rewrite import (
    RewriteError,
    arbitrary_row_probes,
    parse_duckdb,
    to_duckdb,
    to_sqlite,
)
from loft_warehouse.sql.schema import spider_aliases
from tests.sql.tiny import SPIDER_ENTRY, engines, schema, tiny_dump


@pytest.fixture
def tiny(tmp_path):
    dump = tiny_dump(tmp_path)
    duck, lite = engines(dump)
    return schema(dump), duck, lite


def both(tiny, sql):
    """(DuckDB rows of the rewrite, SQLite rows of the original), as sorted lists."""
    db_schema, duck, lite = tiny
    duck_rows = duck.execute(to_duckdb(sql, db_schema)).fetchall()
    lite_rows = lite.execute(to_sqlite(sql, db_schema)).fetchall()
    return duck_rows, lite_rows


def test_spider_spellings_map_to_dump_names():
    tables = {"people": {"id": "integer"}, "reference_pets": {"pet_id": "integer", "kind_of_pet": "text"}}
    entry = {
        "table_names_original": ["People", "Ref_Pets"],
        "column_names_original": [[-1, "*"], [0, "id"], [1, "Pet_ID"], [1, "Kind_(of_pet)"]],
    }
    assert spider_aliases(tables, entry) == ({"ref_pets": "reference_pets"}, {"kind_(of_pet)": "kind_of_pet"})


def test_unrelated_column_is_not_mapped():
    tables = {"votes": {"vote_id": "integer", "area_code": "integer"}}
    entry = {"table_names_original": ["VOTES"], "column_names_original": [[0, "vote_id"], [0, "state"]]}
    assert spider_aliases(tables, entry) == ({}, {})


def test_renamed_table_and_column_run_in_both_engines(tiny):
    sql = 'SELECT "Kind_(of_pet)" FROM Ref_Pets WHERE Pet_ID = 2'
    assert both(tiny, sql) == ([("dog",)], [("dog",)])


def test_double_quoted_string_is_a_literal(tiny):
    sql = 'SELECT id FROM people WHERE name = "Bob"'
    assert "'Bob'" in to_duckdb(sql, tiny[0])
    assert both(tiny, sql) == ([(2,)], [(2,)])


def test_bare_column_comes_from_the_row_of_the_single_max(tiny):
    sql = "SELECT name, max(height) FROM people"
    assert "ARG_MAX(people.name, people.height)" in to_duckdb(sql, tiny[0])
    assert both(tiny, sql) == ([("Bob", 1.8)], [("Bob", 1.8)])


def test_bare_column_with_group_by_and_min(tiny):
    sql = "SELECT team, name, min(age) FROM people GROUP BY team ORDER BY team"
    duck_rows, lite_rows = both(tiny, sql)
    assert duck_rows == lite_rows == [("blue", "Carol", 45), ("green", "Eve", 17), ("red", "Bob", 17)]


def test_bare_column_without_min_or_max_is_any_value(tiny):
    sql = "SELECT T1.name, count(*) FROM people AS T1 JOIN reference_pets AS T2 ON T1.id = T2.owner_id GROUP BY T1.id"
    assert "ANY_VALUE(t1.name)" in to_duckdb(sql, tiny[0])
    duck_rows, lite_rows = both(tiny, sql)
    assert sorted(duck_rows) == sorted(lite_rows) == [("Alice", 2), ("Carol", 1)]


def test_group_key_expression_is_not_bare(tiny):
    sql = "SELECT substr(team, 1, 1), count(*) FROM people GROUP BY substr(team, 1, 1) ORDER BY 1"
    assert "ANY_VALUE" not in to_duckdb(sql, tiny[0])
    assert both(tiny, sql) == ([("b", 2), ("g", 1), ("r", 2)], [("b", 2), ("g", 1), ("r", 2)])


def test_integer_division_truncates(tiny):
    sql = "SELECT age / 2, sum(age) / count(*) FROM people WHERE id = 1"
    assert both(tiny, sql) == ([(15, 30)], [(15, 30)])
    sql = "SELECT -7 / 2, age / 7 FROM people WHERE id = 1"
    assert both(tiny, sql) == ([(-3, 4)], [(-3, 4)])


def test_division_by_zero_is_null(tiny):
    assert both(tiny, "SELECT age / 0 FROM people WHERE id = 1") == ([(None,)], [(None,)])


def test_like_is_case_insensitive(tiny):
    sql = "SELECT id FROM people WHERE name LIKE 'ali%'"
    assert "ILIKE" in to_duckdb(sql, tiny[0])
    assert both(tiny, sql) == ([(1,)], [(1,)])


def test_text_column_against_number_compares_text(tiny):
    # '9' > '5' but '10' < '5' as text; '12abc' > '5' is false, 'abc' > '5' is true.
    sql = "SELECT id FROM people WHERE code > 5 ORDER BY id"
    assert both(tiny, sql) == ([(2,), (4,)], [(2,), (4,)])
    sql = "SELECT id FROM people WHERE code IN (10, 9) ORDER BY id"
    assert both(tiny, sql) == ([(1,), (2,)], [(1,), (2,)])


def test_cast_of_text_keeps_numeric_prefix(tiny):
    sql = "SELECT id, CAST(code AS INTEGER) FROM people ORDER BY id"
    expected = [(1, 10), (2, 9), (3, 12), (4, 0), (5, None)]
    assert both(tiny, sql) == (expected, expected)


def test_cast_of_real_to_integer_truncates(tiny):
    sql = "SELECT id, CAST(height AS INT) FROM people WHERE id IN (1, 3) ORDER BY id"
    assert both(tiny, sql) == ([(1, 1), (3, -2)], [(1, 1), (3, -2)])


def test_avg_of_text_column_uses_numeric_prefix(tiny):
    # 10, 9, 12 (from '12abc'), 0 (from 'abc'); NULL ignored.
    assert both(tiny, "SELECT avg(code) FROM people") == ([(7.75,)], [(7.75,)])


def test_round_returns_a_double(tiny):
    db_schema, duck, _ = tiny
    sql = to_duckdb("SELECT round(age) FROM people WHERE id = 1", db_schema)
    assert duck.execute(f"SELECT typeof(x) FROM ({sql}) AS t(x)").fetchall() == [("DOUBLE",)]


def test_booleans_are_zero_and_one(tiny):
    sql = "SELECT id, is_adult FROM people WHERE is_adult = 1 ORDER BY id"
    assert both(tiny, sql) == ([(1, 1), (3, 1), (4, 1)], [(1, 1), (3, 1), (4, 1)])
    assert both(tiny, "SELECT sum(is_adult) FROM people") == ([(3,)], [(3,)])


def test_unknown_column_is_a_rewrite_error(tiny):
    with pytest.raises(RewriteError, match="Unknown column: state"):
        to_duckdb("SELECT T1.state FROM people AS T1 JOIN reference_pets AS T2 ON T1.state = T2.kind_of_pet", tiny[0])


def test_two_statements_are_refused(tiny):
    with pytest.raises(RewriteError, match="expected one statement"):
        to_duckdb("SELECT 1; SELECT 2", tiny[0])


def test_probes_resolve_arbitrary_picks_both_ways():
    tree = parse_duckdb("SELECT ANY_VALUE(t.a) AS a, ARG_MAX(t.b, t.c) AS b FROM t GROUP BY t.g")
    low, high = arbitrary_row_probes(tree)
    assert low.startswith("SELECT MIN(t.a) AS a, LIST_MIN(")
    assert high.startswith("SELECT MAX(t.a) AS a, LIST_MAX(")
    assert arbitrary_row_probes(parse_duckdb("SELECT count(*) FROM t")) is None


def test_spider_entry_fixture_is_consistent():
    assert SPIDER_ENTRY["table_names_original"] == ["People", "Ref_Pets"]


def test_except_and_intersect_never_match_a_number_with_text(tiny):
    # SQLite keeps 30 (an integer) against the text '30'; DuckDB would cast 30 to '30' first.
    sql = "SELECT age FROM people WHERE id = 1 EXCEPT SELECT '30'"
    assert both(tiny, sql) == ([(30,)], [(30,)])
    assert both(tiny, "SELECT code FROM people WHERE id = 2 INTERSECT SELECT 9") == ([], [])
    # Rows NULL in the mixed column still match: Eve (no height, no code) is removed.
    sql = "SELECT height, name FROM people EXCEPT SELECT code, name FROM people WHERE code IS NULL"
    duck_rows, lite_rows = both(tiny, sql)
    assert sorted(duck_rows) == sorted(lite_rows) == [(-2.7, "Carol"), (1.6, "Dan"), (1.7, "Alice"), (1.8, "Bob")]
