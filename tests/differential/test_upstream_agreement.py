"""The warehouse's `*_loft` scores against LOFT's own evaluator, row by row and key by key.

Every folder under cases/ holds an answer file and a prediction file (inputs written for this
suite, or LOFT's example files unchanged) and `upstream.json`, what LOFT's evaluator made of
them (recorded outside the project by record_upstream.py, with the LOFT commit). Here the same
two files go through the import path (scoring.upstream_files, importer.imported_frame) into the
scoring SQL (sqlkit), and for every row LOFT reports, the warehouse must report the same
(qid, turn) with the same metric keys (so the same aggregate denominators) and values; the loft
means in `metrics` must equal LOFT's aggregate.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import polars as pl
import pytest

from loft_warehouse.errors import BadInputError
from loft_warehouse.quality import run_suites
from loft_warehouse.scoring.importer import imported_frame, land
from loft_warehouse.scoring.upstream_files import TASK_TYPES, answer_file_queries, number_qids
from tests.scoring.sqlkit import build, connect, insert

CASES = Path(__file__).resolve().parent / "cases"
SYSTEM = "upstream-run"
# The keys LOFT's evaluator reports per task type (besides qid and turn ids).
KEYS = {
    "retrieval": {f"{m}@{k}" for m in ("recall", "mrecall") for k in (1, 2, 3, 5)} | {"capped_recall@1"},
    "mm": {f"{m}@{k}" for m in ("recall", "mrecall") for k in (1, 2, 3, 5)} | {"capped_recall@1"},
    "rag": {"em", "subspan_em", "f1"},
    "multi_value_rag": {"em", "subspan_em", "f1", "coverage"},
    "sql": {"exec_acc"},
    "icl": {"em"},
}


def _spec(case: Path) -> dict:
    return json.loads((case / "case.json").read_text(encoding="utf-8"))


def _upstream(case: Path) -> dict:
    return json.loads((case / "upstream.json").read_text(encoding="utf-8"))


def _answer_file(case: Path) -> Path:
    return next(p for p in case.iterdir() if p.name.startswith("queries."))


SCORED = sorted(p.name for p in CASES.iterdir() if "per_line" in _upstream(p) and "refused" not in _spec(p))
# Inputs the import refuses at the door, each with what LOFT's evaluator made of it (issue 33
# item 6): a line's scores or its error, recorded; the warehouse's refusal names file and line.
REFUSED = sorted(p.name for p in CASES.iterdir() if "refused" in _spec(p))


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory):
    """Every scored case imported as a dataset of its own, then scored once."""
    imports = tmp_path_factory.mktemp("imports")
    con = connect()
    frames = []
    for name in SCORED:
        case = CASES / name
        task_type = _spec(case)["task_type"]
        queries = answer_file_queries(_answer_file(case), task_type, name, "test")
        land(case / "preds.jsonl", queries, system=SYSTEM, size="128k", task_type=task_type, dataset=name,
             directory=imports, answer_number_qids=number_qids(_answer_file(case)))  # fmt: skip
        frames.append(queries)
    queries = pl.concat(frames)
    insert(con, "imported_queries", queries.to_dicts())
    insert(con, "imports", imported_frame(imports, "128k", queries).to_dicts())
    build(con)
    return con


def _ours(con, dataset: str) -> dict[tuple[str, int], dict[str, float]]:
    rows = con.execute(
        "select q.upstream_qid, s.turn, s.metric, s.value from scores as s "
        "inner join int_scored_queries as q using (task, dataset, qid, turn) "
        "where s.dataset = ? and s.rule = 'loft' and s.grain = 'turn'",
        [dataset],
    ).fetchall()
    found: dict[tuple[str, int], dict[str, float]] = {}
    for qid, turn, metric, value in rows:
        found.setdefault((qid, turn), {})[metric] = value
    return found


def _theirs(case: Path) -> dict[tuple[str, int], dict[str, float]]:
    task_type = _spec(case)["task_type"]
    rows = {}
    for row in _upstream(case)["per_line"]:
        turn = int(row.get("turn_id", (row.get("metadata") or {}).get("turn_number", 0)))
        rows[(row["qid"], turn)] = {k: float(v) for k, v in row.items() if k in KEYS[task_type]}
    return rows


@pytest.mark.parametrize("name", SCORED)
def test_every_row_and_key_agrees_with_loft(warehouse, name: str) -> None:
    case = CASES / name
    keys = KEYS[_spec(case)["task_type"]]
    ours = {row: {k: v for k, v in metrics.items() if k in keys} for row, metrics in _ours(warehouse, name).items()}
    theirs = _theirs(case)
    assert sorted(ours) == sorted(theirs), "scored (qid, turn) rows differ"
    disagreements = {
        row: (theirs[row], ours[row])
        for row in theirs
        if set(theirs[row]) != set(ours[row])
        or any(not math.isclose(theirs[row][k], ours[row][k]) for k in theirs[row])
    }
    assert disagreements == {}


@pytest.mark.parametrize("name", SCORED)
def test_loft_means_are_loft_aggregates(warehouse, name: str) -> None:
    case = CASES / name
    keys = KEYS[_spec(case)["task_type"]]
    means = dict(
        warehouse.execute(
            "select metric, mean from metrics where dataset = ? and rule = 'loft' and grain = 'turn'", [name]
        ).fetchall()
    )
    aggregate = _upstream(case)["aggregate"]
    assert {k: means.get(k) for k in aggregate} == pytest.approx(aggregate)
    assert {k for k in means if k in keys} == set(aggregate)


def test_a_line_loft_fails_on_is_refused_naming_file_and_line(tmp_path: Path) -> None:
    case = CASES / "rag_multiturn_one_turn"
    assert "error" in _upstream(case)
    queries = answer_file_queries(_answer_file(case), "rag", case.name, "test")
    with pytest.raises(BadInputError, match="preds.jsonl:1: qid 'conv_one': num_turns 1 on a multi-turn RAG query"):
        land(case / "preds.jsonl", queries, system=SYSTEM, size="128k", task_type="rag", dataset=case.name,
             directory=tmp_path)  # fmt: skip


@pytest.mark.parametrize("name", REFUSED)
def test_an_input_refused_at_the_door_names_file_and_line_and_lands_nothing(tmp_path: Path, name: str) -> None:
    case = CASES / name
    spec, upstream = _spec(case), _upstream(case)
    assert "per_line" in upstream or "error" in upstream  # what LOFT did with it is on record
    with pytest.raises(BadInputError, match=spec["refused"]):
        queries = answer_file_queries(_answer_file(case), spec["task_type"], name, "test")
        land(case / "preds.jsonl", queries, system=SYSTEM, size="128k", task_type=spec["task_type"], dataset=name,
             directory=tmp_path, answer_number_qids=number_qids(_answer_file(case)))  # fmt: skip
    assert not [path for path in tmp_path.rglob("*") if path.is_file()]


def test_an_unanswered_multi_turn_rag_query_is_one_row_of_zeros(tmp_path: Path) -> None:
    """LOFT scores an unanswered query as one turn; for multi-turn RAG its evaluator then fails
    reading the gold, so the warehouse scores the one row as for every other task: 0."""
    case = CASES / "rag_multiturn_unanswered"
    assert "error" in _upstream(case)
    queries = answer_file_queries(_answer_file(case), "rag", case.name, "test")
    land(case / "preds.jsonl", queries, system=SYSTEM, size="128k", task_type="rag", dataset=case.name,
         directory=tmp_path)  # fmt: skip
    con = connect()
    insert(con, "imported_queries", queries.to_dicts())
    insert(con, "imports", imported_frame(tmp_path, "128k", queries).to_dicts())
    build(con)
    ours = {row: {k: v for k, v in found.items() if k in KEYS["rag"]} for row, found in _ours(con, case.name).items()}
    assert ours == {
        ("conv_ok", 0): {"em": 1.0, "subspan_em": 1.0, "f1": 1.0},
        ("conv_ok", 1): {"em": 1.0, "subspan_em": 1.0, "f1": 1.0},
        ("conv_unanswered", 0): {"em": 0.0, "subspan_em": 0.0, "f1": 0.0},
    }


def test_the_results_expectations_hold_on_the_imported_runs(warehouse) -> None:
    failures = {result.suite: result.failures for result in run_suites(warehouse, "main", "results")}
    assert failures == {name: [] for name in failures} and "results_score_rows_complete" in failures


def test_the_suite_covers_every_task_type() -> None:
    assert {_spec(CASES / name)["task_type"] for name in SCORED} == set(TASK_TYPES)
