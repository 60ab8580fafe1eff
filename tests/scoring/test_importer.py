"""Importing upstream-format prediction files: LOFT's reading of a prediction file (each class
of what its evaluator silently resolves), --strict-input, landing, the import-time checks, and
scoring them through the same SQL as the warehouse's own runs."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import polars as pl
import pytest

from loft_warehouse.cli import main
from loft_warehouse.errors import BadInputError, ConfigurationError
from loft_warehouse.prompts.store import prompt_id
from loft_warehouse.scoring import bulk_files
from loft_warehouse.scoring.importer import (
    IMPORTED_SCHEMA,
    dataset_name,
    imported_frame,
    imported_relation,
    land,
    land_with_answer_file,
)
from loft_warehouse.scoring.upstream_files import SCORED_QUERY_SCHEMA, answer_file_queries
from tests.scoring.sqlkit import Scenario, insert


def _queries(rows: list[tuple]) -> pl.DataFrame:
    """Scored queries from (task, dataset, split, qid, turn, n_turns, gold)."""
    frame = pl.DataFrame(
        [
            {"task": t, "dataset": d, "corpus_id": d, "split": s, "qid": q, "upstream_qid": q, "turn": turn,
             "n_turns": n, "query_text": "q", "gold": json.dumps(g), "gold_pids": g if t == "retrieval" else [],
             "query_rank": i, "is_multi_answer": False}
            for i, (t, d, s, q, turn, n, g) in enumerate(rows)
        ]
    )  # fmt: skip
    return frame.select([pl.col(c).cast(k) if c in frame.columns else pl.lit(None, k).alias(c)
                         for c, k in SCORED_QUERY_SCHEMA.items()])  # fmt: skip


QUERIES = _queries(
    [
        ("retrieval", "arguana", "test", "t1", 0, 1, ["doc1"]),
        ("retrieval", "arguana", "test", "t2", 0, 1, ["doc2"]),
        ("retrieval", "arguana", "test", "t3", 0, 1, ["doc3"]),
        ("retrieval", "topiocqa", "test", "c1", 0, 2, ["a"]),
        ("retrieval", "topiocqa", "test", "c1", 1, 2, ["b"]),
        ("rag", "topiocqa_rag", "test", "c1", 0, 2, ["Paris"]),
        ("rag", "topiocqa_rag", "test", "c1", 1, 2, ["France"]),
        ("sql", "sparc", "test", "s1", 0, 2, [["x"]]),
        ("sql", "sparc", "test", "s1", 1, 2, [["y"], ["z"]]),
    ]
)


def _write(path: Path, lines: list[object]) -> Path:
    path.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines))
    return path


def _scope(task: str, dataset: str) -> pl.DataFrame:
    return QUERIES.filter((pl.col("task") == task) & (pl.col("dataset") == dataset))


def _land(tmp_path: Path, lines: list[object], task: str = "retrieval", dataset: str = "arguana", **kwargs):
    options = {"system": "gemini-upstream", "size": "128k", "task_type": task, "dataset": dataset, **kwargs}
    path = _write(tmp_path / "preds.jsonl", lines)
    scope = _scope(task.replace("multi_value_rag", "rag"), dataset)
    return land(path, scope, directory=tmp_path / "imports", **options)


def _landed(tmp_path: Path, lines: list[object], **kwargs) -> list[dict]:
    target, _ = _land(tmp_path, lines, **kwargs)
    return pl.read_parquet(target).sort("qid", "turn").to_dicts()


def line(qid: str, outputs: list, n: int | None = None) -> dict:
    return {"qid": qid, "num_turns": len(outputs) if n is None else n, "model_outputs": outputs}


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ("{not json", "preds.jsonl:2: malformed JSON"),
        ({"qid": "t2", "num_turns": 1}, "preds.jsonl:2: missing field(s) model_outputs"),
        ({"qid": "t2", "num_turns": 2, "model_outputs": [["a"]]}, "preds.jsonl:2: qid 't2': num_turns 2 but 1 output"),
        ({"qid": "t2", "num_turns": 0, "model_outputs": [["a"]]}, "positive integer"),
        ({"qid": "t2", "num_turns": 1, "model_outputs": []}, "non-empty list"),
        ({"qid": "t2", "num_turns": 1, "model_outputs": [None]}, "qid 't2': turn 0 is neither"),
    ],
)
def test_malformed_lines_name_file_and_line(tmp_path: Path, bad: object, message: str) -> None:
    with pytest.raises(BadInputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        _land(tmp_path, [line("t1", [["a"]]), bad])


def test_every_refused_line_is_named_and_the_rest_can_be_scored(tmp_path: Path) -> None:
    """Issue 60 item 8: one bad line refused the whole file, naming only itself (283 SQL queries
    went unscored until it was found and removed by hand)."""
    lines = [
        line("t1", [["doc1"]]),
        "{not json",
        {"qid": "t2", "num_turns": 2, "model_outputs": [["doc2"]]},
        line("t3", [["doc3"]]),
        {"qid": "t3", "num_turns": 1},
    ]
    with pytest.raises(BadInputError) as refused:
        _land(tmp_path, lines)
    assert str(refused.value) == (
        f"{tmp_path / 'preds.jsonl'}:2: malformed JSON (Expecting property name enclosed in double quotes); "
        "2 more line(s) refused (3, 5); "
        "--score-the-rest scores the other lines as if the refused ones were not in the file"
    )
    target, summary = _land(tmp_path, lines, score_the_rest=True)
    landed = pl.read_parquet(target).sort("qid")
    assert landed.select("qid", "import_line").rows() == [("t1", 1), ("t3", 4)]
    assert (summary.refused, summary.unanswered) == (3, 1)
    assert summary.line(Path("preds.jsonl")).endswith(", 3 refused line(s) left out (--score-the-rest)")


def test_empty_file_and_bad_names_are_rejected(tmp_path: Path) -> None:
    with pytest.raises(BadInputError, match="no prediction in the file answers"):
        _land(tmp_path, [])
    with pytest.raises(ConfigurationError, match="system"):
        _land(tmp_path, [line("t1", [["a"]])], system="../evil")
    with pytest.raises(ConfigurationError, match="size"):
        _land(tmp_path, [line("t1", [["a"]])], size="64k")


def test_duplicated_qid_last_line_wins_and_is_counted(tmp_path: Path) -> None:
    target, summary = _land(tmp_path, [line("t1", [["first"]]), line("t2", [["x"]]), line("t1", [["last"]])])
    rows = {row["qid"]: row for row in pl.read_parquet(target).to_dicts()}
    assert (rows["t1"]["given_answers"], rows["t1"]["import_line"]) == (["last"], 3)
    assert (summary.duplicates, summary.lines, summary.unanswered) == (1, 3, 1)
    assert "1 duplicate qid line(s) (the last wins)" in summary.line(Path("preds.jsonl"))


def test_stray_qids_are_ignored_and_counted(tmp_path: Path) -> None:
    target, summary = _land(tmp_path, [line("t1", [["a"]]), line("nope", [["b"]])])
    assert pl.read_parquet(target)["qid"].to_list() == ["t1"]
    assert summary.stray == 1


@pytest.mark.parametrize("strict_input", [False, True])
def test_a_qid_given_as_a_number_for_a_text_qid_is_refused_naming_the_line(tmp_path: Path, strict_input: bool) -> None:
    """LOFT keys predictions by the JSON value, so {"qid": 7} leaves the query "7" unanswered
    (its run_evaluation.py warns "Query 7 was unanswered"); matching by text would score it."""
    queries = _queries([("rag", "nq", "test", "7", 0, 1, ["Paris"]), ("rag", "nq", "test", "8", 0, 1, ["Rome"])])
    path = _write(tmp_path / "preds.jsonl", [line("8", [["Rome"]]), {**line("8", [["Paris"]]), "qid": 7}])
    with pytest.raises(BadInputError, match=r"preds.jsonl:2: qid '7': given as the JSON number 7, not a string"):
        land(path, queries, system="gemini-upstream", size="128k", task_type="rag", dataset="nq",
             directory=tmp_path / "imports", strict_input=strict_input)  # fmt: skip


def test_a_number_qid_that_is_no_query_is_stray_as_upstream(tmp_path: Path) -> None:
    target, summary = _land(tmp_path, [line("t1", [["a"]]), {**line("t1", [["b"]]), "qid": 9}])
    assert (pl.read_parquet(target)["qid"].to_list(), summary.stray) == (["t1"], 1)


def test_a_lone_surrogate_is_kept_as_a_replacement_character_and_counted(tmp_path: Path) -> None:
    escaped = r'{"qid": "t1", "num_turns": 1, "model_outputs": [["do\ud800c1"]]}'
    target, summary = _land(tmp_path, [escaped, line("t2", [["doc2"]])])
    assert pl.read_parquet(target).sort("qid")["given_answers"].to_list() == [["do\ufffdc1"], ["doc2"]]
    assert summary.surrogates == 1
    assert summary.line(Path("preds.jsonl")).endswith(", 1 line(s) with a lone surrogate (kept as U+FFFD)")


def test_outputs_beyond_num_turns_are_ignored_and_counted(tmp_path: Path) -> None:
    (rows,) = [_landed(tmp_path, [line("t1", [["a"], ["b"]], n=1)])]
    assert [(r["turn"], r["given_answers"]) for r in rows] == [(0, ["a"])]


def test_a_string_turn_is_its_characters(tmp_path: Path) -> None:
    rows = _landed(tmp_path, [line("t1", ["doc1"])])
    assert (rows[0]["given_answers"], rows[0]["id_space"], rows[0]["raw_text"]) == (["d", "o", "c", "1"], "pid", None)


def test_raw_generations_are_parsed_as_responses(tmp_path: Path) -> None:
    rows = _landed(tmp_path, [line("t1", ["Final Answer: ['3']"])], raw_generations=True)
    row = rows[0]
    assert (row["raw_text"], row["given_answers"], row["id_space"]) == ("Final Answer: ['3']", None, "shown")


def test_fewer_turns_score_those_turns_and_one_turn_reads_every_turns_gold(tmp_path: Path) -> None:
    rows = _landed(tmp_path, [line("c1", [["b", "a"]])], dataset="topiocqa")
    assert [(r["turn"], r["n_turns"], r["gold_loft"]) for r in rows] == [(0, 2, '["a", "b"]')]
    rows = _landed(tmp_path, [line("s1", [[["x"]]])], task="sql", dataset="sparc")
    assert json.loads(rows[0]["gold_loft"]) == [[["x"]], [["y"], ["z"]]]


def test_lines_loft_fails_on_are_refused(tmp_path: Path) -> None:
    with pytest.raises(BadInputError, match="qid 'c1': num_turns 1 on a multi-turn RAG query"):
        _land(tmp_path, [line("c1", [["Paris"]])], task="rag", dataset="topiocqa_rag")
    with pytest.raises(BadInputError, match="qid 't1': num_turns 2 but the query has 1 turn"):
        _land(tmp_path, [line("t1", [["a"], ["b"]])])


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        ([line("t1", [["a"]]), line("t1", [["b"]])], "qid 't1': already given on line 1"),
        ([line("nope", [["a"]])], "qid 'nope': not a query of this dataset and split"),
        ([line("t1", [["a"], ["b"]], n=1)], "qid 't1': num_turns 1, 2 output"),
    ],
)
def test_strict_input_refuses_what_loft_resolves(tmp_path: Path, lines: list, message: str) -> None:
    with pytest.raises(BadInputError, match=message):
        _land(tmp_path, lines, strict_input=True)


def test_landing_keeps_types_and_replaces_on_reimport(tmp_path: Path) -> None:
    target, _ = _land(tmp_path, [line("t1", [["doc1", 7]])])
    assert target == tmp_path / "imports" / "128k" / "gemini-upstream__retrieval__arguana__test__default.parquet"
    row = pl.read_parquet(target).row(0, named=True)
    assert (row["given_answers"], row["given_answers_json"], row["id_space"]) == (["doc1", "7"], '["doc1", 7]', "pid")
    _land(tmp_path, [line("t2", [["doc2"]])])
    assert pl.read_parquet(target)["qid"].to_list() == ["t2"]


def test_an_import_killed_while_landing_leaves_the_previous_file_whole(tmp_path: Path, monkeypatch) -> None:
    """Issue 33 item 2: a kill while the parquet is written never leaves half a file where the
    models read (the write goes to a side name and takes its place in one rename)."""
    target, _ = _land(tmp_path, [line("t1", [["doc1"]])])

    def killed_midway(frame: pl.DataFrame, path: Path, *args, **kwargs) -> None:
        Path(path).write_bytes(b"PAR1 half a file")
        raise KeyboardInterrupt

    monkeypatch.setattr(pl.DataFrame, "write_parquet", killed_midway)
    with pytest.raises(KeyboardInterrupt):
        _land(tmp_path, [line("t2", [["doc2"]])])
    assert pl.read_parquet(target)["qid"].to_list() == ["t1"]
    assert sorted(path.name for path in target.parent.iterdir()) == [target.name]


def test_imported_frame_adds_unanswered_queries(tmp_path: Path) -> None:
    _land(tmp_path, [line("t1", [["doc1"]])])
    frame = imported_frame(tmp_path / "imports", "128k", QUERIES).sort("qid")
    assert frame.select("qid", "status", "import_line", "prompt_id").rows() == [
        ("t1", "ok", 1, "retrieval/arguana/arguana/default/t1/0"),
        ("t2", "missing", None, "retrieval/arguana/arguana/default/t2/0"),
        ("t3", "missing", None, "retrieval/arguana/arguana/default/t3/0"),
    ]
    keys = frame.select("task", "dataset", "corpus_id", "variant", "qid", "turn").rows()
    assert frame["prompt_id"].to_list() == [prompt_id(*key) for key in keys]  # built in bulk, same key
    assert frame.schema == pl.Schema(IMPORTED_SCHEMA)
    nothing = imported_frame(tmp_path / "nothing", "128k", QUERIES)
    assert (nothing.height, nothing.schema) == (0, pl.Schema(IMPORTED_SCHEMA))


def test_an_incremental_read_takes_only_new_or_changed_files(tmp_path: Path, capsys) -> None:
    """int_imported_predictions on an incremental build: the files whose fingerprint the stored
    table lacks are read, the rows of a replaced or removed file are deleted, and a file whose
    queries changed is read again; the table then holds what a full read gives."""
    con = duckdb.connect()
    queries = QUERIES

    def build(stored: bool) -> None:
        con.register("queries_frame", queries.to_arrow())
        relation = imported_relation(con, tmp_path / "imports", "128k", con.table("queries_frame"),
                                     "stored" if stored else None)  # fmt: skip
        con.register("read_rows", relation)
        if stored:
            con.execute("insert into stored by name select * from read_rows")
        else:
            con.execute("create or replace table stored as select * from read_rows")

    def reads() -> str:
        return capsys.readouterr().out.strip()

    def full() -> list[tuple]:
        return imported_frame(tmp_path / "imports", "128k", queries).sort(pl.all()).rows()

    def held() -> list[tuple]:
        return con.sql("select * from stored").pl().sort(pl.all()).rows()

    first, _ = _land(tmp_path, [line("t1", [["doc1"]])])
    build(stored=False)
    _land(tmp_path, [line("t2", [["doc2"]])], system="other")
    build(stored=True)
    assert reads() == "int_imported_predictions: 1 of 2 landed file(s) to read, the rest kept"
    assert held() == full() and len(held()) == 6
    _land(tmp_path, [line("t3", [["doc3"]])])  # gemini-upstream's file replaced, and said so
    build(stored=True)
    replaced, read = reads().splitlines()
    assert replaced.startswith("replacing the earlier import of gemini-upstream on retrieval/arguana test at 128k")
    assert read == "int_imported_predictions: 1 of 2 landed file(s) to read, the rest kept"
    assert held() == full()
    assert con.sql("select qid from stored where system = 'gemini-upstream' and status = 'ok'").fetchall() == [("t3",)]
    first.unlink()
    build(stored=True)
    assert reads() == "int_imported_predictions: 0 of 1 landed file(s) to read, the rest kept"
    assert held() == full() and {row[0] for row in held()} == {"other"}
    queries = QUERIES.filter(pl.col("qid") != "t3")  # the built dataset lost a query the file does not answer
    build(stored=True)
    assert reads() == "int_imported_predictions: 1 of 1 landed file(s) to read, the rest kept"
    assert held() == full() and len(held()) == 2


def test_each_landed_file_gets_its_own_missing_rows(tmp_path: Path) -> None:
    _land(tmp_path, [line("t1", [["doc1"]])])
    _land(tmp_path, [line("t2", [["doc2"]])], system="other")
    _land(tmp_path, [line("c1", [["a"], ["b"]])], dataset="topiocqa", system="other")
    frame = imported_frame(tmp_path / "imports", "128k", QUERIES)
    rows = frame.select("system", "dataset", "qid", "turn", "status", "import_line").sort(pl.all()).rows()
    assert rows == [
        ("gemini-upstream", "arguana", "t1", 0, "ok", 1),
        ("gemini-upstream", "arguana", "t2", 0, "missing", None),
        ("gemini-upstream", "arguana", "t3", 0, "missing", None),
        ("other", "arguana", "t1", 0, "missing", None),
        ("other", "arguana", "t2", 0, "ok", 1),
        ("other", "arguana", "t3", 0, "missing", None),
        ("other", "topiocqa", "c1", 0, "ok", 1),
        ("other", "topiocqa", "c1", 1, "ok", 1),
    ]
    assert set(frame.filter(pl.col("status") == "missing")["import_file"]) == {str(tmp_path / "preds.jsonl")}


def test_a_qid_gone_from_the_warehouse_stops_the_build(tmp_path: Path) -> None:
    _land(tmp_path, [line("t1", [["a"]]), line("t3", [["a"]]), line("t2", [["a"]])], system="b-second")
    _land(tmp_path, [line("t1", [["a"]]), line("t2", [["a"]]), line("t3", [["a"]])], system="a-first")
    gone = QUERIES.filter(~pl.col("qid").is_in(["t2", "t3"]))
    # The first file in name order, its first line in file order.
    with pytest.raises(BadInputError, match=r"preds.jsonl:2: qid 't2' \(turn 0\) is not a test query.*a-first__"):
        imported_frame(tmp_path / "imports", "128k", gone)


def test_imported_predictions_are_scored_like_runs(tmp_path: Path) -> None:
    s = Scenario()
    for qid, gold in [("t1", ["p1"]), ("t2", ["p2"]), ("t3", ["p3"]), ("t4", ["p4"])]:
        s.query("retrieval", "nq", qid, gold, max_gold=1)
    s.build()
    queries = s.con.sql("select * from int_scored_queries").pl()
    lines = [
        line("t1", [["\u00a0p1\t", "p9"]]),  # upstream strips pids (str.strip: any whitespace)
        line("t2", [["nope", "p2"]]),  # unknown pid: a miss, not a drop
        line("t3", ["Reasoning.\nFinal Answer: ['3']"]),  # raw generation: shown IDs
    ]
    path, scope = _write(tmp_path / "preds.jsonl", lines), queries.filter(pl.col("dataset") == "nq")
    land(path, scope, system="gemini-upstream", size="128k", task_type="retrieval", dataset="nq",
         directory=tmp_path / "imports", raw_generations=True)  # fmt: skip
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


def test_pids_of_an_answer_file_without_a_corpus_are_scored_as_given_under_strict(tmp_path: Path) -> None:
    queries = answer_file_queries(_answers(tmp_path), "retrieval", "mine", "test")
    preds = _write(tmp_path / "preds.jsonl", [line("q1", [[" d1", "d9", "d1"]]), line("q2", [["d7", "d2"]])])
    land(preds, queries, system="other", size="128k", task_type="retrieval", dataset="mine",
         directory=tmp_path / "imports")  # fmt: skip
    s = Scenario()
    insert(s.con, "imported_queries", queries.to_dicts())
    insert(s.con, "imports", imported_frame(tmp_path / "imports", "128k", queries).to_dicts())
    s.build()
    rows = s.con.sql(
        "select qid, pred_pids_loft, pred_pids_strict, unknown_ids_strict, unknown_ids_loft, query_dropped_loft "
        "from predictions order by qid"
    ).fetchall()
    assert rows == [
        ("q1", ["d1", "d9", "d1"], ["d1", "d9"], [], [], False),
        ("q2", ["d7", "d2"], ["d7", "d2"], [], [], False),
    ]
    stored = s.stored_lists()
    assert stored == [  # a list the loft rule already holds is stored once (NULL); the view gives it back
        ("q1", None, None, ["d1", "d9", "d1"], ["d1", "d9"]),
        ("q2", None, None, None, None),
    ]
    assert s.scores("q1", system="other")["recall@1_strict"] == 1.0
    assert s.scores("q2", system="other")["recall@1_strict"] == 0.0
    assert s.scores("q2", system="other")["recall@2_strict"] == 1.0


def _answers(tmp_path: Path) -> Path:
    return _write(tmp_path / "queries.jsonl", [
        {"qid": "q1", "query_text": "x", "answers": [["d1", 1]], "metadata": {}},
        {"qid": "q2", "query_text": "y", "answers": [["d2", 1]], "metadata": {}},
    ])  # fmt: skip


def test_cli_lands_an_answer_file_and_its_predictions(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("LOFT_DUCKDB_PATH", str(tmp_path / "none.duckdb"))
    preds = _write(tmp_path / "preds.jsonl", [line("q1", [["d1"]]), line("q1", [["d2"]]), line("zz", [["d1"]])])
    command = f"import-predictions {preds} --system other --size 32k --task retrieval --dataset mine --split dev"
    code = main([*command.split(), "--queries", str(_answers(tmp_path)), "--imports-dir", str(tmp_path / "imp")])
    assert code == 0
    assert (tmp_path / "imp" / "32k" / "other__retrieval__mine__dev__default.parquet").is_file()
    assert (tmp_path / "imp" / "32k" / "queries" / "retrieval__mine__dev.parquet").is_file()
    out = capsys.readouterr().out
    assert "preds.jsonl: 3 lines; 1 duplicate qid line(s) (the last wins), 1 stray qid line(s) (ignored)" in out
    assert "1 unanswered quer(ies) (scored 0)" in out
    assert "loft build --select loft_32k__int_imported_queries+" in out


def test_a_refused_prediction_file_lands_neither_it_nor_its_answer_file(tmp_path: Path) -> None:
    imports = tmp_path / "imports"
    good = _write(tmp_path / "good.jsonl", [line("q1", [["d1"]])])
    refused = _write(tmp_path / "refused.jsonl", [line("q1", [["d1"]], n=3)])
    landing = {"system": "other", "size": "128k", "task_type": "retrieval", "dataset": "mine", "directory": imports}
    landed, queries, _ = land_with_answer_file(good, _answers(tmp_path), **landing)
    assert pl.read_parquet(queries)["qid"].to_list() == ["q1", "q2"]
    other_answers = _write(tmp_path / "other.jsonl", [{"qid": "q1", "query_text": "x", "answers": [["d5", 1]]}])
    with pytest.raises(BadInputError, match="refused.jsonl"):
        land_with_answer_file(refused, other_answers, **{**landing, "system": "third"})
    assert sorted(p.name for p in imports.rglob("*")) == sorted(["128k", "queries", landed.name, queries.name])
    assert pl.read_parquet(queries)["gold_pids"].to_list() == [["d1"], ["d2"]]


@pytest.mark.parametrize("fast_path", [True, False], ids=["duckdb-reader", "python-reader"])
def test_an_answer_file_repeating_a_qid_is_refused_at_the_door(tmp_path: Path, fast_path: bool, monkeypatch) -> None:
    """Issue 33 item 6: LOFT's evaluator scores both lines of a repeated qid; the warehouse keys
    queries by qid, so the import refuses the file naming both lines instead of landing it and
    failing every later build on the uniqueness test."""
    imports = tmp_path / "imports"
    preds = _write(tmp_path / "preds.jsonl", [line("q1", [["d1"]])])
    answers = [
        {"qid": "q1", "query_text": "x", "answers": [["d1", 1]]},
        {"qid": "q2", "query_text": "y", "answers": [["d2", 1]]},
        {"qid": "q1", "query_text": "x again", "answers": [["d3", 1]]},
    ]
    if not fast_path:
        monkeypatch.setattr(bulk_files, "write_answer_file", lambda *args: False)
    answer_file = _write(tmp_path / "answers.jsonl", answers)
    landing = {"system": "other", "size": "128k", "task_type": "retrieval", "dataset": "mine", "directory": imports}
    with pytest.raises(BadInputError, match=rf"{answer_file}:3: qid 'q1' already given on line 1"):
        land_with_answer_file(preds, answer_file, **landing)
    assert not [path for path in imports.rglob("*") if path.is_file()]


def test_a_rag_answer_file_with_a_bare_string_answer_is_refused_at_the_door(tmp_path: Path) -> None:
    """LOFT's evaluator iterates a bare-string gold ("Paris") as five one-letter answers; the
    import refuses it naming the line, instead of landing a gold no RAG score can read."""
    preds = _write(tmp_path / "preds.jsonl", [{"qid": "r1", "num_turns": 1, "model_outputs": [["Paris"]]}])
    answers = _write(
        tmp_path / "answers.jsonl",
        [{"qid": "r0", "query_text": "x", "answers": ["Rome"]}, {"qid": "r1", "query_text": "y", "answers": "Paris"}],
    )
    landing = {"system": "other", "size": "128k", "task_type": "rag", "dataset": "mine", "directory": tmp_path / "i"}
    with pytest.raises(
        BadInputError, match=rf"{answers}:2: qid 'r1': answers must be a list of answers, got the string"
    ):
        land_with_answer_file(preds, answers, **landing)


def test_cli_checks_the_dataset_at_import_time(tmp_path: Path, capsys, monkeypatch) -> None:
    database = tmp_path / "loft.duckdb"
    monkeypatch.setenv("LOFT_DUCKDB_PATH", str(database))
    preds = _write(tmp_path / "preds.jsonl", [line("q1", [["d1"]])])
    command = f"import-predictions {preds} --system other --size 128k --task retrieval --dataset arguana"
    assert main([*command.split(), "--imports-dir", str(tmp_path / "imp")]) == 2
    assert "not found" in capsys.readouterr().err
    with duckdb.connect(str(database)) as con:
        con.execute("create schema loft_128k; create schema loft_128k_internal")
        con.execute("create table loft_128k.queries as select 'retrieval' as task, 'arguana' as dataset")
        columns = ", ".join(f"null::{'varchar' if k == pl.String else 'bigint'} as {c}"
                            for c, k in SCORED_QUERY_SCHEMA.items() if c not in ("task", "dataset"))  # fmt: skip
        con.execute(f"create table loft_128k_internal.int_scored_queries as select 'retrieval' as task, "
                    f"'arguana' as dataset, {columns} limit 0")  # fmt: skip
    assert main([*command.split(), "--imports-dir", str(tmp_path / "imp")]) == 2
    assert "retrieval/arguana is not in" in capsys.readouterr().err
    clash = [*command.split(), "--queries", str(_answers(tmp_path)), "--imports-dir", str(tmp_path / "imp")]
    assert main(clash) == 2
    assert "retrieval/arguana is built in loft_128k from data" in capsys.readouterr().err
    with duckdb.connect(str(database)) as con:
        con.execute("create table loft_128k_internal.stg_mm_queries as select 'oven' as dataset")
    multimodal = [*clash[: clash.index("--task") + 1], "mm", "--dataset", "oven", *clash[clash.index("--queries") :]]
    assert main(multimodal) == 2
    assert "mm/oven is built in loft_128k from data" in capsys.readouterr().err


def test_answer_file_queries_read_loft_layouts(tmp_path: Path) -> None:
    frame = answer_file_queries(_answers(tmp_path), "retrieval", "mine", "test")
    assert frame.select("qid", "upstream_qid", "gold_pids", "is_multi_answer").rows() == [
        ("q1", "q1", ["d1"], False),
        ("q2", "q2", ["d2"], False),
    ]
    bbh = tmp_path / "queries.json"
    bbh.write_text(json.dumps([{"input": "a", "target": "not plausible"}, {"input": "b", "target": "(A)"}]))
    frame = answer_file_queries(bbh, "icl", "bbh", "test")
    assert frame.select("qid", "upstream_qid", "gold").rows() == [
        ("test-0", "0", '["not", "plausible"]'),
        ("test-1", "1", '["(A)"]'),
    ]
    with pytest.raises(BadInputError, match="only --task icl reads it"):
        answer_file_queries(bbh, "rag", "bbh", "test")


def test_the_dataset_is_named_as_the_build_names_it_too() -> None:
    """--dataset takes `arguana` or the build's `retrieval/arguana` (issue 35: one name for both)."""
    assert dataset_name("retrieval", "arguana") == "arguana"
    assert dataset_name("retrieval", "retrieval/arguana") == "arguana"
    with pytest.raises(ConfigurationError, match="--dataset rag/nq: a rag dataset, but --task is a retrieval task"):
        dataset_name("retrieval", "rag/nq")
