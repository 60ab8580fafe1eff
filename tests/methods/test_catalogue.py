"""The method catalogue and the design settings read from dbt vars."""

from __future__ import annotations

import duckdb
import pytest

from loft_warehouse.design import Design
from loft_warehouse.errors import ConfigurationError
from loft_warehouse.methods.catalogue import METHODS, method, resolve
from loft_warehouse.scoring.duckdb_functions import register


def test_methods_by_name_and_their_stages():
    assert [m.name for m in resolve(None)] == ["cic"]
    assert [m.name for m in resolve("cic, rag_top7")] == ["cic", "rag_top7"]
    rag = method("rag_top7")
    assert (rag.top_k, rag.n_stages, rag.stage(1).executor, rag.stage(2).executor) == (7, 2, "bm25", "system")
    assert method("r_and_r").reminders and method("chunked_icr").chunked
    verify = method("justified_cot_quest_verify")
    assert (verify.cot, verify.quest, [s.parse for s in verify.stages]) == (True, True, ["justified", "verdict"])
    read = method("rag_top40_justified_cot")
    assert (read.top_k, read.cot, read.quest) == (40, True, False)
    assert [s.parse for s in read.stages] == ["answers", "justified"]
    verify_each = method("rag_top40_verify_cot_quest")
    assert (verify_each.top_k, verify_each.cot, verify_each.quest) == (40, True, True)
    assert [s.parse for s in verify_each.stages] == ["answers", "verdict"]
    three = method("rag_top40_justified_quest_verify")
    assert [(s.number, s.executor, s.parse) for s in three.stages] == [
        (1, "bm25", "answers"),
        (2, "system", "justified"),
        (3, "system", "verdict"),
    ]
    every = [m.name for m in resolve(["all"])]
    assert set(METHODS) < set(every) and {"rag_top5", "rag_top40"} < set(every)
    with pytest.raises(ConfigurationError, match="unknown method 'rag_top0'"):
        method("rag_top0")


def test_methods_apply_to_their_tasks_and_variants():
    icr = method("icr")
    assert icr.applies_to("rag", "loft", "default") and icr.applies_to("rr", "rr", "d10k_x0k")
    assert not icr.applies_to("rag", "loft", "no_cot") and not icr.applies_to("retrieval", "loft", "default")
    assert method("cic").applies_to("litm", "litm_qa", "docs20_gold4")


def test_design_from_dbt_config():
    design = Design.from_config(
        {"methods": "['cic', 'icr']", "litm_documents": "[20]", "rr_lengths": "10000, 20000", "icr_pages": "3"},
        "['default', 'no_cot']",
    )
    assert [m.name for m in design.methods] == ["cic", "icr"]
    assert [v.name for v in design.variants] == ["default", "no_cot"]
    assert (design.litm_documents, design.rr_lengths, design.icr_pages) == ((20,), (10000, 20000), 3)
    assert Design.from_config({"litm_documents": "", "icr_pages": ""}, None) == Design()
    with pytest.raises(ConfigurationError, match="icr_pages must be >= 1"):
        Design.from_config({"icr_pages": "0"}, None)
    with pytest.raises(ConfigurationError, match="litm_documents must be a list of integers"):
        Design.from_config({"litm_documents": "[ten]"}, None)


def test_sweep_settings_in_the_name_make_arms_that_coexist():
    design = Design(reprompt_every=10_000, icr_pages=5, chunk_tokens=10_000)
    five, twenty = method("reprompt_r5000"), method("reprompt_r20000")
    assert (five.every(design), twenty.every(design), method("reprompt").every(design)) == (5_000, 20_000, 10_000)
    both = resolve(["reprompt_r5000", "reprompt_r20000"])
    assert [m.name for m in both] == ["reprompt_r5000", "reprompt_r20000"]
    full = method("chunked_r_and_r_r5000_k2_c20000")
    assert (full.every(design), full.pages(design), full.chunk(design)) == (5_000, 2, 20_000)
    assert full.reminders and full.chunked and full.uses_pages
    assert method("icr_k3").pages(design) == 3 and method("icr_k3").chunk(design) == 10_000


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("icr_r5000", "icr takes no _r setting"),
        ("reprompt_k3", "reprompt takes no _k setting"),
        ("r_and_r_c1000", "r_and_r takes no _c setting"),
        ("icr_k3_k4", "_k is given twice"),
        ("r_and_r_k3_r5000", "in the order r, k, c: r_and_r_r5000_k3"),
        ("reprompt_r0", "unknown method 'reprompt_r0'"),
    ],
)
def test_settings_a_method_does_not_take_are_refused(name: str, message: str):
    with pytest.raises(ConfigurationError, match=message):
        method(name)


def test_the_verifier_of_each_method_with_a_verification_stage():
    con = register(duckdb.connect())
    names = ["justified_verify", "justified_cot_quest_verify", "rag_top40_verify_quest", "rag_top5_verify_cot", "icr"]
    verifiers = con.execute("select loft_verifier(unnest(?))", [names]).fetchall()
    assert verifiers == [("Basic",), ("CoT - QUEST",), ("QUEST",), ("CoT",), (None,)]
