"""What every source loader returns: documents (candidates) and queries, with provenance."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Document:
    """One candidate: a passage, a many-shot example (answer = its target) or a SQL table.

    corpus_id groups documents that form one corpus: the dataset for shared corpora, the
    database id for SQL (each query sees only its own database).
    """

    pid: str
    text: str
    source_file: str
    source_row: int
    title: str | None = None
    answer: str | None = None
    label: str | None = None
    corpus_id: str | None = None


@dataclass
class Query:
    """One query with its turns (a single-turn query has one).

    gold[t] is the task's gold for turn t (retrieval: pids; rag: answer strings; sql: result
    rows or None until executed; icl: the target). gold_pids[t] are the gold documents kept
    (capped at max_gold); relevant_pids are all documents relevant to the query, which are
    never drawn as random fillers. gold_sql[t] is the gold SQL for turn t.
    """

    qid: str
    turns: list[str]
    gold: list[Any]
    source_file: str
    source_row: int
    gold_pids: list[list[str]] = field(default_factory=list)
    relevant_pids: list[str] = field(default_factory=list)
    corpus_id: str | None = None
    db_id: str | None = None
    gold_sql: list[str] | None = None
    release_split: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass
class SourceData:
    """A loaded dataset, before splits and corpus selection."""

    documents: list[Document]
    queries: list[Query]
