"""What every source loader returns: documents (candidates) and queries, with provenance."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

# LOFT's loader (utils.load_data_from_file) deletes these from every title and passage of a
# corpus.jsonl it reads, after stripping them, so its prompts never show them. The release and
# multimodal loaders apply it to those files; the raw builders (MS MARCO, the passage pools, the
# Spider and SParC tables) to the corpus lines they stand in for. ICL corpora are read otherwise.
LOFT_DELETED_PHRASES = ("childhood abuse",)


def as_loft_loads(text: str) -> str:
    """A title or passage of a release file as LOFT's loader hands it to its prompts: stripped,
    then with LOFT_DELETED_PHRASES removed (what is left around them is kept, spaces and all)."""
    text = text.strip()
    for phrase in LOFT_DELETED_PHRASES:
        text = text.replace(phrase, "")
    return text


@dataclass
class Document:
    """One candidate: a passage, a many-shot example (answer = its target) or a SQL table.

    corpus_id groups documents that form one corpus: the dataset for shared corpora, the
    database id for SQL (each query sees only its own database). media are the sha256 of the
    document's media in the order they are shown (sources.loft_mm).
    """

    pid: str
    text: str
    source_file: str
    source_row: int
    title: str | None = None
    answer: str | None = None
    label: str | None = None
    corpus_id: str | None = None
    draw_rank: int | None = None
    media: tuple[str, ...] = ()


@dataclass
class Query:
    """One query with its turns (a single-turn query has one).

    gold[t] is the task's gold for turn t (retrieval: pids; rag: answer strings; sql: result
    rows or None until executed; icl: the target). gold_pids[t] are the gold documents kept
    (capped at max_gold); relevant_pids are all documents relevant to the query, which are
    never drawn as random fillers. gold_sql[t] is the gold SQL for turn t. upstream_qid is the
    id LOFT's evaluator knows the query by when it differs from qid (BBH's native layout:
    the index in its split file). media are the sha256 of a multimodal query's media, in order.
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
    upstream_qid: str | None = None
    media: tuple[str, ...] = ()


@dataclass(frozen=True)
class CorpusRequest:
    """What a per-question corpus builder gets from staging: the questions of this size's splits,
    the content-token budget of one corpus, the seed, and the budget's token count of a document."""

    queries: list[Query]
    budget: int
    seed: int
    n_tokens: Callable[[Document], int]


@dataclass
class SourceData:
    """A loaded dataset, before splits and corpus selection.

    Datasets whose every question reads a corpus of its own (the positional studies) set
    corpus_for: staging calls it with the questions the size's splits take and lands what it
    returns as those corpora (corpus_id = qid; distractors carry their draw_rank).
    """

    documents: list[Document]
    queries: list[Query]
    corpus_for: Callable[[CorpusRequest], list[Document]] | None = None
