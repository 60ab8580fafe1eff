"""R&R's paginated prompts: the paper's templates filled with the document, reminders between
pages every r tokens, ICR per chunk, and the answer passage placed about x tokens in."""

from __future__ import annotations

import json
import re

import pytest

from loft_warehouse.design import Design
from loft_warehouse.errors import ConfigurationError
from loft_warehouse.methods import paginated
from loft_warehouse.methods.catalogue import method
from loft_warehouse.prompts.inputs import Collection, Doc, Query, Turn
from loft_warehouse.prompts.templates import template
from loft_warehouse.prompts.variants import Variant

QUESTION = "who painted the ceiling?"


def _collection(n_docs: int = 30, tokens: int = 100, task: str = "rr") -> Collection:
    turn = Turn(QUESTION, json.dumps(["Michelangelo"]), ["Michelangelo"], ("gold",))
    docs = [Doc("gold", "Michelangelo painted it.", "Sistine Chapel", n_tokens=tokens)]
    docs += [Doc(f"d{i}", f"Passage number {i}.", f"Title {i}", n_tokens=tokens) for i in range(n_docs)]
    return Collection(task, "nq", "q1", True, docs, [], [Query("q1", "test", (turn,))])


def _text(rendered, row) -> str:
    prefix = row.prefix if row.prefix is not None else rendered.prefix
    return row.head + prefix + "".join(row.segments) + row.suffix


def _document(pages) -> str:
    return "\n\n".join(page.text for page in pages)


def test_baseline_prompt_is_the_papers_template_with_the_document():
    collection = _collection()
    variant = Variant("d2k_x1k", family="rr", document_tokens=2_000, answer_tokens=1_000)
    rendered = paginated.render_qa(collection, variant, method("cic"), Design())
    pages = paginated.pages_of(collection, variant)
    expected = template("rr_qa").format(
        question=QUESTION, format_instructions=template("rr_qa_page_format"), document=_document(pages)
    )
    assert _text(rendered, rendered.rows[0]) == expected
    # A study question's own pages are one segment each, shown in page order.
    assert len(rendered.rows[0].segments) == len(pages) == 20
    assert [shown for shown, _ in rendered.shown] == [str(n) for n in range(1, 21)]


def test_answer_only_is_the_baseline_prompt_without_the_page():
    collection = _collection()
    variant = Variant("d2k_x1k", family="rr", document_tokens=2_000, answer_tokens=1_000)
    baseline = paginated.render_qa(collection, variant, method("cic"), Design())
    direct = paginated.render_qa(collection, variant, method("answer_only"), Design())
    pages = paginated.pages_of(collection, variant)
    assert _text(direct, direct.rows[0]) == template("rr_qa").format(
        question=QUESTION, format_instructions=template("rr_qa_format"), document=_document(pages)
    )
    # Table 4: the format instructions are the only difference between the two prompts.
    assert _text(baseline, baseline.rows[0]).replace(template("rr_qa_page_format"), template("rr_qa_format")) == _text(
        direct, direct.rows[0]
    )
    assert "page" in template("rr_qa_page_format").lower() and "page" not in template("rr_qa_format").lower()


def test_answer_passage_sits_about_x_tokens_in():
    collection = _collection()
    for x, expected_page in [(0, 1), (1_000, 11), (1_950, 20)]:
        variant = Variant("v", family="rr", document_tokens=2_000, answer_tokens=x)
        pages = paginated.pages_of(collection, variant)
        gold = next(p for p in pages if p.doc.pid == "gold")
        assert gold.number == expected_page
        assert sum(p.doc.n_tokens for p in pages) <= 2_000


def test_reminders_every_r_tokens_between_pages():
    collection = _collection(n_docs=40)
    variant = Variant("d3k_x0k", family="rr", document_tokens=3_000, answer_tokens=0)
    design = Design(reprompt_every=1_000)
    rendered = paginated.render_qa(collection, variant, method("reprompt"), design)
    text = _text(rendered, rendered.rows[0])
    reminder = template("rr_qa_reminder").format(question=QUESTION, format_instructions=template("rr_qa_page_format"))
    # 30 pages of 100 tokens: a reminder after pages 10 and 20, none after the last page.
    assert text.count(reminder) == 2
    before_reminders = [text[: m.start()] for m in re.finditer(re.escape(reminder), text)]
    assert [b.count("</PAGE ") for b in before_reminders] == [10, 20]
    assert all(b.endswith("</PAGE 10>\n\n") or b.endswith("</PAGE 20>\n\n") for b in before_reminders)
    # Removing the reminders gives the baseline document back.
    pages = paginated.pages_of(collection, variant)
    assert text.replace(reminder + "\n\n", "") == template("rr_qa").format(
        question=QUESTION, format_instructions=template("rr_qa_page_format"), document=_document(pages)
    )


def test_icr_asks_for_k_pages_and_chunked_icr_calls_once_per_chunk():
    collection = _collection(n_docs=40)
    variant = Variant("d3k_x0k", family="rr", document_tokens=3_000, answer_tokens=0)
    design = Design(icr_pages=3, chunk_tokens=1_000)
    icr = paginated.render_icr(collection, variant, method("icr"), design)
    assert "Identify up to 3 page numbers" in _text(icr, icr.rows[0])
    chunked = paginated.render_icr(collection, variant, method("chunked_icr"), design)
    assert [row.call_index for row in chunked.rows] == [0, 1, 2]
    chunk_pages = [re.findall(r"<PAGE (\d+)>", _text(chunked, row)) for row in chunked.rows]
    assert chunk_pages == [[str(n) for n in range(start, start + 10)] for start in (1, 11, 21)]
    # The gold page (1) is in the first chunk only.
    assert [row.gold_positions for row in chunked.rows] == [(0,), (), ()]


def test_shared_corpus_pages_are_one_prefix_and_reminders_split_it_into_runs():
    collection = _collection(n_docs=29, task="rag")
    variant = Variant("default")
    plain = paginated.render_icr(collection, variant, method("icr"), Design())
    row = plain.rows[0]
    # Pages every query shares are the prefix; the question is the head and the suffix.
    assert row.prefix.startswith("<PAGE 1>\n") and row.segments == ()
    assert QUESTION in row.head and QUESTION in row.suffix
    reminded = paginated.render_icr(collection, variant, method("r_and_r"), Design(reprompt_every=1_000))
    row = reminded.rows[0]
    assert row.prefix.count("<PAGE ") == 10
    assert [s.count("<PAGE ") for s in row.segments] == [0, 10, 0, 10]
    assert "<INSTRUCTIONS_REMINDER>" in row.segments[0]


def test_qa_text_shows_exactly_the_chosen_pages_in_document_order():
    pages = paginated.pages_of(_collection(), Variant("d2k_x0k", family="rr", document_tokens=2_000, answer_tokens=0))
    chosen = [pages[7], pages[0], pages[3]]
    text = paginated.qa_text(QUESTION, chosen)
    assert re.findall(r"<PAGE (\d+)>", text) == ["1", "4", "8"]
    assert text == template("rr_qa").format(
        question=QUESTION,
        format_instructions=template("rr_qa_page_format"),
        document=_document([pages[0], pages[3], pages[7]]),
    )


def test_settings_in_the_method_name_win_over_the_build_settings():
    collection = _collection(n_docs=40)
    variant = Variant("d3k_x0k", family="rr", document_tokens=3_000, answer_tokens=0)
    design = Design(reprompt_every=1_000, icr_pages=5, chunk_tokens=1_000)
    reminder = template("rr_qa_reminder").format(question=QUESTION, format_instructions=template("rr_qa_page_format"))
    counts = {
        name: _text(r, r.rows[0]).count(reminder)
        for name in ("reprompt", "reprompt_r500", "reprompt_r2000")
        for r in [paginated.render_qa(collection, variant, method(name), design)]
    }
    assert counts == {"reprompt": 2, "reprompt_r500": 5, "reprompt_r2000": 1}
    icr = paginated.render_icr(collection, variant, method("icr_k2"), design)
    assert "Identify up to 2 page numbers" in _text(icr, icr.rows[0])
    wide = paginated.render_icr(collection, variant, method("chunked_icr_c2000"), design)
    assert [row.call_index for row in wide.rows] == [0, 1]
    # chunkwise R&R: the reminders inside every chunk
    chunked = paginated.render_icr(collection, variant, method("chunked_r_and_r_r500"), design)
    assert [_text(chunked, row).count("<INSTRUCTIONS_REMINDER>") for row in chunked.rows] == [1, 1, 1]


def test_reminder_placements_of_r_and_r_table_6():
    collection = _collection(n_docs=40)
    variant = Variant("d3k_x1k", family="rr", document_tokens=3_000, answer_tokens=1_500)
    design = Design(reprompt_every=1_000)
    full = template("rr_qa_reminder").format(question=QUESTION, format_instructions=template("rr_qa_page_format"))
    tags = template("rr_qa_reminder_tags")
    pages = paginated.pages_of(collection, variant)
    baseline = template("rr_qa").format(
        question=QUESTION, format_instructions=template("rr_qa_page_format"), document=_document(pages)
    )
    texts = {
        name: _text(r, r.rows[0])
        for name in ("reprompt_tags_only", "reprompt_at_beginning", "reprompt_before_answer")
        for r in [paginated.render_qa(collection, variant, method(name), design)]
    }
    # Tags only: the uniform placement, a reminder that names no question.
    assert texts["reprompt_tags_only"].count(tags) == 2 and QUESTION not in tags
    assert texts["reprompt_tags_only"].replace(tags + "\n\n", "") == baseline
    # At beginning: the same two reminders, both before page 1.
    beginning = texts["reprompt_at_beginning"]
    assert beginning.count(full) == 2
    assert beginning.index("<DOCUMENT>\n" + full + "\n\n" + full + "\n\n<PAGE 1>\n") > 0
    assert beginning.replace(full + "\n\n", "") == baseline
    # Before answer: one reminder, right before the gold page (page 16, 1,500 tokens in).
    before = texts["reprompt_before_answer"]
    gold = next(p for p in pages if p.doc.pid == "gold")
    assert gold.number == 16 and before.count(full) == 1
    assert full + "\n\n<PAGE 16>\n" in before and before.replace(full + "\n\n", "") == baseline


def test_before_answer_takes_no_interval_and_placements_take_one():
    assert method("reprompt_at_beginning_r5000").reprompt_every == 5000
    assert method("reprompt_tags_only_r20000").name == "reprompt_tags_only_r20000"
    with pytest.raises(ConfigurationError):
        method("reprompt_before_answer_r5000")
