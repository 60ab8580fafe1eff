"""Per-question distractor documents for the positional studies (Lost in the Middle, R&R).

Both papers show a question's gold passage among passages that do not answer it. The shared data
has no retrieved distractors, so each question draws its own from a pool of other questions'
passages: a seeded permutation per question (the same at every size, so a smaller corpus is a
prefix of a larger one), skipping the question's own passages and every passage that contains
one of its answers after Lost-in-the-Middle normalisation (the `hasanswer` test of that paper's
data, done on strings).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace

import numpy as np

from loft_warehouse.answers.normalize import normalize_litm
from loft_warehouse.sources.base import Document


class DistractorPool:
    """Candidate distractors with their normalised text, drawn per question in seeded order."""

    def __init__(self, documents: Sequence[Document]) -> None:
        self.documents = list(documents)
        self._normalized = [normalize_litm(f"{d.title or ''} {d.text}") for d in self.documents]

    def _answers_in(self, index: int, answers: Sequence[str]) -> bool:
        text = self._normalized[index]
        return any(answer in text for answer in answers)

    def draw(self, seed: int, key: str, answers: Sequence[str], exclude: set[str]) -> Iterator[Document]:
        """The pool in this question's seeded order, without excluded pids or answer-bearing text."""
        normalized = [n for n in (normalize_litm(a) for a in answers) if n]
        rng = np.random.default_rng([seed, zlib.crc32(key.encode("utf-8"))])
        for index in rng.permutation(len(self.documents)):
            document = self.documents[int(index)]
            if document.pid in exclude or self._answers_in(int(index), normalized):
                continue
            yield document


def take_count(limit: int) -> Callable[[Iterator[Document]], list[Document]]:
    """The first `limit` documents of a draw."""

    def take(drawn: Iterator[Document]) -> list[Document]:
        kept: list[Document] = []
        for document in drawn:
            if len(kept) == limit:
                break
            kept.append(document)
        return kept

    return take


def take_tokens(budget: int, n_tokens: Callable[[Document], int]) -> Callable[[Iterator[Document]], list[Document]]:
    """Documents of a draw while their running token total stays within `budget` (a prefix of the
    draw: the first document that does not fit ends it, so every budget takes a prefix)."""

    def take(drawn: Iterator[Document]) -> list[Document]:
        kept, used = [], 0
        for document in drawn:
            cost = n_tokens(document)
            if used + cost > budget:
                break
            kept.append(document)
            used += cost
        return kept

    return take


def in_corpus(document: Document, corpus_id: str, draw_rank: int | None) -> Document:
    """A pool document placed in one question's corpus (draw_rank None: a gold document)."""
    return replace(document, corpus_id=corpus_id, draw_rank=draw_rank, answer=None, label=None)
