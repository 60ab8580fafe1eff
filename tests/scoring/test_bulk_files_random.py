"""Seeded random answer and prediction files, from plain to hostile, read by the column-wise reader
and by the Python reader (test_bulk_files._both): the two give the same frames and summary, or fail
with the same message.

The hand-written cases in test_bulk_files.py pin known traps; these files mix them (padding,
Unicode whitespace, escapes, surrogates, huge numbers, nested values, duplicate and stray qids,
wrong turn counts, repeated keys, blank lines) in combinations nobody wrote down."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from loft_warehouse.registry import ID_TASKS
from loft_warehouse.scoring import bulk_files
from loft_warehouse.scoring.upstream_files import TASK_TYPES, answer_file_queries
from tests.scoring.test_bulk_files import _both

# One character each: whitespace Python strips and SQL does not, line breaks, control characters,
# lone surrogates (written with surrogatepass), an astral character and brackets.
HOSTILE_TEXT = list("\t\u3000\u00a0\u2028\u0085\n\r\x1f\x00\u200b\ud800\udc00\U0001f600[]")
PLAIN_TEXT = ["d1", "d2", "doc", " ", "é", "Ω", '"', "\\", "a,b", "'", "None", "1.0"]
NUMBERS = [0, -7, 2**63, 2**64 + 1, -(2**70), 12345678901234567890123, 1.5, -0.0, 1e16, 1e-7, 2.5e300, 0.1, 3.0,
           1e15, 123456.789, 5e-324, float("nan"), float("-inf")]  # fmt: skip
QIDS = ["q1", "q2", "q3", "q4", "q 1", "3", "stray"]
SEEDS = range(120)


class Generator:
    """Lines for one file pair; `hostility` (0 to 1) scales how often each trap is set."""

    def __init__(self, seed: int) -> None:
        self.random = random.Random(seed)
        self.hostility = self.random.choice([0.0, 0.02, 0.1, 0.3, 1.0])

    def chance(self, p: float) -> bool:
        return self.random.random() < p * self.hostility

    def text(self) -> str:
        parts = PLAIN_TEXT + HOSTILE_TEXT if self.chance(1.0) else PLAIN_TEXT
        return "".join(self.random.choice(parts) for _ in range(self.random.randint(0, 4)))

    def scalar(self) -> Any:
        if self.random.random() < 0.5 or not self.chance(1.0):
            return self.text()
        return self.random.choice([*NUMBERS, True, False, None])

    def value(self, depth: int = 0) -> Any:
        if depth < 2 and self.chance(0.1):
            return [self.value(depth + 1) for _ in range(self.random.randint(0, 3))]
        if depth < 2 and self.chance(0.1):
            return {self.text() or "k": self.value(depth + 1)}
        return self.scalar()

    def dumps(self, record: dict[str, Any]) -> str:
        line = json.dumps(record, ensure_ascii=self.random.random() < 0.5)
        if self.chance(0.1):
            line = line.replace(", ", ",").replace(": ", ":")
        if self.chance(0.02):
            line = line[:-1] + ', "qid": "q1"}'
        before = self.random.choice([" ", "\t", "\u3000"]) if self.chance(0.2) else ""
        after = self.random.choice(["  ", "\r"]) if self.chance(0.1) else ""
        return before + line + after

    def answer_line(self, task: str, qid: str) -> str:
        pid = lambda: self.random.choice(["d1", "d2", "d3", " d1", "dé", self.text()])  # noqa: E731
        if task in ID_TASKS:
            answers: Any = [[pid(), self.random.choice([0, 1, 2])] for _ in range(self.random.randint(0, 3))]
        elif task == "rag":
            answers = [self.random.choice(["Paris", " B ", self.text(), self.scalar()]) for _ in range(3)]
        else:
            width = self.random.randint(1, 3)
            answers = [[self.scalar() for _ in range(width)] for _ in range(self.random.randint(1, 3))]
        record: dict[str, Any] = {"qid": 3 if self.chance(0.03) else qid, "query_text": self.text() or "t"}
        if not self.chance(0.03):
            record["answers"] = answers
        if self.random.random() < 0.7:
            metadata: dict[str, Any] = {}
            if task == "sql":
                metadata = {"db_id": self.random.choice(["db", "", None]), "sql_query": "SELECT 1"}
            elif self.random.random() < 0.8:
                metadata["qrels"] = [[pid(), 1] for _ in range(self.random.randint(0, 2))]
            record["metadata"] = metadata
        return self.dumps(record)

    def prediction_line(self, task: str) -> str:
        turns = 2 if self.chance(0.2) else 1
        outputs = []
        for _ in range(turns + 1 if self.chance(0.05) else turns):
            if task == "sql" or self.chance(0.2):
                outputs.append([self.value() for _ in range(self.random.randint(0, 4))])
            else:
                outputs.append([self.random.choice(["d1", "d2", " d1 ", "dé", self.text()]) for _ in range(3)])
        record: dict[str, Any] = {
            "qid": self.random.choice(QIDS),
            "num_turns": self.random.choice([0, 2, True, 1.0, -1]) if self.chance(0.05) else turns,
            "model_outputs": "d1" if self.chance(0.02) else outputs,
        }
        if self.random.random() < 0.2:
            record["metadata"] = {}
        return self.dumps(record)


def _files(seed: int, folder: Path) -> tuple[Path, Path, str]:
    """The answer file, prediction file and task type of one seed, written into folder."""
    generator = Generator(seed)
    task_type = generator.random.choice(list(TASK_TYPES))
    task = TASK_TYPES[task_type][0]
    qids = ["q1", "q2", "q3", "q4", "q 1"][: generator.random.randint(1, 5)]
    lines = [generator.prediction_line(task) for _ in range(generator.random.randint(1, 8))]
    if generator.chance(0.1):
        lines.insert(generator.random.randint(0, len(lines)), generator.random.choice(["", "  ", "\u3000", "\t"]))
    answers, predictions = folder / f"queries-{seed}.jsonl", folder / f"preds-{seed}.jsonl"
    answers.write_text("".join(generator.answer_line(task, q) + "\n" for q in qids), "utf-8", "surrogatepass")
    predictions.write_text("\n".join(lines) + "\n", "utf-8", "surrogatepass")
    return answers, predictions, task_type


@pytest.mark.parametrize("seed", SEEDS)
def test_random_files_read_as_python_reads_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    answers, predictions, task_type = _files(seed, tmp_path)
    _both(monkeypatch, answers, predictions, task_type)


def test_the_random_files_take_the_fast_path_often(tmp_path: Path) -> None:
    """The comparison above tests the column-wise reader only where it takes the file."""
    answers_taken = predictions_taken = 0
    for seed in SEEDS:
        answers, predictions, task_type = _files(seed, tmp_path)
        task, multi_answer = TASK_TYPES[task_type]
        if bulk_files.write_answer_file(answers, task, "bench", "test", multi_answer, tmp_path / "queries.parquet"):
            answers_taken += 1
            queries = answer_file_queries(answers, task_type, "bench", "test")
            predictions_taken += bulk_files.prediction_frame(predictions, queries, multi_answer) is not None
    assert answers_taken >= len(SEEDS) * 0.5, answers_taken
    assert predictions_taken >= len(SEEDS) * 0.35, predictions_taken
