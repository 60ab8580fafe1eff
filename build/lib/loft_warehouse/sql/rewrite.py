"""Spider's SQLite gold SQL, rewritten as sqlglot expression transforms to run in DuckDB.

Two steps. `prepare` fixes what both engines need over the dumped tables: Spider spellings of
tables and columns that the dump's authors renamed, and double-quoted string literals (SQLite
reads `"JetBlue Airways"` as a string when no column has that name). `to_duckdb` then qualifies
and types the query against the schema and applies one transform per SQLite/DuckDB difference:

- bare columns in an aggregate query: SQLite takes them from the row of the single min()/max()
  (ARG_MIN/ARG_MAX), else from one row of the group (ANY_VALUE); with `row_order` both become
  exactly SQLite's row (see `sqlite_order`, which also breaks ORDER BY ties as SQLite does);
- integer division truncates (`//`, given the operand types), and x/0 is NULL;
- LIKE is case-insensitive (ILIKE);
- a text column compared with a number compares text (the number becomes a string literal);
- EXCEPT/INTERSECT never match a number with text (DuckDB would cast both to text);
- CAST of text to a number (also inside sum/avg of a text column) keeps the numeric prefix
  ('12abc' -> 12, 'abc' -> 0), CAST of a real to an integer truncates;
- round() returns a double;
- booleans are the integers 0/1.
"""

from __future__ import annotations

import re

import sqlglot
from sqlglot import exp
from sqlglot.optimizer.annotate_types import annotate_types
from sqlglot.optimizer.qualify import qualify

from loft_warehouse.sql.schema import Schema
from loft_warehouse.sql.sqlite_order import sqlite_row_order

_INTEGER_TYPES = exp.DataType.INTEGER_TYPES
_NUMBER_TYPES = exp.DataType.NUMERIC_TYPES
_TEXT_TYPES = exp.DataType.TEXT_TYPES
_COMPARISONS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE)
_INT_PREFIX = r"^\s*([-+]?[0-9]+)"
_REAL_PREFIX = r"^\s*([-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?)"


def plain(message: str) -> str:
    """An error message without terminal colour codes (sqlglot underlines the bad token)."""
    return re.sub(r"\x1b\[[0-9;]*m", "", message)


class RewriteError(ValueError):
    """The gold SQL cannot be read or rewritten (recorded as the query's error)."""


def parse(sql: str) -> exp.Expr:
    """Parse one statement of SQLite SQL."""
    try:
        trees = sqlglot.parse(sql, read="sqlite")
    except sqlglot.errors.SqlglotError as exc:
        raise RewriteError(f"unparseable SQL: {plain(str(exc))}") from exc
    statements = [t for t in trees if t is not None]
    if len(statements) != 1:
        raise RewriteError(f"expected one statement, found {len(statements)}")
    return statements[0]


def parse_duckdb(sql: str) -> exp.Expr:
    """Parse SQL written by `to_duckdb` (or any DuckDB statement)."""
    try:
        return sqlglot.parse_one(sql, read="duckdb")
    except sqlglot.errors.SqlglotError as exc:
        raise RewriteError(f"unparseable SQL: {plain(str(exc))}") from exc


def prepare(sql: str, schema: Schema) -> exp.Expr:
    """Parse and fix names and double-quoted literals; valid for both engines."""
    tree = parse(sql)
    columns = schema.column_names()

    def fix(node: exp.Expr) -> exp.Expr:
        if isinstance(node, exp.Table) and node.name.lower() in schema.table_aliases:
            node.set("this", exp.to_identifier(schema.table_aliases[node.name.lower()]))
        elif isinstance(node, exp.Column):
            name = node.name.lower()
            identifier = node.this
            if not node.table and isinstance(identifier, exp.Identifier) and identifier.quoted and name not in columns:
                return exp.Literal.string(identifier.this)
            if name in schema.column_aliases:
                node.set("this", exp.to_identifier(schema.column_aliases[name]))
        return node

    return tree.transform(fix, copy=False)


def to_sqlite(sql: str, schema: Schema) -> str:
    """The gold SQL for the SQLite reference over the dumped tables (names fixed only)."""
    return prepare(sql, schema).sql(dialect="sqlite")


def _is(node: exp.Expr, types: set) -> bool:
    return node.type is not None and node.type.this in types


def _scope_select(node: exp.Expr) -> exp.Expr | None:
    parent = node.parent
    while parent is not None and not isinstance(parent, exp.Select):
        parent = parent.parent
    return parent


def _inside(node: exp.Expr, kinds: tuple, stop: exp.Expr) -> bool:
    parent = node.parent
    while parent is not None and parent is not stop:
        if isinstance(parent, kinds):
            return True
        parent = parent.parent
    return False


def _own_nodes(select: exp.Select, kind: type[exp.Expr]) -> list[exp.Expr]:
    """Nodes of a kind that belong to this SELECT, not to a nested one."""
    return [n for n in select.find_all(kind) if _scope_select(n) is select]


def _under_key(node: exp.Expr, keys: set[str], select: exp.Select) -> bool:
    parent = node.parent
    while parent is not None and parent is not select:
        if parent.sql() in keys:
            return True
        parent = parent.parent
    return False


def _bare_columns(select: exp.Select) -> None:
    aggregates = [a for a in _own_nodes(select, exp.AggFunc) if not _inside(a, (exp.Window,), select)]
    group = select.args.get("group")
    if not aggregates and not group:
        return
    keys = {k.sql() for k in group.expressions} if group else set()
    extremes = [a for a in aggregates if isinstance(a, exp.Max | exp.Min)]
    for column in _own_nodes(select, exp.Column):
        if not isinstance(column, exp.Column) or not column.table or _inside(column, (exp.AggFunc, exp.Window), select):
            continue
        if column.sql() in keys or _under_key(column, keys, select):
            continue
        if _inside(column, (exp.Group, exp.Where, exp.Join, exp.From), select):
            continue
        wrapped: exp.Expr
        if len(extremes) == 1:
            pick = exp.ArgMax if isinstance(extremes[0], exp.Max) else exp.ArgMin
            wrapped = pick(this=column.copy(), expression=extremes[0].this.copy())
        else:
            wrapped = exp.AnyValue(this=column.copy())
        if isinstance(column.parent, exp.Select):
            wrapped = exp.alias_(wrapped, column.name)
        column.replace(wrapped)


def _number_text(literal: exp.Literal) -> exp.Literal:
    return exp.Literal.string(literal.this)


def _text_vs_number(node: exp.Expr) -> None:
    """SQLite applies a text column's affinity to a bare number: the comparison is textual."""
    if isinstance(node, _COMPARISONS):
        sides = [node.this, node.expression]
        for i, side in enumerate(sides):
            other = sides[1 - i]
            if (
                isinstance(side, exp.Column)
                and _is(side, _TEXT_TYPES)
                and isinstance(other, exp.Literal)
                and not other.is_string
            ):
                other.replace(_number_text(other))
    elif isinstance(node, exp.In) and isinstance(node.this, exp.Column) and _is(node.this, _TEXT_TYPES):
        for item in node.expressions:
            if isinstance(item, exp.Literal) and not item.is_string:
                item.replace(_number_text(item))
    elif isinstance(node, exp.Between) and isinstance(node.this, exp.Column) and _is(node.this, _TEXT_TYPES):
        for key in ("low", "high"):
            bound = node.args.get(key)
            if isinstance(bound, exp.Literal) and not bound.is_string:
                bound.replace(_number_text(bound))


def _kind(node: exp.Expr) -> str | None:
    if _is(node, _NUMBER_TYPES | {exp.DataType.Type.BOOLEAN}):
        return "number"
    return "text" if _is(node, _TEXT_TYPES) else None


def _set_operation_types(node: exp.Expr) -> None:
    """SQLite compares the rows of EXCEPT/INTERSECT branches value by value, never converting:
    a number never equals text (3 EXCEPT '3' keeps 3). DuckDB first casts both branches to a
    common type (3 becomes '3'). Where a column is a number in one branch and text in the
    other, only rows NULL there can match, so the right branch keeps just those rows, typed as
    the left branch's column (the result keeps the left branch's values and types)."""
    if not isinstance(node, exp.Except | exp.Intersect):
        return
    lefts, rights = node.this.selects, node.expression.selects
    if len(lefts) != len(rights):
        return
    mixed = [
        i
        for i, (a, b) in enumerate(zip(lefts, rights, strict=True))
        if None not in (_kind(a), _kind(b)) and _kind(a) != _kind(b)
    ]
    if not mixed:
        return
    names = [exp.to_identifier(f"_col_{i}") for i in range(len(rights))]
    branch = exp.Subquery(
        this=node.expression.copy(), alias=exp.TableAlias(this=exp.to_identifier("_right"), columns=names)
    )
    columns = [
        exp.cast(exp.Null(), lefts[i].type.copy()) if i in mixed else exp.column(name.copy(), "_right")
        for i, name in enumerate(names)
    ]
    only_nulls = exp.and_(*(exp.column(names[i].copy(), "_right").is_(exp.Null()) for i in mixed))
    node.set("expression", exp.select(*columns).from_(branch).where(only_nulls))


def _numeric_prefix(value: exp.Expr, integer: bool) -> exp.Expr:
    """SQLite's CAST(text AS INTEGER/REAL): the longest numeric prefix, 0 when there is none."""
    pattern = _INT_PREFIX if integer else _REAL_PREFIX
    target = "BIGINT" if integer else "DOUBLE"
    prefix = exp.RegexpExtract(this=value.copy(), expression=exp.Literal.string(pattern), group=exp.Literal.number(1))
    number = exp.cast(exp.Nullif(this=prefix, expression=exp.Literal.string("")), target)
    return exp.Case(
        ifs=[exp.If(this=exp.Is(this=value.copy(), expression=exp.Null()), true=exp.Null())],
        default=exp.Coalesce(this=number, expressions=[exp.Literal.number(0)]),
    )


def _cast(node: exp.Cast) -> exp.Expr:
    target = node.to.this
    integer = target in _INTEGER_TYPES
    real = target in (exp.DataType.Type.DOUBLE, exp.DataType.Type.FLOAT, exp.DataType.Type.DECIMAL)
    if (integer or real) and _is(node.this, _TEXT_TYPES):
        return _numeric_prefix(node.this, integer)
    if integer and _is(node.this, _NUMBER_TYPES) and not _is(node.this, _INTEGER_TYPES):
        return exp.cast(exp.Trunc(this=node.this.copy()), "BIGINT")
    return node


def _sqlite_semantics(node: exp.Expr) -> exp.Expr:
    if isinstance(node, exp.Div):
        if _is(node.this, _INTEGER_TYPES) and _is(node.expression, _INTEGER_TYPES):
            return exp.IntDiv(this=node.this, expression=node.expression)
        divisor = exp.Nullif(this=node.expression, expression=exp.Literal.number(0))
        return exp.Div(this=node.this, expression=divisor)
    if isinstance(node, exp.Like):
        return exp.ILike(this=node.this, expression=node.expression)
    if isinstance(node, exp.Cast):
        return _cast(node)
    if isinstance(node, exp.Avg | exp.Sum) and _is(node.this, _TEXT_TYPES):
        node.set("this", _numeric_prefix(node.this, integer=False))
        return node
    if isinstance(node, exp.Round):
        return exp.cast(node.copy(), "DOUBLE")
    if isinstance(node, exp.Column) and _is(node, {exp.DataType.Type.BOOLEAN}):
        return exp.cast(node.copy(), "BIGINT")
    return node


def _tie_values(pick: exp.ArgMax | exp.ArgMin, low: bool) -> exp.Expr:
    """The least (low) or greatest value over every row tied at the group's extreme key."""
    name, extreme = ("ARG_MAX", "MAX") if isinstance(pick, exp.ArgMax) else ("ARG_MIN", "MIN")
    value, key = pick.this.sql("duckdb"), pick.expression.sql("duckdb")
    ties = (
        f"LIST_TRANSFORM(LIST_FILTER({name}({{'v': {value}, 'k': {key}}}, {key}, 100000), "
        f"lambda x: x.k = {extreme}({key})), lambda x: x.v)"
    )
    return exp.Anonymous(this="LIST_MIN" if low else "LIST_MAX", expressions=[exp.Var(this=ties)])


def arbitrary_row_probes(tree: exp.Expr) -> tuple[str, str] | None:
    """Two variants of a rewritten query that resolve its arbitrary picks differently.

    Every ANY_VALUE(c) becomes MIN(c) in one and MAX(c) in the other; every ARG_MAX/ARG_MIN
    becomes the least / greatest value among the rows tied at the extreme key. If the two
    variants return different rows, the gold depends on which row the engine happens to pick.
    None when the query makes no such pick.
    """
    if not any(tree.find_all(exp.AnyValue, exp.ArgMax, exp.ArgMin)):
        return None

    def variant(low: bool) -> str:
        def pick(node: exp.Expr) -> exp.Expr:
            if isinstance(node, exp.IgnoreNulls) and isinstance(node.this, exp.AnyValue):
                node = node.this
            if isinstance(node, exp.AnyValue):
                return (exp.Min if low else exp.Max)(this=node.this.copy())
            if isinstance(node, exp.ArgMax | exp.ArgMin):
                return _tie_values(node, low)
            return node

        return tree.copy().transform(pick).sql(dialect="duckdb")

    return variant(True), variant(False)


def to_duckdb(sql: str, schema: Schema, row_order: bool = False) -> str:
    """The gold SQL rewritten for DuckDB with SQLite's semantics (see the module docstring).

    row_order: also write out SQLite's implicit row order (`sqlite_order`): ties before a LIMIT
    and bare columns then resolve as in SQLite. Without it they stay arbitrary picks
    (ANY_VALUE, ARG_MIN/ARG_MAX, unbroken ties), which is what `arbitrary_row_probes` probes.
    """
    tree = prepare(sql, schema)
    types = schema.duckdb_types()
    try:
        tree = qualify(tree, schema=types, dialect="duckdb", validate_qualify_columns=False, identify=False)
        tree = annotate_types(tree, schema=types, dialect="duckdb")
    except sqlglot.errors.SqlglotError as exc:
        raise RewriteError(f"cannot resolve against the schema: {exc}") from exc
    for node in list(tree.walk()):
        _text_vs_number(node)
    for node in reversed(list(tree.find_all(exp.Except, exp.Intersect))):
        _set_operation_types(node)
    for select in list(tree.find_all(exp.Select)):
        _bare_columns(select)
    tree = tree.transform(_sqlite_semantics, copy=False)
    if row_order:
        tree = sqlite_row_order(tree, schema)
    return tree.sql(dialect="duckdb")
