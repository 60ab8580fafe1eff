"""Issue 12, item 3: one store, one payer — builds sharing a response store never pay twice."""

from __future__ import annotations

import os
import threading
import time

import polars as pl

from loft_warehouse.inference import runner
from loft_warehouse.inference.store import HOST, LEASE_TTL_S, ResponseStore
from tests.inference.support import inputs, make_prompts, openai_system, systems_from


def test_two_builds_sharing_a_store_pay_for_each_prompt_once(tmp_path, api_env):
    # Long enough (about 2.8 s a build) that the builds overlap even when one thread starts late.
    api_env.state.latency_s = 0.4
    prompts = make_prompts(12, 8)
    systems = systems_from(tmp_path, [openai_system()], concurrency=3)
    frames: dict[str, pl.DataFrame] = {}
    lines: list[str] = []

    def build(name: str) -> None:
        with ResponseStore(tmp_path / "shared.sqlite") as store:
            frames[name] = runner.run(inputs(prompts), systems, store, "128k", {}, emit=lines.append)

    builds = [threading.Thread(target=build, args=(name,)) for name in ("first", "second")]
    for thread in builds:
        thread.start()
    for thread in builds:
        thread.join()
    assert len(api_env.state.generation_requests()) == 20
    texts = [dict(frames[n].select("prompt_id", "raw_text").iter_rows()) for n in ("first", "second")]
    assert texts[0] == texts[1] and len(texts[0]) == 20
    assert set(frames["first"]["status"]) == set(frames["second"]["status"]) == {"ok"}
    assert any("another build sharing" in line for line in lines)
    with ResponseStore(tmp_path / "shared.sqlite") as store:
        assert store.count() == 20
        assert store._con.execute("select count(*) from leases").fetchone()[0] == 0


def test_a_lease_of_a_live_owner_is_respected_and_a_dead_or_expired_one_taken_over(tmp_path):
    with ResponseStore(tmp_path / "s.sqlite") as first, ResponseStore(tmp_path / "s.sqlite") as second:
        assert first.claim("k1") == ("mine", None)
        assert second.claim("k1") == ("busy", None)
        first.release("k1")
        assert second.claim("k1") == ("mine", None)
        dead = f"{HOST}:{2**22 + 12345}:gone"
        assert not os.path.exists(f"/proc/{2**22 + 12345}")
        second._con.execute("insert into leases values ('k2', ?, ?)", [dead, time.time() + LEASE_TTL_S])
        assert first.claim("k2") == ("mine", None)
        elsewhere = "other-host:1:x"
        second._con.execute("insert into leases values ('k3', ?, ?)", [elsewhere, time.time() + LEASE_TTL_S])
        assert first.claim("k3") == ("busy", None)
        second._con.execute("update leases set expires_at = ? where request_key = 'k3'", [time.time() - 1])
        assert first.claim("k3") == ("mine", None)
    with ResponseStore(tmp_path / "s.sqlite") as reopened:
        assert reopened._con.execute("select count(*) from leases").fetchone()[0] == 0


def test_a_batch_being_submitted_is_leased_until_its_submit_ends_or_its_builder_dies(tmp_path):
    with ResponseStore(tmp_path / "s.sqlite") as first, ResponseStore(tmp_path / "s.sqlite") as second:
        first.record_batch("b1", "gpt", "openai", [("k1", "{}")])
        assert second.submitting_elsewhere("b1") and not first.submitting_elsewhere("b1")
        first.end_submit("b1")
        assert not second.submitting_elsewhere("b1")
        second.record_batch("b2", "gpt", "openai", [("k2", "{}")])
        dead = f"{HOST}:{2**22 + 12345}:gone"
        second._con.execute("update leases set owner = ?", [dead])
        assert not first.submitting_elsewhere("b2")
        first.record_batch("b3", "gpt", "openai", [("k1", "{}")])
        assert not second.submitting_elsewhere("b3"), "a batch with every key taken is neither recorded nor leased"
        assert first.batch("b1")["state"] == "submitting"


def test_a_dry_run_against_the_fixture_defaults_to_its_own_store(tmp_path, api_env, monkeypatch):
    from loft_warehouse.inference.store import DEFAULT_STORE, FIXTURE_STORE
    from loft_warehouse.inference.warehouse import response_store

    monkeypatch.delenv("LOFT_RESPONSE_STORE", raising=False)
    systems = systems_from(tmp_path, [openai_system()])
    lines: list[str] = []
    assert response_store(None, systems, lines.append) == FIXTURE_STORE
    assert lines == [f"gpt-fixture: answered by the loft fixture server, so responses go to {FIXTURE_STORE}"]
    assert response_store(str(tmp_path / "mine.sqlite"), systems, lines.append) == tmp_path / "mine.sqlite"
    monkeypatch.setenv("LOFT_TEST_OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # loopback, but no fixture there
    assert response_store(None, systems, lines.append) == DEFAULT_STORE
    monkeypatch.delenv("LOFT_TEST_OPENAI_KEY")  # a system that cannot run is not asked
    assert response_store(None, systems, lines.append) == DEFAULT_STORE
