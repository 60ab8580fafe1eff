"""Render the scoring models outside dbt and build hand-made warehouse tables for them.

Plain Jinja renders a model file (models/loft_128k/..., models/loft_compare/...) with the macros
of macros/ and stand-ins for dbt's ref(), source(), var() and config: each ref or source reads
the test table named like the model's table, unless the call names another. The loft_*
functions come from duckdb_functions.register.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import duckdb
import jinja2
import pyarrow as pa
import yaml

from loft_warehouse.registry import MULTI_ANSWER_DATASETS
from loft_warehouse.scoring.duckdb_functions import register

PROJECT = Path(__file__).resolve().parents[2]
MACRO_DIR = PROJECT / "macros"


def typed_columns() -> dict[str, dict[str, str]]:
    """Column names and DuckDB types of every model (by table name) and reference source whose yml
    gives them data types: the contracts, one home for the columns tests build tables from."""
    found: dict[str, dict[str, str]] = {}
    for path in [*sorted(PROJECT.glob("models/loft_128k/*/*.yml")), PROJECT / "models" / "_sources.yml"]:
        document = yaml.safe_load(path.read_text(encoding="utf-8"))
        tables = document.get("models", []) + [t for s in document.get("sources", []) for t in s.get("tables", [])]
        for table in tables:
            columns = {c["name"]: c["data_type"] for c in table.get("columns", []) if c.get("data_type")}
            if columns:
                found[table["name"].split("__", 1)[-1]] = columns
    return found


# The upstream tables the scoring models read, as tests build them: the model (or source) whose
# typed yml columns each has, and the defaults its rows take where a test leaves a column out.
TEST_TABLES: dict[str, tuple[str, dict[str, str]]] = {
    "responses": (
        "responses",
        {"source": "'inference'", "method": "'cic'", "stage": "1", "call_index": "0", "is_stale": "false"},
    ),
    "prompts": ("prompts", {"method": "'cic'", "stage": "1", "call_index": "0"}),
    "prompt_doc_ids": ("prompt_doc_ids", {}),
    "queries": ("queries", {}),
    "corpus": ("corpus", {}),
    "stg_datasets": ("stg_datasets", {"is_multi_answer": "false"}),
    "arms": ("arms", {}),
    "adjudications": ("stg_gold_adjudications", {"task": "'rag'"}),
    "stage_prompts": ("int_stage2_prompts", {"stage": "2", "turn": "0", "call_index": "0", "n_turns": "1"}),
    "stage_answers": ("int_stage1_answers", {"stage": "1", "turn": "0"}),
    "imports": ("int_imported_predictions", {"method": "'cic'", "stage": "1", "call_index": "0"}),
    "paper": ("paper_table2", {}),
    "imported_queries": ("int_imported_queries", {}),
    "stg_mm_queries": ("stg_mm_queries", {}),
}


def _shapes() -> dict[str, dict[str, str]]:
    typed = typed_columns()
    return {
        table: {
            name: f"{kind} default {defaults[name]}" if name in defaults else kind
            for name, kind in typed[source].items()
        }
        for table, (source, defaults) in TEST_TABLES.items()
    }


# Columns (and DuckDB types, with the test defaults) of each test table.
SHAPES: dict[str, dict[str, str]] = _shapes()


def macros() -> Any:
    """The module of every macros/scoring_*.sql, whose attributes are the macros."""
    text = "\n".join(p.read_text(encoding="utf-8") for p in sorted(MACRO_DIR.glob("scoring_*.sql")))
    return jinja2.Environment(undefined=jinja2.StrictUndefined).from_string(text).module


class _Relation(str):
    """A table name where dbt would give a relation (view_ref calls .include())."""

    def include(self, **_: Any) -> _Relation:
        return self


class _Config:
    """dbt's `config` in a model: config(...) renders nothing, config.get reads the model's settings."""

    def __init__(self, settings: Mapping[str, Any]) -> None:
        self._settings = settings

    def __call__(self, **_: Any) -> str:
        return ""

    def get(self, name: str, default: Any = None) -> Any:
        return self._settings.get(name, default)


def model_path(name: str) -> Path:
    """The file of model `name` at 128k (scores -> models/loft_128k/.../loft_128k__scores.sql),
    or of a cross-size model (scaling_scores -> models/loft_compare/loft_compare__scaling_scores.sql)."""
    found = [
        *PROJECT.glob(f"models/loft_128k/*/loft_128k__{name}.sql"),
        *PROJECT.glob(f"models/loft_compare/loft_compare__{name}.sql"),
    ]
    if len(found) != 1:
        raise FileNotFoundError(f"no single SQL model named {name!r}: {found}")
    return found[0]


def _runs_of(turn_scores: str) -> str:
    """An int_run_fingerprints stand-in: the runs a size's int_turn_scores relation holds."""
    return (
        "(select distinct source, system, method, task, dataset, variant, split, 'test' as scores_fingerprint "
        f"from {turn_scores})"
    )


def model_sql(
    name: str,
    *,
    seed: int = 20240612,
    size: str = "128k",
    sized: Iterable[tuple[str, str]] = (),
    **tables: str,
) -> str:
    """The select of model `name` as dbt would compile it, reading the test database: a ref() or
    source() of table T reads `tables[T]` if given, else T. `seed` is the build's seed var, `size`
    the size folder's loft_size, and `sized` the (size, int_turn_scores relation) pairs the cross-size
    models find built."""

    def table(model_or_table: str) -> _Relation:
        alias = model_or_table.split("__", 1)[-1]
        return _Relation(tables.get(alias, alias))

    env = jinja2.Environment(undefined=jinja2.StrictUndefined, extensions=["jinja2.ext.do"])
    env.globals.update(
        ref=table,
        source=lambda _source, name: table(name),
        var=lambda var, default=None: seed if var == "seed" else default,
        config=_Config({"loft_size": size, "loft": {"answer_health_threshold": "0.05"}}),
        compare_built_sizes=lambda identifier, _suffix="": [
            [size, _runs_of(relation) if identifier == "int_run_fingerprints" else relation] for size, relation in sized
        ],
        execute=True,
        is_incremental=lambda: False,
        local_md5=lambda text: hashlib.md5(text.encode()).hexdigest(),
        model={"raw_code": model_path(name).read_text(encoding="utf-8")},
    )
    text = "\n".join(p.read_text(encoding="utf-8") for p in sorted(MACRO_DIR.glob("*.sql")))
    module = env.from_string(text).module
    macros = {key: getattr(module, key) for key in dir(module) if not key.startswith("_")}
    env.globals.update({key: macro for key, macro in macros.items() if key not in env.globals})
    return env.from_string(model_path(name).read_text(encoding="utf-8")).render()


def connect(database: str = ":memory:") -> duckdb.DuckDBPyConnection:
    """A database (in memory unless a file is named) with the scoring functions and empty
    upstream tables."""
    con = register(duckdb.connect(database))
    for table, columns in SHAPES.items():
        body = ", ".join(f"{name} {kind}" for name, kind in columns.items())
        con.execute(f"create table {table} ({body})")
    # A build keeps staging tables in the size's internal schema, where quality suites read them.
    con.execute("create schema main_internal")
    con.execute("create view main_internal.stg_mm_queries as select * from main.stg_mm_queries")
    # The prompt variants a test places no gold with (int_run_fingerprints digests them).
    con.execute(
        "create table prompt_variants (task varchar, dataset varchar, variant varchar, experiment varchar, "
        "position double, position_unit varchar)"
    )
    return con


def insert(con: duckdb.DuckDBPyConnection, table: str, rows: Iterable[Mapping[str, Any]]) -> None:
    """Insert rows given as dicts (by column name; missing columns are NULL)."""
    rows = list(rows)
    if not rows:
        return
    unknown = {name for row in rows for name in row} - set(SHAPES[table])
    if unknown:
        raise KeyError(f"{table} has no column(s) {sorted(unknown)}")
    # Rows that name the same columns go in together; columns a row leaves out take their default.
    groups: dict[tuple[str, ...], list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault(tuple(row), []).append(dict(row))
    for group in groups.values():
        con.register("rows_to_insert", pa.Table.from_pylist(group))
        con.execute(f"insert into {table} by name select * from rows_to_insert")
        con.unregister("rows_to_insert")


# What int_answer_health reads of the responses mart, from a scenario's hand-made responses table.
HEALTH_RESPONSES = (
    "(select system, prompt_id, null::varchar as error, null::bigint as max_output_tokens, "
    "null::varchar as thinking, is_stale from responses)"
)
# int_answer_health of a metrics table built straight from scores: no call, so no row.
NO_HEALTH = (
    "select null::varchar as source, null::varchar as system, null::varchar as method, null::varchar as task, "
    "null::varchar as dataset, null::varchar as variant, null::varchar as split, null::bigint as max_output_tokens, "
    "null::varchar as thinking, null::bigint as n_calls, null::double as empty_share, "
    "null::double as truncated_share, null::double as blocked_share, null::double as unparsable_share, "
    "null::double as no_answer_share, null::boolean as is_health_flagged where false"
)

# Scoring models dbt materialises as views.
VIEWS = {"int_scored_queries", "int_prediction_rows", "predictions", "scores"}


def build(con: duckdb.DuckDBPyConnection, seed: int = 7, size: str = "128k") -> dict[str, float]:
    """Create the scoring tables and views (as the dbt models do) from the upstream tables; seconds each."""
    steps = [
        (
            "int_scored_queries",
            model_sql("int_scored_queries", int_imported_queries="imported_queries"),
        ),
        (
            "int_prediction_rows",
            model_sql(
                "int_prediction_rows",
                int_imported_predictions="imports",
                int_stage2_prompts="stage_prompts",
                int_stage3_prompts="(select * from stage_prompts where false)",
                int_stage1_answers="stage_answers",
                int_stage2_answers="(select * from stage_answers where false)",
            ),
        ),
        (
            "int_run_fingerprints",
            model_sql(
                "int_run_fingerprints", stg_gold_adjudications="adjudications", int_imported_predictions="imports"
            ),
        ),
        (
            "int_predictions",
            model_sql("int_predictions"),
        ),
        ("predictions", model_sql("predictions")),
        (
            "int_turn_scores",
            model_sql("int_turn_scores", size=size, stg_gold_adjudications="adjudications"),
        ),
        ("scores", model_sql("scores")),
        ("int_metrics", model_sql("int_metrics", seed=seed)),
        ("int_answer_health", model_sql("int_answer_health", responses=HEALTH_RESPONSES)),
        ("metrics", model_sql("metrics")),
        ("leaderboard", model_sql("leaderboard", paper_table2="paper")),
    ]
    seconds = {}
    for name, sql in steps:
        started = time.perf_counter()
        kind = "view" if name in VIEWS else "table"
        con.execute(f"create or replace {kind} {name} as {sql}")
        seconds[name] = time.perf_counter() - started
    for name in ("int_predictions", "int_turn_scores"):
        con.execute(f"create or replace view main_internal.{name} as select * from main.{name}")
    return seconds


# Columns of the scores view that the aggregate and paper-table marts read.
SCORE_COLUMNS = {
    "size": "varchar",
    "source": "varchar",
    "system": "varchar",
    "method": "varchar",
    "task": "varchar",
    "dataset": "varchar",
    "variant": "varchar",
    "split": "varchar",
    "qid": "varchar",
    "turn": "bigint",
    "grain": "varchar",
    "metric": "varchar",
    "rule": "varchar",
    "gold_version": "varchar",
    "metric_name": "varchar",
    "value": "double",
    "status": "varchar",
    "is_answered": "boolean",
    "is_empty_answer": "boolean",
    "is_primary": "boolean",
    "gold_positions": "bigint[]",
    "gold_depth": "double",
    "gold_token_offset": "bigint",
    "arm_id": "varchar",
    "query_limit": "bigint",
}


def scores_table(con: duckdb.DuckDBPyConnection, rows: Iterable[dict[str, Any]]) -> None:
    """A `scores` table (the view's columns the aggregate marts read) from rows given as dicts;
    unnamed columns take a scored, answered, primary test turn of cic at 128k. An int_turn_scores
    view beside it holds them by turn, and an int_run_fingerprints view its runs."""
    con.execute(f"create table scores ({', '.join(f'{k} {v}' for k, v in SCORE_COLUMNS.items())})")
    turn_scores_view(con)
    run_fingerprints_view(con)
    defaults = {
        "size": "128k",
        "source": "inference",
        "method": "cic",
        "split": "test",
        "turn": 0,
        "grain": "turn",
        "rule": "loft",
        "gold_version": "release",
        "status": "ok",
        "is_answered": True,
        "is_empty_answer": False,
        "is_primary": True,
    }
    full = [{**defaults, **row} for row in rows]
    for row in full:
        row["metric_name"] = f"{row['metric']}_{row['rule']}"
    if not full:
        return
    con.executemany(
        f"insert into scores by name select {', '.join(f'?::{v} as {k}' for k, v in SCORE_COLUMNS.items())}",
        [[row.get(k) for k in SCORE_COLUMNS] for row in full],
    )


def primary_turns_view(con: duckdb.DuckDBPyConnection) -> None:
    """int_turn_scores as the primary-score marts read it (scoring_primary_loft_turns), over a
    `scores` table: each primary row is a turn whose primary columns hold its metric."""
    con.execute(
        "create or replace view int_turn_scores as select * exclude (metric_name, rule, value, is_primary), "
        "null as metric_values, metric_name as primary_metric_name, rule as primary_rule, value as primary_value "
        "from scores where is_primary"
    )


def turn_scores_view(con: duckdb.DuckDBPyConnection) -> None:
    """int_turn_scores over a `scores` table of SCORE_COLUMNS, as every mart that reads it expects:
    one row per turn with its metrics as a list and its primary metric as columns."""
    con.execute(
        "create or replace view int_turn_scores as select size, source, system, method, null::bigint as stage, task, "
        "dataset, null::varchar as corpus_id, variant, split, qid, turn, null::bigint as n_turns, grain, gold_version, "
        "status, is_answered, gold_positions, gold_depth, gold_token_offset, null::bigint as n_documents, arm_id, "
        "query_limit, list({'metric': metric, 'rule': rule, 'value': value, 'is_empty_answer': is_empty_answer, "
        "'is_primary': is_primary}) as metric_values, any_value(metric_name) filter (where is_primary) "
        "as primary_metric_name, any_value(rule) filter (where is_primary) as primary_rule, any_value(value) "
        "filter (where is_primary) as primary_value from scores group by all"
    )


def run_fingerprints_view(con: duckdb.DuckDBPyConnection) -> None:
    """int_run_fingerprints as the incremental aggregates read it, over a `scores` table: every
    run (and run group) the scores hold, each with a fingerprint of its own."""
    con.execute(
        "create or replace view int_run_fingerprints as select distinct source, system, method, task, dataset, "
        "variant, split, md5(concat_ws('/', source, system, method, task, dataset, variant, split)) "
        "as aggregates_fingerprint, md5(concat_ws('/', source, system, method, task, dataset, split)) "
        "as curves_fingerprint from scores"
    )


def metrics_table(con: duckdb.DuckDBPyConnection, seed: int) -> None:
    """The metrics mart over a `scores` table (scores_table), as a build makes it: int_metrics,
    then metrics from it."""
    con.execute(f"create table int_metrics as {model_sql('int_metrics', seed=seed)}")
    con.execute(f"create table int_answer_health as {NO_HEALTH}")
    con.execute(f"create table metrics as {model_sql('metrics')}")


def right_answers(indices: Iterable[int], n: int) -> list[float]:
    """Planted 0/1 scores of q0..q{n-1}: 1 exactly where the index is given."""
    right = set(indices)
    return [1.0 if q in right else 0.0 for q in range(n)]


class Scenario:
    """A small hand-made warehouse: queries, prompts, shown-ID maps and responses.

    Retrieval corpora show IDs "0".."9" for pids "p0".."p9" (variant default)."""

    def __init__(self) -> None:
        self.con = connect()
        self._doc_ids: set[tuple[str, str]] = set()
        self._rows: dict[str, list[dict[str, Any]]] = {}
        self._splits: dict[str, str] = {}

    def _add(self, table: str, row: dict[str, Any]) -> None:
        self._rows.setdefault(table, []).append(row)

    def query(
        self,
        task: str,
        dataset: str,
        qid: str,
        gold: Any,
        *,
        turn: int = 0,
        n_turns: int = 1,
        split: str = "test",
        gold_sql: str | None = None,
        max_gold: int | None = None,
    ) -> str:
        """Add one query turn and its prompt; returns the prompt id."""
        prompt_id = f"{task}/{dataset}/{dataset}/default/{qid}/{turn}"
        gold_pids = gold if task == "retrieval" else []
        self._add(
            "queries",
            dict(
                task=task,
                dataset=dataset,
                corpus_id=dataset,
                split=split,
                qid=qid,
                upstream_qid=qid,
                turn=turn,
                n_turns=n_turns,
                gold=json.dumps(gold),
                gold_pids=gold_pids,
                gold_sql=gold_sql,
                gold_is_ordered=bool(gold_sql) and " ORDER BY " in gold_sql.upper(),
            ),
        )
        self._add(
            "prompts",
            dict(
                prompt_id=prompt_id,
                task=task,
                dataset=dataset,
                corpus_id=dataset,
                variant="default",
                split=split,
                qid=qid,
                turn=turn,
                n_turns=n_turns,
                gold=json.dumps(gold),
            ),
        )
        self._splits[prompt_id] = split
        if (task, dataset) not in self._doc_ids:
            self._doc_ids.add((task, dataset))
            multi = task == "rag" and dataset in MULTI_ANSWER_DATASETS
            self._add("stg_datasets", dict(task=task, dataset=dataset, max_gold=max_gold, is_multi_answer=multi))
            if task == "retrieval":
                for i in range(10):
                    self._add(
                        "prompt_doc_ids",
                        dict(
                            task=task,
                            dataset=dataset,
                            corpus_id=dataset,
                            variant="default",
                            shown_id=str(i),
                            pid=f"p{i}",
                        ),
                    )
                    self._add("corpus", dict(task=task, dataset=dataset, corpus_id=dataset, doc_id=i, pid=f"p{i}"))
        return prompt_id

    def respond(self, prompt_id: str, raw_text: str | None, *, system: str = "sys", status: str = "ok") -> None:
        """Add a response of `system` to a prompt."""
        task, dataset, corpus_id, variant, qid, turn = prompt_id.split("/")
        self._add(
            "responses",
            dict(
                system=system,
                prompt_id=prompt_id,
                task=task,
                dataset=dataset,
                corpus_id=corpus_id,
                variant=variant,
                split=self._splits[prompt_id],
                qid=qid,
                turn=int(turn),
                status=status,
                raw_text=raw_text,
            ),
        )

    def case(self, task: str, dataset: str, qid: str, gold: Any, raw_text: str | None, **kwargs: Any) -> None:
        """A one-turn query with one ok response."""
        self.respond(self.query(task, dataset, qid, gold, **kwargs), raw_text)

    def build(self, seed: int = 7, query_limit: int | None = None) -> duckdb.DuckDBPyConnection:
        """Insert the rows added so far (the responses as a quick try of `query_limit` queries, if
        given) and build the scoring tables."""
        for row in self._rows.get("responses", []) if query_limit else []:
            row["query_limit"] = query_limit
        for table, rows in self._rows.items():
            insert(self.con, table, rows)
        self._rows = {}
        build(self.con, seed=seed)
        return self.con

    def stored_lists(self) -> list[tuple[Any, ...]]:
        """(qid, answer_strict, answer_strict_json, pred_pids_loft, pred_pids_strict) as int_predictions
        stores them (NULL where the loft rule's list is the same), by qid."""
        query = "select qid, answer_strict, answer_strict_json, pred_pids_loft, pred_pids_strict from int_predictions"
        return self.con.sql(query + " order by qid").fetchall()

    def scores(self, qid: str, system: str = "sys") -> dict[str, float]:
        """metric_name -> value of one query's turn rows (the last turn for conversations)."""
        rows = self.con.execute(
            "select metric_name, value from scores where qid = ? and system = ? order by turn",
            [qid, system],
        ).fetchall()
        return dict(rows)


def add_mixed_turns(s: Scenario) -> None:
    """Turns of every kind a run holds: retrieval answered right and wrong, skipped for length
    and missing, a RAG and an ICL answer."""
    s.case("retrieval", "nq", "q1", ["p1"], "Final Answer: ['1']", max_gold=1)
    s.case("retrieval", "nq", "q2", ["p2"], "Final Answer: ['9']")
    s.respond(s.query("retrieval", "nq", "q3", ["p3"]), None, status="skipped_too_long")
    s.query("retrieval", "nq", "q4", ["p4"])
    s.case("rag", "nq", "r1", ["Paris"], "Final Answer: ['Paris']")
    s.case("icl", "bbh_web", "i1", ["Yes"], "Output: ['Yes']")
