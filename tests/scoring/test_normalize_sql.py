"""The SQL normalisation of ASCII answers (scoring_normalize) against normalize.normalize_answer."""

from __future__ import annotations

import random
import string

from loft_warehouse.answers.normalize import normalize_answer
from tests.scoring.sqlkit import connect, macros

PIECES = ["a", "an", "the", "A", "The", "AN", "an_", "the-", "'a'", "x", "Paris", "1,000", "3.5"]


def _ascii_texts(n: int) -> list[str]:
    rng = random.Random(11)
    everything = [chr(c) for c in range(128)]
    texts = ["", " ", "The Who", "a", "an apple and the pear", "A.B.C.", "rock_n_roll", "tab\there", "x\x1cy\x1fz"]
    for _ in range(n):
        parts = [rng.choice(PIECES) if rng.random() < 0.5 else "".join(rng.choices(everything, k=rng.randint(0, 4)))
                 for _ in range(rng.randint(0, 6))]  # fmt: skip
        texts.append(rng.choice(["", " ", "\t", "\x0b", "\x1d", "  "]).join(parts))
    return texts


def test_ascii_answers_normalise_in_sql_exactly_as_in_python() -> None:
    texts = _ascii_texts(4000) + ["Café", "naïve the ÉCOLE", "\u00a0the\u2003x", "ﬁ", string.punctuation]
    sql = macros().scoring_normalize("text")
    con = connect()
    rows = con.execute(f"select text, {sql} from unnest($texts) as t(text)", {"texts": texts}).fetchall()
    mismatches = [(text, got, normalize_answer(text)) for text, got in rows if got != normalize_answer(text)]
    assert not mismatches, mismatches[:5]
    assert len(rows) == len(texts)
