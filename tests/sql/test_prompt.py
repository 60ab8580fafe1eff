import ast
import io

import duckdb
import pyarrow.csv as pacsv
import pytest

from loft_warehouse.prompts.multiturn import fill_model_answers
from loft_warehouse.sql.prompt import (
    EXAMPLE_TABLES,
    INSTRUCTION,
    sql_prefix,
    sql_prompt,
    tables_text,
    turn_suffixes,
)

TABLES = [("singer", "singer_id,name\n1,Joe Sharp\n2,Timbaland"), ("concert", "concert_id,year\n1,2014")]
FIRST = (
    "====== Now let's start! ======\n"
    "Read the tables below, find every row the query needs, answer it, and give the answer as a "
    "list of lists.\n"
    "TABLES\n"
    "Table: singer\n"
    "singer_id,name\n"
    "1,Joe Sharp\n"
    "2,Timbaland\n"
    "\n"
    "Table: concert\n"
    "concert_id,year\n"
    "1,2014\n"
    "\n"
    "Query: How many singers are there?\n"
    "Answer: Let's work through the tables step by step.\n"
)


def test_tables_are_table_lines_and_csv_separated_by_a_blank_line():
    assert tables_text(TABLES) == (
        "Table: singer\nsinger_id,name\n1,Joe Sharp\n2,Timbaland\n\nTable: concert\nconcert_id,year\n1,2014"
    )
    with pytest.raises(ValueError):
        tables_text([])


def test_spider_turn_suffix_exact_text():
    assert turn_suffixes(TABLES, ["How many singers are there?"]) == [FIRST]


def test_sparc_turns_carry_earlier_turns_and_answer_placeholders():
    suffixes = turn_suffixes(TABLES, ["How many singers are there?", "Which of them is Joe?", "His id?"])
    assert suffixes[0] == FIRST
    assert suffixes[1] == (
        FIRST
        + "<<MODEL_ANSWER turn=0>>\n"
        + "Follow-up query: Which of them is Joe?\n"
        + "Answer: Let's work through the tables step by step.\n"
    )
    assert suffixes[2] == (
        suffixes[1]
        + "<<MODEL_ANSWER turn=1>>\n"
        + "Follow-up query: His id?\n"
        + "Answer: Let's work through the tables step by step.\n"
    )
    filled = fill_model_answers(suffixes[2], [[[2]], [["Joe Sharp"]]])
    assert "Final Answer: [[2]]\nFollow-up query: Which of them is Joe?" in filled
    assert "Final Answer: [['Joe Sharp']]\nFollow-up query: His id?" in filled


def test_prefix_is_instruction_then_worked_example():
    prefix = sql_prefix("spider")
    assert prefix.startswith(INSTRUCTION + "\n====== Example 1 ======\n")
    assert "Table: baker\nbaker_id,name,city,years_experience\n1,Ines Duarte,Porto,12\n" in prefix
    assert prefix.endswith('Final Answer: [["Porto", 2], ["Krakow", 2], ["Lagos", 1]]\n')
    assert "\nQuery: How many pastries cost less than 2.5?\n" in prefix
    sparc = sql_prefix("sparc")
    assert "\nFollow-up query: Count only the vegan ones.\n" in sparc
    assert "Spider" not in prefix and "concert" not in prefix
    with pytest.raises(ValueError, match="no SQL prompt"):
        sql_prefix("bird")


def test_whole_prompt_is_prefix_then_suffix():
    assert sql_prompt("spider", TABLES, ["How many singers are there?"]) == sql_prefix("spider") + FIRST


def final_answers(text):
    return [ast.literal_eval(line.removeprefix("Final Answer: ")) for line in text.splitlines()
            if line.startswith("Final Answer: ")]


def example_database():
    con = duckdb.connect()
    for name, csv in EXAMPLE_TABLES:
        con.register(f"{name}_csv", pacsv.read_csv(io.BytesIO(csv.encode())))
        con.execute(f"CREATE TABLE {name} AS SELECT * FROM {name}_csv")
    return con


def test_worked_example_answers_are_right():
    con = example_database()
    cheap = con.execute("SELECT count(*) FROM pastry WHERE price < 2.5").fetchall()
    by_city = con.execute(
        "SELECT b.city, count(*) FROM pastry p JOIN baker b USING (baker_id) GROUP BY b.city"
    ).fetchall()
    vegan = con.execute(
        "SELECT b.city, count(*) FROM pastry p JOIN baker b USING (baker_id) WHERE is_vegan = 1 GROUP BY b.city"
    ).fetchall()
    spider = final_answers(sql_prefix("spider"))
    sparc = final_answers(sql_prefix("sparc"))
    assert spider[0] == [list(r) for r in cheap]
    assert sorted(map(tuple, spider[1])) == sorted(by_city)
    assert sparc[0] == spider[1]
    assert sorted(map(tuple, sparc[1])) == sorted(vegan)
