"""Token counts in a system's own tokenizer (systems.yaml `tokenizer`), loaded offline.

The warehouse sizes prompts with SentencePiece; an API model counts its context window in its
own tokens (gpt-4o: tiktoken o200k_base needs ~12% fewer tokens for LOFT text). The runner asks
this module only about prompts whose SentencePiece count is over a window.

tiktoken fetches its rank files over the network unless TIKTOKEN_CACHE_DIR holds them under
the SHA-1 of their download URL. `model_tokens` checks the shared file's SHA-256 (a mismatch
would make tiktoken delete it and download), links it under that name in a private temporary
cache dir, loads the encoding with TIKTOKEN_CACHE_DIR pointing there and removes the dir: it
never downloads, and a missing or wrong file is a ConfigurationError naming the setting.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from loft_warehouse import settings
from loft_warehouse.errors import ConfigurationError

TIKTOKEN_URL = "https://openaipublic.blob.core.windows.net/encodings/{name}.tiktoken"
# Encodings whose rank files the shared data holds, with the SHA-256 tiktoken expects of them.
TIKTOKEN_SHA256 = {
    "cl100k_base": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    "o200k_base": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
}
# OpenAI's chat framing: every message costs 3 tokens plus its role, the reply priming 3.
TOKENS_PER_MESSAGE = 3
TOKENS_REPLY_PRIMING = 3


@dataclass(frozen=True)
class TokenizerSpec:
    """A parsed `tokenizer` setting: `tiktoken:<encoding>`."""

    kind: str
    name: str

    def __str__(self) -> str:
        return f"{self.kind}:{self.name}"


def parse_spec(value: str, where: str = "tokenizer") -> TokenizerSpec:
    """The setting as a spec; anything but a supported `tiktoken:<encoding>` raises."""
    kind, _, name = str(value).strip().partition(":")
    if kind != "tiktoken" or name not in TIKTOKEN_SHA256:
        supported = ", ".join(f"tiktoken:{n}" for n in TIKTOKEN_SHA256)
        raise ConfigurationError(
            f"{where}: tokenizer {value!r} is not supported; use one of {supported} or leave it "
            "unset (SentencePiece counts)"
        )
    return TokenizerSpec(kind, name)


def cache_key(name: str) -> str:
    """The file name tiktoken looks for in TIKTOKEN_CACHE_DIR: SHA-1 of the download URL."""
    return hashlib.sha1(TIKTOKEN_URL.format(name=name).encode()).hexdigest()


def rank_file(name: str, data_dir: str | None = None) -> Path:
    """The shared rank file of an encoding ({data_dir}/tokenizers/tiktoken/<name>.tiktoken)."""
    return settings.data_dir(data_dir) / "tokenizers" / "tiktoken" / f"{name}.tiktoken"


def joins_cleanly(left: str, right: str) -> bool:
    """Whether count(left + right) == count(left) + count(right) in cl100k/o200k.

    Their pre-tokenizers never start a piece with a newline inside a word and never look
    behind, so after a text ending in a newline the pieces restart: the newline run ends at
    the join unless the right text starts with whitespace (the run would go on) or '/'
    (o200k lets punctuation pieces take trailing newlines and slashes).
    """
    return not left or not right or (left.endswith("\n") and not right[0].isspace() and right[0] != "/")


class ModelTokens:
    """Counts of texts in one tiktoken encoding; texts given whole are memoised (a prefix is
    encoded once for all its prompts, and a dict lookup of the same str object is free)."""

    def __init__(self, spec: TokenizerSpec, encoding) -> None:
        self.spec = spec
        self.name = spec.name
        self._encoding = encoding
        self._cache: dict[str, int] = {}
        self._lock = threading.Lock()

    def _encode(self, texts: Sequence[str]) -> list[int]:
        return [len(ids) for ids in self._encoding.encode_ordinary_batch(list(texts), num_threads=2)]

    def count(self, texts: Sequence[str]) -> list[int]:
        """Token counts of texts (special-token strings count as plain text, as an API does)."""
        with self._lock:
            todo = list(dict.fromkeys(t for t in texts if t not in self._cache))
        if todo:
            counted = self._encode(todo)
            with self._lock:
                self._cache.update(zip(todo, counted, strict=True))
        with self._lock:
            return [self._cache[t] for t in texts]

    def count_joined(self, parts: Sequence[str]) -> int:
        """The count of "".join(parts): the parts one by one (memoised) where they join cleanly,
        else the joined run (not memoised: it is one prompt's own text)."""
        runs: list[list[str]] = []
        for part in parts:
            if runs and not joins_cleanly(runs[-1][-1], part):
                runs[-1].append(part)
            elif part:
                runs.append([part])
        whole = [run[0] for run in runs if len(run) == 1]
        joined = ["".join(run) for run in runs if len(run) > 1]
        return sum(self.count(whole)) + sum(self._encode(joined) if joined else [])

    def count_chat(self, messages: Sequence[tuple[str, Sequence[str]]]) -> int:
        """Prompt tokens of a chat request: (role, content parts) per message, framed as
        OpenAI counts it (TOKENS_PER_MESSAGE + role + content each, plus the reply priming)."""
        roles = self.count([role for role, _ in messages])
        contents = [self.count_joined(parts) for _, parts in messages]
        return sum(roles) + sum(contents) + TOKENS_PER_MESSAGE * len(messages) + TOKENS_REPLY_PRIMING


_LOADED: dict[TokenizerSpec, ModelTokens] = {}
_LOAD_LOCK = threading.Lock()


def _load_tiktoken(name: str, path: Path, where: str):
    import tiktoken

    if not path.is_file():
        raise ConfigurationError(
            f"{where}: tokenizer tiktoken:{name} needs {path} (set LOFT_DATA_DIR or the dbt var "
            "data_dir to the shared data); nothing is downloaded"
        )
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != TIKTOKEN_SHA256[name]:
        raise ConfigurationError(f"{where}: tokenizer tiktoken:{name}: {path} has SHA-256 {digest}, not tiktoken's")
    previous = os.environ.get("TIKTOKEN_CACHE_DIR")
    with tempfile.TemporaryDirectory(prefix="loft-tiktoken-") as cache:
        os.symlink(path, Path(cache) / cache_key(name))
        os.environ["TIKTOKEN_CACHE_DIR"] = cache
        try:
            return tiktoken.get_encoding(name)
        except Exception as exc:
            raise ConfigurationError(f"{where}: tokenizer tiktoken:{name} did not load from {path}: {exc}") from exc
        finally:
            if previous is None:
                os.environ.pop("TIKTOKEN_CACHE_DIR", None)
            else:
                os.environ["TIKTOKEN_CACHE_DIR"] = previous


def model_tokens(value: str, data_dir: str | None = None, where: str = "tokenizer") -> ModelTokens:
    """The process-wide counter for a `tokenizer` setting (`where` names it in errors)."""
    spec = parse_spec(value, where)
    with _LOAD_LOCK:
        if spec not in _LOADED:
            try:
                path = rank_file(spec.name, data_dir)
            except ConfigurationError as exc:
                raise ConfigurationError(f"{where}: tokenizer {spec} needs the shared data: {exc}") from exc
            _LOADED[spec] = ModelTokens(spec, _load_tiktoken(spec.name, path, where))
        return _LOADED[spec]
