"""IRCoT HotpotQA loader: real-file counts, gold cap, dedup, bad input."""

from __future__ import annotations

from dataclasses import replace

import pytest

from loft_warehouse.errors import BadInputError
from loft_warehouse.sources import hotpotqa_ircot

HOTPOT = "raw/hotpotqa/dev_subsampled_ircot500.jsonl"


def _question(qid, contexts, spans=("answer",)):
    return {
        "question_id": qid,
        "question_text": f"question {qid}?",
        "answers_objects": [{"number": "", "spans": list(spans)}],
        "contexts": [
            {"id": str(i), "title": t, "paragraph_text": p, "is_supporting": s} for i, (t, p, s) in enumerate(contexts)
        ],
    }


def test_real_counts_and_gold(data_root, spec_of):
    data = hotpotqa_ircot.load(spec_of("retrieval", "hotpotqa"), data_root)
    # 500 questions, 4,931 paragraphs of which 4,858 are distinct; 2 supporting per question.
    assert len(data.queries) == 500
    assert len(data.documents) == 4858
    assert all(len(q.gold[0]) == 2 and q.gold == q.gold_pids for q in data.queries)
    assert all(q.relevant_pids == q.gold[0] for q in data.queries)
    first = data.queries[0]
    assert first.qid == "5a8c7595554299585d9e36b6"
    titles = {d.pid: d.title for d in data.documents}
    assert [titles[p] for p in first.gold[0]] == ["Shirley Temple", "Kiss and Tell (1945 film)"]
    assert first.gold == [["hotpotqa-cfc906b1e45edcf0", "hotpotqa-670299542c4bb985"]]


def test_real_rag_gold_is_the_spans(data_root, spec_of):
    data = hotpotqa_ircot.load(spec_of("rag", "hotpotqa"), data_root)
    assert data.queries[0].gold == [["Chief of Protocol"]]
    assert all(len(q.gold[0]) == 1 for q in data.queries)


def test_real_load_is_deterministic(data_root, spec_of):
    spec = spec_of("retrieval", "hotpotqa")
    first, second = hotpotqa_ircot.load(spec, data_root), hotpotqa_ircot.load(spec, data_root)
    assert [d.pid for d in first.documents] == [d.pid for d in second.documents]
    assert [q.gold for q in first.queries] == [q.gold for q in second.queries]


def test_shared_paragraphs_dedup_and_gold_cap(raw, spec_of):
    raw.jsonl(
        HOTPOT,
        [
            _question("a", [("A", "Alpha.", True), ("B", "Beta.", False), ("C", "Gamma.", True)]),
            _question("b", [("B", "Beta.", True), ("C", "Gamma.", True), ("D", "Delta.", True)]),
        ],
    )
    data = hotpotqa_ircot.load(spec_of("retrieval", "hotpotqa"), raw.root)
    pid = {d.title: d.pid for d in data.documents}
    assert [(d.title, d.source_row) for d in data.documents] == [
        ("A", 1),
        ("B", 1),
        ("C", 1),
        ("D", 2),
    ]
    assert data.queries[0].gold == [[pid["A"], pid["C"]]]
    # Three supporting paragraphs, max_gold 2: the first two are gold, all three stay relevant.
    assert data.queries[1].gold == data.queries[1].gold_pids == [[pid["B"], pid["C"]]]
    assert data.queries[1].relevant_pids == [pid["B"], pid["C"], pid["D"]]


def test_no_cap_without_max_gold(raw, spec_of):
    raw.jsonl(HOTPOT, [_question("a", [("A", "x", True), ("B", "y", True), ("C", "z", True)])])
    spec = replace(spec_of("retrieval", "hotpotqa"), max_gold=None)
    assert len(hotpotqa_ircot.load(spec, raw.root).queries[0].gold[0]) == 3


def test_malformed_line_names_file_and_line(raw, spec_of):
    path = raw.jsonl(HOTPOT, [_question("a", [("A", "x", True)]), "", "not json"])
    with pytest.raises(BadInputError, match=rf"{path}:3: malformed JSON"):
        hotpotqa_ircot.load(spec_of("retrieval", "hotpotqa"), raw.root)


def test_duplicate_question_id_names_both_lines(raw, spec_of):
    path = raw.jsonl(HOTPOT, [_question("a", [("A", "x", True)]), _question("a", [("B", "y", True)])])
    with pytest.raises(BadInputError, match=rf"{path}:2: duplicate question_id 'a' \(first at line 1\)"):
        hotpotqa_ircot.load(spec_of("retrieval", "hotpotqa"), raw.root)


def test_empty_paragraph_is_bad_input(raw, spec_of):
    path = raw.jsonl(HOTPOT, [_question("a", [("A", "  ", True)])])
    with pytest.raises(BadInputError, match=rf"{path}:1: empty passage text"):
        hotpotqa_ircot.load(spec_of("retrieval", "hotpotqa"), raw.root)


def test_missing_spans_are_bad_input(raw, spec_of):
    path = raw.jsonl(HOTPOT, [_question("a", [("A", "x", True)], spans=())])
    with pytest.raises(BadInputError, match=rf"{path}:1: answers_objects\[\]\.spans must be"):
        hotpotqa_ircot.load(spec_of("rag", "hotpotqa"), raw.root)
