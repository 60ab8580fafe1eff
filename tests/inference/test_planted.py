"""The planted-effect test system: its probabilities, its systematic draws and its answers."""

from __future__ import annotations

import json
import math

import polars as pl
import pytest

from loft_warehouse.answers.parse import parse_loft
from loft_warehouse.errors import ConfigurationError
from loft_warehouse.inference.providers.base import PermanentError, Request
from loft_warehouse.inference.providers.planted import (
    PlantedProvider,
    planted_decisions,
    planted_probability,
    wrong_page,
)
from loft_warehouse.inference.systems import System, select
from loft_warehouse.methods.parsing import parse_response

OPTIONS = {"seed": 3, "base": 0.8, "effects": {"variant": {"no_cot": -0.2}, "size": {"1m": -0.3}}, "depth_slope": -0.4}


def _system(**options) -> System:
    return System(name="planted", provider="planted", model="planted", options={**OPTIONS, **options})


def _rows(n: int, variant: str = "default", task: str = "retrieval", depth: float | None = 0.5) -> list[dict]:
    return [
        {"prompt_id": f"{task}/{variant}/q{i}", "task": task, "dataset": "nq", "corpus_id": "nq", "variant": variant,
         "method": "cic", "stage": 1, "split": "test", "qid": f"q{i}", "turn": 0, "gold_depth": depth,
         "gold": json.dumps(["Paris"] if task == "rag" else [f"p{i}"]), "gold_shown_ids": json.dumps([str(i)])}
        for i in range(n)
    ]  # fmt: skip


def test_probability_adds_the_effects_and_clamps() -> None:
    row = _rows(1, "no_cot")[0]
    assert planted_probability(row, "128k", OPTIONS) == pytest.approx(0.8 - 0.2 - 0.4 * 0.5)
    assert planted_probability(row, "1m", OPTIONS) == pytest.approx(0.8 - 0.2 - 0.3 - 0.2)
    assert planted_probability({**row, "gold_depth": None}, "128k", OPTIONS) == pytest.approx(0.6)
    assert planted_probability(row, "128k", {"base": 1.7}) == 1.0


@pytest.mark.parametrize("n", [7, 60, 333])
def test_each_group_gets_its_planted_count(n: int) -> None:
    rows = pl.DataFrame(_rows(n) + _rows(n, "no_cot"))
    decisions = planted_decisions(rows, "128k", OPTIONS)
    for variant in ("default", "no_cot"):
        expected = n * planted_probability(_rows(1, variant)[0], "128k", OPTIONS)
        right = sum(decisions[f"retrieval/{variant}/q{i}"] for i in range(n))
        assert right in (math.floor(expected), math.ceil(expected))


def test_draws_are_seeded() -> None:
    rows = pl.DataFrame(_rows(200))
    assert planted_decisions(rows, "128k", OPTIONS) == planted_decisions(rows, "128k", OPTIONS)
    assert planted_decisions(rows, "128k", OPTIONS) != planted_decisions(rows, "128k", {**OPTIONS, "seed": 4})


def _request(row: dict) -> Request:
    return Request("k", "p", "", ({"role": "user", "content": "x"},), 1, row)


def test_answers_right_or_wrong_in_the_prompts_format() -> None:
    rows = _rows(40) + _rows(40, task="rag")
    doc_ids = pl.DataFrame(
        {
            "task": "retrieval",
            "dataset": "nq",
            "corpus_id": "nq",
            "variant": "default",
            "shown_id": [str(i) for i in range(40)],
        }
    )
    provider = PlantedProvider(_system(), pl.DataFrame(rows), doc_ids, "128k")
    for row in rows:
        answer = parse_loft(provider.complete(_request(row)).raw_text)
        gold = json.loads(row["gold_shown_ids"] if row["task"] == "retrieval" else row["gold"])
        assert (answer == gold) == provider.decisions[row["prompt_id"]]
        if answer != gold:
            assert len(answer) == 1 and answer[0] not in gold
    yes_no = {**_rows(1, task="rag")[0], "prompt_id": "yn", "gold": json.dumps(["no"])}
    provider = PlantedProvider(_system(base=0.0), pl.DataFrame([yes_no]), None, "128k")
    assert parse_loft(provider.complete(_request(yes_no)).raw_text) == ["zzzz"]  # "none of these" holds "no"


def _later(n: int, method: str, stage: int, **fields: object) -> list[dict]:
    return [
        {**row, "prompt_id": f"{method}/s{stage}/q{i}", "method": method, "stage": stage, **fields}
        for i, row in enumerate(_rows(n, task="rag"))
    ]


RAG_IDS = pl.DataFrame(
    {"task": "rag", "dataset": "nq", "corpus_id": "nq", "variant": "default", "shown_id": ["0", "1", "2"]}
)


def _answered(rows: list[dict], **options: object) -> tuple[PlantedProvider, dict[str, str]]:
    provider = PlantedProvider(_system(**options), pl.DataFrame(rows), RAG_IDS, "128k")
    return provider, {row["prompt_id"]: provider.complete(_request(row)).raw_text for row in rows}


def test_icr_pages_name_the_gold_pages_or_another() -> None:
    rows = _later(60, "icr", 1, gold_shown_ids=json.dumps(["3", "7"]))
    provider, texts = _answered(rows)
    for row in rows:
        pages = parse_response(texts[row["prompt_id"]], "strict", "rag", "icr", 1).answers
        assert (pages == ["3", "7"]) == provider.decisions[row["prompt_id"]]
        assert pages == ["3", "7"] or pages == ["4"]  # wrong: the page after the first gold page


def test_awrong_page_sits_beside_the_gold_page_inside_the_document() -> None:
    assert [wrong_page(gold, 10) for gold in (["3"], ["10"], ["1", "2"], ["9", "10"], [])] == [4, 9, 3, 8, 1]
    assert wrong_page(["5"], None) == 6


def test_justified_answers_pass_the_strict_schema_and_cite_the_gold() -> None:
    rows = _later(60, "justified_verify", 1, gold_shown_ids=json.dumps(["2"]))
    provider, texts = _answered(rows)
    for row in rows:
        parsed = parse_response(texts[row["prompt_id"]], "strict", "rag", "justified_verify", 1)
        assert parsed.status == "ok"
        right = provider.decisions[row["prompt_id"]]
        assert parsed.answers == (["Paris"] if right else ["none of these"])
        assert parsed.payload is not None
        assert parsed.payload["answer_doc_ids"] == (["2"] if right else ["0"])
        assert [c["doc_ids"] for c in parsed.payload["candidates"]] == [parsed.payload["answer_doc_ids"]]


def test_verdicts_keep_gold_candidates_when_right() -> None:
    gold = _later(50, "justified_verify", 2, payload=json.dumps({"candidate": "the PARIS"}))
    other = [{**r, "prompt_id": r["prompt_id"] + "x", "payload": json.dumps({"candidate": "Lyon"})} for r in gold]
    provider, texts = _answered(gold + other, base=0.7)
    for row in gold + other:
        kept = parse_response(texts[row["prompt_id"]], "strict", "rag", "justified_verify", 2, row["payload"])
        assert kept.status == "ok"
        is_gold = row in gold
        assert (kept.answers != []) == (is_gold == provider.decisions[row["prompt_id"]])
    assert sum(provider.decisions.values()) == 50  # base 0.7 less 0.4 x 0.5 depth, over 100 calls in one group


def test_prompts_without_their_gold_are_refused_with_the_reason() -> None:
    row = {**_rows(1)[0], "gold": None}
    provider = PlantedProvider(_system(), pl.DataFrame([row]), None, "128k")
    with pytest.raises(PermanentError, match="planted answers prompts of"):
        provider.complete(_request(row))


def test_the_planted_system_runs_alone() -> None:
    planted, bm25 = _system(), System(name="bm25", provider="bm25", model="bm25s")
    assert select({"planted": planted, "bm25": bm25}, ["planted"]) == [planted]
    with pytest.raises(ConfigurationError, match="planted \\(planted effects\\) runs in a build of its own"):
        select({"planted": planted, "bm25": bm25}, ["planted", "bm25"])


def test_planted_responses_have_their_own_store(monkeypatch: pytest.MonkeyPatch) -> None:
    from loft_warehouse.inference.store import PLANTED_STORE
    from loft_warehouse.inference.warehouse import response_store

    monkeypatch.delenv("LOFT_RESPONSE_STORE", raising=False)
    lines: list[str] = []
    assert response_store(None, [_system()], lines.append) == PLANTED_STORE
    assert lines == [f"planted effects: responses go to {PLANTED_STORE}"]
