"""LOFT answer and prediction files read column-wise in DuckDB: the fast path of upstream_files.

A million-line prediction file parsed line by line in Python takes over a minute; DuckDB splits
the file at "\\n" (as the line readers do), parses the JSON in parallel and checks it in SQL.
The fast path only takes files it reads exactly as the Python readers do: every non-blank line
a JSON object without repeated keys, the fields of the expected JSON types, answers that are
lists, single-turn answer files, and no refusal, no turn-count difference and no
--strict-input / --raw-generations. Anything else returns None and the caller reads the file
with the Python readers, which name the file and line of what they refuse, so messages and
upstream semantics have one source. SQL writes str() and json.dumps() of plain values (strings,
numbers, rows of them); values it cannot write as Python does (text with quotes, escapes or
non-ASCII characters beside other types, nested values, non-finite numbers) are rendered by the
same Python functions, from each line's own text.
"""

from __future__ import annotations

import json
import tempfile
import uuid
from pathlib import Path
from typing import Any

import duckdb
import polars as pl
import pyarrow as pa
from duckdb.func import FunctionNullHandling, PythonUDFType
from duckdb.sqltypes import BIGINT, VARCHAR

from loft_warehouse import settings
from loft_warehouse.answers.parse import answer_texts, loaded_json_text
from loft_warehouse.readers import lines_within, max_line_bytes, max_response_bytes
from loft_warehouse.registry import ID_TASKS
from loft_warehouse.scoring.duckdb_functions import register_sql_macros

# Escapes the fast path leaves to Python: surrogates and control characters, which DuckDB decodes
# differently or which json.dumps writes as escapes; a turn or gold with any of them is rendered
# by Python (an escaped backslash before such a letter only costs that detour).
_AWKWARD_ESCAPE = r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}"
_CONTROL_ESCAPE = r"\\[bfnrt]|\\u00[01][0-9a-fA-F]"


def _json_strings(expr: str) -> str:
    """json.dumps(list_of_strings, ensure_ascii=False) of a VARCHAR[] without control characters."""
    quoted = f"list_transform({expr}, lambda s: '\"' || replace(replace(s, '\\', '\\\\'), '\"', '\\\"') || '\"')"
    return f"'[' || array_to_string({quoted}, ', ') || ']'"


# A JSON string whose text Python's str(), repr() and json.dumps(ensure_ascii=False) all write
# plainly: printable ASCII without quotes or backslashes (DuckDB's JSON text holds the value).
_PLAIN_STRING = r'"[ !#-&(-\[\]-~]*"'


def _scalar_json(value: str) -> str:
    """json.dumps() of a JSON scalar as Python writes it after json.loads; NULL for anything
    else (an array, an object, a string that is not plain, a number that is not finite). An
    integer keeps its digits (DuckDB keeps a big one's text); a float is written by DuckDB,
    whose shortest double text is Python's repr."""
    text = f"{value}::varchar"
    return f"""case json_type({value})
        when 'VARCHAR' then case when regexp_full_match({text}, '{_PLAIN_STRING}') then {text} end
        when 'BIGINT' then {text}
        when 'UBIGINT' then {text}
        when 'DOUBLE' then case when regexp_full_match({text}, '-?[0-9]+') then {text}
                                when isfinite({value}::double) then ({value}::double)::varchar end
        when 'BOOLEAN' then {text}
        when 'NULL' then 'null'
    end"""


def _python_scalar(json_text: str, form: str) -> str:
    """str() (form "str") or repr() (form "repr") of a scalar from the text _scalar_json wrote:
    the same text but for a plain string's quotes and the names of true, false and null."""
    inner = f"substring({json_text}, 2, length({json_text}) - 2)"
    string = inner if form == "str" else f"chr(39) || {inner} || chr(39)"
    return f"""case left({json_text}, 1) when '"' then {string}
        when 't' then 'True' when 'f' then 'False' when 'n' then 'None' else {json_text} end"""


def _when_complete(items: str, name: str, value: str) -> str:
    """`value` of the list `items` (bound to the lambda variable `name`), NULL when an item is NULL."""
    return f"list_transform([{items}], lambda {name}: case when list_count({name}) = len({name}) then {value} end)[1]"


def _joined(items: str, name: str) -> str:
    """'[' + ', '.join(items) + ']', NULL when an item is NULL."""
    return _when_complete(items, name, f"'[' || array_to_string({name}, ', ') || ']'")


def _struct(fields: dict[str, str]) -> str:
    return "{" + ", ".join(f"'{name}': {value}" for name, value in fields.items()) + "}"


_CELLS = f"list_transform(json_extract(item, '$[*]'), lambda cell: {_scalar_json('cell')})"


def _python_json(expr: str) -> str:
    """json.dumps() of a JSON array of scalars and arrays of scalars (SQL rows, or a turn's
    answers) as Python writes it after json.loads; NULL when an item holds anything
    _scalar_json does not write."""
    item = f"case when json_type(item) = 'ARRAY' then {_joined(_CELLS, 'row')} else {_scalar_json('item')} end"
    return _joined(f"list_transform(json_extract({expr}, '$[*]'), lambda item: {item})", "texts")


def _python_item_texts(expr: str) -> str:
    """Of such an array, per item its json.dumps() (field json_text) and its str() (field
    str_text); a row's str() is the repr of its cells, read off their JSON text, so each cell
    is rendered once for both. A field is NULL where _python_json would be NULL."""
    cell_reprs = f"list_transform(row, lambda cell: {_python_scalar('cell', 'repr')})"
    row = _when_complete(
        _CELLS,
        "row",
        _struct(
            {
                "json_text": "'[' || array_to_string(row, ', ') || ']'",
                "str_text": f"'[' || array_to_string({cell_reprs}, ', ') || ']'",
            }
        ),
    )
    scalar_forms = _struct({"json_text": "scalar", "str_text": _python_scalar("scalar", "str")})
    scalar = f"list_transform([{_scalar_json('item')}], lambda scalar: {scalar_forms})[1]"
    item = f"case when json_type(item) = 'ARRAY' then {row} else {scalar} end"
    return f"list_transform(json_extract({expr}, '$[*]'), lambda item: {item})"


def _joined_json(item_texts: str) -> str:
    """_python_json of the array whose _python_item_texts are given."""
    return _joined(f"list_transform({item_texts}, lambda forms: forms.json_text)", "texts")


def _python_strs(item_texts: str) -> str:
    """The str() of each item whose _python_item_texts are given; NULL when one is unknown."""
    return _when_complete(f"list_transform({item_texts}, lambda forms: forms.str_text)", "texts", "texts")


def _connect(path: Path, fields: dict[str, str], allow_nan: bool, line_cap: int) -> duckdb.DuckDBPyConnection | None:
    """A connection holding the file's non-blank lines as `records` (line, text, and each field:
    the JSON at its path, parsed once), or None when the file is not one the fast path reads
    (gzip, not UTF-8, a line over line_cap, a carriage return that ends a line, the words
    candidate_path (a retrieval line may name one, which the Python reader refuses), malformed JSON, a
    repeated key at the top or under `metadata`, a surrogate escape, and without allow_nan a NaN
    or Infinity, which DuckDB reads and readers.loads refuses; a string holding those words also
    declines). A line that is not an object has no fields, which the callers' checks refuse."""
    if path.suffix == ".gz" or not path.is_file() or not lines_within(path, line_cap):
        return None
    con = settings.limit_memory(duckdb.connect(), Path(tempfile.gettempdir()) / f"loft-spill-{uuid.uuid4().hex}")
    register_sql_macros(con)
    names = list(fields)
    try:
        extracted = ", ".join(f"values[{i + 1}] as {name}" for i, name in enumerate(names))
        # The split is one row unnested (one thread). DuckDB scans a table in parallel only by row
        # group (122,880 rows), so the lines are a materialised CTE, whose scan every thread shares
        # at any size. Malformed JSON makes json_extract raise: the file then goes to the Python reader.
        con.execute(
            f"""
            create temp table records as
            with lines as materialized (
                select unnest(parts) as text, unnest(generate_series(1, len(parts))) as line
                from (select string_split(content, chr(10)) as parts from read_text($path))
            )
            select
                line, text, {extracted},
                (contains(text, '\\u') and regexp_matches(text, $awkward))
                    or contains(rtrim(text, chr(13)), chr(13)) or contains(text, 'candidate_path')
                    or len(keys) <> len(list_distinct(keys)) or len(meta_keys) <> len(list_distinct(meta_keys))
                    or (not $allow_nan and regexp_matches(text, 'NaN|Infinity'))
                    as is_odd
            from (
                select
                    line, text, json_extract(text, $paths) as values, json_keys(text) as keys,
                    {"coalesce(json_keys(text, '$.metadata'), [])" if "metadata" in fields else "[]"} as meta_keys
                from lines
                where not loft_is_python_blank(text)
            )
            """,
            {
                "paths": [fields[name] for name in names],
                "awkward": _AWKWARD_ESCAPE,
                "allow_nan": allow_nan,
                "path": str(path),
            },
        )
        odd = con.execute("select count(*) filter (where is_odd), count(*) from records").fetchone()
    except duckdb.Error:
        con.close()
        return None
    if odd is None or odd[0] or not odd[1]:
        con.close()
        return None
    return con


def _python_gold(text: str, task: str) -> str:
    """A single-turn query's gold as the Python reader writes it (numbers, escapes and all): the
    answers (RAG, SQL rows, which the shape checks have passed) or the gold pids (retrieval)."""
    answers = json.loads(text)["answers"]
    gold = [pair[0] for pair in answers] if task in ID_TASKS else answers
    return json.dumps(gold, ensure_ascii=False)


def _python_turn(text: str, turn: int) -> dict[str, Any]:
    """A turn's answers (str() of each) and their JSON, from the line as Python reads it."""
    output = json.loads(text)["model_outputs"][turn]
    return {"answers": answer_texts(output), "answers_json": loaded_json_text(output)}


def _register_python(con: duckdb.DuckDBPyConnection) -> None:
    def golds(texts: pa.Array, tasks: pa.Array) -> pa.Array:
        return pa.array([_python_gold(t, k) for t, k in zip(texts.to_pylist(), tasks.to_pylist(), strict=True)])

    def turns(texts: pa.Array, numbers: pa.Array) -> pa.Array:
        rows = [_python_turn(t, n) for t, n in zip(texts.to_pylist(), numbers.to_pylist(), strict=True)]
        return pa.array(rows, type=pa.struct([("answers", pa.list_(pa.string())), ("answers_json", pa.string())]))

    turn_type = duckdb.struct_type({"answers": duckdb.list_type(VARCHAR), "answers_json": VARCHAR})
    udfs: list[tuple[str, Any, list[Any], Any]] = [
        ("py_gold", golds, [VARCHAR, VARCHAR], VARCHAR),
        ("py_turn", turns, [VARCHAR, BIGINT], turn_type),
    ]
    for name, function, parameters, returns in udfs:
        con.create_function(
            name,
            function,
            parameters,
            returns,
            type=PythonUDFType.ARROW,
            null_handling=FunctionNullHandling.SPECIAL,
            side_effects=False,
        )


def _types(expr: str, path: str = "$[*]") -> str:
    return f"coalesce(json_type({expr}, '{path}'), [])"


def _all(expr: str, *types: str, path: str = "$[*]") -> str:
    """Every element of the JSON array at expr (at path) is of one of types; true for []."""
    names = ", ".join(f"'{t}'" for t in types)
    return f"(list_bool_and(list_transform({_types(expr, path)}, lambda t: t in ({names}))) is not false)"


def _is(expr: str, *types: str) -> str:
    names = ", ".join(f"'{t}'" for t in types)
    return f"(coalesce(json_type({expr}), 'NULL') in ({names}))"


def _pairs(expr: str) -> str:
    """The JSON at expr is [[pid, ...], ...] with string pids first (no bare pair, no [])."""
    return (
        f"({_is(expr, 'ARRAY')} and {_all(expr, 'ARRAY')} and {_all(expr, 'VARCHAR', path='$[*][0]')}"
        f" and len({_types(expr)}) = len({_types(expr, '$[*][0]')}))"
    )


def _pids(expr: str) -> str:
    return f"coalesce(json_extract_string({expr}, '$[*][0]'), [])::varchar[]"


def _strings(expr: str) -> str:
    return f"coalesce(json_extract_string({expr}, '$[*]'), [])::varchar[]"


def _has_control(expr: str) -> str:
    """The JSON text at expr has an escape json.dumps writes as one (or an escaped backslash)."""
    return f"coalesce(regexp_matches({expr}::varchar, '{_CONTROL_ESCAPE}'), false)"


ANSWER_FIELDS = {
    "qid": "$.qid",
    "query_text": "$.query_text",
    "answers": "$.answers",
    "metadata": "$.metadata",
    "qrels": "$.metadata.qrels",
    "db_id": "$.metadata.db_id",
    "sql_query": "$.metadata.sql_query",
    "candidates": "$.metadata.candidate_pids",
}
# Per task: which answer files the fast path reads, their gold pids, and the gold as a list of
# strings when it is one (its JSON is then written in SQL; otherwise by Python from the line).
_ANSWER_SHAPES = {
    "retrieval": (_pairs("answers"), _pids("answers"), "answers"),
    "mm": (_pairs("answers"), _pids("answers"), "answers"),
    "rag": (
        f"({_is('qrels', 'NULL')} or {_pairs('qrels')})",
        _pids("qrels"),
        f"case when {_is('answers', 'ARRAY')} and {_all('answers', 'VARCHAR')} then answers end",
    ),
    "sql": (
        " and ".join(
            [
                _is("answers", "ARRAY"),
                _all("answers", "ARRAY"),
                _is("db_id", "NULL", "VARCHAR"),
                _is("sql_query", "NULL", "VARCHAR"),
                f"({_is('candidates', 'NULL')} or ({_is('candidates', 'ARRAY')} and {_all('candidates', 'VARCHAR')}))",
            ]
        ),
        _strings("candidates"),
        "null::json",
    ),
}


def write_answer_file(path: Path, task: str, dataset: str, split: str, multi_answer: bool, target: Path) -> bool:
    """Write the queries of a single-turn retrieval, RAG or SQL answer file (JSON lines) to
    `target` as parquet in upstream_files.SCORED_QUERY_SCHEMA, as answer_queries + queries_frame
    make them, straight from DuckDB: a million queries never become a Python frame, whose
    memory the process would keep through the prediction file's read. False when the file
    needs the Python reader (nothing is written then)."""
    if path.suffix == ".json" or task not in _ANSWER_SHAPES:
        return False
    con = _connect(path, ANSWER_FIELDS, allow_nan=False, line_cap=max_line_bytes())
    if con is None:
        return False
    try:
        return _write_answer_file(con, path, task, dataset, split, multi_answer, target)
    except duckdb.Error:
        target.unlink(missing_ok=True)
        return False
    finally:
        con.close()


def _write_answer_file(
    con: duckdb.DuckDBPyConnection, path: Path, task: str, dataset: str, split: str, multi_answer: bool, target: Path
) -> bool:
    _register_python(con)
    shape, gold_pids, gold_list = _ANSWER_SHAPES[task]
    checks = con.execute(
        f"""
        select
            count(*) filter (where not coalesce(
                {_is("qid", "VARCHAR", "UBIGINT", "BIGINT")} and {_is("query_text", "VARCHAR")} and answers is not null
                and {_is("metadata", "NULL", "OBJECT")} and {shape}, false)),
            count(*) = max(line)
        from records
        """
    ).fetchone()
    if checks is None or checks[0]:
        return False
    # A query's rank is its place among the file's non-blank lines; without a blank line before
    # the last query that is line - 1, which needs no window over the whole file.
    rank = "line - 1" if checks[1] else "row_number() over (order by line) - 1"
    sql = task == "sql"
    gold_json = _json_strings("gold_pids" if task in ID_TASKS else _strings("gold_list"))
    # DuckDB keeps insertion order, so the rows are written in file order.
    con.execute(
        f"""
        copy (
            with base as (
                select
                    *,
                    {gold_pids} as gold_pids,
                    {gold_list} as gold_list,
                    qid ->> '$' as qid_text,
                    query_text ->> '$' as question,
                    {"db_id ->> '$'" if sql else "null::varchar"} as db_name,
                    {_python_json("answers") if sql else "null::varchar"} as rows_json
                from records
            )
            select
                $task as task,
                $dataset as dataset,
                coalesce(nullif(db_name, ''), $dataset) as corpus_id,
                $split as split,
                qid_text as qid,
                qid_text as upstream_qid,
                0::bigint as turn,
                1::bigint as n_turns,
                loft_python_strip(question) as query_text,
                case when gold_list is not null and not {_has_control("gold_list")} then {gold_json}
                     when rows_json is not null then rows_json
                     else py_gold(text, $task) end as gold,
                gold_pids,
                db_name as db_id,
                {"sql_query ->> '$'" if sql else "null::varchar"} as gold_sql,
                null::boolean as gold_is_ordered,
                ({rank})::bigint as query_rank,
                $multi as is_multi_answer
            from base
        ) to {sql_string(target)} (format parquet)
        """,
        {"task": task, "dataset": dataset, "split": split, "multi": multi_answer},
    )
    return True


def sql_string(path: Path) -> str:
    """A path as a SQL string literal, for the places DuckDB takes no parameter (COPY's file,
    the file list a view or relation keeps)."""
    return "'" + str(path).replace("'", "''") + "'"


PREDICTION_SCHEMA: dict[str, Any] = {
    "qid": pl.String,
    "turn": pl.Int64,
    "n_turns": pl.Int64,
    "raw_text": pl.String,
    "given_answers": pl.List(pl.String),
    "given_answers_json": pl.String,
    "gold_loft": pl.String,
    "id_space": pl.String,
    "import_file": pl.String,
    "import_line": pl.Int64,
}
PREDICTION_FIELDS = {"qid": "$.qid", "num_turns": "$.num_turns", "model_outputs": "$.model_outputs"}


def prediction_frame(
    path: Path, queries: pl.DataFrame | pl.LazyFrame, multi_answer: bool
) -> tuple[pl.DataFrame, dict[str, int]] | None:
    """The scored turns of a prediction file (PREDICTION_SCHEMA) and the counts of what the
    upstream semantics did (upstream_files.Summary's fields), as prediction_rows makes them
    without --strict-input or --raw-generations; None when the file needs the Python reader
    (a line it refuses, a turn-count difference, a string turn, ...)."""
    # A line longer than a reply may be goes to the Python reader, which measures its outputs.
    con = _connect(path, PREDICTION_FIELDS, allow_nan=True, line_cap=min(max_line_bytes(), max_response_bytes()))
    if con is None:
        return None
    try:
        return _prediction_frame(con, path, queries, multi_answer)
    except duckdb.Error:
        return None
    finally:
        con.close()


def _prediction_frame(
    con: duckdb.DuckDBPyConnection, path: Path, queries: pl.DataFrame | pl.LazyFrame, multi_answer: bool
) -> tuple[pl.DataFrame, dict[str, int]] | None:
    _register_python(con)
    con.register("query_turns", queries.lazy().select("upstream_qid", "qid", "turn").collect().to_arrow())
    valid = con.execute(
        f"""
        select count(*), count(*) filter (where not coalesce(
            {_is("qid", "VARCHAR")} and {_is("num_turns", "UBIGINT")} and num_turns::varchar <> '0'
            and {_is("model_outputs", "ARRAY")} and json_array_length(model_outputs) > 0, false))
        from records
        """
    ).fetchone()
    if valid is None or valid[1]:
        return None
    con.execute(
        """
        create temp table chosen as
        with last_lines as (
            select qid ->> '$' as qid_text, max(line) as line, min(line) as first_line
            from records
            group by qid_text
        )
        select
            last_lines.qid_text as qid, last_lines.line, last_lines.first_line,
            records.num_turns::bigint as num_turns, json_array_length(records.model_outputs) as n_outputs
        from last_lines
        inner join records using (line);

        create temp table known as
        select upstream_qid, arg_min(qid, turn) as qid, count(*) as expected
        from query_turns
        group by upstream_qid;

        create temp table matched as
        select chosen.*, known.qid as query_qid, known.expected,
               case when $multi then 1 else chosen.num_turns end as scored
        from chosen
        inner join known on known.upstream_qid = chosen.qid
        """,
        {"multi": multi_answer},
    )
    counts = con.execute(
        """
        select
            (select count(*) from chosen) - count(*) as stray,
            count(*) filter (where n_outputs > scored) as truncated,
            count(*) filter (where n_outputs < scored or ($multi and expected > 1)
                                   or (num_turns <> expected and not $multi)) as refused,
            (select count(*) from known where qid not in (select query_qid from matched)) as unanswered,
            count(*) as answered
        from matched
        """,
        {"multi": multi_answer},
    ).fetchone()
    if counts is None:
        return None
    stray, truncated, refused, unanswered, answered = counts
    if refused or not answered:
        return None
    # Each scored turn once, in file order, with the strings and texts the SQL renders and, only
    # where it cannot, the line's text for Python. Then nothing else is needed: the fetch below reads
    # this table alone, in insertion order, with every other table dropped.
    con.execute(
        f"""
        create temp table turns as
        with expanded as materialized (
            select
                scored_turns.line, scored_turns.first_line, scored_turns.query_qid, scored_turns.expected,
                scored_turns.turn, records.text, records.model_outputs -> scored_turns.turn as output
            from (select *, unnest(generate_series(0, scored - 1)) as turn from matched) as scored_turns
            inner join records using (line)
        ),
        typed as (
            select
                *,
                case when {_all("output", "VARCHAR")} and not {_has_control("output")}
                     then {_strings("output")} end as strings
            from expanded
        ),
        itemised as (
            select *, case when strings is null then {_python_item_texts("output")} end as item_texts
            from typed
        ),
        rendered as (
            select *, {_python_strs("item_texts")} as sql_answers, {_joined_json("item_texts")} as sql_answers_json
            from itemised
        )
        select
            line, first_line, query_qid, expected, turn, json_type(output) as output_type, strings,
            sql_answers, sql_answers_json,
            case when strings is null and (sql_answers is null or sql_answers_json is null) then text end as text
        from rendered
        order by first_line, turn;

        drop table records;
        drop table chosen;
        drop table matched;
        drop table known;
        """
    )
    non_lists = con.execute("select count(*) from turns where output_type <> 'ARRAY'").fetchone()
    if non_lists is None or non_lists[0]:
        return None
    frame = con.execute(
        f"""
        with rendered as (
            select *, case when text is not null then py_turn(text, turn) end as from_python
            from turns
        )
        select
            query_qid as qid,
            turn,
            expected as n_turns,
            null::varchar as raw_text,
            coalesce(from_python.answers, sql_answers, strings) as given_answers,
            coalesce(from_python.answers_json, sql_answers_json, {_json_strings("strings")}) as given_answers_json,
            null::varchar as gold_loft,
            'pid' as id_space,
            $file as import_file,
            line as import_line,
            first_line
        from rendered
        """,
        {"file": str(path)},
    ).pl()
    # DuckDB keeps insertion order, so this sort is only a safeguard; an ORDER BY here made DuckDB
    # hold the whole result twice.
    later_line = pl.col("first_line").diff() > 0
    later_turn = (pl.col("first_line").diff() == 0) & (pl.col("turn").diff() > 0)
    if not frame.select((later_line | later_turn).all()).item():
        frame = frame.sort("first_line", "turn")
    summary = {
        "lines": valid[0],
        "duplicates": valid[0] - answered - stray,
        "stray": stray,
        "truncated": truncated,
        "fewer_turns": 0,
        "unanswered": unanswered,
    }
    return frame.select([pl.col(name).cast(kind) for name, kind in PREDICTION_SCHEMA.items()]), summary
