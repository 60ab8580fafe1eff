"""The ways LOFT ports silently diverge (issue 58 item 4), each pinned on one real build of two
sizes and one dataset per task (ArguAna retrieval, NQ RAG, Spider SQL, BBH date ICL; the first
dev and test query of each) with two fixture systems of different output caps:
- a generation budget that ratchets down across context groups: every request of every dataset
  and size is sent with its system's configured cap, and every response records it;
- an answer prefix that suppresses the chain of thought: each task's prompts end after the query
  exactly as LOFT's prompt code ends them (recorded under differential/prompts from LOFT @219f68e);
- dev and test pooled: no metric cell scores a query of another split;
- size labels read in the wrong tokenizer: the tokenizer a corpus was built in is stated, and
  each response keeps the system's own count of its prompt beside that tokenizer's count."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loft_warehouse.inference.fixture_server import FixtureServer, FixtureState
from loft_warehouse.sources import loft_release
from tests.conftest import query, run_dbt
from tests.inference.support import fixture_env, gemini_system, openai_system, write_systems

pytestmark = pytest.mark.slow
RECORDED = Path(__file__).resolve().parent / "differential"
CAPS = {"gemini-cap": 300, "gpt-cap": 700}
# BBH is built at 32k only, so each size is its own build (sharing the store).
DATASETS = {
    "32k": ["retrieval/arguana", "rag/nq", "sql/spider", "icl/bbh_date"],
    "128k": ["retrieval/arguana", "rag/nq", "sql/spider"],
}
# One recording of LOFT's prompt code per task (the prompt_data case and qid it rendered).
LOFT_PROMPTS = {
    "rag": "rag_nq_128k_test__few_shot_with_cot.json",
    "sql": "sql_spider_128k_test__few_shot_with_cot.json",
    "icl": "icl_date_understanding_32k_test__many_shot.json",
}


@pytest.fixture(scope="module")
def build(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> tuple[Path, FixtureState]:
    root = tmp_path_factory.mktemp("divergences")
    entries = [
        gemini_system("gemini-cap", generation={"max_output_tokens": CAPS["gemini-cap"]}, cache={}),
        openai_system("gpt-cap", generation={"max_output_tokens": CAPS["gpt-cap"]}, context_window=1_000_000),
    ]
    with FixtureServer(FixtureState()) as server:
        env = {
            "LOFT_SYSTEMS_FILE": str(write_systems(root / "systems.yaml", entries)),
            "LOFT_RESPONSE_STORE": str(root / "store.sqlite"),
            **fixture_env(server),
        }
        database = root / "loft.duckdb"
        for size, datasets in DATASETS.items():
            settings = {"datasets": datasets, "limit": 1, "systems": list(CAPS)}
            result = run_dbt(["build", "--select", f"loft_{size}", "--vars", json.dumps(settings)], database, env)
            assert result.returncode == 0, (result.stdout + result.stderr)[-5000:]
        return database, server.state


def test_every_group_is_sent_with_the_configured_generation_budget(build):
    database, state = build
    sent = {"gemini_generate": [], "openai_chat": []}
    for request in state.generation_requests():
        body = request.body
        cap = body["generationConfig"]["maxOutputTokens"] if request.api == "gemini_generate" else None
        sent[request.api].append(cap if cap is not None else body.get("max_completion_tokens"))
    assert set(sent["gemini_generate"]) == {300} and set(sent["openai_chat"]) == {700}, sent
    recorded = query(
        database,
        "select system, size, dataset, min(max_output_tokens), max(max_output_tokens), count(*) from ("
        "select '32k' as size, * from loft_32k.responses union all by name "
        "select '128k' as size, * from loft_128k.responses) where status = 'ok' group by all order by all",
    )
    groups = {(size, dataset) for _, size, dataset, *_ in recorded}
    # Seven (size, dataset) groups, each answered by both systems.
    assert len(groups) == 7 and len(recorded) == 14
    assert all(low == high == CAPS[system] for system, _, _, low, high, _ in recorded), recorded
    assert sum(n for *_, n in recorded) == len(sent["gemini_generate"]) + len(sent["openai_chat"])


def _loft_tail(task: str) -> str:
    """What LOFT's prompt ends with after the query of the recorded case."""
    document = json.loads((RECORDED / "prompts" / LOFT_PROMPTS[task]).read_text(encoding="utf-8"))
    qid, recorded = next((q, p) for q, p in document["prompts"].items() if "text" in p)
    case = RECORDED / "prompt_data" / "loft" / task / document["dataset"] / document["length"]
    data = loft_release.load(task, case)
    position = int(qid) if task == "icl" else None
    found = data.queries[position] if position is not None else next(q for q in data.queries if q.qid == qid)
    text = recorded["text"]
    return text[text.rindex(found.turns[0]) + len(found.turns[0]) :]


def test_the_answer_prefix_sits_where_lofts_prompt_code_puts_it(build):
    """ArguAna (the real release): every test prompt is LOFT's, byte for byte. Other tasks (built
    from raw sources): each prompt ends after its query exactly as LOFT's prompt of the task does."""
    database, _ = build
    arguana = json.loads(
        (RECORDED / "prompts" / "retrieval_arguana_128k_test__few_shot_with_cot.json").read_text(encoding="utf-8")
    )["prompts"]
    ours = query(
        database,
        "select qid, sha256(prompt) from loft_128k.prompt_texts where dataset = 'arguana' and split = 'test' "
        "and variant = 'default' and method = 'cic' and stage = 1",
    )
    assert dict(ours) == {qid: recorded["sha256"] for qid, recorded in arguana.items()}
    tails = {task: _loft_tail(task) for task in LOFT_PROMPTS}
    seen = set()
    for size in ("32k", "128k"):
        rows = query(
            database,
            f"select p.task, p.suffix, q.query_text from loft_{size}.prompts as p "
            f"inner join loft_{size}.queries as q using (task, dataset, corpus_id, split, qid, turn) "
            "where p.variant = 'default' and p.method = 'cic' and p.stage = 1 and p.turn = 0 and p.task <> 'retrieval'",
        )
        for task, suffix, query_text in rows:
            assert query_text in suffix, (task, query_text)
            assert suffix[suffix.rindex(query_text) + len(query_text) :] == tails[task], (task, suffix[-300:])
            seen.add((size, task))
    assert seen == {("32k", "icl"), *((size, task) for size in ("32k", "128k") for task in ("rag", "sql"))}


def test_no_metric_cell_mixes_splits(build):
    database, _ = build
    for size in ("32k", "128k"):
        mixed = query(
            database,
            f"select s.split, q.split, count(*) from loft_{size}.scores as s "
            f"inner join loft_{size}.queries as q using (task, dataset, corpus_id, qid, turn) "
            "where s.split <> q.split group by all",
        )
        assert mixed == [], (size, mixed)
        cells = query(
            database,
            f"select m.split, m.system, m.dataset, m.metric, m.n, count(s.qid) from loft_{size}.metrics as m "
            f"left join loft_{size}.scores as s using (source, system, method, task, dataset, variant, split, metric, "
            "rule, gold_version, grain) where m.grain = 'turn' and m.rule = 'loft' group by all",
        )
        assert {split for split, *_ in cells} == {"dev", "test"}
        assert all(n == scored for *_, n, scored in cells), (size, cells)


def test_sizes_are_stated_in_their_tokenizer_and_each_systems_own_count_is_kept_beside(build):
    database, _ = build
    tokenizers = query(database, "select distinct tokenizer from loft_128k.corpus_stats")
    assert len(tokenizers) == 1 and ".model" in tokenizers[0][0], tokenizers
    counts = query(
        database,
        "select system, count(*), count(input_tokens), count(sentencepiece_prompt_tokens), "
        "bool_and(sentencepiece_prompt_tokens = p.n_tokens_total) "
        "from loft_128k.responses inner join loft_128k.prompts as p using (prompt_id) "
        "where status = 'ok' and p.stage = 1 group by all order by all",
    )
    assert [(s, n == i == c, same) for s, n, i, c, same in counts] == [(s, True, True) for s in sorted(CAPS)]
