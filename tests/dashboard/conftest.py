"""A small published warehouse for the dashboard tests: ArguAna at 32k answered by bm25, plus an
imported prediction file on the same dev queries (so a paired comparison exists)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loft_warehouse.cli import main
from tests.conftest import query, run_dbt

# gpt-4o without its key: skipped, so the tables must show it as not run (never a score of 0).
SETTINGS = "{datasets: [retrieval/arguana], systems: [bm25, gpt-4o]}"
NO_KEYS = {"OPENAI_API_KEY": "", "GEMINI_API_KEY": ""}


def build_env(work: Path) -> dict[str, str]:
    """The test warehouse's own imports folder and response store, and no API key."""
    return {"LOFT_IMPORTS_DIR": str(work / "imports"), "LOFT_RESPONSE_STORE": str(work / "store.sqlite"), **NO_KEYS}


@pytest.fixture(scope="session")
def dashboard_warehouse(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> Path:
    work = tmp_path_factory.mktemp("dashboard")
    database, imports = work / "loft.duckdb", work / "imports"
    env = build_env(work)
    built = run_dbt(["build", "--select", "loft_32k", "--vars", SETTINGS], database, env, publish=True)
    assert built.returncode == 0, built.stdout[-3000:]
    dev = query(database, "select qid, gold_pids from loft_32k.queries where split = 'dev' order by qid")
    lines = [
        {"qid": qid, "num_turns": 1, "model_outputs": [[gold[0] if i % 2 == 0 else "no-such-pid"]]}
        for i, (qid, gold) in enumerate(dev)
    ]
    predictions = work / "imported.jsonl"
    predictions.write_text("".join(json.dumps(line) + "\n" for line in lines))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LOFT_DUCKDB_PATH", str(database))
        command = f"import-predictions {predictions} --system imported-run --size 32k --task retrieval "
        command += f"--dataset arguana --split dev --imports-dir {imports}"
        assert main(command.split()) == 0
    rebuilt = run_dbt(["build", "--select", "loft_32k", "--vars", SETTINGS], database, env, publish=True)
    assert rebuilt.returncode == 0, rebuilt.stdout[-3000:]
    return database
