"""Bad input stops `dbt build` with the file and line, and leaves no corpus table behind."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import duckdb
import pytest

from tests.conftest import run_dbt

ARGUANA = Path("loft/retrieval/arguana/32k")


def _data_root(tmp_path: Path, shared_data: Path) -> Path:
    root = tmp_path / "data"
    shutil.copytree(shared_data / ARGUANA, root / ARGUANA)
    (root / "tokenizers").symlink_to(shared_data / "tokenizers")
    return root


def _build(root: Path, datasets: str, tmp_path: Path, env: dict[str, str] | None = None) -> tuple[str, list[str]]:
    database = tmp_path / "loft.duckdb"
    result = run_dbt(
        ["build", "--select", "loft_32k"],
        database,
        env={"LOFT_DATA_DIR": str(root), "LOFT_DATASETS": datasets, **(env or {})},
    )
    assert result.returncode != 0, "the build should have failed"
    # Issue 33 item 8: the data error once, as the failing model's one line, no traceback.
    assert "Traceback" not in result.stdout, result.stdout[-3000:]
    assert result.stdout.count("Runtime Error in model") == 1, result.stdout[-3000:]
    tables = []
    if database.exists():
        with duckdb.connect(str(database), read_only=True) as con:
            rows = con.sql(
                "select table_name from information_schema.tables where table_schema = 'loft_32k'"
            ).fetchall()
        tables = [name for (name,) in rows]
    return result.stdout, tables


def _rewrite_lines(path: Path, change) -> None:
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    path.chmod(0o644)
    path.write_text("".join(change(lines)), encoding="utf-8")


def test_malformed_jsonl_line_names_file_and_line(tmp_path: Path, shared_data: Path) -> None:
    root = _data_root(tmp_path, shared_data)
    corpus = root / ARGUANA / "corpus.jsonl"
    _rewrite_lines(corpus, lambda lines: lines[:6] + ['{"pid": "broken", "title_text": \n'] + lines[7:])
    output, tables = _build(root, "retrieval/arguana", tmp_path)
    assert f"{corpus}:7: malformed JSON" in output
    assert "corpus" not in tables and "stg_documents" not in tables


def test_duplicate_pid_names_both_rows(tmp_path: Path, shared_data: Path) -> None:
    root = _data_root(tmp_path, shared_data)
    corpus = root / ARGUANA / "corpus.jsonl"
    _rewrite_lines(corpus, lambda lines: [*lines, lines[2]])
    output, tables = _build(root, "retrieval/arguana", tmp_path)
    assert f"{corpus}:124: duplicate pid" in output
    assert f"first at {corpus}:3" in output
    assert "corpus" not in tables


def test_gold_pointing_at_missing_pid_names_the_query_row(tmp_path: Path, shared_data: Path) -> None:
    root = _data_root(tmp_path, shared_data)
    dev = root / ARGUANA / "dev_queries.jsonl"

    def dangle(lines: list[str]) -> list[str]:
        record = json.loads(lines[1])
        record["answers"] = [["no-such-pid", 1]]
        return [lines[0], json.dumps(record) + "\n", *lines[2:]]

    _rewrite_lines(dev, dangle)
    output, tables = _build(root, "retrieval/arguana", tmp_path)
    assert f"{dev}:2:" in output and "'no-such-pid'" in output
    assert "corpus" not in tables


def test_gold_over_budget_stops_the_build(tmp_path: Path, shared_data: Path) -> None:
    root = tmp_path / "data"
    source = root / "raw/lost_in_the_middle/nq-open-oracle.jsonl.gz"
    source.parent.mkdir(parents=True)
    (root / "tokenizers").symlink_to(shared_data / "tokenizers")
    words = " ".join(f"word{i}" for i in range(1500))
    with gzip.open(source, "wt", encoding="utf-8") as handle:
        for i in range(30):
            passage = {"title": f"T{i}", "text": f"{i} {words}", "hasanswer": True, "isgold": True}
            handle.write(json.dumps({"question": f"q{i}?", "answers": [f"a{i}"], "ctxs": [passage]}) + "\n")
    output, tables = _build(root, "retrieval/nq", tmp_path)
    assert "retrieval/nq at 32k: the 15 gold documents of the selected queries alone need" in output
    assert str(source) in output
    assert "corpus" not in tables and "int_corpus_draw" not in tables


@pytest.fixture(autouse=True)
def _needs_dbt(shared_data: Path) -> None:
    """All tests here run dbt on copies of the shared data."""
