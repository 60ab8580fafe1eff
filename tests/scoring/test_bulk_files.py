"""The column-wise reader of answer and prediction files against the Python reader it stands in for:
on ordinary and hostile files, either it gives exactly the Python reader's frame and summary, or
it declines (None) and the Python reader decides, with its own message."""

from __future__ import annotations

import json
import math
import random
import struct
from pathlib import Path
from typing import Any

import duckdb
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from loft_warehouse.errors import BadInputError
from loft_warehouse.scoring import bulk_files
from loft_warehouse.scoring.upstream_files import SCORED_QUERY_SCHEMA, TASK_TYPES, answer_file_queries, prediction_rows
from tests.spies import spy


def _write(path: Path, lines: list[Any]) -> Path:
    path.write_bytes(b"".join((x if isinstance(x, bytes) else json.dumps(x).encode()) + b"\n" for x in lines))
    return path


def _python_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bulk_files, "write_answer_file", lambda *args: False)
    monkeypatch.setattr(bulk_files, "prediction_frame", lambda *args: None)


def _read(answers: Path, preds: Path | None, task_type: str) -> Any:
    try:
        queries = answer_file_queries(answers, task_type, "bench", "test")
        if preds is None:
            return queries, None
        frame, summary = prediction_rows(preds, queries, task_type=task_type)
        return queries, (frame, summary)
    except Exception as exc:  # the two readers must fail alike
        return f"{type(exc).__name__}: {exc}"


def _both(monkeypatch: pytest.MonkeyPatch, answers: Path, preds: Path | None, task_type: str) -> tuple[Any, Any]:
    fast = _read(answers, preds, task_type)
    with monkeypatch.context() as patch:
        _python_only(patch)
        slow = _read(answers, preds, task_type)
    if isinstance(fast, str) or isinstance(slow, str):
        assert fast == slow
    else:
        assert_frame_equal(fast[0], slow[0])
        if preds is not None:
            assert_frame_equal(fast[1][0], slow[1][0])
            assert fast[1][1] == slow[1][1]
    return fast, slow


RETRIEVAL = [
    {"qid": "q1", "query_text": "  first\u3000", "answers": [["d1", 1], ["d2", 1]], "metadata": {"qrels": []}},
    {"qid": "q2", "query_text": "second", "answers": [['d\u00e9 "quoted" \\ back', 1]]},
    {"qid": 3, "query_text": "third", "answers": [], "metadata": None},
    {"qid": "q4", "query_text": "tab", "answers": [["d\t4", 1]]},
]


def test_ordinary_files_take_the_fast_path_and_match(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    answers = _write(tmp_path / "queries.jsonl", RETRIEVAL)
    preds = _write(
        tmp_path / "preds.jsonl",
        [
            {"qid": "q1", "num_turns": 1, "model_outputs": [["d1", "d9", "d1"]], "metadata": {}},
            {"qid": "q2", "num_turns": 1, "model_outputs": [['d\u00e9 "quoted" \\ back'], ["extra turn"]]},
            {"qid": "stray", "num_turns": 1, "model_outputs": [["x"]]},
            {"qid": "q1", "num_turns": 1, "model_outputs": [[" d2 ", 5, None, 1.50, True, ["n"], {"k": 1}]]},
            {"qid": "q4", "num_turns": 1, "model_outputs": [["a\tb", "\u2028", "12345678901234567890123"]]},
        ],
    )
    written = tmp_path / "queries.parquet"
    assert bulk_files.write_answer_file(answers, "retrieval", "bench", "test", False, written)
    assert pl.read_parquet(written)["qid"].to_list() == ["q1", "q2", "3", "q4"]
    assert pl.read_parquet(written).schema == pl.Schema(SCORED_QUERY_SCHEMA)  # as the Python reader lands it
    assert bulk_files.prediction_frame(preds, answer_file_queries(answers, "retrieval", "b", "test"), False)
    fast, _ = _both(monkeypatch, answers, preds, "retrieval")
    frame, summary = fast[1]
    assert summary.duplicates == 1 and summary.stray == 1 and summary.truncated == 1 and summary.unanswered == 1
    assert frame.filter(pl.col("qid") == "q1")["given_answers"].to_list() == [
        [" d2 ", "5", "None", "1.5", "True", "['n']", "{'k': 1}"]
    ]


def test_a_file_with_a_line_over_the_cap_is_never_read_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 60 item 2: a 2 GiB file of NUL bytes (no line break) was read whole into DuckDB
    (8.4 GiB peak) before the line cap sent it to the Python reader, which refuses its line 1."""
    monkeypatch.setenv("LOFT_MAX_LINE_BYTES", "1000")
    answers = _write(tmp_path / "queries.jsonl", RETRIEVAL)
    queries = answer_file_queries(answers, "retrieval", "bench", "test")
    preds = tmp_path / "preds.jsonl"
    preds.write_bytes(b"\0" * 5000)
    monkeypatch.setattr(bulk_files.duckdb, "connect", lambda *args: pytest.fail("the file was handed to DuckDB"))
    assert bulk_files.prediction_frame(preds, queries, False) is None
    with pytest.raises(BadInputError, match="preds.jsonl:1: line longer than 1000 bytes"):
        prediction_rows(preds, queries, task_type="retrieval")


def test_outputs_longer_than_a_reply_may_be_are_refused_with_their_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An imported output is a model's reply made elsewhere: over LOFT_MAX_RESPONSE_BYTES it is
    refused naming file and line (54 lines of 10 MiB were held, landed and built whole, issue 60
    item 2); a long line whose outputs are within the budget is read by the Python reader."""
    monkeypatch.setenv("LOFT_MAX_RESPONSE_BYTES", "100")
    answers = _write(tmp_path / "queries.jsonl", RETRIEVAL)
    queries = answer_file_queries(answers, "retrieval", "bench", "test")
    within = {"qid": "q1", "num_turns": 1, "model_outputs": [["d1"]], "metadata": {"note": "x" * 200}}
    preds = _write(tmp_path / "preds.jsonl", [within])
    assert bulk_files.prediction_frame(preds, queries, False) is None
    frame, _ = prediction_rows(preds, queries, task_type="retrieval")
    assert frame["given_answers"].to_list() == [["d1"]]
    over = {"qid": "q2", "num_turns": 1, "model_outputs": [["é" * 50]]}  # 106 bytes of JSON
    preds = _write(tmp_path / "preds.jsonl", [within, over])
    with pytest.raises(BadInputError, match="preds.jsonl:2: qid 'q2': model_outputs of 106 bytes, over LOFT_MAX_RE"):
        prediction_rows(preds, queries, task_type="retrieval")


def test_an_answer_file_with_blank_lines_ranks_its_queries_as_python_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    answers = tmp_path / "queries.jsonl"
    answers.write_bytes(b"\n".join([json.dumps(RETRIEVAL[0]).encode(), b"", b"  ", json.dumps(RETRIEVAL[1]).encode()]))
    assert bulk_files.write_answer_file(answers, "retrieval", "bench", "test", False, tmp_path / "queries.parquet")
    fast, _ = _both(monkeypatch, answers, None, "retrieval")
    assert fast[0].select("qid", "query_rank").rows() == [("q1", 0), ("q2", 1)]


@pytest.mark.parametrize(
    "line",
    [
        b"{not json",
        b"[1, 2]",
        b'{"qid": "q1", "qid": "q2", "num_turns": 1, "model_outputs": [["d1"]]}',
        b'{"qid": "q1", "num_turns": 1, "model_outputs": [["\\ud83d\\ude00 \\u0000"]]}',
        b'{"qid": "q1", "num_turns": 1, "model_outputs": [[NaN, Infinity]]}',
        b'{"qid": 1, "num_turns": 1, "model_outputs": [["d1"]]}',
        b'{"qid": "q1", "num_turns": 0, "model_outputs": [["d1"]]}',
        b'{"qid": "q1", "num_turns": -1, "model_outputs": [["d1"]]}',
        b'{"qid": "q1", "num_turns": true, "model_outputs": [["d1"]]}',
        b'{"qid": "q1", "num_turns": 1.0, "model_outputs": [["d1"]]}',
        b'{"qid": "q1", "num_turns": 1, "model_outputs": []}',
        b'{"qid": "q1", "num_turns": 1, "model_outputs": "d1"}',
        b'{"qid": "q1", "num_turns": 1, "model_outputs": ["d1 d2"]}',
        b'{"qid": "q1", "num_turns": 1, "model_outputs": [null]}',
        b'{"qid": "q1", "num_turns": 2, "model_outputs": [["d1"]]}',
        b'{"qid": "q1", "num_turns": 2, "model_outputs": [["d1"], ["d2"]]}',
        b'{"qid": "q1", "model_outputs": [["d1"]]}',
        b'{"qid": "q1", "num_turns": 1, "model_outputs": [["d1"]]}\r',
        b"   ",
        b"\xe3\x80\x80\t",
        b' {"qid": "q1", "num_turns": 1, "model_outputs": [["d1"]]}\xe3\x80\x80',
        b' {"qid": "q2", "num_turns": 1, "model_outputs": [["d1"]]}  ',
        b"\xff\xfe",
        b"",
    ],
)
def test_hostile_prediction_lines_read_as_python_reads_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, line: bytes
) -> None:
    answers = _write(tmp_path / "queries.jsonl", RETRIEVAL)
    preds = _write(tmp_path / "preds.jsonl", [{"qid": "q2", "num_turns": 1, "model_outputs": [["d2"]]}, line])
    _both(monkeypatch, answers, preds, "retrieval")


@pytest.mark.parametrize(
    ("task_type", "record"),
    [
        ("retrieval", {"qid": "q", "query_text": "t", "answers": ["d1", 1]}),
        ("retrieval", {"qid": "q", "query_text": "t", "answers": [["d1", 1], "d2"]}),
        ("retrieval", {"qid": "q", "query_text": "t", "answers": [[7, 1]]}),
        ("retrieval", {"qid": True, "query_text": "t", "answers": [["d1", 1]]}),
        ("retrieval", {"query_text": "t", "answers": [["d1", 1]]}),
        ("retrieval", {"qid": "q", "query_text": ["t1", "t2"], "answers": [[["d1", 1]], [["d2", 1]]]}),
        ("retrieval", {"qid": "q", "query_text": "t", "answers": [["d1", 1]], "metadata": ["odd"]}),
        ("rag", {"qid": "q", "query_text": "t", "answers": ["Paris", "\"P\\s\""], "metadata": {"qrels": [["d", 1]]}}),
        ("rag", {"qid": "q", "query_text": "t", "answers": ["Paris"], "metadata": {"qrels": ["d", 1]}}),
        ("rag", {"qid": "q", "query_text": "t", "answers": [1, 2.50, None]}),
        ("rag", {"qid": "q", "query_text": "t", "answers": "Paris"}),
        ("multi_value_rag", {"qid": "q", "query_text": "t", "answers": ["A", "B\u00e9\n"]}),
        ("sql", {"qid": "q", "query_text": "t", "answers": [[1.50, "x"], [12345678901234567890123, None]],
                 "metadata": {"db_id": "db", "sql_query": "SELECT 1", "candidate_pids": ["p1"]}}),
        ("sql", {"qid": "q", "query_text": "t", "answers": [[1]], "metadata": {"db_id": ""}}),
        ("sql", {"qid": "q", "query_text": "t", "answers": ["flat"], "metadata": {"db_id": "db"}}),
        ("sql", {"qid": "q", "query_text": "t", "answers": [[1]], "metadata": {"db_id": 5}}),
        ("sql", {"qid": "q", "query_text": "t", "answers": [[1]], "metadata": {"sql_query": ["a"]}}),
        ("sql", {"qid": "q", "query_text": "t", "answers": [[float("nan"), 1]], "metadata": {"db_id": "db"}}),
        ("sql", {"qid": "q", "query_text": "t", "answers": [["NaN", "-Infinity"]], "metadata": {"db_id": "db"}}),
        ("retrieval", {"qid": "q", "query_text": "t", "answers": [["d1", float("-inf")]]}),
        ("rag", {"qid": "q", "query_text": "t", "answers": ["P"], "metadata": {"qrels": [["d", float("inf")]]}}),
    ],
)  # fmt: skip
def test_answer_files_read_as_python_reads_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, task_type: str, record: dict
) -> None:
    answers = _write(tmp_path / "queries.jsonl", [record, {**record, "qid": "other"}])
    _both(monkeypatch, answers, None, task_type)


def test_declines_turn_count_differences_to_the_python_reader(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    answers = _write(
        tmp_path / "queries.jsonl",
        [{"qid": "c", "query_text": ["a", "b"], "answers": [[["d1", 1]], [["d2", 1]]]}],
    )
    preds = _write(tmp_path / "preds.jsonl", [{"qid": "c", "num_turns": 1, "model_outputs": [["d1"]]}])
    queries = answer_file_queries(answers, "retrieval", "b", "test")
    assert bulk_files.prediction_frame(preds, queries, TASK_TYPES["retrieval"][1]) is None
    fast, _ = _both(monkeypatch, answers, preds, "retrieval")
    assert fast[1][1].fewer_turns == 1


PLAIN_CELLS = [0, -7, 2**63, 2**64 + 1, 12345678901234567890123, 1.5, -0.0, 1e16, 1e15, 1e-7, 0.1, 3.0, 5e-324,
               "Paris", "", " a b ", "None", "1.0", True, False, None]  # fmt: skip
QUOTED_CELLS = ["it's", 'say "x"', "back\\slash", "caf\u00e9", "tab\t", float("nan"), [1], {"k": 1}]


def test_sql_rows_of_plain_values_are_written_without_python(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """SQL golds and predicted rows of numbers, booleans, nulls and plain ASCII text are written
    by DuckDB as Python writes them (str() of each row, json.dumps of the answer); a cell with
    quotes, escapes, non-ASCII text, a nested value or NaN sends its line to Python."""
    golds = [[[cell, PLAIN_CELLS[-1 - i]] for cell in PLAIN_CELLS] for i in range(3)]
    answers = _write(tmp_path / "queries.jsonl", [
        {"qid": f"s{i}", "query_text": "q", "answers": gold, "metadata": {"db_id": "db", "sql_query": "SELECT 1"}}
        for i, gold in enumerate(golds)
    ] + [{"qid": "s3", "query_text": "q", "answers": [QUOTED_CELLS[:5]], "metadata": {"db_id": "db"}}])  # fmt: skip
    preds = _write(tmp_path / "preds.jsonl", [
        {"qid": "s0", "num_turns": 1, "model_outputs": [[*golds[0], "Paris", 2.5, None]]},
        {"qid": "s1", "num_turns": 1, "model_outputs": [list(reversed(golds[1]))]},
        {"qid": "s2", "num_turns": 1, "model_outputs": [[]]},
        {"qid": "s3", "num_turns": 1, "model_outputs": [[QUOTED_CELLS]]},
    ])  # fmt: skip
    golds_to_python = spy(monkeypatch, bulk_files, "_python_gold")
    turns_to_python = spy(monkeypatch, bulk_files, "_python_turn")
    fast, _ = _both(monkeypatch, answers, preds, "sql")
    assert [args[0].startswith('{"qid": "s3"') for args in golds_to_python + turns_to_python] == [True, True]
    frame = fast[1][0]
    assert frame.filter(pl.col("qid") == "s0")["given_answers"].to_list()[0][-3:] == ["Paris", "2.5", "None"]
    assert frame.filter(pl.col("qid") == "s2")["given_answers_json"].to_list() == ["[]"]


def test_duckdb_writes_a_double_as_python_repr_does() -> None:
    """The SQL rendering of floats relies on DuckDB's shortest double text being repr()'s."""
    rng = random.Random(7)
    values = [struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0] for _ in range(20000)]
    values += [rng.uniform(-1, 1) * 10.0 ** rng.randrange(-30, 30) for _ in range(20000)]
    values += [round(rng.uniform(-1e6, 1e6), rng.randrange(8)) for _ in range(20000)]
    values += [0.0, -0.0, 1e16, 1e15, 9999999999999998.0, 1e-4, 1e-5, 5e-324, 1.7976931348623157e308]
    values = [v for v in values if math.isfinite(v)]
    texts = duckdb.sql("select unnest($values)::varchar", params={"values": values}).fetchall()
    assert [text for (text,) in texts] == [repr(v) for v in values]
