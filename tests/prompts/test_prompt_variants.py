"""Exact rendered text of every prompt variant on the hand-written HotPotQA corpus, and the rules
that pick and arrange them."""

from __future__ import annotations

import re

import pytest

from loft_warehouse.errors import ConfigurationError
from loft_warehouse.prompts.inputs import Collection, Doc, Query, Turn, collections
from loft_warehouse.prompts.render import render
from loft_warehouse.prompts.variants import VARIANTS, alphanumeric_ids, arrange, for_variant, resolve
from tests.prompts.expected import (
    HOTPOTQA_CORPUS,
    HOTPOTQA_EXAMPLES,
    HOTPOTQA_INSTRUCTION,
    HOTPOTQA_LEAD_IN,
    HOTPOTQA_QUERY,
    HOTPOTQA_TEST,
    RETRIEVAL_FORMATTING,
    lines,
)

OKAZAKI, SONG, AWARD, LODGER = HOTPOTQA_CORPUS
LEAD_IN = HOTPOTQA_LEAD_IN
QUESTION_1 = "query: What year was the recipient of the 2016 Best Footballer in Asia born?"
QUESTION_2 = "query: Which film came out in 2009?"
TEST_QUESTION = 'query: How many records had the team sold before performing "aint thinkin bout you"?'


def renumber(line: str, shown: str) -> str:
    """A corpus line of HOTPOTQA_CORPUS with another shown ID."""
    return re.sub(r"^ID: \d+ (.*) END ID: \d+$", rf"ID: {shown} \1 END ID: {shown}", line)


@pytest.fixture
def hotpotqa(corpus, queries, datasets) -> Collection:
    return next(c for c in collections(corpus, queries, datasets) if c.dataset == "hotpotqa")


@pytest.fixture
def by_dataset(corpus, queries, datasets) -> dict[str, Collection]:
    return {c.dataset: c for c in collections(corpus, queries, datasets)}


def rendered_text(collection: Collection, variant: str) -> tuple[str, str, str]:
    rendered = render(collection, VARIANTS[variant], seed=1)
    [row] = rendered.rows
    return row.head, rendered.prefix, row.suffix


def test_generic_instruction_replaces_only_the_instruction(hotpotqa):
    head, prefix, suffix = rendered_text(hotpotqa, "generic_instruction")
    assert head == ""
    assert prefix == lines(
        [
            "You will be given a list of candidates such as documents, images, videos, audios, "
            "etc. You need to check them carefully and understand all of them. Then you will be "
            "given a query, and your goal is to find all candidates from the list that can help "
            "answer the query. Print out the ID of each candidate."
        ],
        RETRIEVAL_FORMATTING,
        HOTPOTQA_CORPUS,
        HOTPOTQA_EXAMPLES,
    )
    assert suffix == lines(HOTPOTQA_TEST)


def test_query_at_beginning_puts_the_query_in_head(hotpotqa):
    head, prefix, suffix = rendered_text(hotpotqa, "query_at_beginning")
    assert head == lines(
        [
            *HOTPOTQA_QUERY,
            TEST_QUESTION,
            "====== Here is the context to read before answering the query ======",
        ]
    )
    assert prefix == lines([HOTPOTQA_INSTRUCTION], RETRIEVAL_FORMATTING, HOTPOTQA_CORPUS, HOTPOTQA_EXAMPLES)
    assert suffix == lines(["====== Now answer the query! ======", LEAD_IN])


def test_alphanumeric_ids_are_seeded_unique_letter_digit_pairs():
    ids = alphanumeric_ids(4, 1, "retrieval/hotpotqa/hotpotqa")
    assert ids == ["y5S5", "D5f2", "T3t1", "I8k1"]
    assert alphanumeric_ids(4, 1, "retrieval/hotpotqa/hotpotqa") == ids
    assert alphanumeric_ids(4, 2, "retrieval/hotpotqa/hotpotqa") != ids
    many = alphanumeric_ids(5000, 3, "k")
    assert len(set(many)) == 5000
    assert all(re.fullmatch(r"([A-Za-z][0-9]){2}", i) for i in many)
    assert all(re.fullmatch(r"([A-Za-z][0-9]){3}", i) for i in alphanumeric_ids(70_000, 3, "k"))


def test_alphanumeric_ids_renumber_corpus_reasoning_answers_and_gold(hotpotqa):
    head, prefix, suffix = rendered_text(hotpotqa, "alphanumeric_ids")
    a, b, c, d = "y5S5", "D5f2", "T3t1", "I8k1"
    assert prefix == lines(
        [HOTPOTQA_INSTRUCTION],
        RETRIEVAL_FORMATTING,
        [renumber(OKAZAKI, a), renumber(SONG, b), renumber(AWARD, c), renumber(LODGER, d)],
        [
            "====== Example 1 ======",
            *HOTPOTQA_QUERY,
            QUESTION_1,
            LEAD_IN,
            f"TITLE: Best Footballer in Asia 2016 | ID: {c}",
            f"TITLE: Shinji Okazaki | ID: {a}",
            f"Final Answer: ['{c}', '{a}']",
            "====== Example 2 ======",
            *HOTPOTQA_QUERY,
            QUESTION_2,
            LEAD_IN,
            f"TITLE: The Lodger (2009 film) | ID: {d}",
            f"Final Answer: ['{d}']",
        ],
    )
    assert suffix == lines(HOTPOTQA_TEST)
    assert render(hotpotqa, VARIANTS["alphanumeric_ids"], seed=1).rows[0].gold_shown_ids == (b,)


def test_title_only_drops_content(hotpotqa):
    _, prefix, _ = rendered_text(hotpotqa, "title_only")
    assert prefix == lines(
        [HOTPOTQA_INSTRUCTION],
        RETRIEVAL_FORMATTING,
        [
            "ID: 0 | TITLE: Shinji Okazaki | END ID: 0",
            "ID: 1 | TITLE: Ain't Thinkin' 'Bout You | END ID: 1",
            "ID: 2 | TITLE: Best Footballer in Asia 2016 | END ID: 2",
            "ID: 3 | TITLE: The Lodger (2009 film) | END ID: 3",
        ],
        HOTPOTQA_EXAMPLES,
    )


def test_no_id_echo_drops_end_id(hotpotqa):
    _, prefix, suffix = rendered_text(hotpotqa, "no_id_echo")
    assert prefix == lines(
        [HOTPOTQA_INSTRUCTION],
        RETRIEVAL_FORMATTING,
        [line.rsplit(" | END ID:", 1)[0] for line in HOTPOTQA_CORPUS],
        HOTPOTQA_EXAMPLES,
    )
    assert prefix.count("END ID") == 0
    assert suffix == lines(HOTPOTQA_TEST)


def test_corpus_in_each_few_shot_reproduces_figure_17(hotpotqa):
    _, prefix, suffix = rendered_text(hotpotqa, "corpus_in_each_few_shot")
    assert prefix == lines(
        [HOTPOTQA_INSTRUCTION],
        RETRIEVAL_FORMATTING,
        [
            "====== Example 1 ======",
            renumber(AWARD, "0"),
            renumber(OKAZAKI, "1"),
            renumber(SONG, "2"),
            renumber(LODGER, "3"),
            *HOTPOTQA_QUERY,
            QUESTION_1,
            LEAD_IN,
            "TITLE: Best Footballer in Asia 2016 | ID: 0",
            "TITLE: Shinji Okazaki | ID: 1",
            "Final Answer: ['0', '1']",
            "====== Example 2 ======",
            renumber(LODGER, "0"),
            renumber(OKAZAKI, "1"),
            renumber(SONG, "2"),
            renumber(AWARD, "3"),
            *HOTPOTQA_QUERY,
            QUESTION_2,
            LEAD_IN,
            "TITLE: The Lodger (2009 film) | ID: 0",
            "Final Answer: ['0']",
        ],
        HOTPOTQA_CORPUS,
    )
    assert suffix == lines(HOTPOTQA_TEST)


def test_corpus_in_each_few_shot_draws_ten_documents(corpus, queries, datasets):
    big = Collection(
        "retrieval",
        "hotpotqa",
        "hotpotqa",
        True,
        docs=[*next(c for c in collections(corpus, queries, datasets) if c.dataset == "hotpotqa").docs],
    )
    big.docs += [Doc(f"x{i}", f"filler {i}", f"F{i}") for i in range(20)]
    big.few_shot = [Query("f", "few_shot", (Turn("q", '["h-song"]', ["h-song"], ("h-song",)),))]
    prefix = render(big, VARIANTS["corpus_in_each_few_shot"], seed=5).prefix
    example = prefix.split("====== Example 1 ======\n")[1].split(HOTPOTQA_QUERY[0])[0]
    example_lines = example.splitlines()
    assert len(example_lines) == 10
    assert example_lines[0] == renumber(SONG, "0")
    assert [line.split(" | ")[0] for line in example_lines] == [f"ID: {i}" for i in range(10)]
    assert len(set(example_lines)) == 10
    assert render(big, VARIANTS["corpus_in_each_few_shot"], seed=5).prefix == prefix


def test_no_cot_drops_reasoning_lines_and_asks_for_the_ids_only(hotpotqa):
    _, prefix, suffix = rendered_text(hotpotqa, "no_cot")
    query = [
        "Which documents can help answer the query? Print out the ID of each document. Then format the IDs "
        "into a list.",
        HOTPOTQA_QUERY[1],
    ]
    assert prefix == lines(
        [HOTPOTQA_INSTRUCTION],
        RETRIEVAL_FORMATTING,
        HOTPOTQA_CORPUS,
        [
            "====== Example 1 ======",
            *query,
            QUESTION_1,
            LEAD_IN,
            "Final Answer: ['2', '0']",
            "====== Example 2 ======",
            *query,
            QUESTION_2,
            LEAD_IN,
            "Final Answer: ['3']",
        ],
    )
    assert suffix == lines(["====== Now let's start! ======", *query, TEST_QUESTION, LEAD_IN])


@pytest.mark.parametrize(
    ("variant", "n_example_lines"),
    [
        ("few_shot_0", 0),
        ("few_shot_1", 8),
        ("few_shot_2", 15),
        ("few_shot_3", 15),
        ("few_shot_4", 15),
        ("few_shot_5", 15),
    ],
)
def test_few_shot_k_keeps_the_first_k_examples(hotpotqa, variant, n_example_lines):
    _, prefix, suffix = rendered_text(hotpotqa, variant)
    assert prefix == lines(
        [HOTPOTQA_INSTRUCTION], RETRIEVAL_FORMATTING, HOTPOTQA_CORPUS, HOTPOTQA_EXAMPLES[:n_example_lines]
    )
    assert suffix == lines(HOTPOTQA_TEST)


# Corpus order is okazaki, song, award, lodger; few-shot gold: award, okazaki, lodger;
# test gold: song. The moved block goes after round(p x n) of the n other documents.
@pytest.mark.parametrize(
    ("variant", "order"),
    [
        ("gold_pos_test_p0", ["song", "okazaki", "award", "lodger"]),
        ("gold_pos_test_p20", ["okazaki", "song", "award", "lodger"]),
        ("gold_pos_test_p40", ["okazaki", "song", "award", "lodger"]),
        ("gold_pos_test_p60", ["okazaki", "award", "song", "lodger"]),
        ("gold_pos_test_p80", ["okazaki", "award", "song", "lodger"]),
        ("gold_pos_test_p100", ["okazaki", "award", "lodger", "song"]),
        ("gold_pos_few_shot_p0", ["okazaki", "award", "lodger", "song"]),
        ("gold_pos_few_shot_p40", ["okazaki", "award", "lodger", "song"]),
        ("gold_pos_few_shot_p60", ["song", "okazaki", "award", "lodger"]),
        ("gold_pos_few_shot_p100", ["song", "okazaki", "award", "lodger"]),
        ("gold_pos_both_p0", ["okazaki", "song", "award", "lodger"]),
        ("gold_pos_both_p100", ["okazaki", "song", "award", "lodger"]),
    ],
)
def test_gold_positions_move_the_block(hotpotqa, variant, order):
    assert [d.pid.removeprefix("h-") for d in arrange(hotpotqa, VARIANTS[variant])] == order


def test_gold_position_renumbers_corpus_reasoning_and_gold(hotpotqa):
    rendered = render(hotpotqa, VARIANTS["gold_pos_test_p100"], seed=1)
    assert rendered.prefix == lines(
        [HOTPOTQA_INSTRUCTION],
        RETRIEVAL_FORMATTING,
        [renumber(OKAZAKI, "0"), renumber(AWARD, "1"), renumber(LODGER, "2"), renumber(SONG, "3")],
        [
            "====== Example 1 ======",
            *HOTPOTQA_QUERY,
            QUESTION_1,
            LEAD_IN,
            "TITLE: Best Footballer in Asia 2016 | ID: 1",
            "TITLE: Shinji Okazaki | ID: 0",
            "Final Answer: ['1', '0']",
            "====== Example 2 ======",
            *HOTPOTQA_QUERY,
            QUESTION_2,
            LEAD_IN,
            "TITLE: The Lodger (2009 film) | ID: 2",
            "Final Answer: ['2']",
        ],
    )
    [row] = rendered.rows
    assert row.suffix == lines(HOTPOTQA_TEST)
    assert row.gold_shown_ids == ("3",)
    assert rendered.shown == (
        ("0", "h-okazaki"),
        ("1", "h-award"),
        ("2", "h-lodger"),
        ("3", "h-song"),
    )


def test_gold_both_moves_few_shot_and_test_gold_as_one_block(hotpotqa):
    hotpotqa.docs.append(Doc("h-filler", "Filler.", "Filler"))
    assert [d.pid for d in arrange(hotpotqa, VARIANTS["gold_pos_both_p100"])][0] == "h-filler"
    assert [d.pid for d in arrange(hotpotqa, VARIANTS["gold_pos_both_p0"])][-1] == "h-filler"


@pytest.mark.parametrize(
    ("variant", "examples"),
    [("context_2k", ["Ann", "Cid"]), ("context_4k", ["Ann", "Bob", "Cid"])],
)
def test_icl_context_variants_keep_examples_of_that_context(by_dataset, variant, examples):
    head, prefix, suffix = rendered_text(by_dataset["bbh_web"], variant)
    answers = {"Ann": "Yes", "Bob": "No", "Cid": "No"}
    assert prefix == lines(
        [
            "Please answer the following questions and ensure you follow a consistent format. In "
            "particular, ensure your final answer always looks like `Output: ['your_answer_here']`."
        ],
        [
            x
            for name in examples
            for x in (f"Question: Does {name} tell the truth?", f"Output: ['{answers[name]}']", "")
        ],
    )
    assert (head, suffix) == ("", "Question: Does Dee tell the truth?\nOutput: \n\n")


def test_which_variants_apply(by_dataset):
    applies = {
        name: sorted(d for d, c in by_dataset.items() if VARIANTS[name].applies_to(c))
        for name in (
            "default",
            "paper_wording",
            "title_only",
            "no_cot",
            "closed_book",
            "gold_pos_test_p0",
            "context_2k",
            "context_8k",
        )
    }
    assert applies == {
        "default": ["arguana", "bbh_web", "hotpotqa", "nq", "topiocqa"],
        "paper_wording": ["arguana", "hotpotqa", "nq", "topiocqa"],
        "title_only": ["hotpotqa", "nq", "topiocqa"],
        "no_cot": ["arguana", "hotpotqa", "nq", "topiocqa"],
        "closed_book": ["nq"],
        "gold_pos_test_p0": ["arguana", "hotpotqa", "nq", "topiocqa"],
        "context_2k": ["bbh_web"],
        "context_8k": [],
    }


def test_context_variants_need_several_contexts(corpus, queries, datasets):
    single = datasets.with_columns(
        contexts=datasets["contexts"].map_elements(lambda c: list(c)[-1:], return_dtype=datasets["contexts"].dtype)
    )
    bbh = next(c for c in collections(corpus, queries, single) if c.dataset == "bbh_web")
    assert bbh.contexts == ("4k",)
    assert not VARIANTS["context_4k"].applies_to(bbh)


def test_catalogue_names():
    names = list(VARIANTS)
    assert names[:9] == [
        "default",
        "paper_wording",
        "generic_instruction",
        "query_at_beginning",
        "alphanumeric_ids",
        "title_only",
        "no_id_echo",
        "corpus_in_each_few_shot",
        "no_cot",
    ]
    assert [n for n in names if n.startswith("few_shot_")] == [f"few_shot_{k}" for k in range(6)]
    assert len([n for n in names if n.startswith("gold_pos_")]) == 18
    assert "gold_pos_few_shot_p60" in names
    assert [n for n in names if n.startswith("context_")] == [
        "context_2k",
        "context_4k",
        "context_8k",
        "context_16k",
        "context_32k",
    ]


def test_resolve_names():
    assert [v.name for v in resolve(None)] == ["default"]
    assert [v.name for v in resolve("default, no_cot,no_cot")] == ["default", "no_cot"]
    assert [v.name for v in resolve(["few_shot_0", ""])] == ["few_shot_0"]
    assert len(resolve(["all"])) == len(VARIANTS) == 40
    with pytest.raises(ConfigurationError, match=r"unknown prompt variant\(s\) \['no_cott'\]"):
        resolve(["default", "no_cott"])


def test_closed_book_is_the_default_prompt_without_its_corpus(by_dataset):
    nq = by_dataset["nq"]
    default, closed = render(nq, VARIANTS["default"], seed=1), render(nq, VARIANTS["closed_book"], seed=1)
    corpus_lines = [line + "\n" for line in default.prefix.splitlines() if re.match(r"^ID: \d+ \|", line)]
    assert len(corpus_lines) == 3
    assert closed.prefix == default.prefix.replace("".join(corpus_lines), "", 1)
    assert closed.shown == ()
    assert [(r.suffix, r.gold_json) for r in closed.rows] == [(r.suffix, r.gold_json) for r in default.rows]
    assert all(r.gold_positions == () and r.gold_anchor is None for r in closed.rows)


def _paged() -> Collection:
    """Three pages, two of them in two passages each (page A's second passage after page B)."""
    docs = [
        Doc("a1", "A starts.", "A", n_tokens=3),
        Doc("b1", "B only.", "B", n_tokens=2),
        Doc("a2", "A ends.", "A", n_tokens=4),
        Doc("c1", "C starts.", "C", n_tokens=3),
        Doc("c2", "C ends.", "C", n_tokens=3),
    ]
    test = Query("q1", "test", (Turn("which?", '["A", "C"]', ["A", "C"], ("a2", "c1", "c2")),))
    shot = Query("f1", "few_shot", (Turn("which b?", '["B"]', ["B"], ("b1",)),))
    return Collection("rag", "quest", "c", True, docs, [shot], [test])


def test_merged_pages_is_one_document_per_page_with_gold_mapped_to_it():
    merged = for_variant(_paged(), VARIANTS["merged_pages"])
    assert [(d.pid, d.title, d.text, d.n_tokens) for d in merged.docs] == [
        ("a1", "A", "A starts. A ends.", 7),
        ("b1", "B", "B only.", 2),
        ("c1", "C", "C starts. C ends.", 6),
    ]
    assert merged.evaluated[0].turns[0].gold_pids == ("a1", "c1")
    assert merged.few_shot[0].turns[0].gold_pids == ("b1",)
    assert for_variant(_paged(), VARIANTS["default"]).docs == _paged().docs


def test_merged_pages_renders_one_corpus_line_per_page():
    collection = for_variant(_paged(), VARIANTS["merged_pages"])
    rendered = render(collection, VARIANTS["merged_pages"], seed=1)
    corpus_lines = [line for line in rendered.prefix.splitlines() if line.startswith("ID: ")]
    assert [line.split(" | ")[1:3] for line in corpus_lines] == [
        ["TITLE: A", "CONTENT: A starts. A ends."],
        ["TITLE: B", "CONTENT: B only."],
        ["TITLE: C", "CONTENT: C starts. C ends."],
    ]
    [row] = rendered.rows
    assert row.gold_shown_ids == ("0", "2")


def test_merged_pages_applies_to_rag_datasets_with_titles():
    merged = VARIANTS["merged_pages"]
    assert merged.applies_to(_paged())
    untitled = Collection("rag", "quest", "c", False, _paged().docs)
    assert not merged.applies_to(untitled)
    assert not merged.applies_to(Collection("retrieval", "nq", "c", True, _paged().docs))
