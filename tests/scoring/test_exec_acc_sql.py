"""SQL execution accuracy in SQL (macros/scoring_exec_acc.sql) against the Python scorer
(sql/exec_accuracy.py, which the fidelity tests pin to LOFT's): the same scores on hand-made
edge cases and on seeded hostile turns, and SQL deciding the plain turns itself."""

from __future__ import annotations

import json
import random
from typing import Any

import pyarrow as pa
import pytest

from loft_warehouse.sql.exec_accuracy import exec_acc_loft, exec_acc_strict
from tests.scoring.sqlkit import connect, macros

EDGE_CELLS: list[Any] = [
    0, -0.0, 0.0, 1, True, False, None, 45, 45.0, "45", " 45 ", "45.00", "+45", "45.", ".5", "0.5", "5e-1",
    "1E3", "1000", 1000, 0.125, 0.375, 2.675, 1.005, -0.005, 0.005, "0.125", "-0.001", 1e15, 999999999999999.9,
    12345678901234567, 2**53 + 1, 10**400 if False else 1e300, "1e400", "inf", "-Infinity", "nan", "NaN", "1_000",
    "Anita", "fat", "tiny", "", " ", "  x  ", "Paris", "PARIS", "paris", "None", "none", "true", "True",
    "é", "Ｔ", "\t7", "7\n", "٣", "a\"b", "back\\slash", "[1]", "x" * 3, [1, 2], [], {"a": 1}, "1e15", "-1e15",
    "99999999999999.995", 99999999999999.995, "0.00000001", 1e-8, "-0", "00012", "1.0e+2",
]  # fmt: skip


def _python(gold_loft: Any, answer_loft: Any, gold: Any, answer_strict: Any, ordered: bool) -> dict[str, Any]:
    def attempt(function: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return function(*args, **kwargs)
        except ValueError:
            return "error"

    return {
        "loft": attempt(exec_acc_loft, gold_loft, answer_loft),
        "strict": attempt(exec_acc_strict, gold, answer_strict, ordered=ordered),
    }


def _scored(cases: list[tuple[Any, Any, bool]]) -> list[dict[str, Any]]:
    """Each (gold, answer, ordered) through the macro: acc and fast_acc per case, in order."""
    con = connect()
    rows = [
        {
            "case_index": i,
            "is_answered": True,
            "gold_loft": json.dumps(gold),
            "answer_loft_json": json.dumps(answer),
            "gold": json.dumps(gold),
            "answer_strict_json": json.dumps(answer),
            "gold_is_ordered": ordered,
        }
        for i, (gold, answer, ordered) in enumerate(cases)
    ]
    con.register("cases", pa.Table.from_pylist(rows))
    sql = macros().scoring_exec_acc("cases")
    result = con.execute(f"select acc, fast_acc from ({sql}) order by case_index").fetchall()
    return [{"acc": acc, "fast": fast} for acc, fast in result]


def _turn(rng: random.Random, cells: list[Any], width: int, n_rows: int) -> list[list[Any]]:
    return [[rng.choice(cells) for _ in range(width)] for _ in range(n_rows)]


def _variant(rng: random.Random, gold: list[list[Any]], cells: list[Any]) -> Any:
    """A prediction near the gold: rows shuffled or dropped, columns swapped, cells retyped or replaced,
    or a different shape (flat list, string, string rows, nested)."""
    choice = rng.random()
    rows = [list(row) for row in gold]
    if choice < 0.25:
        rng.shuffle(rows)
    elif choice < 0.4 and rows and len(rows[0]) > 1:
        order = list(range(len(rows[0])))
        rng.shuffle(order)
        rows = [[row[i] for i in order] for row in rows]
    elif choice < 0.55:
        for row in rows:
            for j, cell in enumerate(row):
                if rng.random() < 0.3:
                    row[j] = str(cell) if not isinstance(cell, str) else cell.upper()
    elif choice < 0.65:
        rows = rows[1:] + [[rng.choice(cells) for _ in range(len(rows[0]))]]
    elif choice < 0.7:
        return rows[0] if rows else []
    elif choice < 0.73:
        return rng.choice(["abc", 7, None, [], [["a"], "bc"], [["a"], 3], [[["x"]]]])
    elif choice < 0.8:
        rows = rows + [list(rows[0])]
    return rows


def test_hand_made_turns_score_as_the_python_scorer() -> None:
    cases: list[tuple[Any, Any, bool]] = [
        ([[45]], [["45.0"]], False),
        ([[45]], [[" 45 "]], False),
        ([["Paris", 1]], [[1, "paris"]], False),
        ([["Paris", 1]], [["paris", 1]], False),
        ([["a"], ["b"]], [["a"], ["a"]], False),
        ([["a"], ["b"]], [["b"], ["a"]], True),
        ([["a", 1], ["b", 2]], [[1, "a"], [2, "b"]], False),
        ([["a", 1], ["b", 2]], [[2, "a"], [1, "b"]], False),
        ([["a", 1], ["b", 2]], [[1, "a"], [2, "b"]], True),
        ([[0.125]], [["0.12"]], False),
        ([[2.675]], [[2.67]], False),
        ([[None]], [["None"]], False),
        ([[None]], [[None]], False),
        ([[True]], [[1]], False),
        ([["x", ""]], [["x"]], False),
        ([["x"]], ["x"], False),
        ([["x"]], "x", False),
        ([["x"]], [], False),
        ([["x"]], [["x"], "y"], False),
        ([["nan"]], [["NaN"]], False),
        ([["1_000"]], [[1000]], False),
        ([["é"]], [["É"]], False),
        ([[1e300]], [[1e300]], False),
        ([["a"]], [[["a"]]], False),
        ([["", "x"], [""]], [[" "], ["x"]], False),
        ([[""]], [[]], False),
        ([[""], ["y"]], [["y"], ["y"]], False),
    ]
    results = _scored(cases)
    for (gold, answer, ordered), result in zip(cases, results, strict=True):
        expected = _python(gold, answer, gold, answer, ordered)
        assert result["acc"] == expected, (gold, answer, ordered)
    # Python decides column searches, string rows, float-like, non-ASCII, huge and nested cells.
    python_cases = {i for i, result in enumerate(results) if result["fast"] is None}
    assert python_cases == {6, 7, 8, 18, 19, 20, 21, 22, 23}, python_cases


def test_seeded_hostile_turns_score_as_the_python_scorer() -> None:
    rng = random.Random(20241126)
    plain = [rng.choice(["Paris", "Rome", "Oslo"]) for _ in range(3)] + [1, 2, 2.5, "2.50", "x", None, True, ""]
    cases: list[tuple[Any, Any, bool]] = []
    for _ in range(4000):
        cells = EDGE_CELLS if rng.random() < 0.5 else plain
        gold = _turn(rng, cells, rng.randint(1, 3), rng.randint(1, 4))
        cases.append((gold, _variant(rng, gold, cells), rng.random() < 0.2))
    results = _scored(cases)
    mismatches = [
        (gold, answer, ordered, result["acc"], expected)
        for (gold, answer, ordered), result in zip(cases, results, strict=True)
        if result["acc"] != (expected := _python(gold, answer, gold, answer, ordered))
        and "error" not in expected.values()
    ]
    assert not mismatches, mismatches[:5]
    fast = sum(result["fast"] is not None for result in results)
    assert fast > len(cases) // 3, f"SQL decided only {fast} of {len(cases)} turns"


@pytest.mark.parametrize("gold", [[], [1, 2], "abc", [[1], 2]])
def test_a_gold_python_refuses_still_stops_in_python(gold: Any) -> None:
    con = connect()
    con.execute(
        "create table cases as select true as is_answered, ? as gold_loft, ? as answer_loft_json, ? as gold, "
        "? as answer_strict_json, false as gold_is_ordered",
        [json.dumps(gold), '[["a"]]', json.dumps(gold), '[["a"]]'],
    )
    with pytest.raises(Exception, match="gold answer must be a non-empty list of lists"):
        con.execute(f"select * from ({macros().scoring_exec_acc('cases')})").fetchall()
