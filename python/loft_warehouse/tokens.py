"""SentencePiece token counts, computed once per distinct text per process."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence
from pathlib import Path

import sentencepiece as spm


class TokenCounter:
    """Counts tokens with one SentencePiece model and memoises counts by text digest.

    Building several sizes in one process (or one dbt invocation) tokenizes each passage once.
    """

    def __init__(self, model_file: Path) -> None:
        self.model_file = Path(model_file)
        self.name = self.model_file.name
        self._processor = spm.SentencePieceProcessor(model_file=str(self.model_file))
        self._cache: dict[bytes, int] = {}
        self._lock = threading.Lock()
        self.encoded_texts = 0
        self.encoded_tokens = 0

    def count(self, texts: Sequence[str]) -> list[int]:
        """Token counts for texts, in order; only unseen texts are encoded."""
        keys = [hashlib.blake2b(t.encode("utf-8"), digest_size=16).digest() for t in texts]
        with self._lock:
            todo = {k: t for k, t in zip(keys, texts, strict=True) if k not in self._cache}
            if todo:
                pieces = self._processor.encode(list(todo.values()), num_threads=2)
                for key, ids in zip(todo, pieces, strict=True):
                    self._cache[key] = len(ids)
                self.encoded_texts += len(todo)
                self.encoded_tokens += sum(len(ids) for ids in pieces)
            return [self._cache[k] for k in keys]

    def encode_raw(self, texts: Sequence[str]) -> int:
        """Encode without the cache (for throughput baselines); returns the token total."""
        return sum(len(ids) for ids in self._processor.encode(list(texts), num_threads=2))


_COUNTERS: dict[Path, TokenCounter] = {}
_COUNTERS_LOCK = threading.Lock()


def counter(model_file: Path) -> TokenCounter:
    """The process-wide counter for a model file (shared so its cache is shared)."""
    key = Path(model_file).resolve()
    with _COUNTERS_LOCK:
        if key not in _COUNTERS:
            _COUNTERS[key] = TokenCounter(key)
        return _COUNTERS[key]
