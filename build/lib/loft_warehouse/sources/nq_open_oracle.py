"""NaturalQuestions-Open with the gold Wikipedia passage of each question.

Source: Lost in the Middle's `nq-open-oracle.jsonl.gz` (2,655 questions). Each record holds the
passage NQ annotators marked as containing the answer (`ctxs[]` entries with `isgold`). The file
has no other passages, so the candidate pool is the union of all questions' gold passages: a
question's distractors are other questions' gold passages. Passages shared by several questions
become one document. The pool (~2.6k passages) fills 32k and 128k but not 1m; the 1m corpus is
left incomplete rather than padded with invented text.

Retrieval gold: the question's gold passage. RAG gold: the NQ answer aliases.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from loft_warehouse.errors import BadInputError
from loft_warehouse.readers import read_jsonl, require
from loft_warehouse.registry import DatasetSpec
from loft_warehouse.sources.base import SourceData
from loft_warehouse.sources.passages import PassagePool, passage_query, string_list

RELATIVE_PATH = Path("raw/lost_in_the_middle/nq-open-oracle.jsonl.gz")


def _gold_passages(record: dict[str, Any], pool: PassagePool, path: Path, row: int) -> list[str]:
    contexts = record["ctxs"]
    if not isinstance(contexts, list) or not all(isinstance(c, dict) for c in contexts):
        raise BadInputError(path, row, "ctxs must be a list of objects")
    gold = []
    for context in contexts:
        require(context, ("title", "text", "isgold"), path, row)
        if context["isgold"]:
            gold.append(pool.add(str(context["title"]), str(context["text"]), row))
    if not gold:
        raise BadInputError(path, row, "no gold passage (no ctxs entry has isgold true)")
    return gold


def load(spec: DatasetSpec, root: Path) -> SourceData:
    """All gold passages (deduplicated) and all questions; qid = f"nq-{line}"."""
    path = root / RELATIVE_PATH
    pool = PassagePool("nq", path)
    queries = []
    for row, record in read_jsonl(path):
        require(record, ("question", "answers", "ctxs"), path, row)
        gold = _gold_passages(record, pool, path, row)
        answers = string_list(record["answers"], "answers", path, row)
        queries.append(passage_query(spec, f"nq-{row}", str(record["question"]), gold, answers, path, row))
    return SourceData(pool.documents, queries)
