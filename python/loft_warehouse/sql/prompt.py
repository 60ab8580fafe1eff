"""Corpus-in-Context prompts for Spider and SParC (paper §3, App. D; loft-reference §3).

A prompt is text chunks, each ending in one newline, joined with nothing in between:

- the prefix, the same for every query of a dataset: the instruction, then one worked example
  over a small hand-made database (not a Spider database) whose hand-written reasoning ends in
  `Final Answer: [[...]]`;
- the suffix of a query turn: its own database's tables (`Table: name` + CSV, a blank line
  between tables), the question, and the answer lead-in where the model continues.

SParC (multi-turn): turn t's suffix repeats turns 0..t-1, each followed by a placeholder line
(`loft_warehouse.prompts.multiturn.placeholder`) that inference replaces with the model's
parsed answer to that turn (`Final Answer: [...]`); follow-up turns bring only the new question.
"""

from __future__ import annotations

from collections.abc import Sequence

from loft_warehouse.prompts.multiturn import placeholder

EXAMPLE_SEPARATOR = "====== Example 1 ======"
TEST_SEPARATOR = "====== Now let's start! ======"
INSTRUCTION = (
    "You will be shown every table of a database, each as CSV with a header row. Read all of the "
    "rows carefully. Then answer a query using only what the tables contain: work through the "
    "relevant rows step by step, and finish with one line of the form Final Answer: followed by "
    "the answer as a list of lists, one inner list per result row. Copy values exactly as they "
    "are written in the tables; numbers you compute (counts, sums, averages) are written as "
    "numbers. A query may be followed by follow-up queries that build on the earlier ones."
)
QUERY_INTRO = (
    "Read the tables below, find every row the query needs, answer it, and give the answer as a "
    "list of lists."
)
LEAD_IN = "Answer: Let's work through the tables step by step."
FOLLOW_UP = "Follow-up query: {question}"

EXAMPLE_TABLES: tuple[tuple[str, str], ...] = (
    (
        "baker",
        "baker_id,name,city,years_experience\n"
        "1,Ines Duarte,Porto,12\n"
        "2,Tomasz Wolski,Krakow,4\n"
        "3,Amara Okafor,Lagos,9\n"
        "4,Lena Vogel,Porto,2",
    ),
    (
        "pastry",
        "pastry_id,name,baker_id,price,is_vegan\n"
        "1,Pastel de nata,1,1.5,0\n"
        "2,Obwarzanek,2,2.0,1\n"
        "3,Puff-puff,3,1.0,1\n"
        "4,Broa,1,3.25,1\n"
        "5,Sernik,2,4.5,0",
    ),
)

_CHEAP = (
    "How many pastries cost less than 2.5?",
    "1. The price of each pastry is in the price column of the pastry table.\n"
    "2. Pastries cheaper than 2.5: Pastel de nata (1.5), Obwarzanek (2.0) and Puff-puff (1.0). "
    "Broa (3.25) and Sernik (4.5) cost more.\n"
    "3. That makes 3 pastries.\n"
    "Final Answer: [[3]]",
)
_BY_CITY = (
    "For each city, how many pastries were made by bakers who live there?",
    "1. The pastry table gives the baker_id of each pastry; the baker table gives each baker's "
    "city. Joining them on baker_id:\n"
    "   - Pastel de nata and Broa: baker 1, Ines Duarte, Porto\n"
    "   - Obwarzanek and Sernik: baker 2, Tomasz Wolski, Krakow\n"
    "   - Puff-puff: baker 3, Amara Okafor, Lagos\n"
    "2. Lena Vogel (Porto) made no pastry, so she adds nothing.\n"
    "3. Counting per city: Porto 2, Krakow 2, Lagos 1.\n"
    'Final Answer: [["Porto", 2], ["Krakow", 2], ["Lagos", 1]]',
)
_VEGAN_ONLY = (
    "Count only the vegan ones.",
    "1. The follow-up keeps the previous query but only counts pastries whose is_vegan is 1: "
    "Obwarzanek, Puff-puff and Broa.\n"
    "2. Their bakers: Obwarzanek by baker 2 (Krakow), Puff-puff by baker 3 (Lagos), Broa by "
    "baker 1 (Porto).\n"
    "3. Counting per city: Porto 1, Krakow 1, Lagos 1.\n"
    'Final Answer: [["Porto", 1], ["Krakow", 1], ["Lagos", 1]]',
)
# Spider's example answers two separate queries; SParC's answers a query and a follow-up.
EXAMPLE_TURNS: dict[str, tuple[tuple[str, str], ...]] = {
    "spider": (_CHEAP, _BY_CITY),
    "sparc": (_BY_CITY, _VEGAN_ONLY),
}


def tables_text(tables: Sequence[tuple[str, str]]) -> str:
    """`Table: name` + CSV for each (name, csv) in order, a blank line between tables."""
    if not tables:
        raise ValueError("a SQL prompt needs at least one table")
    return "\n\n".join(f"Table: {name}\n{csv}" for name, csv in tables)


def _first_turn(tables: Sequence[tuple[str, str]], question: str, separator: str) -> str:
    return f"{separator}\n{QUERY_INTRO}\nTABLES\n{tables_text(tables)}\n\nQuery: {question}\n{LEAD_IN}\n"


def _follow_up(question: str) -> str:
    return f"{FOLLOW_UP.format(question=question)}\n{LEAD_IN}\n"


def _worked_example(dataset: str) -> str:
    turns = EXAMPLE_TURNS.get(dataset)
    if turns is None:
        raise ValueError(f"no SQL prompt for dataset {dataset!r}; expected one of {sorted(EXAMPLE_TURNS)}")
    (question, reasoning), *later = turns
    if dataset == "spider":
        chunk = _first_turn(EXAMPLE_TABLES, question, EXAMPLE_SEPARATOR) + reasoning + "\n"
        for question, reasoning in later:
            chunk += f"\nQuery: {question}\n{LEAD_IN}\n{reasoning}\n"
        return chunk
    chunk = _first_turn(EXAMPLE_TABLES, question, EXAMPLE_SEPARATOR) + reasoning + "\n"
    for question, reasoning in later:
        chunk += _follow_up(question) + reasoning + "\n"
    return chunk


def sql_prefix(dataset: str) -> str:
    """Instruction + worked example: shared by every query of the dataset."""
    return f"{INSTRUCTION}\n{_worked_example(dataset)}"


def turn_suffixes(tables: Sequence[tuple[str, str]], questions: Sequence[str]) -> list[str]:
    """The suffix of each turn of one query: turn t holds turns 0..t, with a placeholder for
    the model's answer after each earlier turn. Spider queries have one turn."""
    if not questions:
        raise ValueError("a SQL query needs at least one question")
    history = _first_turn(tables, questions[0], TEST_SEPARATOR)
    suffixes = [history]
    for turn, question in enumerate(questions[1:], start=1):
        history += f"{placeholder(turn - 1)}\n{_follow_up(question)}"
        suffixes.append(history)
    return suffixes


def sql_prompt(dataset: str, tables: Sequence[tuple[str, str]], questions: Sequence[str], turn: int = 0) -> str:
    """The whole prompt of one turn (prefix + suffix), placeholders still in place."""
    return sql_prefix(dataset) + turn_suffixes(tables, questions)[turn]
