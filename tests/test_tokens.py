"""Token counting in chunks: the same counts as one encode of everything, each text once."""

from __future__ import annotations

import loft_warehouse.tokens as token_module
from loft_warehouse.tokens import TokenCounter


def test_chunked_counts_equal_one_whole_encode_and_each_text_is_encoded_once(tokens, monkeypatch) -> None:
    texts = [f"passage {i} about topic {i % 7} " * (1 + i % 5) for i in range(50)]
    whole = [len(ids) for ids in TokenCounter(tokens.model_file)._processor.encode(texts)]
    monkeypatch.setattr(token_module, "ENCODE_CHUNK", 7)
    counter = TokenCounter(tokens.model_file)
    assert counter.count(texts) == whole
    assert counter.count(texts[:10] + ["new text"]) == whole[:10] + [counter.count(["new text"])[0]]
    assert counter.encoded_texts == 51
    assert counter.encoded_tokens == sum(whole) + counter.count(["new text"])[0]
    assert counter.encode_raw(texts) == sum(whole)
