"""QUEST-LOFT justified QA and verification: the paper's prompts, and JSON read under both rules
with a parse status (never an exception) when a model breaks the schema."""

from __future__ import annotations

import json

import pytest

from loft_warehouse.design import Design
from loft_warehouse.methods import justified
from loft_warehouse.methods.catalogue import method
from loft_warehouse.methods.parsing import parse_response
from loft_warehouse.prompts.inputs import Collection, Doc, Query, Turn
from loft_warehouse.prompts.templates import template, with_bullet
from loft_warehouse.prompts.variants import Variant

ANSWER = {
    "question": "1990s Indian romance films",
    "candidate_answers": [
        {
            "candidate_answer": "Roja (film)",
            "evidence_for": [{"doc_id": "1", "text": "a 1992 Indian Tamil-language romantic thriller"}],
            "evidence_against": [],
            "reasoning": "Indian, romance, 1992.",
            "final_judgment": "TRUE",
        },
        {
            "candidate_answer": "Closer (2004 film)",
            "evidence_for": [{"doc_id": 0, "text": "a 2004 romantic drama"}],
            "evidence_against": [{"doc_id": "0", "text": "American"}],
            "reasoning": "Not Indian.",
            "final_judgment": "FALSE",
        },
    ],
    "answer": ["Roja (film)"],
    "answer_doc_ids": ["1"],
}


def test_stage_one_prompt_is_the_papers_template_with_the_corpus():
    docs = [Doc("a", "A 2004 romantic drama.", "Closer (2004 film)"), Doc("b", "A 1992 Tamil film.", "Roja (film)")]
    turn = Turn("1990s Indian romance films", '["Roja (film)"]', ["Roja (film)"], ("b",))
    collection = Collection("rag", "quest", "quest", True, docs, [], [Query("q1", "test", (turn,))])
    for name, base, bullet in [
        ("justified", "justified_qa", False),
        ("justified_cot_quest", "justified_qa_cot", True),
    ]:
        rendered = justified.render_stage1(collection, Variant("default"), method(name), Design(), seed=1)
        row = rendered.rows[0]
        text = template(base)
        if bullet:
            text = with_bullet(text, template("justified_quest_bullet"))
        documents = (
            "ID: 0 | TITLE: Closer (2004 film) | CONTENT: A 2004 romantic drama.\n"
            "ID: 1 | TITLE: Roja (film) | CONTENT: A 1992 Tamil film."
        )
        expected = text.replace("{{documents}}", documents).replace("{{question}}", turn.text)
        assert rendered.prefix + row.suffix == expected
        assert row.gold_positions == (1,)
    assert "Step 2: JSON response" in expected and "semi-automatically" in expected


def test_answer_read_under_both_rules():
    text = f"Here it is:\n```json\n{json.dumps(ANSWER)}\n```"
    for rule in ("loft", "strict"):
        answers, status, detail, payload = justified.parse_answer(text, rule)
        assert (answers, status, detail) == (["Roja (film)"], "ok", None)
        assert payload == {
            "candidates": [
                {"candidate": "Roja (film)", "judgment": "TRUE", "doc_ids": ["1"]},
                {"candidate": "Closer (2004 film)", "judgment": "FALSE", "doc_ids": ["0"]},
            ],
            "answer_doc_ids": ["1"],
        }


def test_cot_answer_is_read_after_its_step_two_header_and_trailing_commas_are_repaired():
    # The paper's own schema example ends "...ids"],\n}": a model that copies it writes invalid JSON.
    body = json.dumps(ANSWER, indent=1)[:-1].rstrip() + ",\n}"
    text = "===== Step 1: Notes =====\nSee {doc 3}.\n===== Step 2: JSON response =====\n" + body + "\n===== END ====="
    answers, status, _, _ = justified.parse_answer(text, "strict")
    assert (answers, status) == (["Roja (film)"], "repaired")


@pytest.mark.parametrize(
    ("text", "loft", "strict"),
    [
        (None, ([], "no_text"), ([], "no_text")),
        ("I cannot answer.", ([], "no_json"), ([], "no_json")),
        ('{"answer": ["x"', ([], "no_json"), ([], "no_json")),
        ('{"answer": ["x"] "y"}', ([], "invalid_json"), ([], "invalid_json")),
        ('{"answer": ["Roja"]}', (["Roja"], "ok"), ([], "schema_violation")),
        ('{"answer": "Roja"}', ([], "schema_violation"), ([], "schema_violation")),
    ],
)
def test_broken_answers_get_a_status_not_an_exception(text, loft, strict):
    assert justified.parse_answer(text, "loft")[:2] == loft
    assert justified.parse_answer(text, "strict")[:2] == strict


def test_strict_rule_names_the_schema_violation():
    bad = json.loads(json.dumps(ANSWER))
    bad["candidate_answers"][0]["final_judgment"] = "maybe"
    _, status, detail, _ = justified.parse_answer(json.dumps(bad), "strict")
    assert status == "schema_violation"
    assert detail.startswith("$.candidate_answers[0].final_judgment:") and "maybe" in detail
    assert justified.parse_answer(json.dumps(bad), "loft")[:2] == (["Roja (film)"], "ok")


def test_verdicts():
    verdict = {k: ANSWER["candidate_answers"][0][k] for k in ANSWER["candidate_answers"][0]}
    payload = json.dumps({"candidate": "Roja (film)"})
    assert parse_response(json.dumps(verdict), "strict", "rag", "justified_verify", 2, payload).answers == [
        "Roja (film)"
    ]
    verdict["final_judgment"] = "true"
    assert parse_response(json.dumps(verdict), "loft", "rag", "justified_verify", 2, payload).answers == ["Roja (film)"]
    strict = parse_response(json.dumps(verdict), "strict", "rag", "justified_verify", 2, payload)
    assert (strict.answers, strict.status) == ([], "schema_violation")
    verdict["final_judgment"] = "FALSE"
    assert parse_response(json.dumps(verdict), "strict", "rag", "justified_verify", 2, payload).answers == []
    nothing = parse_response(None, "strict", "rag", "justified_verify", 2, '{"nothing_to_verify": true}')
    assert (nothing.answers, nothing.status) == ([], "nothing_to_verify")


def test_verification_prompt_shows_the_cited_documents_question_and_candidate():
    docs = [("1", Doc("b", "A 1992 Tamil film.", "Roja (film)"))]
    text = justified.verification_text(method("justified_verify"), "1990s Indian romance films", docs, "Roja (film)")
    assert text.endswith(
        "===== Documents =====\nID: 1 | TITLE: Roja (film) | CONTENT: A 1992 Tamil film.\n"
        "===== Question =====\n1990s Indian romance films\n===== Candidate Answer =====\nRoja (film)"
    )
    assert text.startswith("Your task is to judge whether a given candidate answer is a valid answer")
