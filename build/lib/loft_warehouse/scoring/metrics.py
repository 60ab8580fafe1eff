"""Reference implementations of every metric the warehouse reports, one value per query turn.

`*_loft` functions reproduce the upstream LOFT scorer exactly, including its quirks (prefix
then de-duplicate in recall@k, gold duplicates counted, the first predicted answer only for
RAG/ICL, substring matching in either direction for multi-answer RAG, a prediction that
normalises to "" matching every gold). Where upstream crashes (empty gold lists) they return 0.
`*_strict` functions fix what is arguably wrong: duplicates removed before the cut-off, gold
counted as a set, answers that normalise to "" ignored, ICL compared on the whole answer.

The SQL macros compute the same values inside DuckDB; the tests hold both to hand-computed
numbers. Functions SQL handles awkwardly (token F1, the one-to-one assignment) are registered
as DuckDB functions from here (see `duckdb_functions`). Inputs are raw strings: each function
normalises as its convention says, so callers never pre-normalise.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from loft_warehouse.answers.normalize import (
    answer_tokens,
    normalize_answer,
    normalize_label,
    normalize_litm,
    rr_words,
)

RECALL_KS = (1, 2, 3, 5)


# ---- retrieval -------------------------------------------------------------------------------


def recall_at_k_loft(gold: Sequence[str], pred: Sequence[str], k: int) -> float:
    """Distinct ids among the first k predictions that are gold, over len(gold) with duplicates."""
    if not pred or not gold:
        return 0.0
    return len(set(pred[:k]) & set(gold)) / len(gold)


def capped_recall_at_k_loft(gold: Sequence[str], pred: Sequence[str], k: int) -> float:
    """recall@k whose denominator is k when there are more than k gold ids (upstream capped)."""
    if not pred or not gold:
        return 0.0
    return len(set(pred[:k]) & set(gold)) / min(k, len(gold))


def mrecall_at_k_loft(gold: Sequence[str], pred: Sequence[str], k: int) -> float:
    """1 iff the first k predictions hold min(k, len(gold)) distinct gold ids (upstream: an
    empty gold list with any prediction scores 1)."""
    if not pred:
        return 0.0
    return float(len(set(pred[:k]) & set(gold)) == min(k, len(gold)))


def dedupe(pred: Iterable[str | None]) -> list[str | None]:
    """Keep the first occurrence of each id in model order; None (an unknown id) is kept."""
    seen: set[str] = set()
    kept: list[str | None] = []
    for item in pred:
        if item is None:
            kept.append(None)
        elif item not in seen:
            seen.add(item)
            kept.append(item)
    return kept


def recall_at_k_strict(gold: Sequence[str], pred: Sequence[str | None], k: int) -> float:
    """Gold hits among the first k distinct predictions over the number of distinct gold ids.

    `pred` holds pids in model order with None for ids the corpus does not have; an unknown id
    takes its rank slot and never matches."""
    gold_set = set(gold)
    if not gold_set:
        return 0.0
    return len({p for p in dedupe(pred)[:k] if p is not None} & gold_set) / len(gold_set)


def mrecall_at_k_strict(gold: Sequence[str], pred: Sequence[str | None], k: int) -> float:
    """1 iff the first k distinct predictions hold min(k, distinct gold) gold ids."""
    gold_set = set(gold)
    if not gold_set:
        return 0.0
    hits = len({p for p in dedupe(pred)[:k] if p is not None} & gold_set)
    return float(hits == min(k, len(gold_set)))


def capped_recall_at_k_strict(gold: Sequence[str], pred: Sequence[str | None], k: int) -> float:
    """Gold hits among the first k distinct predictions over min(k, distinct gold ids)."""
    gold_set = set(gold)
    if not gold_set:
        return 0.0
    return len({p for p in dedupe(pred)[:k] if p is not None} & gold_set) / min(k, len(gold_set))


# ---- RAG, one answer per question -------------------------------------------------------------


def _first_normalized(pred: Sequence[object]) -> str | None:
    return normalize_answer(str(pred[0])) if pred else None


def em_loft(gold: Sequence[str], pred: Sequence[object]) -> float:
    """Only the first predicted answer counts: 1 iff it equals some gold after normalisation."""
    first = _first_normalized(pred)
    if first is None or not gold:
        return 0.0
    return float(any(normalize_answer(g) == first for g in gold))


def subspan_em_loft(gold: Sequence[str], pred: Sequence[object]) -> float:
    """1 iff some normalised gold is a substring of the normalised first answer ("" always is)."""
    first = _first_normalized(pred)
    if first is None or not gold:
        return 0.0
    return float(any(normalize_answer(g) in first for g in gold))


def _token_f1(gold_tokens: list[str], pred_tokens: list[str]) -> float:
    same = sum((Counter(gold_tokens) & Counter(pred_tokens)).values())
    if same == 0:
        return 0.0
    precision = same / len(pred_tokens)
    recall = same / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


def f1_loft(gold: Sequence[str], pred: Sequence[object]) -> float:
    """SQuAD token F1 of the first answer, best over golds (two empty sides score 0)."""
    if not pred or not gold:
        return 0.0
    pred_tokens = answer_tokens(str(pred[0]))
    return max(_token_f1(answer_tokens(g), pred_tokens) for g in gold)


def _strict_single(gold: Sequence[str], pred: Sequence[object]) -> tuple[list[str], str] | None:
    """Non-empty normalised golds and first answer, or None when either side is empty."""
    golds = [n for n in (normalize_answer(g) for g in gold) if n]
    first = _first_normalized(pred)
    if not golds or not first:
        return None
    return golds, first


def em_strict(gold: Sequence[str], pred: Sequence[object]) -> float:
    """em_loft, but golds and answers that normalise to "" never match."""
    sides = _strict_single(gold, pred)
    return float(sides is not None and sides[1] in sides[0])


def subspan_em_strict(gold: Sequence[str], pred: Sequence[object]) -> float:
    """subspan_em_loft, but an empty normalised gold no longer matches every answer."""
    sides = _strict_single(gold, pred)
    return float(sides is not None and any(g in sides[1] for g in sides[0]))


def f1_strict(gold: Sequence[str], pred: Sequence[object]) -> float:
    """f1_loft over the golds that do not normalise to ""."""
    sides = _strict_single(gold, pred)
    if sides is None:
        return 0.0
    pred_tokens = sides[1].split()
    return max(_token_f1(g.split(), pred_tokens) for g in sides[0])


# ---- RAG, several answers per question (QAMPARI, QUEST) --------------------------------------


def assigned_matches(gold: Sequence[str], pred: Sequence[str]) -> int:
    """Golds matched one-to-one to predictions (either contains the other), maximised by linear
    sum assignment. Inputs are already normalised."""
    if not gold or not pred:
        return 0
    from scipy.optimize import linear_sum_assignment  # imported here: a second to load, rarely needed

    scores = np.array([[float(g in p or p in g) for p in pred] for g in gold])
    rows, cols = linear_sum_assignment(-scores)
    return int(scores[rows, cols].sum())


def multi_subspan_em_loft(gold: Sequence[str], pred: Sequence[object]) -> float:
    """1 iff every gold is matched one-to-one; extra predictions are free; no prediction -> 0;
    an empty gold list -> 1 (upstream)."""
    if not pred:
        return 0.0
    golds = [normalize_answer(g) for g in gold]
    preds = [normalize_answer(str(p)) for p in pred]
    return float(assigned_matches(golds, preds) == len(golds))


def _strict_sets(gold: Sequence[str], pred: Sequence[object]) -> tuple[list[str], list[str]]:
    """Distinct non-empty normalised golds and predictions, in first-seen order."""
    golds = dedupe(n for n in (normalize_answer(g) for g in gold) if n)
    preds = dedupe(n for n in (normalize_answer(str(p)) for p in pred) if n)
    return golds, preds  # type: ignore[return-value]


def multi_subspan_em_strict(gold: Sequence[str], pred: Sequence[object]) -> float:
    """multi_subspan_em_loft over distinct non-empty answers; no gold -> 0."""
    golds, preds = _strict_sets(gold, pred)
    return float(bool(golds) and assigned_matches(golds, preds) == len(golds))


def multi_em_loft(gold: Sequence[str], pred: Sequence[object]) -> float:
    """1 iff the normalised answer set equals the normalised gold set (no prediction -> 0)."""
    if not pred:
        return 0.0
    return float({normalize_answer(g) for g in gold} == {normalize_answer(str(p)) for p in pred})


def coverage_loft(gold: Sequence[str], pred: Sequence[object]) -> float:
    """Distinct predicted answers equal to a gold, over len(gold) with duplicates."""
    if not pred or not gold:
        return 0.0
    golds = [normalize_answer(g) for g in gold]
    return len({normalize_answer(str(p)) for p in pred} & set(golds)) / len(golds)


def multi_value_scores_loft(gold: Sequence[str], pred: Sequence[object]) -> dict[str, float]:
    """What upstream reports for one multi-value question, keys included: an empty answer returns
    early with em, subspan_em and f1 (all 0) and no coverage; any other has em, coverage and
    subspan_em. Upstream means average each key over the rows that carry it."""
    if not pred:
        return {"em": 0.0, "subspan_em": 0.0, "f1": 0.0}
    return {
        "em": multi_em_loft(gold, pred),
        "coverage": coverage_loft(gold, pred),
        "subspan_em": multi_subspan_em_loft(gold, pred),
    }


def multi_em_strict(gold: Sequence[str], pred: Sequence[object]) -> float:
    """Set equality over distinct non-empty normalised answers; no gold -> 0."""
    golds, preds = _strict_sets(gold, pred)
    return float(bool(golds) and set(golds) == set(preds))


@dataclass(frozen=True)
class SetScores:
    """QUEST-LOFT answer-set metrics of one question."""

    precision: float
    recall: float
    f1: float
    accuracy: float


def _set_scores(golds: set[str], preds: set[str]) -> SetScores:
    hits = len(golds & preds)
    precision = hits / len(preds) if preds else float(not golds)
    recall = hits / len(golds) if golds else float(not preds)
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return SetScores(precision, recall, f1, float(golds == preds))


def set_scores_loft(gold: Sequence[str], pred: Sequence[object], debatable: Iterable[str] = ()) -> SetScores:
    """Precision, recall, F1 and accuracy (set equality) of the normalised answer set against
    the normalised gold set, after removing DEBATABLE answers from both (seed 002). An empty
    side scores 1 only against an empty other side."""
    removed = {normalize_answer(d) for d in debatable}
    golds = {normalize_answer(g) for g in gold} - removed
    return _set_scores(golds, {normalize_answer(str(p)) for p in pred} - removed)


def set_scores_strict(gold: Sequence[str], pred: Sequence[object], debatable: Iterable[str] = ()) -> SetScores:
    """set_scores_loft without answers (or golds) that normalise to ""."""
    removed = {normalize_answer(d) for d in debatable} | {""}
    golds = {normalize_answer(g) for g in gold} - removed
    return _set_scores(golds, {normalize_answer(str(p)) for p in pred} - removed)


def coverage_strict(gold: Sequence[str], pred: Sequence[object]) -> float:
    """Distinct non-empty predicted answers equal to a gold, over distinct non-empty golds."""
    golds, preds = _strict_sets(gold, pred)
    return len(set(golds) & set(preds)) / len(golds) if golds else 0.0


# ---- many-shot ICL -------------------------------------------------------------------------


def icl_em_loft(gold: Sequence[str], pred: Sequence[object]) -> float:
    """Upstream ICL accuracy: the gold is target.split(" "), so the first answer scores 1 when it
    equals ANY word of the target after normalisation."""
    return em_loft(gold, pred)


def icl_em_strict(gold: Sequence[str], pred: Sequence[object]) -> float:
    """1 iff the whole answer equals the whole target (words joined) under normalize_label,
    which keeps articles: upstream's normalisation maps "(A)" to "" and so credits any answer
    that also normalises to "" against target "(A)"."""
    target = normalize_label(" ".join(gold))
    answer = normalize_label(" ".join(str(p) for p in pred))
    return float(bool(target) and target == answer)


# ---- related methods ----------------------------------------------------------------------


def litm_best_subspan_em(gold: Sequence[str], raw_text: str | None) -> float:
    """Lost in the Middle: some normalised gold occurs in the normalised first line of the raw
    generation (their normalisation has no NFD; an empty gold matches)."""
    if raw_text is None:
        return 0.0
    first_line = normalize_litm(raw_text.split("\n")[0].strip())
    return float(any(normalize_litm(g) in first_line for g in gold))


def rr_fuzzy_match(gold: Sequence[str], pred: Sequence[object]) -> float:
    """R&R symmetric fuzzy match of the first answer: all unique words of a gold appear in it,
    or all of its words appear in that gold. An answer without words scores 0."""
    if not pred:
        return 0.0
    answer = rr_words(str(pred[0]))
    if not answer:
        return 0.0
    return float(any(g and (g <= answer or answer <= g) for g in map(rr_words, gold)))
