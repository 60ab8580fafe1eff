"""What the builder of a method's stage gets and gives: a stage-1 builder renders prompts from
a corpus (prompts.render.Rendered); a later stage's builder turns one query turn's answers in
the previous stage (Upstream) into prompts (Call). The catalogue names each stage's builder as
"module:function", so a new method is its builders plus one catalogue entry.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import polars as pl

from loft_warehouse.design import Design
from loft_warehouse.errors import ConfigurationError
from loft_warehouse.methods.catalogue import Method
from loft_warehouse.prompts.inputs import Collection, Doc, Query


@dataclass(frozen=True)
class Call:
    """One later-stage prompt before token counting: the shared prefix, the row's own text, the
    documents it shows (in order), the payload its parser reads, and the ID the prompt shows for
    each document (empty when it shows none)."""

    call_index: int
    prefix: str
    suffix: str
    context: list[Doc]
    payload: str | None = None
    shown: tuple[str, ...] = ()


class DocumentMaps:
    """Per (task, dataset, corpus_id, variant): pid by shown ID and by position, shown ID by pid."""

    def __init__(self, doc_ids: pl.DataFrame) -> None:
        self.by_shown: dict[tuple[str, ...], dict[str, str]] = {}
        self.by_position: dict[tuple[str, ...], dict[int, str]] = {}
        self.shown_of: dict[tuple[str, ...], dict[str, str]] = {}
        for row in doc_ids.iter_rows(named=True):
            key = (row["task"], row["dataset"], row["corpus_id"], row["variant"])
            self.by_shown.setdefault(key, {})[str(row["shown_id"])] = row["pid"]
            self.by_position.setdefault(key, {})[int(row["position"])] = row["pid"]
            self.shown_of.setdefault(key, {})[row["pid"]] = str(row["shown_id"])

    def pids(self, key: tuple[str, ...], items: Iterable[Any], kind: str) -> list[str]:
        """Valid pids of answer items (shown IDs, or page numbers = position + 1), in first
        occurrence order; items that name no document are dropped."""
        found: list[str] = []
        for item in items:
            text = str(item).strip()
            if kind == "pages":
                pid = self.by_position.get(key, {}).get(int(text) - 1) if text.lstrip("-").isdigit() else None
            else:
                pid = self.by_shown.get(key, {}).get(text)
            if pid is not None and pid not in found:
                found.append(pid)
        return found


@dataclass
class Upstream:
    """One query turn's rows of the previous stage (its calls, in order), with what a builder
    needs to read them: the corpus, the prompt variant's document maps, the design, and a cache
    shared by the builds of one size (e.g. a reader prefix built once per dataset)."""

    method: Method
    collection: Collection
    query: Query
    variant: str
    rows: list[dict[str, Any]]
    maps: DocumentMaps
    design: Design
    cache: dict[Any, Any] = field(default_factory=dict)

    @property
    def key(self) -> tuple[str, ...]:
        return (self.collection.task, self.collection.dataset, self.collection.corpus_id, self.variant)

    @property
    def question(self) -> str:
        return self.query.turns[0].text

    def documents(self, pids: Iterable[str]) -> list[Doc]:
        by_pid = {d.pid: d for d in self.collection.docs}
        return [by_pid[pid] for pid in pids]

    def answers(self, row: dict[str, Any]) -> list[str]:
        """A row's answer list read with the strict rule ([] when it was not answered)."""
        return list(row["answers_strict"] or []) if row["status"] == "ok" else []

    def shown_id(self, pid: str) -> str:
        return self.maps.shown_of[self.key][pid]

    def shown_ids(self, docs: Iterable[Doc]) -> tuple[str, ...]:
        """The variant's shown ID of each document, in order."""
        return tuple(self.shown_id(doc.pid) for doc in docs)

    def retrieved(self) -> list[str]:
        """bm25's top k (the method's top_k) of a retrieve-then-read stage 1: the valid shown
        IDs of its one answer, as pids in rank order."""
        return self.maps.pids(self.key, self.answers(self.rows[0]), "shown")[: self.method.top_k]


@cache
def builder(reference: str) -> Callable[..., Any]:
    """The function a catalogue entry names as "module:function"."""
    module, _, name = reference.partition(":")
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as exc:
        raise ConfigurationError(f"no stage builder {reference!r}") from exc
