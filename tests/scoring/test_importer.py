"""Importing upstream-format prediction files: validation, landing, and scoring them through the
same SQL as the warehouse's own runs."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from loft_warehouse.cli import main
from loft_warehouse.errors import BadInputError, ConfigurationError
from loft_warehouse.scoring.importer import imported_frame, land, read_prediction_file
from tests.scoring.sqlkit import Scenario, insert

QUERIES = pl.DataFrame(
    {
        "task": ["retrieval"] * 4 + ["sql"] * 2,
        "dataset": ["arguana"] * 4 + ["sparc"] * 2,
        "corpus_id": ["arguana"] * 4 + ["db1"] * 2,
        "split": ["test", "test", "test", "dev", "test", "test"],
        "qid": ["t1", "t2", "t3", "d1", "c1", "c1"],
        "turn": [0, 0, 0, 0, 0, 1],
        "n_turns": [1, 1, 1, 1, 2, 2],
    }
)


def _write(path: Path, lines: list[object]) -> Path:
    path.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines))
    return path


def _land(tmp_path: Path, lines: list[object], **kwargs: str) -> Path:
    options = {"system": "gemini-upstream", "size": "128k", "task": "retrieval", "dataset": "arguana", **kwargs}
    return land(_write(tmp_path / "preds.jsonl", lines), directory=tmp_path / "imports", **options)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", "preds.jsonl:2: malformed JSON"),
        ({"qid": "t2", "num_turns": 1}, "preds.jsonl:2: missing field(s) model_outputs"),
        ({"qid": "t2", "num_turns": 2, "model_outputs": [["a"]]}, "list of num_turns=2"),
        ({"qid": "t2", "num_turns": 0, "model_outputs": []}, "positive integer"),
        ({"qid": "t1", "num_turns": 1, "model_outputs": [["a"]]}, "qid 't1' already given on line 1"),
        ({"qid": "t2", "num_turns": 1, "model_outputs": [None]}, "turn 0 of qid 't2' is neither"),
    ],
)
def test_malformed_lines_name_file_and_line(tmp_path: Path, line: object, message: str) -> None:
    path = _write(tmp_path / "preds.jsonl", [{"qid": "t1", "num_turns": 1, "model_outputs": [["a"]]}, line])
    with pytest.raises(BadInputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        read_prediction_file(path, system="s", task="retrieval", dataset="arguana", split="test", variant="default")


def test_empty_file_and_bad_names_are_rejected(tmp_path: Path) -> None:
    with pytest.raises(BadInputError, match="no predictions"):
        _land(tmp_path, [])
    with pytest.raises(ConfigurationError, match="system"):
        _land(tmp_path, [{"qid": "t1", "num_turns": 1, "model_outputs": [["a"]]}], system="../evil")
    with pytest.raises(ConfigurationError, match="size"):
        _land(tmp_path, [{"qid": "t1", "num_turns": 1, "model_outputs": [["a"]]}], size="64k")


def test_landing_keeps_answers_and_replaces_on_reimport(tmp_path: Path) -> None:
    target = _land(tmp_path, [{"qid": "t1", "num_turns": 1, "model_outputs": [["doc1", 7]]}])
    assert target == tmp_path / "imports" / "128k" / "gemini-upstream__retrieval__arguana__test__default.parquet"
    row = pl.read_parquet(target).row(0, named=True)
    assert (row["given_answers"], row["given_answers_json"], row["id_space"]) == (["doc1", "7"], '["doc1", 7]', "pid")
    _land(tmp_path, [{"qid": 5, "num_turns": 1, "model_outputs": ["Final Answer: ['3']"]}])
    row = pl.read_parquet(target).row(0, named=True)
    assert (row["qid"], row["raw_text"], row["given_answers"], row["id_space"]) == (
        "5",
        "Final Answer: ['3']",
        None,
        "shown",
    )


def test_imported_frame_adds_unanswered_queries(tmp_path: Path) -> None:
    _land(tmp_path, [{"qid": "t1", "num_turns": 1, "model_outputs": [["doc1"]]}])
    frame = imported_frame(tmp_path / "imports", "128k", QUERIES).sort("qid")
    assert frame.select("qid", "status", "import_line", "prompt_id").rows() == [
        ("t1", "ok", 1, "retrieval/arguana/arguana/default/t1/0"),
        ("t2", "missing", None, "retrieval/arguana/arguana/default/t2/0"),
        ("t3", "missing", None, "retrieval/arguana/arguana/default/t3/0"),
    ]
    assert imported_frame(tmp_path / "nothing", "128k", QUERIES).height == 0


def test_unknown_qid_or_turn_count_stops_the_build(tmp_path: Path) -> None:
    _land(
        tmp_path,
        [
            {"qid": "t1", "num_turns": 1, "model_outputs": [["a"]]},
            {"qid": "d1", "num_turns": 1, "model_outputs": [["a"]]},
        ],
    )
    with pytest.raises(BadInputError, match=r"preds.jsonl:2: qid 'd1' \(turn 0\) is not a test query"):
        imported_frame(tmp_path / "imports", "128k", QUERIES)
    _land(tmp_path, [{"qid": "c1", "num_turns": 1, "model_outputs": [[["x"]]]}], task="sql", dataset="sparc")
    (tmp_path / "imports" / "128k" / "gemini-upstream__retrieval__arguana__test__default.parquet").unlink()
    with pytest.raises(BadInputError, match="preds.jsonl:1: qid 'c1' has 1 turn"):
        imported_frame(tmp_path / "imports", "128k", QUERIES)


def test_imported_predictions_are_scored_like_runs(tmp_path: Path) -> None:
    s = Scenario()
    for qid, gold in [("t1", ["p1"]), ("t2", ["p2"]), ("t3", ["p3"]), ("t4", ["p4"])]:
        s.query("retrieval", "nq", qid, gold, max_gold=1)
    s.build()
    lines = [
        {"qid": "t1", "num_turns": 1, "model_outputs": [[" p1 ", "p9"]]},  # upstream strips pids
        {"qid": "t2", "num_turns": 1, "model_outputs": [["nope", "p2"]]},  # unknown pid: a miss, not a drop
        {"qid": "t3", "num_turns": 1, "model_outputs": ["Reasoning.\nFinal Answer: ['3']"]},  # raw: shown IDs
    ]
    _land(tmp_path, lines, dataset="nq")
    queries = s.con.sql("select * from queries").pl()
    insert(s.con, "imports", imported_frame(tmp_path / "imports", "128k", queries).to_dicts())
    s.build()
    recall = dict(
        s.con.sql("select qid, value from scores where source = 'import' and metric_name = 'recall@1_loft'").fetchall()
    )
    assert recall == {"t1": 1.0, "t2": 0.0, "t3": 1.0, "t4": 0.0}
    assert s.scores("t2", system="gemini-upstream")["recall@2_loft"] == 1.0
    row = s.con.sql(
        "select pred_pids_strict, unknown_ids_strict, query_dropped_loft, parse_status_loft from predictions "
        "where qid = 't2'"
    ).fetchone()
    assert row == ([None, "p2"], ["nope"], False, "given")
    metric = s.con.sql(
        "select n, n_unanswered, mean from metrics where source = 'import' and metric_name = 'recall@1_loft'"
    ).fetchone()
    assert metric == (4, 1, 0.5)


def test_cli_lands_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path / "preds.jsonl", [{"qid": "t1", "num_turns": 1, "model_outputs": [["doc1"]]}])
    command = "import-predictions {} --system other --size 32k --task retrieval --dataset arguana --split dev"
    code = main([*command.format(path).split(), "--imports-dir", str(tmp_path / "imp")])
    assert code == 0
    assert (tmp_path / "imp" / "32k" / "other__retrieval__arguana__dev__default.parquet").is_file()
    assert "dbt build --select loft_32k__int_imported_predictions+" in capsys.readouterr().out
