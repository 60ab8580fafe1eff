"""int_stage{s}_answers (macros/methods.sql): one row per system and prompt, however many systems
share a later stage's prompt ids (issue 60 item 7: each of 4 keyless systems' stage-2 answers came
out 4 times, failing the build's unique test)."""

from __future__ import annotations

import duckdb

from loft_warehouse.dbt_boundary.plugin import register
from tests.scoring.sqlkit import model_sql

SYSTEMS = ("gpt-4o", "gemini-1.5-pro", "claude-opus-4.5")
METHOD = "rag_top5_justified_verify"


def _stage_two(con: duckdb.DuckDBPyConnection) -> None:
    """Stage-2 prompts built from each system's own stage-1 answers: the same prompt_id per system,
    each with its own payload; each system's stage-2 response."""
    con.execute("create table stage2_prompts (system varchar, prompt_id varchar, payload varchar)")
    con.execute(
        "create table stage2_responses (source varchar, system varchar, prompt_id varchar, task varchar, "
        "dataset varchar, corpus_id varchar, variant varchar, method varchar, stage bigint, split varchar, "
        "qid varchar, turn bigint, call_index bigint, status varchar, raw_text varchar)"
    )
    for system in SYSTEMS:
        for qid in ("q1", "q2"):
            payload = f'{{"by": "{system}"}}'
            con.execute("insert into stage2_prompts values (?, ?, ?)", [system, f"nq/{qid}/s2", payload])
            con.execute(
                "insert into stage2_responses values ('inference', ?, ?, 'rag', 'nq', 'nq', 'default', ?, 2, 'test', "
                "?, 0, 0, 'skipped_no_credentials', null)",
                [system, f"nq/{qid}/s2", METHOD, qid],
            )


def test_later_stage_answers_are_one_per_system_and_prompt() -> None:
    con = register(duckdb.connect())
    _stage_two(con)
    sql = model_sql("int_stage2_answers", int_stage2_responses="stage2_responses", int_stage2_prompts="stage2_prompts")
    rows = con.sql(f"select system, prompt_id, status from ({sql}) order by all").fetchall()
    expected = [(system, f"nq/{qid}/s2", "skipped_no_credentials") for system in SYSTEMS for qid in ("q1", "q2")]
    assert rows == sorted(expected)
