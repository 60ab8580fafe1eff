"""Issue 12 item 4 / issue 11 item 3: builds publish atomically; analysts are never locked out.

dbt builds `<warehouse>.build`; only a run with no failure is copied over the warehouse file in
one rename (python/loft_warehouse/dbt_boundary/publish.py). These tests run dbt as a user does (publishing)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import duckdb
import pytest

from loft_warehouse.settings import PROJECT_ROOT
from tests.conftest import DBT, run_dbt

ARGUANA = "{datasets: [retrieval/arguana], systems: [bm25]"


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _count(database: Path, table: str) -> int:
    with duckdb.connect(str(database), read_only=True) as con:
        return con.sql(f"select count(*) from {table}").fetchone()[0]


PROMPTS = "select variant, count(*) from loft_32k.prompts group by all order by all"


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> Path:
    database = tmp_path_factory.mktemp("publish") / "loft.duckdb"
    result = run_dbt(["build", "--select", "loft_32k", "--vars", ARGUANA + "}"], database, publish=True)
    assert result.returncode == 0, result.stdout[-3000:]
    assert f"published {database}" in result.stdout
    assert Path(f"{database}.build").exists()
    return database


def test_a_failed_build_keeps_the_last_good_build_whole_and_readers_are_never_locked_out(published: Path) -> None:
    before = _digest(published)
    with duckdb.connect(str(published), read_only=True) as con:
        prompts = con.sql(PROMPTS).fetchall()
    reader = duckdb.connect(str(published), read_only=True)
    failing = subprocess.Popen(
        [DBT, "build", "--select", "loft_32k", "--vars", "{datasets: [retrieval/arguana], systems: [bm25, gpt-4o], "
         "prompt_variants: [few_shot_0], max_cost_usd: 0}", "--target-path", str(published.parent / "target")],
        cwd=PROJECT_ROOT,
        env={**os.environ, "LOFT_DUCKDB_PATH": str(published), "LOFT_BUILD_IN_PLACE": "", "OPENAI_API_KEY": "sk-x"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )  # fmt: skip
    reads = 0
    while failing.poll() is None:
        assert reader.sql(PROMPTS).fetchall() == prompts
        with duckdb.connect(str(published), read_only=True) as fresh:
            fresh.sql("select count(*) from loft_32k.metrics").fetchone()
        reads += 1
        time.sleep(0.5)
    output = failing.stdout.read() if failing.stdout else ""
    assert failing.returncode != 0 and "exceeds max_cost_usd" in output, output[-3000:]
    assert "still holds the last good build" in output
    assert reads >= 5
    assert _digest(published) == before
    with duckdb.connect(f"{published}.build", read_only=True) as working:
        replaced = working.sql(PROMPTS).fetchall()
    assert replaced != prompts  # the working file holds the failed run's tables; analysts never see them

    good = run_dbt(["build", "--select", "loft_32k", "--vars", ARGUANA + ", limit: 2}"], published, publish=True)
    assert good.returncode == 0, good.stdout[-3000:]
    assert _digest(published) != before
    assert reader.sql(PROMPTS).fetchall() == prompts
    reader.close()
    with duckdb.connect(str(published), read_only=True) as con:
        # the quick try is published, and never displaces the full run it is a part of
        assert con.sql("select distinct query_limit from loft_32k.responses").fetchall() == [(None,)]
    assert not list(published.parent.glob(".*.publishing"))


def _kill_when(command: list[str], env: dict[str, str], reached, delay_s: float = 0.0) -> None:
    """Run `command` from the project and SIGKILL it `delay_s` after an output line satisfies `reached`."""
    running = subprocess.Popen(command, cwd=PROJECT_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True)  # fmt: skip
    assert running.stdout is not None
    for line in running.stdout:
        if reached(line):
            break
    time.sleep(delay_s)
    running.send_signal(signal.SIGKILL)
    running.wait()


def test_a_killed_build_leaves_the_warehouse_file_untouched(published: Path) -> None:
    before = _digest(published)
    _kill_when(
        [DBT, "build", "--select", "loft_32k", "--vars", ARGUANA + ", limit: 3}",
         "--target-path", str(published.parent / "target")],
        {**os.environ, "LOFT_DUCKDB_PATH": str(published), "LOFT_BUILD_IN_PLACE": ""},
        lambda line: "START python table model loft_32k_internal.stg_queries" in line,
        delay_s=2,
    )  # fmt: skip
    assert _digest(published) == before
    assert _count(published, "loft_32k.corpus") > 0
    assert not list(published.parent.glob(".*.publishing"))


CONTENT = "select md5(string_agg(t::varchar, '|' order by t::varchar)) from {table} as t"
PAIRED = ("loft_32k.corpus", "loft_32k.prompt_prefixes", "loft_32k.queries", "loft_32k.metrics")


def _contents(database: Path) -> dict[str, str]:
    with duckdb.connect(str(database), read_only=True) as con:
        return {table: con.sql(CONTENT.format(table=table)).fetchone()[0] for table in PAIRED}


def _edited_data(shared_data: Path, root: Path) -> Path:
    """A data dir whose ArguAna passages differ from the shared ones in their text."""
    root.mkdir(parents=True)
    for entry in shared_data.iterdir():
        if entry.name != "loft":
            (root / entry.name).symlink_to(entry)
    arguana = root / "loft" / "retrieval" / "arguana"
    shutil.copytree(shared_data / "loft" / "retrieval" / "arguana", arguana)
    for corpus in arguana.glob("*/corpus.jsonl"):
        rows = [json.loads(line) for line in corpus.read_text(encoding="utf-8").splitlines()]
        edited = [{**row, "passage_text": "KILLED BUILD TEXT " + row["passage_text"]} for row in rows]
        corpus.write_text("".join(json.dumps(row) + "\n" for row in edited), encoding="utf-8")
    return root


def test_a_partial_build_after_a_killed_build_publishes_one_build_never_a_mix(
    published: Path, shared_data: Path, tmp_path: Path
) -> None:
    """Issue 33 item 2: a build killed right after `corpus` was rebuilt, then the selection
    `loft import-* --build` runs: the warehouse it publishes holds one build's tables."""
    before = _contents(published)
    edited = _edited_data(shared_data, tmp_path / "data")
    _kill_when(
        [DBT, "build", "--select", "loft_32k", "--vars", ARGUANA + "}",
         "--target-path", str(published.parent / "target")],
        {**os.environ, "LOFT_DUCKDB_PATH": str(published), "LOFT_BUILD_IN_PLACE": "", "LOFT_DATA_DIR": str(edited)},
        lambda line: "OK created" in line and "loft_32k.corpus " in line,
    )  # fmt: skip
    working = Path(f"{published}.build")
    assert Path(f"{working}.unpublished").exists()
    assert _count(working, "loft_32k.corpus where contains(text, 'KILLED BUILD TEXT')") > 0

    partial = run_dbt(
        ["build", "--select", "loft_32k__int_imported_queries+", "--vars", ARGUANA + "}"], published, publish=True
    )
    assert partial.returncode == 0, partial.stdout[-3000:]
    assert f"published {published}" in partial.stdout
    # What the selection did not rebuild is the last good build's; metrics it rebuilds from them.
    unselected = {table: digest for table, digest in before.items() if table != "loft_32k.metrics"}
    after = _contents(published)
    assert {table: after[table] for table in unselected} == unselected
    assert f"did not publish; starting from the published build {published}" in partial.stdout
    assert not Path(f"{working}.unpublished").exists()
    assert _contents(working) == after


def test_an_import_killed_in_its_build_publishes_nothing_and_its_rerun_publishes_it_whole(
    published: Path, tmp_path: Path
) -> None:
    """Issue 33 item 2, the phases of `loft import-predictions --build`: landing the file (one
    rename, tests/scoring/test_importer.py), its dbt build (killed here), publishing (one rename)."""
    qids = [q for (q,) in duckdb.connect(str(published), read_only=True).sql(
        "select qid from loft_32k.queries where dataset = 'arguana' and split = 'dev' order by query_rank"
    ).fetchall()]  # fmt: skip
    predictions = tmp_path / "preds.jsonl"
    predictions.write_text("".join(json.dumps({"qid": q, "num_turns": 1, "model_outputs": [[]]}) + "\n" for q in qids))
    before = _contents(published)
    env = {
        **os.environ,
        "LOFT_DUCKDB_PATH": str(published),
        "LOFT_BUILD_IN_PLACE": "",
        "LOFT_DATASETS": "retrieval/arguana",
        "LOFT_SYSTEMS": "bm25",
        "LOFT_IMPORTS_DIR": str(tmp_path / "imports"),
    }
    command = [str(Path(DBT).with_name("loft")), "import-predictions", str(predictions), "--system", "killed-import",
               "--size", "32k", "--task", "retrieval", "--dataset", "arguana", "--split", "dev", "--build"]  # fmt: skip
    _kill_when(command, env, lambda line: "OK created" in line and "int_imported_predictions" in line)
    assert _contents(published) == before
    assert Path(f"{published}.build.unpublished").exists()

    rerun = subprocess.run(command, cwd=PROJECT_ROOT, env=env, capture_output=True, text=True, timeout=1800)
    assert rerun.returncode == 0, rerun.stdout[-3000:]
    assert "did not publish; starting from the published build" in rerun.stdout
    with duckdb.connect(str(published), read_only=True) as con:
        scored = con.sql(
            "select count(distinct qid) from loft_32k.predictions where system = 'killed-import'"
        ).fetchone()
    assert scored == (len(qids),)
    after = _contents(published)
    assert {table: after[table] == before[table] for table in PAIRED} == {
        "loft_32k.corpus": True, "loft_32k.prompt_prefixes": True, "loft_32k.queries": True, "loft_32k.metrics": False,
    }  # fmt: skip
