"""Expectation suites: a pass on unchanged rows is kept, anything else is validated afresh."""

from __future__ import annotations

import json
import shutil

import duckdb
import pytest

from loft_warehouse import quality
from loft_warehouse.errors import DataQualityError
from tests.spies import spy

SUITE = {
    "name": "answers_present",
    "group": "results",
    "query": "select * from {schema}.answers",
    "expectations": [
        {"type": "expect_column_values_to_not_be_null", "kwargs": {"column": "answer"}},
        {"type": "expect_column_values_to_be_between", "kwargs": {"column": "score", "min_value": 0, "max_value": 1}},
    ],
}


@pytest.fixture
def unscreened(monkeypatch):
    """GX sees every row of a changed suite or partition, as without DuckDB's screen: what these
    tests count is which suites and partitions GX validates."""
    monkeypatch.setattr(quality, "_screen", lambda _suite, _kinds: None)


@pytest.fixture
def suites(tmp_path, monkeypatch, unscreened):
    monkeypatch.setenv("LOFT_CACHE_DIR", str(tmp_path / "cache"))
    folder = tmp_path / "expectations"
    folder.mkdir()
    (folder / "answers.json").write_text(json.dumps(SUITE), encoding="utf-8")
    return folder


@pytest.fixture
def validations(monkeypatch):
    return spy(monkeypatch, quality, "validate_frame", lambda frame, _suite: len(frame))


@pytest.fixture
def con():
    con = duckdb.connect()
    con.sql("create schema s; create table s.answers as select * from (values ('a', 1.0), ('b', 0.5)) t(answer, score)")
    return con


def test_a_pass_on_the_same_rows_is_kept(suites, validations, con):
    (first,) = quality.run_suites(con, "s", "results", suites)
    (second,) = quality.run_suites(con, "s", "results", suites)
    assert (first.success, first.reused, second.success, second.reused) == (True, False, True, True)
    assert validations == [2]
    assert second.summary() == "PASS s answers_present (2 rows, verdict kept from the same rows)"
    con.sql("update s.answers set score = 0.25 where answer = 'b'")
    (changed,) = quality.run_suites(con, "s", "results", suites)
    assert (changed.success, changed.reused, validations) == (True, False, [2, 2])


def test_a_failure_is_never_kept(suites, validations, con):
    con.sql("insert into s.answers values (null, 2.0)")
    results = [quality.run_suites(con, "s", "results", suites)[0] for _ in range(2)]
    assert [(r.success, r.reused) for r in results] == [(False, False), (False, False)]
    assert validations == [3, 3]
    assert "expect_column_values_to_not_be_null" in results[1].failures[0]
    with pytest.raises(DataQualityError, match="answers_present"):
        quality.enforce(results)


def test_an_edited_suite_is_validated_afresh(suites, validations, con):
    quality.run_suites(con, "s", "results", suites)
    edited = {**SUITE, "expectations": SUITE["expectations"][:1]}
    (suites / "answers.json").write_text(json.dumps(edited), encoding="utf-8")
    (result,) = quality.run_suites(con, "s", "results", suites)
    assert (result.success, result.reused, validations) == (True, False, [2, 2])


PARTITIONED = {
    **SUITE,
    "name": "answers_by_run",
    "partition_by": ["run"],
    "partition_tables": ["runs"],
    "query": "select * from {runs}",
}


@pytest.fixture
def partitioned(tmp_path, monkeypatch, unscreened):
    monkeypatch.setenv("LOFT_CACHE_DIR", str(tmp_path / "cache"))
    folder = tmp_path / "partitioned"
    folder.mkdir()
    (folder / "runs.json").write_text(json.dumps(PARTITIONED), encoding="utf-8")
    return folder


def test_a_partitioned_suite_validates_only_the_partitions_that_changed(partitioned, validations, con):
    con.sql("create table s.runs as select * from (values ('r1', 'a', 1.0), ('r1', 'b', 0.5), ('r2', 'c', 0.0))"
            " t(run, answer, score)")  # fmt: skip
    (first,) = quality.run_suites(con, "s", "results", partitioned)
    con.sql("insert into s.runs values ('r3', 'd', 1.0), ('r3', 'e', 1.0)")
    (added,) = quality.run_suites(con, "s", "results", partitioned)
    con.sql("update s.runs set score = 0.25 where answer = 'c'")
    (changed,) = quality.run_suites(con, "s", "results", partitioned)
    (same,) = quality.run_suites(con, "s", "results", partitioned)
    (everything,) = quality.run_suites(con, "s", "results", partitioned, everything=True)
    assert validations == [3, 2, 1, 5]  # rows GX saw: all, r3's, r2's, then every row again
    assert [r.success for r in (first, added, changed, same, everything)] == [True] * 5
    assert added.summary() == "PASS s answers_by_run (5 rows, 2 in changed partitions validated, the rest kept)"
    assert same.summary() == "PASS s answers_by_run (5 rows, verdict kept from the same rows)"


def test_a_failing_partition_fails_the_suite_and_keeps_nothing(partitioned, con):
    con.sql("create table s.runs as select * from (values ('r1', 'a', 1.0), ('r2', null, 0.5)) t(run, answer, score)")
    results = [quality.run_suites(con, "s", "results", partitioned)[0] for _ in range(2)]
    assert [(r.success, r.reused) for r in results] == [(False, False), (False, False)]
    assert "expect_column_values_to_not_be_null" in results[0].failures[0]
    con.sql("update s.runs set answer = 'b' where run = 'r2'")
    (fixed,) = quality.run_suites(con, "s", "results", partitioned)
    assert fixed.success and fixed.n_validated == 2  # nothing was kept from the failing builds


def test_slices_keep_duplicates_together(partitioned, tmp_path, monkeypatch, con):
    """Rows reach GX a slice at a time; a duplicate key lands in one slice, so it still fails."""
    suite = {
        **PARTITIONED,
        "expectations": [
            {"type": "expect_compound_columns_to_be_unique", "kwargs": {"column_list": ["run", "answer"]}},
            {"type": "expect_column_values_to_be_between", "kwargs": {"column": "score", "max_value": 1}},
        ],
    }
    (partitioned / "runs.json").write_text(json.dumps(suite), encoding="utf-8")
    frames = spy(monkeypatch, quality, "validate_frame", quality.validate_frame)
    monkeypatch.setattr(quality, "SLICE_ROWS", 2)
    rows = ", ".join(f"('r1', 'a{i}', 0.5)" for i in range(7))
    con.sql(f"create table s.runs as select * from (values {rows}, ('r1', 'a3', 0.25)) t(run, answer, score)")
    (result,) = quality.run_suites(con, "s", "results", partitioned)
    assert len(frames) == 4  # 8 rows, slices of at most 2 on average: 4 slices
    assert not result.success and any("compound_columns_to_be_unique" in f for f in result.failures)
    con.sql("delete from s.runs where score = 0.25")
    (fixed,) = quality.run_suites(con, "s", "results", partitioned)
    assert fixed.success and fixed.n_validated == 7


def test_a_fingerprinted_suite_reads_only_the_changed_partitions(partitioned, validations, con):
    """With a partition_fingerprint the rows are not digested: a partition is validated again
    when its fingerprint changes, and the query then reads only its rows (a NULL key included)."""
    suite = {**PARTITIONED, "partition_fingerprint": "runs_fingerprint.sql"}
    (partitioned / "runs.json").write_text(json.dumps(suite), encoding="utf-8")
    (partitioned / "runs_fingerprint.sql").write_text("select run, version as fingerprint from {schema}.versions")
    con.sql("create table s.runs as select * from (values ('r1', 'a', 1.0), ('r1', 'b', 0.5), ('r2', 'c', 0.0),"
            " (null, 'd', 0.0)) t(run, answer, score)")  # fmt: skip
    con.sql("create table s.versions as select * from (values ('r1', 1), ('r2', 1), (null, 1)) t(run, version)")
    (first,) = quality.run_suites(con, "s", "results", partitioned)
    con.sql("update s.runs set score = 0.25 where run = 'r1'")  # content alone: the fingerprint holds it
    (unchanged,) = quality.run_suites(con, "s", "results", partitioned)
    con.sql("update s.versions set version = 2 where run = 'r2' or run is null")
    (changed,) = quality.run_suites(con, "s", "results", partitioned)
    assert validations == [4, 2]  # every row, then r2's and the NULL run's rows only
    assert (unchanged.reused, unchanged.n_rows) == (True, 4)
    assert changed.summary() == "PASS s answers_by_run (4 rows, 2 in changed partitions validated, the rest kept)"


SCORED_RUNS = """
create schema s; create schema s_internal;
create table s_internal.int_predictions as
select 'import' as source, system, 'cic' as method, 'retrieval' as task, 'nq' as dataset, 'default' as variant,
       'test' as split, qid, 0 as turn, 1 as n_turns, true as is_final, 'ok' as status, system || '1' as run_fingerprint
from (values ('a'), ('b')) s(system), (values ('q1'), ('q2')) q(qid);
create table s_internal.int_turn_scores as
select * exclude (n_turns, is_final), 'recall@1' as metric, 'loft' as rule, 'recall@1_loft' as metric_name,
       'original' as gold_version, 'turn' as grain, 1.0 as value, true as is_answered, false as is_empty_answer,
       true as is_primary
from s_internal.int_predictions;
create view s.predictions as select * exclude (run_fingerprint) from s_internal.int_predictions;
create view s.scores as select * exclude (run_fingerprint) from s_internal.int_turn_scores;
create table s.metrics as
select distinct source, system, method, task, dataset, variant, split, metric, rule, metric_name, gold_version, grain,
       0 as n_unanswered, null::bigint as query_limit
from s.scores;
create table s.responses (source varchar, system varchar, method varchar, task varchar, dataset varchar,
                          variant varchar, split varchar, stage bigint, prompt_id varchar, status varchar);
create table s.prompts (task varchar, dataset varchar, variant varchar, method varchar, split varchar, qid varchar,
                        turn bigint, prompt_id varchar);
create table s.queries (task varchar, dataset varchar, split varchar, qid varchar, query_rank bigint);
create table s_internal.stg_mm_queries (dataset varchar, split varchar, qid varchar, source_row bigint);
"""


def test_the_scores_suites_validate_only_a_changed_run(tmp_path, monkeypatch, unscreened):
    """The real partitioned results suites on a warehouse of two runs: a run whose stored rows
    change is the only one validated again; a row stored twice under the same fingerprint fails
    both score suites (the unanswered counts, which read no such row, validate both runs again)."""
    monkeypatch.setenv("LOFT_CACHE_DIR", str(tmp_path / "cache"))
    for name in ["results__scores_complete.json", "results__scores_keys.json",
                 "results__unanswered_match_statuses.json", "stored_runs_fingerprint.sql"]:  # fmt: skip
        shutil.copy(quality.EXPECTATIONS_DIR / name, tmp_path / name)
    validated = spy(monkeypatch, quality, "validate_frame")
    con = duckdb.connect()
    con.sql(SCORED_RUNS)
    first = quality.run_suites(con, "s", "results", tmp_path)
    con.sql("update s_internal.int_turn_scores set run_fingerprint = 'a2' where system = 'a'")
    con.sql("update s_internal.int_predictions set run_fingerprint = 'a2' where system = 'a'")
    validated.clear()
    changed = quality.run_suites(con, "s", "results", tmp_path)
    assert [(r.success, r.n_rows, r.n_validated) for r in first] == [(True, 4, 4), (True, 4, 4), (True, 2, 2)]
    assert [(r.success, r.n_rows, r.n_validated) for r in changed] == [(True, 4, 2), (True, 4, 2), (True, 2, 1)]
    assert {system for frame, _suite in validated for system in frame["system"]} == {"a"}
    con.sql("update s.metrics set n_unanswered = 1 where system = 'b'")  # a metrics row no stored run digest covers
    miscounted = quality.run_suites(con, "s", "results", tmp_path)[2]
    assert (miscounted.success, miscounted.n_validated) == (False, 1)
    con.sql("update s.metrics set n_unanswered = 0")
    con.sql("insert into s_internal.int_turn_scores select * from s_internal.int_turn_scores where qid = 'q1'")
    duplicated = quality.run_suites(con, "s", "results", tmp_path)
    assert [(r.success, r.n_validated) for r in duplicated] == [(False, 4), (False, 6), (True, 2)]


def test_the_primary_metric_suite_validates_only_a_changed_run(tmp_path, monkeypatch, unscreened):
    """results_primary_metric reads every final prediction: partitioned by run group, a build
    validates only the runs whose stored rows or metrics changed, and a run that lost its primary
    metric still fails."""
    monkeypatch.setenv("LOFT_CACHE_DIR", str(tmp_path / "cache"))
    for name in ["results__primary_metric.json", "stored_runs_fingerprint.sql"]:
        shutil.copy(quality.EXPECTATIONS_DIR / name, tmp_path / name)
    validated = spy(monkeypatch, quality, "validate_frame")
    con = duckdb.connect()
    con.sql(SCORED_RUNS)
    con.sql("alter table s.metrics add column is_primary boolean default true")
    (first,) = quality.run_suites(con, "s", "results", tmp_path)
    con.sql("update s_internal.int_predictions set run_fingerprint = 'a2' where system = 'a'")
    validated.clear()
    (changed,) = quality.run_suites(con, "s", "results", tmp_path)
    assert [(r.success, r.n_rows, r.n_validated) for r in (first, changed)] == [(True, 2, 2), (True, 2, 1)]
    assert {system for frame, _suite in validated for system in frame["system"]} == {"a"}
    con.sql("update s.metrics set is_primary = false where system = 'b'")
    (lost,) = quality.run_suites(con, "s", "results", tmp_path)
    assert (lost.success, lost.n_validated) == (False, 1)
    assert "n_primary" in lost.failures[0]
