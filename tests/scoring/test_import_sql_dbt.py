"""`loft import-sql-predictions` end to end on real data: loft_128k built for Spider only, SQL for
five test queries imported through the command, then the scoring models rebuilt with their tests.

The "model" answers three queries with their own gold SQL (so they must score 1 under both rules),
one with SQL that runs but answers something else, and one with DDL; the other 95 test queries are
unanswered."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loft_warehouse.cli import main
from loft_warehouse.sql.operators import gold_operators
from tests.conftest import query, run_dbt

pytestmark = pytest.mark.slow
SYSTEM = "t2s-gold"


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> tuple[Path, list[str]]:
    work = tmp_path_factory.mktemp("import-sql-dbt")
    database, imports = work / "loft.duckdb", work / "imports"
    env = {
        "LOFT_DATASETS": "sql/spider",
        "LOFT_SYSTEMS": "bm25",
        "LOFT_IMPORTS_DIR": str(imports),
        "LOFT_RESPONSE_STORE": str(work / "store.sqlite"),
    }
    built = run_dbt(["run", "--select", "+loft_128k__metrics", "+loft_128k__scores"], database, env)
    assert built.returncode == 0, built.stdout[-5000:]
    picked = query(
        database,
        "select qid, gold_sql from loft_128k.queries where dataset = 'spider' and split = 'test' "
        "order by query_rank limit 5",
    )
    sql = [gold_sql for _, gold_sql in picked[:3]] + ["SELECT 'no such answer'", "DROP TABLE singer"]
    lines = [json.dumps({"qid": q, "num_turns": 1, "sql": [text]}) for (q, _), text in zip(picked, sql, strict=True)]
    preds = work / "preds.jsonl"
    preds.write_text("\n".join(lines) + "\n")
    command = f"import-sql-predictions {preds} --system {SYSTEM} --size 128k --dataset spider --imports-dir {imports}"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LOFT_DUCKDB_PATH", str(database))
        assert main(command.split()) == 0
    selection = ["loft_128k__int_imported_predictions+,+loft_128k__metrics", "loft_128k__sql_operator_accuracy"]
    scored = run_dbt(["build", "--select", *selection], database, env)
    assert scored.returncode == 0, scored.stdout[-5000:]
    return database, [qid for qid, _ in picked]


def test_gold_sql_scores_one_and_wrong_sql_zero(warehouse: tuple[Path, list[str]]) -> None:
    database, qids = warehouse
    rows = query(
        database,
        "select qid, metric_name, value from loft_128k.scores "
        f"where system = '{SYSTEM}' and grain = 'turn' and is_answered order by qid, metric_name",
    )
    expected = {qid: 1.0 for qid in qids[:3]} | {qid: 0.0 for qid in qids[3:]}
    assert rows == sorted((q, f"exec_acc_{rule}", v) for q, v in expected.items() for rule in ("loft", "strict"))


def test_metrics_of_the_imported_system(warehouse: tuple[Path, list[str]]) -> None:
    database, _ = warehouse
    rows = query(
        database,
        "select source, metric_name, n, n_unanswered, n_empty_answer, mean from loft_128k.metrics "
        f"where system = '{SYSTEM}' and split = 'test' and grain = 'turn' order by metric_name",
    )
    assert rows == [("import", "exec_acc_loft", 100, 95, 1, 0.03), ("import", "exec_acc_strict", 100, 95, 1, 0.03)]


def test_the_rejected_ddl_is_visible_in_predictions(warehouse: tuple[Path, list[str]]) -> None:
    database, qids = warehouse
    [(raw_text, answer)] = query(
        database,
        f"select raw_text, answer_loft_json from loft_128k.predictions where system = '{SYSTEM}' and qid = '{qids[4]}'",
    )
    assert raw_text == "DROP TABLE singer\n-- sandbox rejected: only queries may run, not DROP"
    assert answer == "[]"


def test_operator_bins_of_the_imported_system(warehouse: tuple[Path, list[str]]) -> None:
    """LOFT Figure 6 on the build: each bin holds the test turns whose gold uses the operator,
    and its mean counts the three turns answered with their own gold."""
    database, qids = warehouse
    gold = query(database, "select qid, gold_sql from loft_128k.queries where dataset = 'spider' and split = 'test'")
    expected: dict[str, list[float]] = {"all": []}
    for qid, gold_sql in gold:
        value = 1.0 if qid in qids[:3] else 0.0
        expected["all"].append(value)
        for operator in gold_operators(gold_sql):
            expected.setdefault(operator, []).append(value)
    rows = query(
        database,
        "select operator, n, n_unanswered, mean, ci_low, ci_high from loft_128k.sql_operator_accuracy "
        f"where system = '{SYSTEM}' and split = 'test' and rule = 'loft'",
    )
    answered = {op for qid, gold_sql in gold if qid in qids for op in ["all", *gold_operators(gold_sql)]}
    assert {row[0] for row in rows} == answered  # bins where nothing was answered are left out
    assert len(answered) > 3
    for operator, n, _, mean, low, high in rows:
        values = expected[operator]
        assert n == len(values), operator
        assert mean == pytest.approx(sum(values) / len(values)), operator
        assert low <= mean <= high
    assert [row[1:4] for row in rows if row[0] == "all"] == [(100, 95, 0.03)]
