"""The built corpora: release counts, paper splits, budgets and nesting across sizes."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import query, run_dbt


def test_arguana_is_taken_as_released(spine_warehouse: Path) -> None:
    counts = dict(
        query(
            spine_warehouse,
            "select 'loft_32k', count(*) from loft_32k.corpus where dataset = 'arguana' "
            "union all select 'loft_128k', count(*) from loft_128k.corpus where dataset = 'arguana'",
        )
    )
    assert counts == {"loft_32k": 123, "loft_128k": 531}
    splits = dict(
        query(
            spine_warehouse,
            "select split, count(*) from loft_128k.queries where dataset = 'arguana' group by split",
        )
    )
    assert splits == {"few_shot": 5, "dev": 10, "test": 100}


def test_release_order_is_the_prompt_order(spine_warehouse: Path, shared_data: Path) -> None:
    first_pid = (shared_data / "loft/retrieval/arguana/128k/corpus.jsonl").open().readline()
    (pid,) = query(
        spine_warehouse,
        "select pid from loft_128k.corpus where dataset = 'arguana' and doc_id = 0",
    )[0]
    assert f'"pid": "{pid}"' in first_pid


def test_splits_follow_the_paper(spine_warehouse: Path) -> None:
    rows = query(
        spine_warehouse,
        "select dataset, split, count(distinct qid) from loft_32k.queries "
        "where task in ('retrieval', 'rag') group by all",
    )
    assert {(d, s) for d, s, _ in rows if s == "test"} == set(), "32k has no test split"
    assert {n for _, s, n in rows if s == "few_shot"} == {5}
    assert {n for _, s, n in rows if s == "dev"} == {10}
    bbh = query(
        spine_warehouse,
        "select split, count(*) from loft_32k.queries where dataset = 'bbh_date' group by split",
    )
    assert dict(bbh) == {"dev": 10, "test": 90}


def test_few_shot_and_dev_queries_are_the_same_at_every_size(spine_warehouse: Path) -> None:
    differing = query(
        spine_warehouse,
        "select task, dataset, qid from loft_32k.queries where split in ('few_shot', 'dev') "
        "and task in ('retrieval', 'rag') "
        "except select task, dataset, qid from loft_128k.queries where split in ('few_shot', 'dev')",
    )
    assert differing == []


def test_smaller_corpora_are_subsets_of_larger_ones(spine_warehouse: Path) -> None:
    shared = query(
        spine_warehouse,
        "select distinct task, dataset from loft_32k.corpus where task in ('retrieval', 'rag', 'icl') "
        "intersect select distinct task, dataset from loft_128k.corpus",
    )
    assert len(shared) >= 6
    missing = query(
        spine_warehouse,
        "select task, dataset, pid from loft_32k.corpus semi join "
        "(select distinct task, dataset from loft_128k.corpus) using (task, dataset) "
        "where task in ('retrieval', 'rag', 'icl') "
        "except select task, dataset, pid from loft_128k.corpus",
    )
    assert missing == []


def test_the_filler_draw_is_the_same_at_every_size(spine_warehouse: Path) -> None:
    mismatched = query(
        spine_warehouse,
        "select small.task, small.dataset, small.draw_rank from loft_32k.corpus small "
        "join loft_128k.corpus large using (task, dataset, pid) "
        "where small.draw_rank is distinct from large.draw_rank",
    )
    assert mismatched == []


def test_gold_count_and_caps(spine_warehouse: Path) -> None:
    per_query = query(
        spine_warehouse,
        "select dataset, max(len(gold_pids)), min(len(gold_pids)) from loft_128k.queries "
        "where task = 'retrieval' group by dataset order by dataset",
    )
    caps = {d: (hi, lo) for d, hi, lo in per_query}
    assert caps["hotpotqa"] == (2, 2)
    assert caps["nq"] == (1, 1)
    assert caps["msmarco"][0] <= 5


def test_every_corpus_fits_its_budget(spine_warehouse: Path) -> None:
    over = query(
        spine_warehouse,
        "select * from loft_32k.corpus_stats where n_tokens > budget "
        "union all select * from loft_128k.corpus_stats where n_tokens > budget",
    )
    assert over == []
    flagged = query(
        spine_warehouse,
        "select count(*) from loft_32k.corpus_stats where not within_budget "
        "union all select count(*) from loft_128k.corpus_stats where not within_budget",
    )
    assert flagged == [(0,), (0,)]
    budgets = dict(query(spine_warehouse, "select distinct context_length, budget from loft_32k.corpus_stats"))
    assert budgets["32k"] == 28_800 and budgets["2k"] == 1_800


def test_doc_ids_are_dense(spine_warehouse: Path) -> None:
    gaps = query(
        spine_warehouse,
        "select task, dataset, corpus_id from loft_128k.corpus group by all "
        "having min(doc_id) <> 0 or max(doc_id) <> count(*) - 1",
    )
    assert gaps == []


def test_a_release_corpus_far_over_its_budget_is_flagged_and_warned_not_complete(
    shared_data: Path, tmp_path: Path
) -> None:
    """ArguAna's 128k release corpus dropped into its 32k folder: 4x the 32k budget."""
    root = tmp_path / "data"
    release = root / "loft" / "retrieval" / "arguana" / "32k"
    release.mkdir(parents=True)
    source = shared_data / "loft" / "retrieval" / "arguana"
    for name in ("few_shot_queries.jsonl", "dev_queries.jsonl", "test_queries.jsonl"):
        (release / name).symlink_to(source / "32k" / name)
    (release / "corpus.jsonl").symlink_to(source / "128k" / "corpus.jsonl")
    (root / "tokenizers").symlink_to(shared_data / "tokenizers")
    database = tmp_path / "w.duckdb"
    result = run_dbt(["build", "--select", "+loft_32k__corpus_stats", "--vars", f"{{data_dir: {root}}}"], database)
    assert result.returncode == 0, result.stdout[-5000:]
    warned = [line for line in result.stdout.splitlines() if "WARN" in line and "release_within_budget" in line]
    assert warned, result.stdout[-3000:]
    ((n_tokens, budget, within, complete),) = query(
        database,
        "select n_tokens, budget, within_budget, is_complete from loft_32k.corpus_stats "
        "where dataset = 'arguana' and context_length = '32k'",
    )
    assert n_tokens > 1.4 * budget
    assert (within, complete) == (False, False)


def test_a_conversation_with_several_exclusion_reasons_lists_them_in_order(spine_warehouse: Path) -> None:
    """SParC's sparc-dev-170 has turns excluded for two reasons: the conversation names both, in
    the same order every build (an unordered string_agg gave either order)."""
    rows = query(
        spine_warehouse,
        "select size, exclusion_reason from (select '32k' as size, * from loft_32k_internal.int_query_splits "
        "union all select '128k', * from loft_128k_internal.int_query_splits) where qid = 'sparc-dev-170'",
    )
    assert sorted(rows) == [("128k", "arbitrary_row; order_dependent"), ("32k", "arbitrary_row; order_dependent")]
