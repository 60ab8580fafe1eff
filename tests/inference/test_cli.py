"""`loft estimate-cost` and `loft responses-status`."""

from __future__ import annotations

import duckdb

from loft_warehouse.cli import main
from loft_warehouse.inference.store import ResponseStore, StoredResponse
from tests.inference.support import needs_tiktoken_files


def test_estimate_cost_prints_the_table_from_the_warehouse(tmp_path, capsys):
    needs_tiktoken_files()
    database = tmp_path / "loft.duckdb"
    with duckdb.connect(str(database)) as con:
        con.sql("create schema loft_128k")
        con.sql(
            "create table loft_128k.prompts as select * from (values "
            "('q1', 'retrieval', 'nq', 'default', 0, 'p1', '', 'q1\n', 100000, 100100), "
            "('q2', 'retrieval', 'nq', 'default', 0, 'p1', '', 'q2\n', 100000, 100200), "
            "('q3', 'retrieval', 'nq', 'default', 0, 'p1', '', 'q3\n', 100000, 130000)) "
            "as t(prompt_id, task, dataset, variant, turn, prefix_id, head, suffix, n_tokens_prefix, n_tokens_total)"
        )
        con.sql("create table loft_128k.prompt_prefixes as select 'p1' as prefix_id, 'Short.\n' as text")
    assert main(["estimate-cost", "--size", "128k", "--database", str(database), "--systems", "gpt-4o",
                 "--csv", str(tmp_path / "e.csv")]) == 0  # fmt: skip
    out = capsys.readouterr().out
    # q3 is over gpt-4o's 127,744 prompt tokens in SentencePiece but a few in o200k_base: it counts.
    # no cache: 330,300 input tokens at $2.50/M + 3 x 64 output at $10/M = 0.82575 + 0.00192;
    # cached: 130,300 at $2.50 + 200,000 at $1.25 + output = 0.32575 + 0.25 + 0.00192
    # the Batch API at half of each: 0.413835 and 0.288835
    assert out.splitlines()[2].split() == [
        "gpt-4o", "stream", "128k", "retrieval/nq", "cic", "1", "3", "0.330", "0.83", "0.58", "0.41", "0.29"
    ]  # fmt: skip
    assert (tmp_path / "e.csv").read_text().startswith("system,model,size")


def test_estimate_cost_of_a_size_not_built_says_so_in_one_line(tmp_path, capsys):
    database = tmp_path / "loft.duckdb"
    with duckdb.connect(str(database)) as con:
        con.sql("create schema loft_128k")
        con.sql("create table loft_128k.prompts as select 1 as x")
    assert main(["estimate-cost", "--size", "32k", "--database", str(database)]) == 2
    err = capsys.readouterr().err
    assert err.strip().splitlines() == [
        f"loft estimate-cost: {database} has no 32k prompts (built: 128k); build them first: "
        "dbt build --select loft_32k"
    ]


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
