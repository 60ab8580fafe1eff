"""Issue 12, item 4: each kind of bad data stops `dbt build` with the file and line (and the pid
or qid where there is one), before any corpus table is written."""

from __future__ import annotations

import gzip
import io
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from PIL import Image

from tests.mm_release import write_release
from tests.spine.test_bad_input import ARGUANA, _build, _data_root

CORPUS = ARGUANA / "corpus.jsonl"
DEV = ARGUANA / "dev_queries.jsonl"


def _edit_line(path: Path, index: int, change: Callable[[dict], dict]) -> None:
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[index] = json.dumps(change(json.loads(lines[index]))) + "\n"
    path.chmod(0o644)
    path.write_text("".join(lines), encoding="utf-8")


def _pid(root: Path, index: int) -> str:
    return json.loads((root / CORPUS).read_text().splitlines()[index])["pid"]


def non_utf8(root: Path) -> tuple[str, dict]:
    path = root / CORPUS
    data = path.read_bytes()
    start = data.index(b"\n", data.index(b"\n") + 1) + 1  # line 3
    path.chmod(0o644)
    path.write_bytes(data[: start + 2] + b"\xff\xfe" + data[start + 2 :])
    return f"{path}:3: not UTF-8: byte 0xff at column 3", {}


def empty_corpus(root: Path) -> tuple[str, dict]:
    path = root / CORPUS
    path.chmod(0o644)
    path.write_text("\n")
    return f"{path}: empty corpus: no documents", {}


def duplicate_qid(root: Path) -> tuple[str, dict]:
    dev = root / DEV
    first = json.loads(dev.read_text().splitlines()[0])["qid"]
    _edit_line(dev, 3, lambda record: {**record, "qid": first})
    return f"{dev}:4: duplicate qid {first!r} in retrieval/arguana (first at {dev}:1)", {}


def pid_not_a_string(root: Path) -> tuple[str, dict]:
    _edit_line(root / CORPUS, 4, lambda record: {**record, "pid": 12345})
    return f"{root / CORPUS}:5: pid must be a string, got int 12345", {}


def passage_not_a_string(root: Path) -> tuple[str, dict]:
    pid = _pid(root, 5)
    _edit_line(root / CORPUS, 5, lambda record: {**record, "passage_text": ["a", "list"]})
    return f"{root / CORPUS}:6: pid {pid!r}: passage_text must be a string, got list", {}


def null_qid(root: Path) -> tuple[str, dict]:
    _edit_line(root / DEV, 1, lambda record: {**record, "qid": None})
    return f"{root / DEV}:2: qid must be a string or an integer, got NoneType None", {}


def line_over_the_cap(root: Path) -> tuple[str, dict]:
    _edit_line(root / CORPUS, 7, lambda record: {**record, "passage_text": "word " * 5000})
    return f"{root / CORPUS}:8: line longer than 20000 bytes (LOFT_MAX_LINE_BYTES)", {"LOFT_MAX_LINE_BYTES": "20000"}


def passage_over_the_text_budget(root: Path) -> tuple[str, dict]:
    pid = _pid(root, 6)
    _edit_line(root / CORPUS, 6, lambda record: {**record, "passage_text": "word " * 5000})
    message = f"{root / CORPUS}:7: pid {pid!r} of retrieval/arguana: a text of 24999 bytes, over LOFT_MAX_TEXT_BYTES"
    return message, {"LOFT_MAX_TEXT_BYTES": "20000"}


def missing_split_file(root: Path) -> tuple[str, dict]:
    (root / DEV).unlink()
    folder = root / ARGUANA
    return f"{folder}: missing split file(s) dev_queries.jsonl (expected few_shot, dev; an empty file builds", {}


@pytest.mark.parametrize(
    "corrupt",
    [
        non_utf8,
        empty_corpus,
        duplicate_qid,
        pid_not_a_string,
        passage_not_a_string,
        null_qid,
        line_over_the_cap,
        passage_over_the_text_budget,
        missing_split_file,
    ],
)
def test_bad_release_data_stops_the_build_naming_file_and_line(tmp_path: Path, shared_data: Path, corrupt) -> None:
    root = _data_root(tmp_path, shared_data)
    message, env = corrupt(root)
    output, tables = _build(root, "retrieval/arguana", tmp_path, env)
    assert output.count(message) == 1, output[-3000:]
    assert "corpus" not in tables and "stg_documents" not in tables


def test_a_truncated_gzip_source_names_the_file(tmp_path: Path, shared_data: Path) -> None:
    root = tmp_path / "data"
    source = root / "raw/lost_in_the_middle/nq-open-oracle.jsonl.gz"
    source.parent.mkdir(parents=True)
    (root / "tokenizers").symlink_to(shared_data / "tokenizers")
    gold = [{"title": "T", "text": "some text", "hasanswer": True, "isgold": True}]
    lines = [json.dumps({"question": f"q{i}?", "answers": [f"a{i}"], "ctxs": gold}) + "\n" for i in range(4000)]
    whole = gzip.compress("".join(lines).encode())
    source.write_bytes(whole[: len(whole) // 2])
    output, tables = _build(root, "retrieval/nq", tmp_path)
    assert f"{source}:" in output and "truncated or corrupt gzip data" in output, output[-3000:]
    assert "corpus" not in tables


def test_an_image_that_cannot_be_sent_fails_one_model_once(tmp_path: Path, shared_data: Path) -> None:
    """Issue 60 item 9: an RGBA image (which JPEG cannot hold, in LOFT's code too) failed each of
    the seven models that read a size's media, with its message seven times; the others now
    depend on stg_mm_media and are skipped."""
    root = tmp_path / "data"
    write_release(root, ("flickr30k",))
    (root / "tokenizers").symlink_to(shared_data / "tokenizers")
    image = root / "loft/mm/flickr30k/32k/resources/flickr30k-000.png"
    rgba = io.BytesIO()
    Image.new("RGBA", (20, 20), (1, 2, 3, 100)).save(rgba, format="PNG")
    image.write_bytes(rgba.getvalue())
    output, _ = _build(root, "mm/flickr30k", tmp_path)
    assert output.count("cannot write mode RGBA as JPEG") == 1, output[-3000:]
    assert "Failure in model loft_32k__stg_mm_media" in output
