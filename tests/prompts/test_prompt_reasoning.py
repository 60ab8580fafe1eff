"""Hand-written few-shot chains (RAG multi-hop) of the paper's wording, rendered with each
variant's shown IDs; LOFT's own prompt (the default) has none."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from loft_warehouse.errors import BadInputError
from loft_warehouse.prompts import reasoning
from loft_warehouse.prompts.inputs import Collection, Doc, Query, Turn
from loft_warehouse.prompts.reasoning import load_chains
from loft_warehouse.prompts.render import render
from loft_warehouse.prompts.variants import VARIANTS

CHAINS = """
rag:
  hotpotqa:
    f1:
      - "Okazaki won the 2016 award (ID: {doc:award})."
      - "Okazaki was born in 1986 (ID: {doc:okazaki})."
"""


@pytest.fixture
def chains_file(tmp_path, monkeypatch):
    path = tmp_path / "reasoning.yaml"
    path.write_text(CHAINS, encoding="utf-8")
    monkeypatch.setattr(reasoning, "REASONING_FILE", path)
    return path


def collection(task: str) -> Collection:
    docs = [
        Doc("okazaki", "Shinji Okazaki was born in 1986.", "Shinji Okazaki"),
        Doc("filler", "Filler.", "Filler"),
        Doc("award", "Awarded to Shinji Okazaki.", "Best Footballer in Asia 2016"),
    ]
    turn = Turn("When was the 2016 winner born?", '["1986"]', ["1986"], ("award", "okazaki"))
    return Collection(task, "hotpotqa", "hotpotqa", True, docs, [Query("f1", "few_shot", (turn,))])


PAPER = VARIANTS["paper_wording"]


def test_rag_example_gets_the_chain_after_the_title_lines(chains_file):
    prefix = render(collection("rag"), PAPER, seed=1).prefix
    assert prefix.split("====== Example 1 ======\n")[1] == (
        "Which documents can answer the query? Print out the TITLE and ID of each document you "
        "use. Then format the answer into a list.\n"
        "query: When was the 2016 winner born?\n"
        "The following documents can help answer the query:\n"
        "TITLE: Best Footballer in Asia 2016 | ID: 2\n"
        "TITLE: Shinji Okazaki | ID: 0\n"
        "reasoning: Okazaki won the 2016 award (ID: 2).\n"
        "reasoning: Okazaki was born in 1986 (ID: 0).\n"
        "Final Answer: ['1986']\n"
    )


def test_chain_ids_follow_moved_documents_and_no_cot_drops_it(chains_file):
    moved = render(collection("rag"), replace(VARIANTS["gold_pos_few_shot_p100"], wording="paper"), seed=1).prefix
    assert "reasoning: Okazaki won the 2016 award (ID: 2).\n" in moved
    assert "reasoning: Okazaki was born in 1986 (ID: 1).\n" in moved
    assert "reasoning:" not in render(collection("rag"), replace(VARIANTS["no_cot"], wording="paper"), seed=1).prefix


def test_lofts_own_prompt_has_no_chains(chains_file):
    assert "reasoning:" not in render(collection("rag"), VARIANTS["default"], seed=1).prefix


def test_retrieval_keeps_the_figure_11_title_lines(chains_file):
    assert "reasoning:" not in render(collection("retrieval"), PAPER, seed=1).prefix


def test_unknown_document_in_a_chain_names_the_file_and_query(tmp_path, monkeypatch):
    path = tmp_path / "bad.yaml"
    path.write_text('rag: {hotpotqa: {f1: ["see {doc:nowhere}"]}}', encoding="utf-8")
    monkeypatch.setattr(reasoning, "REASONING_FILE", path)
    with pytest.raises(BadInputError, match=r"bad.yaml:rag/hotpotqa/f1: document nowhere"):
        render(collection("rag"), PAPER, seed=1)


def test_shipped_chains_cite_a_document_on_every_line():
    chains = load_chains(str(reasoning.REASONING_FILE))
    assert {key[:2] for key in chains} == {("rag", "hotpotqa")}
    assert len(chains) == 5
    assert all(re.search(r"\{doc:hotpotqa-[0-9a-f]{16}\}", line) for c in chains.values() for line in c)
