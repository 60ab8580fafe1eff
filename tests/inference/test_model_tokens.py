"""Token counts in a system's own tokenizer (tiktoken), loaded offline from the shared files."""

from __future__ import annotations

import os

import pytest
import tiktoken.load
import tiktoken.registry

from loft_warehouse import model_tokens as module
from loft_warehouse.errors import ConfigurationError
from loft_warehouse.inference.systems import load_systems
from loft_warehouse.model_tokens import (
    CHARS_PER_TOKEN_CAP,
    JOIN_SLACK,
    PrefixCounter,
    cache_key,
    joins_cleanly,
    model_tokens,
    parse_spec,
)
from tests.inference.support import needs_tiktoken_files, openai_system, write_systems


@pytest.fixture
def o200k():
    needs_tiktoken_files()
    return model_tokens("tiktoken:o200k_base")


def test_cache_keys_are_the_sha1_of_the_download_urls():
    # The names /work/shared/data/README.md §3 gives for TIKTOKEN_CACHE_DIR.
    assert cache_key("cl100k_base") == "9b5ad71b2ce5302211f9c61530b329a4922fc6a4"
    assert cache_key("o200k_base") == "fb374d419588a4632f3f557e76b4b70aebbca790"


def test_the_tokenizer_loads_offline_from_the_shared_files(monkeypatch):
    needs_tiktoken_files()
    monkeypatch.setattr(module, "_LOADED", {})
    for name in ("o200k_base", "cl100k_base"):
        monkeypatch.delitem(tiktoken.registry.ENCODINGS, name, raising=False)
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR", raising=False)

    def no_download(blobpath: str) -> bytes:
        raise AssertionError(f"tiktoken tried to fetch {blobpath}")

    monkeypatch.setattr(tiktoken.load, "read_file", no_download)
    assert model_tokens("tiktoken:o200k_base").count(["hello world", "user"]) == [2, 1]
    # "====== Now let's start! ======\n..." is one token fewer in o200k than in cl100k.
    text = "====== Now let's start! ======\nquery a0\n"
    assert model_tokens("tiktoken:cl100k_base").count([text]) == [12]
    assert model_tokens("tiktoken:o200k_base").count([text]) == [11]
    assert "TIKTOKEN_CACHE_DIR" not in os.environ


def test_bad_tokenizer_names_fail_naming_the_setting(tmp_path):
    for value in ("tiktoken:o200k", "sentencepiece:mistral", "o200k_base"):
        supported = "tiktoken:cl100k_base, tiktoken:o200k_base, gguf, gemini"
        with pytest.raises(ConfigurationError, match=f"is not supported; use one of {supported}"):
            parse_spec(value)
    path = write_systems(tmp_path / "s.yaml", [openai_system(tokenizer="tiktoken:p50k_base")])
    with pytest.raises(ConfigurationError, match=r"systems\[0\] \(gpt-fixture\) tokenizer: tokenizer 'tiktoken:p50k"):
        load_systems(path)


def test_missing_or_altered_rank_files_fail_and_nothing_is_downloaded(tmp_path, monkeypatch):
    monkeypatch.setattr(module, "_LOADED", {})
    with pytest.raises(ConfigurationError, match="gpt-x: tokenizer tiktoken:o200k_base needs .*nothing is downloaded"):
        model_tokens("tiktoken:o200k_base", str(tmp_path), "gpt-x")
    folder = tmp_path / "tokenizers" / "tiktoken"
    folder.mkdir(parents=True)
    (folder / "o200k_base.tiktoken").write_text("aGVsbG8= 0\n")
    with pytest.raises(ConfigurationError, match="gpt-x: tokenizer tiktoken:o200k_base: .* has SHA-256"):
        model_tokens("tiktoken:o200k_base", str(tmp_path), "gpt-x")


def test_parts_are_counted_apart_only_where_they_join_cleanly(o200k):
    # After a newline the pieces restart unless the next text starts with whitespace or '/'.
    assert joins_cleanly("x\n", "y") and joins_cleanly("", " y") and joins_cleanly("x", "")
    assert not joins_cleanly("a\n", "\nb") and not joins_cleanly("end.\n", "//c") and not joins_cleanly("a", "b")
    # "a\n\nb" is 3 tokens, but "a\n" + "\nb" apart would be 4; "end.\n//c" likewise.
    assert o200k.count_joined(["a\n", "\nb"]) == 3 == o200k.count(["a\n\nb"])[0]
    assert sum(o200k.count(["a\n", "\nb"])) == 4
    assert o200k.count_joined(["end.\n", "//c"]) == 3
    assert o200k.count_joined(["a\n", "", "b"]) == o200k.count(["a\nb"])[0]


def test_chat_framing_counts_three_per_message_the_role_and_the_reply_priming(o200k):
    # user: 3 + 1 ("user") + 2 ("hello world"); assistant: 3 + 1 + 4 ("Final Answer: []"); +3.
    assert o200k.count_chat([("user", ["hello world"])]) == 9
    assert o200k.count_chat([("user", ["hello world"]), ("assistant", ["Final Answer: []"])]) == 17


class WordCounter(PrefixCounter):
    """Words as tokens, with the texts it was asked to count."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[str] = []

    def _count(self, text: str, first: bool) -> int:
        self.asked.append(text)
        return len(text.split()) + first


def test_a_prefix_is_counted_once_and_a_join_near_the_limit_is_counted_whole():
    counter = WordCounter()
    prefix = "word " * 100
    messages = [{"role": "user", "content": prefix + "a question"}]
    assert counter.prompt_tokens("", prefix, messages, limit=500) == 103
    assert counter.prompt_tokens("", prefix, messages, limit=500) == 103
    assert counter.asked == [prefix, "a question", "a question"]
    counter.asked.clear()
    assert counter.prompt_tokens("", prefix, messages, limit=100) == 103  # within JOIN_SLACK: whole
    assert counter.asked == ["a question", prefix + "a question"]


def test_a_prefix_far_over_the_window_is_counted_on_its_start_only():
    counter = WordCounter()
    prefix = "word " * 1_000_000
    messages = [{"role": "user", "content": prefix + "a question"}]
    assert counter.prompt_tokens("", prefix, messages, limit=100) > 100
    assert max(len(t) for t in counter.asked) == CHARS_PER_TOKEN_CAP * (100 + JOIN_SLACK)
    # The same prefix under a window it may fit is counted whole.
    assert counter.prompt_tokens("", prefix, messages, limit=2_000_000) == 1_000_003


def test_provider_tokenizers_belong_to_their_provider(tmp_path):
    path = write_systems(tmp_path / "s.yaml", [openai_system(tokenizer="gguf")])
    with pytest.raises(ConfigurationError, match="gguf counts only for provider local, not openai"):
        load_systems(path)
