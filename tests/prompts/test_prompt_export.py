"""`loft export-prompts`: whole prompts per dataset and variant, as JSONL and CSV."""

from __future__ import annotations

import csv
import json

import duckdb
import pytest

from loft_warehouse.cli import main
from loft_warehouse.errors import ConfigurationError
from loft_warehouse.prompts.export import export_prompts

PREFIXES = [
    ("p-def", "retrieval", "nq", "nq", "default", "INSTRUCTION\nID: 0 | CONTENT: a | END ID: 0\n"),
    (
        "p-qab",
        "retrieval",
        "nq",
        "nq",
        "query_at_beginning",
        "INSTRUCTION\nID: 0 | CONTENT: a | END ID: 0\n",
    ),
    ("p-icl", "icl", "bbh_web", "bbh_web", "default", "Q: x?\nOutput: Yes\n"),
]
PROMPTS = [
    (
        "retrieval/nq/nq/default/q1/0",
        "retrieval",
        "nq",
        "nq",
        "default",
        "test",
        "q1",
        0,
        "p-def",
        "",
        '====== Now let\'s start! ======\nquery: a, "b"\n',
        '["0"]',
    ),
    (
        "retrieval/nq/nq/query_at_beginning/q1/0",
        "retrieval",
        "nq",
        "nq",
        "query_at_beginning",
        "test",
        "q1",
        0,
        "p-qab",
        "query: a\n",
        "====== Now answer the query! ======\n",
        '["0"]',
    ),
    (
        "icl/bbh_web/bbh_web/default/dev-0/0",
        "icl",
        "bbh_web",
        "bbh_web",
        "default",
        "dev",
        "dev-0",
        0,
        "p-icl",
        "",
        "Q: y?\nOutput:",
        '["No"]',
    ),
]


@pytest.fixture
def con():
    con = duckdb.connect()
    con.execute("create schema loft_128k")
    con.execute(
        "create table loft_128k.prompt_prefixes (prefix_id varchar, task varchar, dataset varchar,"
        " corpus_id varchar, variant varchar, text varchar)"
    )
    con.execute(
        "create table loft_128k.prompts (prompt_id varchar, task varchar, dataset varchar,"
        " corpus_id varchar, variant varchar, split varchar, qid varchar, turn bigint,"
        " prefix_id varchar, head varchar, suffix varchar, targets varchar)"
    )
    con.executemany("insert into loft_128k.prompt_prefixes values (?, ?, ?, ?, ?, ?)", PREFIXES)
    con.executemany("insert into loft_128k.prompts values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", PROMPTS)
    return con


def test_one_jsonl_and_csv_per_dataset_and_variant(con, tmp_path):
    written = export_prompts(con, "128k", tmp_path)
    assert [(w.task, w.dataset, w.variant, w.n_prompts) for w in written] == [
        ("icl", "bbh_web", "default", 1),
        ("retrieval", "nq", "default", 1),
        ("retrieval", "nq", "query_at_beginning", 1),
    ]
    assert sorted(p.name for p in (tmp_path / "128k").iterdir()) == [
        "icl__bbh_web__default.csv",
        "icl__bbh_web__default.jsonl",
        "retrieval__nq__default.csv",
        "retrieval__nq__default.jsonl",
        "retrieval__nq__query_at_beginning.csv",
        "retrieval__nq__query_at_beginning.jsonl",
    ]
    jsonl = (tmp_path / "128k" / "retrieval__nq__default.jsonl").read_text(encoding="utf-8")
    [record] = [json.loads(line) for line in jsonl.splitlines()]
    assert record == {
        "prompt_id": "retrieval/nq/nq/default/q1/0",
        "prompt": 'INSTRUCTION\nID: 0 | CONTENT: a | END ID: 0\n====== Now let\'s start! ======\nquery: a, "b"\n',
        "targets": ["0"],
    }
    with open(tmp_path / "128k" / "retrieval__nq__query_at_beginning.csv", newline="") as handle:
        rows = list(csv.reader(handle))
    assert rows == [
        ["prompt_id", "prompt", "targets"],
        [
            "retrieval/nq/nq/query_at_beginning/q1/0",
            "query: a\nINSTRUCTION\nID: 0 | CONTENT: a | END ID: 0\n====== Now answer the query! ======\n",
            '["0"]',
        ],
    ]


def test_variant_filter_and_unbuilt_variant(con, tmp_path):
    written = export_prompts(con, "128k", tmp_path, ["query_at_beginning"])
    assert [(w.dataset, w.variant) for w in written] == [("nq", "query_at_beginning")]
    with pytest.raises(ConfigurationError, match=r"variant\(s\) \['no_cot'\] not built"):
        export_prompts(con, "128k", tmp_path, ["no_cot"])


def test_missing_tables_say_what_to_build(tmp_path):
    with pytest.raises(ConfigurationError, match="dbt build --select loft_32k"):
        export_prompts(duckdb.connect(), "32k", tmp_path)


def test_command_line(con, tmp_path, capsys):
    database = tmp_path / "w.duckdb"
    con.execute(f"attach '{database}' as w")
    con.execute("create schema w.loft_128k")
    con.execute("create table w.loft_128k.prompts as select * from loft_128k.prompts")
    con.execute("create table w.loft_128k.prompt_prefixes as select * from loft_128k.prompt_prefixes")
    con.execute("detach w")
    out = tmp_path / "out"
    assert (
        main(
            [
                "export-prompts",
                "--size",
                "128k",
                "--out",
                str(out),
                "--database",
                str(database),
                "--variant",
                "default",
            ]
        )
        == 0
    )
    assert capsys.readouterr().out.splitlines()[-1] == "2 dataset/variant groups, 2 prompts"
    assert (out / "128k" / "icl__bbh_web__default.jsonl").read_text(encoding="utf-8") == (
        '{"prompt_id": "icl/bbh_web/bbh_web/default/dev-0/0", '
        '"prompt": "Q: x?\\nOutput: Yes\\nQ: y?\\nOutput:", "targets": ["No"]}\n'
    )
