"""Great Expectations suites over warehouse tables.

Suites are JSON files in expectations/: {"name", "group", "query", "expectations": [{"type",
"kwargs"}]}, optionally "partition_by" with "partition_tables" and "partition_fingerprint" (see
run_suites). `query` is DuckDB SQL with {schema} standing for the size's schema (and, in a
partitioned suite, {table} for each of its partition_tables); it may join tables, so a suite
can state cross-table contracts (every gold pid is in the corpus) as column expectations. GX
runs on pandas frames (its SQL datasource is broken on DuckDB).
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd
import polars as pl

from loft_warehouse import frame_cache
from loft_warehouse.errors import DataQualityError
from loft_warehouse.scoring.duckdb_functions import register_sql_macros
from loft_warehouse.settings import PROJECT_ROOT, SIZES

EXPECTATIONS_DIR = PROJECT_ROOT / "expectations"


@dataclass
class SuiteResult:
    """Outcome of one suite on one size."""

    suite: str
    schema: str
    n_rows: int
    success: bool
    failures: list[str] = field(default_factory=list)
    reused: bool = False
    # Rows validated this time, for a partitioned suite (None: all n_rows, or none when reused).
    n_validated: int | None = None
    # Of those, the rows DuckDB's screen passed on to GX (None: GX saw every validated row).
    n_to_gx: int | None = None

    def summary(self) -> str:
        """One line: verdict, schema, suite, rows (and whether the verdict was kept from an
        earlier build on the same rows, or how many rows of changed partitions were validated)."""
        if self.reused:
            kept = ", verdict kept from the same rows"
        elif self.n_validated is not None and self.n_validated < self.n_rows:
            kept = f", {self.n_validated} in changed partitions validated, the rest kept"
        else:
            kept = ""
        if self.n_to_gx is not None:
            kept += f"; {self.n_to_gx} left by DuckDB's screen went to GX"
        return f"{'PASS' if self.success else 'FAIL'} {self.schema} {self.suite} ({self.n_rows} rows{kept})"


def load_suites(group: str | None = None, directory: Path = EXPECTATIONS_DIR) -> list[dict]:
    """Suites of one group (all when None), sorted by file name."""
    suites = []
    for path in sorted(directory.glob("*.json")):
        suite = json.loads(path.read_text(encoding="utf-8"))
        suite["file"] = str(path)
        if group is None or suite.get("group") == group:
            suites.append(suite)
    return suites


def validate_frame(frame: pd.DataFrame, suite: dict) -> tuple[bool, list[str]]:
    """Run one suite's expectations on a frame; failures are readable one-liners."""
    os.environ.setdefault("GX_ANALYTICS_ENABLED", "false")
    import great_expectations as gx
    from great_expectations.data_context.types.base import ProgressBarsConfig
    from great_expectations.expectations.expectation_configuration import ExpectationConfiguration

    # GX sets some of its loggers to INFO itself (one "ephemeral docs site" line per context).
    for name in ["great_expectations", *logging.root.manager.loggerDict]:
        if name.startswith("great_expectations"):
            logging.getLogger(name).setLevel(logging.ERROR)
    context = gx.get_context(mode="ephemeral")
    context.variables.progress_bars = ProgressBarsConfig(globally=False)
    gx_suite = gx.ExpectationSuite(name=suite["name"])
    for expectation in suite["expectations"]:
        gx_suite.add_expectation_configuration(
            ExpectationConfiguration(type=expectation["type"], kwargs=expectation["kwargs"])
        )
    gx_suite = context.suites.add(gx_suite)
    asset = context.data_sources.add_pandas("warehouse").add_dataframe_asset(suite["name"])
    batch = asset.add_batch_definition_whole_dataframe("all").get_batch(batch_parameters={"dataframe": frame})
    outcome = batch.validate(gx_suite)
    failures = [
        f"{_described(r.expectation_config)}: "
        f"{r.result.get('unexpected_count', '?')} unexpected, e.g. "
        f"{r.result.get('partial_unexpected_list', [])[:3]}"
        for r in outcome.results
        if not r.success
    ]
    return outcome.success, failures


def _described(config: Any) -> str:
    """An expectation as `type(kwargs)` for a failure line."""
    if config is None:
        return "unknown expectation"
    return f"{config.type}({json.dumps(config.kwargs, default=str)})"


def run_suites(
    con: duckdb.DuckDBPyConnection,
    schema: str,
    group: str | None = None,
    directory: Path = EXPECTATIONS_DIR,
    *,
    everything: bool = False,
) -> list[SuiteResult]:
    """Run every suite of a group against one size's schema.

    A pass is kept (frame_cache) under the suite, the rows it checked and the package and
    library versions, so an unchanged table is not validated again; a failure is always fresh.
    A suite with `partition_by` (columns whose values its expectations never compare across:
    row checks, and uniqueness over a key that includes them) keeps a pass per partition, so a
    build validates only the partitions whose rows changed; its query reads the tables it
    partitions as {table}, and its `partition_fingerprint` must give every partition those
    tables hold, and DuckDB screens the rows GX sees (see _screen). A suite or changed partitions
    where the screen keeps no row pass without GX. `everything` validates every row, GX seeing
    all of them."""
    results = []
    for suite in load_suites(group, directory):
        if suite.get("partition_by"):
            results.append(_run_partitioned(con, schema, suite, everything))
            continue
        query = suite["query"].format(schema=schema)
        if not everything and (passed := _screened_pass(con, suite, schema, query)) is not None:
            results.append(passed)
            continue
        rows = con.sql(query).pl()
        key = frame_cache.key_of("quality", [suite, rows])
        kept = not everything and frame_cache.read("quality", key, ["passed"]) is not None
        # GX sees DuckDB's own pandas frame, as before caching (polars' to_pandas types differ).
        success, failures = (True, []) if kept else validate_frame(con.sql(query).df(), suite)
        if success and not kept:
            frame_cache.write("quality", key, {"passed": pl.DataFrame({"suite": [suite["name"]]})})
        results.append(SuiteResult(suite["name"], schema, rows.height, success, failures, kept))
    return results


def _screened_pass(con: duckdb.DuckDBPyConnection, suite: dict, schema: str, query: str) -> SuiteResult | None:
    """The pass of a suite whose rows DuckDB's screen (see _screen) finds none to keep: no row
    that any expectation could count as unexpected, so GX's verdict is a pass. None when the
    suite has no screen or a row is kept (GX then validates as without the screen)."""
    screen = _screen(suite, _column_kinds(con.sql(query)))
    if screen is None:
        return None
    counted = con.sql(
        f"with pending_rows as materialized ({query}) "
        f"select (select count(*) from pending_rows), (select count(*) from pending_rows where {screen})"
    ).fetchone()
    assert counted is not None
    n_rows, n_kept = counted
    return None if n_kept else SuiteResult(suite["name"], schema, n_rows, True, n_to_gx=0)


def _column_kinds(relation: duckdb.DuckDBPyRelation) -> dict[str, str]:
    """Each column's DuckDB type id (varchar, double, ...), as _screen reads them."""
    return {name: kind.id for name, kind in zip(relation.columns, relation.types, strict=True)}


# GX holds a frame in pandas: a partitioned suite's rows go to it in slices of at most this many.
SLICE_ROWS = 1_000_000


def _run_partitioned(con: duckdb.DuckDBPyConnection, schema: str, suite: dict, everything: bool) -> SuiteResult:
    """One partitioned suite: each partition has a fingerprint (the suite's
    `partition_fingerprint` query, else a digest of its rows in DuckDB); a pass is kept under
    the suite, the query's columns and types and the fingerprint, with the partition's row
    count. The rows of the partitions without a kept pass are read from the suite's
    `partition_tables` restricted to those partitions; DuckDB's screen (see _screen) keeps the
    rows any expectation could count as unexpected, and GX validates those, SLICE_ROWS at a time
    (rows sharing a uniqueness key always in the same slice). `everything` skips the screen."""
    columns = suite["partition_by"]
    register_sql_macros(con)
    query = _partitioned_query(suite, schema, None)
    relation = con.sql(query)
    shape = [[name, str(kind)] for name, kind in zip(relation.columns, relation.types, strict=True)]
    screen = None if everything else _screen(suite, _column_kinds(relation))
    fingerprints = _fingerprints(con, suite, schema, query)
    entries = [frame_cache.key_of("quality-partition", [suite, shape, row]) for row in fingerprints.iter_rows()]
    kept = {} if everything else _kept_row_counts(entries)
    pending = [i for i in range(len(entries)) if i not in kept]
    n_rows, n_checked, n_to_gx = sum(kept.values()), 0, 0
    success, failures = True, list[str]()
    if pending:
        partitions = fingerprints[pending].select(columns)
        only = None if len(pending) == len(entries) else _partitions_predicate(partitions)
        try:
            counts = _stage_gx_rows(con, _partitioned_query(suite, schema, only), columns, screen)
            partitions = partitions.join(counts, on=columns, how="left", nulls_equal=True)
            partitions = partitions.with_columns(pl.col("n_rows").fill_null(0))
            n_checked = int(partitions["n_rows"].sum())
            n_rows += n_checked
            n_to_gx = con.sql("select count(*) from gx_rows").fetchall()[0][0]
            # With a screen, no row left means no row any expectation could flag: GX's verdict
            # on all of them is a pass, so GX (seconds to import) is not started for it.
            n_slices = 0 if screen is not None and not n_to_gx else max(1, -(-n_to_gx // SLICE_ROWS))
            for number in range(n_slices):
                frame = con.sql(f"select * from gx_rows as r where hash({_slice_key(suite)}) % {n_slices} = {number}")
                passed, found = validate_frame(frame.df(), suite)
                success, failures = success and passed, failures + found
        finally:
            con.execute("drop table if exists gx_rows")
        if success:
            for i, count in zip(pending, partitions["n_rows"], strict=True):
                frame_cache.write(
                    "quality-partition",
                    entries[i],
                    {"passed": pl.DataFrame({"suite": [suite["name"]], "n_rows": [count]})},
                )
    screened = None if screen is None or not pending else n_to_gx
    return SuiteResult(suite["name"], schema, n_rows, success, failures, not pending, n_checked, screened)


def _stage_gx_rows(con: duckdb.DuckDBPyConnection, query: str, columns: list[str], screen: str | None) -> pl.DataFrame:
    """Write the rows of `query` GX is to see into the temp table gx_rows: all of them, or
    those the screen keeps, found in the same statement that counts the rows (the query's
    result is materialised once, not stored). Returns the row count per partition."""
    keys = ", ".join(columns)
    if screen is None:
        con.execute(f"create or replace temp table gx_rows as {query}")
        return con.sql(f"select {keys}, count(*) as n_rows from gx_rows group by all").pl()
    con.execute(
        f"create or replace temp table gx_rows as with pending_rows as materialized ({query}) "
        f"select r.*, null::bigint as __partition_rows from pending_rows as r where {screen} "
        f"union all by name select {keys}, count(*) as __partition_rows from pending_rows group by all"
    )
    counts = con.sql(f"select {keys}, __partition_rows as n_rows from gx_rows where __partition_rows is not null")
    frame = counts.pl()
    con.execute("delete from gx_rows where __partition_rows is not null; alter table gx_rows drop __partition_rows")
    return frame


_INTEGERS = {"tinyint", "smallint", "integer", "bigint", "utinyint", "usmallint", "uinteger"}
_FLOATS = {"float", "double"}
_KEYS = _INTEGERS | {"varchar", "boolean", "date"}


def _screen(suite: dict, kinds: dict[str, str]) -> str | None:
    """SQL true for every row of the suite's query that one of its expectations could count as
    unexpected, so that GX, given only those rows, reaches the same verdict and unexpected
    counts as on all of them. It may keep more rows than GX flags (a NaN, which a bound check
    ignores as missing, a hash collision), never fewer: it is written only for expectations whose
    rows it can judge alone in DuckDB as pandas will see them (a float's NaN is null to pandas,
    a value check ignores nulls, a duplicate key meets its twin), on column types whose values
    convert to pandas unchanged,
    with no kwargs beyond the ones read here. Any other expectation (a `mostly`, an aggregate, a
    decimal column) gives None: GX then sees every row. A uniqueness check reads the rows being
    screened as `pending_rows`."""

    def named(column: str) -> str:
        return '"' + column.replace('"', '""') + '"'

    def missing(column: str) -> str:
        return f"{named(column)} is null" + (f" or isnan({named(column)})" if kinds[column] in _FLOATS else "")

    def bound(value: Any) -> bool:
        numeric = isinstance(value, int | float) and not isinstance(value, bool)
        return value is None or (numeric and math.isfinite(value))

    predicates = []
    for expectation in suite["expectations"]:
        kind, kwargs = expectation["type"], expectation["kwargs"]
        key = kwargs.get("column_list", [kwargs.get("column")])
        if not all(column in kinds for column in key):
            return None
        column = key[0]
        if kind == "expect_column_values_to_not_be_null" and kwargs.keys() == {"column"}:
            predicates.append(missing(column))
        elif (
            kind == "expect_column_values_to_be_between"
            and kwargs.keys() <= {"column", "min_value", "max_value"}
            and kinds[column] in _INTEGERS | _FLOATS
            and bound(kwargs.get("min_value"))
            and bound(kwargs.get("max_value"))
        ):
            bounds = [f"{named(column)} < {kwargs['min_value']!r}"] if kwargs.get("min_value") is not None else []
            bounds += [f"{named(column)} > {kwargs['max_value']!r}"] if kwargs.get("max_value") is not None else []
            predicates.append(" or ".join(bounds) or "false")
        elif (
            kind == "expect_column_values_to_be_in_set"
            and kwargs.keys() == {"column", "value_set"}
            and kinds[column] == "varchar"
            and all(isinstance(value, str) for value in kwargs["value_set"])
        ):
            allowed = duckdb.ConstantExpression(list(kwargs["value_set"]))
            outside = f"not list_contains({allowed}::varchar[], {named(column)})"
            predicates.append(f"{named(column)} is not null and {outside}")
        elif (
            (kind, kwargs.keys()) in [("expect_compound_columns_to_be_unique", {"column_list"}),
                                      ("expect_column_values_to_be_unique", {"column"})]
            and all(kinds[name] in _KEYS for name in key)
        ):  # fmt: skip
            hashed = f"hash({', '.join(map(named, key))})"
            predicates.append(f"{hashed} in (select {hashed} from pending_rows group by all having count(*) > 1)")
        else:
            return None
    return " or ".join(f"({predicate})" for predicate in predicates) or "false"


def _partitioned_query(suite: dict, schema: str, only: str | None) -> str:
    """The suite's query over its partition_tables, each restricted to the rows `only` holds
    for (all rows when None): filtering each table, not the query's result, lets DuckDB read
    just those partitions."""
    tables = {
        table: f"{schema}.{table}" if only is None else f"(select * from {schema}.{table} where {only})"
        for table in suite["partition_tables"]
    }
    return suite["query"].format(schema=schema, **tables)


def _fingerprints(con: duckdb.DuckDBPyConnection, suite: dict, schema: str, query: str) -> pl.DataFrame:
    """One row per partition: its columns and `fingerprint`, which changes whenever the
    partition's rows of the query may. The suite's `partition_fingerprint` (an SQL file beside
    it, reading what the tables are built from) is cheap; where it gives a NULL fingerprint (it
    cannot vouch for the rows, e.g. a table stands where it expects a view), or there is none,
    the rows are digested."""
    if "partition_fingerprint" in suite:
        path = Path(suite["file"]).with_name(suite["partition_fingerprint"])
        found = con.sql(path.read_text(encoding="utf-8").format(schema=schema)).pl()
        if found["fingerprint"].null_count() == 0:
            return found
    keys = ", ".join(suite["partition_by"])
    return con.sql(f"select {keys}, loft_rows_digest(r) as fingerprint from ({query}) as r group by all").pl()


def _kept_row_counts(entries: list[str]) -> dict[int, int]:
    """Row counts of the partitions (by position) whose pass is kept."""
    kept = {}
    for i, key in enumerate(entries):
        frames = frame_cache.read("quality-partition", key, ["passed"])
        if frames is not None:
            kept[i] = int(frames["passed"]["n_rows"][0])
    return kept


def _partitions_predicate(partitions: pl.DataFrame) -> str:
    """SQL true for exactly the rows of these partitions (a NULL value matches NULL); DuckDB
    writes the values as literals."""
    return " or ".join(
        "("
        + " and ".join(f"{name} is not distinct from {duckdb.ConstantExpression(value)}" for name, value in row.items())
        + ")"
        for row in partitions.iter_rows(named=True)
    )


def _slice_key(suite: dict) -> str:
    """What a row's slice hashes: the columns every uniqueness expectation's key includes (so
    duplicates meet in one slice), or the whole row when the suite checks no uniqueness."""
    keys = [
        set(e["kwargs"]["column_list"]) if "column_list" in e["kwargs"] else {e["kwargs"]["column"]}
        for e in suite["expectations"]
        if e["type"] in ("expect_compound_columns_to_be_unique", "expect_column_values_to_be_unique")
    ]
    if not keys:
        return "r"
    shared = sorted(set.intersection(*keys))
    return ", ".join(shared) if shared else "0"


def results_frame(results: list[SuiteResult]) -> pd.DataFrame:
    """Suite results as a table (one row per suite)."""
    return pd.DataFrame(
        {
            "suite": [r.suite for r in results],
            "schema_name": [r.schema for r in results],
            "n_rows": [r.n_rows for r in results],
            "success": [r.success for r in results],
            "failures": ["\n".join(r.failures) for r in results],
        }
    )


def enforce(results: list[SuiteResult]) -> None:
    """Stop the build when any suite failed, listing every failure."""
    failed = [r for r in results if not r.success]
    if failed:
        lines = [f"{r.schema}: suite {r.suite}: {f}" for r in failed for f in r.failures]
        raise DataQualityError("data-quality expectations failed:\n" + "\n".join(lines))


def _run(args: argparse.Namespace) -> int:
    con = duckdb.connect(args.database, read_only=True)
    results = []
    for label in args.size or list(SIZES):
        schema = f"loft_{label}"
        if con.sql(f"select count(*) from information_schema.schemata where schema_name = '{schema}'").fetchall()[0][0]:
            results.extend(run_suites(con, schema, args.group, everything=args.all))
    for r in results:
        print(r.summary())
        for failure in r.failures:
            print(f"    {failure}")
    return 0 if all(r.success for r in results) else 1


def register(subparsers: argparse._SubParsersAction) -> None:
    """`loft check`: run the expectation suites against a warehouse file."""
    parser = subparsers.add_parser("check", help="run Great Expectations suites on the warehouse")
    parser.add_argument("--database", default=os.environ.get("LOFT_DUCKDB_PATH", "loft.duckdb"))
    parser.add_argument("--size", action="append", choices=list(SIZES))
    parser.add_argument("--group", default=None, help="only suites of this group")
    parser.add_argument(
        "--all", action="store_true", help="validate every row through GX, not only rows no earlier pass covers"
    )
    parser.set_defaults(func=_run)
