"""Read the PostgreSQL dumps that hold the Spider dev databases' contents.

The dumps (Spider4SPARQL) are `pg_dump` plain-text files: `CREATE TABLE` blocks followed by
`COPY ... FROM stdin` data blocks; one file (voter_1) instead has lower-case `create table`
statements and one-line `INSERT INTO ... VALUES(...)`. Values are kept as the dump's own text
(None for NULL) so the tables can be shown to a model exactly as stored, and typed later.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError

from loft_warehouse.errors import BadInputError
from loft_warehouse.readers import decode_utf8

_KINDS: dict[object, str] = {
    exp.DataType.Type.INT: "integer",
    exp.DataType.Type.BIGINT: "integer",
    exp.DataType.Type.SMALLINT: "integer",
    exp.DataType.Type.FLOAT: "real",
    exp.DataType.Type.DOUBLE: "real",
    exp.DataType.Type.DECIMAL: "numeric",
    exp.DataType.Type.TEXT: "text",
    exp.DataType.Type.VARCHAR: "text",
    exp.DataType.Type.CHAR: "text",
    exp.DataType.Type.BOOLEAN: "boolean",
    exp.DataType.Type.TIMESTAMP: "timestamp",
    exp.DataType.Type.DATE: "date",
}
_CREATE = re.compile(r"^\s*create\s+table\s", re.IGNORECASE)
_COPY = re.compile(r"^COPY\s+(?:public\.)?(\w+)\s*\(([^)]*)\)\s+FROM\s+stdin;\s*$")
_INSERT = re.compile(r"^\s*insert\s+into\s", re.IGNORECASE)
_COPY_ESCAPES = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", "\\": "\\"}
_ESCAPE = re.compile(r"\\(x[0-9A-Fa-f]{1,2}|[0-7]{1,3}|.)")


@dataclass(frozen=True)
class Column:
    """A column as declared in the dump; kind is the value family used to type it."""

    name: str
    pg_type: str
    kind: str


@dataclass
class Table:
    """One table: its columns in declaration order and its rows as dump text (None = NULL)."""

    name: str
    columns: list[Column]
    create_line: int
    rows: list[tuple[str | None, ...]] = field(default_factory=list)
    row_lines: list[int] = field(default_factory=list)

    def column_names(self) -> list[str]:
        return [c.name for c in self.columns]


@dataclass
class Dump:
    """A parsed dump: the database name (file stem) and its tables in CREATE order."""

    name: str
    path: Path
    tables: list[Table]

    def table(self, name: str) -> Table:
        for table in self.tables:
            if table.name == name:
                return table
        raise KeyError(name)


def _unescape_copy(value: str) -> str | None:
    """One field of COPY text format: `\\N` is NULL, backslash escapes as PostgreSQL defines."""
    if value == r"\N":
        return None
    if "\\" not in value:
        return value

    def replace(match: re.Match[str]) -> str:
        code = match.group(1)
        if code[0] == "x" and len(code) > 1:
            return chr(int(code[1:], 16))
        if code[0] in "01234567":
            return chr(int(code, 8))
        return _COPY_ESCAPES.get(code, code)

    return _ESCAPE.sub(replace, value)


def _parse_create(statement: str, path: Path, line: int) -> Table:
    try:
        tree = sqlglot.parse_one(statement, read="postgres")
    except ParseError as exc:
        raise BadInputError(path, line, f"unreadable CREATE TABLE ({exc})") from exc
    if not isinstance(tree, exp.Create) or not isinstance(tree.this, exp.Schema):
        raise BadInputError(path, line, "expected CREATE TABLE name (columns)")
    columns = []
    for definition in tree.this.find_all(exp.ColumnDef):
        data_type = definition.args.get("kind")
        kind = _KINDS.get(data_type.this) if data_type is not None else None
        if data_type is None or kind is None:
            raise BadInputError(path, line, f"column {definition.name!r} has unsupported type {data_type}")
        columns.append(Column(definition.name.lower(), data_type.sql("postgres").lower(), kind))
    if not columns:
        raise BadInputError(path, line, "CREATE TABLE without columns")
    return Table(tree.this.this.name.lower(), columns, line)


def _literal_text(value: exp.Expr, path: Path, line: int) -> str | None:
    if isinstance(value, exp.Null):
        return None
    if isinstance(value, exp.Neg) and isinstance(value.this, exp.Literal):
        return f"-{value.this.this}"
    if isinstance(value, exp.Literal):
        return value.this
    if isinstance(value, exp.Boolean):
        return "t" if value.this else "f"
    raise BadInputError(path, line, f"INSERT value {value.sql()} is not a literal")


def _parse_insert(statement: str, tables: dict[str, Table], path: Path, line: int) -> None:
    try:
        tree = sqlglot.parse_one(statement, read="postgres")
    except ParseError as exc:
        raise BadInputError(path, line, f"unreadable INSERT ({exc})") from exc
    target = tree.this.this if isinstance(tree.this, exp.Schema) else tree.this
    table = tables.get(target.name.lower())
    if table is None:
        raise BadInputError(path, line, f"INSERT into undeclared table {target.name!r}")
    if isinstance(tree.this, exp.Schema):
        raise BadInputError(path, line, "INSERT with a column list is not supported")
    for row in tree.expression.expressions:
        values = tuple(_literal_text(v, path, line) for v in row.expressions)
        if len(values) != len(table.columns):
            raise BadInputError(path, line, f"{len(values)} values for {len(table.columns)} columns of {table.name}")
        table.rows.append(values)
        table.row_lines.append(line)


def parse_dump(path: Path) -> Dump:
    """Parse one dump file; any statement that would feed data to an unknown place is an error."""
    lines = decode_utf8(path.read_bytes(), path).replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    tables: dict[str, Table] = {}
    i = 0
    while i < len(lines):
        text = lines[i]
        line_no = i + 1
        if _CREATE.match(text):
            statement = [text]
            while not statement[-1].rstrip().endswith(";"):
                i += 1
                if i >= len(lines):
                    raise BadInputError(path, line_no, "CREATE TABLE never ends with ';'")
                statement.append(lines[i])
            table = _parse_create("\n".join(statement), path, line_no)
            if table.name in tables:
                raise BadInputError(path, line_no, f"table {table.name!r} declared twice")
            tables[table.name] = table
        elif match := _COPY.match(text):
            copied = tables.get(match.group(1).lower())
            if copied is None:
                raise BadInputError(path, line_no, f"COPY into undeclared table {match.group(1)!r}")
            names = [n.strip().strip('"').lower() for n in match.group(2).split(",")]
            if sorted(names) != sorted(copied.column_names()):
                raise BadInputError(path, line_no, f"COPY columns {names} differ from {copied.name}'s")
            order = [names.index(c) for c in copied.column_names()]
            i += 1
            while i < len(lines) and lines[i] != "\\.":
                fields = lines[i].split("\t")
                if len(fields) != len(names):
                    raise BadInputError(path, i + 1, f"{len(fields)} fields for {len(names)} columns of {copied.name}")
                values = [_unescape_copy(f) for f in fields]
                copied.rows.append(tuple(values[k] for k in order))
                copied.row_lines.append(i + 1)
                i += 1
            if i >= len(lines):
                raise BadInputError(path, line_no, f"COPY block of {copied.name} has no terminating '\\.'")
        elif _INSERT.match(text):
            _parse_insert(text.strip(), tables, path, line_no)
        i += 1
    if not tables:
        raise BadInputError(path, None, "no CREATE TABLE found")
    return Dump(path.stem, path, list(tables.values()))
