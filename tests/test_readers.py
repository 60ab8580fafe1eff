"""The line-numbered readers refuse what JSON is not, naming file and line."""

from __future__ import annotations

from pathlib import Path

import pytest

from loft_warehouse.errors import BadInputError
from loft_warehouse.readers import read_json, read_jsonl


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
