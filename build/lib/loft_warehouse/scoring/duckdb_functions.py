"""The scoring functions SQL cannot express well, registered on a DuckDB connection.

The scoring models call these by name (`loft_parse_loft(raw_text)`, `loft_normalize(x)`, ...),
so every connection that builds or reads the scoring models needs `register(con)`: dbt gets it
from the profile plugin (`loft_warehouse.dbt_boundary.plugin`), tests and scripts call it.
Everything else about the metrics stays in SQL. Python's str.strip() is here too, as SQL macros
(`loft_python_strip`), the one definition the scoring models and the answer-file reader share.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

import duckdb
import pyarrow as pa
from duckdb.func import FunctionNullHandling, PythonUDFType
from duckdb.sqltypes import BIGINT, BOOLEAN, DOUBLE, VARCHAR

from loft_warehouse.answers import normalize, parse
from loft_warehouse.scoring import intervals, metrics
from loft_warehouse.settings import PROJECT_ROOT

VARCHAR_LIST = duckdb.list_type(VARCHAR)
PARSED = duckdb.struct_type(
    {"answers": VARCHAR_LIST, "answers_json": VARCHAR, "status": VARCHAR, "detail": VARCHAR, "payload": VARCHAR}
)
INTERVAL = duckdb.struct_type({"low": DOUBLE, "high": DOUBLE, "method": VARCHAR})
EXEC_ACC = duckdb.struct_type({"loft": DOUBLE, "strict": DOUBLE})

# What Python's str.strip() removes (str.isspace()): LOFT compares every ID as str(x).strip(),
# where DuckDB's trim() removes spaces only.
PYTHON_WHITESPACE = "".join(ch for ch in map(chr, range(0x3001)) if ch.isspace())
# As one SQL literal (none of them is a quote): chr() joins made each connection's macros cost ~12 ms.
_WHITESPACE = f"'{PYTHON_WHITESPACE}'"
# A string whose ends are visible ASCII needs no trim (the common case, and trim() is costly).
_VISIBLE_ENDS = "ord(s) between 33 and 127 and ord(right(s, 1)) between 33 and 127"
SQL_MACROS = {
    # str.strip() of s.
    "loft_python_strip(s)": f"case when {_VISIBLE_ENDS} then s else trim(s, {_WHITESPACE}) end",
    # s.strip() == "". A case, not an and: DuckDB evaluates both sides of an and.
    "loft_is_python_blank(s)": f"case when ord(s) between 33 and 127 then false else trim(s, {_WHITESPACE}) = '' end",
    # An RE2 character class matching any one character str.isspace() holds for.
    "loft_python_whitespace_class()": "'[" + "".join(f"\\x{{{ord(ch):x}}}" for ch in PYTHON_WHITESPACE) + "]'",
    # An aggregate digest of a group's rows (r: the row alias), equal for equal multisets of rows:
    # the count and two row hashes summed. What the incremental models and the per-run quality
    # verdicts key on.
    "loft_rows_digest(r)": "count(*)::varchar || ':' || sum(hash(r)::hugeint)::varchar || ':' "
    "|| sum(hash(r, 'second')::hugeint)::varchar",
}


def _parse_response(
    text: str | None, rule: str, task: str | None, method: str | None, stage: int | None, payload: str | None
) -> dict[str, Any]:
    """One response read under a rule by its method and stage (methods.parsing)."""
    from loft_warehouse.methods.parsing import parse_response

    result = parse_response(text, rule, task, method or "cic", int(stage or 1), payload)
    return {
        "answers": parse.answer_texts(result.answers),
        "answers_json": json.dumps(parse.to_json_value(result.answers), ensure_ascii=False),
        "status": result.status,
        "detail": result.detail,
        "payload": None if result.payload is None else json.dumps(result.payload, ensure_ascii=False),
    }


def _exec_accuracy() -> Any:
    """The SQL track's scorer, imported on first use (it is another area's module)."""
    from loft_warehouse.sql import exec_accuracy

    return exec_accuracy


def _exec_acc(gold_loft: str, answer_loft: str, gold: str, answer_strict: str, ordered: bool) -> dict[str, float]:
    """Both rules of one turn in one call, so that text the two rules share (an imported answer,
    a gold LOFT reads as the query's own) is parsed once."""
    scorer = _exec_accuracy()
    parsed_gold = json.loads(gold)
    parsed_strict = json.loads(answer_strict)
    return {
        "loft": scorer.exec_acc_loft(
            parsed_gold if gold_loft == gold else json.loads(gold_loft),
            parsed_strict if answer_loft == answer_strict else json.loads(answer_loft),
        ),
        "strict": scorer.exec_acc_strict(parsed_gold, parsed_strict, ordered=ordered),
    }


def _stage_ids(name: str, stage: int) -> str | None:
    """What the parsed items of a method's stage name (catalogue Stage.ids): 'shown' IDs of the
    prompt's documents, 'pages' (page p = document position p - 1), or None."""
    from loft_warehouse.methods.catalogue import method

    chosen = method(name)
    return chosen.stage(int(stage)).ids if 1 <= int(stage) <= chosen.n_stages else None


def _verifier(name: str) -> str | None:
    """The QUEST-LOFT verifier variant (Basic, CoT, QUEST, CoT - QUEST) of a method with a
    verification stage; None for any other method."""
    from loft_warehouse.methods.catalogue import method

    chosen = method(name)
    if not any(stage.parse == "verdict" for stage in chosen.stages):
        return None
    return {(False, False): "Basic", (True, False): "CoT", (False, True): "QUEST", (True, True): "CoT - QUEST"}[
        (chosen.cot, chosen.quest)
    ]


def _sql_operators(sql: str | None) -> list[str]:
    """The operator bins of a gold SQL query (sql.operators, LOFT Figure 6)."""
    from loft_warehouse.sql.operators import gold_operators

    return gold_operators(sql)


def _method_stages(name: str) -> int:
    """How many stages a method has (methods.catalogue)."""
    from loft_warehouse.methods.catalogue import method

    return method(name).n_stages


def _bootstrap(values: list[float], seed: int) -> dict[str, Any]:
    return _interval(intervals.bootstrap_interval(values, seed))


def _counted_bootstrap(distinct: list[float], counts: list[int], seed: int) -> dict[str, Any]:
    return _interval(intervals.counted_bootstrap_interval(distinct, counts, seed))


def _interval(interval: intervals.Interval) -> dict[str, Any]:
    return {"low": interval.low, "high": interval.high, "method": interval.method}


# Arrow types of the results, so a batch of NULLs still has the declared type.
_ARROW_STRING_LIST = pa.list_(pa.string())
_ARROW_PARSED = pa.struct(
    [
        ("answers", _ARROW_STRING_LIST),
        ("answers_json", pa.string()),
        ("status", pa.string()),
        ("detail", pa.string()),
        ("payload", pa.string()),
    ]
)
_ARROW_INTERVAL = pa.struct([("low", pa.float64()), ("high", pa.float64()), ("method", pa.string())])
_ARROW_EXEC_ACC = pa.struct([("loft", pa.float64()), ("strict", pa.float64())])


@dataclass(frozen=True)
class Function:
    """A scoring function: the Python callable, its SQL signature, and how it treats NULL."""

    function: Callable[..., Any]
    parameters: list[Any]
    returns: Any
    arrow_type: pa.DataType
    # False: NULL in any argument gives NULL. True: the callable sees None (the parsers answer "no_text").
    null_aware: bool = False

    def apply(self, *columns: pa.Array) -> pa.Array:
        """Apply the callable row by row to one Arrow batch (one Python call per batch, not per row)."""
        rows = zip(*(column.to_pylist() for column in columns), strict=True)
        results = [self.function(*row) if self.null_aware or all(v is not None for v in row) else None for row in rows]
        return pa.array(results, type=self.arrow_type)

    def udf(self) -> Callable[..., pa.Array]:
        """`apply` with exactly as many parameters as the SQL signature (DuckDB checks the arity)."""
        apply = self.apply
        by_arity: dict[int, Callable[..., pa.Array]] = {
            1: lambda a: apply(a),
            2: lambda a, b: apply(a, b),
            3: lambda a, b, c: apply(a, b, c),
            5: lambda a, b, c, d, e: apply(a, b, c, d, e),
            6: lambda a, b, c, d, e, f: apply(a, b, c, d, e, f),
        }
        return by_arity[len(self.parameters)]


FUNCTIONS: dict[str, Function] = {
    "loft_parse_response": Function(
        _parse_response, [VARCHAR, VARCHAR, VARCHAR, VARCHAR, BIGINT, VARCHAR], PARSED, _ARROW_PARSED, null_aware=True
    ),
    "loft_method_stages": Function(_method_stages, [VARCHAR], BIGINT, pa.int64()),
    "loft_normalize": Function(normalize.normalize_answer, [VARCHAR], VARCHAR, pa.string()),
    "loft_normalize_label": Function(normalize.normalize_label, [VARCHAR], VARCHAR, pa.string()),
    "loft_normalize_litm": Function(normalize.normalize_litm, [VARCHAR], VARCHAR, pa.string()),
    "loft_rr_words": Function(
        lambda text: sorted(normalize.rr_words(text)), [VARCHAR], VARCHAR_LIST, _ARROW_STRING_LIST
    ),
    "loft_f1_loft": Function(metrics.f1_loft, [VARCHAR_LIST, VARCHAR_LIST], DOUBLE, pa.float64()),
    "loft_f1_strict": Function(metrics.f1_strict, [VARCHAR_LIST, VARCHAR_LIST], DOUBLE, pa.float64()),
    "loft_assigned_matches": Function(metrics.assigned_matches, [VARCHAR_LIST, VARCHAR_LIST], BIGINT, pa.int64()),
    "loft_exec_acc": Function(_exec_acc, [VARCHAR, VARCHAR, VARCHAR, VARCHAR, BOOLEAN], EXEC_ACC, _ARROW_EXEC_ACC),
    "loft_bootstrap_interval": Function(_bootstrap, [duckdb.list_type(DOUBLE), BIGINT], INTERVAL, _ARROW_INTERVAL),
    "loft_counted_bootstrap_interval": Function(
        _counted_bootstrap, [duckdb.list_type(DOUBLE), duckdb.list_type(BIGINT), BIGINT], INTERVAL, _ARROW_INTERVAL
    ),
    "loft_stage_ids": Function(_stage_ids, [VARCHAR, BIGINT], VARCHAR, pa.string()),
    "loft_verifier": Function(_verifier, [VARCHAR], VARCHAR, pa.string()),
    "loft_sql_operators": Function(_sql_operators, [VARCHAR], VARCHAR_LIST, _ARROW_STRING_LIST, null_aware=True),
    "loft_mcnemar_exact": Function(intervals.mcnemar_exact_p, [BIGINT, BIGINT], DOUBLE, pa.float64()),
}


# What a stored score depends on besides its rows: the macros and models that compute it (the
# intermediate ones, and the predictions and scores views they read) and the Python it calls.
# The incremental scoring models key their rows by this as well.
SCORING_CODE = [
    "macros/*.sql",
    "models/*/intermediate/*.sql",
    "models/*/marts/*__predictions.sql",
    "models/*/marts/*__scores.sql",
    "python/loft_warehouse/answers/*.py",
    "python/loft_warehouse/methods/*.py",
    "python/loft_warehouse/scoring/*.py",
    "python/loft_warehouse/sql/*.py",
    "python/loft_warehouse/registry.py",
]


@cache
def scoring_code_version() -> str:
    """A digest of every file in SCORING_CODE (paths and contents), once per process."""
    digest = hashlib.sha256()
    for path in sorted(p for pattern in SCORING_CODE for p in PROJECT_ROOT.glob(pattern)):
        digest.update(str(path.relative_to(PROJECT_ROOT)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def register_sql_macros(con: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    """Create the SQL macros of SQL_MACROS, and loft_scoring_code_version(), on `con` (idempotent)."""
    for signature, body in SQL_MACROS.items():
        con.execute(f"create or replace temp macro {signature} as {body}")
    con.execute(f"create or replace temp macro loft_scoring_code_version() as '{scoring_code_version()}'")
    return con


def register(con: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    """Create every scoring function and SQL macro on `con` (idempotent: existing ones are replaced)."""
    register_sql_macros(con)
    for name, spec in FUNCTIONS.items():
        with contextlib.suppress(duckdb.InvalidInputException):
            con.remove_function(name)
        con.create_function(
            name,
            spec.udf(),
            spec.parameters,
            spec.returns,
            type=PythonUDFType.ARROW,
            null_handling=FunctionNullHandling.SPECIAL,
            side_effects=False,
        )
    return con
