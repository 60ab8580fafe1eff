"""Passage pool and passage queries shared by the NQ, HotpotQA and MS MARCO loaders."""

from __future__ import annotations

from pathlib import Path

import pytest

from loft_warehouse.errors import BadInputError, ConfigurationError
from loft_warehouse.registry import DatasetSpec
from loft_warehouse.sources import passages
from loft_warehouse.sources.passages import PassagePool, content_pid, passage_query

SOURCE = Path("/data/raw/source.jsonl")


def test_content_pid_is_stable_and_content_sensitive():
    assert content_pid("nq", "T", "x") == "nq-1d132221c4ad9fbd"
    assert content_pid("nq", "T", "x") != content_pid("nq", "Tx", "")
    assert content_pid("nq", "T", "x") != content_pid("hotpotqa", "T", "x")


def test_pool_dedups_stripped_passages_and_keeps_first_row():
    pool = PassagePool("p", SOURCE)
    first = pool.add(" Title ", "Text. ", 4)
    assert pool.add("Title", "Text.", 9) == first
    other = pool.add("Title", "Other text.", 9)
    assert [(d.pid, d.title, d.text, d.source_row) for d in pool.documents] == [
        (first, "Title", "Text.", 4),
        (other, "Title", "Other text.", 9),
    ]
    assert pool.documents[0].source_file == str(SOURCE)


def test_pool_rejects_empty_text():
    with pytest.raises(BadInputError, match=f"{SOURCE}:3: empty passage text"):
        PassagePool("p", SOURCE).add("Title", " \n", 3)


def test_pool_reports_digest_collision(monkeypatch):
    monkeypatch.setattr(passages, "content_pid", lambda prefix, title, text: "p-same")
    pool = PassagePool("p", SOURCE)
    pool.add("A", "a", 1)
    with pytest.raises(BadInputError, match=f"{SOURCE}:2: pid digest collision for 'p-same'"):
        pool.add("B", "b", 2)


def test_passage_query_gold_by_task():
    retrieval = DatasetSpec(task="retrieval", dataset="d", source="s", max_gold=2)
    query = passage_query(retrieval, "q", " text ", ["a", "b", "a", "c"], ["ans"], SOURCE, 5)
    assert (query.turns, query.gold, query.gold_pids) == (["text"], [["a", "b"]], [["a", "b"]])
    assert query.relevant_pids == ["a", "b", "c"]
    assert (query.source_file, query.source_row) == (str(SOURCE), 5)
    rag = DatasetSpec(task="rag", dataset="d", source="s")
    query = passage_query(rag, "q", "text", ["a", "b", "c"], ["ans", "alias"], SOURCE, 5)
    assert (query.gold, query.gold_pids) == ([["ans", "alias"]], [["a", "b", "c"]])


def test_passage_query_rejects_other_tasks_and_empty_text():
    with pytest.raises(ConfigurationError, match="not icl"):
        passage_query(DatasetSpec(task="icl", dataset="d", source="s"), "q", "t", [], [], SOURCE, 1)
    retrieval = DatasetSpec(task="retrieval", dataset="d", source="s")
    with pytest.raises(BadInputError, match=f"{SOURCE}:1: query 'q' has empty text"):
        passage_query(retrieval, "q", "  ", ["a"], [], SOURCE, 1)


def test_pool_shows_a_passage_as_loft_loads_it_and_names_it_as_read():
    pool = PassagePool("p", SOURCE)
    pid = pool.add("childhood abuse Moby-Dick", "On shame and childhood abuse.", 1)
    assert pid == content_pid("p", "childhood abuse Moby-Dick", "On shame and childhood abuse.")
    assert (pool.documents[0].title, pool.documents[0].text) == (" Moby-Dick", "On shame and .")
