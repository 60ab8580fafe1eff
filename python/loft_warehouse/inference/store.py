"""The durable response store: one committed SQLite row per returned response.

It lives outside the warehouse DuckDB file (dbt holds that file during a build) and is written
in WAL mode with synchronous=FULL, so a response is on disk before the caller does anything
else with it and a SIGKILL loses nothing that returned. Rows are keyed by the request key
(system, prompt messages, generation settings); a rerun looks keys up and calls only the rest.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field, fields
from datetime import UTC, datetime
from pathlib import Path

from loft_warehouse.errors import ConfigurationError
from loft_warehouse.settings import PROJECT_ROOT

DEFAULT_STORE = PROJECT_ROOT / ".response_store" / "responses.sqlite"
STATUSES = ("ok", "blocked", "error", "skipped_no_credentials", "skipped_too_long")
# Outcomes that are final: a rerun never repeats them. Errors are stored too but retried, except
# a request the server refused (status error, finish_reason REJECTED) unless retry_errors is set.
FINAL_STATUSES = ("ok", "blocked")
REJECTED = "rejected"


@dataclass
class StoredResponse:
    """One response as stored (and as the `responses` table shows it)."""

    request_key: str
    system: str
    prompt_id: str
    task: str
    dataset: str
    corpus_id: str
    variant: str
    split: str
    qid: str
    turn: int
    status: str
    raw_text: str | None = None
    finish_reason: str | None = None
    input_tokens: int | None = None
    cached_tokens: int | None = None
    output_tokens: int | None = None
    latency_s: float | None = None
    attempts: int = 0
    error: str | None = None
    cost_usd: float | None = None
    created_at: str = ""


COLUMNS = tuple(f.name for f in fields(StoredResponse))
_COLUMN_TYPES = {
    "turn": "INTEGER",
    "input_tokens": "INTEGER",
    "cached_tokens": "INTEGER",
    "output_tokens": "INTEGER",
    "attempts": "INTEGER",
    "latency_s": "REAL",
    "cost_usd": "REAL",
}


_UPSERT = (
    f"INSERT INTO responses ({', '.join(COLUMNS)}) VALUES ({', '.join('?' for _ in COLUMNS)}) "
    f"ON CONFLICT(request_key) DO UPDATE SET "
    + ", ".join(f"{c} = excluded.{c}" for c in COLUMNS if c != "request_key")
    + " WHERE responses.status NOT IN ("
    + ", ".join(f"'{s}'" for s in FINAL_STATUSES)
    + ")"
)


@dataclass
class _Pending:
    """A row waiting for the commit that makes it durable."""

    values: list
    done: threading.Event = field(default_factory=threading.Event)
    error: BaseException | None = None


def store_path(configured: str | None = None) -> Path:
    """Resolve the store file: explicit setting, then $LOFT_RESPONSE_STORE, then the default."""
    value = (configured or "").strip() or os.environ.get("LOFT_RESPONSE_STORE", "").strip()
    if not value:
        return DEFAULT_STORE
    path = Path(value).expanduser()
    return path if path.is_absolute() else PROJECT_ROOT / path


def now_utc() -> str:
    """ISO timestamp in UTC (the store's created_at)."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")


class ResponseStore:
    """Thread-safe durable store: put() returns only once its row is committed and fsynced.

    Concurrent put() calls share commits (group commit): the first caller commits every row
    queued so far while later callers wait for the commit that holds theirs, so one fsync
    serves many responses when they arrive together, and none returns before it is on disk.
    """

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._queue_lock = threading.Lock()
        self._pending: list[_Pending] = []
        self._committing = False
        self._con = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self._con.execute("PRAGMA journal_mode=WAL")
        self._con.execute("PRAGMA synchronous=FULL")
        self._con.execute("PRAGMA busy_timeout=30000")
        columns = ", ".join(
            f"{name} {_COLUMN_TYPES.get(name, 'TEXT')}" + (" PRIMARY KEY" if name == "request_key" else "")
            for name in COLUMNS
        )
        self._con.execute(f"CREATE TABLE IF NOT EXISTS responses ({columns})")
        found = tuple(row[1] for row in self._con.execute("PRAGMA table_info(responses)"))
        if found != COLUMNS:
            self._con.close()
            raise ConfigurationError(
                f"response store {self.path} has columns {list(found)}, this code expects {list(COLUMNS)}: "
                "point LOFT_RESPONSE_STORE (or the var response_store) at a new file; nothing was sent"
            )

    def close(self) -> None:
        """Close the connection (everything put() returned from is already on disk)."""
        with self._lock:
            self._con.close()

    def __enter__(self) -> ResponseStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def put(self, response: StoredResponse) -> None:
        """Write one response durably; a stored final outcome is never overwritten."""
        if response.status not in STATUSES:
            raise ValueError(f"unknown status {response.status!r}")
        row = asdict(response)
        if not row["created_at"]:
            row["created_at"] = now_utc()
        item = _Pending([row[c] for c in COLUMNS])
        with self._queue_lock:
            self._pending.append(item)
            leader = not self._committing
            self._committing = True
        while leader:
            with self._queue_lock:
                batch, self._pending = self._pending, []
                if not batch:
                    self._committing = False
                    break
            self._commit(batch)
        item.done.wait()
        if item.error is not None:
            raise item.error

    def _commit(self, batch: list[_Pending]) -> None:
        error: BaseException | None = None
        with self._lock:
            try:
                self._con.execute("BEGIN IMMEDIATE")
                self._con.executemany(_UPSERT, [item.values for item in batch])
                self._con.execute("COMMIT")
            except BaseException as exc:  # noqa: BLE001 - handed to every waiting caller
                error = exc
                if self._con.in_transaction:
                    self._con.execute("ROLLBACK")
        for item in batch:
            item.error = error
            item.done.set()

    def get(self, keys: Iterable[str]) -> dict[str, StoredResponse]:
        """Stored rows (any status) for these keys."""
        keys = list(dict.fromkeys(keys))
        found: dict[str, StoredResponse] = {}
        with self._lock:
            for start in range(0, len(keys), 500):
                chunk = keys[start : start + 500]
                marks = ", ".join("?" for _ in chunk)
                cursor = self._con.execute(
                    f"SELECT {', '.join(COLUMNS)} FROM responses WHERE request_key IN ({marks})",
                    chunk,
                )
                for values in cursor:
                    found[values[0]] = StoredResponse(*values)
        return found

    def final(self, keys: Iterable[str], retry_errors: bool = False) -> dict[str, StoredResponse]:
        """Stored rows whose outcome is final: ok/blocked, and refused requests unless
        retry_errors; these are not requested again."""
        return {
            k: r
            for k, r in self.get(keys).items()
            if r.status in FINAL_STATUSES or (not retry_errors and r.status == "error" and r.finish_reason == REJECTED)
        }

    def rows(self) -> Iterator[StoredResponse]:
        """Every stored row (for inspection and tests)."""
        with self._lock:
            values = self._con.execute(f"SELECT {', '.join(COLUMNS)} FROM responses").fetchall()
        return (StoredResponse(*v) for v in values)

    def count(self) -> int:
        """Number of stored rows."""
        with self._lock:
            return int(self._con.execute("SELECT count(*) FROM responses").fetchone()[0])
