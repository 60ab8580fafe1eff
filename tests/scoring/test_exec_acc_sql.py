"""Execution accuracy in SQL (macros/scoring_exec_acc.sql) against exec_accuracy, the Python
reference: wherever SQL gives a value it must be Python's, on seeded hostile answers; and the
turns SQL leaves to Python must be the rare ones."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from loft_warehouse.sql.exec_accuracy import exec_acc_loft, exec_acc_strict
from tests.scoring.sqlkit import Scenario, connect, macros

TEXTS = [
    "abc", "ABC", "Garden", "", " ", "\t x", "Café", "\u0663", "\u00a012", "None", "none", "True", "x y", "1_000",
    "1__0", "_1", "1e5", ".5", "+.5", "1.", "-0", "-0.0", " -0.001 ", "inf", "-Infinity", "-inf", " Infinity",
    "nan", "NaN ", "+nan",
    "1e400", "-1e400", "00012", "12abc", "0x10", "1,000", "e5", ".", "-", "1.5E+3", " 7 ", "2.675", "0.125", "1e12",
    "999999999999.995", "123456789012345678901234567890", "\x1c5", "5\n", "\u017f", "\u212a", 'a "quoted" \\ b',
]  # fmt: skip
NUMBERS = [
    0, 2**53 - 1, 2**53 + 1, -(2**53) - 1, 10**20, -(10**15), 10**400, 10**12, 10**12 - 1, 0.125, 0.375, 2.675,
    1.005, -0.0, -0.001, 0.004999, 1e12, 999999999999.995, 1e-300, float("nan"), float("inf"), float("-inf"),
    5e-324, 1e22, 0.1 + 0.2,
]  # fmt: skip
# Other spellings of the same float() a model may write.
SPELLINGS = {"inf": "+Infinity", "-Infinity": "-inf", "-inf": "-infinity", "Infinity": "inf", "nan": "NaN",
             "NaN": "-nan", "1e5": "100000", "-0": "0.0", "1.": "1.0"}  # fmt: skip
Case = tuple[str, str, str, str, bool]


def _number(rng: random.Random) -> Any:
    roll = rng.random()
    if roll < 0.4:
        return rng.randint(-1000, 1000)
    if roll < 0.55:
        return rng.choice(NUMBERS)
    return round(rng.uniform(-1, 1) * 10 ** rng.randint(-3, 14), rng.randint(0, 6))


def _cell(rng: random.Random) -> Any:
    roll = rng.random()
    if roll < 0.45:
        return _number(rng)
    if roll < 0.85:
        return rng.choice(TEXTS) if rng.random() < 0.6 else str(_number(rng))
    if roll < 0.93:
        return None
    if roll < 0.97:
        return rng.choice([True, False])
    return rng.choice([[1, 2], {"a": 1}, [], "x"])


def _reformatted(rng: random.Random, cell: Any) -> Any:
    """The same value as a model might write it (text for a number, other case, spaces)."""
    if rng.random() < 0.5 or cell is None or isinstance(cell, list | dict):
        return cell
    if isinstance(cell, bool):
        return rng.choice([str(cell), str(cell).lower(), int(cell)])
    if isinstance(cell, int | float):
        as_float = float(cell) if abs(cell) < 1e300 else cell
        return rng.choice([str(cell), f" {cell} ", as_float, f"{cell}".upper()])
    return rng.choice([cell.upper(), cell.lower(), f" {cell}", cell.strip(), SPELLINGS.get(cell.strip(), cell)])


def _answer(rng: random.Random, gold: list[list[Any]]) -> Any:
    """A predicted answer derived from the gold, in every shape exec_accuracy distinguishes."""
    rows = [list(row) for row in gold]
    roll = rng.random()
    if roll < 0.3:
        if roll < 0.15:
            rng.shuffle(rows)
        return [[_reformatted(rng, cell) for cell in row] for row in rows]
    if roll < 0.42:
        order = list(range(len(rows[0])))
        rng.shuffle(order)
        return [[row[i] for i in order] if len(row) == len(order) else row for row in rows]
    shapes = [
        lambda: rows[:-1] or rows,
        lambda: [*rows, rng.choice(rows)],
        lambda: rows[0],
        lambda: rng.choice(["x", 3, None, {"a": 1}, []]),
        lambda: [*rows, "ab"],
        lambda: [*rows, []],
        lambda: [[_cell(rng) for _ in row] for row in rows],
        lambda: [[*rows[0], _cell(rng)], *rows[1:]],
        lambda: rows,
    ]
    return rng.choice(shapes)()


def hostile_cases(n: int, seed: int) -> list[Case]:
    """(gold_loft, answer_loft_json, gold, answer_strict_json, gold_is_ordered) as the scoring
    model reads them: JSON texts as Python writes them (NaN and Infinity included)."""
    rng = random.Random(seed)
    cases = []
    for _ in range(n):
        width = rng.randint(1, 3)
        gold = [[_cell(rng) for _ in range(width)] for _ in range(rng.randint(1, 4))]
        if rng.random() < 0.2:
            gold.append(list(gold[0]))
        loft = _answer(rng, gold)
        strict = loft if rng.random() < 0.7 else _answer(rng, gold)
        gold_loft = gold if rng.random() < 0.8 else _answer(rng, gold)
        if rng.random() < 0.02:
            gold_loft = rng.choice([[], [1, 2], "x", [[1], 2]])
        texts = [json.dumps(value, ensure_ascii=False) for value in (gold_loft, loft, gold, strict)]
        cases.append((*texts, rng.random() < 0.2))  # type: ignore[arg-type]
    return cases


def python_scores(case: Case) -> tuple[float | str, float | str]:
    """Both rules by the reference ('raises' where it refuses the gold)."""
    gold_loft, answer_loft, gold, answer_strict, ordered = case
    scores: list[float | str] = []
    for score in (
        lambda: exec_acc_loft(json.loads(gold_loft), json.loads(answer_loft)),
        lambda: exec_acc_strict(json.loads(gold), json.loads(answer_strict), ordered=ordered),
    ):
        try:
            scores.append(score())
        except ValueError:
            scores.append("raises")
    return scores[0], scores[1]


def sql_scores(cases: list[Case]) -> list[tuple[float | None, float | None]]:
    con = connect()
    con.execute(
        "create table cases (id integer, gold_loft varchar, answer_loft_json varchar, gold varchar,"
        " answer_strict_json varchar, gold_is_ordered boolean)"
    )
    con.executemany("insert into cases values (?, ?, ?, ?, ?, ?)", [(i, *case) for i, case in enumerate(cases)])
    query = macros().scoring_exec_acc_in_sql("cases")
    rows = con.execute(f"select exec_acc_in_sql.loft, exec_acc_in_sql.strict from ({query}) order by id").fetchall()
    return [(loft, strict) for loft, strict in rows]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_sql_gives_python_s_score_wherever_it_gives_one(seed: int) -> None:
    cases = hostile_cases(8000, seed)
    decided = {"loft": 0, "strict": 0}
    mismatches = []
    for case, in_sql in zip(cases, sql_scores(cases), strict=True):
        for rule, got, expected in zip(("loft", "strict"), in_sql, python_scores(case), strict=True):
            if got is not None:
                decided[rule] += 1
                if got != expected:
                    mismatches.append((rule, case, got, expected))
    assert not mismatches, mismatches[:5]
    # Hostile on purpose (most turns hold a cell left to Python), yet both rules decide many.
    assert decided["loft"] > 0.25 * len(cases) and decided["strict"] > 0.4 * len(cases), decided


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        # Every cell form SQL reads: numbers across types and text, case, spaces, None, booleans.
        (('[[45, "Paris", null, true]]', '[["45.0", " PARIS ", "None", 1]]'), (1.0, 0.0)),
        (("[[2.675, 0.125]]", '[["2.67", "0.12"]]'), (1.0, 0.0)),
        (("[[1000]]", '[["1e3"]]'), (1.0, 1.0)),
        (('[["inf", "nan"]]', '[["INF", " NaN"]]'), (1.0, 0.0)),
        (("[[0.0]]", '[["-0"]]'), (None, 1.0)),  # -0.00 against 0.00: Python's
        # Shapes: a flat list is one row; membership, not multiset; a count mismatch; not a list.
        (('[[1, "a"]]', '[1, "a"]'), (1.0, 1.0)),
        (('[["a"], ["b"]]', '[["a"], ["a"]]'), (1.0, 0.0)),
        (("[[1], [2]]", "[[1]]"), (0.0, 0.0)),
        (("[[1]]", '"1"'), (0.0, 0.0)),
        # Strict: rows as a multiset of one width; a permutation is Python's unless the cells differ.
        (('[[1, "a"], [2, "b"]]', '[[2, "b"], [1, "a"]]'), (1.0, 1.0)),
        (('[[1, "a"], [2, "b"]]', '[[1, "a", 3], [2, "b"]]'), (0.0, 0.0)),
        (('[[1, "a"], [2, "b"]]', '[["a", 1], ["b", 2]]'), (1.0, None)),
        (('[[1, "a"], [2, "b"]]', '[["a", 1], ["c", 2]]'), (0.0, 0.0)),
        # Left to Python: non-ASCII text, an underscored number, a nested cell, a string row, a big number.
        (('[["Café"]]', '[["café"]]'), (None, None)),
        (("[[1000]]", '[["1_000"]]'), (None, None)),
        (("[[[1]]]", "[[[1]]]"), (None, None)),
        (('[["ab"]]', '[["ab"], "ab"]'), (None, None)),
        (("[[1e15]]", "[[1e15]]"), (None, 1.0)),
    ],
)
def test_hand_computed_turns(case: tuple[str, str], expected: tuple[float | None, float | None]) -> None:
    gold, answer = case
    full: Case = (gold, answer, gold, answer, False)
    assert sql_scores([full]) == [expected]
    reference = python_scores(full)
    assert all(got is None or got == want for got, want in zip(expected, reference, strict=True)), reference


def test_the_scores_model_sends_what_sql_leaves_to_python() -> None:
    s = Scenario()
    turns = [
        ("permuted", [[1, "a"], [2, "b"]], 'Final Answer: [["a", 1], ["b", 2]]', 1.0, 1.0),  # Python permutes
        ("accented", [["Café"]], 'Final Answer: [["CAFÉ"]]', 1.0, 0.0),  # non-ASCII: Python's lower()
        ("underscored", [[1000]], 'Final Answer: [["1_000"]]', 1.0, 1.0),  # float('1_000')
        ("plain", [[2.5, "x"]], 'Final Answer: [["2.50", "X"]]', 1.0, 0.0),  # SQL's
    ]
    for qid, gold, text, _, _ in turns:
        s.respond(s.query("sql", "spider", qid, gold, gold_sql="select x"), text)
    s.build()
    scores = s.con.sql(
        "select qid, metric_name, value from scores where grain = 'turn' and metric = 'exec_acc' order by all"
    ).fetchall()
    expected = [(qid, f"exec_acc_{rule}", value) for qid, _, _, *values in turns
                for rule, value in zip(("loft", "strict"), values, strict=True)]  # fmt: skip
    assert scores == sorted(expected)
