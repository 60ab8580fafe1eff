"""A tiny hand-made database (as a PostgreSQL dump) loaded into both engines for tests."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import duckdb

from loft_warehouse.sql.databases import load_duckdb, load_sqlite
from loft_warehouse.sql.pgdump import Dump, parse_dump
from loft_warehouse.sql.schema import Schema

DUMP = """CREATE TABLE public.people (
    id integer NOT NULL,
    name text,
    age integer,
    height real,
    code text,
    is_adult boolean,
    team text
);

COPY public.people (id, name, age, height, code, is_adult, team) FROM stdin;
1\tAlice\t30\t1.7\t10\tt\tred
2\tBob\t17\t1.8\t9\tf\tred
3\tCarol\t45\t-2.7\t12abc\tt\tblue
4\tDan\t45\t1.6\tabc\tt\tblue
5\tEve\t17\t\\N\t\\N\tf\tgreen
\\.

CREATE TABLE public.reference_pets (
    pet_id integer NOT NULL,
    owner_id integer,
    kind_of_pet text
);

COPY public.reference_pets (pet_id, owner_id, kind_of_pet) FROM stdin;
1\t1\tcat
2\t1\tdog
3\t3\tcat
\\.
"""
SPIDER_ENTRY = {
    "db_id": "tiny",
    "table_names_original": ["People", "Ref_Pets"],
    "column_names_original": [
        [-1, "*"],
        [0, "id"],
        [0, "Name"],
        [0, "Age"],
        [0, "Height"],
        [0, "Code"],
        [0, "Is_Adult"],
        [0, "Team"],
        [1, "Pet_ID"],
        [1, "Owner_ID"],
        [1, "Kind_(of_pet)"],
    ],
}


def tiny_dump(folder: Path) -> Dump:
    """Spider calls the pets table Ref_Pets and its last column Kind_(of_pet)."""
    path = folder / "tiny.sql"
    path.write_text(DUMP, encoding="utf-8")
    return parse_dump(path)


def engines(dump: Dump) -> tuple[duckdb.DuckDBPyConnection, sqlite3.Connection]:
    duck = duckdb.connect(":memory:", config={"threads": 1})
    load_duckdb(dump, duck)
    lite = sqlite3.connect(":memory:")
    load_sqlite(dump, lite)
    return duck, lite


def schema(dump: Dump) -> Schema:
    return Schema.from_dump(dump, SPIDER_ENTRY)
