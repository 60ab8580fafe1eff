"""The official LOFT release layout: {task}/{dataset}/{size}/corpus.jsonl + *_queries.jsonl.

Files are taken as released: corpus order is the order shown to the model, splits are the
released splits. Texts of the JSON lines layout are stripped, as upstream's loader does; BBH's
JSON arrays (ICL) are read as they are, as its BBH loader does.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from loft_warehouse.answers.parse import to_json_value
from loft_warehouse.errors import BadInputError
from loft_warehouse.readers import holds_non_finite, read_json, read_jsonl, require
from loft_warehouse.registry import ID_TASKS
from loft_warehouse.sources.base import Document, Query, SourceData, as_loft_loads

SPLITS = ("few_shot", "dev", "test")
# The split LOFT scores: an empty file for it is refused (an empty dev or few-shot file builds
# the dataset without that split).
EVALUATED_SPLIT = "test"


def _is_pair(value: Any) -> bool:
    """A `[pid, score]` gold entry as upstream's extract_gold_passage_ids takes it."""
    return (
        isinstance(value, list | tuple)
        and len(value) == 2
        and isinstance(value[0], str)
        and isinstance(value[1], int)
        and not isinstance(value[1], bool)
    )


def pid_list(value: Any, path: Path, row: int) -> list[str]:
    """Gold pids of one turn: `[[pid, score], ...]` (or bare pids), or a single `[pid, score]`
    pair (a multi-turn turn in the TopiOCQA layout, where the score is not a second pid)."""
    if _is_pair(value):
        return [value[0]]
    if not isinstance(value, list):
        raise BadInputError(path, row, f"expected a list of [pid, score] pairs, got {value!r}")
    return [str(item[0] if isinstance(item, list | tuple) else item) for item in value]


def _is_multi_turn(record: dict[str, Any]) -> bool:
    return isinstance(record["query_text"], list)


def _per_turn(qrels: Any, n_turns: int) -> bool:
    """Multi-turn RAG qrels in LOFT's TopiOCQA layout: one `[[pid, score], ...]` list per turn
    (LOFT's prompt code takes the gold pids of turn t from qrels[t])."""
    return (
        isinstance(qrels, list)
        and len(qrels) == n_turns
        and all(isinstance(turn, list) and turn and all(isinstance(pair, list) for pair in turn) for turn in qrels)
    )


def _sql_rows(value: Any, path: Path, row: int, qid: str, turn: int) -> list[list[Any]]:
    """A turn's SQL gold must be result rows (a list of lists); upstream iterates a flat list's
    strings character by character, so a flat gold stops the load instead. A NaN or infinite
    cell is kept as its text ('nan', 'inf', '-inf'): LOFT's SQL normalisation formats the float
    and reads the text to the same string, and JSON, where the gold is stored, has no NaN."""
    if not isinstance(value, list) or not all(isinstance(item, list) for item in value):
        raise BadInputError(
            path, row, f"qid {qid!r} turn {turn}: SQL gold must be a list of rows (lists), got {value!r}"
        )
    return to_json_value(value)


def read_answer_lines(path: Path, task: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """The lines of a *_queries.jsonl. LOFT's loader reads them with Python's json, which takes
    NaN and Infinity; its SQL scoring formats them as numbers, so SQL gold rows may hold them.
    Anywhere else they are refused (LOFT's retrieval and RAG scoring stop on them)."""
    for row, record in read_jsonl(path, allow_nan=task == "sql"):
        if task == "sql" and holds_non_finite({k: v for k, v in record.items() if k != "answers"}):
            raise BadInputError(path, row, "malformed JSON (NaN or Infinity outside the SQL gold rows)")
        yield row, record


_TYPE_NAMES = {str: "a string", int: "an integer", type(None): "null"}


def typed_field(record: dict[str, Any], field: str, types: tuple[type, ...], path: Path, row: int) -> None:
    """A field of the wrong JSON type is named with its line, not coerced with str()."""
    value = record.get(field)
    if not isinstance(value, types) or isinstance(value, bool):
        expected = " or ".join(_TYPE_NAMES[t] for t in types)
        pid = f"pid {record['pid']!r}: " if field != "pid" and isinstance(record.get("pid"), str) else ""
        raise BadInputError(path, row, f"{pid}{field} must be {expected}, got {type(value).__name__} {value!r:.60}")


def check_corpus_row(record: dict[str, Any], path: Path, row: int) -> None:
    """A corpus.jsonl row has a non-empty string pid, a string passage_text and a string (or
    null) title_text; anything else is named with its line."""
    require(record, ("pid", "passage_text"), path, row)
    typed_field(record, "pid", (str,), path, row)
    if not record["pid"].strip():
        raise BadInputError(path, row, "empty pid: a document needs an ID to be shown and scored")
    typed_field(record, "passage_text", (str,), path, row)
    typed_field(record, "title_text", (str, type(None)), path, row)


def query_from_record(task: str, record: dict[str, Any], split: str, path: Path, row: int) -> Query:
    """One line of a release *_queries.jsonl (LOFT's answer file)."""
    require(record, ("qid", "query_text", "answers"), path, row)
    typed_field(record, "qid", (str, int), path, row)
    metadata = record.get("metadata") or {}
    qid = str(record["qid"])
    turns = record["query_text"] if _is_multi_turn(record) else [record["query_text"]]
    # ICL answers are one list of acceptable targets per turn, even for a single turn.
    per_turn = _is_multi_turn(record) or task == "icl"
    answers = record["answers"] if per_turn else [record["answers"]]
    if not isinstance(answers, list) or len(answers) != len(turns):
        raise BadInputError(path, row, f"qid {qid!r}: {len(turns)} turns but answers {record['answers']!r}")
    # LOFT's loader strips a single-turn query's text only (a multi-turn one is a list, kept as is).
    turns = [str(t) for t in turns] if _is_multi_turn(record) else [str(turns[0]).strip()]
    query = Query(
        qid=qid,
        turns=turns,
        gold=answers,
        source_file=str(path),
        source_row=row,
        release_split=split,
        metadata=metadata,
    )
    if task in ID_TASKS:
        query.gold_pids = [pid_list(a, path, row) for a in answers]
        query.gold = query.gold_pids
    elif task == "rag":
        qrels = metadata.get("qrels") or []
        if _is_multi_turn(record) and _per_turn(qrels, len(turns)):
            query.gold_pids = [pid_list(turn_qrels, path, row) for turn_qrels in qrels]
            # One answer string per turn, which LOFT's prompt code wraps as that turn's answers.
            query.gold = [[answer] if isinstance(answer, str) else answer for answer in answers]
        else:
            query.gold_pids = [pid_list(qrels, path, row)] * len(turns)
    elif task == "sql":
        query.gold = [_sql_rows(a, path, row, qid, t) for t, a in enumerate(answers)]
        query.db_id = metadata.get("db_id")
        sql: Any = metadata.get("sql_query")
        query.gold_sql = sql if isinstance(sql, list) else [sql] * len(turns)
        query.corpus_id = query.db_id
        query.gold_pids = [[str(p) for p in metadata.get("candidate_pids") or []]] * len(turns)
    if not query.gold_pids:
        query.gold_pids = [[] for _ in turns]
    query.relevant_pids = sorted({pid for pids in query.gold_pids for pid in pids})
    return query


def bbh_queries(path: Path, split: str) -> list[Query]:
    """BBH's native split file (a JSON array of {input, target}): upstream knows each query by
    its index and takes target.split(" ") as the acceptable answers."""
    queries = []
    for row, example in enumerate(read_json(path), start=1):
        require(example, ("input", "target"), path, row)
        queries.append(
            Query(
                qid=f"{split}-{row - 1}",
                upstream_qid=str(row - 1),
                turns=[str(example["input"])],
                gold=[str(example["target"]).split(" ")],
                source_file=str(path),
                source_row=row,
                release_split=split,
            )
        )
    return queries


def _load_icl(folder: Path, splits: tuple[str, ...] | None) -> SourceData:
    corpus_path = folder / "corpus.json"
    split_files = query_files(folder, splits, ".json")
    documents = []
    for row, example in enumerate(read_json(corpus_path), start=1):
        require(example, ("input", "target"), corpus_path, row)
        target = str(example["target"])
        documents.append(
            Document(
                pid=f"example-{row - 1}",
                text=str(example["input"]),
                answer=target,
                label=target.strip(),
                source_file=str(corpus_path),
                source_row=row,
            )
        )
    if not documents:
        raise BadInputError(corpus_path, None, "empty corpus: no examples")
    queries: list[Query] = []
    for split, path in split_files:
        queries.extend(bbh_queries(path, split))
    return SourceData(documents, queries)


def query_files(folder: Path, splits: tuple[str, ...] | None, suffix: str) -> list[tuple[str, Path]]:
    """The query file of each expected split (a missing one is an error naming it); with no
    expectation, the files of LOFT's splits that are there."""
    files = [(split, folder / f"{split}_queries{suffix}") for split in (splits or SPLITS)]
    missing = [path.name for _, path in files if not path.is_file()]
    if splits is None:
        return [(split, path) for split, path in files if path.name not in missing]
    if missing:
        raise BadInputError(
            folder,
            None,
            f"missing split file(s) {', '.join(missing)} (expected {', '.join(splits)}; "
            "an empty file builds the dataset without that split)",
        )
    return files


def load(task: str, folder: Path, splits: tuple[str, ...] | None = None) -> SourceData:
    """Read one released dataset at one size; `splits` are the query files it must have (the
    build passes the splits the size takes; None reads whichever are there)."""
    if task == "icl" and (folder / "corpus.json").exists():
        return _load_icl(folder, splits)
    corpus_path = folder / "corpus.jsonl"
    if not corpus_path.exists():
        raise BadInputError(folder, None, "release folder has no corpus.jsonl")
    split_files = query_files(folder, splits, ".jsonl")
    documents = []
    for row, record in read_jsonl(corpus_path):
        check_corpus_row(record, corpus_path, row)
        metadata = record.get("metadata") or {}
        documents.append(
            Document(
                pid=str(record["pid"]),
                title=as_loft_loads(str(record.get("title_text") or "")),
                text=as_loft_loads(str(record["passage_text"])),
                corpus_id=metadata.get("db_id") if task == "sql" else None,
                source_file=str(corpus_path),
                source_row=row,
            )
        )
    if not documents:
        raise BadInputError(corpus_path, None, "empty corpus: no documents")
    queries: list[Query] = []
    for split, path in split_files:
        read = [query_from_record(task, record, split, path, row) for row, record in read_answer_lines(path, task)]
        if split == EVALUATED_SPLIT and not read:
            raise BadInputError(path, None, "empty test split: the dataset would have no query to score")
        queries.extend(read)
    return SourceData(documents, queries)
