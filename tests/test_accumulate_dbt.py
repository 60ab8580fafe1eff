"""Runs add up, on a real 128k warehouse: a full build, an ArguAna import, then builds of other
selections (one dataset, one keyless system twice, a quick try) each keep every run they did not
select, and `loft forget` removes the import and says so. Settings are checked before any work."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from loft_warehouse.readers import read_jsonl
from tests.conftest import query, run_dbt

pytestmark = pytest.mark.slow
LOFT = str(Path(sys.executable).with_name("loft"))
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


def _loft(database: Path, env: dict[str, str], *argv: str) -> subprocess.CompletedProcess:
    """The `loft` command as a user runs it (its own process: an import's --build runs dbt in it)."""
    return subprocess.run(
        [LOFT, *argv],
        cwd=database.parent,
        env={**os.environ, **env, "LOFT_DUCKDB_PATH": str(database), "DO_NOT_TRACK": "1"},
        capture_output=True,
        text=True,
        timeout=1800,
    )


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
    imported = _loft(database, env, *command, "--dataset", "arguana", "--build")
    assert imported.returncode == 0, imported.stdout[-5000:] + imported.stderr[-2000:]
    steps["import"] = {"out": imported.stdout, "board": query(database, LEADERBOARD),
                       "bm25": query(database, BM25_RESPONSES)}  # fmt: skip
    build("nq", "--vars", "{datasets: [retrieval/nq]}")
    build("gpt-4o", "--vars", "{systems: [gpt-4o]}")
    build("gpt-4o again", "--vars", "{systems: [gpt-4o]}")
    build("quick try", "--vars", "{limit: 3}")
    steps["quick try"]["limits"] = query(
        database, "select system, query_limit, count(*) from loft_128k.responses group by all order by all"
    )
    forgot = _loft(database, env, "forget", "--system", "upstream-run")
    assert forgot.returncode == 0, forgot.stdout[-5000:] + forgot.stderr[-2000:]
    steps["forgot"] = {"out": forgot.stdout, "board": query(database, LEADERBOARD),
                       "bm25": query(database, BM25_RESPONSES)}  # fmt: skip
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


def test_forget_removes_the_import_says_so_and_keeps_the_rest(history: dict) -> None:
    out = history["forgot"]["out"]
    assert "forgot upstream-run at 128k: no response row; 1 landed import(s) set aside" in out
    removed = next(line for line in out.splitlines() if "upstream-run" in line and "removed import" in line)
    assert "retrieval/arguana" in removed and "0.500" in removed
    assert not [row for row in history["forgot"]["board"] if row[0] == "upstream-run"]
    assert [row for row in history["forgot"]["board"] if row[0] == "bm25"] == [
        row for row in history["import"]["board"] if row[0] == "bm25"
    ]
    assert history["forgot"]["bm25"] == history["import"]["bm25"]
    again = _loft(history["database"], history["env"], "forget", "--system", "upstream-run")
    assert again.returncode == 0
    assert "upstream-run is in no run at 128k; nothing changed" in again.stdout


def test_an_import_ends_with_its_result_and_may_not_take_a_configured_name(history: dict, tmp_path: Path) -> None:
    row = next(line for line in history["import"]["out"].splitlines() if "upstream-run" in line and " import " in line)
    assert row.split()[-9:] == ["test", "recall@1", "0.500", "[0.40,", "0.60]", "100", "20", "import", "0.84"]
    preds = tmp_path / "p.jsonl"
    preds.write_text("")
    refused = _loft(history["database"], history["env"], "import-predictions", str(preds), "--system", "gpt-4o",
                    "--size", "128k", "--task", "retrieval", "--dataset", "arguana")  # fmt: skip
    assert refused.returncode == 2
    assert "--system gpt-4o: a configured system has that name" in refused.stderr


def test_a_mistyped_setting_is_refused_in_one_line_before_any_work(history: dict) -> None:
    database, env = history["database"], history["env"]
    before = query(database, LEADERBOARD)
    started = time.monotonic()
    result = run_dbt(["build", "--select", "loft_128k", "--vars", "{limt: 3}"], database, env)
    assert result.returncode != 0
    assert "--vars limt: no such setting (did you mean 'limit'?)" in result.stdout
    assert "START sql" not in result.stdout and "START python" not in result.stdout
    assert time.monotonic() - started < 120
    refused = _loft(database, env, "build", "--select", "loft_128k", "--vars", "{systems: [gpt4o]}")
    assert refused.returncode == 2
    assert "unknown system(s) ['gpt4o'] ('gpt4o': did you mean 'gpt-4o'?)" in refused.stderr
    assert query(database, LEADERBOARD) == before
