"""The line-numbered readers refuse what JSON is not, naming file and line."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from loft_warehouse.errors import BadInputError
from loft_warehouse.readers import lines_within, read_json, read_jsonl


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_are_refused_with_their_line(tmp_path: Path, constant: str) -> None:
    path = tmp_path / "test_queries.jsonl"
    path.write_text('{"qid": "q1", "answers": [["d1", 1]]}\n\n{"qid": "q2", "answers": [["d2", ' + constant + "]]}\n")
    with pytest.raises(BadInputError, match=rf"test_queries.jsonl:3: malformed JSON \({constant} is not a JSON"):
        list(read_jsonl(path))
    whole = tmp_path / "tables.json"
    whole.write_text('[{"db_id": "a", "score": ' + constant + "}]")
    with pytest.raises(BadInputError, match=rf"tables.json: malformed JSON \({constant} is not a JSON value\)"):
        read_json(whole)


def test_numbers_and_strings_named_like_them_still_read(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_text('{"answers": ["NaN", 1e308, -0.5]}\n')
    assert list(read_jsonl(path)) == [(1, {"answers": ["NaN", 1e308, -0.5]})]


def test_model_outputs_may_hold_nan_as_python_reads_them(tmp_path: Path) -> None:
    path = tmp_path / "preds.jsonl"
    path.write_text('{"qid": "q1", "model_outputs": [[NaN, Infinity]]}\n')
    [(line, record)] = list(read_jsonl(path, allow_nan=True))
    assert line == 1 and str(record["model_outputs"]) == "[[nan, inf]]"


@pytest.mark.parametrize(
    ("content", "cap", "within"),
    [
        (b"", 1, True),
        (b"abc\nde\n", 3, True),
        (b"abc\nde\n", 2, False),
        (b"abc", 3, True),
        (b"ab\nabcd", 3, False),  # the last line has no newline
        (b"\n\n\n", 1, True),
        (b"abc\r\n", 3, False),  # a CR is part of its line, as read_lines counts it
    ],
)
def test_lines_within_a_cap(tmp_path: Path, content: bytes, cap: int, within: bool) -> None:
    path = tmp_path / "f"
    path.write_bytes(content)
    for block_bytes in (1, 2, 3, 1024):
        assert lines_within(path, cap, block_bytes) is within


def test_lines_within_agrees_with_splitting_across_blocks(tmp_path: Path) -> None:
    rng = random.Random(7)
    path = tmp_path / "f"
    for _ in range(300):
        content = bytes(rng.choice(b"ab\n") for _ in range(rng.randrange(0, 40)))
        path.write_bytes(content)
        cap = rng.randrange(1, 12)
        expected = max(len(line) for line in content.split(b"\n")) <= cap
        assert lines_within(path, cap, rng.randrange(1, 9)) is expected, (content, cap)


def test_json_nested_too_deeply_names_its_file_and_line(tmp_path: Path) -> None:
    """Issue 60 item 9: Python's JSON reader raised RecursionError, a traceback with no file or line."""
    deep = "[" * 50_000 + "]" * 50_000
    lines = tmp_path / "preds.jsonl"
    lines.write_text('{"qid": "a"}\n{"qid": "b", "model_outputs": ' + deep + "}\n")
    with pytest.raises(BadInputError, match=r"preds.jsonl:2: JSON nested too deeply to read"):
        list(read_jsonl(lines, allow_nan=True))
    whole = tmp_path / "doc.json"
    whole.write_text(deep)
    with pytest.raises(BadInputError, match=r"doc.json: JSON nested too deeply to read"):
        read_json(whole)


def test_lines_end_where_python_text_files_end_them(tmp_path: Path) -> None:
    """Issue 60 item 8: LOFT iterates open(path), so a lone CR ends a line as LF and CRLF do,
    and a U+2028 inside a string does not; a CR-only file was one line ('Extra data')."""
    path = tmp_path / "f.jsonl"
    path.write_bytes(b'{"a": 1}\r{"a": 2}\r\n{"a": 3}\n\r{"a": "x\xe2\x80\xa8y"}\r')
    assert list(read_jsonl(path)) == [(1, {"a": 1}), (2, {"a": 2}), (3, {"a": 3}), (5, {"a": "x\u2028y"})]
