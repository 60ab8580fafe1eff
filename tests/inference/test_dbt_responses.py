"""The dbt models of the calls (every stage's responses, `responses`, `cost_estimates`), built by
dbt in a scratch project whose upstream prompt tables are small hand-made stubs: skips without
keys, real calls through the real clients with keys pointed at the fixture, and no planted key
anywhere on disk."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest
import yaml

from loft_warehouse.settings import PROJECT_ROOT
from tests.inference.support import anthropic_system, gemini_system, openai_system, write_systems

DBT = str(Path(sys.executable).with_name("dbt"))
LOFT = str(Path(sys.executable).with_name("loft"))
MODELS = PROJECT_ROOT / "models" / "loft_128k"
COPIED = (
    "marts/loft_128k__responses.sql",
    "marts/loft_128k__cost_estimates.py",
    "marts/_marts__inference.yml",
    "intermediate/loft_128k__int_stage1_responses.py",
    "intermediate/loft_128k__int_stage1_answers.sql",
    "intermediate/loft_128k__int_stage2_prompts.py",
    "intermediate/loft_128k__int_stage2_responses.py",
    "intermediate/loft_128k__int_stage2_answers.sql",
    "intermediate/loft_128k__int_stage3_prompts.py",
    "intermediate/loft_128k__int_stage3_responses.py",
)
PLANTED = {
    "LOFT_TEST_OPENAI_KEY": "sk-PLANTED-0penai-53cr3t-4f9e",
    "LOFT_TEST_GEMINI_KEY": "gm-PLANTED-g3m-53cr3t-77aa",
    "LOFT_TEST_ANTHROPIC_KEY": "sk-ant-PLANTED-4nthr0p1c-53cr3t-19bd",
}
PREFIX = (
    "Find the passage.\\nID: 0 | TITLE: Cats | CONTENT: cats purr | END ID: 0\\n"
    "ID: 1 | TITLE: Sea | CONTENT: the sea is salty | END ID: 1\\n"
)
STUBS = {
    "loft_128k__prompt_prefixes": f"""
select 'p1' as prefix_id, 'retrieval' as task, 'nq' as dataset, 'nq' as corpus_id,
       'default' as variant, e'{PREFIX}' as text, 'h' as content_hash, 40::bigint as n_tokens""",
    "loft_128k__prompts": """
select *, 'cic' as method, 1::bigint as stage, 0::bigint as call_index, []::varchar[] as segment_ids,
       null::varchar as payload, 2::bigint as n_documents, md5(prefix_id || suffix) as prompt_digest
from (values
  ('retrieval/nq/nq/default/q1/0', 'retrieval', 'nq', 'nq', 'default', 'dev', 'q1', 0::bigint, 1::bigint,
   'p1', '', e'query: which animal purrs\\n', 40::bigint, 45::bigint),
  ('retrieval/nq/nq/default/q2/0', 'retrieval', 'nq', 'nq', 'default', 'dev', 'q2', 0::bigint, 1::bigint,
   'p1', '', e'query: salty sea water\\n', 40::bigint, 45::bigint),
  ('rag/nq/nq/default/q1/0', 'rag', 'nq', 'nq', 'default', 'dev', 'q1', 0::bigint, 1::bigint,
   'p1', '', e'question: who purrs\\n', 40::bigint, 45::bigint)
) as t(prompt_id, task, dataset, corpus_id, variant, split, qid, turn, n_turns, prefix_id, head, suffix,
       n_tokens_prefix, n_tokens_total)""",
    "loft_128k__prompt_segments": "select 's0' as segment_id, e'unused\\n' as text",
    "loft_128k__stg_mm_media": """
select null::varchar as dataset, null::varchar as sha256, null::varchar as mime_type, null::blob as data,
       null::bigint as duration_ms
where false""",
    "loft_128k__arms": """
select task, 'nq' as dataset, 'default' as variant, 'cic' as method, task || '-arm' as arm_id
from (values ('retrieval'), ('rag')) as t(task)""",
    "loft_128k__stg_datasets": "select 'retrieval' as task, 'nq' as dataset, true as has_title, ['128k'] as contexts",
    "loft_128k__prompt_doc_ids": """
select * from (values ('retrieval', 'nq', 'nq', 'default', 0::bigint, '0', 'pc'),
                      ('retrieval', 'nq', 'nq', 'default', 1::bigint, '1', 'ps'))
  as t(task, dataset, corpus_id, variant, position, shown_id, pid)""",
    "loft_128k__corpus": """
select * from (values ('retrieval', 'nq', 'nq', 'pc', 'Cats', 'cats purr', 3::bigint),
                      ('retrieval', 'nq', 'nq', 'ps', 'Sea', 'the sea is salty', 4::bigint))
  as t(task, dataset, corpus_id, pid, title, text, n_tokens)""",
    "loft_128k__queries": """
select * from (values ('retrieval', 'nq', 'nq', 'q1', 0::bigint, 'which cats purr'),
                      ('retrieval', 'nq', 'nq', 'q2', 0::bigint, 'salty sea water'))
  as t(task, dataset, corpus_id, qid, turn, query_text)""",
}


def _project(root: Path) -> Path:
    project = root / "project"
    marts = project / "models" / "loft_128k" / "marts"
    for folder in ("marts", "intermediate"):
        (project / "models" / "loft_128k" / folder).mkdir(parents=True)
    for name in ("dbt_project.yml", "profiles.yml"):
        shutil.copy(PROJECT_ROOT / name, project / name)
    shutil.copytree(PROJECT_ROOT / "macros", project / "macros")
    shutil.copytree(PROJECT_ROOT / "tests" / "dbt", project / "tests" / "dbt")
    for name in COPIED:
        shutil.copy(MODELS / name, project / "models" / "loft_128k" / name)
    for name, sql in STUBS.items():
        (marts / f"{name}.sql").write_text(sql)
    prices = PROJECT_ROOT / "seeds" / "model_prices.csv"
    sources = {
        "version": 2,
        "sources": [
            {
                "name": "reference",
                "meta": {"external_location": f"read_csv('{prices}', header = true, auto_detect = true)"},
                "tables": [{"name": "model_prices"}],
            }
        ],
    }
    (project / "models" / "_sources.yml").write_text(yaml.safe_dump(sources))
    systems = [
        {"name": "bm25", "provider": "bm25", "tasks": ["retrieval"], "options": {"top_k": 2}},
        openai_system(context_window=100_000),
        gemini_system(cache={"min_prefix_tokens": 10, "ttl_s": 60}),
        anthropic_system(model="claude-haiku-4-5-20251001", cache={"min_prefix_tokens": 10}),
    ]
    write_systems(root / "systems.yaml", systems)
    return project


def _build(project: Path, root: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("LOFT_TEST_")}
    full_env = {
        **clean,
        "LOFT_DUCKDB_PATH": str(root / "loft.duckdb"),
        "LOFT_RESPONSE_STORE": str(root / "store.sqlite"),
        "LOFT_SYSTEMS_FILE": str(root / "systems.yaml"),
        "DO_NOT_TRACK": "1",
        **env,
    }
    return subprocess.run(
        [DBT, "build", "--select", "loft_128k"]
        + ["--target-path", str(root / "target"), "--log-path", str(root / "logs")],
        cwd=project,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def _responses(root: Path) -> dict[tuple[str, str], tuple[str, str | None]]:
    with duckdb.connect(str(root / "loft.duckdb"), read_only=True) as con:
        rows = con.sql("select system, prompt_id, status, raw_text from loft_128k.responses").fetchall()
    return {(s, p): (status, text) for s, p, status, text in rows}


def test_build_skips_without_keys_calls_with_keys_and_leaks_no_key(tmp_path, server):
    project = _project(tmp_path)

    offline = _build(project, tmp_path, {})
    assert offline.returncode == 0, offline.stdout[-4000:]
    rows = _responses(tmp_path)
    assert rows[("bm25", "retrieval/nq/nq/default/q1/0")] == ("ok", "Final Answer: ['0', '1']")
    assert rows[("bm25", "retrieval/nq/nq/default/q2/0")] == ("ok", "Final Answer: ['1', '0']")
    assert ("bm25", "rag/nq/nq/default/q1/0") not in rows
    api_rows = {k: v for k, v in rows.items() if k[0] != "bm25"}
    assert len(api_rows) == 9
    assert {status for status, _ in api_rows.values()} == {"skipped_no_credentials"}
    assert "WARNING: gpt-fixture: 3 prompt(s) skipped_no_credentials" in offline.stderr + offline.stdout
    assert server.state.requests == []

    keyed = {
        **PLANTED,
        "LOFT_TEST_OPENAI_BASE_URL": f"{server.url}/v1",
        "LOFT_TEST_GEMINI_BASE_URL": server.url,
        "LOFT_TEST_ANTHROPIC_BASE_URL": server.url,
    }
    online = _build(project, tmp_path, keyed)
    assert online.returncode == 0, online.stdout[-4000:]
    rows = _responses(tmp_path)
    assert {rows[k][0] for k in rows} == {"ok"}
    assert len(rows) == 11
    state = server.state
    assert len(state.generation_requests("openai")) == 3
    assert len(state.generation_requests("gemini")) == 3
    assert len(state.generation_requests("anthropic")) == 3
    assert len(state.deleted_caches) == 1
    assert {r.headers.get("authorization") for r in state.generation_requests("openai")} == {
        f"Bearer {PLANTED['LOFT_TEST_OPENAI_KEY']}"
    }
    with duckdb.connect(str(tmp_path / "loft.duckdb"), read_only=True) as con:
        estimates = con.sql("select system, task, n_requests from loft_128k.cost_estimates order by all").fetchall()
    assert estimates == [
        ("bm25", "retrieval", 2),
        ("claude-fixture", "rag", 1),
        ("claude-fixture", "retrieval", 2),
        ("gemini-fixture", "rag", 1),
        ("gemini-fixture", "retrieval", 2),
        ("gpt-fixture", "rag", 1),
        ("gpt-fixture", "retrieval", 2),
    ]

    # A third build finds every response stored and calls nothing.
    before = len(state.requests)
    again = _build(project, tmp_path, keyed)
    assert again.returncode == 0
    assert len(state.requests) == before

    outputs = offline.stdout + offline.stderr + online.stdout + online.stderr + again.stdout + again.stderr
    for secret in PLANTED.values():
        assert secret not in outputs
        leaks = [p for p in tmp_path.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()]
        assert leaks == []


@pytest.mark.parametrize("whom", ["terminal", "loft build only"])
def test_ctrl_c_stops_a_build_within_seconds_and_a_rerun_resumes(tmp_path, server, whom):
    """A Ctrl-C while a call would hold the build for a minute: as a terminal sends it (SIGINT to
    `loft build` and the dbt it runs, one process group), and to `loft build` alone, so that only
    its stop file can stop dbt's models. Issue 60 item 10: with dbt's own SIGINT alone this stopped
    only when dbt's main thread happened to have installed the wakeup fd (failed twice in full runs)."""
    project = _project(tmp_path)
    keyed = {
        **PLANTED,
        "LOFT_TEST_OPENAI_BASE_URL": f"{server.url}/v1",
        "LOFT_TEST_GEMINI_BASE_URL": server.url,
        "LOFT_TEST_ANTHROPIC_BASE_URL": server.url,
        "LOFT_DUCKDB_PATH": str(tmp_path / "loft.duckdb"),
        "LOFT_RESPONSE_STORE": str(tmp_path / "store.sqlite"),
        "LOFT_SYSTEMS_FILE": str(tmp_path / "systems.yaml"),
        "DO_NOT_TRACK": "1",
    }
    server.state.latency_s = 60.0  # a call that would hold the build for a minute
    dump_on_abort = {"PYTHONFAULTHANDLER": "1"}
    clean = {k: v for k, v in os.environ.items() if not k.startswith("LOFT_TEST_")}
    build = subprocess.Popen(
        [LOFT, "build", "--select", "loft_128k", "--target-path", str(tmp_path / "target")]
        + ["--log-path", str(tmp_path / "logs"), "--project-dir", str(project), "--profiles-dir", str(project)],
        cwd=project,
        env={**clean, **keyed, **dump_on_abort},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    deadline = time.monotonic() + 300
    while not server.state.generation_requests() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert server.state.generation_requests(), "no call was made"
    if whom == "terminal":
        os.killpg(build.pid, signal.SIGINT)
    else:
        build.send_signal(signal.SIGINT)
    interrupted = time.monotonic()
    try:
        output, _ = build.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        os.killpg(build.pid, signal.SIGABRT)  # faulthandler prints every thread's stack
        output, _ = build.communicate(timeout=60)
        raise AssertionError(f"Ctrl-C did not stop the build; its threads at abort:\n{output[-12000:]}") from None
    assert time.monotonic() - interrupted < 20, output[-3000:]
    assert build.returncode == 130
    assert "loft build: interrupted; nothing of this build was published" in output, output[-3000:]

    server.state.latency_s = 0.0
    resumed = _build(project, tmp_path, keyed)
    assert resumed.returncode == 0, resumed.stdout[-4000:]
    assert {status for status, _ in _responses(tmp_path).values()} == {"ok"}


def test_two_builds_sharing_a_store_pay_for_each_prompt_once(tmp_path, server):
    """Issue 12, item 3: two warehouses (two DuckDB files) on one response store, built at once."""
    project = _project(tmp_path)
    server.state.latency_s = 0.5
    clean = {k: v for k, v in os.environ.items() if not k.startswith("LOFT_TEST_")}
    builds = []
    for name in ("a", "b"):
        root = tmp_path / name
        root.mkdir()
        env = {
            **clean,
            **PLANTED,
            "LOFT_TEST_OPENAI_BASE_URL": f"{server.url}/v1",
            "LOFT_TEST_GEMINI_BASE_URL": server.url,
            "LOFT_TEST_ANTHROPIC_BASE_URL": server.url,
            "LOFT_DUCKDB_PATH": str(root / "loft.duckdb"),
            "LOFT_RESPONSE_STORE": str(tmp_path / "shared.sqlite"),
            "LOFT_SYSTEMS_FILE": str(tmp_path / "systems.yaml"),
            "DO_NOT_TRACK": "1",
        }
        command = [DBT, "build", "--select", "loft_128k", "--target-path", str(root / "target")]
        builds.append(
            subprocess.Popen(command, cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        )
    outputs = [build.communicate(timeout=600)[0] for build in builds]
    assert [build.returncode for build in builds] == [0, 0], outputs[0][-3000:] + outputs[1][-3000:]
    answered = [
        {k: v for k, v in _responses(tmp_path / name).items() if k[0] != "bm25"} for name in ("a", "b")
    ]  # fmt: skip
    assert answered[0] == answered[1] and len(answered[0]) == 9
    assert {status for status, _ in answered[0].values()} == {"ok"}
    assert len(server.state.generation_requests()) == 9
