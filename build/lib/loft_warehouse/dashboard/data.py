"""What the dashboard reads, each read on its own short-lived read-only connection.

A connection held open, even read-only, would make a concurrent `dbt build` that builds in
place fail on the file lock; the published file (publish.py) is never written by a build, and
each read here opens, queries and closes. Results are keyed by the file's modification time,
so a new publish is picked up on the next read.
"""

from __future__ import annotations

import os
from pathlib import Path

import duckdb
import pandas as pd

from loft_warehouse.settings import PROJECT_ROOT, SIZES

SIZE_LABELS = tuple(SIZES)
SIZE_SCHEMAS = tuple(f"loft_{size}" for size in SIZES)


def warehouse_path() -> Path:
    """The file analysts open: $LOFT_DUCKDB_PATH, else loft.duckdb in the project."""
    value = os.environ.get("LOFT_DUCKDB_PATH", "").strip()
    return Path(value) if value else PROJECT_ROOT / "loft.duckdb"


def stamp(path: Path) -> float:
    """Modification time of the warehouse file (0 when it is not there yet)."""
    return path.stat().st_mtime if path.is_file() else 0.0


def read(path: Path, sql: str, params: list | None = None) -> pd.DataFrame:
    """One query on a connection opened for it and closed after it."""
    with duckdb.connect(str(path), read_only=True) as con:
        return con.execute(sql, params or []).df()


def built_sizes(path: Path) -> list[str]:
    """Size schemas that hold a metrics table, smallest first."""
    if not path.is_file():
        return []
    found = set(
        read(path, "select distinct schema_name from duckdb_tables() where table_name = 'metrics'")["schema_name"]
    )
    return [schema for schema in SIZE_SCHEMAS if schema in found]


def has_table(path: Path, schema: str, table: str) -> bool:
    frame = read(
        path, "select count(*) as n from duckdb_tables() where schema_name = ? and table_name = ?", [schema, table]
    )
    return bool(frame["n"].iloc[0])


LEADERBOARD = """
select task, dataset, paper_dataset, metric, size, split, source, rank_group, corpus_origin, system, method,
       value, rank, n, ci_low, ci_high, is_paper_metric, is_primary, query_limit, thinking, max_output_tokens,
       no_answer_share, is_health_flagged
from {schema}.leaderboard
where is_paper_metric or is_primary
order by task, dataset, metric, rank_group, rank
"""

PRIMARY_METRICS = """
select size, source, system, method, task, dataset, variant, split, metric_name, run_status, n, n_unanswered,
       mean, ci_low, ci_high, query_limit
from {schema}.metrics
where is_primary and rule = 'loft' and grain = 'turn'
order by task, dataset, system
"""

POSITION_CURVES = """
select system, method, task, dataset, variant, experiment, position_unit, position, split, n, mean, ci_low, ci_high,
       query_limit
from {schema}.position_curves
order by experiment, system, position
"""

PAIRED = "select * from {schema}.paired_comparisons order by task, dataset, split, system_a, system_b"

COST_LEDGER = "select * from {schema}.cost_ledger"

ANSWER_HEALTH = """
select distinct size, source, system, method, task, dataset, variant, split, thinking, max_output_tokens, n_calls,
       empty_share, truncated_share, blocked_share, unparsable_share, no_answer_share, is_health_flagged
from {schema}.metrics
where n_calls is not null
order by is_health_flagged desc, no_answer_share desc, system, task, dataset
"""

RUN_STATUS = """
select system, method, stage, status, count(*) as responses, sum(cost_usd) as cost_usd
from {schema}.responses group by all order by system, method, stage, status
"""

ERRORS = """
select system, task, dataset, qid, turn, status, finish_reason, attempts, error
from {schema}.responses where status in ('error', 'blocked') order by created_at desc limit 200
"""

QUERIES_OF = """
select distinct p.qid, p.split
from {schema}.predictions as p
where p.task = ? and p.dataset = ? and p.system = ? and p.is_final
order by p.split, p.qid
"""

DRILL = """
select p.prompt_id, p.turn, p.status, p.raw_text, p.answer_loft_json, p.gold_loft, p.parse_status_loft,
       p.variant, p.method, q.query_text, q.gold, pr.head, pr.suffix, pf.text as prefix_text, r.thought_text
from {schema}.predictions as p
left join {schema}.queries as q using (task, dataset, corpus_id, split, qid, turn)
left join {schema}.responses as r on r.system = p.system and r.prompt_id = p.prompt_id and not r.is_stale
left join {schema}.prompts as pr on pr.prompt_id = p.prompt_id
left join {schema}.prompt_prefixes as pf on pf.prefix_id = pr.prefix_id
where p.task = ? and p.dataset = ? and p.system = ? and p.qid = ? and p.is_final
order by p.variant, p.method, p.turn
"""

MM_GOLD = """
select to_json(gold_pids)::varchar as gold from {schema}_internal.stg_mm_queries where dataset = ? and qid = ?
"""

MM_QUERY_MEDIA = """
select m.mime_type, m.data
from {schema}_internal.stg_mm_queries as q, unnest(q.media) with ordinality as u(sha256, position)
inner join {schema}_internal.stg_mm_media as m on m.dataset = q.dataset and m.sha256 = u.sha256
where q.dataset = ? and q.qid = ?
order by u.position
"""

MM_PROMPT_PARTS = """
select section, mime_type, text, media_sha256
from {schema}.mm_prompt_parts
where dataset = ? and (section = 'prefix' or qid = ?)
order by section, part_index
"""

SCORES_OF = """
select variant, method, turn, metric_name, grain, value
from {schema}.scores
where task = ? and dataset = ? and system = ? and qid = ?
order by variant, method, turn, metric_name
"""
