"""The dbt prompt models on real data: ArguAna (as released) and NQ RAG at 128k, three variants."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from loft_warehouse import settings
from loft_warehouse.tokens import counter
from tests.conftest import query, run_dbt

VARIANTS = "[default, gold_pos_test_p0, query_at_beginning]"
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> Path:
    database = tmp_path_factory.mktemp("prompts") / "loft.duckdb"
    result = run_dbt(
        [
            "build",
            "--select",
            "+loft_128k__prompt_texts",
            "+loft_128k__prompt_doc_ids",
            "--indirect-selection",
            "cautious",
            "--vars",
            f"{{prompt_variants: {VARIANTS}, datasets: 'retrieval/arguana,rag/nq'}}",
        ],
        database,
    )
    assert result.returncode == 0, result.stdout[-5000:]
    return database


def test_rows_per_dataset_and_variant(warehouse: Path) -> None:
    rows = query(
        warehouse,
        "select dataset, variant, split, count(*) from loft_128k.prompts group by all order by all",
    )
    assert rows == [
        (dataset, variant, split, n)
        for dataset in ("arguana", "nq")
        for variant in ("default", "gold_pos_test_p0", "query_at_beginning")
        for split, n in (("dev", 10), ("test", 100))
    ]
    assert query(warehouse, "select count(*) from loft_128k.prompt_prefixes") == [(6,)]


def test_released_arguana_prompts_are_lofts_byte_for_byte(warehouse: Path) -> None:
    recorded = settings.PROJECT_ROOT / "tests/differential/prompts/retrieval_arguana_128k_test__few_shot_with_cot.json"
    loft = json.loads(recorded.read_text(encoding="utf-8"))["prompts"]
    rows = query(
        warehouse,
        "select qid, sha256(prompt), n_tokens_total, prompt, targets from loft_128k.prompt_texts "
        "where dataset = 'arguana' and variant = 'default' and split = 'test' order by qid",
    )
    assert {qid: sha for qid, sha, *_ in rows} == {qid: entry["sha256"] for qid, entry in loft.items()}
    _, _, n_tokens, prompt, targets = rows[0]
    assert n_tokens == counter(settings.tokenizer_model()).count([prompt])[0]
    gold = json.loads(targets)
    assert gold and all(g.isdigit() for g in gold)


def test_gold_at_p0_leads_the_corpus_and_ids_follow(warehouse: Path) -> None:
    n_gold = query(
        warehouse,
        "select count(distinct g) from (select unnest(gold_pids) as g from loft_128k.queries "
        "where dataset = 'arguana' and split in ('dev', 'test'))",
    )[0][0]
    shown = query(
        warehouse,
        "select distinct unnest(from_json(gold_shown_ids, '[\"varchar\"]'))::int as i from loft_128k.prompts "
        "where dataset = 'arguana' and variant = 'gold_pos_test_p0' order by i",
    )
    assert [i for (i,) in shown] == list(range(n_gold))
    mismatched = query(
        warehouse,
        "with shown as (select task, dataset, variant, qid, turn, "
        "unnest(from_json(gold_shown_ids, '[\"varchar\"]')) as shown_id from loft_128k.prompts) "
        "select shown.* from shown join loft_128k.queries q using (task, dataset, qid, turn) "
        "left join loft_128k.prompt_doc_ids d using (task, dataset, variant, shown_id) "
        "where d.pid is null or not list_contains(q.gold_pids, d.pid)",
    )
    n_shown, n_gold_pids = query(
        warehouse,
        "select sum(json_array_length(p.gold_shown_ids)), sum(len(q.gold_pids)) from loft_128k.prompts p "
        "join loft_128k.queries q using (task, dataset, qid, turn)",
    )[0]
    assert n_shown == n_gold_pids > 0
    assert mismatched == []


def test_query_at_beginning_rows_start_with_the_query(warehouse: Path) -> None:
    rows = query(
        warehouse,
        "select t.prompt, q.query_text from loft_128k.prompt_texts t join loft_128k.queries q "
        "using (task, dataset, qid, turn) where t.variant = 'query_at_beginning' and t.dataset = 'nq' limit 3",
    )
    for prompt, query_text in rows:
        assert prompt.split("\n")[1] == f"query: {query_text}"
        assert prompt.endswith("====== Now answer the query! ======\n")  # LOFT's RAG block has no lead-in


def test_context_window_flags_follow_the_token_counts(warehouse: Path) -> None:
    wrong = query(
        warehouse,
        "select p.prompt_id, w.model from loft_128k.prompts p "
        f"cross join read_csv('{settings.PROJECT_ROOT / 'seeds/model_context_windows.csv'}', header = true) w "
        "where p.context_window_fits[w.model] is distinct from (p.n_tokens_total <= w.context_window)",
    )
    assert wrong == []
    assert query(warehouse, "select count(*) from loft_128k.prompts where cardinality(context_window_fits) = 0") == [
        (0,)
    ]


def test_prompt_texts_view_reads_from_a_renamed_copy_of_the_warehouse(warehouse: Path, tmp_path: Path) -> None:
    copy = tmp_path / "renamed.duckdb"
    shutil.copy(warehouse, copy)
    sql = "select count(*), sum(strlen(prompt)) from loft_128k.prompt_texts"
    assert query(copy, sql) == query(warehouse, sql)
