"""One Spider database as the SQL rewrites see it: the dumped tables with their column kinds,
and the other spellings (Spider's, lower-cased) of the tables and columns the dump renamed."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field

from loft_warehouse.sql.databases import DUCKDB_TYPES
from loft_warehouse.sql.pgdump import Dump


@dataclass(frozen=True)
class Schema:
    """One database as the rewrites see it: dump tables with column kinds, and the other
    spellings (Spider's, lower-cased) of renamed tables and columns."""

    tables: dict[str, dict[str, str]]
    table_aliases: dict[str, str] = field(default_factory=dict)
    column_aliases: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_dump(cls, dump: Dump, spider_entry: dict | None = None) -> Schema:
        tables = {t.name: {c.name: c.kind for c in t.columns} for t in dump.tables}
        if spider_entry is None:
            return cls(tables)
        table_aliases, column_aliases = spider_aliases(tables, spider_entry)
        return cls(tables, table_aliases, column_aliases)

    def column_names(self) -> set[str]:
        names = {c for columns in self.tables.values() for c in columns}
        return names | set(self.column_aliases)

    def duckdb_types(self) -> dict[str, object]:
        return {t: {c: DUCKDB_TYPES[k] for c, k in cols.items()} for t, cols in self.tables.items()}


def _key(name: str) -> str:
    return re.sub(r"[^0-9a-z]", "", name.lower().replace("reference", "ref"))


def _same_column(spider: str, dump: str) -> bool:
    a, b = _key(spider), _key(dump)
    return (
        a == b
        or (min(len(a), len(b)) >= 6 and (a in b or b in a))
        or (difflib.SequenceMatcher(None, a, b).ratio() >= 0.9)
    )


def spider_aliases(tables: dict[str, dict[str, str]], entry: dict) -> tuple[dict[str, str], dict[str, str]]:
    """Map Spider's table/column names (tables.json) to the dump's where the dump renamed them.

    A table matches when the names agree ignoring case, underscores and 'reference'/'ref'; a
    column matches an unclaimed dump column of its table whose name is nearly the same. A
    Spider column with no counterpart (voter_1's votes.state) stays unmapped: queries using it
    fail and are recorded as errors.
    """
    by_key = {_key(name): name for name in tables}
    table_aliases: dict[str, str] = {}
    column_aliases: dict[str, str] = {}
    for index, spider_table in enumerate(entry["table_names_original"]):
        dump_table = by_key.get(_key(spider_table))
        if dump_table is None:
            continue
        if dump_table != spider_table.lower():
            table_aliases[spider_table.lower()] = dump_table
        dump_columns = tables[dump_table]
        spider_columns = [c.lower() for t, c in entry["column_names_original"] if t == index]
        unclaimed = [c for c in dump_columns if c not in spider_columns]
        for column in spider_columns:
            if column in dump_columns:
                continue
            match = next((c for c in unclaimed if _same_column(column, c)), None)
            if match is not None:
                column_aliases[column] = match
                unclaimed.remove(match)
    return table_aliases, column_aliases
