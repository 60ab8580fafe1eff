"""BEIR MS MARCO loader: real-file counts, graded gold order, qrels and corpus bad input."""

from __future__ import annotations

from dataclasses import replace

import pytest

from loft_warehouse import registry, staging
from loft_warehouse.errors import BadInputError, ConfigurationError
from loft_warehouse.sources import beir_msmarco

MSMARCO = "raw/beir_subsets/msmarco"


def _tree(raw, corpus_ids=("p1", "p2", "p3", "p4"), queries=("q1", "q2"), qrels=()):
    raw.jsonl(
        f"{MSMARCO}/corpus.jsonl",
        [{"_id": pid, "title": "", "text": f"passage {pid}", "metadata": {}} for pid in corpus_ids],
    )
    raw.jsonl(f"{MSMARCO}/queries.jsonl", [{"_id": q, "text": f"query {q}"} for q in queries])
    return raw.lines(f"{MSMARCO}/qrels/test.tsv", qrels)


def test_real_counts_and_gold(data_root, spec_of):
    data = beir_msmarco.load(spec_of("retrieval", "msmarco"), data_root)
    assert len(data.documents) == 5000
    assert len(data.queries) == 50
    # 4,102 qrels, all graded > 0, over 43 queries; 7 queries have none.
    assert sum(len(q.relevant_pids) for q in data.queries) == 4102
    assert sum(1 for q in data.queries if q.gold[0]) == 43
    assert sorted(len(q.gold[0]) for q in data.queries) == [0] * 7 + [4] + [5] * 42
    first = data.queries[0]
    assert first.qid == "19335"
    # Grade 3 in file order (lines 7, 8, 17, 19), then the first grade 2 (line 3).
    assert first.gold == first.gold_pids == [["3175481", "3175484", "8412682", "8412684", "1729"]]
    assert len(first.relevant_pids) == 20
    assert all(d.title == "" for d in data.documents)


def test_real_load_is_deterministic(data_root, spec_of):
    spec = spec_of("retrieval", "msmarco")
    first, second = beir_msmarco.load(spec, data_root), beir_msmarco.load(spec, data_root)
    assert [q.gold for q in first.queries] == [q.gold for q in second.queries]
    assert [d.pid for d in first.documents] == [d.pid for d in second.documents]


def test_gold_is_highest_grade_first_then_file_order(raw, spec_of):
    _tree(
        raw,
        qrels=[
            "query-id\tcorpus-id\tscore",
            "q1\tp1\t1",
            "q1\tp2\t3",
            "q1\tp3\t2",
            "q1\tp4\t3",
            "q2\tp1\t0",
        ],
    )
    spec = spec_of("retrieval", "msmarco")
    data = beir_msmarco.load(spec, raw.root)
    assert data.queries[0].relevant_pids == ["p2", "p4", "p3", "p1"]
    assert data.queries[0].gold == [["p2", "p4", "p3", "p1"]]
    # Score 0 is not relevant: q2 has no gold and is never selected.
    assert data.queries[1].gold == data.queries[1].gold_pids == [[]]
    assert data.queries[1].relevant_pids == []


def test_gold_cap_keeps_all_relevant(raw, spec_of):
    _tree(raw, qrels=["q1\tp1\t1", "q1\tp2\t2", "q1\tp3\t1"])
    spec = replace(spec_of("retrieval", "msmarco"), max_gold=2)
    query = beir_msmarco.load(spec, raw.root).queries[0]
    assert query.gold == [["p2", "p1"]]
    assert query.relevant_pids == ["p2", "p1", "p3"]


def test_qrel_to_missing_passage_names_qrels_line(raw, spec_of):
    path = _tree(raw, qrels=["q1\tp1\t1", "q1\tp9\t2"])
    with pytest.raises(BadInputError, match=rf"{path}:2: corpus-id 'p9' is not in corpus.jsonl"):
        beir_msmarco.load(spec_of("retrieval", "msmarco"), raw.root)


def test_qrel_to_unknown_query_names_qrels_line(raw, spec_of):
    path = _tree(raw, qrels=["q7\tp1\t1"])
    with pytest.raises(BadInputError, match=rf"{path}:1: query-id 'q7' is not in queries.jsonl"):
        beir_msmarco.load(spec_of("retrieval", "msmarco"), raw.root)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("q1\tp1", "expected 3 tab-separated columns"),
        ("q1\tp1\t1\textra", "expected 3 tab-separated columns"),
        ("q1 p1 1", "expected 3 tab-separated columns"),
        ("q1\tp1\thigh", "score 'high' is not an integer"),
        ("q1\tp1\t1.5", "score '1.5' is not an integer"),
    ],
)
def test_malformed_qrels_line_names_line(raw, spec_of, line, message):
    path = _tree(raw, qrels=["q1\tp2\t1", line])
    with pytest.raises(BadInputError, match=rf"{path}:2: {message}"):
        beir_msmarco.load(spec_of("retrieval", "msmarco"), raw.root)


def test_header_only_allowed_on_first_line(raw, spec_of):
    path = _tree(raw, qrels=["q1\tp2\t1", "query-id\tcorpus-id\tscore"])
    with pytest.raises(BadInputError, match=rf"{path}:2: score 'score' is not an integer"):
        beir_msmarco.load(spec_of("retrieval", "msmarco"), raw.root)


def test_repeated_qrel_is_bad_input(raw, spec_of):
    path = _tree(raw, qrels=["q1\tp2\t1", "q1\tp2\t2"])
    with pytest.raises(BadInputError, match=rf"{path}:2: repeated qrel q1 p2 \(first at line 1\)"):
        beir_msmarco.load(spec_of("retrieval", "msmarco"), raw.root)


def test_malformed_corpus_line_names_file_and_line(raw, spec_of):
    _tree(raw)
    path = raw.jsonl(f"{MSMARCO}/corpus.jsonl", [{"_id": "p1", "text": "x"}, "{oops"])
    with pytest.raises(BadInputError, match=rf"{path}:2: malformed JSON"):
        beir_msmarco.load(spec_of("retrieval", "msmarco"), raw.root)


def test_duplicate_corpus_id_passes_through_to_staging(raw, spec_of, data_root, monkeypatch):
    _tree(raw, corpus_ids=("p1", "p2", "p1"), qrels=["q1\tp2\t1"])
    spec = spec_of("retrieval", "msmarco")
    data = beir_msmarco.load(spec, raw.root)
    assert [d.pid for d in data.documents] == ["p1", "p2", "p1"]
    monkeypatch.setattr(registry, "specs", lambda: (spec,))
    corpus = raw.root / MSMARCO / "corpus.jsonl"
    tokenizer = data_root / "tokenizers" / "sentencepiece" / "mistral_tokenizer.model.v1"
    with pytest.raises(BadInputError, match=rf"{corpus}:3: duplicate pid 'p1' .*\(first at {corpus}:1\)"):
        staging.stage_size(raw.root, "128k", tokenizer, 7)


def test_duplicate_query_id_is_bad_input(raw, spec_of):
    _tree(raw, queries=("q1", "q1"))
    path = raw.root / MSMARCO / "queries.jsonl"
    with pytest.raises(BadInputError, match=rf"{path}:2: duplicate query _id 'q1'"):
        beir_msmarco.load(spec_of("retrieval", "msmarco"), raw.root)


def test_rag_is_a_configuration_error(raw, spec_of):
    _tree(raw)
    with pytest.raises(ConfigurationError, match="retrieval only"):
        beir_msmarco.load(replace(spec_of("retrieval", "msmarco"), task="rag"), raw.root)


def test_the_corpus_is_shown_as_loft_loads_a_corpus_line(raw, spec_of):
    _tree(raw, qrels=["q1\tp1\t1"])
    raw.jsonl(f"{MSMARCO}/corpus.jsonl", [{"_id": "p1", "title": " childhood abuse", "text": "a childhood abuse b "}])
    [document] = beir_msmarco.load(spec_of("retrieval", "msmarco"), raw.root).documents
    assert (document.title, document.text) == ("", "a  b")
