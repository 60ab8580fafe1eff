"""HotpotQA dev questions as processed by IRCoT (500 questions, ~10 paragraphs each).

Each question lists its 2 supporting paragraphs and ~8 distractor paragraphs
(`contexts[]`, `is_supporting`). The candidate pool is every paragraph of every question,
deduplicated by (title, text); context ids in the file are positions within a question, so pids
are content digests. Retrieval gold: the supporting paragraphs in file order (at most
spec.max_gold, 2 in LOFT); RAG gold: the answer spans.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from loft_warehouse.errors import BadInputError
from loft_warehouse.readers import read_jsonl, require
from loft_warehouse.registry import DatasetSpec
from loft_warehouse.sources.base import SourceData
from loft_warehouse.sources.passages import PassagePool, passage_query, string_list

RELATIVE_PATH = Path("raw/hotpotqa/dev_subsampled_ircot500.jsonl")


def _supporting(record: dict[str, Any], pool: PassagePool, path: Path, row: int) -> list[str]:
    """Add every paragraph to the pool; return the pids of the supporting ones."""
    contexts = record["contexts"]
    if not isinstance(contexts, list) or not all(isinstance(c, dict) for c in contexts):
        raise BadInputError(path, row, "contexts must be a list of objects")
    supporting = []
    for context in contexts:
        require(context, ("title", "paragraph_text", "is_supporting"), path, row)
        pid = pool.add(str(context["title"]), str(context["paragraph_text"]), row)
        if context["is_supporting"]:
            supporting.append(pid)
    return supporting


def _spans(record: dict[str, Any], path: Path, row: int) -> list[str]:
    objects = record["answers_objects"]
    if not isinstance(objects, list) or not all(isinstance(o, dict) for o in objects):
        raise BadInputError(path, row, "answers_objects must be a list of objects")
    spans = [span for o in objects for span in o.get("spans") or []]
    return list(dict.fromkeys(string_list(spans, "answers_objects[].spans", path, row)))


def load(spec: DatasetSpec, root: Path) -> SourceData:
    """All paragraphs (deduplicated) and all questions; qid = the file's question_id."""
    path = root / RELATIVE_PATH
    pool = PassagePool("hotpotqa", path)
    queries = []
    first_row: dict[str, int] = {}
    for row, record in read_jsonl(path):
        require(record, ("question_id", "question_text", "answers_objects", "contexts"), path, row)
        qid = str(record["question_id"])
        if qid in first_row:
            raise BadInputError(path, row, f"duplicate question_id {qid!r} (first at line {first_row[qid]})")
        first_row[qid] = row
        supporting = _supporting(record, pool, path, row)
        answers = _spans(record, path, row)
        queries.append(passage_query(spec, qid, str(record["question_text"]), supporting, answers, path, row))
    return SourceData(pool.documents, queries)
