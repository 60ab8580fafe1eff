from pathlib import Path

import pytest

from loft_warehouse.errors import BadInputError
from loft_warehouse.sql.pgdump import parse_dump

COPY_DUMP = """--
SET statement_timeout = 0;

CREATE TABLE public.pet (
    pet_id integer NOT NULL,
    name character varying(20) DEFAULT ''::bpchar NOT NULL,
    weight real,
    price numeric(10,2),
    is_cute boolean,
    born timestamp without time zone
);


ALTER TABLE public.pet OWNER TO postgres;

COPY public.pet (pet_id, weight, name, price, is_cute, born) FROM stdin;
1\t12.5\tRex\\tthe\\\\dog\t3.50\tt\t2018-03-09 19:03:21
2\t\\N\tMia\\nLine\t\\N\tf\t\\N
\\.
"""

INSERT_DUMP = """
create table if not exists area (
       code integer not null
     ,  state varchar(2) not null
     ,  primary key (code)
     );
 INSERT INTO AREA VALUES(201,'NJ');
INSERT INTO AREA VALUES(-3,'O''K');
"""


def write(tmp_path: Path, text: str, name: str = "db.sql") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_copy_block_is_reordered_to_declared_columns_and_unescaped(tmp_path):
    dump = parse_dump(write(tmp_path, COPY_DUMP))
    table = dump.table("pet")
    assert dump.name == "db"
    assert table.create_line == 4
    assert table.column_names() == ["pet_id", "name", "weight", "price", "is_cute", "born"]
    assert [c.kind for c in table.columns] == ["integer", "text", "real", "numeric", "boolean", "timestamp"]
    assert table.rows == [
        ("1", "Rex\tthe\\dog", "12.5", "3.50", "t", "2018-03-09 19:03:21"),
        ("2", "Mia\nLine", None, None, "f", None),
    ]


def test_insert_statements_fill_lower_cased_tables(tmp_path):
    table = parse_dump(write(tmp_path, INSERT_DUMP)).table("area")
    assert table.create_line == 2
    assert table.rows == [("201", "NJ"), ("-3", "O'K")]


def test_wrong_field_count_names_file_and_line(tmp_path):
    bad = COPY_DUMP.replace("2\t\\N\tMia\\nLine", "2\tMia\\nLine")
    with pytest.raises(BadInputError, match=r"db\.sql:18: 5 fields for 6 columns of pet"):
        parse_dump(write(tmp_path, bad))


def test_copy_into_undeclared_table_is_an_error(tmp_path):
    bad = COPY_DUMP.replace("COPY public.pet", "COPY public.cat")
    with pytest.raises(BadInputError, match="COPY into undeclared table 'cat'"):
        parse_dump(write(tmp_path, bad))


def test_unterminated_copy_block_is_an_error(tmp_path):
    with pytest.raises(BadInputError, match="no terminating"):
        parse_dump(write(tmp_path, COPY_DUMP.replace("\\.\n", "")))


def test_unsupported_column_type_is_an_error(tmp_path):
    with pytest.raises(BadInputError, match="unsupported type"):
        parse_dump(write(tmp_path, INSERT_DUMP.replace("varchar(2)", "bytea")))


@pytest.mark.parametrize(
    ("cell", "column", "expected"),
    [("x7", "pet_id", "'x7' is not a valid int"), ("heavy", "weight", "'heavy' is not a valid real")],
)
def test_a_value_of_the_wrong_type_names_its_dump_line(tmp_path, cell, column, expected):
    import duckdb

    from loft_warehouse.sql.databases import load_duckdb

    rows = ["3\t1.0\tA\t1\tt\t\\N", "4\t2.0\tB\t1\tt\t\\N", "5\t3.0\tC\t1\tt\t\\N"]
    fields = rows[1].split("\t")
    fields[0 if column == "pet_id" else 1] = cell
    rows[1] = "\t".join(fields)
    text = COPY_DUMP.replace("\\.\n", "\n".join(rows) + "\n\\.\n")
    path = tmp_path / "pets.sql"
    path.write_text(text)
    line = text.splitlines().index(rows[1]) + 1
    with duckdb.connect() as con, pytest.raises(BadInputError) as caught:
        load_duckdb(parse_dump(path), con)
    assert str(caught.value).startswith(f"{path}:{line}: table pet, column {column}: {expected}")


def test_a_dump_that_is_not_utf8_names_its_line(tmp_path):
    path = tmp_path / "pets.sql"
    path.write_bytes(COPY_DUMP.encode().replace(b"Rex", b"R\xe9x"))
    line = COPY_DUMP.splitlines().index(next(x for x in COPY_DUMP.splitlines() if "Rex" in x)) + 1
    with pytest.raises(BadInputError, match=rf"pets.sql:{line}: not UTF-8: byte 0xe9 at column 9"):
        parse_dump(path)
