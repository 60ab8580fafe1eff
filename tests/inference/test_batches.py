"""Batch mode through the real openai, google-genai and anthropic clients against the fixture's
batch protocols: submit once, poll across builds, results stored like streamed responses at
the batch price, partial failures and expiry resubmitted, a lost submit found, not repeated."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import polars as pl
import pytest

from loft_warehouse.cli import main
from loft_warehouse.inference import runner
from loft_warehouse.inference.store import ResponseStore
from loft_warehouse.inference.systems import Prices
from tests.inference.support import anthropic_system, gemini_system, inputs, make_prompts, openai_system, systems_from

PRICES = {
    "gpt-4o-2024-08-06": Prices(2.5, 1.25, 10.0, None, 0.5),
    "gemini-1.5-pro-002": Prices(1.25, 0.3125, 5.0, None, 0.5),
    "claude-haiku-4-5-20251001": Prices(1.0, 0.1, 5.0, 1.25, 0.5),
}
ROOT = Path(__file__).resolve().parents[2]


def batch_systems(tmp_path, **overrides):
    entries = [
        openai_system("gpt-batch", mode="batch", **overrides),
        gemini_system("gemini-batch", mode="batch", **overrides),
        anthropic_system("claude-batch", model="claude-haiku-4-5-20251001", mode="batch", **overrides),
    ]
    return systems_from(tmp_path, entries)


def build(tmp_path, store, prompts=None, lines=None, systems=None, **overrides):
    emit = lines.append if lines is not None else (lambda line: None)
    systems = batch_systems(tmp_path, **overrides) if systems is None else systems
    return runner.run(inputs(prompts), systems, store, "128k", PRICES, emit=emit)


def test_a_build_submits_once_the_next_polls_and_a_later_one_lands_every_response(tmp_path, api_env, store):
    state = api_env.state
    first = build(tmp_path, store)
    assert first.height == 15
    assert set(first["status"]) == {"batch_pending"}
    assert first["batch_id"].null_count() == 0
    assert {r.api for r in state.batch_creates()} == {"openai_batch_create", "gemini_batch_create",
                                                      "anthropic_batch_create"}  # fmt: skip
    assert len(state.batch_creates()) == 3
    assert state.generation_requests() == []
    assert [b["state"] for b in store.batches()] == ["submitted"] * 3

    polled: list[str] = []
    second = build(tmp_path, store, lines=polled)
    assert set(second["status"]) == {"batch_pending"}
    assert "gpt-batch: 5 prompt(s), 0 stored, 5 waiting in batches, 0 to submit in batches" in polled
    assert len(state.batch_creates()) == 3

    state.complete_batches()
    lines: list[str] = []
    third = build(tmp_path, store, lines=lines)
    assert set(third["status"]) == {"ok"}
    assert len(state.batch_creates()) == 3
    assert state.generation_requests() == []
    assert [b["state"] for b in store.batches()] == ["collected"] * 3
    assert all(b["n_succeeded"] == 5 for b in store.batches())
    assert third["ttft_s"].null_count() == 15
    # Each answer is the one the synchronous endpoint gives the same prompt.
    for row in third.iter_rows(named=True):
        assert row["raw_text"].startswith("Final Answer: ['")
        assert (
            row["batch_id"]
            == first.filter((pl.col("system") == row["system"]) & (pl.col("prompt_id") == row["prompt_id"]))[
                "batch_id"
            ].item()
        )
    # Priced at half: cost = (uncached x input + cached x cached + written x write + output x output) / 2.
    prices = {"gpt-batch": PRICES["gpt-4o-2024-08-06"], "gemini-batch": PRICES["gemini-1.5-pro-002"],
              "claude-batch": PRICES["claude-haiku-4-5-20251001"]}  # fmt: skip
    for row in third.iter_rows(named=True):
        price = prices[row["system"]]
        written = row["cache_write_tokens"] or 0
        uncached = row["input_tokens"] - row["cached_tokens"] - written
        full = uncached * price.input + row["cached_tokens"] * price.cached_input + row["output_tokens"] * price.output
        full += written * (price.cache_write or price.input)
        assert row["cost_usd"] == pytest.approx(full / 1e6 / 2)
    assert any("stored 5 succeeded" in line for line in lines)
    # Anthropic batch requests carry the prefix's cache_control: the batch shares the cache.
    claude = third.filter(pl.col("system") == "claude-batch")
    assert claude["cache_write_tokens"].sum() > 0 and claude["cached_tokens"].sum() > 0

    fourth = build(tmp_path, store)
    assert set(fourth["status"]) == {"ok"}
    assert len(state.batch_creates()) == 3


def test_loft_batches_lists_each_batch_with_its_state_counts_and_cost(tmp_path, api_env, store, capsys):
    build(tmp_path, store)
    assert main(["batches", "--store", str(store.path)]) == 0
    listed = capsys.readouterr().out
    assert listed.count("submitted") >= 3 and "gpt-batch" in listed and "msgbatch_" in listed
    api_env.state.complete_batches()
    build(tmp_path, store)
    assert main(["batches", "--store", str(store.path), "--system", "claude-batch"]) == 0
    listed = capsys.readouterr().out
    assert "collected" in listed and "gpt-batch" not in listed
    (claude,) = store.batches("claude-batch")
    assert (claude["n_requests"], claude["n_succeeded"], claude["n_errored"]) == (5, 5, 0)
    assert claude["cost_usd"] == pytest.approx(sum(r.cost_usd for r in store.rows() if r.system == "claude-batch"))


def test_partial_failures_end_as_errors_and_only_retryable_ones_are_resubmitted(tmp_path, api_env, store):
    state = api_env.state
    state.batch_outcome = lambda prompt: (
        "errored" if "query a1" in prompt else "invalid" if "query a2" in prompt else None
    )
    build(tmp_path, store)
    state.complete_batches()
    collected = build(tmp_path, store)
    by_qid = {(r["system"], r["qid"]): r for r in collected.iter_rows(named=True)}
    for system in ("gpt-batch", "gemini-batch", "claude-batch"):
        assert by_qid[(system, "qa0")]["status"] == "ok"
        # a1 errored: stored as an error and, in the same build, submitted again in a new batch.
        assert by_qid[(system, "qa1")]["status"] == "batch_pending"
        assert by_qid[(system, "qa2")]["status"] == "error"
        assert by_qid[(system, "qa2")]["finish_reason"] == "rejected"
    assert len(state.batch_creates()) == 6
    stored = {(r.system, r.qid): r for r in store.rows()}
    assert stored[("gpt-batch", "qa1")].finish_reason == "batch_errored"
    state.batch_outcome = None
    state.complete_batches()
    final = build(tmp_path, store)
    assert final.filter(pl.col("qid") == "qa1")["status"].to_list() == ["ok"] * 3
    assert final.filter(pl.col("qid") == "qa2")["status"].to_list() == ["error"] * 3
    assert len(state.batch_creates()) == 6


def test_an_expired_batch_is_resubmitted(tmp_path, api_env, store):
    state = api_env.state
    build(tmp_path, store)
    state.expire_batches()
    again = build(tmp_path, store)
    assert set(again["status"]) == {"batch_pending"}
    assert len(state.batch_creates()) == 6
    expired = [r for r in store.rows() if r.status == "error"]
    assert len(expired) == 15
    assert {r.finish_reason for r in expired} <= {"batch_expired", "batch_missing"}
    state.complete_batches()
    assert set(build(tmp_path, store)["status"]) == {"ok"}


def test_a_submit_lost_in_flight_is_found_at_the_provider_not_sent_again(tmp_path, api_env, store):
    state = api_env.state
    state.batch_create_delay_s = 1.0
    lines: list[str] = []
    build(tmp_path, store, lines=lines, timeout_s=0.3)
    assert len(state.batch_creates()) == 3
    assert [b["state"] for b in store.batches()] == ["submitting"] * 3
    assert sum("the next build looks for it at the provider" in line for line in lines) == 3
    state.batch_create_delay_s = 0.0
    lines.clear()
    rerun = build(tmp_path, store, lines=lines)
    assert set(rerun["status"]) == {"batch_pending"}
    assert len(state.batch_creates()) == 3
    assert sum("not submitting it again" in line for line in lines) == 3
    state.complete_batches()
    assert set(build(tmp_path, store)["status"]) == {"ok"}
    assert len(state.batch_creates()) == 3


KILLED_BUILD = """
import sys
import threading
from pathlib import Path
from loft_warehouse.cli import main
from loft_warehouse.inference import runner
from loft_warehouse.inference.store import ResponseStore
from tests.inference.test_batches import PRICES, batch_systems
from tests.inference.support import inputs
tmp = Path(sys.argv[1])
with ResponseStore(tmp / "store.sqlite") as store:
    runner.run(inputs(), batch_systems(tmp), store, "128k", PRICES, emit=print)
"""


def test_sigkill_between_submit_and_the_id_being_stored_submits_no_second_batch(tmp_path, api_env):
    state = api_env.state
    state.batch_create_delay_s = 30.0
    child = subprocess.Popen(
        [sys.executable, "-c", KILLED_BUILD, str(tmp_path)], cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}
    )
    deadline = time.monotonic() + 60
    while not state.batches and time.monotonic() < deadline:
        time.sleep(0.05)
    assert state.batches, "the build never submitted"
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    state.batch_create_delay_s = 0.0
    with ResponseStore(tmp_path / "store.sqlite") as store:
        assert [b["state"] for b in store.batches()] == ["submitting"]
        lines: list[str] = []
        rerun = build(tmp_path, store, lines=lines)
        assert len(state.batches) == 3
        assert sum("not submitting it again" in line for line in lines) == 1
        state.complete_batches()
        final = build(tmp_path, store)
    assert set(final["status"]) == {"ok"}
    assert len(state.batch_creates()) == 3
    assert rerun.filter(pl.col("status") == "batch_pending").height == 15


def test_a_line_separator_inside_a_prompt_or_an_answer_does_not_cut_a_jsonl_line(tmp_path, api_env, store):
    # U+2028 is legal unescaped inside a JSON string; str.splitlines() would cut a line there.
    state = api_env.state
    state.answer = lambda prompt: "Final Answer: ['a\u2028b']"
    prompts = make_prompts(2, 0).with_columns(pl.col("suffix") + "\u2028\u0085 end\n")
    build(tmp_path, store, prompts)
    state.complete_batches()
    landed = build(tmp_path, store, prompts)
    assert set(landed["status"]) == {"ok"}
    assert set(landed["raw_text"]) == {"Final Answer: ['a\u2028b']"}


def test_two_builds_batching_at_once_on_one_store_submit_each_request_once(tmp_path, api_env):
    state = api_env.state
    state.batch_create_delay_s = 0.5
    frames: dict[str, pl.DataFrame] = {}
    lines: list[str] = []
    # Read once: two threads writing and reading one systems.yaml could see it half-written.
    systems = batch_systems(tmp_path)

    def one_build(name: str) -> None:
        with ResponseStore(tmp_path / "shared.sqlite") as shared:
            frames[name] = build(tmp_path, shared, lines=lines, systems=systems)

    threads = [threading.Thread(target=one_build, args=(name,)) for name in ("a", "b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(state.batch_creates()) == 3
    assert sorted(frames) == ["a", "b"]
    for frame in frames.values():
        assert set(frame["status"]) == {"batch_pending"} and frame["batch_id"].null_count() == 0
    assert (
        frames["a"]
        .select("system", "prompt_id", "batch_id")
        .sort("system", "prompt_id")
        .equals(frames["b"].select("system", "prompt_id", "batch_id").sort("system", "prompt_id"))
    )
    # Which build submits a system's batch, and how the other learns of it, depends on timing.
    assert sum("submitted batch" in line for line in lines) == 3
    assert not any("never reached the provider" in line for line in lines)
    state.batch_create_delay_s = 0.0
    state.complete_batches()
    with ResponseStore(tmp_path / "shared.sqlite") as shared:
        assert set(build(tmp_path, shared)["status"]) == {"ok"}
    assert len(state.batch_creates()) == 3


def test_a_batch_another_build_is_still_uploading_is_waited_on_not_sent_again(tmp_path, api_env):
    # The provider knows nothing of the batch until the upload ends: looking it up there would
    # take it for a lost submit.
    state = api_env.state
    state.batch_accept_delay_s = 3.0
    first: dict[str, pl.DataFrame] = {}
    systems = batch_systems(tmp_path)

    def first_build() -> None:
        with ResponseStore(tmp_path / "shared.sqlite") as shared:
            first["frame"] = build(tmp_path, shared, systems=systems)

    thread = threading.Thread(target=first_build)
    thread.start()
    with ResponseStore(tmp_path / "shared.sqlite") as shared:
        deadline = time.monotonic() + 30
        while not shared.batches() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert shared.batches(), "the first build recorded no batch"
        lines: list[str] = []
        second = build(tmp_path, shared, lines=lines, systems=systems)
    thread.join()
    assert sum("is being submitted by another build: 5 requests" in line for line in lines) >= 1
    assert not any("never reached the provider" in line for line in lines)
    assert len(state.batch_creates()) == 3
    assert set(second["status"]) == {"batch_pending"} and second["batch_id"].null_count() == 0
    assert (
        first["frame"].select("system", "prompt_id", "batch_id").sort("system", "prompt_id")
        .equals(second.select("system", "prompt_id", "batch_id").sort("system", "prompt_id"))
    )  # fmt: skip
    state.batch_accept_delay_s = 0.0
    state.complete_batches()
    with ResponseStore(tmp_path / "shared.sqlite") as shared:
        assert set(build(tmp_path, shared)["status"]) == {"ok"}
        assert {b["state"] for b in shared.batches()} == {"collected"}
    assert len(state.batch_creates()) == 3


def test_loft_batches_without_a_store_reads_every_store_of_the_store_folder(
    tmp_path, api_env, store, capsys, monkeypatch
):
    """Issue 35 item 5: a fixture run keeps its own store beside the default one; `loft batches`
    lists the batches of every store there and says which it read."""
    from loft_warehouse.inference import cli as inference_cli

    build(tmp_path, store)
    folder = store.path.parent
    monkeypatch.delenv("LOFT_RESPONSE_STORE", raising=False)
    monkeypatch.setattr(inference_cli, "DEFAULT_STORE", folder / "responses.sqlite")
    assert main(["batches"]) == 0
    listed = capsys.readouterr().out
    assert listed.startswith(f"batches in {store.path}:") and "gpt-batch" in listed and store.path.name in listed
    monkeypatch.setattr(inference_cli, "DEFAULT_STORE", tmp_path / "empty" / "responses.sqlite")
    assert main(["batches"]) == 0
    assert capsys.readouterr().out == f"no response store in {tmp_path / 'empty'}\n"
