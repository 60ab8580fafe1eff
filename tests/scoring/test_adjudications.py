"""Gold adjudications as data: files read and refused row by row, the seed's two versions, and
stored answers rescored under every version (rule revised) beside the release gold."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from loft_warehouse.errors import BadInputError
from loft_warehouse.scoring.adjudications import adjudications_dir, collect, from_seed, read_file
from loft_warehouse.settings import PROJECT_ROOT
from tests.scoring.sqlkit import Scenario, insert

SEED = pl.read_csv(PROJECT_ROOT / "seeds" / "quest_loft_revised_gold.csv", infer_schema=False)
HEADER = "gold_version,task,dataset,qid,question,answer,rating,source\n"


def _file(tmp_path: Path, body: str, header: str = HEADER, name: str = "team.csv") -> Path:
    path = tmp_path / name
    path.write_text(header + body, encoding="utf-8")
    return path


def test_the_seed_is_two_versions_keyed_by_question() -> None:
    frame = from_seed(SEED)
    counts = dict(frame.group_by("gold_version").len().iter_rows())
    assert counts == {"quest_loft_revised": 273, "quest_loft_simple28": 303}
    assert frame["qid"].null_count() == frame.height and set(frame["dataset"]) == {"quest"}
    first = frame.row(0, named=True)
    assert (first["question"], first["answer"], first["rating"], first["source_row"]) == (
        "Novels about families set in Boston and New England.",
        "The Scarlet Letter",
        "MATCH",
        2,
    )


def test_a_file_adds_its_versions(tmp_path: Path) -> None:
    _file(tmp_path, "nq_v2,rag,nq,q1,,Paris,MATCH,two annotators\nnq_v2,rag,nq,q1,,Lyon,DEBATABLE,\n")
    frame = collect(SEED, tmp_path)
    mine = frame.filter(pl.col("gold_version") == "nq_v2")
    assert mine.select("qid", "answer", "rating", "source", "source_row").rows() == [
        ("q1", "Paris", "MATCH", "two annotators", 2),
        ("q1", "Lyon", "DEBATABLE", "team.csv", 3),
    ]
    assert collect(SEED, tmp_path / "absent").height == from_seed(SEED).height


@pytest.mark.parametrize(
    ("body", "line", "message"),
    [
        ("Bad Name,rag,nq,q1,,Paris,MATCH,\n", 2, "gold_version 'Bad Name'"),
        ("release,rag,nq,q1,,Paris,MATCH,\n", 2, "is taken"),
        ("quest_loft_revised,rag,nq,q1,,Paris,MATCH,\n", 2, "is taken"),
        ("v1,sql,spider,q1,,x,MATCH,\n", 2, "adjudications apply to rag answers"),
        ("v1,rag,nq,q1,,Paris,MATCH,\nv1,rag,nq,,,Paris,MATCH,\n", 3, "neither qid nor question"),
        ("v1,rag,nq,q1,,Paris,maybe,\n", 2, "rating 'maybe'"),
        ("v1,rag,nq,q1,,,MATCH,\n", 2, "no answer for a MATCH verdict"),
        ("v1,rag,,q1,,Paris,MATCH,\n", 2, "no dataset"),
        ("v1,rag,nq,q1,,Paris,MATCH,\nv1,rag,nq,q1,,the paris,NO_MATCH,\n", 3, "where"),
    ],
)
def test_a_bad_row_names_its_file_and_line(tmp_path: Path, body: str, line: int, message: str) -> None:
    path = _file(tmp_path, body)
    with pytest.raises(BadInputError, match=message) as raised:
        collect(SEED, tmp_path)
    assert str(raised.value).startswith(f"{path}:{line}: ")


def test_a_file_without_rows_or_columns_is_refused(tmp_path: Path) -> None:
    with pytest.raises(BadInputError, match="holds no adjudication row"):
        read_file(_file(tmp_path, ""))
    with pytest.raises(BadInputError, match="missing column\\(s\\) rating, qid or question"):
        read_file(_file(tmp_path, "v1,rag,nq,Paris\n", header="gold_version,task,dataset,answer\n"))


def test_the_folder_setting(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("LOFT_ADJUDICATIONS_DIR", raising=False)
    assert adjudications_dir() == PROJECT_ROOT / ".adjudications"
    monkeypatch.setenv("LOFT_ADJUDICATIONS_DIR", str(tmp_path))
    assert adjudications_dir() == tmp_path
    assert adjudications_dir("elsewhere") == Path("elsewhere")


def _revised(s: Scenario, qid: str) -> dict[str, dict[str, float]]:
    rows = s.con.execute(
        "select gold_version, metric, value from scores where qid = ? and rule = 'revised' order by all", [qid]
    ).fetchall()
    versions: dict[str, dict[str, float]] = {}
    for version, metric, value in rows:
        versions.setdefault(version, {})[metric] = value
    return versions


def test_stored_answers_are_rescored_under_every_version() -> None:
    s = Scenario()
    s.case("rag", "nq", "q1", ["Paris"], "Final Answer: ['Paris', 'Lyon']")
    s.case("rag", "nq", "q2", ["Rome"], "Final Answer: ['Rome']")
    s.case("rag", "nq", "q3", ["Oslo"], "Final Answer: ['Oslo']")
    s._rows["queries"][-1]["query_text"] = "Capital of Norway?"
    adjudicated = [
        # v1: Lyon is debatable for q1 (dropped from the prediction), q2's gold becomes Milan,
        # and q3 is named by its question
        ("v1", "q1", None, "Paris", "MATCH"),
        ("v1", "q1", None, "Lyon", "DEBATABLE"),
        ("v1", "q2", None, "Milan", "MATCH"),
        ("v1", None, "capital of norway", "Oslo", "MATCH"),
        # v2: Lyon is plainly wrong for q1
        ("v2", "q1", None, "Paris", "MATCH"),
        ("v2", "q1", None, "Lyon", "NO_MATCH"),
    ]
    insert(
        s.con,
        "adjudications",
        [
            dict(
                gold_version=v,
                dataset="nq",
                qid=qid,
                question=question,
                answer=answer,
                rating=rating,
                source_file="team.csv",
                source_row=line,
            )
            for line, (v, qid, question, answer, rating) in enumerate(adjudicated, start=2)
        ],  # fmt: skip
    )
    s.build()
    q1 = _revised(s, "q1")
    assert q1["v1"] == {"set_precision": 1.0, "set_recall": 1.0, "set_f1": 1.0, "set_accuracy": 1.0, "subspan_em": 1.0}
    assert q1["v2"] == pytest.approx(
        {"set_precision": 0.5, "set_recall": 1.0, "set_f1": 2 / 3, "set_accuracy": 0.0, "subspan_em": 1.0}
    )
    assert _revised(s, "q2") == {"v1": dict.fromkeys(q1["v1"], 0.0)}
    assert _revised(s, "q3")["v1"]["set_accuracy"] == 1.0
    # the release gold is scored as before, and says so
    release = s.con.execute("select distinct gold_version from scores where rule <> 'revised'").fetchall()
    assert release == [("release",)] and s.scores("q2")["subspan_em_loft"] == 1.0
    metrics = s.con.execute(
        "select gold_version, n, mean from metrics where rule = 'revised' and metric = 'set_accuracy' order by all"
    ).fetchall()
    assert metrics == [("v1", 3, pytest.approx(2 / 3)), ("v2", 1, 0.0)]
