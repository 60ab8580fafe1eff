"""SQL execution accuracy: a model's answer rows scored against the gold result rows.

Two rules, both pure functions of (gold rows, predicted answer):

`exec_acc_loft` is LOFT's relaxed rule exactly as the official scorer applies it
(loft-reference §5):
- every cell is normalised: anything `float()` accepts (45, 45.0, "45", " 45 ", True, "1e3")
  becomes a number with two decimals ("45.00"); then `str(cell).strip().lower()`, so None is
  "none" and a nested list is its Python repr; cells that end up empty are dropped;
- each row becomes a set of its cells (duplicate cells and column order vanish);
- a flat predicted list (first item not a list) is one row;
- score 1 iff both have the same number of rows and every predicted row is one of the gold
  rows (membership: [[a], [a]] scores 1 against [[a], [b]]); row order is ignored;
- a string row is a sequence of characters, as upstream iterates it; a row that is not
  iterable at all (upstream raises) scores 0 here.

`exec_acc_strict` follows the Spider test-suite comparison (loft-reference §6): rows are
compared as multisets (as lists when the gold has ORDER BY), columns may be permuted as a
whole, cells are compared by value with no rounding and no case folding. The one leniency:
a number and the text of the same number are equal (45 == 45.0 == "45"), since the model reads
every value from CSV text and cannot tell a numeric column from a text column of digits.
None only equals None. A flat predicted list is one row.

SParC: `exec_acc_conversation` gives 1 only when every turn scores 1 (the paper's rule); the
upstream scorer averages turns instead, which is the per-turn mean of `exec_acc_loft`.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any


def _as_rows(answer: Any) -> list:
    """Upstream's shape rule: a list whose first item is not a list is a single row."""
    if not isinstance(answer, list):
        return []
    if answer and not isinstance(answer[0], list):
        return [answer]
    return answer


def _cell_loft(cell: Any) -> str:
    try:
        return f"{float(cell):.2f}".strip().lower()
    except (TypeError, ValueError, OverflowError):
        return str(cell).strip().lower()


# Text cells repeat across rows and systems, and most fail float() (an exception): once each.
_text_cell_loft = lru_cache(maxsize=2**16)(_cell_loft)


def normalize_cell_loft(cell: Any) -> str:
    """One cell as upstream normalises it (two-decimal numbers, then strip + lower)."""
    kind = type(cell)
    if kind is str:
        return _text_cell_loft(cell)
    if kind is float:
        return f"{cell:.2f}"  # already stripped and lower-case ('inf', 'nan')
    if cell is None:
        return "none"  # float(None) fails: str(None).lower()
    return _cell_loft(cell)


def cell_set_loft(row: Any) -> frozenset[str]:
    """A row as upstream compares it: the set of its non-empty normalised cells (TypeError for a
    row that is not iterable)."""
    return frozenset(filter(None, map(normalize_cell_loft, row)))


def exec_acc_loft(gold: Sequence[Sequence[Any]], predicted: Any) -> float:
    """LOFT's execution accuracy of one turn (see the module docstring)."""
    if not isinstance(gold, list) or not gold or not isinstance(gold[0], list):
        raise ValueError(f"gold answer must be a non-empty list of lists, got {gold!r}")
    predicted = _as_rows(predicted)
    if len(gold) != len(predicted):
        return 0.0
    try:
        gold_rows = set(map(cell_set_loft, gold))
        return float(all(row in gold_rows for row in map(cell_set_loft, predicted)))
    except TypeError:
        return 0.0


def _strict_cell(cell: Any) -> Any:
    """A cell for the strict rule: numbers and numeric text by exact value, text stripped."""
    kind = type(cell)
    if kind is str:
        return _strict_text(cell)
    if kind is float:
        return ("number", cell)
    if cell is None:
        return None
    if isinstance(cell, int | float):  # bool included: True is the number 1
        try:
            return ("number", float(cell))
        except OverflowError:
            return ("number", cell)  # an integer beyond float range equals only itself
    return ("text", repr(cell))


@lru_cache(maxsize=2**16)
def _strict_text(cell: str) -> tuple[str, Any]:
    text = cell.strip()
    try:
        number = float(text)
    except ValueError:
        return ("text", text)
    if math.isfinite(number):
        return ("number", number)
    return ("text", text)


def _strict_rows(answer: Any) -> list[tuple] | None:
    rows = _as_rows(answer)
    if not all(isinstance(row, list) for row in rows):
        return None
    return [tuple(map(_strict_cell, row)) for row in rows]


def _column_orders(gold: list[tuple], predicted: list[tuple], width: int) -> Iterable[tuple[int, ...]]:
    """Permutations of predicted columns whose column value multisets match the gold's.
    Counters built from items hold no zero counts, so dict equality (in C) is Counter equality."""
    gold_columns = [Counter(row[j] for row in gold) for j in range(width)]
    predicted_columns = [Counter(row[i] for row in predicted) for i in range(width)]
    candidates = [[i for i in range(width) if dict.__eq__(predicted_columns[i], gold_columns[j])] for j in range(width)]

    def extend(prefix: tuple[int, ...]) -> Iterable[tuple[int, ...]]:
        if len(prefix) == width:
            yield prefix
            return
        for i in candidates[len(prefix)]:
            if i not in prefix:
                yield from extend((*prefix, i))

    return extend(())


def exec_acc_strict(gold: Sequence[Sequence[Any]], predicted: Any, ordered: bool = False) -> float:
    """Test-suite style execution accuracy of one turn (see the module docstring)."""
    gold_rows = _strict_rows(gold)
    if gold_rows is None or not gold_rows:
        raise ValueError(f"gold answer must be a non-empty list of lists, got {gold!r}")
    predicted_rows = _strict_rows(predicted)
    if not predicted_rows or len(predicted_rows) != len(gold_rows):
        return 0.0
    width = len(gold_rows[0])
    if any(len(row) != width for row in gold_rows + predicted_rows):
        return 0.0
    bag = None if ordered or len(gold_rows) == 1 else Counter(gold_rows)  # one row: its multiset is the list

    def matches(rows: list[tuple]) -> bool:
        return rows == gold_rows if bag is None else dict.__eq__(Counter(rows), bag)

    if matches(predicted_rows):
        return 1.0  # the columns as given: the first order the search below would try
    if width == 1:
        return 0.0  # one column: the order as given is the only one
    return float(
        any(
            matches([tuple(row[i] for i in order) for row in predicted_rows])
            for order in _column_orders(gold_rows, predicted_rows, width)
        )
    )


def exec_acc_conversation(turn_scores: Sequence[float]) -> float:
    """SParC per conversation (paper): 1 iff every turn scored 1; 0 for no turns."""
    return float(bool(turn_scores) and all(score == 1 for score in turn_scores))


def exec_acc_turn_average(turn_scores: Sequence[float]) -> float:
    """SParC as upstream reports it: the mean over turns (0 for no turns)."""
    return sum(turn_scores) / len(turn_scores) if turn_scores else 0.0
