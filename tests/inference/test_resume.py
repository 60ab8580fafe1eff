"""SIGKILL mid-run loses no returned response, and the rerun makes exactly the missing calls."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import polars as pl
import pytest

from loft_warehouse import interrupts
from loft_warehouse.inference import runner
from loft_warehouse.inference.store import ResponseStore
from loft_warehouse.settings import PROJECT_ROOT
from tests.inference.support import PREFIXES, inputs, make_prompts, openai_system, systems_from

N_PROMPTS = 60
CONCURRENCY = 4
WORKER = """
import sys
from pathlib import Path
from loft_warehouse.inference import runner
from loft_warehouse.inference.store import ResponseStore
from loft_warehouse.inference.systems import load_systems
from tests.inference.support import inputs, make_prompts
systems = list(load_systems(Path(sys.argv[1])).values())
with ResponseStore(sys.argv[2]) as store:
    runner.run(inputs(make_prompts(int(sys.argv[3]), 0)), systems, store, "128k", {})
"""


def _qid(text: str) -> str:
    return text.rsplit("query ", 1)[1].strip()


def test_sigkill_then_rerun_completes_only_the_rest(tmp_path, api_env):
    api_env.state.latency_s = 0.05
    systems = systems_from(tmp_path, [openai_system(concurrency=CONCURRENCY)])
    store_file = tmp_path / "store.sqlite"
    worker = subprocess.Popen(
        [sys.executable, "-c", WORKER, str(tmp_path / "systems.yaml"), str(store_file), str(N_PROMPTS)],
        cwd=PROJECT_ROOT,
        env={**os.environ, "PYTHONPATH": str(PROJECT_ROOT)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    stored_at_kill = 0
    while time.monotonic() < deadline and stored_at_kill < 15:
        time.sleep(0.02)
        if store_file.exists():
            with ResponseStore(store_file) as peek:
                stored_at_kill = peek.count()
    worker.send_signal(signal.SIGKILL)
    worker.wait(timeout=10)
    assert worker.returncode == -signal.SIGKILL
    first_run = [r.body for r in api_env.state.generation_requests()]

    with ResponseStore(store_file) as store:
        kept = list(store.rows())
        assert all(r.status == "ok" and r.raw_text for r in kept)
        # Only requests still in flight at the kill can be lost (never a returned one).
        assert 15 <= len(kept) < N_PROMPTS
        assert 0 <= len(first_run) - len(kept) <= CONCURRENCY
        api_env.state.requests.clear()
        frame = runner.run(
            runner.RunInputs(make_prompts(N_PROMPTS, 0), dict(PREFIXES)),
            systems,
            store,
            "128k",
            {},
            emit=lambda line: None,
        )
    rerun = [_qid(r.body["messages"][0]["content"]) for r in api_env.state.generation_requests()]
    assert len(rerun) == N_PROMPTS - len(kept)
    assert set(rerun).isdisjoint({r.qid for r in kept})
    assert frame.height == N_PROMPTS
    assert frame.filter(pl.col("status") == "ok").height == N_PROMPTS


def test_rows_with_the_same_messages_share_one_call(tmp_path, api_env, store):
    prompts = make_prompts(3, 0)
    twins = prompts.with_columns(
        pl.col("prompt_id") + "/twin", pl.lit("no_cot").alias("variant")
    )  # other rows, the very same prompt text
    systems = systems_from(tmp_path, [openai_system()])
    frame = runner.run(inputs(pl.concat([prompts, twins])), systems, store, "128k", {}, emit=lambda line: None)
    assert frame.height == 6 and set(frame["status"]) == {"ok"}
    assert len(api_env.state.generation_requests()) == 3
    by_text = frame.group_by("qid").agg(pl.col("raw_text").n_unique())
    assert by_text["raw_text"].to_list() == [1, 1, 1]


def test_a_run_starting_after_its_builds_ctrl_c_sends_nothing(tmp_path, api_env, store, monkeypatch):
    """A Ctrl-C while one model of a build waits on a call stops the models that start after it:
    only a new invocation (interrupts.arm, as dbt starts) forgets it."""
    monkeypatch.setattr(interrupts, "STOP", threading.Event())
    interrupts.arm()
    interrupts.STOP.set()
    systems = systems_from(tmp_path, [openai_system(concurrency=CONCURRENCY)])
    with pytest.raises(interrupts.Interrupted, match="interrupted after 0 response"):
        runner.run(inputs(make_prompts(5, 0)), systems, store, "128k", {})
    assert api_env.state.generation_requests() == []
    assert store.count() == 0
