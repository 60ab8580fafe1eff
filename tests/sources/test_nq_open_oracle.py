"""NQ-Open oracle loader: real-file counts, pid stability, bad input."""

from __future__ import annotations

import pytest

from loft_warehouse.errors import BadInputError
from loft_warehouse.sources import nq_open_oracle
from loft_warehouse.sources.passages import content_pid

NQ = "raw/lost_in_the_middle/nq-open-oracle.jsonl.gz"


def _record(question, title, text, answers=("a",), isgold=True):
    return {
        "question": question,
        "answers": list(answers),
        "ctxs": [{"title": title, "text": text, "hasanswer": True, "isgold": isgold}],
        "nq_annotated_gold": {},
    }


def test_real_counts_and_gold(data_root, spec_of):
    data = nq_open_oracle.load(spec_of("retrieval", "nq"), data_root)
    # 2,655 questions; their gold passages hold 2,599 distinct (title, text) pairs.
    assert len(data.queries) == 2655
    assert len(data.documents) == 2599
    assert len({d.pid for d in data.documents}) == 2599
    assert all(q.gold == q.gold_pids == [q.relevant_pids] for q in data.queries)
    assert all(len(q.relevant_pids) == 1 for q in data.queries)
    assert all(d.text == d.text.strip() and d.title for d in data.documents)
    first = data.queries[0]
    assert first.qid == "nq-1"
    assert first.turns == ["who got the first nobel prize in physics"]
    assert first.gold == [["nq-a7235ea83ceb7ac3"]]
    gold_doc = next(d for d in data.documents if d.pid == "nq-a7235ea83ceb7ac3")
    assert gold_doc.title == "List of Nobel laureates in Physics"
    assert gold_doc.pid == content_pid("nq", gold_doc.title, gold_doc.text)
    assert (gold_doc.source_row, first.source_row) == (1, 1)


def test_real_rag_gold_is_the_answer_aliases(data_root, spec_of):
    data = nq_open_oracle.load(spec_of("rag", "nq"), data_root)
    assert data.queries[0].gold == [["Wilhelm Conrad Röntgen"]]
    assert data.queries[0].gold_pids == [["nq-a7235ea83ceb7ac3"]]
    # 4,654 answer strings over the 2,655 questions of the file.
    assert sum(len(q.gold[0]) for q in data.queries) == 4654


def test_real_load_is_deterministic(data_root, spec_of):
    spec = spec_of("retrieval", "nq")
    first, second = nq_open_oracle.load(spec, data_root), nq_open_oracle.load(spec, data_root)
    assert [d.pid for d in first.documents] == [d.pid for d in second.documents]
    assert [(q.qid, q.gold) for q in first.queries] == [(q.qid, q.gold) for q in second.queries]


def test_shared_passage_becomes_one_document(raw, spec_of):
    raw.jsonl(
        NQ,
        [
            _record("q one", "Title", "Same passage."),
            _record("q two", " Title", "Same passage.  "),
            _record("q three", "Other", "Another passage."),
        ],
    )
    data = nq_open_oracle.load(spec_of("retrieval", "nq"), raw.root)
    assert [(d.title, d.text, d.source_row) for d in data.documents] == [
        ("Title", "Same passage.", 1),
        ("Other", "Another passage.", 3),
    ]
    assert [q.gold[0] for q in data.queries] == [
        [data.documents[0].pid],
        [data.documents[0].pid],
        [data.documents[1].pid],
    ]
    assert [q.qid for q in data.queries] == ["nq-1", "nq-2", "nq-3"]


def test_malformed_line_names_file_and_line(raw, spec_of):
    path = raw.jsonl(NQ, [_record("q", "T", "x"), '{"question": "broken"'])
    with pytest.raises(BadInputError, match=rf"{path}:2: malformed JSON"):
        nq_open_oracle.load(spec_of("retrieval", "nq"), raw.root)


def test_question_without_gold_passage_is_bad_input(raw, spec_of):
    path = raw.jsonl(NQ, [_record("q", "T", "x"), _record("q2", "T", "y", isgold=False)])
    with pytest.raises(BadInputError, match=rf"{path}:2: no gold passage"):
        nq_open_oracle.load(spec_of("retrieval", "nq"), raw.root)


def test_empty_answers_are_bad_input(raw, spec_of):
    path = raw.jsonl(NQ, [_record("q", "T", "x", answers=())])
    with pytest.raises(BadInputError, match=rf"{path}:1: answers must be a non-empty list"):
        nq_open_oracle.load(spec_of("rag", "nq"), raw.root)


def test_missing_field_is_bad_input(raw, spec_of):
    path = raw.jsonl(NQ, [{"question": "q", "answers": ["a"]}])
    with pytest.raises(BadInputError, match=rf"{path}:1: missing field\(s\) ctxs"):
        nq_open_oracle.load(spec_of("retrieval", "nq"), raw.root)
