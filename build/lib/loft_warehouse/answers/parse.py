"""Read the answer list out of a model's generation, under two named rules.

`parse_loft` reproduces the upstream LOFT extraction, quirks included, because published
numbers depend on it: markdown `*` and backticks are deleted, the **first** line holding both
`[` and `]` wins (even a bracket in an earlier reasoning line), the text from its first `[` to
its last `]` is read as a Python literal after escaping apostrophes between letters or digits
(`devil's` -> `devil\\'s`), and any failure gives an empty answer.

`parse_strict` anchors on the **last** `Final Answer:` in the generation (ICL: the first line,
which continues the prompt's trailing `Output:`; a repeated leading `Output:` is skipped),
ignoring anything after the model starts a new `======` example block; it reads the bracketed
list that follows (across lines if need be) and repairs unquoted lists such as
`[Paris, Berlin]` or a bare `Final Answer: Paris`, flagging the repair in the status.

Both return plain Python values (a list whose items may be strings, numbers, None or nested
lists for SQL rows) and need no database, so multi-turn inference can call them directly.
"""

from __future__ import annotations

import ast
import json
import math
import re
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# Statuses shared by both rules.
OK = "ok"
EMPTY_LIST = "empty_list"
NO_TEXT = "no_text"
UNPARSABLE = "unparsable"
# parse_loft only: no line holds both brackets.
NO_LIST = "no_list"
# parse_strict only.
NO_MARKER = "no_marker"
REPAIRED = "repaired"

_INNER_APOSTROPHE = re.compile(r"([a-zA-Z0-9])'([a-zA-Z0-9])")
_SIMPLE_ITEM_PATTERN = r"""'[^'\\\n\r\x00]*'|"[^"\\\n\r\x00]*"|0|[1-9][0-9]*"""
_SIMPLE_ITEM = re.compile(_SIMPLE_ITEM_PATTERN)
_SIMPLE_LIST = re.compile(
    rf"""\[[ \t]*(?:(?:{_SIMPLE_ITEM_PATTERN})[ \t]*(?:,[ \t]*(?:{_SIMPLE_ITEM_PATTERN})[ \t]*)*(?:,[ \t]*)?)?\]\Z"""
)
_NEW_EXAMPLE = re.compile(r"^\s*======", re.MULTILINE)
_MARKERS = {
    "icl": re.compile(r"output\s*:", re.IGNORECASE),
    "default": re.compile(r"final\s+answer\s*:", re.IGNORECASE),
}


@dataclass(frozen=True)
class Parsed:
    """The answers read from one generation, how reading went, and the line they came from."""

    answers: list[Any]
    status: str
    line: str | None = None


def _strip_markdown(text: str) -> str:
    return text.replace("*", "").replace("`", "")


def _simple_list(chunk: str) -> list[Any] | None:
    """The common case without ast: a flat list of plain quoted strings (no backslash, no
    quote inside) and non-negative integers without leading zeros. Returns None for anything
    else, which then goes to ast.literal_eval; for the lists it accepts the result is the same."""
    if not _SIMPLE_LIST.match(chunk):
        return None
    return [int(item) if item[0] not in "'\"" else item[1:-1] for item in _SIMPLE_ITEM.findall(chunk)]


def _literal_list(chunk: str) -> Any:
    """ast.literal_eval, with the common simple list read directly (it is ~5x faster)."""
    simple = _simple_list(chunk)
    if simple is not None:
        return simple
    with warnings.catch_warnings():
        # Model text such as '\d' is an invalid escape: Python warns, the literal still reads.
        warnings.simplefilter("ignore")
        return ast.literal_eval(chunk)


def _escape_inner_apostrophes(chunk: str) -> str:
    return _INNER_APOSTROPHE.sub(r"\1\\'\2", chunk)


def _loft_literal(text: str | None) -> tuple[list[Any] | tuple[Any, ...], str, str | None]:
    """The literal upstream's extraction reads (a list, or a tuple for "[1], [2]"), its status
    and the line it came from; [] when nothing reads."""
    if text is None or not text.strip():
        return [], NO_TEXT, None
    for line in _strip_markdown(text).strip().split("\n"):
        if "[" in line and "]" in line:
            chunk = line[line.find("[") : line.rfind("]") + 1].strip()
            try:
                value = _literal_list(_escape_inner_apostrophes(chunk))
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                return [], UNPARSABLE, line
            # The chunk starts with "[" and ends with "]": a list, or a tuple for "[1], [2]".
            return value, OK if value else EMPTY_LIST, line
    return [], NO_LIST, None


def parse_loft_result(text: str | None) -> Parsed:
    """The upstream LOFT rule, with the reason when it yields nothing."""
    value, status, line = _loft_literal(text)
    return Parsed(list(value), status, line)


def loft_feedback(text: str | None, shown_to_pid: Mapping[str, str] | None = None) -> str:
    """What LOFT's conversation loop appends after a turn (utils.run_one_example): `str()` of
    the answers its extraction read, the literal as read (a tuple stays a tuple), each ID
    mapped to its pid for retrieval (then a list), as run_inference's pid_mapper does. An ID
    the corpus lacks stays as read: LOFT's run stops there, the warehouse goes on."""
    value, _, _ = _loft_literal(text)
    if shown_to_pid is None:
        return str(value)
    return str([shown_to_pid.get(str(answer), answer) for answer in value])


def parse_loft(text: str | None) -> list[Any]:
    """Answers under the upstream rule ([] when nothing parses), as a list."""
    return parse_loft_result(text).answers


def _matching_bracket(text: str, start: int) -> int | None:
    """Index of the `]` closing the `[` at `start`, skipping brackets inside quotes."""
    depth = 0
    quote: str | None = None
    i = start
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = None
        elif ch in "'\"":
            # An apostrophe inside a word (devil's) does not open a string.
            if not (ch == "'" and 0 < i < len(text) - 1 and text[i - 1].isalnum() and text[i + 1].isalnum()):
                quote = ch
        elif ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return None


def _literal(chunk: str) -> Any:
    """A bracketed chunk as a Python literal, then with inner apostrophes escaped, then as JSON."""
    for candidate in (chunk, _escape_inner_apostrophes(chunk)):
        try:
            return _literal_list(candidate)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            pass
    try:
        return json.loads(chunk)
    except (ValueError, RecursionError):
        return None


def _unquote(item: str) -> str:
    item = item.strip()
    if len(item) >= 2 and item[0] == item[-1] and item[0] in "'\"":
        return item[1:-1].strip()
    return item


def _repair_flat_list(chunk: str) -> list[str] | None:
    """`[Paris, Berlin]` -> ['Paris', 'Berlin']; nested or empty content cannot be repaired."""
    inner = chunk[1:-1]
    if "[" in inner or "]" in inner:
        return None
    items = [_unquote(part) for part in inner.split(",")]
    items = [item for item in items if item]
    return items or None


def parse_strict_result(text: str | None, task: str | None = None) -> Parsed:
    """The strict rule: the list after the last answer marker of the model's own answer."""
    if text is None or not text.strip():
        return Parsed([], NO_TEXT)
    cleaned = _strip_markdown(text)
    cut = next((m.start() for m in _NEW_EXAMPLE.finditer(cleaned) if m.start() > 0), None)
    if cut is not None:
        cleaned = cleaned[:cut]
    if task == "icl":
        # The ICL prompt ends with "Output:": the generation continues that line, so its first
        # line is the answer (after an `Output:` the model may repeat); later lines are
        # examples the model goes on to invent.
        rest = cleaned.lstrip()
        leading = _MARKERS["icl"].match(rest)
        rest = rest[leading.end() :] if leading else rest
    else:
        markers = list(_MARKERS["default"].finditer(cleaned))
        if not markers:
            return Parsed([], NO_MARKER)
        rest = cleaned[markers[-1].end() :]
    line = rest.partition("\n")[0]
    if not line.strip():
        # "Final Answer:" alone on its line: the answer is on the next non-blank line.
        rest = rest.lstrip()
        line = rest.partition("\n")[0]
    bracket = line.find("[")
    if bracket < 0:
        bare = _unquote(line.strip())
        return Parsed([bare], REPAIRED, line.strip()) if bare else Parsed([], UNPARSABLE)
    end = _matching_bracket(rest, bracket)
    chunk = rest[bracket : end + 1] if end is not None else line[bracket : line.rfind("]") + 1]
    value = _literal(chunk) if chunk else None
    if isinstance(value, (list, tuple)):
        answers = list(value)
        return Parsed(answers, OK if answers else EMPTY_LIST, chunk)
    repaired = _repair_flat_list(chunk) if chunk else None
    if repaired is not None:
        return Parsed(repaired, REPAIRED, chunk)
    return Parsed([], UNPARSABLE, line.strip())


def parse_strict(text: str | None, task: str | None = None) -> list[Any]:
    """Answers under the strict rule ([] when nothing usable follows the last marker)."""
    return parse_strict_result(text, task).answers


def to_json_value(value: Any) -> Any:
    """A parsed literal as JSON-safe data: tuples and sets become lists, exotic scalars text."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, (list, tuple)):
        return [to_json_value(item) for item in value]
    if isinstance(value, (set, frozenset)):
        return [to_json_value(item) for item in sorted(value, key=repr)]
    if isinstance(value, dict):
        return {str(key): to_json_value(item) for key, item in value.items()}
    return str(value)


def loaded_json_text(value: Any) -> str:
    """JSON text of a value json.loads produced, as json.dumps(to_json_value(value)) writes it.

    Such a value holds only JSON's types, which to_json_value keeps as they are, except NaN and
    infinities (json.loads accepts them; to_json_value writes them as text). allow_nan=False
    refuses exactly those, so the walk over the value is only taken for them."""
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False)
    except ValueError:
        return json.dumps(to_json_value(value), ensure_ascii=False)


def answer_texts(answers: list[Any]) -> list[str]:
    """Each answer as upstream turns it into text (`str()`), e.g. 5 -> '5', None -> 'None'."""
    return [str(answer) for answer in answers]
