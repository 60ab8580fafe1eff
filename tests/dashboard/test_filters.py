"""The sidebar's filters: what they keep, and the sentence that says what they hid."""

from __future__ import annotations

import pandas as pd

from loft_warehouse.dashboard.views import Filters

ROWS = pd.DataFrame(
    {
        "source": ["paper", "inference", "inference", "import", "inference"],
        "system": ["GPT-4o", "bm25", "gpt-4o", "upstream-file", "bm25"],
        "method": [None, "cic", "icr", "cic", "cic"],
        "task": ["retrieval", "retrieval", "retrieval", "retrieval", "rag"],
        "dataset": ["arguana", "arguana", "arguana", "arguana", "nq"],
        "query_limit": [None, None, 3, None, None],
    }
)


def test_no_choice_hides_only_quick_tries() -> None:
    kept, hidden = Filters().apply(ROWS)
    assert list(kept["system"]) == ["GPT-4o", "bm25", "upstream-file", "bm25"]
    assert hidden == "Hidden by the sidebar's filters: 1 of quick tries (tick Show quick tries) row(s)."


def test_a_system_filter_keeps_the_paper_and_counts_each_reason_once() -> None:
    kept, hidden = Filters(systems=("bm25",), datasets=("retrieval/arguana",), quick_tries=True).apply(ROWS)
    assert list(kept["system"]) == ["GPT-4o", "bm25"]
    assert hidden == "Hidden by the sidebar's filters: 2 of other systems, 1 of other datasets row(s)."


def test_a_method_filter_keeps_rows_without_a_method() -> None:
    kept, hidden = Filters(methods=("icr",), quick_tries=True).apply(ROWS)
    assert list(kept["system"]) == ["GPT-4o", "gpt-4o"]
    assert hidden == "Hidden by the sidebar's filters: 3 of other methods row(s)."


def test_nothing_to_filter_says_nothing() -> None:
    assert Filters(systems=("x",)).apply(ROWS.iloc[0:0])[1] == ""
