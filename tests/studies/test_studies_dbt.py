"""The positional studies in dbt at 32k: every Lost in the Middle prompt (multi-document, KV,
closed book, oracle) and R&R's, gold placed where each variant says, and position_curves
answering "accuracy by gold position" for LOFT's gold_pos_* variants, multi-document QA and KV
in one query each (bm25 on NQ retrieval, a fixture system on the studies)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from loft_warehouse.inference.fixture_server import FixtureServer, FixtureState
from tests import docs_commands
from tests.conftest import query, run_dbt
from tests.inference.support import openai_system, write_systems

pytestmark = pytest.mark.slow
VARS = {
    "datasets": "litm/*,rr/nq,retrieval/nq",
    "prompt_variants": ["default", "gold_pos_test_p0", "gold_pos_test_p100"],
    "litm_documents": [10, 20],
    "rr_lengths": [10000],
    # two sweeps of Reprompt side by side (R&R Table 5's r = 5k and 20k)
    "methods": ["cic", "reprompt_r5000", "reprompt_r20000"],
}


def answer(prompt: str) -> str:
    """A model that answers with the first document's text (or the first value of a JSON)."""
    if found := re.search(r"^Document \[1\]\(Title: [^)]*\) (.*)$", prompt, re.MULTILINE):
        return f"{found.group(1)}\nsomething else"
    if found := re.search(r'^\{"[^"]+": "([^"]+)"', prompt, re.MULTILINE):
        return found.group(1)
    return "Final Answer: ['I do not know']"


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> Path:
    root = tmp_path_factory.mktemp("studies")
    database = root / "loft.duckdb"
    systems = write_systems(
        root / "systems.yaml",
        [
            openai_system("gpt-fixture", context_window=1_000_000, tasks=["litm", "rr"]),
            {"name": "bm25", "provider": "bm25", "tasks": ["retrieval"]},
        ],
    )
    with FixtureServer(FixtureState(answer=answer)) as server:
        env = {
            "LOFT_SYSTEMS_FILE": str(systems),
            "LOFT_SYSTEMS": "gpt-fixture,bm25",
            "LOFT_RESPONSE_STORE": str(root / "store.sqlite"),
            "LOFT_TEST_OPENAI_KEY": "sk-test",
            "LOFT_TEST_OPENAI_BASE_URL": f"{server.url}/v1",
        }
        result = run_dbt(["build", "--select", "loft_32k", "--vars", json.dumps(VARS)], database, env)
    assert result.returncode == 0, result.stdout[-5000:]
    return database


def test_every_study_prompt_is_built(warehouse: Path) -> None:
    counts = dict(
        query(
            warehouse,
            "select dataset || ':' || split, count(*) from loft_32k.prompts "
            "where task in ('litm', 'rr') and method = 'cic' group by all",
        )
    )
    # Multi-document: closed book, oracle, (3 + 5 positions) x 2 orders = 18 variants; KV: 5 x 2.
    assert counts["nq_multidoc:test"] == 100 * 18 and counts["nq_multidoc:dev"] == 10 * 18
    assert counts["kv_retrieval:test"] == 100 * 10
    # R&R at 32k with d = 10k: x = 0 and 10k.
    assert counts["nq:test"] == 50 * 2


def test_gold_is_where_each_variant_puts_it(warehouse: Path) -> None:
    wrong = query(
        warehouse,
        """
        select p.prompt_id
        from loft_32k.prompts as p
        inner join loft_32k.prompt_variants as v using (task, dataset, variant)
        where p.task = 'litm' and v.setting is null
            and (p.gold_positions is distinct from [v.position::bigint] or p.n_documents <> v.n_documents
                 or abs(p.gold_depth - v.position / (v.n_documents - 1)) > 1e-9)
        """,
    )
    assert wrong == []
    # The rendered text holds the gold document at that place.
    prompt, title = query(
        warehouse,
        "select t.prompt, c.title from loft_32k.prompt_texts as t "
        "inner join loft_32k.corpus as c on c.task = t.task and c.dataset = t.dataset and c.corpus_id = t.corpus_id "
        "where t.variant = 'docs20_gold14' and c.is_gold limit 1",
    )[0]
    assert f"Document [15](Title: {title})" in prompt
    assert prompt.count("Document [") == 20 and prompt.endswith("\nAnswer:")
    closed = query(warehouse, "select prompt from loft_32k.prompt_texts where variant = 'closed_book' limit 1")[0][0]
    assert closed.startswith("Question: ") and closed.endswith("\nAnswer:") and "Document" not in closed


def test_position_curves_one_query_each(warehouse: Path) -> None:
    def curve(experiment: str) -> list[tuple]:
        return query(
            warehouse,
            "select position, n from loft_32k.position_curves "
            f"where experiment = '{experiment}' and split = 'dev' order by position",
        )

    assert curve("loft_gold_pos_test") == [(0.0, 10), (100.0, 10)]
    assert curve("litm_qa_20docs") == [(p, 10) for p in (0.0, 4.0, 9.0, 14.0, 19.0)]
    assert curve("litm_kv_75keys") == [(p, 10) for p in (0.0, 18.0, 37.0, 55.0, 74.0)]
    # The scripted model answers with document 1: right when the gold is there (and the gold passage
    # holds the answer as normalised), never when it is a distractor (which holds no answer).
    means = dict(
        query(
            warehouse,
            "select position, mean from loft_32k.position_curves "
            "where experiment = 'litm_qa_10docs' and split = 'test'",
        )
    )
    assert means[0.0] > 0.8 and means[4.0] == means[9.0] == 0.0
    depth = query(warehouse, "select count(*) from loft_32k.position_curves where experiment = 'loft_gold_depth'")
    assert depth[0][0] > 0


def test_the_docs_position_and_sweep_queries_run_as_written(warehouse: Path) -> None:
    """docs/methods-and-studies.md's queries on this build: accuracy by gold position among 20
    documents, and the Reprompt sweep pivoted by its setting."""
    curve = query(warehouse, docs_commands.sql("position-curve"))
    assert [(system, position, n) for system, position, n, *_ in curve] == [
        ("gpt-fixture", p, 100) for p in (0.0, 4.0, 9.0, 14.0, 19.0)
    ]
    assert all(low <= mean <= high for *_, mean, low, high in curve)
    sweep = query(warehouse, docs_commands.sql("reprompt-sweep"))
    assert [(method, every) for method, every, *_ in sweep] == [("reprompt_r5000", 5000)] * 2 + [
        ("reprompt_r20000", 20000)
    ] * 2  # one row per arm: x = 0 and 10k
    assert all(low <= mean <= high for *_, mean, low, high in sweep)


def test_rr_table1_averages_the_answer_positions(warehouse: Path) -> None:
    """R&R Table 1's cell for rr/nq at d = 10k is the run's fuzzy match over both answer positions."""
    [(n, mean, paper, reason)] = query(
        warehouse,
        "select n, mean, paper_gpt4_turbo, reason from loft_32k.rr_methods "
        "where dataset = 'nq' and document_tokens = 10000 and method = 'cic' and system = 'gpt-fixture'",
    )
    points = query(
        warehouse,
        "select n, mean from loft_32k.position_curves "
        "where experiment = 'rr_d10000' and split = 'test' and system = 'gpt-fixture' and method = 'cic'",
    )
    assert (n, paper, reason) == (100, 0.64, None)
    assert sum(p_n for p_n, _ in points) == n
    assert mean == pytest.approx(sum(p_n * p_mean for p_n, p_mean in points) / n)
    unbuilt = query(
        warehouse,
        "select count(*), count(*) filter (where reason like 'not built: method%') from loft_32k.rr_methods "
        "where dataset = 'nq' and system = 'gpt-fixture' and n = 0",
    )
    assert unbuilt == [(14, 14)]  # every other method and d of the table: not in this build


def test_two_sweeps_of_one_method_live_side_by_side(warehouse: Path) -> None:
    arms = query(
        warehouse,
        "select method, method_family, reprompt_every, count(distinct arm_id) from loft_32k.arms "
        "where task = 'rr' and method like 'reprompt%' group by all order by reprompt_every",
    )
    # one arm per (method, d, x) variant: d = 10k with x = 0 and 10k
    assert arms == [("reprompt_r5000", "reprompt", 5000, 2), ("reprompt_r20000", "reprompt", 20000, 2)]
    reminders = dict(
        query(
            warehouse,
            "select method, min(length(regexp_extract_all(prompt, '<INSTRUCTIONS_REMINDER>'))) "
            "from loft_32k.prompt_texts where task = 'rr' and method like 'reprompt%' group by method",
        )
    )
    assert reminders["reprompt_r5000"] >= 1 and reminders["reprompt_r20000"] == 0  # d = 10k: no 20k reminder
    pivot = query(
        warehouse,
        "select reprompt_every, sum(n) from loft_32k.arm_metrics where task = 'rr' and method_family = 'reprompt' "
        "and is_primary and split = 'test' and system = 'gpt-fixture' group by 1 order by 1",
    )
    assert pivot == [(5000, 100), (20000, 100)]
    table5 = query(
        warehouse,
        "select run_method, reprompt_every, n from loft_32k.rr_methods where dataset = 'nq' and method = 'reprompt' "
        "and document_tokens = 10000 and system = 'gpt-fixture' order by reprompt_every",
    )
    assert table5 == [("reprompt_r5000", 5000, 100), ("reprompt_r20000", 20000, 100)]
    # R&R Table 5 itself (rr_sweeps) wants d = 40k, which a 32k build cannot hold: its cells say so
    sweeps = query(
        warehouse,
        "select setting_value, n, reason from loft_32k.rr_sweeps where paper_table = 5 and dataset = 'nq' "
        "and system = 'gpt-fixture' order by setting_value",
    )
    assert [(r, n) for r, n, _ in sweeps] == [(5000, 0), (10000, 0), (20000, 0)]
    assert sweeps[0][2].startswith("not built: no reprompt arm with reprompt_every = 5000 at d = 40000")


def test_rr_positions_are_the_position_curve_points(warehouse: Path) -> None:
    """R&R Table 7's NQ cells at d = 10k: the run's point at each answer position, the paper beside."""
    cells = query(
        warehouse,
        "select answer_position, n, mean, paper_gpt4_turbo from loft_32k.rr_positions where dataset = 'nq' "
        "and document_tokens = 10000 and method = 'cic' and system = 'gpt-fixture' order by answer_position",
    )
    points = query(
        warehouse,
        "select position::bigint, n, mean from loft_32k.position_curves where experiment = 'rr_d10000' "
        "and split = 'test' and system = 'gpt-fixture' and method = 'cic' order by position",
    )
    assert [(x, n, mean) for x, n, mean, _ in cells] == points
    assert [paper for *_, paper in cells] == [0.6, 0.68]


def test_one_query_pivots_two_sweeps_by_their_arm(warehouse: Path) -> None:
    pivot = query(
        warehouse,
        "select arms.reprompt_every, sum(metrics.n) from loft_32k.metrics inner join loft_32k.arms using (arm_id) "
        "where metrics.task = 'rr' and arms.method_family = 'reprompt' and metrics.is_primary "
        "and metrics.split = 'test' group by 1 order by 1",
    )
    assert pivot == [(5000, 100), (20000, 100)]
