"""The prompt renderer's inputs, read from the `corpus` and `queries` marts of one size.

One Collection is what one prompt prefix is built from: a corpus (documents in prompt order)
with the few-shot queries grounded in it and the dev/test queries asked against it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from loft_warehouse.errors import BadInputError

CORPUS_COLUMNS = ("task", "dataset", "corpus_id", "doc_id", "pid", "title", "text", "answer", "min_context")
QUERY_COLUMNS = (
    "task",
    "dataset",
    "corpus_id",
    "split",
    "qid",
    "turn",
    "n_turns",
    "query_text",
    "gold",
    "gold_pids",
)
EVALUATED_SPLITS = ("dev", "test")


@dataclass(frozen=True)
class Doc:
    """A corpus candidate as the prompt shows it; answer is an ICL example's target."""

    pid: str
    text: str
    title: str | None = None
    answer: str | None = None
    min_context: str | None = None
    n_tokens: int = 0


@dataclass(frozen=True)
class Turn:
    """One turn of a query: its text, its gold (queries.gold as text and parsed) and its gold
    documents."""

    text: str
    gold_json: str | None
    gold: Any
    gold_pids: tuple[str, ...] = ()


@dataclass(frozen=True)
class Query:
    """A query with all its turns (one for single-turn datasets)."""

    qid: str
    split: str
    turns: tuple[Turn, ...]

    @property
    def gold_pids(self) -> list[str]:
        """Gold documents of every turn, first occurrence order."""
        return list(dict.fromkeys(pid for turn in self.turns for pid in turn.gold_pids))


@dataclass
class Collection:
    """Everything one (task, dataset, corpus_id) prompt prefix is made of."""

    task: str
    dataset: str
    corpus_id: str
    has_title: bool
    docs: list[Doc]
    few_shot: list[Query] = field(default_factory=list)
    evaluated: list[Query] = field(default_factory=list)
    contexts: tuple[str, ...] = ()
    source: str = ""


def _require(frame: pl.DataFrame, columns: tuple[str, ...], name: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise BadInputError(name, None, f"missing column(s) {', '.join(missing)}")


def _gold(raw: str | None, where: str, qid: str, turn: int) -> Any:
    if raw is None:
        return None
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        raise BadInputError(where, f"qid={qid} turn={turn}", f"gold is not JSON ({exc.msg})") from exc


def _queries(rows: list[dict[str, Any]], where: str) -> list[Query]:
    """Group turn rows into queries, checking every turn 0..n_turns-1 is present once."""
    by_qid: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_qid.setdefault(row["qid"], []).append(row)
    queries = []
    for qid, turns in by_qid.items():
        turns.sort(key=lambda r: r["turn"])
        n_turns = turns[0]["n_turns"]
        if [r["turn"] for r in turns] != list(range(n_turns)):
            raise BadInputError(where, f"qid={qid}", f"turns {[r['turn'] for r in turns]} but n_turns={n_turns}")
        queries.append(
            Query(
                qid=qid,
                split=turns[0]["split"],
                turns=tuple(
                    Turn(
                        text=r["query_text"],
                        gold_json=r["gold"],
                        gold=_gold(r["gold"], where, qid, r["turn"]),
                        gold_pids=tuple(r["gold_pids"] or ()),
                    )
                    for r in turns
                ),
            )
        )
    return queries


def collections(
    corpus: pl.DataFrame,
    queries: pl.DataFrame,
    datasets: pl.DataFrame,
    tasks: tuple[str, ...] = ("retrieval", "rag", "icl", "sql", "litm", "rr"),
) -> Iterator[Collection]:
    """One Collection per (task, dataset, corpus_id) of the given tasks; a SQL database that
    no dev/test query reads (the few-shot query's: the SQL prompt brings its own worked
    example) yields none.

    Documents come in doc_id order; few-shot queries in query_rank order (the order the
    spine drew them, so few_shot_k keeps the first k); dev/test queries likewise.
    """
    _require(corpus, CORPUS_COLUMNS, "corpus")
    _require(queries, (*QUERY_COLUMNS, "query_rank"), "queries")
    _require(datasets, ("task", "dataset", "has_title"), "stg_datasets")
    info = {(r["task"], r["dataset"]): r for r in datasets.iter_rows(named=True)}
    corpus = corpus.filter(pl.col("task").is_in(tasks)).sort("task", "dataset", "corpus_id", "doc_id")
    queries = queries.filter(pl.col("task").is_in(tasks)).sort("query_rank", "qid", "turn")
    grouped_queries = (
        queries.partition_by(["task", "dataset", "corpus_id"], as_dict=True, maintain_order=True)
        if queries.height
        else {}
    )
    corpus_groups = (
        corpus.partition_by(["task", "dataset", "corpus_id"], as_dict=True, maintain_order=True)
        if corpus.height
        else {}
    )
    orphans = sorted("/".join(key) for key in set(grouped_queries) - set(corpus_groups))
    if orphans:
        raise BadInputError("queries", None, f"queries of corpora with no documents: {orphans}")
    for key, docs in corpus_groups.items():
        task, dataset, corpus_id = key
        where = f"corpus {task}/{dataset}/{corpus_id}"
        if (task, dataset) not in info:
            raise BadInputError("stg_datasets", None, f"no row for {task}/{dataset}")
        ids = docs["doc_id"].to_list()
        if ids != list(range(len(ids))):
            raise BadInputError(where, None, "doc_id is not 0..N-1 without gaps")
        dataset_row = info[(task, dataset)]
        doc_list = [
            Doc(
                pid=r["pid"],
                text=r["text"],
                title=r["title"],
                answer=r["answer"],
                min_context=r["min_context"],
                n_tokens=r.get("n_tokens") or 0,
            )
            for r in docs.iter_rows(named=True)
        ]
        turn_rows = list(grouped_queries.get(key, pl.DataFrame()).iter_rows(named=True))
        parsed = _queries(turn_rows, f"queries {task}/{dataset}/{corpus_id}")
        evaluated = [q for q in parsed if q.split in EVALUATED_SPLITS]
        if task == "sql" and not evaluated:
            continue
        yield Collection(
            task=task,
            dataset=dataset,
            corpus_id=corpus_id,
            has_title=bool(dataset_row["has_title"]),
            docs=doc_list,
            few_shot=[q for q in parsed if q.split == "few_shot"],
            evaluated=evaluated,
            contexts=tuple(dataset_row.get("contexts") or ()),
            source=dataset_row.get("source") or "",
        )
