"""Passage corpora built from raw sources: content-named passages and retrieval/RAG queries.

NQ-Open oracle and IRCoT HotpotQA ship passages inside their questions, without ids, and repeat a
passage in every question that uses it. The pool keeps one document per distinct (title, text)
and names it by a digest of that content, so the pid does not depend on file order and the same
passage always gets the same pid. passage_query turns a question and its relevant pids into the
task's gold (shared with MS MARCO).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from loft_warehouse.errors import BadInputError, ConfigurationError
from loft_warehouse.registry import DatasetSpec
from loft_warehouse.sources.base import Document, Query, as_loft_loads


def content_pid(prefix: str, title: str, text: str) -> str:
    """A stable pid for a passage: prefix plus a 64-bit digest of (title, text)."""
    payload = json.dumps([title, text], ensure_ascii=False).encode("utf-8")
    return f"{prefix}-{hashlib.blake2b(payload, digest_size=8).hexdigest()}"


class PassagePool:
    """Distinct passages in order of first appearance; add() returns the passage's pid."""

    def __init__(self, prefix: str, source_file: Path) -> None:
        self.prefix = prefix
        self.source_file = source_file
        self.documents: list[Document] = []
        self._read: dict[str, tuple[str, str, int]] = {}  # pid -> (title, text) as read, and its first row

    def add(self, title: str, text: str, row: int) -> str:
        """Register a stripped passage read at `row`; a repeat returns the existing pid. The pid
        names the passage as read; the document holds it as LOFT's loader shows a corpus line."""
        title, text = title.strip(), text.strip()
        if not text:
            raise BadInputError(self.source_file, row, f"empty passage text (title {title!r})")
        pid = content_pid(self.prefix, title, text)
        known = self._read.get(pid)
        if known is None:
            self._read[pid] = (title, text, row)
            self.documents.append(
                Document(
                    pid=pid,
                    title=as_loft_loads(title),
                    text=as_loft_loads(text),
                    source_file=str(self.source_file),
                    source_row=row,
                )
            )
        elif known[:2] != (title, text):
            raise BadInputError(
                self.source_file,
                row,
                f"pid digest collision for {pid!r} (first at row {known[2]})",
            )
        return pid


def string_list(value: Any, field: str, path: Path, row: int) -> list[str]:
    """A non-empty list of non-blank strings, stripped; anything else names the field."""
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise BadInputError(path, row, f"{field} must be a non-empty list of strings, got {value!r}")
    stripped = [v.strip() for v in value]
    if not all(stripped):
        raise BadInputError(path, row, f"{field} contains a blank string: {value!r}")
    return stripped


def passage_query(
    spec: DatasetSpec,
    qid: str,
    text: str,
    relevant: list[str],
    answers: list[str],
    path: Path,
    row: int,
) -> Query:
    """A single-turn retrieval or RAG query over a passage pool.

    `relevant` lists every relevant pid in gold priority order; the first spec.max_gold of them
    are the gold documents, and all of them stay out of the random fillers. Retrieval gold is
    the kept pids, RAG gold the acceptable answers.
    """
    relevant = list(dict.fromkeys(relevant))
    kept = relevant[: spec.max_gold] if spec.max_gold else relevant
    if spec.task == "retrieval":
        gold: list[str] = kept
    elif spec.task == "rag":
        gold = answers
    else:
        raise ConfigurationError(f"{spec.source} builds retrieval or rag datasets, not {spec.task} ({spec.dataset})")
    text = text.strip()
    if not text:
        raise BadInputError(path, row, f"query {qid!r} has empty text")
    return Query(
        qid=qid,
        turns=[text],
        gold=[gold],
        source_file=str(path),
        source_row=row,
        gold_pids=[kept],
        relevant_pids=relevant,
    )
