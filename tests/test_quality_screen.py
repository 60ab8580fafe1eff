"""DuckDB's screen before GX: given only the rows the screen keeps, GX reaches the verdict and
the unexpected counts it reaches on every row of the changed partitions."""

from __future__ import annotations

import json
import random
import shutil

import duckdb
import pytest

from loft_warehouse import quality
from tests.spies import spy
from tests.test_quality import SCORED_RUNS

HOSTILE = {
    "name": "hostile_rows",
    "group": "results",
    "partition_by": ["run"],
    "partition_tables": ["rows"],
    "query": "select * from {rows}",
    "expectations": [
        {"type": "expect_column_values_to_not_be_null", "kwargs": {"column": "text"}},
        {"type": "expect_column_values_to_not_be_null", "kwargs": {"column": "score"}},
        {"type": "expect_column_values_to_not_be_null", "kwargs": {"column": "rank"}},
        {"type": "expect_column_values_to_not_be_null", "kwargs": {"column": "weight"}},
        {"type": "expect_column_values_to_be_between", "kwargs": {"column": "score", "min_value": 0, "max_value": 1}},
        {"type": "expect_column_values_to_be_between", "kwargs": {"column": "rank", "min_value": 0}},
        {"type": "expect_column_values_to_be_between", "kwargs": {"column": "rank", "max_value": 3.5}},
        {"type": "expect_column_values_to_be_in_set", "kwargs": {"column": "status", "value_set": ["ok", "it's"]}},
        {"type": "expect_compound_columns_to_be_unique", "kwargs": {"column_list": ["run", "text", "rank"]}},
        {"type": "expect_column_values_to_be_unique", "kwargs": {"column": "id"}},
        {"type": "expect_column_values_to_be_between", "kwargs": {"column": "share", "min_value": 0, "max_value": 1}},
        {"type": "expect_column_values_to_be_between", "kwargs": {"column": "count", "min_value": 0}},
    ],
}

# (column, hostile value) pairs a seeded row may receive; None is SQL NULL.
EDITS = {
    "text": [None, "", "t1", "t1 "],
    "score": [None, float("nan"), float("inf"), float("-inf"), -0.0, -1e-300, 1.0000000000000002, 1.0],
    "rank": [None, -1, 4, 3, 0],
    "status": [None, "", "OK", "ok ", "it's", "its"],
    "id": [None, "i1", "i2"],
    "weight": [None, float("nan"), float("inf")],
    "share": [None, float("nan"), None, 1.5],
    "count": [None, None, -1],
}


def hostile_table(con: duckdb.DuckDBPyConnection, rng: random.Random) -> int:
    """Two runs of clean rows, then up to three hostile cells (a NULL, a NaN, a bound, a near
    miss of the value set, a key or id another row holds); returns how many."""
    rows = [[f"r{i % 2}", f"t{i}", rng.random(), rng.randrange(4), "ok", f"i{i}", rng.random(), rng.random(), i]
            for i in range(40)]  # fmt: skip
    edits = rng.randrange(4)
    for _ in range(edits):
        column = rng.choice(list(EDITS))
        rows[rng.randrange(len(rows))][list(EDITS).index(column) + 1] = rng.choice(EDITS[column])
    con.execute("create or replace table s.rows (run varchar, text varchar, score double, rank bigint,"
                " status varchar, id varchar, weight double, share double, count bigint)")  # fmt: skip
    con.executemany("insert into s.rows values (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    return edits


def outcome(result: quality.SuiteResult) -> tuple[bool, list[str]]:
    """Verdict and failures without their example values (their order is the frame's)."""
    return result.success, sorted(failure.split(", e.g.")[0] for failure in result.failures)


@pytest.mark.parametrize("partitioned", [True, False])
def test_the_screened_verdict_is_the_verdict_on_every_row(tmp_path, monkeypatch, partitioned):
    """80 seeded tables: GX on the screened rows (a partitioned suite) or on every row once the
    screen keeps one (a suite without partitions) and GX on every row (`everything`) give the
    same verdict and the same unexpected count per expectation; an unedited table passes
    without GX."""
    suite = HOSTILE if partitioned else {
        **{key: value for key, value in HOSTILE.items() if not key.startswith("partition")},
        "query": "select * from {schema}.rows",
    }  # fmt: skip
    (tmp_path / "hostile.json").write_text(json.dumps(suite), encoding="utf-8")
    con = duckdb.connect()
    con.sql("create schema s")
    frames = spy(monkeypatch, quality, "validate_frame", lambda frame, _suite: len(frame))
    verdicts = []
    for seed in range(80):
        monkeypatch.setenv("LOFT_CACHE_DIR", str(tmp_path / f"cache{seed}"))
        edits = hostile_table(con, random.Random(seed))
        frames.clear()
        (screened,) = quality.run_suites(con, "s", "results", tmp_path)
        to_gx = list(frames)
        (everything,) = quality.run_suites(con, "s", "results", tmp_path, everything=True)
        assert outcome(screened) == outcome(everything), seed
        assert frames == [*to_gx, 40] and everything.n_to_gx is None, seed
        if partitioned:
            assert (screened.n_validated, everything.n_validated) == (40, 40), seed
            assert screened.n_to_gx <= 6 and to_gx == ([screened.n_to_gx] if screened.n_to_gx else []), seed
        else:
            assert to_gx == ([] if screened.n_to_gx == 0 else [40]), seed
        assert edits > 0 or (screened.n_to_gx, to_gx) == (0, []), seed
        verdicts.append(screened.success)
    assert 15 < sum(verdicts) < 65  # both verdicts are well represented


def test_the_scores_suites_send_gx_only_the_suspect_rows(tmp_path, monkeypatch):
    """The real score suites on warehouse-typed rows: a clean run passes without GX, a score
    outside [0, 1] sends GX that row, with the verdict GX gives on every row."""
    monkeypatch.setenv("LOFT_CACHE_DIR", str(tmp_path / "cache"))
    for name in ["results__scores_keys.json", "results__prediction_rows.json", "stored_runs_fingerprint.sql"]:
        shutil.copy(quality.EXPECTATIONS_DIR / name, tmp_path / name)
    con = duckdb.connect()
    con.sql(SCORED_RUNS)
    con.sql("alter table s_internal.int_turn_scores alter value type double")
    con.sql("alter table s_internal.int_predictions add column stage bigint default 1")
    con.sql("alter table s_internal.int_predictions add column call_index bigint default 0")
    con.sql("alter table s_internal.int_predictions add column parse_status_loft varchar default 'ok'")
    con.sql("alter table s_internal.int_predictions add column parse_status_strict varchar default 'ok'")
    frames = spy(monkeypatch, quality, "validate_frame", lambda frame, _suite: len(frame))
    clean = quality.run_suites(con, "s", "results", tmp_path)
    assert [(r.success, r.n_validated, r.n_to_gx) for r in clean] == [(True, 4, 0), (True, 4, 0)]
    assert frames == []
    assert clean[0].summary() == "PASS s results_prediction_rows (4 rows; 0 left by DuckDB's screen went to GX)"
    con.sql(
        "update s_internal.int_turn_scores set value = 1.5, run_fingerprint = 'a2' where system = 'a' and qid = 'q1'"
    )
    con.sql("update s_internal.int_predictions set run_fingerprint = 'a2' where system = 'a'")
    frames.clear()
    (_, broken) = quality.run_suites(con, "s", "results", tmp_path)
    assert (broken.success, broken.n_validated, broken.n_to_gx, frames) == (False, 2, 1, [1])
    (_, everything) = quality.run_suites(con, "s", "results", tmp_path, everything=True)
    assert outcome(broken) == outcome(everything) and frames[1:] == [4, 4]


@pytest.mark.parametrize(
    "expectation",
    [
        {"type": "expect_column_values_to_not_be_null", "kwargs": {"column": "text", "mostly": 0.9}},
        {
            "type": "expect_column_values_to_be_between",
            "kwargs": {"column": "score", "max_value": 1, "strict_max": True},
        },
        {"type": "expect_column_values_to_be_between", "kwargs": {"column": "text", "min_value": 0}},
        {"type": "expect_column_values_to_be_in_set", "kwargs": {"column": "rank", "value_set": [0, 1]}},
        {"type": "expect_column_values_to_be_unique", "kwargs": {"column": "score"}},
        {"type": "expect_column_mean_to_be_between", "kwargs": {"column": "score", "min_value": 0}},
        {"type": "expect_column_values_to_not_be_null", "kwargs": {"column": "not_a_column"}},
    ],
)
def test_an_expectation_the_screen_cannot_judge_sends_gx_every_row(expectation):
    """A `mostly`, a strict bound, a type or an expectation outside the screen: no screen."""
    kinds = {"text": "varchar", "score": "double", "rank": "bigint"}
    assert quality._screen({"expectations": [HOSTILE["expectations"][0], expectation]}, kinds) is None
