"""Filling the model's earlier answers into a multi-turn prompt."""

from __future__ import annotations

import pytest

from loft_warehouse.prompts import fill_model_answers
from loft_warehouse.prompts.multiturn import final_answer, placeholder, placeholder_turns

SUFFIX = (
    "====== Now let's start! ======\n"
    "query: who were rixton\n"
    "<<MODEL_ANSWER turn=0>>"
    "====== Now let's start! ======\n"
    "query: what was their debut single\n"
    "<<MODEL_ANSWER turn=1>>"
    "====== Now let's start! ======\n"
    "query: when was it released\n"
)


def test_fill_puts_what_is_fed_back_where_lofts_loop_appends_it():
    filled = fill_model_answers(SUFFIX, ["['doc-3']", "['doc-12', 'doc-4']"])
    assert filled == (
        "====== Now let's start! ======\n"
        "query: who were rixton\n"
        "['doc-3']====== Now let's start! ======\n"
        "query: what was their debut single\n"
        "['doc-12', 'doc-4']====== Now let's start! ======\n"
        "query: when was it released\n"
    )


def test_no_answer_is_fed_back_as_an_empty_list():
    assert fill_model_answers("<<MODEL_ANSWER turn=0>>\n", [None]) == "[]\n"
    assert fill_model_answers("<<MODEL_ANSWER turn=0>>\n", ["[]"]) == "[]\n"


def test_sql_rows_and_quotes_render_as_python_literals():
    assert final_answer([["Paris", 3]]) == "Final Answer: [['Paris', 3]]"
    assert final_answer(["it's"]) == 'Final Answer: ["it\'s"]'


def test_missing_answer_is_an_error_not_a_leftover_placeholder():
    with pytest.raises(ValueError, match="answer of turn 1; 1 answer"):
        fill_model_answers(SUFFIX, ["['3']"])


def test_placeholder_round_trip():
    assert placeholder(4) == "<<MODEL_ANSWER turn=4>>"
    assert placeholder_turns(SUFFIX) == [0, 1]
    assert fill_model_answers("no placeholders\n", []) == "no placeholders\n"
