"""The cross-size tables in dbt (models/loft_compare): ArguAna and NQ RAG (with the closed-book
variant) built at 32k and 128k with bm25, then `dbt build --select loft_compare` reads both sizes
and says that 1m is missing: the commands of docs/methods-and-studies.md (`run: compare-sizes`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import build_as_documented, query

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> Path:
    return build_as_documented(tmp_path_factory.mktemp("compare"), "compare-sizes")


def test_sizes_name_the_missing_one(warehouse: Path) -> None:
    rows = query(warehouse, "select size, is_built, n_runs, note is null from loft_compare.sizes order by size_order")
    assert rows == [("32k", True, 1, True), ("128k", True, 1, True), ("1m", False, 0, False)]


def test_the_same_dev_queries_are_followed_across_sizes(warehouse: Path) -> None:
    rows = query(
        warehouse,
        "select split, size, count(*), min(n_sizes), max(n_sizes) from loft_compare.scaling_scores "
        "where dataset = 'arguana' group by all order by split, size",
    )
    # ArguAna's release has 10 dev queries at both sizes and 100 test queries at 128k only.
    assert rows == [("dev", "128k", 10, 2, 2), ("dev", "32k", 10, 2, 2), ("test", "128k", 100, 1, 1)]


def test_the_curve_is_the_paired_change_of_those_queries(warehouse: Path) -> None:
    scores = query(
        warehouse,
        "select qid, size, value from loft_compare.scaling_scores where split = 'dev' and dataset = 'arguana'",
    )
    by_size: dict[str, dict[str, float]] = {}
    for qid, size, value in scores:
        by_size.setdefault(size, {})[qid] = value
    expected = sum(by_size["128k"][q] - by_size["32k"][q] for q in by_size["32k"]) / 10
    [(previous, n_common, difference, low, high)] = query(
        warehouse,
        "select previous_size, n_common_with_previous, difference_from_previous, difference_ci_low, difference_ci_high "
        "from loft_compare.scaling_curves where split = 'dev' and size = '128k'",
    )
    assert (previous, n_common) == ("32k", 10)
    assert difference == pytest.approx(expected)
    assert low <= difference <= high
    metrics = query(
        warehouse,
        "select size, mean from loft_32k.metrics where split = 'dev' and is_primary and grain = 'turn' "
        "and dataset = 'arguana' union all select size, mean from loft_128k.metrics "
        "where split = 'dev' and is_primary and grain = 'turn' and dataset = 'arguana'",
    )
    curve = query(warehouse, "select size, mean from loft_compare.scaling_curves where split = 'dev'")
    assert sorted(curve) == sorted((size, pytest.approx(mean)) for size, mean in metrics)


def test_closed_book_prompts_hold_no_corpus_and_table_3_says_why_it_is_empty(warehouse: Path) -> None:
    rows = query(
        warehouse,
        "select v.variant, count(*), max(p.n_tokens_prefix), max(p.gold_depth) from loft_128k.prompts as p "
        "inner join (values ('default'), ('closed_book')) as v(variant) using (variant) "
        "where p.task = 'rag' and p.dataset = 'nq' group by all order by 1",
    )
    (closed, n_closed, closed_tokens, closed_depth), (default, n_default, default_tokens, _) = rows
    assert (closed, default) == ("closed_book", "default") and n_closed == n_default > 0
    assert closed_depth is None and closed_tokens * 20 < default_tokens  # the corpus is gone, the examples stay
    table3 = query(
        warehouse,
        "select dataset, size, split, system, n, reason from loft_compare.closed_book order by row_order, column_order",
    )
    assert [(d, size, split) for d, size, split, *_ in table3[:2]] == [("nq", "32k", "dev"), ("nq", "128k", "test")]
    # bm25 answers no RAG prompt: no closed-book run to show, and the table says so
    assert {(system, n, reason) for *_, system, n, reason in table3} == {
        (
            None,
            0,
            "no closed-book run: no system answered a closed_book prompt "
            "(a RAG variant, built when named in prompt_variants)",
        )
    }
