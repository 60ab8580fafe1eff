"""The durable store: WAL + synchronous=FULL, final outcomes kept, errors replaced."""

from __future__ import annotations

import sqlite3

import pytest

from loft_warehouse.errors import ConfigurationError
from loft_warehouse.inference.store import ResponseStore, StoredResponse, store_path


def _response(key: str, status: str, text: str | None = None) -> StoredResponse:
    return StoredResponse(
        request_key=key,
        system="s",
        prompt_id="p",
        task="retrieval",
        dataset="d",
        corpus_id="d",
        variant="default",
        split="dev",
        qid="q",
        turn=0,
        status=status,
        raw_text=text,
        attempts=1,
    )


def test_rows_survive_reopening_and_use_wal_with_full_sync(tmp_path):
    path = tmp_path / "deep" / "store.sqlite"
    with ResponseStore(path) as store:
        store.put(_response("k1", "ok", "Final Answer: ['1']"))
        assert store._con.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    con = sqlite3.connect(path)
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert con.execute("SELECT request_key, raw_text FROM responses").fetchall() == [("k1", "Final Answer: ['1']")]
    con.close()
    with ResponseStore(path) as store:
        assert store.get(["k1", "k2"])["k1"].raw_text == "Final Answer: ['1']"
        assert store.get(["k1"])["k1"].created_at.endswith("+00:00")


def test_a_final_outcome_is_never_overwritten_but_an_error_is(tmp_path):
    with ResponseStore(tmp_path / "s.sqlite") as store:
        store.put(_response("k1", "ok", "first"))
        store.put(_response("k1", "ok", "second"))
        store.put(_response("k2", "error"))
        store.put(_response("k2", "blocked"))
        store.put(_response("k3", "error"))
        rows = {r.request_key: (r.status, r.raw_text) for r in store.rows()}
        assert rows == {"k1": ("ok", "first"), "k2": ("blocked", None), "k3": ("error", None)}
        assert set(store.final(["k1", "k2", "k3", "k4"])) == {"k1", "k2"}


def test_unknown_status_is_refused(tmp_path):
    with ResponseStore(tmp_path / "s.sqlite") as store:
        try:
            store.put(_response("k", "skipped_unsupported"))
        except ValueError as exc:
            assert "skipped_unsupported" in str(exc)
        else:
            raise AssertionError("unknown status accepted")


def test_store_path_resolution(monkeypatch, tmp_path):
    monkeypatch.delenv("LOFT_RESPONSE_STORE", raising=False)
    assert store_path().parts[-2:] == (".response_store", "responses.sqlite")
    monkeypatch.setenv("LOFT_RESPONSE_STORE", str(tmp_path / "x.sqlite"))
    assert store_path() == tmp_path / "x.sqlite"
    assert store_path(str(tmp_path / "y.sqlite")) == tmp_path / "y.sqlite"


def test_a_store_of_another_shape_is_refused_before_any_request(tmp_path):
    path = tmp_path / "old.sqlite"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE responses (request_key TEXT PRIMARY KEY, system TEXT, status TEXT)")
    con.close()
    with pytest.raises(ConfigurationError, match=r"has columns \['request_key', 'system', 'status'\].*new file"):
        ResponseStore(path)
