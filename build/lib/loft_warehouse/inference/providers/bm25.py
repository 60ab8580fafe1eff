"""The specialized-retriever baseline: BM25 (bm25s) over the corpus a prompt shows.

For each (task, dataset, corpus_id, variant) the documents shown in the prompt are indexed once
(title and text, as the corpus line shows them); each query ranks them and the answer names the
top shown IDs as `Final Answer: ['12', '3', ...]`, so it is parsed and scored like a model's.
Multi-turn queries use all turns up to the current one as the query.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import polars as pl

from loft_warehouse.bm25 import BM25Index, document_text
from loft_warehouse.errors import ConfigurationError
from loft_warehouse.inference.media import MM_TASK
from loft_warehouse.inference.providers.base import Completion, PermanentError, Request, RunData
from loft_warehouse.inference.systems import System
from loft_warehouse.prompts.variants import PAGE_SEPARATOR, VARIANTS

DEFAULT_TOP_K = 5


@dataclass(frozen=True)
class _Index:
    index: BM25Index
    shown_ids: list[str]


def _merged_pages_text(shown: pl.DataFrame, corpus: pl.DataFrame) -> pl.DataFrame:
    """A merged_pages variant shows each page under its first passage's pid with the text of
    all its passages, an untitled passage being its own page (prompts.variants.merged_pages):
    bm25 ranks those texts."""
    merging = [name for name, variant in VARIANTS.items() if variant.merge_pages]
    if shown.filter(pl.col("variant").is_in(merging)).height == 0:
        return shown
    keys = ["task", "dataset", "corpus_id"]
    ordered = corpus.sort([*keys, "doc_id"]) if "doc_id" in corpus.columns else corpus
    page = pl.when(pl.col("title").fill_null("") == "").then(pl.col("pid")).otherwise(pl.col("title"))
    pages = (
        ordered.group_by([*keys, page.alias("page")], maintain_order=True)
        .agg(pl.col("pid").first(), pl.col("text").str.join(PAGE_SEPARATOR).alias("page_text"))
        .drop("page")
    )
    return (
        shown.join(pages, on=[*keys, "pid"], how="left")
        .with_columns(
            pl.when(pl.col("variant").is_in(merging)).then(pl.col("page_text")).otherwise(pl.col("text")).alias("text")
        )
        .drop("page_text")
    )


class BM25Provider:
    """Ranks the prompt's shown documents with bm25s; needs corpus, shown-id map and queries."""

    def __init__(self, system: System, corpus: pl.DataFrame, doc_ids: pl.DataFrame, queries: pl.DataFrame) -> None:
        self.system = system
        self.top_k = int(system.options.get("top_k", DEFAULT_TOP_K))
        if self.top_k < 1:
            raise ConfigurationError(f"system {system.name}: options.top_k must be >= 1")
        # Multimodal corpora are media, not texts: bm25 is never in their scope.
        shown = (
            doc_ids.filter(pl.col("task") != MM_TASK)
            .join(
                corpus.select("task", "dataset", "corpus_id", "pid", "title", "text"),
                on=["task", "dataset", "corpus_id", "pid"],
                how="left",
            )
            .pipe(_merged_pages_text, corpus)
        )
        missing = shown.filter(pl.col("text").is_null())
        if missing.height:
            first = missing.row(0, named=True)
            raise PermanentError(
                f"prompt_doc_ids row {first['task']}/{first['dataset']}/{first['corpus_id']} "
                f"shown_id {first['shown_id']} points at pid {first['pid']!r}, "
                "which is not in corpus"
            )
        self._shown = shown.partition_by(["task", "dataset", "corpus_id", "variant"], as_dict=True, maintain_order=True)
        self._turns: dict[tuple[str, str, str, str], dict[int, str]] = {}
        for row in queries.select("task", "dataset", "corpus_id", "qid", "turn", "query_text").iter_rows():
            self._turns.setdefault(row[:4], {})[int(row[4])] = row[5]
        self._indexes: dict[tuple[str, ...], _Index] = {}
        self._lock = threading.Lock()

    def _index(self, group: tuple[str, str, str, str]) -> _Index:
        with self._lock:
            if group not in self._indexes:
                docs = self._shown.get(group)
                if docs is None or docs.height == 0:
                    raise PermanentError(f"no shown documents for {'/'.join(group)}")
                texts = [document_text(t, x) for t, x in zip(docs["title"], docs["text"], strict=True)]
                self._indexes[group] = _Index(BM25Index(texts), [str(s) for s in docs["shown_id"]])
            return self._indexes[group]

    def query_text(self, row: dict) -> str:
        """All turns of the query up to this one (a single-turn query: its text)."""
        turns = self._turns.get((row["task"], row["dataset"], row["corpus_id"], row["qid"]))
        if not turns or int(row["turn"]) not in turns:
            raise PermanentError(f"no query text for {row['prompt_id']}")
        return "\n".join(turns[t] for t in sorted(turns) if t <= int(row["turn"]))

    def rank(self, row: dict) -> list[str]:
        """Shown IDs of the top_k documents for the row's query, best first."""
        index = self._index((row["task"], row["dataset"], row["corpus_id"], row["variant"]))
        return [index.shown_ids[i] for i in index.index.top(self.query_text(row), self.top_k)]

    def complete(self, request: Request) -> Completion:
        ranked = self.rank(request.row)
        return Completion("ok", f"Final Answer: {ranked!r}", "stop", 0, 0, 0)

    def close(self) -> None:
        self._indexes.clear()


def provider(system: System, run: RunData) -> BM25Provider:
    """bm25 over the run's corpus, shown-ID maps and queries (providers/registry.py)."""
    if run.corpus is None or run.doc_ids is None or run.queries is None:
        raise ConfigurationError("bm25 needs the size's corpus, prompt_doc_ids and queries")
    return BM25Provider(system, run.corpus, run.doc_ids, run.queries)
