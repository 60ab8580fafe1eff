"""Multi-turn prompts: turn t is sent with every earlier turn and the model's earlier answers.

The answers are not known when prompts are built, so the suffix of turn t holds one placeholder
per earlier turn, `<<MODEL_ANSWER turn=s>>` on a line of its own; the inference step fills them
with fill_model_answers once turns 0..t-1 have been answered. Upstream feeds back the parsed
answer list (not the generation), rendered as the few-shot examples render theirs:
`Final Answer: ['a', 'b']`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

PLACEHOLDER = "<<MODEL_ANSWER turn={turn}>>"
_PLACEHOLDER_RE = re.compile(r"<<MODEL_ANSWER turn=(\d+)>>")


def placeholder(turn: int) -> str:
    """The placeholder standing for the model's answer to an earlier turn."""
    return PLACEHOLDER.format(turn=turn)


def final_answer(values: Sequence[Any]) -> str:
    """`Final Answer: [...]`, the list written as a Python literal (strings quoted), which is
    what upstream's parser reads back with ast.literal_eval."""
    return f"Final Answer: {list(values)!r}"


def placeholder_turns(text: str) -> list[int]:
    """The earlier turns whose answers a text still waits for, in order of appearance."""
    return [int(m) for m in _PLACEHOLDER_RE.findall(text)]


def fill_model_answers(suffix: str, answers: Sequence[Sequence[Any] | None]) -> str:
    """Replace every `<<MODEL_ANSWER turn=s>>` with `Final Answer: {answers[s]}`.

    answers[s] is the parsed answer list of turn s (None or [] when nothing parsed, as upstream
    then feeds back an empty list). A placeholder without an answer is an error, never left in.
    """

    def fill(match: re.Match[str]) -> str:
        turn = int(match.group(1))
        if turn >= len(answers):
            raise ValueError(f"the prompt waits for the answer of turn {turn}; {len(answers)} answer(s) given")
        return final_answer(answers[turn] or [])

    return _PLACEHOLDER_RE.sub(fill, suffix)
