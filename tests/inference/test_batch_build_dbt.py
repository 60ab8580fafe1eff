"""Issue 15's acceptance at 128k: a real `dbt build --select loft_128k` (ArguAna retrieval and NQ
RAG, 4 dev + 4 test queries each) with three systems in batch mode (OpenAI, Gemini, Anthropic)
against the 127.0.0.1 fixture. The first build prints the three pricing columns, submits one
batch per system and scores nothing (metrics pending); a build after the fixture completes the
batches lands every response at the batch price and scores it; `loft batches` lists them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from loft_warehouse.inference.fixture_server import FixtureServer, FixtureState
from tests.conftest import query, run_dbt
from tests.inference.support import anthropic_system, fixture_env, gemini_system, openai_system, write_systems

pytestmark = pytest.mark.slow
SYSTEMS = ["gpt-batch", "gemini-batch", "claude-batch"]
VARS = json.dumps({"datasets": "retrieval/arguana,rag/nq", "limit": 4, "systems": SYSTEMS})
LOFT = str(Path(sys.executable).with_name("loft"))


def _env(root: Path, server: FixtureServer) -> dict[str, str]:
    entries = [
        openai_system("gpt-batch", context_window=1_000_000),
        gemini_system("gemini-batch", context_window=1_000_000),
        anthropic_system("claude-batch", model="claude-haiku-4-5-20251001", context_window=1_000_000),
    ]
    return {
        "LOFT_SYSTEMS_FILE": str(write_systems(root / "systems.yaml", entries)),
        "LOFT_RESPONSE_STORE": str(root / "store.sqlite"),
        "LOFT_BATCH": ",".join(SYSTEMS),
        **fixture_env(server),
    }


def test_a_128k_batch_build_submits_once_and_a_later_build_scores_every_response(tmp_path, shared_data):
    database = tmp_path / "loft.duckdb"
    with FixtureServer(FixtureState()) as server:
        env = _env(tmp_path, server)
        first = run_dbt(["build", "--select", "loft_128k", "--vars", VARS], database, env)
        output = first.stdout + first.stderr
        assert first.returncode == 0, output[-5000:]
        # Before any call: what this quick try sends (at the batch price) beside the full run's estimate.
        plan = output[output.index("cost of this build, every stage at 128k") :].splitlines()
        assert plan[1].split()[-3:] == ["full", "run", "$"]
        rows = {line.split()[0]: line.split() for line in plan[3:6]}
        assert set(rows) == set(SYSTEMS)
        assert all(row[4] == "16" and float(row[6]) > float(row[5]) > 0 for row in rows.values()), rows
        state = server.state
        assert len(state.batch_creates()) == 3
        assert state.generation_requests() == []
        pending = query(database, "select system, count(*), count(batch_id) from loft_128k.responses "
                                  "where status = 'batch_pending' group by all order by all")  # fmt: skip
        assert [(s, n == b) for s, n, b in pending] == [(s, True) for s in sorted(SYSTEMS)]
        n_rows = pending[0][1]
        assert n_rows == 16
        statuses = query(database, "select distinct system, run_status from loft_128k.metrics "
                                   "where source = 'dry_run' order by all")  # fmt: skip
        assert statuses == [(s, "pending") for s in sorted(SYSTEMS)]

        again = run_dbt(["build", "--select", "loft_128k", "--vars", VARS], database, env)
        assert again.returncode == 0, (again.stdout + again.stderr)[-5000:]
        assert len(state.batch_creates()) == 3

        state.complete_batches()
        final = run_dbt(["build", "--select", "loft_128k", "--vars", VARS], database, env)
        assert final.returncode == 0, (final.stdout + final.stderr)[-5000:]
        assert len(state.batch_creates()) == 3
        assert state.generation_requests() == []

    landed = query(database, "select system, status, count(*), count(batch_id), bool_and(cost_usd > 0) "
                             "from loft_128k.responses group by all order by all")  # fmt: skip
    assert landed == [(s, "ok", n_rows, n_rows, True) for s in sorted(SYSTEMS)]
    scored = query(database, "select system, run_status, count(*), count(mean) from loft_128k.metrics "
                             "where source = 'dry_run' group by all order by all")  # fmt: skip
    assert [(s, status) for s, status, _, _ in scored] == [(s, "scored") for s in sorted(SYSTEMS)]
    assert all(n == with_mean for _, _, n, with_mean in scored)
    # Each batch result is priced at half its streamed price (the seed's ratio 0.5).
    ledger = query(database, "select system, sum(n_batch), sum(n_pending), sum(actual_usd) "
                             "from loft_128k.cost_ledger where system in ('gpt-batch', 'gemini-batch', "
                             "'claude-batch') group by all order by all")  # fmt: skip
    assert [(s, nb, np_) for s, nb, np_, _ in ledger] == [(s, n_rows, 0) for s in sorted(SYSTEMS)]
    listing = subprocess.run(
        [LOFT, "batches", "--store", str(tmp_path / "store.sqlite")], capture_output=True, text=True, check=True
    ).stdout
    assert listing.count("collected") == 3, listing
