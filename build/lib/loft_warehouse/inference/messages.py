"""The messages of one request: a prompt row's text as a conversation (multi-turn: with answers)."""

from __future__ import annotations

from collections.abc import Sequence

from loft_warehouse.prompts.multiturn import fill_model_answers, placeholder, placeholder_turns


def build_messages(prefix: str, suffix: str, answers: Sequence[str | None]) -> list[dict[str, str]]:
    """The conversation for a prompt: the prefix and the suffix split at each earlier answer.

    `prefix` is everything before the suffix (head + shared prefix). A single-turn prompt is
    one user message, prefix + suffix. In a multi-turn suffix each
    `<<MODEL_ANSWER turn=s>>` becomes an assistant message holding what is fed back for turn s
    (LOFT's `str(answers)`); joined, the messages are exactly prefix + fill_model_answers(suffix,
    answers).
    """
    messages: list[dict[str, str]] = []
    pending = prefix
    rest = suffix
    for turn in placeholder_turns(suffix):
        mark = placeholder(turn)
        before, _, rest = rest.partition(mark)
        if pending + before:
            messages.append({"role": "user", "content": pending + before})
        messages.append({"role": "assistant", "content": fill_model_answers(mark, answers)})
        pending = ""
    messages.append({"role": "user", "content": pending + rest})
    return messages
