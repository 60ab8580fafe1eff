"""BM25Index ranks best first and breaks equal scores by corpus order, the same on every machine."""

from __future__ import annotations

from loft_warehouse.bm25 import BM25Index


def test_equal_scores_keep_corpus_order() -> None:
    texts = ["paris is the capital of france"] * 40 + ["berlin is a city"] * 40
    index = BM25Index(texts)
    assert index.top("capital of france", 10) == list(range(10))
    assert index.top("berlin", 5) == [40, 41, 42, 43, 44]


def test_best_first_then_ties_then_the_rest() -> None:
    texts = ["a dog", "the cat sat", "cat cat cat on a mat", "the cat sat", "nothing here"]
    index = BM25Index(texts)
    ranked = index.top("cat mat", 5)
    assert ranked[0] == 2
    assert ranked[1:3] == [1, 3]
    assert sorted(ranked) == [0, 1, 2, 3, 4]


def test_k_beyond_the_corpus_and_a_query_of_unknown_words() -> None:
    index = BM25Index(["alpha beta", "gamma delta", "epsilon"])
    assert index.top("gamma", 10) == [1, 0, 2]
    assert index.top("zzz qqq", 2) == [0, 1]
