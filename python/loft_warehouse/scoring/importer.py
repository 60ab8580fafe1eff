"""Import predictions made elsewhere, in the upstream LOFT output format, for scoring.

A prediction file is JSON lines `{"qid", "num_turns", "model_outputs": [turn_0, turn_1, ...]}`
as LOFT's run_inference.py writes and run_evaluation.py reads. Each turn is either the parsed
answer list (upstream: retrieval pids, RAG/ICL strings, SQL rows) or, from other harnesses, a
raw generation string, which is parsed with the same rules as the warehouse's own responses
(its retrieval IDs are then the shown IDs of the prompt variant).

`loft import-predictions FILE --system S --size 128k --task retrieval --dataset arguana` lands
the file as parquet under the imports folder (`$LOFT_IMPORTS_DIR`, default `.imports/` in the
project); the dbt model `int_imported_predictions` of that size reads every landed file, checks
each qid against the size's queries (an unknown qid or a wrong turn count stops the build,
naming file and line) and adds a 'missing' row for each query of the split the file does not
answer, so it scores 0 and counts as unanswered instead of vanishing. The import then flows
through predictions, scores, metrics and leaderboard like any run (source = 'import').
"""

from __future__ import annotations

import argparse
import json
import os
import re
from pathlib import Path
from typing import Any

import polars as pl

from loft_warehouse.errors import BadInputError, ConfigurationError
from loft_warehouse.prompts.store import PROMPT_KEY_SCHEMA, prompt_id
from loft_warehouse.readers import read_jsonl, require
from loft_warehouse.scoring.parse import answer_texts, to_json_value
from loft_warehouse.settings import PROJECT_ROOT, SIZES

TASKS = ("retrieval", "rag", "sql", "icl")
SPLITS = ("dev", "test")
_SAFE_NAME = re.compile(r"^[A-Za-z0-9._-]+$")

LANDED_SCHEMA = {
    "system": pl.String,
    "task": pl.String,
    "dataset": pl.String,
    "variant": pl.String,
    "split": pl.String,
    "qid": pl.String,
    "turn": pl.Int64,
    "n_turns": pl.Int64,
    "raw_text": pl.String,
    "given_answers": pl.List(pl.String),
    "given_answers_json": pl.String,
    "id_space": pl.String,
    "import_file": pl.String,
    "import_line": pl.Int64,
}
IMPORTED_SCHEMA = {
    "system": pl.String,
    **PROMPT_KEY_SCHEMA,
    "n_turns": pl.Int64,
    "status": pl.String,
    **{k: v for k, v in LANDED_SCHEMA.items() if k not in PROMPT_KEY_SCHEMA and k not in ("system", "n_turns")},
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


def read_prediction_file(path: Path, *, system: str, task: str, dataset: str, split: str, variant: str) -> pl.DataFrame:
    """One row per (qid, turn) of an upstream-format file; malformed lines raise BadInputError."""
    rows: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    for line_no, record in read_jsonl(path):
        require(record, ("qid", "num_turns", "model_outputs"), path, line_no)
        qid = str(record["qid"])
        if qid in seen:
            raise BadInputError(path, line_no, f"qid {qid!r} already given on line {seen[qid]}")
        seen[qid] = line_no
        n_turns, outputs = record["num_turns"], record["model_outputs"]
        if not isinstance(n_turns, int) or isinstance(n_turns, bool) or n_turns < 1:
            raise BadInputError(path, line_no, f"num_turns must be a positive integer, got {n_turns!r}")
        if not isinstance(outputs, list) or len(outputs) != n_turns:
            raise BadInputError(path, line_no, f"model_outputs must be a list of num_turns={n_turns} turn outputs")
        for turn, output in enumerate(outputs):
            if isinstance(output, str):
                raw_text, answers, answers_json, id_space = output, None, None, "shown"
            elif isinstance(output, list):
                raw_text, id_space = None, "pid"
                answers = answer_texts(output)
                answers_json = json.dumps(to_json_value(output), ensure_ascii=False)
            else:
                raise BadInputError(
                    path, line_no, f"turn {turn} of qid {qid!r} is neither an answer list nor a generation string"
                )
            rows.append(
                {
                    "system": system,
                    "task": task,
                    "dataset": dataset,
                    "variant": variant,
                    "split": split,
                    "qid": qid,
                    "turn": turn,
                    "n_turns": n_turns,
                    "raw_text": raw_text,
                    "given_answers": answers,
                    "given_answers_json": answers_json,
                    "id_space": id_space,
                    "import_file": str(path),
                    "import_line": line_no,
                }
            )
    if not rows:
        raise BadInputError(path, None, "no predictions in file")
    return pl.DataFrame(rows, schema=LANDED_SCHEMA)


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


def write_landed(frame: pl.DataFrame, size: str, directory: Path | None = None) -> Path:
    """Write validated rows (LANDED_SCHEMA, one system/task/dataset/split/variant) where the
    size's int_imported_predictions reads them; re-importing the same key replaces the file."""
    first = frame.row(0, named=True)
    folder = (directory or imports_dir()) / size
    folder.mkdir(parents=True, exist_ok=True)
    key = "__".join(first[name] for name in ("system", "task", "dataset", "split", "variant"))
    target = folder / f"{key}.parquet"
    frame.select([pl.col(name).cast(kind) for name, kind in LANDED_SCHEMA.items()]).write_parquet(target)
    return target


def land(
    path: Path,
    *,
    system: str,
    size: str,
    task: str,
    dataset: str,
    split: str = "test",
    variant: str = "default",
    directory: Path | None = None,
) -> Path:
    """Validate a prediction file and land it as parquet (re-importing replaces it)."""
    check_landing(system=system, size=size, task=task, dataset=dataset, split=split, variant=variant)
    frame = read_prediction_file(
        path.resolve(), system=system, task=task, dataset=dataset, split=split, variant=variant
    )
    return write_landed(frame, size, directory)


def imported_frame(directory: Path, size: str, queries: pl.DataFrame) -> pl.DataFrame:
    """Every landed import of one size, checked against its queries, unanswered queries added.

    `queries` needs task, dataset, corpus_id, split, qid, turn, n_turns (the queries mart)."""
    files = sorted((directory / size).glob("*.parquet")) if (directory / size).is_dir() else []
    if not files:
        return pl.DataFrame(schema=IMPORTED_SCHEMA)
    frames = []
    known = queries.select("task", "dataset", "corpus_id", "split", "qid", "turn", "n_turns")
    for file in files:
        landed = pl.read_parquet(file)
        first = landed.row(0, named=True)
        scope = known.filter(
            (pl.col("task") == first["task"])
            & (pl.col("dataset") == first["dataset"])
            & (pl.col("split") == first["split"])
        )
        checked = landed.join(
            scope.select("qid", "turn", "corpus_id", pl.col("n_turns").alias("query_n_turns")),
            on=["qid", "turn"],
            how="left",
        )
        unknown = checked.filter(pl.col("corpus_id").is_null() | (pl.col("n_turns") != pl.col("query_n_turns")))
        if unknown.height:
            bad = unknown.row(0, named=True)
            problem = (
                f"qid {bad['qid']!r} (turn {bad['turn']}) is not a {first['split']} query of "
                f"{first['task']}/{first['dataset']} at {size}"
                if bad["corpus_id"] is None
                else f"qid {bad['qid']!r} has {bad['n_turns']} turn(s) but the query has {bad['query_n_turns']}"
            )
            raise BadInputError(bad["import_file"], bad["import_line"], f"{problem} (landed in {file})")
        answered = checked.drop("query_n_turns").with_columns(status=pl.lit("ok"))
        missing = scope.join(landed.select("qid").unique(), on="qid", how="anti").with_columns(
            system=pl.lit(first["system"]),
            variant=pl.lit(first["variant"]),
            status=pl.lit("missing"),
            raw_text=pl.lit(None, pl.String),
            given_answers=pl.lit(None, pl.List(pl.String)),
            given_answers_json=pl.lit(None, pl.String),
            id_space=pl.lit("pid"),
            import_file=pl.lit(first["import_file"]),
            import_line=pl.lit(None, pl.Int64),
        )
        frames.append(pl.concat([answered, missing], how="diagonal_relaxed"))
    combined = pl.concat(frames, how="diagonal_relaxed")
    ids = [
        prompt_id(*key) for key in combined.select("task", "dataset", "corpus_id", "variant", "qid", "turn").iter_rows()
    ]
    return combined.with_columns(
        prompt_id=pl.Series(ids, dtype=pl.String), method=pl.lit("cic"), stage=pl.lit(1), call_index=pl.lit(0)
    ).select([pl.col(name).cast(kind) for name, kind in IMPORTED_SCHEMA.items()])


def frame_for_model(dbt: Any, queries: Any) -> pl.DataFrame:
    """Body of the int_imported_predictions dbt model of a size."""
    size = dbt.this.schema.replace("loft_", "")
    return imported_frame(imports_dir(), size, queries.pl())


def finish_landing(target: Path, source: str, size: str, build: bool) -> int:
    """Report a landed file, then build the size's scoring models (--build) or say how to."""
    print(f"landed {source} as {target}")
    if not build:
        print(f"score it with: dbt build --select loft_{size}__int_imported_predictions+")
        return 0
    from dbt.cli.main import dbtRunner

    result = dbtRunner().invoke(
        [
            "build",
            "--select",
            f"loft_{size}__int_imported_predictions+",
            "--project-dir",
            str(PROJECT_ROOT),
            "--profiles-dir",
            str(PROJECT_ROOT),
        ]
    )
    return 0 if result.success else 1


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


def _run(args: argparse.Namespace) -> int:
    target = land(
        Path(args.file),
        system=args.system,
        size=args.size,
        task=args.task,
        dataset=args.dataset,
        split=args.split,
        variant=args.variant,
        directory=imports_dir(args.imports_dir),
    )
    return finish_landing(target, args.file, args.size, args.build)


def register(subparsers: argparse._SubParsersAction) -> None:
    """`loft import-predictions`: land an upstream-format prediction file for scoring."""
    parser = subparsers.add_parser(
        "import-predictions",
        help="load predictions in the upstream LOFT format for a system, size and dataset",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("file", help="JSON lines: {qid, num_turns, model_outputs: [...per turn...]}")
    parser.add_argument("--task", required=True, choices=TASKS)
    parser.add_argument("--dataset", required=True, help="warehouse dataset name, e.g. arguana")
    add_landing_arguments(parser)
    parser.set_defaults(func=_run)
