"""LOFT's answer and prediction files as its own evaluator reads them (run_evaluation.py and
evaluation/*.py of google-deepmind/loft), so that an imported run scores as it scores there.

Under the upstream semantics a prediction file means what it means to LOFT's evaluator:
- predictions are keyed by qid, and the last line of a qid wins (duplicates);
- lines whose qid is not a query of the answer set are ignored (stray);
- outputs beyond a line's num_turns are ignored (truncated); multi_value_rag reads only the first;
- a turn given as a string is iterated character by character (LOFT scores list(text));
- num_turns true is 1 (a bool is an int to Python: range(True) is one turn);
- a retrieval line whose metadata names a candidate_path (LOFT then scores document texts) is refused;
- num_turns below the query's turn count scores only those turns; with num_turns 1 the evaluator
  reads the whole gold as that turn's (retrieval: the pids of every turn; SQL: the list of every
  turn's rows), which the landed row carries as gold_loft; a line the evaluator itself fails
  on (more turns than the query has, RAG with one turn for several, fewer outputs than
  num_turns) is refused, naming file and line;
- a query without a line is unanswered (scoring counts it once, as one turn, under the loft rule).
`strict_input` refuses duplicates, stray qids, extra outputs and turn-count differences instead.

An answer file is LOFT's query file: JSON lines `{qid, query_text, answers, metadata}` (the
release's *_queries.jsonl), or for ICL BBH's JSON array `{input, target}` whose qids are the
indices and whose gold is target.split(" ").
"""

from __future__ import annotations

import json
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from loft_warehouse.answers.parse import answer_texts, loaded_json_text
from loft_warehouse.errors import BadInputError
from loft_warehouse.readers import max_response_bytes, read_jsonl, require, utf8_size
from loft_warehouse.registry import ID_TASKS, DatasetSpec
from loft_warehouse.scoring import bulk_files
from loft_warehouse.sources.base import Query, SourceData
from loft_warehouse.sources.loft_release import bbh_queries, query_from_record, read_answer_lines
from loft_warehouse.staging import QUERY_SCHEMA, queries_frame

# Upstream's task_type (evaluation.EVALUATION_TASKS) -> (warehouse task, several answers per question).
TASK_TYPES: dict[str, tuple[str, bool]] = {
    "retrieval": ("retrieval", False),
    "rag": ("rag", False),
    "multi_value_rag": ("rag", True),
    "sql": ("sql", False),
    "icl": ("icl", False),
    "mm": ("mm", False),
}
# The queries mart's columns (as staging lands them) and is_multi_answer: what scoring reads.
SCORED_QUERY_SCHEMA: dict[str, pl.DataType | type[pl.DataType]] = {
    **{name: QUERY_SCHEMA[name] for name in ("task", "dataset", "corpus_id")},
    "split": pl.String,
    **{
        name: QUERY_SCHEMA[name]
        for name in ("qid", "upstream_qid", "turn", "n_turns", "query_text", "gold", "gold_pids", "db_id", "gold_sql")
    },
    "gold_is_ordered": pl.Boolean,
    "query_rank": pl.Int64,
    "is_multi_answer": pl.Boolean,
}


def answer_queries(path: Path, task: str, split: str) -> list[Query]:
    """The queries of a LOFT answer file (a missing qid is the line's index, as upstream)."""
    if path.suffix == ".json":
        if task != "icl":
            raise BadInputError(path, None, "a JSON array answer file is BBH's layout; only --task icl reads it")
        return bbh_queries(path, split)
    queries = []
    for row, record in read_answer_lines(path, task):
        record.setdefault("qid", str(row - 1))
        queries.append(query_from_record(task, record, split, path, row))
    if not queries:
        raise BadInputError(path, None, "no queries in file")
    return queries


def write_answer_queries(path: Path, task_type: str, dataset: str, split: str, target: Path) -> Path:
    """An answer file as the rows scoring reads (SCORED_QUERY_SCHEMA), in file order, written
    to `target` as parquet: by DuckDB where bulk_files takes the file, else by the Python reader."""
    task, multi_answer = TASK_TYPES[task_type]
    if not bulk_files.write_answer_file(path, task, dataset, split, multi_answer, target):
        spec = DatasetSpec(task=task, dataset=dataset, source="answer_file")
        frame = queries_frame(spec, SourceData([], answer_queries(path, task, split)), True, 0)
        frame.with_columns(
            split=pl.lit(split),
            gold_is_ordered=pl.lit(None, pl.Boolean),
            is_multi_answer=pl.lit(multi_answer),
        ).select([pl.col(name).cast(kind) for name, kind in SCORED_QUERY_SCHEMA.items()]).write_parquet(target)
    _refuse_what_loft_reads_otherwise(path, target, task)
    return target


def _lines_of(path: Path, qid: str) -> list[int]:
    return [row for row, record in read_jsonl(path, allow_nan=True) if str(record.get("qid", row - 1)) == qid]


def _refuse_what_loft_reads_otherwise(path: Path, landed: Path, task: str) -> None:
    """Answer files LOFT's evaluator reads in a way the warehouse's tables cannot carry are
    refused at the door, naming the line, rather than landing and breaking every later build:
    a qid given twice (LOFT scores both lines; the warehouse keys a query by its qid), and a RAG
    answer that is a bare string (LOFT takes each of its characters as an answer), and a SQL
    turn with no gold rows (LOFT's evaluator stops on it: it reads the first gold row)."""
    queries = pl.scan_parquet(landed)
    repeated = queries.filter(pl.col("turn") == 0).group_by("qid").len().filter(pl.col("len") > 1).head(1).collect()
    if repeated.height:
        qid = repeated["qid"][0]
        lines = _lines_of(path, qid)
        raise BadInputError(
            path, lines[1], f"qid {qid!r} already given on line {lines[0]} (LOFT's evaluator would score it twice)"
        )
    if task == "sql":
        empty = queries.filter(pl.col("gold").is_null() | (pl.col("gold").str.replace_all(r"\s", "") == "[]"))
        first = empty.head(1).collect()
        if first.height:
            qid, turn = first["qid"][0], first["turn"][0]
            raise BadInputError(
                path, _lines_of(path, qid)[0],
                f"qid {qid!r} turn {turn} has no gold rows (LOFT's evaluator stops on it, reading the first row)",
            )  # fmt: skip
    if task == "rag":
        bare = queries.filter(~pl.col("gold").str.starts_with("[")).head(1).collect()
        if bare.height:
            qid, gold = bare["qid"][0], bare["gold"][0]
            raise BadInputError(
                path, _lines_of(path, qid)[0],
                f"qid {qid!r}: answers must be a list of answers, got the string {gold} "
                "(LOFT's evaluator would take each of its characters as an answer)",
            )  # fmt: skip


def answer_file_queries(path: Path, task_type: str, dataset: str, split: str) -> pl.DataFrame:
    """An answer file as the rows scoring reads (the queries mart's columns), in file order, as a
    frame: what write_answer_queries lands, read back (the import itself never holds it)."""
    with tempfile.TemporaryDirectory(prefix="loft-answers-") as folder:
        target = write_answer_queries(path, task_type, dataset, split, Path(folder) / "queries.parquet")
        frame = pl.read_parquet(target)
    return frame.select([pl.col(name).cast(kind) for name, kind in SCORED_QUERY_SCHEMA.items()])


@dataclass
class Summary:
    """What the upstream semantics did to a prediction file."""

    lines: int = 0
    duplicates: int = 0
    stray: int = 0
    truncated: int = 0
    fewer_turns: int = 0
    unanswered: int = 0
    surrogates: int = 0
    refused: int = 0

    def line(self, path: Path) -> str:
        stored = f", {self.surrogates} line(s) with a lone surrogate (kept as U+FFFD)" if self.surrogates else ""
        if self.refused:
            stored += f", {self.refused} refused line(s) left out (--score-the-rest)"
        return (
            f"{path.name}: {self.lines} lines; {self.duplicates} duplicate qid line(s) (the last wins), "
            f"{self.stray} stray qid line(s) (ignored), {self.truncated} line(s) with outputs beyond "
            f"num_turns (ignored), {self.fewer_turns} line(s) with fewer turns than the query, "
            f"{self.unanswered} unanswered quer(ies) (scored 0){stored}"
        )


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _storable(value: Any) -> Any:
    """An output with each lone surrogate (JSON can escape one, UTF-8 cannot store it) as U+FFFD:
    neither is whitespace, punctuation or a gold character, so LOFT's scores are unchanged."""
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_storable(item) for item in value]
    if isinstance(value, dict):
        return {_storable(key): _storable(item) for key, item in value.items()}
    return value


@dataclass(frozen=True)
class Known:
    """One query of the answer set as the importer checks a line against it."""

    qid: str
    golds: list[Any]


def known_queries(queries: pl.DataFrame) -> dict[str, Known]:
    """By upstream qid: the query's qid and its per-turn golds (gold_pids for retrieval)."""
    known: dict[str, Known] = {}
    ordered = queries.sort("upstream_qid", "turn")
    for (upstream_qid,), group in ordered.group_by("upstream_qid", maintain_order=True):
        first = group.row(0, named=True)
        golds: list[Any]
        if first["task"] in ID_TASKS:
            golds = [list(p or []) for p in group["gold_pids"].to_list()]
        else:
            golds = [json.loads(g) if g is not None else None for g in group["gold"].to_list()]
        known[str(upstream_qid)] = Known(first["qid"], golds)
    return known


_TYPED_QID = (
    "given as the JSON {kind} {value}, not a string: LOFT's evaluator matches a qid only to one of the same "
    "JSON type and the warehouse matches by text, so the two could score this line differently; write the qid "
    "as a string in both files"
)


def number_qids(path: Path) -> frozenset[str]:
    """The qids a JSON-lines answer file gives as JSON numbers, as text: LOFT's evaluator matches
    each only to a prediction qid of the same number."""
    if path.suffix == ".json":
        return frozenset()
    return frozenset(
        str(record["qid"])
        for _, record in read_jsonl(path, allow_nan=True)
        if isinstance(record.get("qid"), int | float) and not isinstance(record.get("qid"), bool)
    )


_ANSWER_NUMBER_QID = (
    "given as a string, but the answer file gives it as the JSON number {qid}: LOFT's evaluator matches a "
    "qid only to one of the same JSON type (it would leave the query unanswered) and the warehouse matches by "
    "text; write the qid the same way in both files"
)


def _typed_qid(value: Any) -> str:
    kind = "boolean" if isinstance(value, bool) else "number" if isinstance(value, int | float) else "value"
    return _TYPED_QID.format(kind=kind, value=json.dumps(value))


def _refuse(path: Path, line: int, qid: str, message: str) -> BadInputError:
    return BadInputError(path, line, f"qid {qid!r}: {message}")


def _refused_lines(path: Path, refused: list[BadInputError]) -> BadInputError:
    """One error for every refused line of a file: the first as it was said, the others by line."""
    first, *others = sorted(refused, key=lambda exc: exc.row if isinstance(exc.row, int) else 0)
    rest = (
        f"; {len(others)} more line(s) refused ({', '.join(str(exc.row) for exc in others[:20])}"
        f"{', ...' if len(others) > 20 else ''})"
        if others
        else ""
    )
    return BadInputError(
        path,
        first.row,
        f"{first.message}{rest}; --score-the-rest scores the other lines as if the refused ones were not in the file",
    )


def _whole_gold(task: str, golds: list[Any], path: Path, line: int, qid: str) -> str | None:
    """The gold LOFT's evaluator reads for a one-turn line of a multi-turn query (JSON), or None
    where it reads the query's own turn-0 gold."""
    if task in ID_TASKS:
        return json.dumps([pid for turn in golds for pid in turn], ensure_ascii=False)
    if task == "sql":
        return json.dumps(golds, ensure_ascii=False)
    if task == "rag":
        raise _refuse(path, line, qid, "num_turns 1 on a multi-turn RAG query: LOFT's evaluator fails on it")
    return None


def _turn_answers(output: Any, path: Path, line: int, qid: str, turn: int) -> tuple[list[str], str]:
    """A turn's answers as text and as JSON (types kept): a list as given, a string as its
    characters (what iterating it yields upstream)."""
    if isinstance(output, str):
        output = list(output)
    if not isinstance(output, list):
        raise _refuse(path, line, qid, f"turn {turn} is neither an answer list nor a string: {output!r}")
    return answer_texts(output), loaded_json_text(output)


def prediction_rows(
    path: Path,
    queries: pl.DataFrame | pl.LazyFrame,
    *,
    task_type: str,
    strict_input: bool = False,
    raw_generations: bool = False,
    score_the_rest: bool = False,
    answer_number_qids: frozenset[str] = frozenset(),
) -> tuple[pl.DataFrame, Summary]:
    """The scored turns of a prediction file against one dataset split's queries
    (bulk_files.PREDICTION_SCHEMA), with what the upstream semantics did (see the module
    docstring); refused lines raise BadInputError. Read column-wise by bulk_files where it can.

    raw_generations: a string turn is a model's raw generation, parsed like the warehouse's own
    responses (its IDs are then the shown IDs of the prompt variant) instead of characters.
    A lazy `queries` (a scan of landed answer queries) is read only as far as the reader needs.
    answer_number_qids: the qids the answer file gave as numbers (number_qids), which a
    prediction must give as the same numbers."""
    task, multi_answer = TASK_TYPES[task_type]
    if not strict_input and not raw_generations and not answer_number_qids:
        fast = bulk_files.prediction_frame(path, queries, multi_answer)
        if fast is not None:
            return fast[0], Summary(**fast[1])
    known = known_queries(queries.lazy().collect())
    summary = Summary()
    reply_cap = max_response_bytes()
    chosen: dict[str, tuple[int, dict[str, Any]]] = {}
    refused: list[BadInputError] = []

    def checked(line: int, record: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        require(record, ("qid", "num_turns", "model_outputs"), path, line)
        qid = str(record["qid"])
        given_as_number = not isinstance(record["qid"], str)
        if qid in known and given_as_number != (qid in answer_number_qids):
            if given_as_number:
                raise _refuse(path, line, qid, _typed_qid(record["qid"]))
            raise _refuse(path, line, qid, _ANSWER_NUMBER_QID.format(qid=qid))
        n_turns, outputs = record["num_turns"], record["model_outputs"]
        if n_turns is True:  # LOFT's range(num_turns) and num_turns == 1 read true as 1
            n_turns = 1
            record = {**record, "num_turns": 1}
        if not isinstance(n_turns, int) or isinstance(n_turns, bool) or n_turns < 1:
            raise BadInputError(path, line, f"num_turns must be a positive integer, got {n_turns!r}")
        if not isinstance(outputs, list) or not outputs:
            raise BadInputError(path, line, "model_outputs must be a non-empty list of turn outputs")
        size = utf8_size(json.dumps(outputs, ensure_ascii=False))
        if size > reply_cap:
            raise _refuse(
                path, line, qid,
                f"model_outputs of {size} bytes, over LOFT_MAX_RESPONSE_BYTES ({reply_cap}): no output "
                "limit gives a reply that long",
            )  # fmt: skip
        storable = _storable(outputs)
        if storable != outputs:
            summary.surrogates += 1
            record = {**record, "model_outputs": storable}
        if qid in chosen and strict_input:
            raise _refuse(path, line, qid, f"already given on line {chosen[qid][0]} (--strict-input)")
        return qid, record

    def line_rows(qid: str, line: int, record: dict[str, Any], query: Known) -> list[dict[str, Any]]:
        metadata = record.get("metadata")
        if task in ID_TASKS and isinstance(metadata, dict) and "candidate_path" in metadata:
            raise _refuse(
                path, line, qid,
                "metadata.candidate_path: LOFT's evaluator then compares the texts of that corpus file's "
                "documents (and fails when it is missing or null), the warehouse compares pids; drop it, "
                "mapping each ID to one pid per text first if texts repeat",
            )  # fmt: skip
        n_turns, outputs = record["num_turns"], record["model_outputs"]
        expected = len(query.golds)
        scored = 1 if multi_answer else n_turns
        if len(outputs) < scored:
            raise _refuse(path, line, qid, f"num_turns {n_turns} but {len(outputs)} output(s)")
        if multi_answer and expected > 1:
            raise _refuse(path, line, qid, "a multi-value RAG query has one turn")
        if not multi_answer and n_turns > expected:
            raise _refuse(
                path, line, qid,
                f"num_turns {n_turns} but the query has {expected} turn(s); LOFT's evaluator would "
                "read gold entries as turns or fail",
            )  # fmt: skip
        differs = not multi_answer and n_turns < expected
        if strict_input and (len(outputs) > scored or differs):
            raise _refuse(path, line, qid, f"num_turns {n_turns}, {len(outputs)} output(s), query turns {expected}")
        gold_loft = _whole_gold(task, query.golds, path, line, qid) if differs and scored == 1 else None
        found = []
        for turn in range(scored):
            output = outputs[turn]
            raw = output if raw_generations and isinstance(output, str) else None
            answers, answers_json = (None, None) if raw is not None else _turn_answers(output, path, line, qid, turn)
            found.append(
                {
                    "qid": query.qid,
                    "turn": turn,
                    "n_turns": expected,
                    "raw_text": raw,
                    "given_answers": answers,
                    "given_answers_json": answers_json,
                    "gold_loft": gold_loft,
                    "id_space": "shown" if raw is not None else "pid",
                    "import_file": str(path),
                    "import_line": line,
                }
            )
        summary.truncated += len(outputs) > scored
        summary.fewer_turns += differs
        return found

    for line, record in read_jsonl(path, allow_nan=True, refused=refused):
        summary.lines += 1
        try:
            qid, record = checked(line, record)
        except BadInputError as exc:
            refused.append(exc)
            continue
        summary.duplicates += qid in chosen
        chosen[qid] = (line, record)
    rows: list[dict[str, Any]] = []
    for qid, (line, record) in chosen.items():
        query = known.get(qid)
        if query is None:
            if strict_input:
                refused.append(_refuse(path, line, qid, "not a query of this dataset and split (--strict-input)"))
            summary.stray += 1
            continue
        try:
            rows.extend(line_rows(qid, line, record, query))
        except BadInputError as exc:
            refused.append(exc)
    if refused and not score_the_rest:
        raise _refused_lines(path, refused)
    summary.refused = len(refused)
    answered = {row["qid"] for row in rows}
    summary.unanswered = sum(1 for q in known.values() if q.qid not in answered)
    if not rows:
        raise BadInputError(path, None, "no prediction in the file answers a query of this dataset and split")
    return pl.DataFrame(rows, schema=bulk_files.PREDICTION_SCHEMA), summary
