"""Every method end to end in dbt at 128k on NQ and HotpotQA RAG, one system pointed at the
127.0.0.1 fixture with scripted answers: stage 2 is built from exactly what stage 1 chose, a
malformed stage-1 answer ends as a recorded parse status and skipped_upstream, a SIGKILL during
stage 2 resumes with no call made twice, and metrics hold a row for every method."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
import zlib
from collections import Counter
from pathlib import Path

import pytest

from loft_warehouse.inference.fixture_server import FixtureServer, FixtureState, _openai_prompt
from loft_warehouse.settings import PROJECT_ROOT
from tests.conftest import DBT, query, run_dbt
from tests.inference.support import openai_system, write_systems

pytestmark = pytest.mark.slow
METHODS = [
    "cic", "rag_top5", "rag_top20", "rag_top5_justified", "icr", "r_and_r", "chunked_icr",
    "justified", "justified_verify",
]  # fmt: skip
VARS = json.dumps({"datasets": "rag/nq,rag/hotpotqa", "methods": METHODS, "chunk_tokens": 40000})
DOCUMENT = re.compile(r"^ID: (\d+) \| TITLE: ([^|]*) \|", re.MULTILINE)


def _broken(prompt: str) -> bool:
    """One prompt in seven gets an answer stage 2 cannot use (deterministic per prompt)."""
    return zlib.crc32(prompt.encode()) % 7 == 0


def answer(prompt: str) -> str:
    """What the scripted model says: page lists for ICR, QUEST-LOFT JSON, verdicts, answers."""
    if "Your task is to judge whether a given candidate answer" in prompt:
        documents, _, candidate = prompt.partition("===== Candidate Answer =====\n")
        verdict = "TRUE" if candidate.strip() in documents else "FALSE"
        return json.dumps(
            {"candidate_answer": candidate, "evidence_for": [], "evidence_against": [], "reasoning": "-",
             "final_judgment": verdict}
        )  # fmt: skip
    if "Your task is to answer a given question based on the provided documents" in prompt:
        if _broken(prompt):
            return '{"candidate_answers": [ {"candidate_answer": "unfinished'
        found = DOCUMENT.findall(prompt)[:2]
        candidates = [
            {"candidate_answer": title.strip(), "evidence_for": [{"doc_id": doc_id, "text": "..."}],
             "evidence_against": [], "reasoning": "-", "final_judgment": "TRUE"}
            for doc_id, title in found
        ]  # fmt: skip
        return json.dumps(
            {"question": "q", "candidate_answers": candidates, "answer": [c["candidate_answer"] for c in candidates],
             "answer_doc_ids": [doc_id for doc_id, _ in found]}
        )  # fmt: skip
    if "Identify up to" in prompt:
        if _broken(prompt):
            return "I could not find any relevant page."
        pages = re.findall(r"<PAGE (\d+)>", prompt)
        return f"The pages are these.\nFinal Answer: [{pages[-1]}, {pages[0]}]"
    return "Final Answer: ['an answer']"


def _env(root: Path, server: FixtureServer) -> dict[str, str]:
    systems = write_systems(root / "systems.yaml", [openai_system("gpt-fixture", context_window=1_000_000)])
    return {
        "LOFT_SYSTEMS_FILE": str(systems),
        "LOFT_SYSTEMS": "gpt-fixture",
        "LOFT_RESPONSE_STORE": str(root / "store.sqlite"),
        "LOFT_TEST_OPENAI_KEY": "sk-test",
        "LOFT_TEST_OPENAI_BASE_URL": f"{server.url}/v1",
    }


def _kill_build(database: Path, env: dict[str, str], stop_when) -> None:
    """A full build, SIGKILLed (with its whole process group) as soon as stop_when() holds."""
    full_env = {**os.environ, "LOFT_DUCKDB_PATH": str(database), "DO_NOT_TRACK": "1", **env}
    work = database.parent
    command = [DBT, "build", "--select", "loft_128k", "--vars", VARS]
    command += ["--target-path", str(work / "target"), "--log-path", str(work / "logs")]
    process = subprocess.Popen(
        command, cwd=PROJECT_ROOT, env=full_env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True,
    )  # fmt: skip
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline and process.poll() is None and not stop_when():
        time.sleep(0.02)
    assert process.poll() is None, "the build ended before it could be killed"
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()


class _Stage2Requests:
    """Counts the stage-2 QA requests the fixture received (looking at new requests only)."""

    def __init__(self, server: FixtureServer) -> None:
        self.server, self.seen, self.count = server, len(server.state.generation_requests()), 0

    def __call__(self) -> int:
        requests = self.server.state.generation_requests()
        self.count += sum("Answer the following question" in _openai_prompt(r.body) for r in requests[self.seen :])
        self.seen = len(requests)
        return self.count


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, shared_data: Path):
    """Stage 1 alone; a build killed between stages (as it starts building stage 2's prompts);
    one killed during stage 2; then a full build. Prompts requested per phase are kept."""
    root = tmp_path_factory.mktemp("methods")
    database = root / "loft.duckdb"
    log = root / "logs" / "dbt.log"
    with FixtureServer(FixtureState(answer=answer, latency_s=0.01)) as server:
        env = _env(root, server)
        first = run_dbt(
            [
                "build",
                "--select",
                "+loft_128k__int_stage1_responses",
                "--indirect-selection",
                "cautious",
                "--vars",
                VARS,
            ],
            database,
            env,
        )
        assert first.returncode == 0, first.stdout[-5000:]
        phases = [len(server.state.generation_requests())]
        started_stage_2 = "START python table model loft_128k_internal.int_stage2_prompts"
        _kill_build(database, env, lambda: started_stage_2 in log.read_text())
        phases.append(len(server.state.generation_requests()))
        stage_2 = _Stage2Requests(server)
        _kill_build(database, env, lambda: stage_2() >= 20)
        phases.append(len(server.state.generation_requests()))
        final = run_dbt(["build", "--select", "loft_128k", "--vars", VARS], database, env)
        assert final.returncode == 0, final.stdout[-5000:]
        prompts = [_openai_prompt(r.body) for r in server.state.generation_requests()]
    return database, first.stdout + first.stderr, final.stdout + final.stderr, prompts, phases


def test_metrics_hold_every_method_on_nq_and_hotpotqa(built) -> None:
    database = built[0]
    rows = query(
        database,
        "select dataset, list(distinct method order by method) from loft_128k.metrics "
        "where is_primary and split = 'test' and system = 'gpt-fixture' group by dataset order by dataset",
    )
    assert rows == [(dataset, sorted(METHODS)) for dataset in ("hotpotqa", "nq")]


def test_the_cost_before_any_call_counts_every_stage(built) -> None:
    database, stage_1_log = built[0], built[1]
    rows = query(
        database,
        "select task || '/' || dataset, method, stage, is_estimated_from_settings from loft_128k.cost_estimates "
        "where system = 'gpt-fixture'",
    )
    stages = {
        (dataset, method, f"{stage}{'~' if from_settings else ''}") for dataset, method, stage, from_settings in rows
    }
    for dataset in ("rag/nq", "rag/hotpotqa"):
        for method in METHODS:
            assert (dataset, method, "1") in stages, (dataset, method)
            if method not in ("cic", "justified"):
                assert (dataset, method, "2~") in stages, (dataset, method)
    # The build printed, before its first call, what it would send and its cost, later stages
    # included, beside the full run's estimate.
    plan = stage_1_log[stage_1_log.index("cost of this build, every stage at 128k") :].splitlines()
    row = next(line.split() for line in plan if line.startswith("gpt-fixture "))
    assert int(row[4]) > 0 and float(row[5]) > 0 and float(row[6]) > 0, row


def test_a_kill_between_stages_repeats_no_call_and_one_during_stage_two_only_calls_in_flight(built) -> None:
    *_, prompts, (after_stage_1, after_between, after_during) = built
    # Killed between stages: nothing was sent, nothing stored was lost.
    assert after_between == after_stage_1 > 1500
    later = Counter(prompts[after_during:])
    repeated = [p for p in prompts[after_between:after_during] if later[p]]
    # Killed during stage 2: only calls still in flight (at most 2 x concurrency) go again.
    assert len(repeated) <= 2 * 2
    assert len(prompts) - len(set(prompts)) == len(repeated)
    assert prompts[:after_stage_1] and not set(prompts[:after_stage_1]) & set(prompts[after_between:])


def test_stage_two_shows_exactly_what_stage_one_chose(built) -> None:
    database = built[0]
    mismatches = query(
        database,
        """
        with chosen as (
            select a.system, a.method, a.dataset, a.qid, a.call_index, a.answers_strict, p.pid
            from loft_128k_internal.int_stage1_answers as a,
                unnest(a.answers_strict) with ordinality as item(value, rank)
            inner join loft_128k.prompt_doc_ids as p
                on p.task = a.task and p.dataset = a.dataset and p.corpus_id = a.corpus_id and p.variant = a.variant
                and p.position = try_cast(item.value as bigint) - 1
            where a.method = 'icr' and a.status = 'ok'
        ),
        expected as (
            select system, dataset, qid, list(distinct pid order by pid) as pids from chosen group by all
        ),
        shown as (
            select system, dataset, qid, list_sort(context_pids) as pids
            from loft_128k_internal.int_stage2_prompts where method = 'icr'
        )
        select * from expected full join shown using (system, dataset, qid)
        where expected.pids is distinct from shown.pids
        """,
    )
    assert mismatches == []
    retrieved = query(
        database,
        """
        select
            count(*),
            count(*) filter (
                where s.context_pids = list_transform(a.answers_strict[1:5], lambda i: d.pids[i::bigint + 1])
            )
        from loft_128k_internal.int_stage2_prompts as s
        inner join loft_128k_internal.int_stage1_answers as a
            using (system, task, dataset, corpus_id, variant, method, qid, turn)
        inner join (select task, dataset, corpus_id, variant, list(pid order by position) as pids
                    from loft_128k.prompt_doc_ids group by all) as d using (task, dataset, corpus_id, variant)
        where s.method = 'rag_top5'
        """,
    )
    assert retrieved == [(220, 220)]


def test_verification_sees_only_the_documents_each_candidate_cites(built) -> None:
    database = built[0]
    rows = query(
        database,
        """
        select count(*), count(*) filter (where s.context_pids = [d.pid])
        from loft_128k_internal.int_stage2_prompts as s
        inner join loft_128k_internal.int_stage1_answers as a
            using (system, task, dataset, corpus_id, variant, method, qid, turn)
        inner join loft_128k.prompt_doc_ids as d
            on d.task = s.task and d.dataset = s.dataset and d.corpus_id = s.corpus_id and d.variant = s.variant
            and d.shown_id = json_extract_string(a.payload_strict, '$.candidates[' || s.call_index || '].doc_ids[0]')
        where s.method = 'justified_verify'
        """,
    )
    n, matching = rows[0]
    assert n > 300 and matching == n


def test_malformed_stage_one_answers_are_recorded_and_skipped_upstream(built) -> None:
    database = built[0]
    statuses = dict(
        query(
            database,
            "select method || ':' || parse_status_strict, count(*) from loft_128k.predictions "
            "where stage = 1 and method in ('icr', 'justified_verify') group by all",
        )
    )
    assert statuses["icr:no_marker"] > 10 and statuses["justified_verify:no_json"] > 10
    skipped = dict(
        query(
            database,
            "select method, count(*) from loft_128k.predictions where status = 'skipped_upstream' group by all",
        )
    )
    assert skipped["icr"] == statuses["icr:no_marker"]
    assert skipped["justified_verify"] == statuses["justified_verify:no_json"]
    # Scored 0 and counted unanswered, never dropped.
    counts = query(
        database,
        "select sum(n), sum(n_unanswered) from loft_128k.metrics where method = 'icr' and is_primary",
    )
    assert counts == [(220, skipped["icr"])]


def test_each_retrieving_stage_is_scored_against_the_gold_documents(built) -> None:
    """stage_retrieval recomputed here from what stage 1 named (bm25's shown IDs, ICR's pages)."""
    database = built[0]
    positions = {
        (dataset, variant, position): pid
        for dataset, variant, position, pid in query(
            database, "select dataset, variant, position, pid from loft_128k.prompt_doc_ids where task = 'rag'"
        )
    }
    shown = {(d, v, str(p)): pid for (d, v, p), pid in positions.items()}
    gold = {
        (dataset, qid): set(pids)
        for dataset, qid, pids in query(
            database, "select dataset, qid, gold_pids from loft_128k.queries where task = 'rag'"
        )
    }
    answers = query(
        database,
        "select method, dataset, variant, qid, status, answers_strict from loft_128k_internal.int_stage1_answers "
        "where method in ('rag_top5', 'icr') and split = 'test'",
    )
    expected: dict[tuple[str, str, str], float] = {}
    for method, dataset, variant, qid, status, items in answers:
        if status != "ok":
            pids: list[str] = []
        elif method == "icr":
            pids = [
                positions[(dataset, variant, int(i) - 1)] for i in items if (dataset, variant, int(i) - 1) in positions
            ]
        else:
            pids = [shown[(dataset, variant, i)] for i in items]
        expected[(method, dataset, qid)] = len(set(pids) & gold[(dataset, qid)]) / len(gold[(dataset, qid)])
    got = {
        (method, dataset, qid): recall
        for method, dataset, qid, recall in query(
            database,
            "select method, dataset, qid, recall from loft_128k.stage_retrieval "
            "where stage = 1 and method in ('rag_top5', 'icr') and split = 'test' and system = 'gpt-fixture'",
        )
    }
    assert got.keys() == expected.keys() and len(got) == 400  # 2 methods x 2 datasets x 100 test queries
    assert all(got[key] == pytest.approx(value) for key, value in expected.items())
    means = query(
        database,
        "select method, dataset, n, mean from loft_128k.stage_metrics "
        "where measure = 'recall' and stage = 1 and method in ('rag_top5', 'icr') and split = 'test'",
    )
    for method, dataset, n, mean in means:
        values = [v for (m, d, _), v in expected.items() if (m, d) == (method, dataset)]
        assert (n, mean) == (len(values), pytest.approx(sum(values) / len(values)))
    attributed = query(
        database,
        "select method, bool_and(n = n_retrieval_hit + n_retrieval_miss), bool_and(n_reading_miss <= n_retrieval_hit) "
        "from loft_128k.error_attribution where split = 'test' group by method order by method",
    )
    retrieving = ["chunked_icr", "icr", "justified_verify", "r_and_r", "rag_top20", "rag_top5", "rag_top5_justified"]
    assert attributed == [(method, True, True) for method in retrieving]


def test_every_verdict_is_judged_against_the_gold(built) -> None:
    """verification_scores recomputed here: each readable verification verdict of justified_verify,
    TRUE when it kept its candidate, against the normalised gold answers of the question."""
    from loft_warehouse.answers.normalize import normalize_answer

    database = built[0]
    gold = {
        (dataset, split, qid): {normalize_answer(answer) for answer in json.loads(answers)}
        for dataset, split, qid, answers in query(
            database, "select dataset, split, qid, gold from loft_128k.queries where task = 'rag'"
        )
    }
    verdicts = query(
        database,
        "select dataset, split, qid, payload, answer_strict from loft_128k.predictions "
        "where method = 'justified_verify' and stage = 2 and is_answered and parse_status_strict = 'ok'",
    )
    expected: Counter = Counter()
    for dataset, split, qid, payload, kept in verdicts:
        is_gold = normalize_answer(json.loads(payload)["candidate"]) in gold[(dataset, split, qid)]
        expected[(dataset, split, bool(kept), is_gold)] += 1
    rows = query(
        database,
        "select dataset, split, n, n_true_positive, n_false_positive, n_false_negative, n_true_negative "
        "from loft_128k.verification_scores where method = 'justified_verify' and measure = 'verdict_accuracy' "
        "and gold_version = 'release'",
    )
    assert len(rows) == 4 and sum(row[2] for row in rows) == len(verdicts) > 300
    for dataset, split, n, tp, fp, fn, tn in rows:
        counts = [expected[(dataset, split, kept, is_gold)] for kept, is_gold in ((1, 1), (1, 0), (0, 1), (0, 0))]
        assert [tp, fp, fn, tn] == counts and n == sum(counts)
