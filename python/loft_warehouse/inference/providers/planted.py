"""A planted-effect test system: answers right with a probability set by each prompt's features.

It exists to prove the marts, never to be measured: it reads each prompt's gold and answers it
in the prompt's own answer format (`Final Answer: [...]`: the gold shown IDs for retrieval, the
gold answers for RAG and ICL, the gold rows for SQL) or gives a wrong answer of the same shape.
Whether a prompt is answered right follows the system's `options`:

    options:
      seed: 7
      base: 0.8                      # probability before effects
      effects:                       # added per feature value (task, dataset, size, variant, method, split)
        size: {"1m": -0.2}
        variant: {no_cot: -0.2, closed_book: -0.5}
      depth_slope: -0.3              # times the gold's relative depth (0 first .. 1 last)

clamped to [0, 1]. The draws are systematic within each group of prompts that share their
features but depth (task, dataset, variant, method, split): ordered by a seeded hash of the
size and prompt id (so the draws of two sizes are independent), a prompt is right when the
running sum of the group's probabilities crosses an integer, from a seeded offset. Each prompt
is still right with exactly its probability, and each group has the floor or the ceiling of the
sum of its probabilities right, so a mart cell that is one or more
whole groups recovers its planted value to the count. It answers first-stage answer-list
prompts of LOFT's tasks only (the gold is on those rows); any other prompt is an error naming
why. Its responses go to their own store, and it runs in a build of its own.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from typing import Any

import polars as pl

from loft_warehouse.errors import ConfigurationError
from loft_warehouse.inference.providers.base import Completion, PermanentError, Request
from loft_warehouse.inference.systems import System

GROUP = ("task", "dataset", "variant", "method", "split")
FEATURES = ("task", "dataset", "size", "variant", "method", "split")
TASKS = frozenset({"retrieval", "rag", "icl", "sql"})
# A wrong text answer is the first of these that holds no gold answer (a yes/no question's
# "no" is a subspan of "none of these").
WRONG_TEXTS = ("none of these", "zzzz", "qqqq xxxx")


def planted_probability(row: Mapping[str, Any], size: str, options: Mapping[str, Any]) -> float:
    """The probability that the planted system answers a prompt row right."""
    features = {**row, "size": size}
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
    """Answers each first-stage prompt right or wrong as planted_decisions says."""

    def __init__(self, system: System, prompts: pl.DataFrame, doc_ids: pl.DataFrame | None, size: str) -> None:
        if "gold" not in prompts.columns:
            raise ConfigurationError(f"system {system.name}: the planted provider needs the prompts' gold")
        self.system = system
        self.decisions = planted_decisions(prompts.filter(pl.col("stage") == 1), size, system.options)
        self.shown: dict[tuple[str, str, str, str], list[str]] = {}
        if doc_ids is not None:
            for key, frame in doc_ids.group_by(["task", "dataset", "corpus_id", "variant"], maintain_order=True):
                self.shown[tuple(str(k) for k in key)] = [str(s) for s in frame["shown_id"]]  # type: ignore[index]

    def _wrong(self, row: dict[str, Any], gold: list[Any]) -> list[Any]:
        if row["task"] == "retrieval":
            shown = self.shown.get((row["task"], row["dataset"], row["corpus_id"], row["variant"]), [])
            other = next((s for s in shown if s not in set(gold)), None)
            if other is None:
                raise PermanentError(f"planted: no shown document outside the gold of {row['prompt_id']}")
            return [other]
        golds = [str(g).lower() for g in gold]
        text = next((t for t in WRONG_TEXTS if not any(g and g in t for g in golds)), None)
        if text is None:
            raise PermanentError(f"planted: every wrong answer it knows holds a gold of {row['prompt_id']}")
        return [[text]] if row["task"] == "sql" else [text]

    def complete(self, request: Request) -> Completion:
        row = request.row
        decision = self.decisions.get(row.get("prompt_id", ""))
        if decision is None or row.get("task") not in TASKS or row.get("gold") is None:
            raise PermanentError(
                f"planted answers first-stage prompts of {sorted(TASKS)} that carry their gold, "
                f"not {row.get('prompt_id')}"
            )
        gold = json.loads(row["gold_shown_ids"]) if row["task"] == "retrieval" else json.loads(row["gold"])
        answer = gold if decision else self._wrong(row, gold)
        return Completion("ok", f"Final Answer: {answer!r}", "stop", 0, 0, 0)

    def close(self) -> None:
        self.decisions.clear()
