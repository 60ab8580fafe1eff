"""The release layout's query files as LOFT's evaluator reads their gold."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loft_warehouse.errors import BadInputError
from loft_warehouse.sources.loft_release import bbh_queries, load, query_from_record, read_answer_lines


def _query(task: str, record: dict, tmp_path: Path):
    return query_from_record(task, record, "test", tmp_path / "test_queries.jsonl", 3)


def test_multi_turn_retrieval_gold_is_one_pid_per_turn_not_its_score(tmp_path: Path) -> None:
    record = {"qid": "c", "query_text": ["a", "b"], "answers": [["doc1", 1], ["doc2", 1]], "metadata": {}}
    query = _query("retrieval", record, tmp_path)
    assert query.gold_pids == [["doc1"], ["doc2"]] and query.gold == [["doc1"], ["doc2"]]
    single = {"qid": "s", "query_text": "a", "answers": [["doc1", 1], ["doc2", 0]], "metadata": {}}
    assert _query("retrieval", single, tmp_path).gold_pids == [["doc1", "doc2"]]


def test_multi_turn_rag_gold_is_one_alias_list_per_turn(tmp_path: Path) -> None:
    record = {"qid": "c", "query_text": ["a", "b"], "answers": [["Paris"], ["France", "FR"]],
              "metadata": {"qrels": [["d1", 1]]}}  # fmt: skip
    query = _query("rag", record, tmp_path)
    assert query.gold == [["Paris"], ["France", "FR"]] and query.gold_pids == [["d1"], ["d1"]]


def test_icl_answers_are_one_target_list_per_turn(tmp_path: Path) -> None:
    record = {"qid": "0", "query_text": "x", "answers": [["(D)"]]}
    assert _query("icl", record, tmp_path).gold == [["(D)"]]


@pytest.mark.parametrize("answers", [["a", "b"], "abc", [["a"], "b"]])
def test_flat_sql_gold_stops_the_load_naming_file_line_and_qid(tmp_path: Path, answers) -> None:
    record = {"qid": "q7", "query_text": "x", "answers": answers, "metadata": {"db_id": "db"}}
    with pytest.raises(BadInputError, match=r"test_queries.jsonl:3: qid 'q7' turn 0: SQL gold must be a list of rows"):
        _query("sql", record, tmp_path)


def test_sql_gold_keeps_nan_and_infinities_as_the_text_loft_normalises_them_to(tmp_path: Path) -> None:
    path = tmp_path / "test_queries.jsonl"
    path.write_text(
        '{"qid": "q", "query_text": "x", "answers": [[NaN, 1], [Infinity], [-Infinity]], "metadata": {"db_id": "db"}}\n'
    )
    [(row, record)] = read_answer_lines(path, "sql")
    assert query_from_record("sql", record, "test", path, row).gold == [[["nan", 1], ["inf"], ["-inf"]]]


@pytest.mark.parametrize(
    ("task", "line"),
    [
        ("rag", '{"qid": "q", "query_text": "x", "answers": [NaN]}'),
        ("sql", '{"qid": "q", "query_text": "x", "answers": [["a"]], "metadata": {"db_id": "db", "n": Infinity}}'),
    ],
)
def test_nan_elsewhere_is_refused_naming_file_and_line(tmp_path: Path, task: str, line: str) -> None:
    path = tmp_path / "test_queries.jsonl"
    path.write_text('{"qid": "ok", "query_text": "x", "answers": [["a"]]}\n' + line + "\n")
    with pytest.raises(BadInputError, match=r"test_queries.jsonl:2: malformed JSON \(NaN"):
        list(read_answer_lines(path, task))


def test_bbh_native_queries_are_known_upstream_by_index_and_split_on_spaces(tmp_path: Path) -> None:
    path = tmp_path / "test_queries.json"
    path.write_text(json.dumps([{"input": " Is it? ", "target": "not plausible"}]))
    [query] = bbh_queries(path, "test")
    assert (query.qid, query.upstream_qid, query.turns) == ("test-0", "0", [" Is it? "])
    assert query.gold == [["not", "plausible"]]


def _release(folder: Path, test_lines: str) -> Path:
    folder.mkdir(parents=True)
    (folder / "corpus.jsonl").write_text(json.dumps({"pid": "d1", "passage_text": "a passage"}) + "\n")
    record = {"qid": "q1", "query_text": "x", "answers": [["d1", 1]], "metadata": {}}
    (folder / "few_shot_queries.jsonl").write_text(json.dumps(record) + "\n")
    (folder / "dev_queries.jsonl").write_text("")
    (folder / "test_queries.jsonl").write_text(test_lines)
    return folder


def test_an_empty_test_split_is_refused_naming_the_file(tmp_path: Path) -> None:
    """An empty dev file builds the dataset without a dev split; an empty test file (nothing to
    score) stops the load, with or without the splits the size expects."""
    folder = _release(tmp_path / "empty", "\n")
    for splits in (("few_shot", "dev", "test"), None):
        with pytest.raises(BadInputError, match=r"test_queries.jsonl: empty test split: the dataset would have no"):
            load("retrieval", folder, splits)
    record = {"qid": "q2", "query_text": "y", "answers": [["d1", 1]], "metadata": {}}
    loaded = load("retrieval", _release(tmp_path / "full", json.dumps(record) + "\n"), ("few_shot", "dev", "test"))
    assert sorted(q.release_split for q in loaded.queries) == ["few_shot", "test"]


def test_an_empty_pid_is_refused_naming_file_and_line(tmp_path: Path) -> None:
    record = {"qid": "q2", "query_text": "y", "answers": [["d1", 1]], "metadata": {}}
    folder = _release(tmp_path / "release", json.dumps(record) + "\n")
    with open(folder / "corpus.jsonl", "a", encoding="utf-8") as handle:
        handle.write(json.dumps({"pid": " ", "passage_text": "no ID"}) + "\n")
    with pytest.raises(BadInputError, match=r"corpus.jsonl:2: empty pid"):
        load("retrieval", folder, ("few_shot", "dev", "test"))
