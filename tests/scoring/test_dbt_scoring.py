"""The scoring models in dbt on real data: loft_128k from an empty file with the bm25 system and
an upstream-format prediction file for ArguAna, through predictions, scores, metrics, the
results expectations and the leaderboard."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb
import pytest

from loft_warehouse.cli import main
from loft_warehouse.readers import read_jsonl
from tests.conftest import query, run_dbt
from tests.scoring.sqlkit import TEST_TABLES, typed_columns
from tests.test_docs import as_cells, tour

pytestmark = pytest.mark.slow
RETRIEVAL = ("arguana", "hotpotqa", "msmarco", "nq")


def _environment(work: Path) -> dict[str, str]:
    """The module's settings: bm25 only, its own imports folder and response store."""
    return {
        "LOFT_SYSTEMS": "bm25",
        "LOFT_IMPORTS_DIR": str(work / "imports"),
        "LOFT_RESPONSE_STORE": str(work / "store.sqlite"),
    }


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> Path:
    work = tmp_path_factory.mktemp("scoring")
    # Upstream format for ArguAna 128k test: 50 right (gold pid first), 30 wrong, 20 unanswered.
    queries = [record for _, record in read_jsonl(shared_data / "loft/retrieval/arguana/128k/test_queries.jsonl")]
    assert len(queries) == 100
    other_pid = queries[0]["answers"][0][0]
    lines = []
    for i, record in enumerate(queries[:80]):
        gold = record["answers"][0][0]
        answer = [gold, other_pid] if i < 50 else [other_pid if gold != other_pid else queries[1]["answers"][0][0]]
        lines.append(json.dumps({"qid": record["qid"], "num_turns": 1, "model_outputs": [answer]}))
    preds = work / "preds.jsonl"
    preds.write_text("\n".join(lines) + "\n")
    database = work / "loft.duckdb"
    env = _environment(work)
    result = run_dbt(
        ["build", "--select", "+loft_128k__results_quality", "+loft_128k__leaderboard_wide"]
        + ["--indirect-selection", "cautious"],
        database,
        env,
    )
    assert result.returncode == 0, result.stdout[-5000:]
    # The import is checked against the built warehouse, then scored by rebuilding its models.
    command = "import-predictions {} --system upstream-file --size 128k --task retrieval --dataset arguana"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LOFT_DUCKDB_PATH", str(database))
        assert main([*command.format(preds).split(), "--imports-dir", env["LOFT_IMPORTS_DIR"]]) == 0
    selection = [f"loft_128k__int_imported_queries+,+loft_128k__{m}" for m in ("results_quality", "leaderboard_wide")]
    result = run_dbt(["build", "--select", *selection], database, env)
    assert result.returncode == 0, result.stdout[-5000:]
    return database


def test_leaderboard_has_bm25_beside_the_paper_for_every_retrieval_dataset(warehouse: Path) -> None:
    rows = query(
        warehouse,
        "select dataset, list(distinct source order by source), count(*) filter (where source = 'paper') "
        "from loft_128k.leaderboard where task = 'retrieval' and split = 'test' and is_paper_metric "
        f"and dataset in {RETRIEVAL} group by dataset order by dataset",
    )
    assert [(d, s) for d, s, _ in rows] == [
        ("arguana", ["import", "inference", "paper"]),
        ("hotpotqa", ["inference", "paper"]),
        ("msmarco", ["inference", "paper"]),
        ("nq", ["inference", "paper"]),
    ]
    assert all(n_paper == 4 for _, _, n_paper in rows)


def test_imported_file_is_scored(warehouse: Path) -> None:
    rows = query(
        warehouse,
        "select metric_name, n, n_unanswered, mean from loft_128k.metrics "
        "where source = 'import' and metric_name in ('recall@1_loft', 'recall@2_loft') order by metric_name",
    )
    assert rows == [("recall@1_loft", 100, 20, 0.5), ("recall@2_loft", 100, 20, 0.5)]


def test_bm25_primary_metrics_and_expectations(warehouse: Path) -> None:
    primary = query(
        warehouse,
        "select dataset, metric_name, n, n_unanswered from loft_128k.metrics "
        "where system = 'bm25' and split = 'test' and is_primary order by dataset",
    )
    assert [(d, m) for d, m, _, _ in primary] == [
        ("arguana", "recall@1_loft"),
        ("hotpotqa", "mrecall@2_loft"),
        ("msmarco", "mrecall@5_loft"),
        ("nq", "recall@1_loft"),
    ]
    assert all(unanswered == 0 for *_, unanswered in primary)
    suites = query(warehouse, "select suite, success from loft_128k.results_quality order by suite")
    assert len(suites) == 6 and all(success for _, success in suites)


def test_scores_view_reads_from_a_renamed_copy_of_the_warehouse(warehouse: Path, tmp_path: Path) -> None:
    """scores is a view over int_turn_scores: it names no catalog, so a copied file still serves it."""
    copy = tmp_path / "shared-with-a-colleague.duckdb"
    shutil.copy(warehouse, copy)
    sql = "select count(*), sum(value) from loft_128k.scores where source = 'import'"
    assert query(copy, sql) == query(warehouse, sql)


def test_a_quick_try_after_a_full_run_keeps_it_through_a_later_import(warehouse: Path, tmp_path: Path) -> None:
    """The newcomer's sequence: a full build, a `limit: 3` try, then an import's build (which
    selects the import's downstream only, without the var): the try's answers are the full run's
    own, so the full run of 100 queries stays (docs/reliability.md), never 3 queries scored as 100."""
    board = (
        "select rank_group, query_limit, n, n_unanswered from loft_128k.leaderboard "
        "where system = 'bm25' and dataset = 'arguana' and split = 'test' and is_primary"
    )
    assert query(warehouse, board) == [("warehouse", None, 100, 0)]
    database = tmp_path / "loft.duckdb"
    shutil.copy(warehouse, database)
    env = _environment(warehouse.parent)
    built = [f"+loft_128k__{m}" for m in ("results_quality", "leaderboard_wide")]
    tried_selection = [f"loft_128k__int_stage1_responses+,{model}" for model in built]
    tried = run_dbt(["build", "--select", *tried_selection, "--vars", "{limit: 3}"], database, env)
    assert tried.returncode == 0, tried.stdout[-5000:]
    assert query(database, board) == [("warehouse", None, 100, 0)]
    # What `loft import-predictions --build` runs, within what the module built.
    rescored_selection = [f"loft_128k__int_imported_queries+,{model}" for model in built]
    rescored = run_dbt(["build", "--select", *rescored_selection], database, env)
    assert rescored.returncode == 0, rescored.stdout[-5000:]
    assert query(database, board) == [("warehouse", None, 100, 0)]
    columns = [row[0] for row in query(database, "describe loft_128k.leaderboard_wide")]
    assert "bm25" in columns and "bm25 [quick try: 3 queries]" not in columns
    imported = "select n, n_unanswered, query_limit from loft_128k.metrics where source = 'import' and is_primary"
    assert query(database, imported) == [(100, 20, None)]


def test_the_typed_yml_columns_are_the_built_tables(warehouse: Path) -> None:
    """The yml's column types (which the test tables of tests/scoring/sqlkit.py are made from) are
    the built tables' columns, every one, including the Python models' that no contract checks:
    each model this build made, and every one the test tables copy."""
    typed = typed_columns()
    built: dict[str, dict[str, str]] = {}
    for table, column, kind in query(
        warehouse,
        "select table_name, column_name, lower(replace(data_type, '\"', '')) from duckdb_columns() "
        "where schema_name in ('loft_128k', 'loft_128k_internal') or table_name in ('paper_table2')",
    ):
        built.setdefault(table, {})[column] = kind
    assert {source for source, _ in TEST_TABLES.values()} <= set(built)
    mismatched = {
        table: (columns, built[table])
        for table, columns in typed.items()
        if table in built
        and {name: kind.lower().replace("timestamptz", "timestamp with time zone") for name, kind in columns.items()}
        != built[table]
    }
    assert mismatched == {}


def test_the_readme_tour_prints_what_the_readme_shows(warehouse: Path) -> None:
    """The tour's query, on this module's build (loft_128k with bm25, as `make build` makes it
    without keys), gives the table the README prints under it."""
    sql, header, rows = tour()
    with duckdb.connect(str(warehouse), read_only=True) as con:
        result = con.sql(sql)
        assert result.columns == header
        assert [as_cells(row) for row in result.fetchall()] == rows
