"""Answer normalisation, one function per published convention.

LOFT's RAG and ICL scorers normalise both sides with the SQuAD recipe plus Unicode NFD (which
turns the BBH label "(A)" into "", the article); strict ICL keeps articles; Lost in the
Middle uses the same recipe without NFD; R&R compares bags of alphanumeric words.
"""

from __future__ import annotations

import re
import string
import unicodedata
from functools import lru_cache

_DROP_PUNCTUATION = str.maketrans("", "", string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)
_NOT_WORD_OR_SPACE = re.compile(r"[^\w\s]|_", re.UNICODE)


def _squad(text: str) -> str:
    """Lower-case, drop ASCII punctuation, drop articles, collapse whitespace (in that order)."""
    text = text.lower().translate(_DROP_PUNCTUATION)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


@lru_cache(maxsize=2**18)
def normalize_answer(text: str) -> str:
    """LOFT normalisation: NFD first (accents become combining marks, which are kept). Answers
    repeat across systems and rules, so each distinct string is normalised once."""
    return _squad(unicodedata.normalize("NFD", text))


def normalize_label(text: str) -> str:
    """Strict ICL normalisation: NFD, lower-case, no ASCII punctuation, collapsed whitespace,
    but articles kept: BBH labels such as "(A)" must not vanish as the article "a"."""
    text = unicodedata.normalize("NFD", text).lower()
    return " ".join(text.translate(_DROP_PUNCTUATION).split())


def answer_tokens(text: str) -> list[str]:
    """Tokens of a normalised answer, as LOFT's token F1 counts them."""
    return normalize_answer(text).split() if text else []


def normalize_litm(text: str) -> str:
    """Lost in the Middle normalisation: the SQuAD recipe without Unicode decomposition."""
    return _squad(text)


def rr_words(text: str) -> frozenset[str]:
    """R&R fuzzy-match words: lower-case, keep letters, digits and spaces, unique words."""
    return frozenset(_NOT_WORD_OR_SPACE.sub("", text.lower()).split())
