"""Gold adjudications as data: verdicts on (query, answer) pairs, each under a named gold version.

QUEST-LOFT re-judged QUEST's gold by hand (seed 002 §4.1, Appendix E: QUEST-LOFT-128K-Revised;
Appendix F: Simple28). The same shape holds anyone's adjudication of any RAG dataset: a row
names a version, the query (by qid, or by its question text when the adjudicator had no qid),
an answer and a rating (MATCH, DEBATABLE, NO_MATCH; NONE: the query has no matching answer).
Scoring (rule `revised`, one set of rows per version) takes a version's MATCH answers as the
query's gold and drops its DEBATABLE answers from gold and prediction; every other answer is
wrong. Stored responses are rescored under every version present, with no new call, and
scores and metrics carry the version (`release`: the dataset's own gold).

The versions are the seed's two (quest_loft_revised, quest_loft_simple28) and every CSV file in
the adjudications folder (var adjudications_dir, else $LOFT_ADJUDICATIONS_DIR, else
.adjudications/ in the project) with the columns gold_version, task, dataset, qid or question,
answer, rating and optionally source.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import polars as pl

from loft_warehouse.answers.normalize import normalize_answer
from loft_warehouse.errors import BadInputError
from loft_warehouse.settings import PROJECT_ROOT

RELEASE = "release"
RATINGS = ("MATCH", "DEBATABLE", "NO_MATCH", "NONE")
SEED_FILE = "seeds/quest_loft_revised_gold.csv"
SEED_VERSIONS = {
    "revised": ("quest_loft_revised", "seed 002 Appendix E (QUEST-LOFT-128K-Revised)"),
    "simple28": ("quest_loft_simple28", "seed 002 Appendix F (Simple28; 23 of its 28 questions)"),
}
TASKS = ("rag",)
REQUIRED = ("gold_version", "task", "dataset", "answer", "rating")
OPTIONAL = ("qid", "question", "source")
_VERSION = re.compile(r"[a-z0-9][a-z0-9_.-]{0,63}")
SCHEMA: dict[str, Any] = {
    "gold_version": pl.String,
    "task": pl.String,
    "dataset": pl.String,
    "qid": pl.String,
    "question": pl.String,
    "answer": pl.String,
    "rating": pl.String,
    "source": pl.String,
    "source_file": pl.String,
    "source_row": pl.Int64,
}


def adjudications_dir(configured: str | None = None) -> Path:
    """Where adjudication files live: the setting, else $LOFT_ADJUDICATIONS_DIR, else .adjudications/."""
    value = (configured or "").strip() or os.environ.get("LOFT_ADJUDICATIONS_DIR", "").strip()
    return Path(value).expanduser() if value else PROJECT_ROOT / ".adjudications"


def from_seed(seed: pl.DataFrame) -> pl.DataFrame:
    """The QUEST-LOFT appendices (seeds/quest_loft_revised_gold.csv) as two gold versions."""
    rows = []
    for line, row in enumerate(seed.iter_rows(named=True), start=2):
        version, source = SEED_VERSIONS[str(row["question_set"])]
        rows.append(
            {
                "gold_version": version,
                "task": "rag",
                "dataset": "quest",
                "qid": None,
                "question": str(row["question"]),
                "answer": None if row["answer"] is None else str(row["answer"]),
                "rating": str(row["rating"]),
                "source": source,
                "source_file": SEED_FILE,
                "source_row": line,
            }
        )
    return pl.DataFrame(rows, schema=SCHEMA)


def _cell(row: dict[str, Any], column: str) -> str:
    value = row.get(column)
    return "" if value is None else str(value).strip()


def read_file(path: Path) -> pl.DataFrame:
    """One adjudication CSV, every row checked; a bad row stops the build naming file and line."""
    try:
        frame = pl.read_csv(path, infer_schema=False)
    except (pl.exceptions.PolarsError, UnicodeDecodeError) as exc:
        raise BadInputError(path, None, f"not a readable CSV file: {exc}") from exc
    missing = [c for c in REQUIRED if c not in frame.columns]
    if missing or not ({"qid", "question"} & set(frame.columns)):
        needed = [*missing, *([] if {"qid", "question"} & set(frame.columns) else ["qid or question"])]
        raise BadInputError(path, 1, f"missing column(s) {', '.join(needed)}; an adjudication file has {_layout()}")
    if frame.height == 0:
        raise BadInputError(path, None, "holds no adjudication row")
    rows = []
    for line, row in enumerate(frame.iter_rows(named=True), start=2):
        values = {c: _cell(row, c) for c in (*REQUIRED, *OPTIONAL)}
        _check(path, line, values)
        rows.append(
            {
                **{c: values[c] or None for c in ("gold_version", "task", "dataset", "qid", "question", "answer")},
                "rating": values["rating"],
                "source": values["source"] or str(path.name),
                "source_file": str(path),
                "source_row": line,
            }
        )
    return pl.DataFrame(rows, schema=SCHEMA)


def _layout() -> str:
    return f"the columns {', '.join(REQUIRED)}, qid or question, and optionally source"


def _check(path: Path, line: int, values: dict[str, str]) -> None:
    version = values["gold_version"]
    if not _VERSION.fullmatch(version):
        raise BadInputError(path, line, f"gold_version {version!r}: lower-case letters, digits, '_', '.', '-'")
    if version == RELEASE or version in {v for v, _ in SEED_VERSIONS.values()}:
        raise BadInputError(path, line, f"gold_version {version!r} is taken (the release gold or the seed's)")
    if values["task"] not in TASKS:
        raise BadInputError(path, line, f"task {values['task']!r}: adjudications apply to {', '.join(TASKS)} answers")
    if not values["dataset"]:
        raise BadInputError(path, line, "no dataset")
    if not values["qid"] and not values["question"]:
        raise BadInputError(path, line, "neither qid nor question: say which query the verdict is on")
    if values["rating"] not in RATINGS:
        raise BadInputError(path, line, f"rating {values['rating']!r}: one of {', '.join(RATINGS)}")
    if values["rating"] != "NONE" and not values["answer"]:
        raise BadInputError(path, line, f"no answer for a {values['rating']} verdict")


def _check_agreement(frame: pl.DataFrame) -> None:
    """One verdict per (version, query, normalised answer): a second, different one is an error."""
    seen: dict[tuple[str, ...], tuple[str, str, int]] = {}
    for row in frame.iter_rows(named=True):
        query = row["qid"] if row["qid"] is not None else "question:" + normalize_answer(row["question"] or "")
        key = (row["gold_version"], row["task"], row["dataset"], query, normalize_answer(row["answer"] or ""))
        earlier = seen.setdefault(key, (row["rating"], row["source_file"], row["source_row"]))
        if earlier[0] != row["rating"]:
            raise BadInputError(
                row["source_file"],
                row["source_row"],
                f"rates {row['answer']!r} {row['rating']} where {earlier[1]}:{earlier[2]} rated it {earlier[0]}",
            )


def collect(seed: pl.DataFrame, folder: Path) -> pl.DataFrame:
    """The seed's versions and every *.csv of the folder (name order), agreement checked."""
    files = sorted(folder.glob("*.csv")) if folder.is_dir() else []
    frame = pl.concat([from_seed(seed), *(read_file(path) for path in files)])
    _check_agreement(frame)
    return frame
