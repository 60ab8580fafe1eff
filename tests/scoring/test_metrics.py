"""Every metric's reference implementation against hand-computed values (loft-reference §5,
§7, §8, seed 002)."""

from __future__ import annotations

import pytest

from loft_warehouse.scoring import metrics as m

# ---- retrieval ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("gold", "pred", "k", "loft", "strict"),
    [
        (["a"], ["a", "b"], 1, 1.0, 1.0),
        (["a"], ["b", "a"], 1, 0.0, 0.0),
        (["a"], ["b", "a"], 2, 1.0, 1.0),
        # prefix then de-duplicate: a repeated id wastes a slot under loft only
        (["a", "b"], ["a", "a", "b"], 2, 0.5, 1.0),
        # gold duplicates count in loft's denominator
        (["a", "a"], ["a"], 1, 0.5, 1.0),
        # more gold than k: recall@1 of two gold is at most 1/2
        (["a", "b"], ["a", "b"], 1, 0.5, 0.5),
        (["a", "b", "c"], ["c", "x", "a", "b"], 3, 2 / 3, 2 / 3),
        (["a"], [], 5, 0.0, 0.0),
        ([], ["a"], 1, 0.0, 0.0),
    ],
)
def test_recall_at_k(gold: list[str], pred: list[str], k: int, loft: float, strict: float) -> None:
    assert m.recall_at_k_loft(gold, pred, k) == pytest.approx(loft)
    assert m.recall_at_k_strict(gold, pred, k) == pytest.approx(strict)


@pytest.mark.parametrize(
    ("gold", "pred", "k", "loft", "strict"),
    [
        (["a", "b"], ["a", "b"], 2, 1.0, 1.0),
        (["a", "b"], ["a", "c", "b"], 2, 0.0, 0.0),
        (["a", "b"], ["a", "c", "b"], 3, 1.0, 1.0),
        # min(k, |gold|): one hit is complete at k=1
        (["a", "b"], ["b"], 1, 1.0, 1.0),
        (["a", "b", "c", "d", "e"], ["a", "b", "c"], 3, 1.0, 1.0),
        (["a", "b"], ["a", "a", "b"], 2, 0.0, 1.0),
        # |gold| with duplicates can never be reached under loft
        (["a", "a"], ["a"], 2, 0.0, 1.0),
        (["a"], [], 1, 0.0, 0.0),
        # upstream: no gold and any prediction is "complete"; strict: 0
        ([], ["a"], 1, 1.0, 0.0),
    ],
)
def test_mrecall_at_k(gold: list[str], pred: list[str], k: int, loft: float, strict: float) -> None:
    assert m.mrecall_at_k_loft(gold, pred, k) == loft
    assert m.mrecall_at_k_strict(gold, pred, k) == strict


def test_strict_recall_keeps_the_rank_of_unknown_ids() -> None:
    # An id the corpus lacks (None) takes a slot and never matches.
    assert m.recall_at_k_strict(["a"], [None, "a"], 1) == 0.0
    assert m.recall_at_k_strict(["a"], [None, "a"], 2) == 1.0
    assert m.mrecall_at_k_strict(["a", "b"], [None, None, "a", "b"], 3) == 0.0
    assert m.dedupe(["b", None, "b", None, "a"]) == ["b", None, None, "a"]


# ---- RAG single answer ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("gold", "pred", "em_loft", "em_strict"),
    [
        (["Paris"], ["paris."], 1.0, 1.0),
        (["The Paris"], ["Paris"], 1.0, 1.0),
        (["Paris", "City of Light"], ["the city of light"], 1.0, 1.0),
        (["Paris"], ["Berlin", "Paris"], 0.0, 0.0),  # only the first answer counts
        (["Paris"], [], 0.0, 0.0),
        ([], ["Paris"], 0.0, 0.0),  # upstream crashes on an empty gold list
        (["the"], ["a"], 1.0, 0.0),  # both normalise to ""
        (["Röntgen"], ["Rontgen"], 0.0, 0.0),  # NFD keeps the combining mark
        (["5"], [5], 1.0, 1.0),  # numbers are compared as text
    ],
)
def test_em(gold: list[str], pred: list, em_loft: float, em_strict: float) -> None:
    assert m.em_loft(gold, pred) == em_loft
    assert m.em_strict(gold, pred) == em_strict


@pytest.mark.parametrize(
    ("gold", "pred", "loft", "strict"),
    [
        (["Paris"], ["It is Paris, France"], 1.0, 1.0),
        (["Paris, France"], ["Paris"], 0.0, 0.0),  # gold in answer, not the reverse
        (["Berlin", "Paris"], ["paris"], 1.0, 1.0),
        (["the"], ["Berlin"], 1.0, 0.0),  # a gold normalising to "" is in every answer
        (["par"], ["Paris"], 1.0, 1.0),  # plain substring, not word-bounded
        (["Paris"], ["."], 0.0, 0.0),
        (["Paris"], [], 0.0, 0.0),
    ],
)
def test_subspan_em(gold: list[str], pred: list, loft: float, strict: float) -> None:
    assert m.subspan_em_loft(gold, pred) == loft
    assert m.subspan_em_strict(gold, pred) == strict


@pytest.mark.parametrize(
    ("gold", "pred", "loft", "strict"),
    [
        # tokens: pred {big, red, dog}, gold {red, dog}: P 2/3, R 1, F1 0.8
        (["red dog"], ["the big red dog"], 0.8, 0.8),
        (["cat", "red dog"], ["big red dog"], 0.8, 0.8),  # best over golds
        (["w x y z"], ["x y q"], 4 / 7, 4 / 7),  # P 2/3, R 2/4, F1 = 2*(2/3)(1/2)/(7/6)
        (["a b c d"], ["b c x"], 2 / 3, 2 / 3),  # "a" is an article: gold is b c d
        (["dog dog cat"], ["dog"], 0.5, 0.5),  # multiset overlap 1: P 1, R 1/3
        (["red"], ["blue"], 0.0, 0.0),
        (["the"], ["a"], 0.0, 0.0),  # two empty sides: 0 (upstream checks overlap first)
        (["red"], [], 0.0, 0.0),
    ],
)
def test_token_f1(gold: list[str], pred: list, loft: float, strict: float) -> None:
    assert m.f1_loft(gold, pred) == pytest.approx(loft)
    assert m.f1_strict(gold, pred) == pytest.approx(strict)


# ---- RAG several answers --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("gold", "pred", "loft", "strict"),
    [
        (["Alpha", "Beta"], ["beta", "alpha"], 1.0, 1.0),
        (["Alpha", "Beta"], ["alpha"], 0.0, 0.0),
        (["Alpha", "Beta"], ["alpha", "beta", "gamma"], 1.0, 1.0),  # extras are free
        # either direction of containment counts
        (["Alpha Centauri", "Beta"], ["alpha", "the beta star"], 1.0, 1.0),
        # one-to-one: a single answer cannot match two golds
        (["New York", "York"], ["new york city"], 0.0, 0.0),
        (["New York", "York"], ["new york city", "york"], 1.0, 1.0),
        # an answer normalising to "" matches any gold under loft
        (["Alpha"], ["the"], 1.0, 0.0),
        # duplicated answers: loft can assign each copy once, strict de-duplicates first
        (["Alpha", "Alpha Beta"], ["alpha beta", "alpha beta"], 1.0, 0.0),
        (["Alpha"], [], 0.0, 0.0),
        ([], ["x"], 1.0, 0.0),  # upstream: nothing to match is a full match
    ],
)
def test_multi_subspan_em(gold: list[str], pred: list, loft: float, strict: float) -> None:
    assert m.multi_subspan_em_loft(gold, pred) == loft
    assert m.multi_subspan_em_strict(gold, pred) == strict


def test_assigned_matches_maximises_the_assignment() -> None:
    # gold g0 matches p0 and p1, g1 only p0: the best assignment uses both.
    assert m.assigned_matches(["ab", "a"], ["ab", "abc"]) == 2
    assert m.assigned_matches(["x"], []) == 0


@pytest.mark.parametrize(
    ("gold", "pred", "em_loft", "em_strict", "coverage_loft", "coverage_strict"),
    [
        (["Alpha", "Beta"], ["beta", "alpha"], 1.0, 1.0, 1.0, 1.0),
        (["Alpha", "Beta"], ["alpha", "gamma"], 0.0, 0.0, 0.5, 0.5),
        (["Alpha", "Beta"], ["alpha", "alpha"], 0.0, 0.0, 0.5, 0.5),
        (["Alpha", "Alpha", "Beta"], ["alpha"], 0.0, 0.0, 1 / 3, 0.5),  # gold duplicates
        (["Alpha"], ["alpha", "the"], 0.0, 1.0, 1.0, 1.0),  # "" is an extra answer under loft
        (["Alpha"], [], 0.0, 0.0, 0.0, 0.0),
    ],
)
def test_multi_em_and_coverage(
    gold: list[str], pred: list, em_loft: float, em_strict: float, coverage_loft: float, coverage_strict: float
) -> None:
    assert m.multi_em_loft(gold, pred) == em_loft
    assert m.multi_em_strict(gold, pred) == em_strict
    assert m.coverage_loft(gold, pred) == pytest.approx(coverage_loft)
    assert m.coverage_strict(gold, pred) == pytest.approx(coverage_strict)


@pytest.mark.parametrize(
    ("gold", "pred", "debatable", "expected"),
    [
        (["A1", "B1"], ["a1", "c1"], (), (0.5, 0.5, 0.5, 0.0)),
        (["A1", "B1"], ["a1", "b1"], (), (1.0, 1.0, 1.0, 1.0)),
        # P 1/3, R 1/2: F1 = 2(1/6)/(5/6) = 0.4
        (["A1", "B1"], ["a1", "c1", "d1"], (), (1 / 3, 0.5, 0.4, 0.0)),
        (["A1", "B1"], [], (), (0.0, 0.0, 0.0, 0.0)),
        ([], [], (), (1.0, 1.0, 1.0, 1.0)),
        ([], ["x1"], (), (0.0, 0.0, 0.0, 0.0)),
        # DEBATABLE answers leave both sets: c1 is no longer a precision error, b1 no recall one
        (["A1", "B1"], ["a1", "c1"], ("C1", "B1"), (1.0, 1.0, 1.0, 1.0)),
    ],
)
def test_set_scores_loft(gold: list[str], pred: list, debatable: tuple, expected: tuple) -> None:
    scores = m.set_scores_loft(gold, pred, debatable)
    assert (scores.precision, scores.recall, scores.f1, scores.accuracy) == pytest.approx(expected)


def test_set_scores_strict_ignores_empty_answers() -> None:
    loft = m.set_scores_loft(["A1"], ["a1", "the"])
    strict = m.set_scores_strict(["A1"], ["a1", "the"])
    assert (loft.precision, loft.accuracy) == (0.5, 0.0)
    assert (strict.precision, strict.recall, strict.f1, strict.accuracy) == (1.0, 1.0, 1.0, 1.0)


# ---- ICL ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("gold", "pred", "loft", "strict"),
    [
        (["(B)"], ["(B)"], 1.0, 1.0),
        (["(B)"], ["(C)"], 0.0, 0.0),
        # "(A)" normalises to "" upstream, so any answer normalising to "" is "right"
        (["(A)"], ["(A)"], 1.0, 1.0),
        (["(A)"], ["the"], 1.0, 0.0),
        (["(A)"], ["A"], 1.0, 1.0),
        (["(B)"], ["B."], 1.0, 1.0),
        # gold = target.split(" "): any word of the target is enough upstream
        (["per:title", "per:boss"], ["per:boss"], 1.0, 0.0),
        (["no", "way"], ["no way"], 0.0, 1.0),
        (["Yes"], ["yes", "no"], 1.0, 0.0),  # first answer only vs the whole answer
        (["Yes"], [], 0.0, 0.0),
    ],
)
def test_icl_em(gold: list[str], pred: list, loft: float, strict: float) -> None:
    assert m.icl_em_loft(gold, pred) == loft
    assert m.icl_em_strict(gold, pred) == strict


# ---- related methods ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("gold", "raw", "expected"),
    [
        (["Paris"], "The capital is Paris.\nBerlin", 1.0),
        (["Berlin"], "The capital is Paris.\nBerlin", 0.0),  # first line only
        (["Paris"], "\nParis", 0.0),  # an empty first line
        (["Röntgen"], "Wilhelm Röntgen", 1.0),
        (["the"], "anything", 1.0),  # an empty normalised gold is in every line
        (["Paris"], None, 0.0),
    ],
)
def test_litm_best_subspan_em(gold: list[str], raw: str | None, expected: float) -> None:
    assert m.litm_best_subspan_em(gold, raw) == expected


@pytest.mark.parametrize(
    ("gold", "pred", "expected"),
    [
        (["Barack Obama"], ["obama, barack"], 1.0),  # same words, any order
        (["Barack Obama"], ["Obama"], 1.0),  # the answer's words are all in the gold
        (["Obama"], ["President Barack Obama"], 1.0),  # the gold's words are all in the answer
        (["Barack Obama"], ["Michelle Obama"], 0.0),
        (["Paris"], ["!!!"], 0.0),  # no words at all is not a match
        (["Paris"], [], 0.0),
        (["x", "Paris"], ["paris"], 1.0),
    ],
)
def test_rr_fuzzy_match(gold: list[str], pred: list, expected: float) -> None:
    assert m.rr_fuzzy_match(gold, pred) == expected
