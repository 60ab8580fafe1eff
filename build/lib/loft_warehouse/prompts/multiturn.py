"""Multi-turn prompts: turn t is sent with every earlier turn and the model's earlier answers.

The answers are not known when prompts are built, so the suffix of turn t holds one placeholder
per earlier turn, `<<MODEL_ANSWER turn=s>>`, right after that turn's text; the inference step
fills them with fill_model_answers once turns 0..t-1 have been answered. What fills them is what
LOFT's conversation loop (utils.run_one_example) appends after a turn: `str()` of the answers its
extraction read (`answers.parse.loft_feedback`), with no line break before the next turn.
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
    """`Final Answer: [...]`, the list written as a Python literal (strings quoted), as the
    few-shot examples write their answers and upstream's parser reads them back."""
    return f"Final Answer: {list(values)!r}"


def placeholder_turns(text: str) -> list[int]:
    """The earlier turns whose answers a text still waits for, in order of appearance."""
    return [int(m) for m in _PLACEHOLDER_RE.findall(text)]


def fill_model_answers(suffix: str, answers: Sequence[str | None]) -> str:
    """Replace every `<<MODEL_ANSWER turn=s>>` with answers[s], the text fed back for turn s
    (answers.parse.loft_feedback; None stands for `[]`, what LOFT feeds back when nothing
    parsed). A placeholder without an answer is an error, never left in."""

    def fill(match: re.Match[str]) -> str:
        turn = int(match.group(1))
        if turn >= len(answers):
            raise ValueError(f"the prompt waits for the answer of turn {turn}; {len(answers)} answer(s) given")
        return answers[turn] or "[]"

    return _PLACEHOLDER_RE.sub(fill, suffix)
