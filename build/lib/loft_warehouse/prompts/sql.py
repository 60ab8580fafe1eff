"""Corpus-in-Context prompts for Spider and SParC as LOFT's prompt code builds them
(prompts/prompts_sql.py, strings in prompts/loft_prompts.json; paper §3, App. D).

A prompt is text chunks, each ending in one newline, joined with nothing in between:

- the prefix, the same for every query of a dataset: LOFT's instruction, then its worked
  example over the concert_singer database, whose reasoning ends in `Final Answer: [[...]]`;
- the suffix of a query turn: `====== Now let's start! ======`, the query text, the query's
  database tables (`Table: name` + CSV, a blank line between tables), the question and the
  answer lead-in where the model continues.

SParC (multi-turn): turn t's suffix repeats turns 0..t-1, each followed by a placeholder
(`loft_warehouse.prompts.multiturn.placeholder`) that inference replaces with what LOFT appends
there, `str()` of the answers read from the model's reply, the next turn following at once;
follow-up turns bring only the new question (LOFT's follow-up format).
"""

from __future__ import annotations

from collections.abc import Sequence

from loft_warehouse.prompts.instructions import loft_prompts
from loft_warehouse.prompts.multiturn import placeholder

FAMILY_DEFAULT = "spider"


def _key(dataset: str) -> str:
    """LOFT's constant key of a SQL dataset (its PROMPT_MAPPER), spider's for any other."""
    constants = loft_prompts()["sql"]
    key = constants["prompt_mapper"].get(dataset, dataset)
    return key if key in constants["corpus_instruction"] else FAMILY_DEFAULT


def tables_text(tables: Sequence[tuple[str, str]]) -> str:
    """`Table: name` + CSV for each (name, csv) in order, a blank line between tables (none for
    a query naming no candidate table, as LOFT renders it)."""
    table = loft_prompts()["sql"]["corpus_format"][FAMILY_DEFAULT]
    return "\n\n".join(table.format(title=name, passage=csv) for name, csv in tables)


def sql_prefix(dataset: str) -> str:
    """Instruction + worked example: shared by every query of the dataset."""
    constants = loft_prompts()["sql"]
    key = _key(dataset)
    return constants["corpus_instruction"][key] + "\n" + "".join(e + "\n" for e in constants["few_shot_examples"][key])


def turn_suffixes(tables: Sequence[tuple[str, str]], questions: Sequence[str], dataset: str = "spider") -> list[str]:
    """The suffix of each turn of one query: turn t holds turns 0..t, with a placeholder for
    the model's answer after each earlier turn. Spider queries have one turn."""
    if not questions:
        raise ValueError("a SQL query needs at least one question")
    constants = loft_prompts()["sql"]
    key = _key(dataset)
    history = constants["query_format"][key].format(query=questions[0], corpus=tables_text(tables)) + "\n"
    suffixes = [history]
    for turn, question in enumerate(questions[1:], start=1):
        history += placeholder(turn - 1) + constants["follow_up_query_format"][key].format(query=question) + "\n"
        suffixes.append(history)
    return suffixes


def sql_prompt(dataset: str, tables: Sequence[tuple[str, str]], questions: Sequence[str], turn: int = 0) -> str:
    """The whole prompt of one turn (prefix + suffix), placeholders still in place."""
    return sql_prefix(dataset) + turn_suffixes(tables, questions, dataset)[turn]
