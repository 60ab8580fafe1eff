"""Lost in the Middle prompts: byte-identical to the paper's own code (recorded outputs), gold at
every position by construction, stored as prefix + segments + suffix."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loft_warehouse.design import Design
from loft_warehouse.prompts.inputs import Collection, Doc, Query, Turn
from loft_warehouse.prompts.variants import Variant
from loft_warehouse.studies import litm, sweeps

RECORDED = json.loads((Path(__file__).parent / "fixtures" / "litm_prompts.json").read_text(encoding="utf-8"))


def _collection(task_dataset: str, docs: list[Doc], question: str, gold_pid: str, answers: list[str]) -> Collection:
    task, dataset = task_dataset.split("/")
    turn = Turn(text=question, gold_json=json.dumps(answers), gold=answers, gold_pids=(gold_pid,))
    return Collection(task, dataset, "q1", True, docs, [], [Query("q1", "test", (turn,))])


def _text(rendered) -> str:
    row = rendered.rows[0]
    return row.head + rendered.prefix + "".join(row.segments) + row.suffix


@pytest.fixture
def multidoc() -> Collection:
    alpha, untitled, beta = (Doc(f"p{i}", d["text"], d["title"]) for i, d in enumerate(RECORDED["documents"]))
    # A question's corpus holds its gold document first, then the others in order.
    return _collection("litm/nq_multidoc", [beta, alpha, untitled], RECORDED["question"], "p2", ["Röntgen"])


def test_multidoc_prompts_equal_the_papers_code(multidoc):
    cases = {
        "qa": Variant("docs3_gold2", family="litm_qa", n_documents=3, gold_index=2),
        "qa_query_aware": Variant("q", family="litm_qa", n_documents=3, gold_index=2, query_aware=True),
        "qa_oracle": Variant("oracle", family="litm_qa", setting="oracle", n_documents=1, gold_index=0),
        "closed_book": Variant("closed_book", family="litm_qa", setting="closed_book", n_documents=0),
    }
    for name, variant in cases.items():
        assert _text(litm.render(multidoc, variant)) == RECORDED["prompts"][name], name


def test_kv_prompts_equal_the_papers_code():
    pairs = dict(RECORDED["kv"])
    key = RECORDED["key"]
    docs = [Doc(key, pairs[key])] + [Doc(k, v) for k, v in RECORDED["kv"] if k != key]
    collection = _collection("litm/kv_retrieval", docs, key, key, [pairs[key]])
    plain = Variant("keys3_gold1", family="litm_kv", n_documents=3, gold_index=1)
    aware = Variant("keys3_gold1_query_aware", family="litm_kv", n_documents=3, gold_index=1, query_aware=True)
    assert _text(litm.render(collection, plain)) == RECORDED["prompts"]["kv"]
    assert _text(litm.render(collection, aware)) == RECORDED["prompts"]["kv_query_aware"]


def test_gold_sits_at_every_swept_position():
    docs = [Doc("gold", "the answer is here", "Gold")] + [Doc(f"d{i}", f"distractor {i}", f"T{i}") for i in range(29)]
    collection = _collection("litm/nq_multidoc", docs, "where?", "gold", ["here"])
    design = Design()
    variants = [v for v in sweeps.variants_for(collection, design) if v.setting is None]
    assert len(variants) == 2 * (3 + 5 + 7)
    for variant in variants:
        rendered = litm.render(collection, variant)
        row = rendered.rows[0]
        assert row.gold_positions == (variant.gold_index,)
        assert len(rendered.shown) == variant.n_documents
        assert rendered.shown[variant.gold_index] == (str(variant.gold_index + 1), "gold")
        first_document = 1 if variant.query_aware else 0
        gold_line = row.segments[first_document + variant.gold_index]
        assert gold_line == f"Document [{variant.gold_index + 1}](Title: Gold) the answer is here\n"
        assert row.gold_anchor == ("segment", first_document + variant.gold_index, 0)
        # The distractors keep their order around the gold.
        others = [pid for _, pid in rendered.shown if pid != "gold"]
        assert others == [f"d{i}" for i in range(variant.n_documents - 1)]


def test_kv_queried_key_at_every_position():
    docs = [Doc("key-q", "value-q")] + [Doc(f"key-{i}", f"value-{i}") for i in range(74)]
    collection = _collection("litm/kv_retrieval", docs, "key-q", "key-q", ["value-q"])
    for variant in sweeps.variants_for(collection, Design()):
        rendered = litm.render(collection, variant)
        row = rendered.rows[0]
        assert row.gold_positions == (variant.gold_index,)
        first_record = 1 if variant.query_aware else 0
        assert '"key-q": "value-q"' in row.segments[first_record + variant.gold_index]
        assert row.suffix == '\nKey: "key-q"\nCorresponding value:'
