"""Import SQL written by a model (the specialized text-to-SQL baseline) and score what it returns.

A file is JSON lines `{"qid", "num_turns", "sql": [one SQL string per turn]}` (`model_outputs`
may stand for `sql`; a null turn means the model wrote no SQL). Every turn runs in the sandbox
(`sandbox.Sandbox`: static check, read-only locked DuckDB, time limit) on the query's own
database, the db_id of the size's `queries` table. Its result rows become the turn's answer,
landed like `loft import-predictions` would land upstream answer rows, so predictions, scores
(exec_acc_loft / exec_acc_strict; SParC per turn and per conversation), metrics and leaderboard
treat it exactly as any import (source = 'import').

A turn whose SQL is refused or fails (unparseable, DDL/DML, COPY, ATTACH, file functions, time
limit, too many rows) is answered with no rows, so it scores 0, and its error stays visible:
`raw_text` in predictions is the SQL followed by a line `-- sandbox <status>: <detail>` (status
ok | empty | rejected | error). SQL over the sandbox's length limit is refused as it is read and
only its first KEPT_SQL_CHARS are kept, so a file of megabyte statements is never held or landed
whole. A malformed line, an unknown qid or a wrong turn count stops the
import before any SQL runs, naming the file and line.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from loft_warehouse.answers.parse import answer_texts
from loft_warehouse.errors import BadInputError, ConfigurationError
from loft_warehouse.prompts.export import default_database
from loft_warehouse.readers import read_jsonl, utf8_size
from loft_warehouse.scoring.importer import (
    LANDED_SCHEMA,
    add_landing_arguments,
    check_import_name,
    check_landing,
    finish_landing,
    imports_dir,
    warehouse_queries,
    write_landed,
)
from loft_warehouse.settings import data_dir
from loft_warehouse.sql.sandbox import MAX_SQL_CHARS, TIMEOUT_S, Sandbox, SandboxResult, too_long

DATASETS = ("spider", "sparc")
KEPT_SQL_CHARS = 1000


@dataclass(frozen=True)
class FileBudget:
    """What one prediction file may take in all (each query is capped on its own as well): result
    bytes (as JSON), result rows and sandbox seconds. A turn that would pass a budget is scored
    as an oversized result is (no rows, an error note); once the time is spent, the file's
    remaining turns are not run. The defaults keep an import and its build under 2 GiB
    (benchmarks/hostile_import_memory.py): scoring holds each stored result several times over
    while it reads it, and gold results of Spider and SParC are kilobytes, not megabytes."""

    result_bytes: int = 32 * 2**20
    rows: int = 1_000_000
    seconds: float = 3600.0

    def spend(self, used: dict[str, float], result: SandboxResult) -> SandboxResult:
        """The result as landed: itself, or an error when it would pass the bytes or rows budget
        (what it takes is added to `used` only when it lands)."""
        size = utf8_size(result.rows_json() or "")
        rows = len(result.rows)
        if used["bytes"] + size > self.result_bytes:
            return SandboxResult("error", error=f"the file's results passed their budget of {self.result_bytes} bytes")
        if used["rows"] + rows > self.rows:
            return SandboxResult("error", error=f"the file's results passed their budget of {self.rows} rows")
        used["bytes"] += size
        used["rows"] += rows
        return result


@dataclass(frozen=True)
class OversizedSql:
    """A turn's SQL over the sandbox's limit (MAX_SQL_CHARS): its length and its start, all that is kept."""

    chars: int
    start: str

    def __str__(self) -> str:
        return f"{self.start}\n-- ({self.chars} characters in all; only the first {len(self.start)} are kept)"


@dataclass(frozen=True)
class SqlPrediction:
    """One file line: a query's SQL per turn and the database it runs on."""

    qid: str
    line: int
    db_id: str
    sql: list[str | OversizedSql | None]


def _kept(sql: str | None) -> str | OversizedSql | None:
    if sql is None or len(sql) <= MAX_SQL_CHARS:
        return sql
    return OversizedSql(len(sql), sql[:KEPT_SQL_CHARS])


def _turns(record: dict, path: Path, line: int) -> tuple[int, list[str | OversizedSql | None]]:
    """num_turns and the SQL per turn of a line, checked for shape."""
    fields = [name for name in ("sql", "model_outputs") if name in record]
    if "qid" not in record or "num_turns" not in record or len(fields) != 1:
        raise BadInputError(path, line, "expected fields qid, num_turns and one of sql / model_outputs")
    n_turns, turns = record["num_turns"], record[fields[0]]
    if not isinstance(n_turns, int) or isinstance(n_turns, bool) or n_turns < 1:
        raise BadInputError(path, line, f"num_turns must be a positive integer, got {n_turns!r}")
    if not isinstance(turns, list) or len(turns) != n_turns:
        raise BadInputError(path, line, f"{fields[0]} must be a list of num_turns={n_turns} SQL strings")
    for turn, sql in enumerate(turns):
        if sql is not None and not isinstance(sql, str):
            raise BadInputError(path, line, f"turn {turn} is not an SQL string (answer rows go to import-predictions)")
    return n_turns, [_kept(sql) for sql in turns]


def read_sql_prediction_file(path: Path, queries: pl.DataFrame, scope: str) -> list[SqlPrediction]:
    """Every line of a file, each checked against `queries` (qid, n_turns, db_id of one split)."""
    known = {qid: (n_turns, db_id) for qid, n_turns, db_id in queries.select("qid", "n_turns", "db_id").unique().rows()}
    predictions: list[SqlPrediction] = []
    seen: dict[str, int] = {}
    for line, record in read_jsonl(path):
        n_turns, turns = _turns(record, path, line)
        qid = str(record["qid"])
        if qid in seen:
            raise BadInputError(path, line, f"qid {qid!r} already given on line {seen[qid]}")
        seen[qid] = line
        if qid not in known:
            raise BadInputError(path, line, f"qid {qid!r} is not a {scope} query")
        if n_turns != known[qid][0]:
            raise BadInputError(path, line, f"qid {qid!r} has {n_turns} turn(s) but the query has {known[qid][0]}")
        predictions.append(SqlPrediction(qid, line, known[qid][1], turns))
    if not predictions:
        raise BadInputError(path, None, "no predictions in file")
    return predictions


def sandbox_note(sql: str | OversizedSql | None, result: SandboxResult) -> str:
    """The SQL as written, then one line saying what the sandbox made of it (a detail that runs
    over several lines, such as a parse error, is joined onto it, so the note stays last)."""
    detail = " ".join(result.error.split()) if result.error else f"{len(result.rows)} row(s)"
    note = f"-- sandbox {result.status}: {detail}"
    return note if sql is None else f"{str(sql).rstrip()}\n{note}"


def land_sql(
    path: Path,
    queries: pl.DataFrame,
    *,
    system: str,
    size: str,
    dataset: str,
    split: str = "test",
    variant: str = "default",
    root: Path | None = None,
    directory: Path | None = None,
    timeout_s: float = TIMEOUT_S,
    budget: FileBudget = FileBudget(),
) -> tuple[Path, Counter[str]]:
    """Check a SQL prediction file, run every turn in the sandbox and land the result rows.

    `queries` holds the split's queries (qid, n_turns, db_id at least). Returns the landed file and
    how many turns ended in each sandbox status."""
    if dataset not in DATASETS:
        raise ConfigurationError(f"unknown SQL dataset {dataset!r}; expected one of {DATASETS}")
    check_landing(system=system, size=size, task="sql", dataset=dataset, split=split, variant=variant)
    path = path.resolve()
    scope = queries.filter((pl.col("task") == "sql") & (pl.col("dataset") == dataset) & (pl.col("split") == split))
    predictions = read_sql_prediction_file(path, scope, f"{split} query of sql/{dataset} at {size}")
    rows: list[dict] = []
    statuses: Counter[str] = Counter()
    used = {"bytes": 0.0, "rows": 0.0, "seconds": 0.0}
    with Sandbox(root or data_dir(), timeout_s=timeout_s) as box:
        for prediction in predictions:
            for turn, sql in enumerate(prediction.sql):
                started = time.monotonic()
                if used["seconds"] >= budget.seconds:
                    result = SandboxResult("error", error=f"not run: the file's {budget.seconds:g} s budget is spent")
                elif sql is None:
                    result = SandboxResult("error", error="no SQL")
                elif isinstance(sql, OversizedSql):
                    result = SandboxResult("rejected", error=too_long(sql.chars))
                else:
                    result = budget.spend(used, box.run(prediction.db_id, sql))
                used["seconds"] += time.monotonic() - started
                statuses[result.status] += 1
                answer = json.loads(result.rows_json() or "[]")
                rows.append(
                    {
                        "system": system,
                        "task": "sql",
                        "dataset": dataset,
                        "variant": variant,
                        "split": split,
                        "qid": prediction.qid,
                        "turn": turn,
                        "n_turns": len(prediction.sql),
                        "raw_text": sandbox_note(sql, result),
                        "given_answers": answer_texts(answer),
                        "given_answers_json": json.dumps(answer, ensure_ascii=False),
                        "gold_loft": None,
                        "id_space": "pid",
                        "import_file": str(path),
                        "import_line": prediction.line,
                    }
                )
    return write_landed(pl.DataFrame(rows, schema=LANDED_SCHEMA), size, directory), statuses


def _run(args: argparse.Namespace) -> int:
    check_import_name(args.system)
    queries = warehouse_queries(default_database(), args.size, "sql", args.dataset, args.split)
    target, statuses = land_sql(
        Path(args.file),
        queries,
        system=args.system,
        size=args.size,
        dataset=args.dataset,
        split=args.split,
        variant=args.variant,
        root=data_dir(args.data_dir),
        directory=imports_dir(args.imports_dir),
        timeout_s=args.timeout_s,
        budget=FileBudget(args.max_file_result_bytes, args.max_file_rows, args.max_file_seconds),
    )
    counts = ", ".join(f"{status} {n}" for status, n in sorted(statuses.items()))
    print(f"ran {sum(statuses.values())} turn(s) in the sandbox: {counts}")
    return finish_landing(target, args.file, args.size, args.build)


def register(subparsers: argparse._SubParsersAction) -> None:
    """`loft import-sql-predictions`: run model-written SQL in the sandbox and land its results."""
    parser = subparsers.add_parser(
        "import-sql-predictions",
        help="run SQL written by a model (Spider/SParC) in the sandbox and land its results for scoring",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("file", help="JSON lines: {qid, num_turns, sql: [...one SQL string per turn...]}")
    parser.add_argument("--dataset", required=True, choices=DATASETS)
    add_landing_arguments(parser)
    parser.add_argument("--timeout-s", type=float, default=TIMEOUT_S, help="time limit per query (seconds)")
    defaults = FileBudget()
    parser.add_argument("--max-file-result-bytes", type=int, default=defaults.result_bytes,
                        help="result bytes (JSON) the whole file may return")  # fmt: skip
    parser.add_argument("--max-file-rows", type=int, default=defaults.rows, help="result rows the file may return")
    parser.add_argument("--max-file-seconds", type=float, default=defaults.seconds,
                        help="sandbox seconds the whole file may take")  # fmt: skip
    parser.add_argument("--data-dir", default=None, help="data root (default: $LOFT_DATA_DIR or ../shared/data)")
    parser.set_defaults(func=_run)
