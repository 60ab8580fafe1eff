"""Importing model-written SQL: each turn runs in the sandbox on the real concert_singer database,
its rows are landed as an import, and the scoring SQL scores them like any imported answer.

concert_singer.singer (name, age, country): Joe Sharp 52 Netherlands, Timbaland 32 United States,
Justin Brown 29 France, Rose White 41 France, John Nizinik 43 France, Tribal King 25 France.
"""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import polars as pl
import pytest

from loft_warehouse.errors import BadInputError, ConfigurationError
from loft_warehouse.scoring.import_sql import FileBudget, land_sql, read_sql_prediction_file, sandbox_note
from loft_warehouse.scoring.importer import imported_frame, warehouse_queries
from loft_warehouse.scoring.upstream_files import SCORED_QUERY_SCHEMA
from loft_warehouse.sql.sandbox import SandboxResult
from tests.scoring.sqlkit import Scenario, insert

COUNT = [[6]]
FRANCE = [["Justin Brown"], ["Rose White"], ["John Nizinik"], ["Tribal King"]]
FRANCE_OVER_40 = [["Rose White"], ["John Nizinik"]]
RUNAWAY = "SELECT count(*) FROM " + ", ".join(f"singer AS s{i}" for i in range(14))  # 6**14 rows
NESTED_50 = "SELECT count(*) FROM singer WHERE " + "(" * 50 + "1 = 1" + ")" * 50
NESTED_5000 = "SELECT count(*) FROM singer WHERE " + "(" * 5000 + "1 = 1" + ")" * 5000
LONG_400KB = "SELECT count(*) FROM singer WHERE " + " OR ".join(["age = 1"] * 36000)


def _write(path: Path, lines: list[object]) -> Path:
    path.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines))
    return path


def _queries() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "task": ["sql"] * 4,
            "dataset": ["spider", "spider", "sparc", "sparc"],
            "split": ["test", "dev", "test", "test"],
            "qid": ["s1", "d1", "c1", "c1"],
            "turn": [0, 0, 0, 1],
            "n_turns": [1, 1, 2, 2],
            "db_id": ["concert_singer"] * 4,
        }
    )


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", "preds.jsonl:2: malformed JSON"),
        ({"qid": "s1", "num_turns": 1}, "preds.jsonl:2: expected fields qid, num_turns and one of sql"),
        ({"qid": "s1", "num_turns": 1, "sql": ["SELECT 1"], "model_outputs": ["SELECT 1"]}, "one of sql"),
        ({"qid": "s1", "num_turns": 2, "sql": ["SELECT 1"]}, "sql must be a list of num_turns=2"),
        ({"qid": "s1", "num_turns": True, "sql": ["SELECT 1"]}, "positive integer"),
        ({"qid": "s1", "num_turns": 1, "model_outputs": [[["6"]]]}, "turn 0 is not an SQL string"),
        ({"qid": "s1", "num_turns": 1, "sql": ["SELECT 1"]}, "qid 's1' already given on line 1"),
        ({"qid": "d1", "num_turns": 1, "sql": ["SELECT 1"]}, "qid 'd1' is not a test query of sql/spider at 128k"),
        ({"qid": "nope", "num_turns": 1, "sql": ["SELECT 1"]}, "qid 'nope' is not a test query"),
    ],
)
def test_bad_lines_stop_the_import_before_any_sql_runs(tmp_path: Path, line: object, message: str) -> None:
    path = _write(tmp_path / "preds.jsonl", [{"qid": "s1", "num_turns": 1, "sql": ["SELECT 1"]}, line])
    with pytest.raises(BadInputError, match=message.replace("(", r"\(")):
        # a data root that does not exist: the sandbox is never built
        land_sql(path, _queries(), system="t2s", size="128k", dataset="spider", root=tmp_path / "no-data")
    assert not (tmp_path / "imports").exists()


def test_turn_count_must_match_the_conversation(tmp_path: Path) -> None:
    path = _write(tmp_path / "preds.jsonl", [{"qid": "c1", "num_turns": 1, "sql": ["SELECT 1"]}])
    scope = _queries().filter(pl.col("dataset") == "sparc")
    with pytest.raises(BadInputError, match="preds.jsonl:1: qid 'c1' has 1 turn"):
        read_sql_prediction_file(path, scope, "test query of sql/sparc at 128k")


def test_empty_file_and_unknown_dataset_are_refused(tmp_path: Path) -> None:
    path = _write(tmp_path / "preds.jsonl", [])
    with pytest.raises(BadInputError, match="no predictions"):
        land_sql(path, _queries(), system="t2s", size="128k", dataset="spider", root=tmp_path)
    with pytest.raises(ConfigurationError, match="unknown SQL dataset"):
        land_sql(path, _queries(), system="t2s", size="128k", dataset="bird", root=tmp_path)
    with pytest.raises(ConfigurationError, match="system"):
        land_sql(path, _queries(), system="../x", size="128k", dataset="spider", root=tmp_path)


def test_warehouse_queries_needs_a_built_queries_table(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="not found"):
        warehouse_queries(tmp_path / "missing.duckdb", "128k", "sql", "spider", "test")
    database = tmp_path / "loft.duckdb"
    with duckdb.connect(str(database)) as con:
        con.execute("create schema loft_128k_internal")
    with pytest.raises(ConfigurationError, match=r"build it first: dbt build --select \+loft_128k__int_scored_queries"):
        warehouse_queries(database, "128k", "sql", "spider", "test")
    columns = ", ".join(SCORED_QUERY_SCHEMA)
    with duckdb.connect(str(database)) as con:
        con.execute(f"create table loft_128k_internal.int_scored_queries as select {columns} from (values "
                    "('sql', 'spider', 'concert_singer', 'test', 's1', 's1', 0, 1, 'q', '[[1]]', [], 'concert_singer', "
                    "'SELECT 1', false, 0, false), "
                    "('sql', 'sparc', 'concert_singer', 'test', 'c1', 'c1', 0, 1, 'q', '[[1]]', [], 'concert_singer', "
                    "'SELECT 1', false, 0, false)) "
                    f"as t({columns})")  # fmt: skip
    assert warehouse_queries(database, "128k", "sql", "spider", "test").select("qid", "n_turns", "db_id").rows() == [
        ("s1", 1, "concert_singer")
    ]
    with pytest.raises(ConfigurationError, match="no dev queries at 128k"):
        warehouse_queries(database, "128k", "sql", "spider", "dev")
    with pytest.raises(ConfigurationError, match=r"sql/bird is not in .* \(there: sql/sparc, sql/spider\)"):
        warehouse_queries(database, "128k", "sql", "bird", "test")


@pytest.fixture(scope="module")
def scored(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Scenario, Path]:
    """A Spider file with every kind of turn and a SParC file, landed and scored."""
    work = tmp_path_factory.mktemp("import-sql")
    s = Scenario()
    spider = {
        "right": (COUNT, "SELECT count(*) FROM singer", "SELECT count(*) FROM singer"),
        "wrong": (FRANCE_OVER_40, None, "SELECT name FROM singer WHERE age > 40"),
        "unordered": (
            FRANCE_OVER_40[::-1],
            "SELECT name FROM singer WHERE country = 'France' AND age > 40 ORDER BY age DESC",
            "SELECT name FROM singer WHERE country = 'France' AND age > 40",
        ),
        "ddl": (COUNT, None, "DROP TABLE singer"),
        "copy": (COUNT, None, f"COPY singer TO '{work / 'out.csv'}'"),
        "attach": (COUNT, None, f"ATTACH '{work / 'other.duckdb'}' AS other"),
        "read_csv": (COUNT, None, "SELECT count(*) FROM read_csv('/etc/passwd')"),
        "runaway": (COUNT, None, RUNAWAY),
        "nested_50": (COUNT, None, NESTED_50),
        "nested_5000": (COUNT, None, NESTED_5000),
        "long_400kb": (COUNT, None, LONG_400KB),
        "no_sql": (COUNT, None, None),
        "missing": (COUNT, None, None),
    }
    for qid, (gold, gold_sql, _) in spider.items():
        s.query("sql", "spider", qid, gold, gold_sql=gold_sql)
    conversations = {
        "c_right": [
            (COUNT, "SELECT count(*) FROM singer"),
            (FRANCE, "SELECT name FROM singer WHERE country = 'France'"),
        ],
        "c_broken": [(COUNT, "SELECT count(*) FROM singer"), (FRANCE, "DELETE FROM singer")],
    }
    for qid, turns in conversations.items():
        for turn, (gold, _) in enumerate(turns):
            s.query("sql", "sparc", qid, gold, turn=turn, n_turns=2)
    s.build()
    s.con.execute("update queries set db_id = 'concert_singer'")
    queries = s.con.sql("select * from queries").pl()
    spider_file = _write(
        work / "spider.jsonl",
        [{"qid": qid, "num_turns": 1, "sql": [sql]} for qid, (*_, sql) in spider.items() if qid != "missing"],
    )
    sparc_file = _write(
        work / "sparc.jsonl",
        [{"qid": q, "num_turns": 2, "model_outputs": [sql for _, sql in turns]} for q, turns in conversations.items()],
    )
    imports = work / "imports"
    options = {"system": "t2s", "size": "128k", "root": shared_data, "directory": imports, "timeout_s": 5.0}
    _, spider_statuses = land_sql(spider_file, queries, dataset="spider", **options)
    _, sparc_statuses = land_sql(sparc_file, queries, dataset="sparc", **options)
    assert spider_statuses == {"ok": 4, "rejected": 6, "error": 2}
    assert sparc_statuses == {"ok": 3, "rejected": 1}
    insert(s.con, "imports", imported_frame(imports, "128k", queries).to_dicts())
    s.build()
    return s, work


def test_each_turn_is_scored_under_both_rules(scored: tuple[Scenario, Path]) -> None:
    s, _ = scored
    sql = "select qid, value from scores where dataset = 'spider' and metric_name = ?"
    values = {rule: dict(s.con.execute(sql, [f"exec_acc_{rule}"]).fetchall()) for rule in ("loft", "strict")}
    zero = {q: 0.0 for q in ("ddl", "copy", "attach", "read_csv", "runaway", "no_sql", "missing", "wrong")}
    zero |= {"nested_5000": 0.0, "long_400kb": 0.0}
    assert values["loft"] == {"right": 1.0, "unordered": 1.0, "nested_50": 1.0, **zero}
    ordered = {"unordered": 0.0}  # its gold has ORDER BY age DESC
    assert values["strict"] == {"right": 1.0, "nested_50": 1.0, **ordered, **zero}


def test_errors_stay_visible_and_leave_no_trace(scored: tuple[Scenario, Path]) -> None:
    s, work = scored
    raw = dict(s.con.sql("select qid, raw_text from predictions where dataset = 'spider'").fetchall())
    assert raw["right"] == "SELECT count(*) FROM singer\n-- sandbox ok: 1 row(s)"
    assert raw["wrong"].endswith("-- sandbox ok: 3 row(s)")
    assert raw["ddl"] == "DROP TABLE singer\n-- sandbox rejected: only queries may run, not DROP"
    assert raw["copy"].splitlines()[-1] == "-- sandbox rejected: only queries may run, not COPY"
    assert raw["attach"].splitlines()[-1] == "-- sandbox rejected: only queries may run, not ATTACH"
    assert raw["read_csv"].splitlines()[-1].startswith("-- sandbox rejected: table \"READ_CSV('/etc/passwd')\"")
    assert raw["runaway"].splitlines()[-1].startswith("-- sandbox error: time limit of 5 s exceeded")
    assert raw["no_sql"] == "-- sandbox error: no SQL"
    assert raw["nested_5000"].splitlines()[-1].startswith("-- sandbox rejected: SQL too deeply nested to check")
    assert raw["long_400kb"].splitlines()[-1] == (
        f"-- sandbox rejected: SQL of {len(LONG_400KB)} characters is over the 20000-character limit"
    )
    assert raw["missing"] is None
    assert not (work / "out.csv").exists() and not (work / "other.duckdb").exists()
    answers = dict(s.con.sql("select qid, answer_loft_json from predictions where dataset = 'spider'").fetchall())
    assert json.loads(answers["wrong"]) == [["Joe Sharp"], ["Rose White"], ["John Nizinik"]]
    assert answers["ddl"] == "[]"


def test_metrics_count_errors_as_answered_zeros(scored: tuple[Scenario, Path]) -> None:
    s, _ = scored
    rows = s.con.sql(
        "select dataset, metric_name, grain, n, n_unanswered, n_empty_answer, mean from metrics "
        "where source = 'import' and system = 't2s' order by dataset, grain, metric_name"
    ).fetchall()
    assert rows == [
        ("sparc", "exec_acc_conversation_loft", "conversation", 2, 0, 1, 0.5),
        ("sparc", "exec_acc_conversation_strict", "conversation", 2, 0, 1, 0.5),
        ("sparc", "exec_acc_loft", "turn", 4, 0, 1, 0.75),
        ("sparc", "exec_acc_strict", "turn", 4, 0, 1, 0.75),
        ("spider", "exec_acc_conversation_loft", "conversation", 13, 1, 8, 3 / 13),
        ("spider", "exec_acc_conversation_strict", "conversation", 13, 1, 8, 2 / 13),
        ("spider", "exec_acc_loft", "turn", 13, 1, 8, 3 / 13),
        ("spider", "exec_acc_strict", "turn", 13, 1, 8, 2 / 13),
    ]


def test_the_sandbox_note_is_one_last_line_even_for_a_multi_line_error() -> None:
    error = "unparseable SQL: Expected table name.\n  Line 1, Col: 16.\n  SELECT * FROM ("
    result = SandboxResult("rejected", error=error)
    note = sandbox_note("SELECT * FROM (\n", result)
    assert note.splitlines() == [
        "SELECT * FROM (",
        "-- sandbox rejected: unparseable SQL: Expected table name. Line 1, Col: 16. SELECT * FROM (",
    ]


def test_a_file_cannot_take_more_than_its_budget(shared_data: Path, tmp_path: Path) -> None:
    """Each turn asks for the four French singers (about 70 bytes of JSON); the file may take 100
    bytes of results, then 5 rows, then no time at all: the turns past a budget land as errors."""
    queries = pl.DataFrame(
        {"task": ["sql"] * 4, "dataset": ["spider"] * 4, "split": ["test"] * 4, "qid": ["a", "b", "c", "d"],
         "turn": [0] * 4, "n_turns": [1] * 4, "db_id": ["concert_singer"] * 4}
    )  # fmt: skip
    france = "SELECT name FROM singer WHERE country = 'France'"
    file = _write(tmp_path / "p.jsonl", [{"qid": q, "num_turns": 1, "sql": [france]} for q in "abcd"])
    options = {"system": "t2s", "size": "128k", "root": shared_data, "timeout_s": 5.0, "dataset": "spider"}
    runs = {
        "bytes": FileBudget(result_bytes=100),
        "rows": FileBudget(rows=5),
        "seconds": FileBudget(seconds=0.0),
    }
    for name, budget in runs.items():
        landed, statuses = land_sql(file, queries, directory=tmp_path / name, budget=budget, **options)
        notes = [text.splitlines()[-1] for text in pl.read_parquet(landed).sort("qid")["raw_text"]]
        if name == "seconds":
            assert statuses == {"error": 4}
            assert set(notes) == {"-- sandbox error: not run: the file's 0 s budget is spent"}
        else:
            limit = "100 bytes" if name == "bytes" else "5 rows"
            assert statuses == {"ok": 1, "error": 3}, name
            assert notes[0] == "-- sandbox ok: 4 row(s)"
            assert notes[1:] == [f"-- sandbox error: the file's results passed their budget of {limit}"] * 3


def test_the_file_budget_counts_bytes_not_characters(shared_data: Path, tmp_path: Path) -> None:
    """Issue 60 item 2: a result of 30 four-byte characters is 126 bytes of JSON, over a 100-byte
    budget, though 36 characters long (counted so, every turn landed)."""
    queries = pl.DataFrame(
        {"task": ["sql"] * 2, "dataset": ["spider"] * 2, "split": ["test"] * 2, "qid": ["a", "b"],
         "turn": [0] * 2, "n_turns": [1] * 2, "db_id": ["concert_singer"] * 2}
    )  # fmt: skip
    wide = "SELECT replace(printf('%30s', ''), ' ', '\U0001f600')"
    file = _write(tmp_path / "p.jsonl", [{"qid": q, "num_turns": 1, "sql": [wide]} for q in "ab"])
    landed, statuses = land_sql(
        file, queries, system="t2s", size="128k", root=shared_data, timeout_s=5.0, dataset="spider",
        directory=tmp_path / "landed", budget=FileBudget(result_bytes=100),
    )  # fmt: skip
    assert statuses == {"error": 2}
    notes = {text.splitlines()[-1] for text in pl.read_parquet(landed)["raw_text"]}
    assert notes == {"-- sandbox error: the file's results passed their budget of 100 bytes"}


def test_sql_over_the_length_limit_is_refused_as_read_and_only_its_start_kept(
    shared_data: Path, tmp_path: Path
) -> None:
    """Issue 60 item 2: 54 lines of 10 MiB SQL were refused by the sandbox, but each was held and
    landed whole (import 2.4 GiB, build 3.9 GiB, warehouse 59 MiB to 1.1 GiB)."""
    huge = "SELECT count(*) FROM singer WHERE " + " OR ".join(["age = 1"] * 100_000)
    file = _write(tmp_path / "p.jsonl", [{"qid": "s1", "num_turns": 1, "sql": [huge]}])
    predictions = read_sql_prediction_file(file, _queries().filter(pl.col("dataset") == "spider"), "spider")
    (turn,) = predictions[0].sql
    assert not isinstance(turn, str | None) and (turn.chars, turn.start) == (len(huge), huge[:1000])
    landed, statuses = land_sql(
        file, _queries(), system="t2s", size="128k", root=shared_data, timeout_s=5.0, dataset="spider",
        directory=tmp_path / "landed",
    )  # fmt: skip
    assert statuses == {"rejected": 1}
    (raw_text,) = pl.read_parquet(landed)["raw_text"]
    assert raw_text == (
        f"{huge[:1000]}\n-- ({len(huge)} characters in all; only the first 1000 are kept)\n"
        f"-- sandbox rejected: SQL of {len(huge)} characters is over the 20000-character limit"
    )
