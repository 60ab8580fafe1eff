"""What model SQL may call: the functions SQLite itself has, as sqlglot parses them.

LOFT executes model SQL on SQLite (Spider's engine), so a function SQLite lacks fails there; the
sandbox runs it on DuckDB, which has many more (some take SQL or names as strings and run them:
`query`, `query_table`; some read the engine's settings). The static check is therefore an
allow-list: a function node of the parsed SQLite query must be one that SQLite's own functions
(https://www.sqlite.org/lang_corefunc.html, lang_aggfunc.html, lang_datefunc.html,
lang_mathfunc.html, windowfunctions.html, json1.html) or its operators parse to. Left out on
purpose: load_extension, the sqlite_* introspection functions, randomblob and zeroblob (blobs of
any size), and the table-valued json_each / json_tree.
"""

from __future__ import annotations

import functools

import sqlglot
from sqlglot import exp

SQLITE_FUNCTIONS = (
    # core scalar functions
    "abs", "char", "coalesce", "concat", "concat_ws", "format", "glob", "hex", "ifnull", "iif", "instr",
    "length", "like", "likelihood", "likely", "lower", "ltrim", "max", "min", "nullif", "octet_length",
    "printf", "quote", "random", "replace", "round", "rtrim", "sign", "soundex", "substr", "substring",
    "trim", "typeof", "unhex", "unicode", "unlikely", "upper",
    # aggregates
    "avg", "count", "group_concat", "string_agg", "sum", "total",
    # window functions
    "row_number", "rank", "dense_rank", "percent_rank", "cume_dist", "ntile", "lag", "lead", "first_value",
    "last_value", "nth_value",
    # date and time
    "date", "time", "datetime", "julianday", "unixepoch", "strftime", "timediff",
    # math
    "acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "ceil", "ceiling", "cos", "cosh", "degrees",
    "exp", "floor", "ln", "log", "log10", "log2", "mod", "pi", "pow", "power", "radians", "sin", "sinh", "sqrt",
    "tan", "tanh", "trunc",
    # JSON (scalar and aggregate)
    "json", "json_array", "json_array_length", "json_extract", "json_insert", "json_object", "json_patch",
    "json_remove", "json_replace", "json_set", "json_type", "json_valid", "json_quote", "json_group_array",
    "json_group_object",
)  # fmt: skip
# SQLite expressions that sqlglot parses to function nodes.
SQLITE_OPERATORS = (
    "CASE WHEN a THEN b ELSE c END",
    "CASE a WHEN 1 THEN b END",
    "CAST(a AS INTEGER)",
    "a AND b",
    "a OR b",
    "NOT a",
    "EXISTS (SELECT 1)",
    "a IN (1, 2)",
    "a BETWEEN 1 AND 2",
    "a LIKE 'x' ESCAPE '!'",
    "a GLOB 'x'",
    "a IS NULL",
    "a IS NOT b",
    "a || b",
    "a COLLATE NOCASE",
    "count(DISTINCT a)",
    "count(*)",
    "a -> '$.b'",
    "a ->> '$.b'",
    "CURRENT_DATE",
    "CURRENT_TIME",
    "CURRENT_TIMESTAMP",
    "a IS NOT DISTINCT FROM b",
)


@functools.cache
def allowed() -> tuple[frozenset[type[exp.Func]], frozenset[str]]:
    """The function node classes, and the names of unnamed (Anonymous) functions, that SQLite's
    functions and operators parse to (sqlite dialect)."""
    classes: set[type[exp.Func]] = set()
    names: set[str] = set()
    texts = [f"{name}({args})" for name in SQLITE_FUNCTIONS for args in ("", "a", "a, b", "a, b, c")]
    texts += [f"{name}(a) OVER (ORDER BY b)" for name in SQLITE_FUNCTIONS]
    for text in [*texts, *SQLITE_OPERATORS]:
        try:
            tree = sqlglot.parse_one(f"SELECT {text} FROM t", read="sqlite")
        except sqlglot.errors.SqlglotError:
            continue
        for node in tree.walk():
            if isinstance(node, exp.Anonymous):
                names.add(node.name.lower())
            elif isinstance(node, exp.Func):
                classes.add(type(node))
    return frozenset(classes), frozenset(names & set(SQLITE_FUNCTIONS))


def disallowed(node: exp.Func) -> str | None:
    """The name of a function node SQLite does not have (None when it is one of SQLite's)."""
    classes, names = allowed()
    if isinstance(node, exp.Anonymous):
        return None if node.name.lower() in names else node.name.lower()
    return None if type(node) in classes else node.sql_name().lower()
