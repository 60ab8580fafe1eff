"""Normalisation conventions, hand-checked."""

from __future__ import annotations

import unicodedata

import pytest

from loft_warehouse.answers.normalize import (
    answer_tokens,
    normalize_answer,
    normalize_label,
    normalize_litm,
    rr_words,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The Eiffel Tower!", "eiffel tower"),
        ("  A  cat,   an owl ", "cat owl"),
        ("a.n", ""),  # punctuation goes first, so "a.n" becomes the article "an"
        ("(A)", ""),  # the BBH label is the article "a" once brackets are gone
        ("Theory", "theory"),  # articles only as whole words
        ("it’s", "it’s"),  # the curly apostrophe is not ASCII punctuation
    ],
)
def test_normalize_answer(text: str, expected: str) -> None:
    assert normalize_answer(text) == expected


def test_normalize_answer_decomposes_accents_and_keeps_the_marks() -> None:
    assert normalize_answer("Röntgen") == "ro\u0308ntgen"
    assert normalize_answer("Röntgen") == normalize_answer(unicodedata.normalize("NFD", "Röntgen"))
    assert normalize_answer("Röntgen") != "rontgen"


def test_litm_normalisation_does_not_decompose() -> None:
    assert normalize_litm("The Röntgen.") == "röntgen"
    assert normalize_litm("The Röntgen.") != normalize_answer("The Röntgen.")


def test_label_normalisation_keeps_articles() -> None:
    assert normalize_label(" (A) ") == "a"
    assert normalize_label("The  Answer.") == "the answer"


def test_answer_tokens() -> None:
    assert answer_tokens("The cat, the hat") == ["cat", "hat"]
    assert answer_tokens("") == []


def test_rr_words_are_unique_alphanumeric_words() -> None:
    assert rr_words("O'Neil, o'neil & Sons_2") == frozenset({"oneil", "sons2"})
    assert rr_words("!!!") == frozenset()
