"""Runs add up, on a real 128k warehouse: a full build, an ArguAna import, then builds of other
selections (one dataset, one keyless system twice, a quick try) each keep every run they did not
select, and `loft forget` removes the import and says so. Settings are checked before any work."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from loft_warehouse.cli import main
from loft_warehouse.readers import read_jsonl
from tests.conftest import query, run_dbt

pytestmark = pytest.mark.slow
RETRIEVAL = ["arguana", "hotpotqa", "msmarco", "nq"]
NO_KEYS = {"OPENAI_API_KEY": "", "GEMINI_API_KEY": "", "GOOGLE_API_KEY": "", "ANTHROPIC_API_KEY": ""}
LEADERBOARD = (
    "select system, dataset, round(value, 4), n from loft_128k.leaderboard "
    "where source <> 'paper' and is_paper_metric and split = 'test' order by system, dataset"
)
BM25_RESPONSES = (
    "select prompt_id, status, raw_text, query_limit from loft_128k.responses where system = 'bm25' order by prompt_id"
)


def _predictions(shared_data: Path, work: Path) -> Path:
    """ArguAna 128k test in LOFT's format: 50 right (gold first), 30 wrong, 20 unanswered."""
    queries = [record for _, record in read_jsonl(shared_data / "loft/retrieval/arguana/128k/test_queries.jsonl")]
    other = queries[0]["answers"][0][0]
    lines = []
    for i, record in enumerate(queries[:80]):
        gold = record["answers"][0][0]
        answer = [gold, other] if i < 50 else [other if gold != other else queries[1]["answers"][0][0]]
        lines.append(json.dumps({"qid": record["qid"], "num_turns": 1, "model_outputs": [answer]}))
    path = work / "preds.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def _loft(database: Path, env: dict[str, str], *argv: str) -> int:
    with pytest.MonkeyPatch.context() as patch:
        for name, value in {**env, "LOFT_DUCKDB_PATH": str(database)}.items():
            patch.setenv(name, value)
        return main(list(argv))


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> dict:
    """The sequence, each step's leaderboard, bm25 responses and dbt output."""
    work = tmp_path_factory.mktemp("accumulate")
    database = work / "loft.duckdb"
    env = {**NO_KEYS, "LOFT_IMPORTS_DIR": str(work / "imports"), "LOFT_RESPONSE_STORE": str(work / "store.sqlite")}
    steps: dict = {}

    def build(name: str, *extra: str) -> None:
        result = run_dbt(["build", "--select", "loft_128k", *extra], database, env)
        assert result.returncode == 0, result.stdout[-5000:]
        steps[name] = {"out": result.stdout, "board": query(database, LEADERBOARD),
                       "bm25": query(database, BM25_RESPONSES)}  # fmt: skip

    build("full")
    preds = _predictions(shared_data, work)
    command = ["import-predictions", str(preds), "--system", "upstream-run", "--size", "128k", "--task", "retrieval"]
    assert _loft(database, env, *command, "--dataset", "arguana", "--build") == 0
    steps["import"] = {"board": query(database, LEADERBOARD), "bm25": query(database, BM25_RESPONSES)}
    build("nq", "--vars", "{datasets: [retrieval/nq]}")
    build("gpt-4o", "--vars", "{systems: [gpt-4o]}")
    build("gpt-4o again", "--vars", "{systems: [gpt-4o]}")
    build("quick try", "--vars", "{limit: 3}")
    steps["quick try"]["limits"] = query(
        database, "select system, query_limit, count(*) from loft_128k.responses group by all order by all"
    )
    assert _loft(database, env, "forget", "--system", "upstream-run") == 0
    steps["forgot"] = {"board": query(database, LEADERBOARD), "bm25": query(database, BM25_RESPONSES)}
    steps["database"], steps["env"] = database, env
    return steps


def test_the_full_build_and_the_import_are_on_the_leaderboard(history: dict) -> None:
    systems = {(system, dataset) for system, dataset, _, _ in history["import"]["board"]}
    assert {("bm25", dataset) for dataset in RETRIEVAL} <= systems
    assert ("upstream-run", "arguana") in systems
    assert [row for row in history["import"]["board"] if row[0] == "upstream-run"] == [
        ("upstream-run", "arguana", 0.5, 100)
    ]


def test_builds_of_other_selections_keep_every_run_they_did_not_select(history: dict) -> None:
    kept = history["import"]
    for step in ("nq", "gpt-4o", "gpt-4o again", "quick try"):
        assert history[step]["board"] == kept["board"], step
        assert history[step]["bm25"] == kept["bm25"], step


def test_a_keyless_build_of_a_paid_system_changes_nothing_it_did_not_select(history: dict) -> None:
    assert "results: nothing changed" in history["gpt-4o again"]["out"]


def test_a_quick_try_is_marked_and_never_displaces_a_full_run(history: dict) -> None:
    limits = {(system, limit) for system, limit, _ in history["quick try"]["limits"]}
    assert ("bm25", None) in limits and ("bm25", 3) not in limits
    assert ("gpt-4o", 3) in limits


def test_each_build_ends_with_the_results_it_added(history: dict) -> None:
    lines = history["full"]["out"].splitlines()
    assert any("primary metric(s) added, changed or removed by this build" in line for line in lines)
    header = next(line for line in lines if "95% interval" in line)
    assert header.split()[-9:] == ["split", "metric", "value", "95%", "interval", "n", "unans", "marks", "paper"]
    arguana = next(line for line in lines if "bm25 " in line and "retrieval/arguana" in line and " test " in line)
    assert arguana.split()[-7:] == ["recall@1", "0.640", "[0.54,", "0.73]", "100", "0", "0.84"]


def test_forget_removes_the_import_and_keeps_the_rest(history: dict, capsys: pytest.CaptureFixture[str]) -> None:
    assert not [row for row in history["forgot"]["board"] if row[0] == "upstream-run"]
    assert [row for row in history["forgot"]["board"] if row[0] == "bm25"] == [
        row for row in history["import"]["board"] if row[0] == "bm25"
    ]
    assert history["forgot"]["bm25"] == history["import"]["bm25"]
    assert _loft(history["database"], history["env"], "forget", "--system", "upstream-run") == 0
    assert "upstream-run is in no run at 128k; nothing changed" in capsys.readouterr().out


def test_a_mistyped_setting_is_refused_in_one_line_before_any_work(history: dict) -> None:
    database, env = history["database"], history["env"]
    before = query(database, LEADERBOARD)
    started = time.monotonic()
    result = run_dbt(["build", "--select", "loft_128k", "--vars", "{limt: 3}"], database, env)
    assert result.returncode != 0
    assert "--vars limt: no such setting (did you mean 'limit'?)" in result.stdout
    assert "START sql" not in result.stdout and "START python" not in result.stdout
    assert time.monotonic() - started < 120
    assert query(database, LEADERBOARD) == before
