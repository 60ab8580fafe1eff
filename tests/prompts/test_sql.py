"""The Spider / SParC prompt is LOFT's (prompts/prompts_sql.py): its instruction and worked
example, `Table: name` + CSV blocks, its query and follow-up formats; SParC's earlier turns carry
answer placeholders. Byte-for-byte agreement with LOFT's own rendering is tested in
tests/differential/test_prompt_fidelity.py."""

from loft_warehouse.prompts.multiturn import fill_model_answers
from loft_warehouse.prompts.sql import sql_prefix, sql_prompt, tables_text, turn_suffixes

TABLES = [("singer", "singer_id,name\n1,Joe Sharp\n2,Timbaland"), ("concert", "concert_id,year\n1,2014")]
INTRO = (
    "Given a query, find from the following tables all the information relevant to the query. Then "
    "answer the query. Then format the answer into a list of lists."
)
FIRST = (
    "====== Now let's start! ======\n"
    f"{INTRO}\n"
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
    "Answer: Here's a step-by-step approach using the provided tables:\n"
)


def follow_up(question: str) -> str:
    return f"====== Now let's start! ======\n{INTRO}\n\nQuery: {question}\n\nAnswer:\n"


def test_tables_are_table_lines_and_csv_separated_by_a_blank_line():
    assert tables_text(TABLES) == (
        "Table: singer\nsinger_id,name\n1,Joe Sharp\n2,Timbaland\n\nTable: concert\nconcert_id,year\n1,2014"
    )
    assert tables_text([]) == ""  # a query naming no candidate table shows none, as in LOFT


def test_spider_turn_suffix_exact_text():
    assert turn_suffixes(TABLES, ["How many singers are there?"]) == [FIRST]


def test_sparc_turns_carry_earlier_turns_and_answer_placeholders():
    suffixes = turn_suffixes(TABLES, ["How many singers are there?", "Which of them is Joe?", "His id?"], "sparc")
    assert suffixes[0] == FIRST
    assert suffixes[1] == FIRST + "<<MODEL_ANSWER turn=0>>" + follow_up("Which of them is Joe?")
    assert suffixes[2] == suffixes[1] + "<<MODEL_ANSWER turn=1>>" + follow_up("His id?")
    filled = fill_model_answers(suffixes[2], ["[[2]]", "[['Joe Sharp']]"])
    assert "\n[[2]]====== Now let's start! ======" in filled
    assert "\n[['Joe Sharp']]====== Now let's start! ======" in filled


def test_prefix_is_lofts_instruction_then_worked_example():
    prefix = sql_prefix("spider")
    assert prefix.startswith(
        "You will be given a list of tables. You need to memorize all of the rows of each table. Then "
        "you will be given a query, and your goal is to get the answer from the tables.",
    )
    assert "\n====== Example 1 ======\n" in prefix and "Table: Singer_in_Concert\n" in prefix
    assert prefix.endswith(
        'Final Answer: [["Stark\'s Park", 1], ["Somerset Park", 2], ["Glebe Park", 1], '
        '["Recreation Park", 1], ["Balmoor", 1]]\n'
    )
    assert sql_prefix("sparc") == prefix  # LOFT maps sparc to spider's prompt
    assert sql_prefix("bird") == prefix  # a SQL dataset LOFT does not name takes the family's


def test_whole_prompt_is_prefix_then_suffix():
    assert sql_prompt("spider", TABLES, ["How many singers are there?"]) == sql_prefix("spider") + FIRST
