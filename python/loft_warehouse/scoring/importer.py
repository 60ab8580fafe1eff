"""Import predictions made elsewhere, in the upstream LOFT output format, for scoring.

A prediction file is JSON lines `{"qid", "num_turns", "model_outputs": [turn_0, turn_1, ...]}`
as LOFT's run_inference.py writes and run_evaluation.py reads; it means here what it means to
LOFT's evaluator (scoring.upstream_files: the last line of a qid wins, stray qids and outputs
beyond num_turns are ignored, a string turn is its characters, ...), and the import prints one
line saying what those rules did. `--strict-input` refuses such files instead; with
`--raw-generations` a string turn is a model's raw generation, parsed like the warehouse's own
responses (its IDs are then the shown IDs of the prompt variant).

`loft import-predictions FILE --system S --size 128k --task retrieval --dataset arguana` checks
the file against the size's queries in the built warehouse ($LOFT_DUCKDB_PATH) at import time,
then lands it as parquet under the imports folder (`$LOFT_IMPORTS_DIR`, default `.imports/` in
the project). With `--queries ANSWERS` (LOFT's answer file, as run_evaluation.py takes it) the
queries come from that file instead and are landed beside the predictions, so a run made with
LOFT's own scripts scores without a corpus or a built dataset. `--task` takes LOFT's task types
(retrieval, rag, multi_value_rag, sql, icl, mm). The dbt models int_imported_queries and
int_imported_predictions of that size read every landed file; a query a file does not answer
gets a 'missing' row, so it scores 0 and counts as unanswered instead of vanishing. The import
then flows through predictions, scores, metrics and leaderboard like any run (source = 'import').
Both models are incremental by landed file: a build reads only the files whose fingerprint
(landed_fingerprints) its table does not hold, and drops the rows of files replaced or removed.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import os
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import polars as pl

from loft_warehouse import current_build
from loft_warehouse.errors import BadInputError, ConfigurationError
from loft_warehouse.inference.systems import load_systems, systems_file
from loft_warehouse.prompts.store import PROMPT_KEY_SCHEMA
from loft_warehouse.scoring.bulk_files import PREDICTION_SCHEMA, sql_string
from loft_warehouse.scoring.duckdb_functions import register_sql_macros
from loft_warehouse.scoring.upstream_files import (
    SCORED_QUERY_SCHEMA,
    TASK_TYPES,
    Summary,
    number_qids,
    prediction_rows,
    write_answer_queries,
)
from loft_warehouse.settings import PROJECT_ROOT, SIZES

TASKS = ("retrieval", "rag", "sql", "icl", "mm")
SPLITS = ("dev", "test")
_SAFE_NAME = re.compile(r"^[A-Za-z0-9._-]+$")

LANDED_SCHEMA: dict[str, pl.DataType | type[pl.DataType]] = {
    **{name: pl.String for name in ("system", "task", "dataset", "variant", "split")},
    **PREDICTION_SCHEMA,
}
IMPORTED_SCHEMA: dict[str, pl.DataType | type[pl.DataType]] = {
    "system": pl.String,
    **PROMPT_KEY_SCHEMA,
    "n_turns": pl.Int64,
    "status": pl.String,
    **{k: v for k, v in LANDED_SCHEMA.items() if k not in PROMPT_KEY_SCHEMA and k not in ("system", "n_turns")},
    "landed_fingerprint": pl.String,
}
IMPORTED_QUERY_SCHEMA: dict[str, pl.DataType | type[pl.DataType]] = {
    **SCORED_QUERY_SCHEMA,
    "landed_fingerprint": pl.String,
}


def imports_dir(configured: str | None = None) -> Path:
    """Where landed imports live: the argument, else $LOFT_IMPORTS_DIR, else .imports/."""
    value = (configured or "").strip() or os.environ.get("LOFT_IMPORTS_DIR", "").strip()
    path = Path(value).expanduser() if value else PROJECT_ROOT / ".imports"
    return path if path.is_absolute() else PROJECT_ROOT / path


def _check_name(kind: str, value: str) -> str:
    if not _SAFE_NAME.match(value):
        raise ConfigurationError(f"{kind} {value!r} may only use letters, digits, '.', '_' and '-'")
    return value


def check_landing(*, system: str, size: str, task: str, dataset: str, split: str, variant: str) -> None:
    """Refuse an unknown size, task or split, and names that are unsafe in a file name."""
    if size not in SIZES:
        raise ConfigurationError(f"unknown size {size!r}; expected one of {list(SIZES)}")
    if task not in TASKS:
        raise ConfigurationError(f"unknown task {task!r}; expected one of {TASKS}")
    if split not in SPLITS:
        raise ConfigurationError(f"unknown split {split!r}; expected one of {SPLITS}")
    for kind, value in (("system", system), ("dataset", dataset), ("variant", variant)):
        _check_name(kind, value)


def check_import_name(system: str) -> None:
    """An import is reported under a name of its own: a configured system's name (systems.yaml or
    $LOFT_SYSTEMS_FILE) would put an outside run among that system's own responses."""
    configured = load_systems(systems_file(None))
    if system in configured:
        raise ConfigurationError(
            f"--system {system}: a configured system has that name ({systems_file(None)}); "
            f"report the import under another, e.g. --system {system}-import"
        )


def warehouse_queries(database: Path, size: str, task: str, dataset: str, split: str) -> pl.DataFrame:
    """One dataset split's queries as scoring reads them (int_scored_queries: built datasets and
    landed answer files), from a briefly opened read-only warehouse; an unbuilt size, dataset or
    split is an error that says what is there."""
    if not database.is_file():
        raise ConfigurationError(
            f"warehouse file {database} not found (set LOFT_DUCKDB_PATH, build loft_{size}, or pass --queries)"
        )
    table = f"loft_{size}_internal.int_scored_queries"
    try:
        with duckdb.connect(str(database), read_only=True) as con:
            frame = con.execute(f"select * from {table} where task = ? and dataset = ?", [task, dataset]).pl()
            built = con.execute(f"select distinct task || '/' || dataset from {table} order by 1").fetchall()
    except duckdb.Error as exc:
        raise ConfigurationError(
            f"cannot read {table} from {database} ({str(exc).splitlines()[0]}); "
            f"build it first: dbt build --select +loft_{size}__int_scored_queries"
        ) from exc
    if frame.is_empty():
        names = ", ".join(row[0] for row in built) or "none"
        raise ConfigurationError(f"{task}/{dataset} is not in {database} at {size} (there: {names}); or pass --queries")
    frame = frame.filter(pl.col("split") == split)
    if frame.is_empty():
        raise ConfigurationError(f"{task}/{dataset} has no {split} queries at {size} in {database}")
    return frame.select([pl.col(name).cast(kind) for name, kind in SCORED_QUERY_SCHEMA.items()])


def _built_datasets(database: Path, size: str) -> set[tuple[str, str]]:
    """(task, dataset) the warehouse builds from data (not from imported answer files), the
    multimodal release's included, as far as it is built."""
    if not database.is_file():
        return set()
    built: set[tuple[str, str]] = set()
    with contextlib.suppress(duckdb.Error), duckdb.connect(str(database), read_only=True) as con:
        for sql in (
            f"select distinct task, dataset from loft_{size}.queries",
            f"select distinct 'mm', dataset from loft_{size}_internal.stg_mm_queries",
        ):
            with contextlib.suppress(duckdb.Error):
                built.update(con.execute(sql).fetchall())
    return built


def write_landed(frame: pl.DataFrame, size: str, directory: Path | None = None) -> Path:
    """Write validated rows (LANDED_SCHEMA, one system/task/dataset/split/variant) where the
    size's int_imported_predictions reads them; re-importing the same key replaces the file in
    one rename, so a killed import leaves the previous file or the new one, never half of one."""
    first = frame.row(0, named=True)
    folder = (directory or imports_dir()) / size
    folder.mkdir(parents=True, exist_ok=True)
    key = "__".join(first[name] for name in ("system", "task", "dataset", "split", "variant"))
    target = folder / f"{key}.parquet"
    if target.is_file():
        earlier = pl.scan_parquet(target).select(pl.len(), pl.col("import_file").first()).collect().row(0)
        print(
            f"replacing the earlier import of {first['system']} on {first['task']}/{first['dataset']} {first['split']} "
            f"at {size} ({earlier[0]} row(s) from {earlier[1]}); "
            f"`loft forget --system {first['system']}` removes an import"
        )
    with _replaced_in_one_rename(target) as staged:
        frame.select([pl.col(name).cast(kind) for name, kind in LANDED_SCHEMA.items()]).write_parquet(staged)
    return target


@contextlib.contextmanager
def _replaced_in_one_rename(target: Path) -> Iterator[Path]:
    """A side name to write `target` under; it takes target's place in one rename when the block
    ends without an error, and is removed otherwise (the models never read half a file)."""
    staged = target.with_name(target.name + ".partial")
    try:
        yield staged
        os.replace(staged, target)
    finally:
        staged.unlink(missing_ok=True)


def landed_queries_path(size: str, task: str, dataset: str, split: str, directory: Path | None = None) -> Path:
    """Where an answer file's queries land for the size's int_imported_queries."""
    return (directory or imports_dir()) / size / "queries" / f"{task}__{dataset}__{split}.parquet"


def _warehouse_task(task_type: str) -> str:
    if task_type not in TASK_TYPES:
        raise ConfigurationError(f"unknown task type {task_type!r}; expected one of {list(TASK_TYPES)}")
    return TASK_TYPES[task_type][0]


def land(
    path: Path,
    queries: pl.DataFrame | pl.LazyFrame,
    *,
    system: str,
    size: str,
    task_type: str,
    dataset: str,
    split: str = "test",
    variant: str = "default",
    directory: Path | None = None,
    strict_input: bool = False,
    raw_generations: bool = False,
    score_the_rest: bool = False,
    answer_number_qids: frozenset[str] = frozenset(),
) -> tuple[Path, Summary]:
    """Read a prediction file against one dataset split's queries (SCORED_QUERY_SCHEMA) with the
    upstream semantics and land it as parquet (re-importing replaces it)."""
    task = _warehouse_task(task_type)
    check_landing(system=system, size=size, task=task, dataset=dataset, split=split, variant=variant)
    if queries.lazy().select(pl.col("is_multi_answer").any()).collect().item():
        task_type = "multi_value_rag"
    rows, summary = prediction_rows(
        path.resolve(), queries, task_type=task_type, strict_input=strict_input, raw_generations=raw_generations,
        score_the_rest=score_the_rest, answer_number_qids=answer_number_qids,
    )  # fmt: skip
    frame = rows.with_columns(
        system=pl.lit(system), task=pl.lit(task), dataset=pl.lit(dataset), variant=pl.lit(variant), split=pl.lit(split)
    )
    return write_landed(frame.select(list(LANDED_SCHEMA)), size, directory), summary


def land_with_answer_file(
    path: Path,
    answers: Path,
    *,
    system: str,
    size: str,
    task_type: str,
    dataset: str,
    split: str = "test",
    variant: str = "default",
    directory: Path | None = None,
    strict_input: bool = False,
    raw_generations: bool = False,
    score_the_rest: bool = False,
) -> tuple[Path, Path, Summary]:
    """Land a prediction file with LOFT's answer file for it: (landed predictions, landed
    queries, summary). The answer file's queries are written first under a name the models do
    not read, the prediction file is read against them as a scan (only the columns its reader
    needs), and only then do they take their place; a refused prediction file lands neither."""
    task = _warehouse_task(task_type)
    check_landing(system=system, size=size, task=task, dataset=dataset, split=split, variant=variant)
    path.open("rb").close()  # a prediction file that cannot be opened is refused before the answer file is staged
    target = landed_queries_path(size, task, dataset, split, directory)
    target.parent.mkdir(parents=True, exist_ok=True)
    with _replaced_in_one_rename(target) as staged:
        write_answer_queries(answers, task_type, dataset, split, staged)
        landed, summary = land(path, pl.scan_parquet(staged), system=system, size=size, task_type=task_type,
                               dataset=dataset, split=split, variant=variant, directory=directory,
                               strict_input=strict_input, raw_generations=raw_generations,
                               score_the_rest=score_the_rest,
                               answer_number_qids=number_qids(answers))  # fmt: skip
    return landed, target, summary


def _landed_files(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.parquet")) if folder.is_dir() else []


def _sql_list(files: list[Path]) -> str:
    return "[" + ", ".join(map(sql_string, files)) + "]"


def _landed_rows(files: list[Path]) -> str:
    """The rows of landed prediction files, each with its file (landed_file) and its position in
    it (file_row_number): the check and the relation read them the same way."""
    return f"read_parquet({_sql_list(files)}, filename = 'landed_file', file_row_number = true)"


def _empty(con: duckdb.DuckDBPyConnection, schema: dict[str, Any]) -> duckdb.DuckDBPyRelation:
    return con.from_arrow(pl.DataFrame(schema=schema).to_arrow())


def file_fingerprint(path: Path) -> str:
    """What a landed file holds, told by the file system: a landing replaces a file in one rename
    (write_landed), so its replacement has another inode and modification time."""
    stat = path.stat()
    return hashlib.md5(f"{path.name}\0{stat.st_ino}\0{stat.st_mtime_ns}\0{stat.st_size}".encode()).hexdigest()


def _fingerprint_column(fingerprints: dict[Path, str]) -> str:
    """A relation of (landed_file, landed_fingerprint), joined to read_parquet's filename column."""
    files = _sql_list(list(fingerprints))
    values = "[" + ", ".join(f"'{value}'" for value in fingerprints.values()) + "]"
    return f"(select unnest({files}) as landed_file, unnest({values}) as landed_fingerprint)"


def _files_to_read(
    con: duckdb.DuckDBPyConnection, fingerprints: dict[Path, str], stored: str | None, model: str
) -> list[Path]:
    """The landed files an (incremental) build reads: every one, or, when `stored` names the table
    an earlier build wrote, those whose fingerprint it does not hold; its rows of files no longer
    landed as they were are deleted first (all its rows, when it predates the column). An
    incremental build says how many in one line: "int_imported_predictions: 1 of 3 landed
    file(s) to read, the rest kept"."""
    if stored is None:
        return list(fingerprints)
    columns = {row[0] for row in con.execute(f"select column_name from (describe {stored})").fetchall()}
    if "landed_fingerprint" in columns:
        con.execute(
            f"delete from {stored} "
            "where landed_fingerprint is null or not list_contains(?::varchar[], landed_fingerprint)",
            [list(fingerprints.values())],
        )
        held = {row[0] for row in con.execute(f"select distinct landed_fingerprint from {stored}").fetchall()}
    else:
        con.execute(f"delete from {stored}")
        held = set()
    to_read = [path for path, fingerprint in fingerprints.items() if fingerprint not in held]
    print(f"{model}: {len(to_read)} of {len(fingerprints)} landed file(s) to read, the rest kept", flush=True)
    return to_read


def imported_queries_relation(
    con: duckdb.DuckDBPyConnection, directory: Path, size: str, stored: str | None = None
) -> duckdb.DuckDBPyRelation:
    """Every answer file landed for one size (int_imported_queries), read by DuckDB from the
    parquet files, so a dbt model stores it without a copy in Python; each row keeps its file's
    fingerprint. With `stored` (an incremental build), only the files that table does not hold."""
    fingerprints = {path: file_fingerprint(path) for path in _landed_files(directory / size / "queries")}
    files = _files_to_read(con, fingerprints, stored, "int_imported_queries")
    if not files:
        return _empty(con, IMPORTED_QUERY_SCHEMA)
    return con.sql(
        f"select * exclude (landed_file) from read_parquet({_sql_list(files)}, filename = 'landed_file') "
        f"inner join {_fingerprint_column({path: fingerprints[path] for path in files})} using (landed_file)"
    )


def landed_fingerprints(
    con: duckdb.DuckDBPyConnection, directory: Path, size: str, files: list[Path]
) -> dict[Path, str]:
    """Each landed prediction file's fingerprint: the file's, and that of the queries it is read
    against (an answer file's, as landed; a built dataset's, a digest of its rows in the view
    scored_queries_for_import), so a file is read again when either changes."""
    register_sql_macros(con)
    fingerprints = {}
    for path in files:
        keys = con.execute(f"select distinct task, dataset, split from read_parquet({sql_string(path)})").fetchall()
        parts = [file_fingerprint(path)]
        for task, dataset, split in sorted(keys):
            answers = landed_queries_path(size, task, dataset, split, directory)
            if answers.is_file():
                parts.append(file_fingerprint(answers))
            else:
                digest = con.execute(
                    "select loft_rows_digest(q) from scored_queries_for_import as q "
                    "where task = ? and dataset = ? and split = ?",
                    [task, dataset, split],
                ).fetchone()
                parts.append(str(digest))
        fingerprints[path] = hashlib.md5("\0".join(parts).encode()).hexdigest()
    return fingerprints


# The landed rows checked against the scored queries (view scored_queries_for_import), and
# the queries a landed file does not answer as 'missing' rows, in IMPORTED_SCHEMA.
_IMPORTED_SQL = """
with

landed as (
    select * from {landed}
),

landings as (
    select landed_file, system, task, dataset, split, variant, arg_min(import_file, file_row_number) as import_file
    from landed
    group by all
),

answered as (
    select
        landed.system, landed.task, landed.dataset, queries.corpus_id, landed.variant, landed.split, landed.qid,
        landed.turn, landed.n_turns, 'ok' as status, landed.raw_text, landed.given_answers,
        landed.given_answers_json, landed.gold_loft, landed.id_space, landed.import_file, landed.import_line,
        landed.landed_file
    from landed
    inner join scored_queries_for_import as queries using (task, dataset, split, qid, turn)
),

missing as (
    select
        landings.system, queries.task, queries.dataset, queries.corpus_id, landings.variant, queries.split,
        queries.qid, queries.turn, queries.n_turns, 'missing' as status, null::varchar as raw_text,
        null::varchar[] as given_answers, null::varchar as given_answers_json, null::varchar as gold_loft,
        'pid' as id_space, landings.import_file, null::bigint as import_line, landings.landed_file
    from landings
    inner join scored_queries_for_import as queries using (task, dataset, split)
    anti join landed on landed.landed_file = landings.landed_file and landed.qid = queries.qid
),

final as (
    select
        system,
        task || '/' || dataset || '/' || corpus_id || '/' || variant || '/' || qid || '/' || turn as prompt_id,
        task, dataset, corpus_id, variant, 'cic' as method, 1::bigint as stage, split, qid, turn,
        0::bigint as call_index, n_turns, status, raw_text, given_answers, given_answers_json, gold_loft,
        id_space, import_file, import_line, landed_fingerprint
    from (select * from answered union all select * from missing)
    inner join {fingerprints} using (landed_file)
)

select * from final
"""


def imported_relation(
    con: duckdb.DuckDBPyConnection,
    directory: Path,
    size: str,
    queries: duckdb.DuckDBPyRelation,
    stored: str | None = None,
) -> duckdb.DuckDBPyRelation:
    """Every landed import of one size, checked against its queries, unanswered queries added
    (IMPORTED_SCHEMA), read by DuckDB from the parquet files: a million imported rows reach the
    table without passing through Python. With `stored` (an incremental build: the table an
    earlier build wrote), only the files whose fingerprint it does not hold, its rows of replaced
    or removed files deleted.

    `queries` needs task, dataset, corpus_id, split, qid, turn, n_turns (int_scored_queries).
    A landed qid (turn) that is not one of them raises BadInputError naming the prediction file
    and line (the first such row, in file order)."""
    con.register("scored_queries_for_import", queries)
    fingerprints = landed_fingerprints(con, directory, size, _landed_files(directory / size))
    files = _files_to_read(con, fingerprints, stored, "int_imported_predictions")
    if not files:
        return _empty(con, IMPORTED_SCHEMA)
    unknown = con.execute(
        f"""
        select landed.import_file, landed.import_line, landed.qid, landed.turn, landed.task, landed.dataset,
            landed.split, landed.landed_file
        from {_landed_rows(files)} as landed
        anti join scored_queries_for_import using (task, dataset, split, qid, turn)
        order by landed.landed_file, landed.file_row_number
        limit 1
        """
    ).fetchone()
    if unknown is not None:
        file, line, qid, turn, task, dataset, split, landed_file = unknown
        problem = f"qid {qid!r} (turn {turn}) is not a {split} query of {task}/{dataset} at {size}"
        raise BadInputError(file, line, f"{problem} (landed in {landed_file})")
    reading = _fingerprint_column({path: fingerprints[path] for path in files})
    return con.sql(_IMPORTED_SQL.format(landed=_landed_rows(files), fingerprints=reading))


def imported_frame(directory: Path, size: str, queries: pl.DataFrame) -> pl.DataFrame:
    """imported_relation as a polars frame, for callers outside dbt (the tests)."""
    with duckdb.connect() as con:
        con.register("queries_frame", queries.to_arrow())
        return imported_relation(con, directory, size, con.table("queries_frame")).pl()


def finish_landing(target: Path, source: str, size: str, build: bool) -> int:
    """Report a landed file, then build the size's scoring models (--build) or say how to."""
    print(f"landed {source} as {target}")
    if not build:
        print(f"score it with: loft build --select loft_{size}__int_imported_queries+")
        return 0
    from dbt.cli.main import dbtRunner

    from loft_warehouse.dbt_boundary.build import checked_arguments, environment_from, outcome
    from loft_warehouse.inference.cli import warehouse_path

    # dbt runs in this process (a kill of the import kills its build) and in the project folder,
    # as `loft build` runs it: the seeds' relative paths resolve, relative LOFT_* paths are the caller's.
    environ = environment_from(Path.cwd(), dict(os.environ))
    arguments = checked_arguments(["--select", f"loft_{size}__int_imported_queries+"], environ)
    caller = Path.cwd()
    with tempfile.TemporaryDirectory(prefix="loft_import_") as folder:
        results_file = Path(folder) / "results.txt"
        checked = {current_build.RESULTS_FILE_ENV: str(results_file), current_build.SETTINGS_CHECKED_ENV: "1"}
        os.environ.update({**environ, **checked})
        os.chdir(PROJECT_ROOT)
        try:
            result = dbtRunner().invoke(
                ["build", *arguments, "--project-dir", str(PROJECT_ROOT), "--profiles-dir", str(PROJECT_ROOT)]
            )
        finally:
            os.chdir(caller)
            for name in checked:
                os.environ.pop(name, None)
        results = current_build.held_results(results_file)
    code = 0 if result.success else 1
    print(results + outcome("loft import-predictions", code, warehouse_path(environ.get("LOFT_DUCKDB_PATH")), environ))
    return code


def add_landing_arguments(parser: argparse.ArgumentParser) -> None:
    """The options every import command shares: who, which size and split, where, and --build."""
    parser.add_argument("--system", required=True, help="name the predictions are reported under")
    parser.add_argument("--size", required=True, choices=list(SIZES))
    parser.add_argument("--split", default="test", choices=SPLITS)
    parser.add_argument("--variant", default="default", help="prompt variant the predictions answer")
    parser.add_argument("--imports-dir", default=None, help="default: $LOFT_IMPORTS_DIR or .imports/")
    parser.add_argument(
        "--build",
        action="store_true",
        help="then run dbt build for the size's scoring models (uses $LOFT_DUCKDB_PATH)",
    )


def dataset_name(task: str, given: str) -> str:
    """The dataset as --dataset names it: `arguana`, or `retrieval/arguana` as the build's
    `datasets` var writes it (its task must be --task's)."""
    prefix, slash, name = given.partition("/")
    if not slash:
        return given
    if prefix != task:
        raise ConfigurationError(f"--dataset {given}: a {prefix} dataset, but --task is a {task} task")
    return name


def _land_from_args(args: argparse.Namespace) -> Path:
    """Read and land the file the arguments name; the queries it read die with this call, so a
    --build that follows does not hold them."""
    from loft_warehouse.prompts.export import default_database

    task, _ = TASK_TYPES[args.task]
    args.dataset = dataset_name(task, args.dataset)
    directory = imports_dir(args.imports_dir)
    database = default_database()
    check_landing(system=args.system, size=args.size, task=task, dataset=args.dataset, split=args.split,
                  variant=args.variant)  # fmt: skip
    check_import_name(args.system)
    landing: dict[str, Any] = {
        "system": args.system,
        "size": args.size,
        "task_type": args.task,
        "dataset": args.dataset,
        "split": args.split,
        "variant": args.variant,
        "directory": directory,
        "strict_input": args.strict_input,
        "raw_generations": args.raw_generations,
        "score_the_rest": args.score_the_rest,
    }
    if args.queries:
        if (task, args.dataset) in _built_datasets(database, args.size):
            raise ConfigurationError(
                f"{task}/{args.dataset} is built in loft_{args.size} from data; give the answer set another name"
            )
        target, queries_target, summary = land_with_answer_file(
            Path(args.file), Path(args.queries).resolve(), **landing
        )
        print(f"landed {args.queries} as {queries_target}")
    else:
        queries = warehouse_queries(database, args.size, task, args.dataset, args.split)
        target, summary = land(Path(args.file), queries, **landing)
    print(summary.line(Path(args.file)))
    return target


def _run(args: argparse.Namespace) -> int:
    return finish_landing(_land_from_args(args), args.file, args.size, args.build)


def register(subparsers: argparse._SubParsersAction) -> None:
    """`loft import-predictions`: land an upstream-format prediction file for scoring."""
    parser = subparsers.add_parser(
        "import-predictions",
        help="load predictions in the upstream LOFT format for a system, size and dataset",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("file", help="JSON lines: {qid, num_turns, model_outputs: [...per turn...]}")
    parser.add_argument("--task", required=True, choices=list(TASK_TYPES), help="LOFT's task type")
    parser.add_argument("--dataset", required=True, help="warehouse dataset, e.g. arguana or retrieval/arguana")
    parser.add_argument("--queries", default=None, help="LOFT's answer file for these predictions (no build needed)")
    parser.add_argument("--strict-input", action="store_true", help="refuse what LOFT's evaluator silently resolves")
    parser.add_argument(
        "--score-the-rest",
        action="store_true",
        help="score the lines that are not refused, as if the refused ones were not in the file (each is named)",
    )
    parser.add_argument(
        "--raw-generations", action="store_true", help="string turns are raw generations to parse, not answer text"
    )
    add_landing_arguments(parser)
    parser.set_defaults(func=_run)
