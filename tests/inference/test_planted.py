"""The planted-effect test system: its probabilities, its systematic draws and its answers."""

from __future__ import annotations

import json
import math

import polars as pl
import pytest

from loft_warehouse.errors import ConfigurationError
from loft_warehouse.inference.providers.base import PermanentError, Request
from loft_warehouse.inference.providers.planted import PlantedProvider, planted_decisions, planted_probability
from loft_warehouse.inference.systems import System, select
from loft_warehouse.scoring.parse import parse_loft

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


def test_later_stages_are_refused_with_the_reason() -> None:
    provider = PlantedProvider(_system(), pl.DataFrame(_rows(3)), None, "128k")
    with pytest.raises(PermanentError, match="planted answers first-stage prompts"):
        provider.complete(_request({**_rows(1)[0], "prompt_id": "rag/nq/nq/default/q0/0/rag_top5/s2/c0"}))


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
