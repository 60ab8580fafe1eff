"""`loft estimate-cost` and `loft responses-status`."""

from __future__ import annotations

import duckdb

from loft_warehouse.cli import main
from loft_warehouse.inference.store import ResponseStore, StoredResponse


def test_estimate_cost_prints_the_table_from_the_warehouse(tmp_path, capsys):
    database = tmp_path / "loft.duckdb"
    with duckdb.connect(str(database)) as con:
        con.sql("create schema loft_128k")
        con.sql(
            "create table loft_128k.prompts as select * from (values "
            "('retrieval', 'nq', 'default', 'p1', 100000, 100100), "
            "('retrieval', 'nq', 'default', 'p1', 100000, 100200)) "
            "as t(task, dataset, variant, prefix_id, n_tokens_prefix, n_tokens_total)"
        )
    assert main(["estimate-cost", "--size", "128k", "--database", str(database), "--systems", "gpt-4o",
                 "--csv", str(tmp_path / "e.csv")]) == 0  # fmt: skip
    out = capsys.readouterr().out
    # no cache: 200,300 input tokens at $2.50/M + 2 x 64 output at $10/M = 0.50075 + 0.00128;
    # cached: 100,300 at $2.50 + 100,000 at $1.25 + output = 0.25075 + 0.125 + 0.00128
    assert out.splitlines()[2].split() == ["gpt-4o", "128k", "retrieval/nq", "2", "0.200", "0.50", "0.38"]
    assert (tmp_path / "e.csv").read_text().startswith("system,model,size")


def test_responses_status_summarises_the_store(tmp_path, capsys):
    path = tmp_path / "s.sqlite"
    with ResponseStore(path) as store:
        for key, status in (("a", "ok"), ("b", "ok"), ("c", "error")):
            store.put(StoredResponse(key, "gpt-4o", "p", "retrieval", "nq", "nq", "default", "dev", "q", 0,
                                     status, input_tokens=10, cost_usd=0.5))  # fmt: skip
    assert main(["responses-status", "--store", str(path)]) == 0
    out = capsys.readouterr().out
    assert "│ gpt-4o ┆ ok     ┆ 2         ┆ 20" in out
    assert "│ gpt-4o ┆ error  ┆ 1         ┆ 10" in out
