"""The planted-effect run, end to end through dbt: the planted test system answers loft_32k and
loft_128k (ArguAna retrieval, NQ and HotpotQA RAG, Spider SQL; prompt variants default, no_cot,
closed_book, few_shot_0; methods cic, and on the RAG sets icr, rag_top5, justified_verify and
the three-stage rag_top5_justified_verify), then loft_compare, and every mart recovers what was
planted (python/loft_warehouse/inference/systems.yaml, system planted-effects: base 0.8, +0.1 at
32k, no_cot -0.2, few_shot_0 -0.2, closed_book -0.2, -0.3 where a RAG or retrieval prompt shows
no gold document, -0.2 x gold depth). The builds are docs/methods-and-studies.md's commands
(`run: planted-effects`).

A cell's planted value is the mean of its prompts' planted probabilities, computed here from the
prompts table (later stages: int_stage2_prompts, int_stage3_prompts) with the provider's own formula."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from loft_warehouse.inference.providers.planted import planted_probability
from loft_warehouse.inference.systems import DEFAULT_SYSTEMS_FILE
from tests.conftest import build_as_documented, query

pytestmark = pytest.mark.slow
# A Spider prompt is the query's own database, the same text at every size: one request in the
# response store, answered once, so no size effect can show there (as with a real model).
IDENTICAL_PROMPTS = "sql"
OPTIONS = next(
    s for s in yaml.safe_load(DEFAULT_SYSTEMS_FILE.read_text())["systems"] if s["name"] == "planted-effects"
)["options"]


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> Path:
    return build_as_documented(tmp_path_factory.mktemp("planted"), "planted-effects")


def _planted(database: Path, size: str, where: str, stage: int = 1) -> tuple[float, int]:
    """Mean planted probability and count of the prompts of a stage matching `where`."""
    columns = ["task", "dataset", "variant", "method", "split", "stage", "gold_depth"]
    table = f"loft_{size}.prompts" if stage == 1 else f"loft_{size}_internal.int_stage{stage}_prompts"
    rows = query(database, f"select {', '.join(columns)} from {table} where stage = {stage} and {where}")
    values = [planted_probability(dict(zip(columns, row, strict=True)), size, OPTIONS) for row in rows]
    return sum(values) / len(values), len(values)


def _cell(task: str, dataset: str, variant: str, split: str, method: str = "cic") -> str:
    where = f"task = '{task}' and dataset = '{dataset}' and variant = '{variant}' and split = '{split}'"
    return f"{where} and method = '{method}'"


def test_every_metrics_cell_holds_its_planted_value(warehouse: Path) -> None:
    checked = 0
    for size in ("32k", "128k"):
        cells = query(
            warehouse,
            f"select task, dataset, variant, split, n, mean, ci_low, ci_high from loft_{size}.metrics "
            "where is_primary and rule = 'loft' and grain = 'turn' and method = 'cic'",
        )
        for task, dataset, variant, split, n, mean, low, high in cells:
            if task == IDENTICAL_PROMPTS and split == "dev":
                continue  # the same prompt at both sizes: one request, answered once (IDENTICAL_PROMPTS)
            planted, count = _planted(warehouse, size, _cell(task, dataset, variant, split))
            assert count == n
            assert low <= planted <= high, (size, task, dataset, variant, split, planted, mean)
            assert abs(mean - planted) <= 1 / n + 1e-9  # systematic draws: the count is planted to within one
            checked += 1
    # 12 (dataset, variant) cells (closed_book on the two RAG sets only), dev and test at 128k, dev
    # at 32k; less Spider's dev at both sizes
    assert checked == 12 * 3 - 2


def _difference(warehouse: Path, size: str, task: str, dataset: str, variant: str, split: str) -> float:
    return (
        _planted(warehouse, size, _cell(task, dataset, variant, split))[0]
        - _planted(warehouse, size, _cell(task, dataset, "default", split))[0]
    )


def test_table4_recovers_the_planted_ablations(warehouse: Path) -> None:
    rows = query(
        warehouse,
        "select task, dataset, ablation, difference_from_best, difference_ci_low, difference_ci_high "
        "from loft_128k.ablations where run_status = 'scored' and ablation <> 'default'",
    )
    assert {(task, dataset, ablation) for task, dataset, ablation, *_ in rows} == {
        ("retrieval", "arguana", "no_cot"),
        ("rag", "nq", "no_cot"),
    }
    for task, dataset, ablation, difference, low, high in rows:
        planted = _difference(warehouse, "128k", task, dataset, ablation, "test")
        assert low <= planted <= high < 0 and abs(difference - planted) <= 0.02 + 1e-9


def test_table3_recovers_the_planted_closed_book_drop(warehouse: Path) -> None:
    rows = query(
        warehouse,
        "select dataset, size, split, n, difference_from_cic, difference_ci_low, difference_ci_high "
        "from loft_compare.closed_book where n > 0",
    )
    assert {(d, size) for d, size, *_ in rows} == {
        ("nq", "32k"),
        ("nq", "128k"),
        ("hotpotqa", "32k"),
        ("hotpotqa", "128k"),
    }
    for dataset, size, split, n, difference, low, high in rows:
        planted = _difference(warehouse, size, "rag", dataset, "closed_book", split)
        assert low <= planted <= high and abs(difference - planted) <= 2 / n + 1e-9
        assert high < 0 or n < 30  # with 100 questions the planted drop is told from none


def test_figure5_recovers_the_planted_size_effect(warehouse: Path) -> None:
    """cic on every dataset; icr and rag_top5 on the RAG sets, whose final answers are stage 2."""
    rows = query(
        warehouse,
        "select task, dataset, method, n_common_with_previous, difference_from_previous, difference_ci_low, "
        "difference_ci_high from loft_compare.scaling_curves where variant = 'default' and split = 'dev' "
        f"and size = '128k' and task <> '{IDENTICAL_PROMPTS}' and method not like '%verify'",
    )
    assert sorted((task, method) for task, _, method, *_ in rows) == [
        *[("rag", m) for m in ("cic", "cic", "icr", "icr", "rag_top5", "rag_top5")],
        ("retrieval", "cic"),
    ]
    for task, dataset, method, n, difference, low, high in rows:
        stage = 1 if method == "cic" else 2
        planted = (
            _planted(warehouse, "128k", _cell(task, dataset, "default", "dev", method), stage)[0]
            - _planted(warehouse, "32k", _cell(task, dataset, "default", "dev", method), stage)[0]
        )
        assert low <= planted <= high and abs(difference - planted) <= 2 / n + 1e-9, (dataset, method)


def test_figure5_task_averages_recover_the_planted_size_effect(warehouse: Path) -> None:
    """RAG's two datasets, cic, dev: the task's change from 32k to 128k is the average of the
    datasets' planted changes."""
    [(n_datasets, n, difference, low, high)] = query(
        warehouse,
        "select n_datasets_compared, n_common_with_previous, difference_from_previous, difference_ci_low, "
        "difference_ci_high from loft_compare.scaling_task_curves where task = 'rag' and method = 'cic' "
        "and variant = 'default' and split = 'dev' and size = '128k'",
    )
    planted = [
        _planted(warehouse, "128k", _cell("rag", dataset, "default", "dev"))[0]
        - _planted(warehouse, "32k", _cell("rag", dataset, "default", "dev"))[0]
        for dataset in ("nq", "hotpotqa")
    ]
    assert n_datasets == 2 and low <= sum(planted) / 2 <= high
    assert abs(difference - sum(planted) / 2) <= 2 / (n / 2) + 1e-9


def test_figure8_and_figure6_recover_their_planted_values(warehouse: Path) -> None:
    few_shot = query(
        warehouse,
        "select task, dataset, split, mean, ci_low, ci_high from loft_128k.example_curves where variant = 'few_shot_0'",
    )
    assert len(few_shot) == 6  # arguana, nq and hotpotqa: dev and test
    for task, dataset, split, _, low, high in few_shot:
        planted = _planted(warehouse, "128k", _cell(task, dataset, "few_shot_0", split))[0]
        assert low <= planted <= high
    bins: list[Any] = query(
        warehouse,
        "select operator, n, ci_low, ci_high from loft_128k.sql_operator_accuracy "
        "where split = 'test' and rule = 'loft' and n >= 30",
    )
    assert {row[0] for row in bins} >= {"all", "equality", "join", "count"}
    assert all(low <= 0.8 <= high for _, _, low, high in bins)  # SQL: 0.8 for every gold at 128k


def test_planted_rows_are_marked_and_kept_off_the_leaderboard(warehouse: Path) -> None:
    for size in ("32k", "128k"):
        assert query(warehouse, f"select distinct source from loft_{size}.metrics") == [("planted",)]
        assert query(warehouse, f"select count(*) from loft_{size}.leaderboard where source <> 'paper'") == [(0,)]


def _stage_cells(warehouse: Path, sql: str) -> list[Any]:
    return query(warehouse, sql.format(size="128k") + " and split = 'test' and variant = 'default'")


def test_every_method_stage_recovers_its_planted_value(warehouse: Path) -> None:
    """ICR's pages (stage 1: found every gold page), then every method's final answers (icr and
    rag_top5: the reading stage; justified_verify: verification, so its final score is the
    product of two stages and is checked against the verdicts instead)."""
    found = _stage_cells(
        warehouse,
        "select dataset, 'icr', 1, n, mean, ci_low, ci_high from loft_{size}.stage_metrics "
        "where method = 'icr' and stage = 1 and measure = 'found_all_gold'",
    )
    final = _stage_cells(
        warehouse,
        "select dataset, method, 2, n, mean, ci_low, ci_high from loft_{size}.metrics "
        "where is_primary and rule = 'loft' and grain = 'turn' and method in ('icr', 'rag_top5')",
    )
    assert len(found) == 2 and len(final) == 4
    for dataset, method, stage, n, mean, low, high in found + final:
        planted, count = _planted(warehouse, "128k", _cell("rag", dataset, "default", "test", method), stage)
        assert count == n >= 30
        assert low <= planted <= high and abs(mean - planted) <= 1 / n + 1e-9, (dataset, method, stage, planted, mean)


def test_error_attribution_recovers_the_planted_reading_drop(warehouse: Path) -> None:
    """Reading with the gold pages in hand is planted 0.3 above reading without them."""
    rows = _stage_cells(
        warehouse,
        "select dataset, n_retrieval_hit, accuracy_given_hit, accuracy_given_hit_ci_low, accuracy_given_hit_ci_high, "
        "n_retrieval_miss, accuracy_given_miss from loft_{size}.error_attribution where method = 'icr'",
    )
    assert len(rows) == 2
    for dataset, n_hit, _, low, high, n_miss, given_miss in rows:
        cell = _cell("rag", dataset, "default", "test", "icr")
        hit, count = _planted(warehouse, "128k", cell + " and gold_depth is not null", 2)
        assert count == n_hit >= 30 and low <= hit <= high
        miss, count = _planted(warehouse, "128k", cell + " and gold_depth is null", 2)
        assert count == n_miss and (n_miss == 0 or abs(given_miss - miss) <= 0.5)


def test_verification_scores_recover_the_planted_verdicts(warehouse: Path) -> None:
    """The verdicts of justified_verify (stage 2), to the count, and of the three-stage
    rag_top5_justified_verify (stage 3: one call per candidate of the justified answer over
    bm25's top 5). The latter's later prompts show the top 5 renumbered 0-4, the same text at
    32k and 128k wherever bm25 agrees, so the store answers them once (IDENTICAL_PROMPTS): the
    128k cell holds draws made for 32k, and its planted value is inside the interval, not to
    the count."""
    for method, stage in (("justified_verify", 2), ("rag_top5_justified_verify", 3)):
        rows = _stage_cells(
            warehouse,
            "select dataset, n, value, ci_low, ci_high, n_unreadable from loft_{size}.verification_scores "
            f"where method = '{method}' and measure = 'verdict_accuracy' and gold_version = 'release'",
        )
        assert len(rows) == 2, method
        for dataset, n, value, low, high, unreadable in rows:
            cell = _cell("rag", dataset, "default", "test", method)
            planted, count = _planted(warehouse, "128k", cell, stage)
            assert unreadable == 0 and count == n >= 30
            assert low <= planted <= high, (method, dataset, planted, value)
            assert stage == 3 or abs(value - planted) <= 1 / n + 1e-9, (method, dataset, planted, value)


def test_every_prompt_response_score_and_metric_names_its_arm(warehouse: Path) -> None:
    for size in ("32k", "128k"):
        for table in ("prompts", "responses", "scores", "metrics"):
            [(rows, named, unknown)] = query(
                warehouse,
                f"select count(*), count(t.arm_id), count(*) filter (where t.arm_id is not null and a.arm_id is null) "
                f"from loft_{size}.{table} as t left join loft_{size}.arms as a using (arm_id)",
            )
            assert rows > 0 and named == rows and unknown == 0, (size, table)
    # a size's arm is its own: the same method and variant has another arm_id at the other size
    shared = query(warehouse, "select count(*) from loft_32k.arms inner join loft_128k.arms using (arm_id)")
    assert shared == [(0,)]
