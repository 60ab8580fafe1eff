"""QUEST-LOFT's corpus (seed 002 §3.1) in dbt: the QUEST-style release of test_quest_fixture_dbt
with The Scarlet Letter in two passages (the second after every other page), built at 128k with
prompt variants default and merged_pages and answered by the planted system: merged_pages shows
one document per page with its passages' texts joined, every method runs on it, and the QUEST-LOFT
marts keep its runs apart from default's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from loft_warehouse.inference.systems import DEFAULT_SYSTEMS_FILE
from tests.conftest import query, run_dbt
from tests.methods.test_quest_fixture_dbt import write_release

pytestmark = pytest.mark.slow
METHODS = ["cic", "justified_verify", "rag_top5", "rag_top5_justified_verify"]
SECOND_PASSAGE = "Its heroine is Hester Prynne."


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> Path:
    root = tmp_path_factory.mktemp("merged")
    data = write_release(root / "data", shared_data)
    with open(data / "loft" / "rag" / "quest" / "128k" / "corpus.jsonl", "a", encoding="utf-8") as handle:
        passage = {"pid": "quest-extra", "title_text": "The Scarlet Letter", "passage_text": SECOND_PASSAGE}
        handle.write(json.dumps(passage) + "\n")
    systems = yaml.safe_load(DEFAULT_SYSTEMS_FILE.read_text())["systems"]
    planted = next(s for s in systems if s["name"] == "planted-effects")
    (root / "systems.yaml").write_text(yaml.safe_dump({"systems": [planted]}), encoding="utf-8")
    env = {
        "LOFT_DATA_DIR": str(data),
        "LOFT_SYSTEMS_FILE": str(root / "systems.yaml"),
        "LOFT_RESPONSE_STORE": str(root / "store.sqlite"),
        "LOFT_IMPORTS_DIR": str(root / "imports"),
    }
    settings = {
        "systems": ["planted-effects"],
        "datasets": "rag/quest",
        "prompt_variants": ["default", "merged_pages"],
        "methods": METHODS,
    }
    database = root / "loft.duckdb"
    result = run_dbt(["build", "--select", "loft_128k", "--vars", json.dumps(settings)], database, env)
    assert result.returncode == 0, result.stdout[-5000:]
    return database


def test_merged_pages_shows_one_document_per_page(built: Path) -> None:
    shown = dict(query(built, "select variant, list(pid order by position) from loft_128k.prompt_doc_ids group by all"))
    assert len(shown["default"]) == 13 and shown["default"][-1] == "quest-extra"
    assert shown["merged_pages"] == shown["default"][:-1]
    lines = query(
        built,
        "select variant, count(*) from loft_128k.prompt_texts where method = 'cic' and prompt like "
        "'%TITLE: The Scarlet Letter | CONTENT: An 1850 novel by Nathaniel Hawthorne set in Puritan Boston. "
        f"{SECOND_PASSAGE} |%' group by all",
    )
    assert lines == [("merged_pages", 4)]  # the three test questions and the dev one


def test_every_method_runs_on_merged_pages(built: Path) -> None:
    rows = query(
        built,
        "select variant, list(distinct method order by method) from loft_128k.predictions "
        "where status = 'ok' and is_final group by all order by variant",
    )
    assert rows == [(variant, sorted(METHODS)) for variant in ("default", "merged_pages")]


def test_quest_loft_marts_keep_the_variants_apart(built: Path) -> None:
    for mart in ("quest_loft_methods", "quest_loft_retrieval"):
        rows = query(
            built,
            f"select method, variant, n from loft_128k.{mart} where paper_table in (3, 6) "
            "and paper_method = 'CiC Baseline' and column_order = 1",
        )
        assert sorted(rows) == [("cic", "default", 2), ("cic", "merged_pages", 2)], mart
