"""Exact rendered text of the default prompt for every task family (paper Fig. 11, §3)."""

from __future__ import annotations

import pytest

from loft_warehouse.errors import BadInputError
from loft_warehouse.prompts.inputs import Collection, Doc, Query, Turn, collections
from loft_warehouse.prompts.render import corpus_line, reasoning_line, render
from loft_warehouse.prompts.variants import VARIANTS
from tests.prompts.expected import (
    HOTPOTQA_CORPUS,
    HOTPOTQA_EXAMPLES,
    HOTPOTQA_INSTRUCTION,
    HOTPOTQA_TEST,
    lines,
)


@pytest.fixture
def by_dataset(corpus, queries, datasets) -> dict[str, Collection]:
    return {c.dataset: c for c in collections(corpus, queries, datasets)}


def test_retrieval_default_reproduces_figure_11_line_for_line(by_dataset):
    rendered = render(by_dataset["hotpotqa"], VARIANTS["default"], seed=1)
    assert rendered.prefix == lines([HOTPOTQA_INSTRUCTION], HOTPOTQA_CORPUS, HOTPOTQA_EXAMPLES)
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


def test_titleless_retrieval_omits_title_and_quotes_content(by_dataset):
    rendered = render(by_dataset["arguana"], VARIANTS["default"], seed=1)
    query = (
        "Which document is most relevant to answer the query? Print out the CONTENT and ID of the "
        "document. Then format the IDs into a list."
    )
    assert rendered.prefix == lines(
        [
            "You will be given a list of statements. You need to read carefully and understand all "
            "of them. Then you will be given a claim, and your goal is to find all statements from "
            "the list that can counterargue the claim.",
            "ID: 0 | CONTENT: Zoos protect endangered species. | END ID: 0",
            "ID: 1 | CONTENT: Zoos keep animals in cages. | END ID: 1",
            "ID: 2 | CONTENT: Homework builds discipline. | END ID: 2",
            "====== Example 1 ======",
            query,
            "query: Zoos are good for animals.",
            "The following documents can help answer the query:",
            "CONTENT: Zoos keep animals in cages. | ID: 1",
            "Final Answer: ['1']",
        ]
    )
    [row] = rendered.rows
    assert row.split == "dev"
    assert row.suffix == lines(
        [
            "====== Now let's start! ======",
            query,
            "query: Homework is useless.",
            "The following documents can help answer the query:",
        ]
    )


def test_rag_empty_title_prints_none_and_answer_is_first_alias(by_dataset):
    rendered = render(by_dataset["nq"], VARIANTS["default"], seed=1)
    query = (
        "Which documents can answer the query? Print out the TITLE and ID of each document you "
        "use. Then format the answer into a list."
    )
    assert rendered.prefix == lines(
        [
            "You will be given a list of documents. You need to read carefully and understand all "
            "of them. Then you will be given a query, and your goal is to answer the query using "
            "the documents from the list.",
            "ID: 0 | TITLE: Paris | CONTENT: Paris is the capital of France. | END ID: 0",
            "ID: 1 | TITLE: None | CONTENT: Rome is the capital of Italy. | END ID: 1",
            "ID: 2 | TITLE: Berlin | CONTENT: Berlin is the capital of Germany. | END ID: 2",
            "====== Example 1 ======",
            query,
            "query: what is the capital of france",
            "The following documents can help answer the query:",
            "TITLE: Paris | ID: 0",
            "Final Answer: ['Paris']",
        ]
    )
    [row] = rendered.rows
    assert row.suffix == lines(
        [
            "====== Now let's start! ======",
            query,
            "query: what is the capital of italy",
            "The following documents can help answer the query:",
        ]
    )
    assert row.gold_json == '["Rome"]'
    assert row.gold_shown_ids == ("1",)


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
        "Which documents can answer the query? Print out the TITLE and ID of each document you "
        "use. Then format all the answers into a list.\n"
        "query: films about sisters\n"
        "The following documents can help answer the query:\n"
        "TITLE: Peppermint Soda | ID: 0\n"
        "Final Answer: ['Peppermint Soda', 'Le Divorce']\n"
    )
    assert rendered.rows == ()


def test_icl_examples_then_output(by_dataset):
    rendered = render(by_dataset["bbh_web"], VARIANTS["default"], seed=1)
    assert rendered.prefix == lines(
        [
            "Answer each input below in the same format as the examples: your final answer must "
            "always be written as `Output: ['your_answer']`.",
            "Question: Does Ann tell the truth?",
            "Output: ['Yes']",
            "Question: Does Bob tell the truth?",
            "Output: ['No']",
            "Question: Does Cid tell the truth?",
            "Output: ['No']",
        ]
    )
    [row] = rendered.rows
    assert row.suffix == "Question: Does Dee tell the truth?\nOutput:"
    assert (row.gold_json, row.gold_shown_ids) == ('["Yes"]', ())
    assert rendered.shown == ()


def test_multi_turn_rows_repeat_earlier_turns_with_answer_placeholders(by_dataset):
    rendered = render(by_dataset["topiocqa"], VARIANTS["default"], seed=1)
    query = (
        "Which document is most relevant to answer the query? Print out the TITLE and ID of the "
        "document. Then format the IDs into a list."
    )
    lead_in = "The following documents can help answer the query:"
    first, second = rendered.rows
    assert (first.turn, first.n_turns, second.turn, second.n_turns) == (0, 2, 1, 2)
    assert first.suffix == lines(["====== Now let's start! ======", query, "query: who were rixton", lead_in])
    assert second.suffix == lines(
        [
            "====== Now let's start! ======",
            query,
            "query: who were rixton",
            lead_in,
            "<<MODEL_ANSWER turn=0>>",
            query,
            "query: what was their debut single",
            lead_in,
        ]
    )
    assert (first.gold_shown_ids, second.gold_shown_ids) == (("0",), ("1",))


def test_multi_turn_few_shot_example_answers_every_turn():
    docs = [Doc("a", "Rixton were a band.", "Rixton"), Doc("b", "Their single.", "Single")]
    turns = (
        Turn("who were rixton", '["a"]', ["a"], ("a",)),
        Turn("their single", '["b"]', ["b"], ("b",)),
    )
    collection = Collection("retrieval", "topiocqa", "topiocqa", True, docs, few_shot=[Query("f", "few_shot", turns)])
    prefix = render(collection, VARIANTS["default"], seed=1).prefix
    assert prefix.endswith(
        "====== Example 1 ======\n"
        "Which document is most relevant to answer the query? Print out the TITLE and ID of the "
        "document. Then format the IDs into a list.\n"
        "query: who were rixton\n"
        "The following documents can help answer the query:\n"
        "TITLE: Rixton | ID: 0\n"
        "Final Answer: ['0']\n"
        "Which document is most relevant to answer the query? Print out the TITLE and ID of the "
        "document. Then format the IDs into a list.\n"
        "query: their single\n"
        "The following documents can help answer the query:\n"
        "TITLE: Single | ID: 1\n"
        "Final Answer: ['1']\n"
    )


def test_corpus_line_and_reasoning_line_fields():
    doc = Doc("p", "Some text.", "")
    assert corpus_line("7", doc, has_title=True) == "ID: 7 | TITLE: None | CONTENT: Some text. | END ID: 7\n"
    assert corpus_line("7", doc, has_title=False, id_echo=False) == "ID: 7 | CONTENT: Some text.\n"
    assert corpus_line("7", Doc("p", "x", "T"), True, content=False) == "ID: 7 | TITLE: T | END ID: 7\n"
    assert reasoning_line("7", Doc("p", "x", None), has_title=True) == "TITLE: None | ID: 7\n"
    assert reasoning_line("7", Doc("p", "x", "T"), has_title=False) == "CONTENT: x | ID: 7\n"


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
