"""Frames kept across builds, keyed by everything that decides them.

A rebuild with nothing changed should not redo deterministic work: landing the data, rendering
and counting the prompts, counting them again in each system's tokenizer, validating the
expectation suites. Each of those is a function of its inputs (frames, files, settings) and of
this package's code, so its output is kept under the sha256 of all of them; a change to any
input, to the package's sources or to the libraries that compute it misses. Entries are written
aside and renamed, so a build that dies mid-write leaves no entry, and an entry that cannot be
read is treated as absent. The folder is $LOFT_CACHE_DIR, else .loft_cache/ in the project;
the entries in it take at most $LOFT_CACHE_MAX_GB (default 2), the least recently used going
first, so a code change (which makes every key new) does not leave old entries behind for good.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import shutil
import threading
import time
from collections.abc import Callable, Hashable, Iterable, Mapping
from importlib import metadata
from pathlib import Path
from typing import Any, Generic, TypeVar

import numpy as np
import polars as pl

from loft_warehouse.errors import ConfigurationError
from loft_warehouse.settings import PROJECT_ROOT

PACKAGE = Path(__file__).parent
DEFAULT_MAX_GB = 2.0
STALE_PARTIAL_S = 3600
LIBRARIES = ("polars", "duckdb", "sentencepiece", "tiktoken", "great_expectations", "pandas", "sqlglot")


T = TypeVar("T")


class SharedInProcess(Generic[T]):
    """One computation that several dbt models of a build read (staging's frames feed
    stg_datasets, stg_documents and stg_queries; the rendered prompts feed five prompt tables),
    made once and handed to each model that asks.

    Key: what decides the result, given by the caller (the settings and inputs it is kept under
    on disk too). Lifetime: this process, which is one dbt run; at most `keep` results are held
    (None: every one), the oldest dropped first. Models may ask from several threads at once:
    the first computes, the others wait for it.
    """

    def __init__(self, keep: int | None = None) -> None:
        self.keep = keep
        self._results: dict[Hashable, T] = {}
        self._lock = threading.Lock()

    def get(self, key: Hashable, compute: Callable[[], T]) -> T:
        """The result under `key`, computed now if this process has not made it yet."""
        with self._lock:
            if key not in self._results:
                if self.keep is not None:
                    while len(self._results) >= self.keep:
                        del self._results[next(iter(self._results))]
                self._results[key] = compute()
            return self._results[key]


def cache_dir() -> Path:
    """$LOFT_CACHE_DIR, else .loft_cache/ in the project."""
    value = os.environ.get("LOFT_CACHE_DIR", "").strip()
    return Path(value).expanduser() if value else PROJECT_ROOT / ".loft_cache"


@functools.cache
def package_version() -> str:
    """sha256 of this package's sources and declarations and of the computing libraries' versions."""
    digest = hashlib.sha256()
    for library in LIBRARIES:
        try:
            digest.update(f"{library} {metadata.version(library)}\n".encode())
        except metadata.PackageNotFoundError:
            digest.update(f"{library} absent\n".encode())
    for path in sorted([*PACKAGE.rglob("*.py"), *PACKAGE.rglob("*.yaml")]):
        digest.update(str(path.relative_to(PACKAGE)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def frame_digest(frame: pl.DataFrame) -> str:
    """sha256 of a frame's schema and rows as a multiset: DuckDB hands a table's rows over in no
    fixed order, and every cached computation here is independent of it. Each row counts by two
    independently seeded row hashes, so equal digests mean equal content for any data not built
    to collide."""
    digest = hashlib.sha256(json.dumps([[n, str(t)] for n, t in frame.schema.items()]).encode())
    digest.update(frame.height.to_bytes(8, "little"))
    if frame.height:
        for seed in (11, 29):
            digest.update(np.sort(frame.hash_rows(seed=seed).to_numpy()).tobytes())
    return digest.hexdigest()


def file_stamp(path: Path | str) -> str:
    """A file by path, size and modification time (as make decides what is stale)."""
    stat = Path(path).stat()
    return f"{path}\0{stat.st_size}\0{stat.st_mtime_ns}"


def _plain(value: Any) -> Any:
    """A settings object as JSON-able data that is the same in every process (sets sorted)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=repr)
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"no cache key for a {type(value).__name__}")


def key_of(kind: str, parts: Iterable[Any]) -> str:
    """The key of one entry: the kind, the package version and the parts (frames by digest,
    settings as canonical JSON)."""
    digest = hashlib.sha256(f"{kind}\0{package_version()}\n".encode())
    for part in parts:
        if isinstance(part, pl.DataFrame):
            text = frame_digest(part)
        else:
            text = json.dumps(part, default=_plain, sort_keys=True, ensure_ascii=False)
        digest.update(text.encode() + b"\n")
    return digest.hexdigest()


def entry_dir(kind: str, key: str) -> Path:
    """The folder of one entry."""
    return cache_dir() / kind / key


def max_bytes() -> int:
    """$LOFT_CACHE_MAX_GB (default 2) in bytes: what the entries may take in all."""
    value = os.environ.get("LOFT_CACHE_MAX_GB", "").strip()
    try:
        gigabytes = float(value) if value else DEFAULT_MAX_GB
    except ValueError:
        gigabytes = -1.0
    if not gigabytes >= 0:
        raise ConfigurationError(f"LOFT_CACHE_MAX_GB must be a number of gigabytes >= 0, got {value!r}")
    return int(gigabytes * 2**30)


def read(kind: str, key: str, names: Iterable[str]) -> dict[str, pl.DataFrame] | None:
    """The named frames of an entry, or None when it is absent or unreadable; a read marks the
    entry as used."""
    folder = entry_dir(kind, key)
    try:
        frames = {name: pl.read_parquet(folder / f"{name}.parquet") for name in names}
        os.utime(folder)
    except (OSError, pl.exceptions.PolarsError):
        return None
    return frames


def write(kind: str, key: str, frames: Mapping[str, pl.DataFrame]) -> None:
    """Keep an entry's frames (written aside, then renamed; a concurrent writer's entry wins)."""
    folder = entry_dir(kind, key)
    partial = folder.with_name(f"{folder.name}.{os.getpid()}.partial")
    partial.mkdir(parents=True, exist_ok=True)
    for name, frame in frames.items():
        frame.write_parquet(partial / f"{name}.parquet")
    try:
        partial.rename(folder)
    except OSError:
        shutil.rmtree(partial, ignore_errors=True)
    prune(keep=folder)


def prune(keep: Path) -> None:
    """Remove the least recently used entries beyond max_bytes() (never `keep`), and partial
    entries that a writer left over an hour ago."""
    entries = []
    now = time.time()
    for folder in cache_dir().glob("*/*"):
        try:
            if not folder.is_dir():
                continue
            used = folder.stat().st_mtime
            if folder.name.endswith(".partial"):
                if now - used > STALE_PARTIAL_S:
                    shutil.rmtree(folder, ignore_errors=True)
                continue
            entries.append((used, sum(f.stat().st_size for f in folder.iterdir()), folder))
        except OSError:
            continue
    budget = max_bytes()
    for _, size, folder in sorted(entries, key=lambda entry: entry[0], reverse=True):
        budget -= size
        if budget < 0 and folder != keep:
            shutil.rmtree(folder, ignore_errors=True)


def kept(
    kind: str, key: str, names: Iterable[str], compute: Callable[[], Mapping[str, pl.DataFrame]]
) -> tuple[dict[str, pl.DataFrame], bool]:
    """The entry under key, computing and keeping it on a miss; also whether it was reused."""
    found = read(kind, key, names)
    if found is not None:
        return found, True
    frames = dict(compute())
    write(kind, key, frames)
    return frames, False
