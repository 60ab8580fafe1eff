"""Render the scoring models outside dbt and build hand-made warehouse tables for them.

Plain Jinja renders a model file (models/loft_128k/..., models/loft_compare/...) with the macros
of macros/ and stand-ins for dbt's ref(), source(), var() and config: each ref or source reads
the test table named like the model's table, unless the call names another. The loft_*
functions come from duckdb_functions.register.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import duckdb
import jinja2
import pyarrow as pa

from loft_warehouse.registry import MULTI_ANSWER_DATASETS
from loft_warehouse.scoring.duckdb_functions import register

PROJECT = Path(__file__).resolve().parents[2]
MACRO_DIR = PROJECT / "macros"

# Columns (and DuckDB types) of the upstream tables the scoring models read.
SHAPES: dict[str, dict[str, str]] = {
    "responses": {
        "source": "varchar default 'inference'",
        "system": "varchar",
        "prompt_id": "varchar",
        "task": "varchar",
        "dataset": "varchar",
        "corpus_id": "varchar",
        "variant": "varchar",
        "method": "varchar default 'cic'",
        "stage": "bigint default 1",
        "split": "varchar",
        "qid": "varchar",
        "turn": "bigint",
        "call_index": "bigint default 0",
        "request_key": "varchar",
        "status": "varchar",
        "raw_text": "varchar",
        "finish_reason": "varchar",
        "input_tokens": "bigint",
        "cached_tokens": "bigint",
        "output_tokens": "bigint",
        "latency_s": "double",
        "attempts": "bigint",
        "error": "varchar",
        "cost_usd": "double",
        "created_at": "timestamp",
        "query_limit": "bigint",
    },
    "prompts": {
        "prompt_id": "varchar",
        "task": "varchar",
        "dataset": "varchar",
        "corpus_id": "varchar",
        "variant": "varchar",
        "method": "varchar default 'cic'",
        "stage": "bigint default 1",
        "split": "varchar",
        "qid": "varchar",
        "turn": "bigint",
        "call_index": "bigint default 0",
        "payload": "varchar",
        "gold_positions": "bigint[]",
        "gold_depth": "double",
        "gold_token_offset": "bigint",
        "n_documents": "bigint",
        "n_turns": "bigint",
        "prefix_id": "varchar",
        "suffix": "varchar",
        "gold": "varchar",
        "gold_shown_ids": "varchar",
    },
    "prompt_doc_ids": {
        "task": "varchar",
        "dataset": "varchar",
        "corpus_id": "varchar",
        "variant": "varchar",
        "shown_id": "varchar",
        "pid": "varchar",
    },
    "queries": {
        "task": "varchar",
        "dataset": "varchar",
        "corpus_id": "varchar",
        "split": "varchar",
        "qid": "varchar",
        "upstream_qid": "varchar",
        "turn": "bigint",
        "n_turns": "bigint",
        "query_text": "varchar",
        "gold": "varchar",
        "gold_pids": "varchar[]",
        "db_id": "varchar",
        "gold_sql": "varchar",
        "gold_is_ordered": "boolean",
        "query_rank": "bigint",
    },
    "corpus": {
        "task": "varchar",
        "dataset": "varchar",
        "corpus_id": "varchar",
        "doc_id": "bigint",
        "pid": "varchar",
        "title": "varchar",
        "text": "varchar",
    },
    "stg_datasets": {
        "task": "varchar",
        "dataset": "varchar",
        "source": "varchar",
        "max_gold": "bigint",
        "is_multi_answer": "boolean default false",
    },
    "arms": {
        "task": "varchar",
        "dataset": "varchar",
        "variant": "varchar",
        "method": "varchar",
        "arm_id": "varchar",
    },
    "adjudications": {
        "gold_version": "varchar",
        "task": "varchar default 'rag'",
        "dataset": "varchar",
        "qid": "varchar",
        "question": "varchar",
        "answer": "varchar",
        "rating": "varchar",
        "source": "varchar",
        "source_file": "varchar",
        "source_row": "bigint",
    },
    "stage_prompts": {
        "system": "varchar",
        "prompt_id": "varchar",
        "task": "varchar",
        "dataset": "varchar",
        "corpus_id": "varchar",
        "variant": "varchar",
        "method": "varchar",
        "stage": "bigint default 2",
        "split": "varchar",
        "qid": "varchar",
        "turn": "bigint default 0",
        "call_index": "bigint default 0",
        "n_turns": "bigint default 1",
        "payload": "varchar",
    },
    "stage_answers": {
        "system": "varchar",
        "task": "varchar",
        "dataset": "varchar",
        "corpus_id": "varchar",
        "variant": "varchar",
        "method": "varchar",
        "stage": "bigint default 1",
        "qid": "varchar",
        "turn": "bigint default 0",
        "status": "varchar",
        "parse_status_strict": "varchar",
        "payload_strict": "varchar",
    },
    "imports": {
        "system": "varchar",
        "prompt_id": "varchar",
        "task": "varchar",
        "dataset": "varchar",
        "corpus_id": "varchar",
        "variant": "varchar",
        "method": "varchar default 'cic'",
        "stage": "bigint default 1",
        "split": "varchar",
        "qid": "varchar",
        "turn": "bigint",
        "call_index": "bigint default 0",
        "n_turns": "bigint",
        "status": "varchar",
        "raw_text": "varchar",
        "given_answers": "varchar[]",
        "given_answers_json": "varchar",
        "gold_loft": "varchar",
        "id_space": "varchar",
        "import_file": "varchar",
        "import_line": "bigint",
    },
    "paper": {
        "task": "varchar",
        "dataset": "varchar",
        "paper_dataset": "varchar",
        "model": "varchar",
        "metric": "varchar",
        "value": "double",
    },
}


# Queries of imported LOFT answer files (int_imported_queries): the queries' columns and the flag.
SHAPES["imported_queries"] = {**SHAPES["queries"], "is_multi_answer": "boolean"}


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
    the size folder's loft_size, and `sized` the (size, scores relation) pairs the cross-size
    models find built."""

    def table(model_or_table: str) -> _Relation:
        alias = model_or_table.split("__", 1)[-1]
        return _Relation(tables.get(alias, alias))

    env = jinja2.Environment(undefined=jinja2.StrictUndefined, extensions=["jinja2.ext.do"])
    env.globals.update(
        ref=table,
        source=lambda _source, name: table(name),
        var=lambda var, default=None: seed if var == "seed" else default,
        config=_Config({"loft_size": size}),
        compare_built_sizes=lambda _identifier: [list(pair) for pair in sized],
        execute=True,
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


# Scoring models dbt materialises as views.
VIEWS = {"int_scored_queries", "int_prediction_rows", "int_parsed_answers", "predictions", "scores"}


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
        ("int_parsed_answers", model_sql("int_parsed_answers")),
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
        ("metrics", model_sql("metrics", seed=seed)),
        ("leaderboard", model_sql("leaderboard", paper_table2="paper")),
    ]
    seconds = {}
    for name, sql in steps:
        started = time.perf_counter()
        kind = "view" if name in VIEWS else "table"
        con.execute(f"create or replace {kind} {name} as {sql}")
        seconds[name] = time.perf_counter() - started
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
    unnamed columns take a scored, answered, primary test turn of cic at 128k."""
    con.execute(f"create table scores ({', '.join(f'{k} {v}' for k, v in SCORE_COLUMNS.items())})")
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
