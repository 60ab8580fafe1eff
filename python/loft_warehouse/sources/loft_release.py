"""The official LOFT release layout: {task}/{dataset}/{size}/corpus.jsonl + *_queries.jsonl.

Files are taken as released: corpus order is the order shown to the model, splits are the
released splits. Texts are stripped, as upstream's loader does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from loft_warehouse.errors import BadInputError
from loft_warehouse.readers import read_json, read_jsonl, require
from loft_warehouse.sources.base import Document, Query, SourceData

SPLITS = ("few_shot", "dev", "test")


def _pid_list(value: Any, path: Path, row: int) -> list[str]:
    """Gold pids from `[[pid, score], ...]` (or bare pids)."""
    if not isinstance(value, list):
        raise BadInputError(path, row, f"expected a list of [pid, score] pairs, got {value!r}")
    return [str(item[0] if isinstance(item, list | tuple) else item) for item in value]


def _is_multi_turn(record: dict[str, Any]) -> bool:
    return isinstance(record["query_text"], list)


def _query(task: str, record: dict[str, Any], split: str, path: Path, row: int) -> Query:
    require(record, ("qid", "query_text", "answers"), path, row)
    metadata = record.get("metadata") or {}
    turns = record["query_text"] if _is_multi_turn(record) else [record["query_text"]]
    answers = record["answers"] if _is_multi_turn(record) else [record["answers"]]
    if len(answers) != len(turns):
        raise BadInputError(path, row, f"{len(turns)} turns but {len(answers)} answer lists")
    turns = [str(t).strip() for t in turns]
    query = Query(
        qid=str(record["qid"]),
        turns=turns,
        gold=answers,
        source_file=str(path),
        source_row=row,
        release_split=split,
        metadata=metadata,
    )
    if task == "retrieval":
        query.gold_pids = [_pid_list(a, path, row) for a in answers]
        query.gold = query.gold_pids
    elif task == "rag":
        qrels = metadata.get("qrels") or []
        query.gold_pids = [_pid_list(qrels, path, row)] * len(turns)
    elif task == "sql":
        query.db_id = metadata.get("db_id")
        sql = metadata.get("sql_query")
        query.gold_sql = sql if isinstance(sql, list) else [sql] * len(turns)
        query.corpus_id = query.db_id
        query.gold_pids = [[str(p) for p in metadata.get("candidate_pids") or []]] * len(turns)
    if not query.gold_pids:
        query.gold_pids = [[] for _ in turns]
    query.relevant_pids = sorted({pid for pids in query.gold_pids for pid in pids})
    return query


def _load_icl(folder: Path) -> SourceData:
    corpus_path = folder / "corpus.json"
    documents = []
    for row, example in enumerate(read_json(corpus_path), start=1):
        require(example, ("input", "target"), corpus_path, row)
        target = str(example["target"]).strip()
        documents.append(
            Document(
                pid=f"example-{row - 1}",
                text=str(example["input"]).strip(),
                answer=target,
                label=target,
                source_file=str(corpus_path),
                source_row=row,
            )
        )
    queries = []
    for split in SPLITS:
        path = folder / f"{split}_queries.json"
        if not path.exists():
            continue
        for row, example in enumerate(read_json(path), start=1):
            require(example, ("input", "target"), path, row)
            target = str(example["target"]).strip()
            queries.append(
                Query(
                    qid=f"{split}-{row - 1}",
                    turns=[str(example["input"]).strip()],
                    gold=[target.split(" ")],
                    source_file=str(path),
                    source_row=row,
                    release_split=split,
                )
            )
    return SourceData(documents, queries)


def load(task: str, folder: Path) -> SourceData:
    """Read one released dataset at one size."""
    if task == "icl" and (folder / "corpus.json").exists():
        return _load_icl(folder)
    corpus_path = folder / "corpus.jsonl"
    if not corpus_path.exists():
        raise BadInputError(folder, None, "release folder has no corpus.jsonl")
    documents = []
    for row, record in read_jsonl(corpus_path):
        require(record, ("pid", "passage_text"), corpus_path, row)
        metadata = record.get("metadata") or {}
        documents.append(
            Document(
                pid=str(record["pid"]),
                title=str(record.get("title_text") or "").strip(),
                text=str(record["passage_text"]).strip(),
                corpus_id=metadata.get("db_id") if task == "sql" else None,
                source_file=str(corpus_path),
                source_row=row,
            )
        )
    queries = []
    for split in SPLITS:
        path = folder / f"{split}_queries.jsonl"
        if path.exists():
            queries.extend(_query(task, record, split, path, row) for row, record in read_jsonl(path))
    return SourceData(documents, queries)
