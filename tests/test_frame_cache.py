"""Kept frames: keys that are the same in every process, content digests, whole entries only."""

from __future__ import annotations

import os
import subprocess
import sys

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from loft_warehouse import frame_cache
from loft_warehouse.settings import PROJECT_ROOT

FRAME = pl.DataFrame({"id": [1, 2, 3], "text": ["a", "b", None], "ids": [["x"], [], ["y", "z"]]})


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("LOFT_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_a_settings_key_is_the_same_in_every_process():
    # Design holds frozensets, whose iteration order follows the per-process string hash seed.
    program = (
        "from loft_warehouse.design import Design; from loft_warehouse import frame_cache;"
        "print(frame_cache.key_of('prompts', [Design.from_config({'methods': 'all'}, 'all'), {'b': 1, 'a': {2, 1}}]))"
    )
    keys = {
        subprocess.run(
            [sys.executable, "-c", program],
            env={**os.environ, "PYTHONHASHSEED": seed},
            cwd=PROJECT_ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        for seed in ("1", "2", "3")
    }
    assert len(keys) == 1 and len(next(iter(keys))) == 64


def test_a_frame_digest_is_its_rows_as_a_multiset():
    digest = frame_cache.frame_digest(FRAME)
    assert frame_cache.frame_digest(FRAME.reverse()) == digest
    assert frame_cache.frame_digest(FRAME.with_columns(pl.col("text").fill_null(""))) != digest
    assert frame_cache.frame_digest(pl.concat([FRAME, FRAME.head(1)])) != digest
    assert frame_cache.frame_digest(FRAME.cast({"id": pl.Int32})) != digest
    assert frame_cache.frame_digest(FRAME.rename({"id": "pid"})) != digest
    swapped = FRAME.with_columns(pl.Series("ids", [[], ["x"], ["y", "z"]]))
    assert frame_cache.frame_digest(swapped) != digest
    assert frame_cache.frame_digest(FRAME.clear()) != frame_cache.frame_digest(FRAME.select("id").clear())


def test_a_key_changes_with_every_part_and_refuses_what_it_cannot_express():
    base = frame_cache.key_of("k", ["128k", FRAME, {"seed": 1}])
    assert frame_cache.key_of("k", ["128k", FRAME.reverse(), {"seed": 1}]) == base
    assert frame_cache.key_of("k", ["32k", FRAME, {"seed": 1}]) != base
    assert frame_cache.key_of("k", ["128k", FRAME, {"seed": 2}]) != base
    assert frame_cache.key_of("other", ["128k", FRAME, {"seed": 1}]) != base
    with pytest.raises(TypeError, match="no cache key for a object"):
        frame_cache.key_of("k", [object()])


def test_kept_computes_once_and_reads_the_entry_back(cache):
    calls = []

    def compute():
        calls.append(1)
        return {"frame": FRAME}

    key = frame_cache.key_of("k", ["a"])
    first, reused = frame_cache.kept("k", key, ["frame"], compute)
    again, reused_again = frame_cache.kept("k", key, ["frame"], compute)
    assert (reused, reused_again, len(calls)) == (False, True, 1)
    assert_frame_equal(again["frame"], first["frame"])
    frame_cache.kept("k", frame_cache.key_of("k", ["b"]), ["frame"], compute)
    assert len(calls) == 2
    assert not list(cache.rglob("*.partial"))


def test_an_unreadable_or_partial_entry_is_absent(cache):
    key = frame_cache.key_of("k", ["a"])
    frame_cache.write("k", key, {"frame": FRAME})
    (frame_cache.entry_dir("k", key) / "frame.parquet").write_bytes(b"not parquet")
    assert frame_cache.read("k", key, ["frame"]) is None
    other = frame_cache.key_of("k", ["b"])
    partial = frame_cache.entry_dir("k", other).with_name(f"{other}.123.partial")
    partial.mkdir(parents=True)
    FRAME.write_parquet(partial / "frame.parquet")
    assert frame_cache.read("k", other, ["frame"]) is None
    assert frame_cache.read("k", key, ["frame", "missing"]) is None


def _entry(name: str) -> str:
    key = frame_cache.key_of("k", [name])
    frame_cache.write("k", key, {"frame": FRAME})
    return key


def _used(key: str, at: float) -> None:
    os.utime(frame_cache.entry_dir("k", key), (at, at))


def test_the_least_recently_used_entries_go_beyond_the_budget(monkeypatch):
    first, second, third = _entry("first"), _entry("second"), _entry("third")
    for at, key in enumerate([first, second, third], start=1):
        _used(key, 1_000_000 + at)
    size = sum(f.stat().st_size for f in frame_cache.entry_dir("k", first).iterdir())
    monkeypatch.setenv("LOFT_CACHE_MAX_GB", str(2.5 * size / 2**30))
    assert frame_cache.read("k", first, ["frame"]) is not None  # used now: the most recent
    fourth = _entry("fourth")
    kept = {key for key in (first, second, third, fourth) if frame_cache.read("k", key, ["frame"]) is not None}
    assert kept == {first, fourth}

    monkeypatch.setenv("LOFT_CACHE_MAX_GB", "0")
    fifth = _entry("fifth")  # over any budget on its own, but what was just written stays
    assert frame_cache.read("k", fifth, ["frame"]) is not None
    assert frame_cache.read("k", fourth, ["frame"]) is None


def test_a_partial_entry_left_by_a_dead_writer_goes_after_an_hour(cache):
    stale, fresh = cache / "k" / "a.1.partial", cache / "k" / "b.2.partial"
    for folder in (stale, fresh):
        folder.mkdir(parents=True)
    os.utime(stale, (0, 0))
    _entry("any")
    assert (stale.exists(), fresh.exists()) == (False, True)


@pytest.mark.parametrize("value", ["-1", "lots", "nan"])
def test_a_bad_budget_is_refused_by_name(monkeypatch, value):
    monkeypatch.setenv("LOFT_CACHE_MAX_GB", value)
    with pytest.raises(frame_cache.ConfigurationError, match="LOFT_CACHE_MAX_GB"):
        _entry("any")
