"""Execute every Spider/SParC gold query in DuckDB (rewritten) and in SQLite (reference).

One row per (dataset, qid, turn). The DuckDB rows are the gold answer; SQLite, which produced
Spider's own gold, checks them. A query turn is eligible for the benchmark splits only when
its gold is well defined (LOFT drops queries whose gold is empty, errors or depends on row
order). Exclusion reasons, first that applies:

- `no_database`: the database has no dump (wta_1);
- `error`: the gold SQL fails in DuckDB (rewrite or execution);
- `empty_result`: no rows;
- `null_result`: every cell is NULL (e.g. max() over no rows): nothing a model can read off;
- `order_dependent`: the top-level LIMIT cuts through tied ORDER BY keys (or there is no
  ORDER BY and rows are dropped), so which rows are returned depends on the engine;
- `arbitrary_row`: a bare column takes its value from an arbitrary row of its group (or of
  the rows tied at a min()/max()), and different rows give different results;
- `sqlite_disagreement`: DuckDB and SQLite return different multisets of rows, or different
  orders beyond the order of tied rows when the gold has ORDER BY.

Rows with ORDER BY whose engines differ only in the order of tied rows stay eligible (the
multiset is determined) and are flagged `has_order_ties`.

DuckDB runs the rewrite with SQLite's implicit row order written out (`sqlite_order`), so ties
before a LIMIT, the order of tied rows and bare columns come out as in SQLite. Whether a turn
is order dependent or picks an arbitrary row is still decided on the rewrite without it (ties
left open, ANY_VALUE / ARG_MAX probed both ways): such a gold stays excluded even though the
engines now agree on it, because it depends on an engine's row order, not on the question.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import sqlite3
import threading
import time
from collections import Counter
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb
import polars as pl
from sqlglot import exp

from loft_warehouse import registry, settings
from loft_warehouse.progress import Progress
from loft_warehouse.readers import read_json
from loft_warehouse.sources import sparc, spider
from loft_warehouse.sql import databases, gold_cache, rewrite
from loft_warehouse.sql.gold_cache import GoldCache
from loft_warehouse.sql.rewrite import RewriteError
from loft_warehouse.sql.schema import Schema
from loft_warehouse.sql.sqlite_order import sqlite_row_order

TIMEOUT_S = 20.0
GOLD_SCHEMA = {
    "dataset": pl.String,
    "qid": pl.String,
    "turn": pl.Int64,
    "db_id": pl.String,
    "gold_sql": pl.String,
    "duckdb_sql": pl.String,
    "status": pl.String,
    "rows": pl.String,
    "n_rows": pl.Int64,
    "has_order_by": pl.Boolean,
    "has_order_ties": pl.Boolean,
    "error": pl.String,
    "sqlite_sql": pl.String,
    "sqlite_status": pl.String,
    "sqlite_rows": pl.String,
    "agree_multiset": pl.Boolean,
    "agree_ordered": pl.Boolean,
    "disagreement_cause": pl.String,
    "eligible": pl.Boolean,
    "exclusion_reason": pl.String,
    "query_eligible": pl.Boolean,
}


@dataclass
class Execution:
    """One engine's outcome: status 'ok' | 'empty' | 'error', rows and the error text."""

    status: str
    rows: list[tuple]
    error: str | None = None


def json_safe(value: Any) -> Any:
    """A result cell as JSON: decimals as floats, times as ISO text, booleans as 0/1, lists and
    structs cell by cell, and any other engine type (UUID, INTERVAL, ...) as its text, so that
    every result DuckDB can return is scored rather than crashing the worker."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    return str(value)


def rows_json(rows: list[tuple]) -> str:
    """Rows as JSON text: a list of lists."""
    return json.dumps([[json_safe(v) for v in row] for row in rows], ensure_ascii=False)


def canonical(value: Any) -> Any:
    """A cell for comparing engines: numbers by value to 12 significant digits."""
    value = json_safe(value)
    if isinstance(value, int | float):
        return float(f"{float(value):.12g}")
    return value


def _canonical_rows(rows: list[tuple]) -> list[tuple]:
    return [tuple(canonical(v) for v in row) for row in rows]


def run_duckdb(con: duckdb.DuckDBPyConnection, sql: str, timeout_s: float = TIMEOUT_S) -> Execution:
    """Run one query; a query still running after timeout_s is interrupted (an error)."""
    timer = threading.Timer(timeout_s, con.interrupt)
    timer.start()
    try:
        rows = con.execute(sql).fetchall()
    except (duckdb.Error, RuntimeError) as exc:
        return Execution("error", [], str(exc).split("\n")[0])
    finally:
        timer.cancel()
    return Execution("ok" if rows else "empty", rows)


def run_sqlite(con: sqlite3.Connection, sql: str, timeout_s: float = TIMEOUT_S) -> Execution:
    """Run one query in SQLite; the progress handler stops it after timeout_s."""
    deadline = time.perf_counter() + timeout_s
    con.set_progress_handler(lambda: int(time.perf_counter() > deadline), 10_000)
    try:
        rows = con.execute(sql).fetchall()
    except (sqlite3.Error, sqlite3.Warning) as exc:
        return Execution("error", [], str(exc))
    finally:
        con.set_progress_handler(None, 0)
    return Execution("ok" if rows else "empty", rows)


def _order_terms(select: exp.Select) -> list[exp.Expr]:
    """ORDER BY terms as expressions over the FROM clause (aliases and ordinals resolved)."""
    projections = select.expressions
    terms = []
    for ordered in select.args["order"].expressions:
        term = ordered.this
        if isinstance(term, exp.Literal) and term.is_int:
            term = projections[int(term.this) - 1]
        elif isinstance(term, exp.Column) and not term.table:
            term = next((p for p in projections if p.alias_or_name == term.name), term)
        terms.append(term.unalias() if isinstance(term, exp.Alias) else term)
    return terms


def sort_keys(con: duckdb.DuckDBPyConnection, tree: exp.Expr) -> list[tuple] | None:
    """The ORDER BY keys of every row the query would return without its LIMIT/OFFSET.

    None when the top level is not a plain SELECT with ORDER BY (set operations are not
    probed) or the probe fails.
    """
    if not isinstance(tree, exp.Select) or not tree.args.get("order"):
        return None
    terms = _order_terms(tree)
    probe = tree.copy()
    probe.set("limit", None)
    probe.set("offset", None)
    width = len(probe.expressions)
    for i, term in enumerate(terms):
        probe.select(exp.alias_(term.copy(), f"__loft_key_{i}"), copy=False)
    result = run_duckdb(con, probe.sql(dialect="duckdb"))
    if result.status == "error":
        return None
    return [tuple(canonical(v) for v in row[width:]) for row in result.rows]


def _limit(tree: exp.Expr) -> tuple[int, int] | None:
    limit = tree.args.get("limit")
    if limit is None:
        return None
    value = limit.expression if isinstance(limit, exp.Limit) else limit
    offset = tree.args.get("offset")
    try:
        n = int(value.this)
        skip = int(offset.expression.this) if offset is not None else 0
    except (AttributeError, TypeError, ValueError):
        return None
    return n, skip


def unordered_limit_drops_rows(con: duckdb.DuckDBPyConnection, tree: exp.Expr) -> bool:
    """True when a top-level LIMIT without ORDER BY keeps only some of the rows (any rows)."""
    limit = _limit(tree)
    if limit is None or tree.args.get("order"):
        return False
    probe = tree.copy()
    probe.set("limit", None)
    probe.set("offset", None)
    counted = run_duckdb(con, f"SELECT count(*) FROM ({probe.sql(dialect='duckdb')})")
    return counted.status == "ok" and counted.rows[0][0] > limit[0]


def cuts_through_ties(keys: list[tuple], limit: int, offset: int) -> bool:
    """True when the rows kept by LIMIT/OFFSET end (or start) inside a run of equal keys."""
    end = offset + limit
    if end < len(keys) and keys[end - 1] == keys[end]:
        return True
    return 0 < offset < len(keys) and keys[offset - 1] == keys[offset]


def same_order_up_to_ties(a: list[tuple], b: list[tuple], keys: list[tuple]) -> bool:
    """Equal as sequences of tie groups: within a run of equal keys any order is allowed."""
    if len(a) != len(b) or len(keys) < len(a):
        return False
    start = 0
    for end in range(1, len(a) + 1):
        if end == len(a) or keys[end] != keys[start]:
            if Counter(a[start:end]) != Counter(b[start:end]):
                return False
            start = end
    return True


@dataclass(frozen=True)
class GoldQuery:
    """One turn of one query whose gold SQL is executed."""

    dataset: str
    qid: str
    turn: int
    db_id: str
    gold_sql: str


def gold_queries(root: Path) -> list[GoldQuery]:
    """Every Spider dev question and SParC dev turn, including those without a database."""
    found = [GoldQuery("spider", qid, 0, db, sql) for qid, db, _, sql, _ in spider.questions(root)]
    for qid, db, _, sqls, _ in sparc.conversations(root):
        found.extend(GoldQuery("sparc", qid, t, db, sql) for t, sql in enumerate(sqls))
    return found


def schemas(root: Path) -> dict[str, Schema]:
    """Each dumped database's schema, with Spider's spellings of renamed names."""
    entries = {}
    tables_json = root / databases.SPIDER_TABLES
    if tables_json.exists():
        entries = {e["db_id"]: e for e in read_json(tables_json)}
    return {db: Schema.from_dump(d, entries.get(db)) for db, d in databases.databases(root).items()}


def _loose(value: Any) -> Any:
    """A canonical cell where numeric text counts as its number (for classifying causes)."""
    if isinstance(value, str):
        try:
            return canonical(float(value))
        except ValueError:
            return value
    return value


def picks_arbitrary_row(con: duckdb.DuckDBPyConnection, tree: exp.Expr) -> bool:
    """True when resolving ANY_VALUE/ARG_MAX/ARG_MIN picks differently changes the rows."""
    probes = rewrite.arbitrary_row_probes(tree)
    if probes is None:
        return False
    low, high = (run_duckdb(con, sql) for sql in probes)
    if "error" in (low.status, high.status):
        return False
    return Counter(_canonical_rows(low.rows)) != Counter(_canonical_rows(high.rows))


def disagreement_cause(
    duck: Execution, lite: Execution, ordered_ok: bool, tie_at_limit: bool, arbitrary: bool
) -> str | None:
    """Why DuckDB's and SQLite's results differ (None when they agree or both fail)."""
    if duck.status == "error" and lite.status == "error":
        return None
    if duck.status == "error":
        return "duckdb_error_only"
    if lite.status == "error":
        return "sqlite_error_only"
    a, b = _canonical_rows(duck.rows), _canonical_rows(lite.rows)
    if Counter(a) == Counter(b):
        return None if ordered_ok else "row_order"
    if tie_at_limit:
        return "tie_at_limit"
    if arbitrary:
        return "arbitrary_row"
    if len(a) != len(b):
        return "row_count"
    loose_a = Counter(tuple(_loose(v) for v in row) for row in a)
    loose_b = Counter(tuple(_loose(v) for v in row) for row in b)
    return "value_types" if loose_a == loose_b else "values"


def _exclusion(duck: Execution, tie_at_limit: bool, arbitrary: bool, agrees: bool) -> str | None:
    if duck.status == "error":
        return "error"
    if duck.status == "empty":
        return "empty_result"
    if all(v is None for r in duck.rows for v in r):
        return "null_result"
    if tie_at_limit:
        return "order_dependent"
    if arbitrary:
        return "arbitrary_row"
    return None if agrees else "sqlite_disagreement"


def execute_sql(
    gold_sql: str, schema: Schema, duck_con: duckdb.DuckDBPyConnection, lite_con: sqlite3.Connection
) -> dict[str, Any]:
    """Execute one gold query in both engines and decide its eligibility (result columns)."""
    tree = None
    try:
        tree = rewrite.parse_duckdb(rewrite.to_duckdb(gold_sql, schema))
        duckdb_sql = sqlite_row_order(tree.copy(), schema).sql(dialect="duckdb")
        duck = run_duckdb(duck_con, duckdb_sql)
    except RewriteError as exc:
        duckdb_sql, duck = None, Execution("error", [], f"rewrite: {exc}")
    try:
        sqlite_sql = rewrite.to_sqlite(gold_sql, schema)
    except RewriteError:
        sqlite_sql = gold_sql
    lite = run_sqlite(lite_con, sqlite_sql)

    a, b = _canonical_rows(duck.rows), _canonical_rows(lite.rows)
    both_ran = duck.status != "error" and lite.status != "error"
    agree_multiset = both_ran and Counter(a) == Counter(b)
    ordered = tree is not None and bool(tree.args.get("order"))
    keys = sort_keys(duck_con, tree) if tree is not None and ordered and duck.status == "ok" else None
    agree_ordered = (a == b) if ordered and both_ran else None
    ties_ok = bool(agree_ordered is False and keys is not None and same_order_up_to_ties(a, b, keys))
    ordered_ok = agree_ordered is not False or ties_ok
    limit = _limit(tree) if tree is not None else None
    tie_at_limit = bool(keys and limit and cuts_through_ties(keys, *limit)) or (
        tree is not None and duck.status == "ok" and unordered_limit_drops_rows(duck_con, tree)
    )
    arbitrary = tree is not None and duck.status == "ok" and picks_arbitrary_row(duck_con, tree)
    reason = _exclusion(duck, tie_at_limit, arbitrary, agree_multiset and ordered_ok)
    return {
        "duckdb_sql": duckdb_sql,
        "status": duck.status,
        "rows": rows_json(duck.rows) if duck.status != "error" else None,
        "n_rows": len(duck.rows),
        "has_order_by": ordered,
        "has_order_ties": ties_ok,
        "error": duck.error,
        "sqlite_sql": sqlite_sql,
        "sqlite_status": lite.status,
        "sqlite_rows": rows_json(lite.rows) if lite.status != "error" else None,
        "agree_multiset": agree_multiset if both_ran else None,
        "agree_ordered": agree_ordered,
        "disagreement_cause": disagreement_cause(duck, lite, ordered_ok, tie_at_limit, arbitrary),
        "eligible": reason is None,
        "exclusion_reason": reason,
        # Not a column: cut short by the timeout in either engine, so not kept by the cache.
        "interrupted": any("interrupt" in (run.error or "").lower() for run in (duck, lite)),
    }


def _missing_database(query: GoldQuery) -> dict[str, Any]:
    row: dict[str, Any] = {k: None for k in GOLD_SCHEMA}
    row.update(
        status="error",
        error=f"no dump for database {query.db_id}",
        n_rows=0,
        has_order_by=False,
        has_order_ties=False,
        sqlite_status="error",
        eligible=False,
        exclusion_reason="no_database",
    )
    return row


def execute_all(root: Path, cache: GoldCache | None = None) -> list[dict[str, Any]]:
    """Rows of the gold table for every query turn, in source order.

    The same SQL over the same database (Spider pairs questions; SParC repeats turns) is
    executed once; with a cache, only what it does not hold is (and the dumps are parsed only
    then).
    """
    paths = databases.dump_paths(root)
    dump_sha = {db: gold_cache.file_sha256(path) for db, path in paths.items()}
    queries = gold_queries(root)
    keys = {
        (q.db_id, q.gold_sql): gold_cache.cache_key(q.gold_sql, dump_sha[q.db_id]) for q in queries if q.db_id in paths
    }
    done = {(q.db_id, q.gold_sql): _missing_database(q) for q in queries if q.db_id not in paths}
    if cache is not None:
        cached = cache.get(keys.values())
        done.update({pair: cached[key] for pair, key in keys.items() if key in cached})
    missing = [q for q in queries if (q.db_id, q.gold_sql) not in done]
    if missing:
        done.update(_execute(root, missing))
        if cache is not None:
            cache.put({keys[pair]: done[pair] for pair in keys if pair in done})
    rows = [
        {**done[(q.db_id, q.gold_sql)], "dataset": q.dataset, "qid": q.qid, "turn": q.turn, "db_id": q.db_id,
         "gold_sql": q.gold_sql}
        for q in queries
    ]  # fmt: skip
    failing = {(r["dataset"], r["qid"]) for r in rows if not r["eligible"]}
    for r in rows:
        r["query_eligible"] = (r["dataset"], r["qid"]) not in failing
    return rows


def _execute(root: Path, queries: list[GoldQuery]) -> dict[tuple[str, str], dict[str, Any]]:
    """Each distinct (database, gold SQL) of these turns executed in both engines."""
    all_schemas = schemas(root)
    lite_cons: dict[str, sqlite3.Connection] = {}
    done: dict[tuple[str, str], dict[str, Any]] = {}
    progress = Progress("SQL gold execution", len(queries), unit="query", costs=False)
    for query in queries:
        progress.tick()
        key = (query.db_id, query.gold_sql)
        schema = all_schemas.get(query.db_id)
        if key in done:
            continue
        if schema is None:
            done[key] = _missing_database(query)
            continue
        if query.db_id not in lite_cons:
            lite_cons[query.db_id] = databases.sqlite_database(root, query.db_id)
        duck_con = databases.duckdb_database(root, query.db_id).cursor()
        try:
            done[key] = execute_sql(query.gold_sql, schema, duck_con, lite_cons[query.db_id])
        finally:
            duck_con.close()
    for con in lite_cons.values():
        con.close()
    progress.finish()
    return done


_FRAMES: dict[str, pl.DataFrame] = {}
_FRAMES_LOCK = threading.Lock()


def gold_frame(data_dir: str | Path | None = None, datasets: str | list[str] | None = None) -> pl.DataFrame:
    """The gold-execution table (see the module docstring), memoised per process and data root.

    datasets: the build's "task/dataset" selection (a comma-separated string or a list, "sql/*"
    for every SQL dataset, empty = all); only the SQL datasets named there are kept, and none
    are executed when it names no SQL dataset.
    """
    wanted = registry.parse_selection(datasets)
    every = "sql/*" in wanted
    keep = set() if every else {d.split("/", 1)[1] for d in wanted if d.startswith("sql/")}
    if wanted and not keep and not every:
        return pl.DataFrame(schema=GOLD_SCHEMA)
    root = settings.data_dir(str(data_dir) if data_dir else None)
    if not (root / "raw").is_dir():
        return pl.DataFrame(schema=GOLD_SCHEMA)
    key = str(root.resolve())
    with _FRAMES_LOCK:
        if key not in _FRAMES:
            cache = GoldCache()
            try:
                _FRAMES[key] = pl.DataFrame(execute_all(root, cache), schema=GOLD_SCHEMA)
            finally:
                cache.close()
        frame = _FRAMES[key]
    return frame.filter(pl.col("dataset").is_in(sorted(keep))) if keep else frame
