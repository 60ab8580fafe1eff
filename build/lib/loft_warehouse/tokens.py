"""SentencePiece token counts, computed once per distinct text per process.

Texts are encoded ENCODE_CHUNK at a time and only each one's length is kept, so counting a
100M-token corpus holds one chunk's token ids at a time, not every id of the corpus.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence
from pathlib import Path

import sentencepiece as spm

ENCODE_CHUNK = 2048


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
                for key, length in zip(todo, self._lengths(list(todo.values())), strict=True):
                    self._cache[key] = length
                    self.encoded_tokens += length
                self.encoded_texts += len(todo)
            return [self._cache[k] for k in keys]

    def _lengths(self, texts: list[str]) -> list[int]:
        lengths: list[int] = []
        for start in range(0, len(texts), ENCODE_CHUNK):
            ids = self._processor.encode(texts[start : start + ENCODE_CHUNK], num_threads=2)
            lengths.extend(len(piece) for piece in ids)
        return lengths

    def encode_raw(self, texts: Sequence[str]) -> int:
        """Encode without the cache (for throughput baselines); returns the token total."""
        return sum(self._lengths(list(texts)))


_COUNTERS: dict[Path, TokenCounter] = {}
_COUNTERS_LOCK = threading.Lock()


def counter(model_file: Path) -> TokenCounter:
    """The process-wide counter for a model file (shared so its cache is shared)."""
    key = Path(model_file).resolve()
    with _COUNTERS_LOCK:
        if key not in _COUNTERS:
            _COUNTERS[key] = TokenCounter(key)
        return _COUNTERS[key]
