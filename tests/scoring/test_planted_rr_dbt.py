"""The planted-effect run on R&R's study datasets, end to end through dbt at 128k: the planted
system answers NQ and HotpotQA documents of d = 40k and 80k tokens (answer positions x every 10k)
with Base (cic), Table 4's direct QA (answer_only), ICR asking for one page, chunkwise R&R with
40k-token chunks and the Before answer only reminder placement, and every R&R mart recovers what
was planted (base 0.8, -0.2 x the answer's depth in the document): Tables 1, 2 and 6 (rr_methods,
rr_sweeps), Table 3's calls and input tokens (rr_costs), Table 4's answer and page accuracy
(rr_pages) and Tables 7-9 by answer position (rr_positions). The build is
docs/methods-and-studies.md's command
(`run: planted-rr`).

A cell's planted value is the mean of its prompts' planted probabilities, computed here from the
prompts of the method's scored stage with the provider's own formula. The systems file holds the
planted system alone: the cost estimate prices every system of the file, and counting these long
prompts again for every API model would take minutes."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from loft_warehouse.inference.providers.planted import planted_probability
from loft_warehouse.inference.systems import DEFAULT_SYSTEMS_FILE
from loft_warehouse.methods.catalogue import method
from tests.conftest import build_as_documented, query

pytestmark = pytest.mark.slow
PLANTED = next(s for s in yaml.safe_load(DEFAULT_SYSTEMS_FILE.read_text())["systems"] if s["name"] == "planted-effects")
COLUMNS = ["task", "dataset", "variant", "method", "split", "stage", "gold_depth"]


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> Path:
    work = tmp_path_factory.mktemp("planted_rr")
    systems = work / "systems.yaml"
    systems.write_text(yaml.safe_dump({"systems": [PLANTED]}), encoding="utf-8")
    return build_as_documented(work, "planted-rr", {"LOFT_SYSTEMS_FILE": str(systems)})


def _prompts(database: Path, dataset: str, d: int, run_method: str, stage: int, x: int | None = None) -> list[dict]:
    """The test prompts of one stage of a method on a dataset's documents of d tokens (at answer
    position x when given)."""
    table = "loft_128k.prompts" if stage == 1 else "loft_128k_internal.int_stage2_prompts"
    position = "" if x is None else f" and v.answer_tokens = {x}"
    rows = query(
        database,
        f"select p.{', p.'.join(COLUMNS)}, p.qid, p.n_tokens_total from {table} as p "
        "inner join loft_128k.prompt_variants as v using (task, dataset, variant) "
        f"where p.task = 'rr' and p.dataset = '{dataset}' and p.method = '{run_method}' and p.stage = {stage} "
        f"and p.split = 'test' and v.experiment = 'rr_d{d}'{position}",
    )
    return [dict(zip([*COLUMNS, "qid", "n_tokens_total"], row, strict=True)) for row in rows]


def _planted(database: Path, dataset: str, d: int, run_method: str, stage: int, x: int | None = None) -> float:
    rows = _prompts(database, dataset, d, run_method, stage, x)
    assert rows, (dataset, d, run_method, stage, x)
    return sum(planted_probability(row, "128k", PLANTED["options"]) for row in rows) / len(rows)


def _check(rows: list[tuple], database: Path, stage_of=lambda run_method: method(run_method).n_stages) -> int:
    """Every (dataset, d, run_method, x, n, mean, low, high) cell with n >= 30 holds its planted value."""
    checked = 0
    for dataset, d, run_method, x, n, mean, low, high in rows:
        planted = _planted(database, dataset, d, run_method, stage_of(run_method), x)
        assert n >= 30 and low <= planted <= high, (dataset, d, run_method, x, n, planted, mean)
        checked += 1
    return checked


def test_rr_methods_and_sweeps_hold_their_planted_values(warehouse: Path) -> None:
    table1 = query(
        warehouse,
        "select dataset, document_tokens, run_method, null, n, mean, ci_low, ci_high from loft_128k.rr_methods "
        "where n > 0 and system = 'planted-effects'",
    )
    # cic and icr_k1, on both datasets at d = 40k and 80k
    assert _check(table1, warehouse) == 8
    sweeps = query(
        warehouse,
        "select dataset, document_tokens, run_method, null, n, mean, ci_low, ci_high from loft_128k.rr_sweeps "
        "where n > 0 and system = 'planted-effects'",
    )
    # Table 2: chunkwise R&R at c = 40k (both datasets); Table 6: Before answer only (both)
    assert sorted({(row[2], row[0]) for row in sweeps}) == [
        ("chunked_r_and_r_c40000", "hotpotqa"),
        ("chunked_r_and_r_c40000", "nq"),
        ("reprompt_before_answer", "hotpotqa"),
        ("reprompt_before_answer", "nq"),
    ]
    assert _check(sweeps, warehouse) == 4


def test_answer_and_page_accuracy_hold_their_planted_values(warehouse: Path) -> None:
    rows = query(
        warehouse,
        "select dataset, document_tokens, run_method, null, n, mean, ci_low, ci_high, paper_column "
        "from loft_128k.rr_pages where n > 0 and system = 'planted-effects'",
    )
    assert sorted((row[0], row[8]) for row in rows) == [
        ("hotpotqa", "Answer"),
        ("hotpotqa", "Page"),
        ("nq", "Answer"),
        ("nq", "Page"),
    ]
    # Page is ICR's first call: right, it names the gold pages first
    assert _check([row[:8] for row in rows], warehouse, stage_of=lambda run_method: 1) == 4


def test_answer_positions_recover_the_planted_depth_effect(warehouse: Path) -> None:
    rows = query(
        warehouse,
        "select dataset, document_tokens, run_method, answer_position, n, mean, ci_low, ci_high "
        "from loft_128k.rr_positions where n > 0 and system = 'planted-effects' order by document_tokens, "
        "answer_position",
    )
    # Table 7 (NQ) Base at d = 40k (x = 0 .. 40k) and 80k (x = 0 .. 80k)
    assert _check(rows, warehouse) == 5 + 9
    first, last = rows[0], rows[4]
    planted_difference = _planted(warehouse, "nq", 40000, "cic", 1, 0) - _planted(
        warehouse, "nq", 40000, "cic", 1, 40000
    )
    assert planted_difference == pytest.approx(0.2, abs=0.02)
    assert first[5] - last[5] == pytest.approx(planted_difference, abs=2 / 50)


def test_calls_and_input_tokens_per_question_are_counted(warehouse: Path) -> None:
    cells = {
        measure: (n, by_warehouse, mean, reason)
        for measure, n, by_warehouse, mean, reason in query(
            warehouse,
            "select measure, n, n_counted_by_warehouse, mean, reason from loft_128k.rr_costs "
            "where system = 'planted-effects' and method = 'chunked_r_and_r' and chunk_tokens = 40000",
        )
    }
    prompts = [
        row
        for dataset in ("nq", "hotpotqa")
        for stage in (1, 2)
        for row in _prompts(warehouse, dataset, 80000, "chunked_r_and_r_c40000", stage)
    ]
    questions = {(row["dataset"], row["variant"], row["qid"]) for row in prompts}
    assert cells["calls"][:2] == (len(questions), 0)
    assert cells["calls"][2] == pytest.approx(len(prompts) / len(questions))
    # the planted system reports no tokens: the warehouse counted every question's prompts
    assert cells["input_tokens"][:2] == (len(questions), len(questions))
    assert cells["input_tokens"][2] == pytest.approx(sum(row["n_tokens_total"] for row in prompts) / len(questions))
    assert cells["output_tokens"] == (0, 0, None, "not reported: the provider gave no output token counts")
