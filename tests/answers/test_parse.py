"""parse_loft reproduces upstream's extraction quirks; parse_strict anchors on the last marker."""

from __future__ import annotations

import ast
import json
import random
import subprocess
import sys
import warnings

import pytest

from loft_warehouse.answers.parse import (
    EMPTY_LIST,
    NO_LIST,
    NO_MARKER,
    NO_TEXT,
    OK,
    REPAIRED,
    UNPARSABLE,
    _literal_list,
    _simple_list,
    answer_texts,
    loaded_json_text,
    parse_loft,
    parse_loft_result,
    parse_strict,
    parse_strict_result,
    to_json_value,
)


@pytest.mark.parametrize(
    ("text", "answers", "status"),
    [
        ("Final Answer: ['3', '5']", ["3", "5"], OK),
        ("TITLE: a | ID: 3\nFinal Answer: [3, 5]", [3, 5], OK),
        # The first line with both brackets wins, even reasoning before the answer.
        ("I checked [doc 4] first.\nFinal Answer: ['4']", [], UNPARSABLE),
        ("Candidates: ['7']\nFinal Answer: ['4']", ["7"], OK),
        # R&R's page line (rr_qa_page_format) holds no brackets, so the answer line is read.
        ("Page: 12\nFinal Answer: ['Paris']", ["Paris"], OK),
        # From the first "[" to the last "]" of that line.
        ("Final Answer: ['1'] (not ['2'])", [], UNPARSABLE),
        ("Final Answer: [1], [2]", [[1], [2]], OK),
        # Unquoted strings are not Python literals.
        ("Final Answer: [Paris, Berlin]", [], UNPARSABLE),
        # Apostrophes between letters are escaped first...
        ("Final Answer: ['the devil's sleep', 'child bride']", ["the devil's sleep", "child bride"], OK),
        # ...but only non-overlapping ones, so a second one in "rock'n'roll" breaks the literal.
        ("Final Answer: ['rock'n'roll']", [], UNPARSABLE),
        # Markdown emphasis and code ticks are deleted everywhere, inside answers too.
        ("**Final Answer:** `['a*b']`", ["ab"], OK),
        ("Final Answer: []", [], EMPTY_LIST),
        ("The answer is Paris.", [], NO_LIST),
        # A list spread over lines has no line holding both brackets.
        ("Final Answer: [\n'a']", [], NO_LIST),
        ("", [], NO_TEXT),
        ("   \n ", [], NO_TEXT),
        (None, [], NO_TEXT),
        ("Output: ['(A)']", ["(A)"], OK),
        ("Final Answer: [[1, 'x'], [2.5, None]]", [[1, "x"], [2.5, None]], OK),
        ("Final Answer: [[1, null]]", [], UNPARSABLE),
    ],
)
def test_parse_loft(text: str | None, answers: list, status: str) -> None:
    result = parse_loft_result(text)
    assert result.answers == answers
    assert result.status == status
    assert parse_loft(text) == answers


def test_parse_loft_reports_the_line_used() -> None:
    assert parse_loft_result("x\nFinal Answer: ['a']\ny").line == "Final Answer: ['a']"


@pytest.mark.parametrize(
    ("text", "task", "answers", "status"),
    [
        ("I checked [doc 4] first.\nFinal Answer: ['4']", "retrieval", ["4"], OK),
        ("Final Answer: ['1']\nWait.\nFinal Answer: ['2']", "retrieval", ["2"], OK),
        ("final answer : ['x']", "rag", ["x"], OK),
        ("Page: 12\nFinal Answer: ['Paris']", "rr", ["Paris"], OK),
        ("**Final Answer:** [Paris, Berlin]", "rag", ["Paris", "Berlin"], REPAIRED),
        ("Final Answer: ['rock'n'roll']", "rag", ["rock'n'roll"], REPAIRED),
        ("Final Answer: ['the devil's sleep']", "rag", ["the devil's sleep"], OK),
        ("Final Answer: Paris", "rag", ["Paris"], REPAIRED),
        ("Final Answer: 'Paris'", "rag", ["Paris"], REPAIRED),
        ("Final Answer:\n\n['a',\n 'b']", "rag", ["a", "b"], OK),
        ("Final Answer: ['a'] because [b]", "rag", ["a"], OK),
        ("Final Answer: [[1, null], [2, true]]", "sql", [[1, None], [2, True]], OK),
        ("Final Answer: [[1, 'a'], [2, 'b']]", "sql", [[1, "a"], [2, "b"]], OK),
        ("Final Answer: []", "retrieval", [], EMPTY_LIST),
        # A new example block started by the model is not its answer.
        ("Final Answer: ['a']\n====== Example 3 ======\nFinal Answer: ['z']", "rag", ["a"], OK),
        ("Final Answer: [[1, 2], [3", "sql", [], UNPARSABLE),
        ("Final Answer:", "rag", [], UNPARSABLE),
        ("['a']", "rag", [], NO_MARKER),
        # ICL: the prompt ends with "Output:", so the first line is the answer (a repeated
        # leading Output: is skipped); examples the model goes on to invent are not.
        ("Output: ['(A)']", "icl", ["(A)"], OK),
        ("Output: (B)\nQuestion: Does Ann lie?\nOutput: ['No']", "icl", ["(B)"], REPAIRED),
        (" ['Yes']\nQuestion: Does Ann lie?\nOutput: ['No']", "icl", ["Yes"], OK),
        (" Yes\nQuestion: Does Ann lie?", "icl", ["Yes"], REPAIRED),
        ("\n\n['(C)']", "icl", ["(C)"], OK),
        ("Final Answer: ['x']\nOutput: (B)", "icl", ["x"], OK),
        ("Output: ['(A)']", "rag", [], NO_MARKER),
        (None, "rag", [], NO_TEXT),
    ],
)
def test_parse_strict(text: str | None, task: str, answers: list, status: str) -> None:
    result = parse_strict_result(text, task)
    assert result.answers == answers
    assert result.status == status
    assert parse_strict(text, task) == answers


def test_answer_texts_are_python_str() -> None:
    assert answer_texts([5, "5", None, 2.0, [1, 2], (1, 2)]) == ["5", "5", "None", "2.0", "[1, 2]", "(1, 2)"]


def test_to_json_value_makes_literals_json_safe() -> None:
    assert to_json_value([(1, 2), {3}, float("nan"), b"x", None, True]) == [[1, 2], [3], "nan", "b'x'", None, True]


def test_loaded_json_text_writes_what_to_json_value_then_dumps_writes() -> None:
    rng = random.Random(11)
    atoms = ["NaN", "Infinity", "-Infinity", "1e400", "-0.0", "1.5", "7", "true", "null", '"é\\u0001"', '"x"']

    def value(depth: int) -> str:
        if depth and rng.random() < 0.4:
            items = [value(depth - 1) for _ in range(rng.randint(0, 3))]
            if rng.random() < 0.5:
                return "[" + ", ".join(items) + "]"
            return "{" + ", ".join(f'"k{i}": {item}' for i, item in enumerate(items)) + "}"
        return rng.choice(atoms)

    with_nan = 0
    for _ in range(3_000):
        loaded = json.loads(value(3))
        expected = json.dumps(to_json_value(loaded), ensure_ascii=False)
        assert loaded_json_text(loaded) == expected
        with_nan += "nan" in expected or "inf" in expected
    assert with_nan > 100  # the refused values were met, not only the plain ones


def test_the_fast_path_reads_lists_exactly_as_literal_eval() -> None:
    rng = random.Random(5)
    alphabet = ["'", '"', "0", "1", "7", "a", "b", " ", ",", "[", "]", "\\", "-", "\t", "\r", "é"]
    templates = ["[{}]", "[{}, {}]", "['{}', '{}']", '["{}",{} ]', "[{},]"]
    for _ in range(20_000):
        pieces = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 4))) for _ in range(2)]
        chunk = rng.choice(templates).format(*pieces)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                expected: object = ast.literal_eval(chunk)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError) as exc:
            expected = type(exc)
        try:
            actual: object = _literal_list(chunk)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError) as exc:
            actual = type(exc)
        assert actual == expected, chunk
        if _simple_list(chunk) is not None:
            assert type(_simple_list(chunk)) is type(expected)


def test_parse_needs_no_database_or_numeric_stack() -> None:
    # Multi-turn inference imports parse_loft while it builds prompts.
    code = (
        "import sys, loft_warehouse.answers.parse; "
        "print(sorted(m for m in ('duckdb', 'numpy', 'dbt') if m in sys.modules))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"
