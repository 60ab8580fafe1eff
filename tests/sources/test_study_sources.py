"""The positional studies' sources: a corpus per question, its gold first, distractors that hold
none of its answers, drawn the same at every size; the paper's own files when present."""

from __future__ import annotations

import pytest

from loft_warehouse.answers.normalize import normalize_litm
from loft_warehouse.errors import BadInputError
from loft_warehouse.sources import litm_kv, litm_multidoc, rr_documents
from loft_warehouse.sources.base import CorpusRequest

NQ = "raw/lost_in_the_middle/nq-open-oracle.jsonl.gz"


def _request(queries, budget: int = 10_000, n_tokens=lambda d: len(d.text.split())) -> CorpusRequest:
    return CorpusRequest(queries=queries, budget=budget, seed=7, n_tokens=n_tokens)


def _oracle(question: str, answers: list[str], title: str, text: str) -> dict:
    return {"question": question, "answers": answers, "ctxs": [{"title": title, "text": text, "isgold": True}]}


def test_multidoc_corpus_is_the_gold_then_distractors_without_the_answer(raw, spec_of):
    records = [_oracle(f"q{i}", [f"answer{i}"], f"T{i}", f"passage {i} holds answer{i}") for i in range(40)]
    records[5]["ctxs"][0]["text"] = "passage 5 holds answer0 too"
    raw.jsonl(NQ, records)
    data = litm_multidoc.load(spec_of("litm", "nq_multidoc"), raw.root)
    assert data.documents == [] and len(data.queries) == 40
    first = data.queries[0]
    corpus = data.corpus_for(_request([first]))
    assert corpus[0].pid == first.gold_pids[0][0] and corpus[0].draw_rank is None
    assert [d.draw_rank for d in corpus[1:]] == list(range(29))
    assert {d.corpus_id for d in corpus} == {"nq-1"}
    # The passage of question 6 also holds "answer0": never a distractor of question 1.
    assert all("answer0" not in normalize_litm(d.text) for d in corpus[1:])
    assert [d.pid for d in data.corpus_for(_request([first]))] == [d.pid for d in corpus]


def test_multidoc_reads_the_papers_own_files_when_present(raw, spec_of):
    ctxs = [{"title": f"D{j}", "text": f"distractor {j}", "isgold": False} for j in range(29)]
    ctxs.insert(3, {"title": "G", "text": "gold passage", "isgold": True})
    raw.jsonl(NQ, [_oracle("q", ["a"], "G", "gold passage")])
    raw.jsonl(
        "raw/lost_in_the_middle/nq-open-30_total_documents_gold_at_3.jsonl.gz",
        [{"question": "q", "answers": ["a"], "ctxs": ctxs}],
    )
    raw.jsonl(
        "raw/lost_in_the_middle/nq-open-10_total_documents_gold_at_0.jsonl.gz",
        [{"question": "q", "answers": ["a"], "ctxs": ctxs[:10]}],
    )
    data = litm_multidoc.load(spec_of("litm", "nq_multidoc"), raw.root)
    corpus = data.corpus_for(_request(data.queries))
    assert [d.title for d in corpus] == ["G"] + [f"D{j}" for j in range(29)]


def test_multidoc_needs_one_gold_passage(raw, spec_of):
    record = _oracle("q", ["a"], "T", "text")
    record["ctxs"][0]["isgold"] = False
    raw.jsonl(NQ, [record])
    with pytest.raises(BadInputError, match=r"nq-open-oracle.jsonl.gz:1: expected exactly one gold passage"):
        litm_multidoc.load(spec_of("litm", "nq_multidoc"), raw.root)


def test_kv_items_put_the_queried_pair_first(raw, spec_of):
    pairs = [[f"k{i}", f"v{i}"] for i in range(75)]
    raw.jsonl(
        "raw/lost_in_the_middle/kv-retrieval-75_keys.jsonl.gz",
        [{"ordered_kv_records": pairs, "key": "k40", "value": "v40"}],
    )
    data = litm_kv.load(spec_of("litm", "kv_retrieval"), raw.root)
    (query,) = data.queries
    assert (query.qid, query.turns, query.gold, query.gold_pids) == ("kv75-1", ["k40"], [["v40"]], [["k40"]])
    corpus = data.corpus_for(_request([query]))
    assert [d.pid for d in corpus[:3]] == ["k40", "k0", "k1"] and len(corpus) == 75


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ({"ordered_kv_records": [["a", "1"], ["a", "2"]], "key": "a", "value": "1"}, "duplicate keys"),
        ({"ordered_kv_records": [["a", "1"], ["b", 2]], "key": "a", "value": "1"}, "string pairs"),
        ({"ordered_kv_records": [["a", "1"], ["b", "2"]], "key": "c", "value": "3"}, "is not in ordered_kv_records"),
    ],
)
def test_kv_bad_items_name_file_and_line(raw, spec_of, record, message):
    raw.jsonl("raw/lost_in_the_middle/kv-retrieval-2_keys.jsonl.gz", [record])
    with pytest.raises(BadInputError, match=f"kv-retrieval-2_keys.jsonl.gz:1: .*{message}"):
        litm_kv.load(spec_of("litm", "kv_retrieval"), raw.root)


def test_rr_corpus_fills_the_budget_and_smaller_budgets_take_a_prefix(data_root, spec_of):
    data = rr_documents.load(spec_of("rr", "nq"), data_root)
    query = data.queries[0]
    small = data.corpus_for(_request([query], budget=2_000))
    large = data.corpus_for(_request([query], budget=20_000))
    assert sum(len(d.text.split()) for d in large) <= 20_000 < sum(len(d.text.split()) for d in large) + 200
    assert [d.pid for d in small] == [d.pid for d in large[: len(small)]]
    answers = [normalize_litm(a) for a in query.gold[0]]
    assert not any(a in normalize_litm(f"{d.title} {d.text}") for d in large[1:] for a in answers)


def test_rr_hotpotqa_keeps_both_supporting_paragraphs_and_none_of_the_questions_own(data_root, spec_of):
    data = rr_documents.load(spec_of("rr", "hotpotqa"), data_root)
    query = data.queries[0]
    corpus = data.corpus_for(_request([query], budget=5_000))
    assert [d.draw_rank for d in corpus[:2]] == [None, None] and len(query.gold_pids[0]) == 2
    own = rr_documents._own_passages(spec_of("rr", "hotpotqa"), data_root)[query.qid]
    assert not own & {d.pid for d in corpus[2:]}
