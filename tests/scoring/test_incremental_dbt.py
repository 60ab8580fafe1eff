"""Incremental scoring on a real build: ArguAna at 128k scored by bm25, then an import history
(system A, then B, then A's file replaced, then B's removed), each followed by the import's
downstream build. Each build computes only the runs whose fingerprint changed, and the tables it
leaves are the ones a --full-refresh build of the same state writes, row for row."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from loft_warehouse.cli import main
from loft_warehouse.readers import read_jsonl
from tests.conftest import query, run_dbt

pytestmark = pytest.mark.slow
SELECTION = [
    "loft_128k__int_imported_queries+,+loft_128k__metrics",
    "loft_128k__int_imported_queries+,+loft_128k__position_curves",
    "loft_128k__int_imported_queries+,+loft_compare__scaling_curves",
]
COMPARED = ["loft_128k_internal.int_imported_predictions", "loft_128k_internal.int_predictions",
            "loft_128k_internal.int_turn_scores", "loft_128k.scores", "loft_128k_internal.int_metrics",
            "loft_128k.metrics", "loft_128k_internal.int_position_curves", "loft_128k.position_curves",
            "loft_compare.scaling_scores", "loft_compare.scaling_curves"]  # fmt: skip
INCREMENTAL = ("int_predictions", "int_turn_scores", "int_metrics", "int_position_curves", "scaling_scores",
               "scaling_curves")  # fmt: skip
COMPUTED = re.compile(rf"({'|'.join(INCREMENTAL)}): (\d+) of (\d+) run\(s\) to compute")
READ = re.compile(r"int_imported_predictions: (\d+) of (\d+) landed file\(s\) to read")


def _computed(stdout: str) -> dict[str, tuple[int, int]]:
    """What each incremental model said it computes: {model: (runs computed, runs in all)}, and
    int_imported_predictions (landed files read, files in all)."""
    computed = {name: (int(done), int(total)) for name, done, total in COMPUTED.findall(stdout)}
    for done, total in READ.findall(stdout):
        computed["int_imported_predictions"] = (int(done), int(total))
    return computed


def _import(database: Path, env: dict[str, str], work: Path, system: str, right: int) -> None:
    """Land `system`'s answers to the 100 test queries: the first `right` with the gold pid
    first, the rest another pid."""
    release = Path(env["LOFT_DATA_DIR"]) / "loft/retrieval/arguana/128k/test_queries.jsonl"
    queries = [record for _, record in read_jsonl(release)]
    other = queries[0]["answers"][0][0]
    lines = []
    for i, record in enumerate(queries):
        gold = record["answers"][0][0]
        answer = [gold] if i < right else [other if gold != other else queries[1]["answers"][0][0]]
        lines.append(json.dumps({"qid": record["qid"], "num_turns": 1, "model_outputs": [answer]}))
    preds = work / f"{system}-{right}.jsonl"
    preds.write_text("\n".join(lines) + "\n")
    command = f"import-predictions {preds} --system {system} --size 128k --task retrieval --dataset arguana"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LOFT_DUCKDB_PATH", str(database))
        assert main([*command.split(), "--imports-dir", env["LOFT_IMPORTS_DIR"]]) == 0


def _build(database: Path, env: dict[str, str], *extra: str) -> dict[str, tuple[int, int]]:
    result = run_dbt(["build", *extra, "--select", *SELECTION], database, env)
    assert result.returncode == 0, result.stdout[-5000:]
    return _computed(result.stdout)


def _recall(database: Path) -> dict[str, float]:
    return dict(
        query(
            database,
            "select system, mean from loft_128k.metrics where split = 'test' and metric_name = 'recall@1_loft' "
            "and grain = 'turn'",
        )
    )


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> tuple[Path, list[dict]]:
    """The warehouse after the history, and what each build of it computed and scored."""
    work = tmp_path_factory.mktemp("incremental")
    database = work / "loft.duckdb"
    env = {
        "LOFT_DATASETS": "retrieval/arguana",
        "LOFT_SYSTEMS": "bm25",
        "LOFT_DATA_DIR": str(shared_data),
        "LOFT_IMPORTS_DIR": str(work / "imports"),
        "LOFT_RESPONSE_STORE": str(work / "store.sqlite"),
    }
    built = run_dbt(
        [
            "run",
            "--select",
            "+loft_128k__metrics",
            "+loft_128k__position_curves",
            "+loft_128k__scores",
            "loft_compare__scaling_scores",
            "loft_compare__scaling_curves",
        ],
        database,
        env,
    )
    assert built.returncode == 0, built.stdout[-5000:]
    steps = []
    _import(database, env, work, "system-a", right=60)
    steps.append({"computed": _build(database, env), "recall": _recall(database)})
    _import(database, env, work, "system-b", right=30)
    steps.append({"computed": _build(database, env), "recall": _recall(database)})
    _import(database, env, work, "system-a", right=70)
    steps.append({"computed": _build(database, env), "recall": _recall(database)})
    for landed in Path(env["LOFT_IMPORTS_DIR"]).glob("128k/system-b__*.parquet"):
        landed.unlink()
    steps.append({"computed": _build(database, env), "recall": _recall(database)})
    steps.append({"computed": _build(database, env), "recall": _recall(database)})
    refreshed = work / "refreshed.duckdb"
    shutil.copy(database, refreshed)
    steps.append({"computed": _build(refreshed, env, "--full-refresh"), "recall": _recall(refreshed)})
    return database, steps


def test_each_build_computes_only_the_runs_that_changed(history: tuple[Path, list[dict]]) -> None:
    _, steps = history
    # (computed, runs in all) per build: bm25's dev and test runs are kept throughout.
    # Each run is a position-curve group of its own (ArguAna has one variant).
    for model in INCREMENTAL:
        assert [step["computed"].get(model) for step in steps[:5]] == [
            (1, 3),  # system-a imported
            (1, 4),  # system-b imported: a and bm25 kept
            (1, 4),  # system-a's file replaced: only a
            (0, 3),  # system-b's file removed: its rows dropped, nothing to compute
            (0, 3),  # nothing changed
        ], model
    # Landed files read: a's, then b's, then a's again; nothing when b's is removed or nothing changed.
    read = [step["computed"].get("int_imported_predictions") for step in steps[:5]]
    assert read == [(1, 1), (1, 2), (1, 2), (0, 1), (0, 1)]
    assert steps[5]["computed"] == {}  # a full refresh computes everything, so it reports nothing


def test_the_scores_follow_the_history(history: tuple[Path, list[dict]]) -> None:
    _, steps = history
    recalls = [{system: step["recall"].get(system) for system in ("system-a", "system-b")} for step in steps]
    assert recalls == [
        {"system-a": 0.6, "system-b": None},
        {"system-a": 0.6, "system-b": 0.3},
        {"system-a": 0.7, "system-b": 0.3},
        {"system-a": 0.7, "system-b": None},
        {"system-a": 0.7, "system-b": None},
        {"system-a": 0.7, "system-b": None},
    ]
    assert steps[0]["recall"]["bm25"] == steps[5]["recall"]["bm25"]


@pytest.mark.parametrize("table", COMPARED)
def test_the_incremental_history_equals_a_full_refresh(history: tuple[Path, list[dict]], table: str) -> None:
    database, _ = history
    refreshed = database.with_name("refreshed.duckdb")
    rows = query(
        database,
        f"attach '{refreshed}' as refreshed (read_only); "
        f"select (select count(*) from {table}),"
        f" (select count(*) from (select * from {table} except all select * from refreshed.{table})),"
        f" (select count(*) from (select * from refreshed.{table} except all select * from {table}))",
    )
    n_rows, only_incremental, only_refreshed = rows[0]
    assert n_rows > 0 and (only_incremental, only_refreshed) == (0, 0)


def test_no_build_leaves_a_staging_table_behind(history: tuple[Path, list[dict]]) -> None:
    """dbt-duckdb's incremental Python models append from a <model>__dbt_tmp table it keeps; the
    models' post-hook drops it (incremental_drop_python_staging)."""
    database, _ = history
    assert query(database, "select table_name from duckdb_tables() where table_name like '%__dbt_tmp%'") == []
