"""A small published warehouse for the dashboard tests: ArguAna at 32k answered by bm25, plus an
imported prediction file on the same dev queries (so a paired comparison exists), and a generated
multimodal dataset (OVEN-style: images with a question) with imported predictions on its dev
query (so the drill-down shows a query's image)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loft_warehouse.cli import main
from tests import mm_release
from tests.conftest import query, run_dbt

# gpt-4o without its key: skipped, so the tables must show it as not run (never a score of 0).
SETTINGS = "{datasets: [retrieval/arguana, mm/oven], systems: [bm25, gpt-4o]}"
NO_KEYS = {"OPENAI_API_KEY": "", "GEMINI_API_KEY": ""}


def build_env(work: Path) -> dict[str, str]:
    """The test warehouse's own data dir, imports folder and response store, and no API key."""
    return {
        "LOFT_DATA_DIR": str(work / "data"),
        "LOFT_IMPORTS_DIR": str(work / "imports"),
        "LOFT_RESPONSE_STORE": str(work / "store.sqlite"),
        **NO_KEYS,
    }


def _data_dir(work: Path, shared_data: Path) -> None:
    """The shared release's retrieval datasets and tokenizers, and a generated mm/oven at 32k."""
    data = work / "data"
    (data / "loft").mkdir(parents=True)
    (data / "loft" / "retrieval").symlink_to(shared_data / "loft" / "retrieval")
    (data / "tokenizers").symlink_to(shared_data / "tokenizers")
    mm_release.write_release(data, datasets=("oven",))


def _import(database: Path, lines: list[dict], arguments: str, work: Path) -> None:
    predictions = work / f"{arguments.split()[1]}.jsonl"
    predictions.write_text("".join(json.dumps(line) + "\n" for line in lines))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LOFT_DUCKDB_PATH", str(database))
        patch.setenv("LOFT_DATA_DIR", str(work / "data"))
        command = f"import-predictions {predictions} {arguments} --size 32k --imports-dir {work / 'imports'}"
        assert main(command.split()) == 0


@pytest.fixture(scope="session")
def dashboard_warehouse(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> Path:
    work = tmp_path_factory.mktemp("dashboard")
    database = work / "loft.duckdb"
    _data_dir(work, shared_data)
    env = build_env(work)
    built = run_dbt(["build", "--select", "loft_32k", "--vars", SETTINGS], database, env, publish=True)
    assert built.returncode == 0, built.stdout[-3000:]
    dev = query(database, "select qid, gold_pids from loft_32k.queries where split = 'dev' order by qid")
    lines = [
        {"qid": qid, "num_turns": 1, "model_outputs": [[gold[0] if i % 2 == 0 else "no-such-pid"]]}
        for i, (qid, gold) in enumerate(dev)
    ]
    _import(database, lines, "--system imported-run --task retrieval --dataset arguana --split dev", work)
    found = [{"qid": "dev-2", "num_turns": 1, "model_outputs": [["oven-002"]]}]
    _import(database, found, "--system mm-imported-run --task mm --dataset oven --split dev", work)
    rebuilt = run_dbt(["build", "--select", "loft_32k", "--vars", SETTINGS], database, env, publish=True)
    assert rebuilt.returncode == 0, rebuilt.stdout[-3000:]
    return database
