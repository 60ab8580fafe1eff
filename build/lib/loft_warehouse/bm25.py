"""BM25 ranking (bm25s), shared by the bm25 system (inference.providers.bm25) and the
retrieve-then-read methods' first stage (methods.retrieve_read): the same index, the same text
per document, so a method's top k is the bm25 system's answer."""

from __future__ import annotations

import logging

import bm25s
import numpy as np
from bm25s.tokenization import Tokenizer

logging.getLogger("bm25s").setLevel(logging.WARNING)


class BM25Index:
    """bm25s over a list of texts (English stopwords removed): rank a query, best first."""

    def __init__(self, texts: list[str]) -> None:
        self.tokenizer = Tokenizer(stopwords="en")
        tokens = self.tokenizer.tokenize(texts, update_vocab=True, show_progress=False, return_as="ids")
        self.retriever = bm25s.BM25()
        self.retriever.index(tokens, show_progress=False)
        self.size = len(texts)

    def top(self, query: str, k: int) -> list[int]:
        """Indices of the k best texts for the query (fewer when there are fewer texts); equal
        scores keep corpus order. bm25s's own top k selects with a partition whose order among
        ties differs between machines, which moved recall@1 by a query from one CI host to the
        next; a stable sort of every score does not."""
        (ids,) = self.tokenizer.tokenize([query], update_vocab=False, show_progress=False, return_as="ids")
        scores = self.retriever.get_scores_from_ids(ids)
        ranked = np.argsort(-scores, kind="stable")[:k]
        return [int(i) for i in ranked]


def document_text(title: str | None, text: str) -> str:
    """What BM25 indexes: the title (when there is one) and the passage."""
    return f"{title} | {text}" if title else text
