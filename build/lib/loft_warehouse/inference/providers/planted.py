"""A planted-effect test system: answers right with a probability set by each prompt's features.

It exists to prove the marts, never to be measured: it reads each prompt's gold and answers it
in the answer format of the prompt's method and stage, or gives a wrong answer of the same shape:
- an answer list (`Final Answer: [...]`): the gold shown IDs for retrieval, the gold answers for
  RAG, ICL and the positional studies (Lost in the Middle, R&R), the gold rows for SQL; wrong,
  one shown document or text outside the gold;
- ICR pages (stage 1 of icr, r_and_r, chunked ICR): the gold pages the call shows; wrong, the
  page beside the first gold page (or, with none shown, the first page outside the gold);
- a justified QA answer (QUEST-LOFT JSON, every field its strict schema needs): each gold answer
  as a candidate judged TRUE, citing the gold documents; wrong, one text outside the gold judged
  TRUE, citing a document outside the gold;
- a verification verdict: TRUE when the candidate is a gold answer (LOFT normalisation), FALSE
  otherwise; wrong, the other verdict.

Whether a prompt is answered right follows the system's `options`:

    options:
      seed: 7
      base: 0.8                      # probability before effects
      effects:                       # added per feature value
        size: {"1m": -0.2}
        variant: {no_cot: -0.2, closed_book: -0.5}
        gold_shown: {"false": -0.6}  # the prompt shows no gold document
      depth_slope: -0.3              # times the gold's relative depth (0 first .. 1 last)

clamped to [0, 1]; the features are task, dataset, size, variant, method, split, stage and
gold_shown (retrieval and RAG: whether the prompt shows a gold document). The draws are
systematic within each group of prompts that share their features but depth and gold_shown
(task, dataset, variant, method, stage, split): ordered by a seeded hash of the size and prompt
id (so the draws of two sizes are independent), a prompt is right when the running sum of the
group's probabilities crosses an integer, from a seeded offset. Each prompt is still right with
exactly its probability, and each group has the floor or the ceiling of the sum of its
probabilities right, so a mart cell that is one or more whole groups recovers its planted value
to the count. Prompts without their gold are an error naming why. Its responses go to their own
store, and it runs in a build of its own.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from typing import Any

import polars as pl

from loft_warehouse.answers.normalize import normalize_answer
from loft_warehouse.errors import ConfigurationError
from loft_warehouse.inference.providers.base import Completion, PermanentError, Request, RunData
from loft_warehouse.inference.systems import System
from loft_warehouse.methods.catalogue import method

GROUP = ("task", "dataset", "variant", "method", "stage", "split")
FEATURES = ("task", "dataset", "size", "variant", "method", "split", "stage", "gold_shown")
TASKS = frozenset({"retrieval", "rag", "icl", "sql", "litm", "rr"})
DOCUMENT_TASKS = frozenset({"retrieval", "rag"})
# A wrong text answer is the first of these that holds no gold answer (a yes/no question's
# "no" is a subspan of "none of these").
WRONG_TEXTS = ("none of these", "zzzz", "qqqq xxxx")


def planted_probability(row: Mapping[str, Any], size: str, options: Mapping[str, Any]) -> float:
    """The probability that the planted system answers a prompt row right."""
    shown = None if row.get("task") not in DOCUMENT_TASKS else str(row.get("gold_depth") is not None).lower()
    features = {**row, "size": size, "gold_shown": shown}
    effects = options.get("effects") or {}
    p = float(options.get("base", 0.5))
    for feature in FEATURES:
        p += float((effects.get(feature) or {}).get(str(features.get(feature)), 0.0))
    depth = row.get("gold_depth")
    if depth is not None:
        p += float(options.get("depth_slope", 0.0)) * float(depth)
    return min(1.0, max(0.0, p))


def _unit(seed: int, text: str) -> float:
    digest = hashlib.sha256(f"{seed}/{text}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def planted_decisions(rows: pl.DataFrame, size: str, options: Mapping[str, Any]) -> dict[str, bool]:
    """prompt_id -> answered right, by systematic sampling within each group (module docstring)."""
    seed = int(options.get("seed", 0))
    decisions: dict[str, bool] = {}
    for group, frame in rows.group_by(list(GROUP), maintain_order=True):
        ordered = sorted(frame.iter_rows(named=True), key=lambda r: _unit(seed, f"{size}/{r['prompt_id']}"))
        total = _unit(seed, f"offset/{size}/" + "/".join(map(str, group)))
        for row in ordered:
            before = math.floor(total)
            total += planted_probability(row, size, options)
            decisions[row["prompt_id"]] = math.floor(total) > before
    return decisions


class PlantedProvider:
    """Answers each prompt of each stage right or wrong as planted_decisions says."""

    def __init__(self, system: System, prompts: pl.DataFrame, doc_ids: pl.DataFrame | None, size: str) -> None:
        if "gold" not in prompts.columns:
            raise ConfigurationError(f"system {system.name}: the planted provider needs the prompts' gold")
        self.system = system
        self.decisions = planted_decisions(prompts, size, system.options)
        self.shown: dict[tuple[str, str, str, str], list[str]] = {}
        if doc_ids is not None:
            for key, frame in doc_ids.group_by(["task", "dataset", "corpus_id", "variant"], maintain_order=True):
                self.shown[tuple(str(k) for k in key)] = [str(s) for s in frame["shown_id"]]  # type: ignore[index]

    def _outside(self, row: dict[str, Any], gold: list[Any]) -> str:
        """A shown ID of the row's variant that is not a gold one."""
        shown = self.shown.get((row["task"], row["dataset"], row["corpus_id"], row["variant"]), [])
        other = next((s for s in shown if s not in set(gold)), None)
        if other is None:
            raise PermanentError(f"planted: no shown document outside the gold of {row['prompt_id']}")
        return other

    def _wrong_text(self, row: dict[str, Any], gold: list[Any]) -> str:
        golds = [str(g).lower() for g in gold]
        text = next((t for t in WRONG_TEXTS if not any(g and g in t for g in golds)), None)
        if text is None:
            raise PermanentError(f"planted: every wrong answer it knows holds a gold of {row['prompt_id']}")
        return text

    def _answers(self, row: dict[str, Any], right: bool) -> str:
        if row["task"] == "retrieval":
            gold = json.loads(row["gold_shown_ids"])
            answer: list[Any] = gold if right else [self._outside(row, gold)]
        else:
            gold = json.loads(row["gold"])
            wrong = self._wrong_text(row, gold)
            answer = gold if right else [[wrong]] if row["task"] == "sql" else [wrong]
        return f"Final Answer: {answer!r}"

    def _pages(self, row: dict[str, Any], right: bool) -> str:
        gold = json.loads(row["gold_shown_ids"])
        if right and gold:
            return f"Final Answer: {gold!r}"
        return f"Final Answer: {[str(wrong_page(gold, row.get('n_documents')))]!r}"

    def _justified(self, row: dict[str, Any], right: bool) -> str:
        gold_ids = json.loads(row["gold_shown_ids"])
        gold = [str(g) for g in json.loads(row["gold"])]
        if right:
            cited = gold_ids or [self._outside(row, [])]
            answers = gold
        else:
            cited, answers = [self._outside(row, gold_ids)], [self._wrong_text(row, gold)]
        candidates = [_candidate(answer, cited, "TRUE") for answer in answers]
        value = {"candidate_answers": candidates, "answer": answers, "answer_doc_ids": cited}
        return json.dumps(value, ensure_ascii=False)

    def _verdict(self, row: dict[str, Any], right: bool) -> str:
        candidate = str(json.loads(row.get("payload") or "{}").get("candidate", ""))
        gold = {normalize_answer(str(g)) for g in json.loads(row["gold"])}
        is_gold = normalize_answer(candidate) in gold
        return json.dumps(_candidate(candidate, [], "TRUE" if is_gold == right else "FALSE"), ensure_ascii=False)

    def complete(self, request: Request) -> Completion:
        row = request.row
        right = self.decisions.get(row.get("prompt_id", ""))
        if right is None or row.get("task") not in TASKS or row.get("gold") is None:
            raise PermanentError(
                f"planted answers prompts of {sorted(TASKS)} that carry their gold, not {row.get('prompt_id')}"
            )
        stage = method(row["method"]).stage(int(row["stage"]))
        if stage.parse == "verdict":
            text = self._verdict(row, right)
        elif stage.parse == "justified":
            text = self._justified(row, right)
        elif stage.ids == "pages":
            text = self._pages(row, right)
        else:
            text = self._answers(row, right)
        return Completion("ok", text, "stop")

    def close(self) -> None:
        self.decisions.clear()


def wrong_page(gold: list[str], n_pages: int | None) -> int:
    """A page beside the first gold page (after it, else before), so that two documents that
    differ in where their answer sits get different wrong pages (and different phase-2 prompts,
    which a store would otherwise answer once); without a gold page, the first non-gold page."""
    numbers = sorted(int(g) for g in gold)
    if numbers:
        after = numbers[0] + 1
        beside = after if (n_pages is None or after <= n_pages) and str(after) not in gold else numbers[0] - 1
        if beside >= 1 and str(beside) not in gold:
            return beside
    return next(p for p in range(1, len(gold) + 2) if str(p) not in set(gold))


def _candidate(answer: str, cited: list[str], judgment: str) -> dict[str, Any]:
    """One candidate of a justified answer (or a verdict), with every field of its schema."""
    return {
        "candidate_answer": answer,
        "evidence_for": [{"doc_id": doc_id, "text": ""} for doc_id in cited],
        "evidence_against": [],
        "reasoning": "planted",
        "final_judgment": judgment,
    }


def provider(system: System, run: RunData) -> PlantedProvider:
    """The planted-effects system over the run's prompts (providers/registry.py)."""
    return PlantedProvider(system, run.prompts, run.doc_ids, run.size)
