"""The default prompt variant is LOFT's rendering, byte for byte: the warehouse renders the same
release-format files that LOFT's prompt code rendered (prompts/*.json, recorded outside the
project by record_prompts.py) and every query's first-turn prompt has the same sha256. The
fixtures under prompt_data/ are small release-format datasets written for this suite (retrieval
with and without several gold documents, RAG with one and several answers, Spider, SParC and
BBH's native ICL layout); arguana is the real release in the shared data. Later turns of
multi-turn conversations are compared with LOFT's own conversation loop (turns/*.json)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from loft_warehouse.answers.parse import loft_feedback
from loft_warehouse.prompts.inputs import Collection, Doc, Query, Turn
from loft_warehouse.prompts.multiturn import fill_model_answers
from loft_warehouse.prompts.render import render
from loft_warehouse.prompts.variants import VARIANTS
from loft_warehouse.registry import DatasetSpec, specs
from loft_warehouse.sources import loft_release
from loft_warehouse.sources.base import SourceData

HERE = Path(__file__).resolve().parent
RECORDED = sorted((HERE / "prompts").glob("*.json"))


def collections(task: str, dataset: str, data: SourceData) -> list[Collection]:
    """The release files as the renderer's input: corpus in file order, released splits."""
    spec = next((s for s in specs() if (s.task, s.dataset) == (task, dataset)), DatasetSpec(task, dataset, "x"))
    found: dict[str, Collection] = {}
    for doc in data.documents:
        corpus_id = doc.corpus_id or dataset
        found.setdefault(corpus_id, Collection(task, dataset, corpus_id, spec.has_title, [], source="loft_release"))
        found[corpus_id].docs.append(Doc(doc.pid, doc.text, doc.title, doc.answer))
    for query in data.queries:
        turns = tuple(
            Turn(text, json.dumps(query.gold[t]), query.gold[t], tuple(query.gold_pids[t] if query.gold_pids else ()))
            for t, text in enumerate(query.turns)
        )
        collection = found[query.corpus_id or dataset]
        parsed = Query(query.qid, query.release_split or "test", turns)
        (collection.few_shot if parsed.split == "few_shot" else collection.evaluated).append(parsed)
    return list(found.values())


def _ours(task: str, dataset: str, folder: Path) -> dict[str, str]:
    """First-turn prompt per LOFT qid (BBH's native layout: the index)."""
    prompts = {}
    for collection in collections(task, dataset, loft_release.load(task, folder)):
        rendered = render(collection, VARIANTS["default"], seed=0)
        for row in rendered.rows:
            if row.turn == 0 and row.split == "test":
                qid = row.qid.split("-", 1)[1] if task == "icl" else row.qid
                prompts[qid] = row.head + (row.prefix or rendered.prefix) + "".join(row.segments) + row.suffix
    return prompts


@pytest.mark.parametrize("recorded", RECORDED, ids=[p.stem for p in RECORDED])
def test_default_prompts_are_loft_byte_for_byte(recorded: Path, shared_data: Path) -> None:
    document = json.loads(recorded.read_text(encoding="utf-8"))
    task, dataset, length = document["task"], document["dataset"], document["length"]
    root = shared_data if dataset == "arguana" else HERE / "prompt_data"
    ours = _ours(task, dataset, root / "loft" / task / dataset / length)
    theirs = document["prompts"]
    assert sorted(ours) == sorted(theirs)
    for qid, expected in theirs.items():
        if "text" in expected:
            assert ours[qid] == expected["text"], qid
        assert hashlib.sha256(ours[qid].encode("utf-8")).hexdigest() == expected["sha256"], qid


RECORDED_TURNS = sorted((HERE / "turns").glob("*.json"))


@pytest.mark.parametrize("recorded", RECORDED_TURNS, ids=[p.stem for p in RECORDED_TURNS])
def test_later_turns_carry_the_answers_as_lofts_conversation_loop_appends_them(recorded: Path) -> None:
    """Issue 33 item 7: every turn of LOFT's own conversations (turns/*.json, record_turns.py:
    LOFT's run_one_example with planted replies), byte for byte, earlier answers included."""
    document = json.loads(recorded.read_text(encoding="utf-8"))
    task, dataset, length = document["task"], document["dataset"], document["length"]
    conversations = document["conversations"]
    compared = 0
    for collection in collections(
        task, dataset, loft_release.load(task, HERE / "prompt_data" / "loft" / task / dataset / length)
    ):
        rendered = render(collection, VARIANTS["default"], seed=0)
        for row in rendered.rows:
            if row.split != "test":
                continue
            theirs = conversations[row.qid]
            fed_back = [loft_feedback(reply) for reply in theirs["responses"][: row.turn]]
            assert fed_back == theirs["fed_back"][: row.turn], row.qid
            ours = (
                row.head
                + (row.prefix or rendered.prefix)
                + "".join(row.segments)
                + fill_model_answers(row.suffix, fed_back)
            )
            assert ours == theirs["prompts"][row.turn]["text"], (row.qid, row.turn)
            compared += 1
    assert compared == sum(len(c["prompts"]) for c in conversations.values()) > len(conversations)
