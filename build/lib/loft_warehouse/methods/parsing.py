"""How a response of any method and stage is read, under the upstream (`loft`) or `strict` rule.

The stage's `parse` (methods.catalogue) decides: `answers` is the answer list every LOFT prompt
asks for (answers.parse: parse_loft / parse_strict), `justified` QUEST-LOFT's JSON answer and
`verdict` a verification judgment (methods.justified). The result is one shape for all: the
answers, the parse status, a detail when reading failed, and the payload a later stage needs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from loft_warehouse.answers.parse import parse_loft_result, parse_strict_result
from loft_warehouse.methods import justified
from loft_warehouse.methods.catalogue import method

RULES = ("loft", "strict")


@dataclass(frozen=True)
class StageParse:
    """A response as read under one rule."""

    answers: list[Any]
    status: str
    detail: str | None = None
    payload: dict[str, Any] | None = None


def parse_response(
    text: str | None, rule: str, task: str | None, method_name: str = "cic", stage: int = 1, payload: str | None = None
) -> StageParse:
    """Read one response of (method, stage) under `rule`."""
    if rule not in RULES:
        raise ValueError(f"unknown parse rule {rule!r}")
    kind = method(method_name).stage(stage).parse
    if kind == "justified":
        answers, status, detail, found = justified.parse_answer(text, rule)
        return StageParse(answers, status, detail, found)
    if kind == "verdict":
        given = json.loads(payload) if payload else {}
        if given.get("nothing_to_verify"):
            return StageParse([], justified.NOTHING_TO_VERIFY)
        answers, status, detail = justified.parse_verdict(text, rule, str(given.get("candidate", "")))
        return StageParse(answers, status, detail)
    result = parse_loft_result(text) if rule == "loft" else parse_strict_result(text, task)
    return StageParse(result.answers, result.status)
