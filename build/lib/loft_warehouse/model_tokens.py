"""Token counts in a system's own tokenizer (systems.yaml `tokenizer`), loaded offline.

The warehouse sizes prompts with SentencePiece; a model counts its context window in its own
tokens (gpt-4o: tiktoken o200k_base needs ~12% fewer tokens for LOFT text; Gemma-3's vocabulary
~11% fewer). Three kinds of counter, one interface (`prompt_tokens`):

- `tiktoken:<encoding>`: the rank files of the shared data. tiktoken fetches them over the
  network unless TIKTOKEN_CACHE_DIR holds them under the SHA-1 of their download URL, so the
  shared file's SHA-256 is checked (a mismatch would make tiktoken delete it and download), it
  is linked under that name in a private temporary cache dir, and the dir is removed after
  loading: nothing is downloaded, and a missing or wrong file is a ConfigurationError.
- `gguf`: a local system's own GGUF vocabulary through llama.cpp (vocab only, no weights).
- `gemini`: the Gemini API's countTokens, with the system's key and endpoint.

A prefix is counted once for all its prompts; where joining it to the rest of a prompt may
move a token boundary (gguf, gemini), a prompt counted within JOIN_SLACK tokens of the limit
is counted again whole, so the decision at the limit is exact.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

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
# Tokens a join of two separately counted texts may move (SentencePiece/BPE merges at the seam).
JOIN_SLACK = 16
# No tokenizer here averages more characters per token than this on LOFT text (~4).
CHARS_PER_TOKEN_CAP = 8


@dataclass(frozen=True)
class TokenizerSpec:
    """A parsed `tokenizer` setting: `tiktoken:<encoding>`, `gguf` or `gemini`."""

    kind: str
    name: str = ""

    def __str__(self) -> str:
        return f"{self.kind}:{self.name}" if self.name else self.kind


# Tokenizer kinds a provider counts in itself (which provider: inference/providers/registry.py).
PROVIDER_TOKENIZERS = ("gguf", "gemini")


def parse_spec(value: str, where: str = "tokenizer") -> TokenizerSpec:
    """The setting as a spec; anything but a supported tokenizer raises."""
    kind, _, name = str(value).strip().partition(":")
    if kind in PROVIDER_TOKENIZERS and not name:
        return TokenizerSpec(kind)
    if kind != "tiktoken" or name not in TIKTOKEN_SHA256:
        supported = ", ".join([f"tiktoken:{n}" for n in TIKTOKEN_SHA256] + list(PROVIDER_TOKENIZERS))
        raise ConfigurationError(
            f"{where}: tokenizer {value!r} is not supported; use one of {supported} or leave it "
            "unset (SentencePiece counts)"
        )
    return TokenizerSpec(kind, name)


def cache_key(name: str) -> str:
    """The file name tiktoken looks for in TIKTOKEN_CACHE_DIR: SHA-1 of the download URL."""
    return hashlib.sha1(TIKTOKEN_URL.format(name=name).encode()).hexdigest()


def rank_dir(data_dir: str | None = None) -> Path:
    """The folder of the shared rank files ({data_dir}/tokenizers/tiktoken)."""
    return settings.data_dir(data_dir) / "tokenizers" / "tiktoken"


def rank_file(name: str, data_dir: str | None = None) -> Path:
    """The shared rank file of an encoding (<name>.tiktoken in rank_dir)."""
    return rank_dir(data_dir) / f"{name}.tiktoken"


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

    def prompt_tokens(self, head: str, prefix: str, messages: Sequence[Mapping[str, str]], limit: int) -> int:
        """The prompt as OpenAI counts a chat request (exact: joins are handled part by part)."""
        first = messages[0]["content"][len(head) + len(prefix) :]
        parts: list[tuple[str, Sequence[str]]] = [(messages[0]["role"], (head, prefix, first))]
        parts += [(m["role"], (m["content"],)) for m in messages[1:]]
        return self.count_chat(parts)


@contextlib.contextmanager
def quiet_stderr() -> Iterator[None]:
    """File descriptor 2 to /dev/null for a C library's chatter."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


class PrefixCounter:
    """Counts a prompt as its prefix (memoised) plus the rest, recounted whole near the limit.

    Subclasses say how to count a text (`_count`, with `first` set for the start of a prompt:
    llama.cpp adds its BOS token there).
    """

    name = ""

    def __init__(self) -> None:
        self._prefixes: dict[str, tuple[int, bool]] = {}
        self._lock = threading.Lock()

    def _count(self, text: str, first: bool) -> int:
        raise NotImplementedError

    def _prefix_tokens(self, start: str, limit: int) -> tuple[int, bool]:
        """(count, exact) of a prompt's start. A start far longer than the window is counted on
        its first CHARS_PER_TOKEN_CAP x (limit + JOIN_SLACK) characters only: when those are over
        the window already, that lower bound decides (a 1M-token prefix is never counted whole
        for a 32k model)."""
        with self._lock:
            known = self._prefixes.get(start)
        if known is not None and (known[1] or known[0] > limit + JOIN_SLACK):
            return known
        cap = CHARS_PER_TOKEN_CAP * (limit + JOIN_SLACK)
        counted = (self._count(start[:cap], True), False) if len(start) > cap else (0, False)
        if counted[0] <= limit + JOIN_SLACK:
            counted = (self._count(start, True), True)
        with self._lock:
            self._prefixes[start] = counted
        return counted

    def prompt_tokens(self, head: str, prefix: str, messages: Sequence[Mapping[str, str]], limit: int) -> int:
        """Tokens of the prompt as sent: head + prefix + the rest of the conversation (a lower
        bound over the limit when the start alone is far over it)."""
        start = head + prefix
        counted, exact = self._prefix_tokens(start, limit)
        if not exact:
            return counted
        whole = "".join(m["content"] for m in messages)
        rest = whole[len(start) :]
        estimate = counted + (self._count(rest, False) if rest else 0)
        if abs(estimate - limit) <= JOIN_SLACK:
            return self._count(whole, True)
        return estimate


class GgufTokens(PrefixCounter):
    """A local model's own vocabulary (llama.cpp, vocab only): the text as the local provider
    sends it, one completion text with the BOS token first and special tokens read."""

    name = "gguf"

    def __init__(self, model_path: Path) -> None:
        super().__init__()
        from llama_cpp import Llama

        with quiet_stderr():  # llama.cpp's C code warns about the vocab-only context's size
            self._vocab = Llama(model_path=str(model_path), vocab_only=True, verbose=False)
        self._vocab_lock = threading.Lock()

    def _count(self, text: str, first: bool) -> int:
        with self._vocab_lock:
            return len(self._vocab.tokenize(text.encode("utf-8"), add_bos=first, special=True))


class GeminiTokens(PrefixCounter):
    """The Gemini API's countTokens for the system's model (free; one call per prefix, one per
    prompt's rest, one more for a prompt near the limit)."""

    name = "Gemini countTokens"

    def __init__(self, count: Callable[[str], int]) -> None:
        super().__init__()
        self._count_text = count

    def _count(self, text: str, first: bool) -> int:
        return self._count_text(text)


class TokenCounter(Protocol):
    """What the window check asks of a tokenizer."""

    name: str

    def prompt_tokens(self, head: str, prefix: str, messages: Sequence[Mapping[str, str]], limit: int) -> int: ...


_LOADED: dict[TokenizerSpec, ModelTokens] = {}
_GGUF: dict[Path, GgufTokens] = {}
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


def gguf_tokens(model_path: Path) -> GgufTokens:
    """The process-wide counter of a GGUF file's vocabulary."""
    with _LOAD_LOCK:
        if model_path not in _GGUF:
            _GGUF[model_path] = GgufTokens(model_path)
        return _GGUF[model_path]


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
