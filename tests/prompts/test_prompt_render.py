"""Exact rendered text of the default prompt (LOFT's rendering) for every task family, and of
the paper's wording (paper Fig. 11, §3)."""

from __future__ import annotations

import pytest

from loft_warehouse.errors import BadInputError
from loft_warehouse.prompts.inputs import Collection, Doc, Query, Turn, collections
from loft_warehouse.prompts.instructions import wording
from loft_warehouse.prompts.render import corpus_line, render
from loft_warehouse.prompts.variants import VARIANTS
from tests.prompts.expected import (
    HOTPOTQA_CORPUS,
    HOTPOTQA_EXAMPLES,
    HOTPOTQA_INSTRUCTION,
    HOTPOTQA_TEST,
    NO_PERFECT_ANSWER,
    PAPER_HOTPOTQA_INSTRUCTION,
    RETRIEVAL_FORMATTING,
    lines,
    paper,
)

RAG_FORMATTING = [
    "",
    "Your final answer should be in a list, in the following format:",
    "Final Answer: ['answer1', 'answer2', ...]",
    "If there is only one answer, it should be in the format:",
    "Final Answer: ['answer']",
    "",
]
RAG_INSTRUCTION = (
    "You will be given a list of documents. You need to read carefully and understand all of them. "
    "Then you will be given a query, and your goal is to answer the query based on the documents you "
    "have read."
)
RAG_QUERY = (
    "Based on the documents above, can you answer the following query? Print out the TITLE and ID of "
    "the documents you use to answer. Then format the answers into a list."
)
NQ_QUERY = [
    "Which document is most relevant to answer the query? Print out the TITLE and ID of the document. "
    "Then format the IDs into a list.",
    NO_PERFECT_ANSWER,
]
NQ_LEAD_IN = "The following documents can help answer the query:"


@pytest.fixture
def by_dataset(corpus, queries, datasets) -> dict[str, Collection]:
    return {c.dataset: c for c in collections(corpus, queries, datasets)}


def test_retrieval_default_is_loft_line_for_line(by_dataset):
    rendered = render(by_dataset["hotpotqa"], VARIANTS["default"], seed=1)
    assert rendered.prefix == lines([HOTPOTQA_INSTRUCTION], RETRIEVAL_FORMATTING, HOTPOTQA_CORPUS, HOTPOTQA_EXAMPLES)
    [row] = rendered.rows
    assert (row.qid, row.split, row.turn, row.n_turns, row.head) == ("hq-t1", "test", 0, 1, "")
    assert row.suffix == lines(HOTPOTQA_TEST)
    assert row.gold_shown_ids == ("1",)
    assert row.gold_json == '["h-song"]'
    assert rendered.shown == (
        ("0", "h-okazaki"),
        ("1", "h-song"),
        ("2", "h-award"),
        ("3", "h-lodger"),
    )


def test_paper_wording_reproduces_figure_11_line_for_line(by_dataset):
    rendered = render(by_dataset["hotpotqa"], VARIANTS["paper_wording"], seed=1)
    assert rendered.prefix == lines([PAPER_HOTPOTQA_INSTRUCTION], HOTPOTQA_CORPUS, paper(HOTPOTQA_EXAMPLES))
    [row] = rendered.rows
    assert row.suffix == lines(paper(HOTPOTQA_TEST))


def test_titleless_retrieval_omits_title_and_quotes_content(by_dataset):
    rendered = render(by_dataset["arguana"], VARIANTS["default"], seed=1)
    query = [
        "Given a claim, which statements provide a counterargument? Print out the CONTENT and ID of each "
        "statement. Then format the IDs into a list.",
        NO_PERFECT_ANSWER,
    ]
    lead_in = "The following statements can counterargue the claim:"
    assert rendered.prefix == lines(
        [
            "You will be given a list of statements. You need to read carefully and understand all "
            "of them. Then you will be given a claim, and your goal is to find all statements from "
            "the list that can counterargue the claim.",
        ],
        RETRIEVAL_FORMATTING,
        [
            "ID: 0 | CONTENT: Zoos protect endangered species. | END ID: 0",
            "ID: 1 | CONTENT: Zoos keep animals in cages. | END ID: 1",
            "ID: 2 | CONTENT: Homework builds discipline. | END ID: 2",
            "====== Example 1 ======",
            *query,
            "claim: Zoos are good for animals.",
            lead_in,
            "CONTENT: Zoos keep animals in cages. | ID: 1",
            "Final Answer: ['1']",
        ],
    )
    [row] = rendered.rows
    assert row.split == "dev"
    assert row.suffix == lines(["====== Now let's start! ======", *query, "claim: Homework is useless.", lead_in])


def test_rag_empty_title_prints_none_and_the_answer_lists_every_alias(by_dataset):
    rendered = render(by_dataset["nq"], VARIANTS["default"], seed=1)
    assert rendered.prefix == lines(
        [RAG_INSTRUCTION],
        RAG_FORMATTING,
        [
            "ID: 0 | TITLE: Paris | CONTENT: Paris is the capital of France. | END ID: 0",
            "ID: 1 | TITLE: None | CONTENT: Rome is the capital of Italy. | END ID: 1",
            "ID: 2 | TITLE: Berlin | CONTENT: Berlin is the capital of Germany. | END ID: 2",
            "====== Example 1 ======",
            RAG_QUERY,
            "query: what is the capital of france",
            "TITLE: Paris | ID: 0",
            "Final Answer: ['Paris', 'Paris, France']",
        ],
    )
    [row] = rendered.rows
    assert row.suffix == lines(["====== Now let's start! ======", RAG_QUERY, "query: what is the capital of italy"])
    assert row.gold_json == '["Rome"]'
    assert row.gold_shown_ids == ("1",)
    assert render(by_dataset["nq"], VARIANTS["paper_wording"], seed=1).prefix.endswith(
        "The following documents can help answer the query:\nTITLE: Paris | ID: 0\nFinal Answer: ['Paris']\n"
    )


def test_rag_multi_answer_lists_every_answer():
    collection = Collection(
        task="rag",
        dataset="quest",
        corpus_id="quest",
        has_title=True,
        docs=[Doc("q0", "A 1977 film about two sisters.", "Peppermint Soda")],
        few_shot=[
            Query(
                "f",
                "few_shot",
                (
                    Turn(
                        "films about sisters",
                        '["Peppermint Soda", "Le Divorce"]',
                        ["Peppermint Soda", "Le Divorce"],
                        ("q0",),
                    ),
                ),
            )
        ],
    )
    rendered = render(collection, VARIANTS["default"], seed=1)
    assert rendered.prefix.endswith(
        f"{RAG_QUERY}\nquery: films about sisters\nTITLE: Peppermint Soda | ID: 0\n"
        "Final Answer: ['Peppermint Soda', 'Le Divorce']\n"
    )
    assert rendered.rows == ()


def test_icl_is_lofts_many_shot_bbh_layout(by_dataset):
    rendered = render(by_dataset["bbh_web"], VARIANTS["default"], seed=1)
    assert rendered.prefix == lines(
        [
            "Please answer the following questions and ensure you follow a consistent format. In "
            "particular, ensure your final answer always looks like `Output: ['your_answer_here']`.",
            "Question: Does Ann tell the truth?",
            "Output: ['Yes']",
            "",
            "Question: Does Bob tell the truth?",
            "Output: ['No']",
            "",
            "Question: Does Cid tell the truth?",
            "Output: ['No']",
            "",
        ]
    )
    [row] = rendered.rows
    assert row.suffix == "Question: Does Dee tell the truth?\nOutput: \n\n"
    assert (row.gold_json, row.gold_shown_ids) == ('["Yes"]', ())
    assert rendered.shown == ()


def test_multi_turn_rows_repeat_earlier_turns_with_answer_placeholders(by_dataset):
    rendered = render(by_dataset["topiocqa"], VARIANTS["default"], seed=1)
    first, second = rendered.rows
    start = "====== Now let's start! ======"
    assert (first.turn, first.n_turns, second.turn, second.n_turns) == (0, 2, 1, 2)
    assert first.suffix == lines([start, *NQ_QUERY, "query: who were rixton", NQ_LEAD_IN])
    # LOFT appends the earlier answer right after the turn's text, the next turn straight after it.
    assert second.suffix == first.suffix + "<<MODEL_ANSWER turn=0>>" + lines(
        [start, *NQ_QUERY, "query: what was their debut single", NQ_LEAD_IN]
    )
    assert (first.gold_shown_ids, second.gold_shown_ids) == (("0",), ("1",))


def test_multi_turn_few_shot_example_numbers_and_answers_every_turn():
    docs = [Doc("a", "Rixton were a band.", "Rixton"), Doc("b", "Their single.", "Single")]
    turns = (
        Turn("who were rixton", '["a"]', ["a"], ("a",)),
        Turn("their single", '["b"]', ["b"], ("b",)),
    )
    collection = Collection("retrieval", "topiocqa", "topiocqa", True, docs, few_shot=[Query("f", "few_shot", turns)])
    prefix = render(collection, VARIANTS["default"], seed=1).prefix
    assert prefix.endswith(
        lines(
            ["====== Example 1-1 ======", *NQ_QUERY, "query: who were rixton", NQ_LEAD_IN, "TITLE: Rixton | ID: 0"],
            ["Final Answer: ['0']"],
            ["====== Example 1-2 ======", *NQ_QUERY, "query: their single", NQ_LEAD_IN, "TITLE: Single | ID: 1"],
            ["Final Answer: ['1']"],
        )
    )


def test_corpus_line_and_reasoning_line_fields():
    doc = Doc("p", "Some text.", "")
    assert corpus_line("7", doc, has_title=True) == "ID: 7 | TITLE: None | CONTENT: Some text. | END ID: 7\n"
    assert corpus_line("7", doc, has_title=False, id_echo=False) == "ID: 7 | CONTENT: Some text.\n"
    assert corpus_line("7", Doc("p", "x", "T"), True, content=False) == "ID: 7 | TITLE: T | END ID: 7\n"
    assert wording("retrieval", "nq", True).reasoning_line("7", None, "x") == "TITLE: None | ID: 7\n"
    assert wording("retrieval", "arguana", False).reasoning_line("7", "T", "x") == "CONTENT: x | ID: 7\n"


def test_a_dataset_loft_does_not_name_takes_its_familys_wording_with_a_warning(capsys):
    mine = wording("retrieval", "my_own_set", True)
    assert mine == wording("retrieval", "nq", True)
    warning = "WARNING: LOFT's prompts have no retrieval/my_own_set wording; using retrieval/nq's"
    assert warning in capsys.readouterr().out
    wording("retrieval", "my_own_set", True)
    assert capsys.readouterr().out == ""


def test_gold_document_missing_from_corpus_names_the_query():
    collection = Collection(
        "retrieval",
        "nq",
        "nq",
        True,
        [Doc("a", "text", "A")],
        evaluated=[Query("q9", "test", (Turn("where", '["zz"]', ["zz"], ("zz",)),))],
    )
    with pytest.raises(BadInputError, match=r"qid=q9 turn=0: gold document\(s\) \['zz'\]"):
        render(collection, VARIANTS["default"], seed=1)
