"""The sweeps of the positional studies: the papers' default positions and the R&R grid."""

from __future__ import annotations

import json

from loft_warehouse.design import Design
from loft_warehouse.prompts.inputs import Collection, Doc, Query, Turn
from loft_warehouse.studies import sweeps


def test_default_positions_are_the_papers():
    design = Design()
    assert sweeps.litm_positions(10, design) == [0, 4, 9]
    assert sweeps.litm_positions(20, design) == [0, 4, 9, 14, 19]
    assert sweeps.litm_positions(30, design) == [0, 4, 9, 14, 19, 24, 29]
    # Seed 004's scripts: 140 keys at 0 34 69 104 139; the same quarter points for 75 keys.
    assert sweeps.kv_positions(140, design) == [0, 34, 69, 104, 139]
    assert sweeps.kv_positions(75, design) == [0, 18, 37, 55, 74]


def test_configured_positions_are_kept_within_the_document_count():
    design = Design(litm_positions=(0, 2, 15), kv_positions=(1, 100))
    assert sweeps.litm_positions(10, design) == [0, 2]
    assert sweeps.kv_positions(75, design) == [1]


def _rr(dataset: str, n_docs: int, tokens: int) -> Collection:
    turn = Turn("q?", json.dumps(["a"]), ["a"], ("g",))
    docs = [Doc("g", "gold", "G", n_tokens=tokens)] + [Doc(f"d{i}", "x", "D", n_tokens=tokens) for i in range(n_docs)]
    return Collection("rr", dataset, "q1", True, docs, [], [Query("q1", "test", (turn,))])


def test_rr_grid_steps_answer_positions_inside_lengths_the_corpus_holds():
    design = Design(rr_lengths=(10_000, 20_000, 40_000), rr_step=10_000)
    names = [v.name for v in sweeps.variants_for(_rr("nq", 250, 100), design)]
    # 25,100 tokens hold d = 10k and 20k, not 40k; x = 0, 10k, ..., d.
    assert names == ["d10k_x0k", "d10k_x10k", "d20k_x0k", "d20k_x10k", "d20k_x20k"]
    variant = sweeps.variants_for(_rr("nq", 250, 100), design)[3]
    assert (variant.experiment, variant.designed_position) == ("rr_d20000", (10000.0, "tokens"))
    # HotpotQA spreads its gold passages: one variant per length.
    assert [v.name for v in sweeps.variants_for(_rr("hotpotqa", 250, 100), design)] == ["d10k", "d20k"]
