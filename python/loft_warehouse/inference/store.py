"""The durable response store: one committed SQLite row per returned response.

It lives outside the warehouse DuckDB file (dbt holds that file during a build) and is written
in WAL mode with synchronous=FULL, so a response is on disk before the caller does anything
else with it and a SIGKILL loses nothing that returned. Rows are keyed by the request key
(system, prompt messages, generation settings); a rerun looks keys up and calls only the rest.

Batches (mode: batch) are stored in `batches` and `batch_requests` before they are submitted,
and get the provider's batch id as soon as it is known; their results become responses rows
like any other.

The store is checked at open (SQLite's quick_check): a damaged file stops the run in one line
before anything is sent, where a page overwritten in its middle went unnoticed until a read.

A full disk loses no paid response: each open store sets aside a reserve file beside it
($LOFT_STORE_RESERVE_BYTES, default 8 MiB; an open with no room for it sends nothing), grown
before each call is sent to hold the row of every call then in flight (twice the largest reply,
LOFT_MAX_RESPONSE_BYTES, and its other fields: once in the WAL, once checkpointed); a call it
has no room for is not sent. When a commit finds the disk full, the reserve is given back and
the commit made again, and from then on every put stores its row and raises OutOfSpaceError, so
the run sends nothing new while the calls already out are stored, in that room, as they return.

One store, one payer: before a paid request is sent, its key is claimed in `leases` (owner,
expiry, renewed while the owner lives). Another build sharing the store waits for that key's
response instead of sending it too; a lease whose owner died (same host, pid gone) or that
expired is taken over. A batch being submitted is leased the same way, so another build waits
for its provider id instead of taking it for a submit that was lost.
"""

from __future__ import annotations

import os
import socket
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field, fields
from datetime import UTC, datetime
from pathlib import Path

from loft_warehouse.errors import ConfigurationError, OutOfSpaceError
from loft_warehouse.readers import byte_cap, max_response_bytes
from loft_warehouse.settings import PROJECT_ROOT

DEFAULT_STORE = PROJECT_ROOT / ".response_store" / "responses.sqlite"
FIXTURE_STORE = PROJECT_ROOT / ".response_store" / "fixture.sqlite"
PLANTED_STORE = PROJECT_ROOT / ".response_store" / "planted.sqlite"
STATUSES = ("ok", "blocked", "error", "skipped_no_credentials", "skipped_too_long")
# A request in a provider batch that has not ended: a row of the `responses` table, never stored.
BATCH_PENDING = "batch_pending"
# Outcomes that are final: a rerun never repeats them. Errors are stored too but retried, except
# a request the server refused (status error, finish_reason REJECTED) unless retry_errors is set.
FINAL_STATUSES = ("ok", "blocked")
REJECTED = "rejected"
DEFAULT_RESERVE_BYTES = 8 * 2**20
ROW_FIELDS_BYTES = 64 * 2**10  # a row's keys, counts and error text besides its reply
LEASE_TTL_S = 120.0
LEASE_RENEW_S = 30.0
HOST = socket.gethostname()
BATCH_COLUMNS = {
    "batch_id": "TEXT PRIMARY KEY",
    "system": "TEXT NOT NULL",
    "provider": "TEXT NOT NULL",
    "provider_batch_id": "TEXT",
    "state": "TEXT NOT NULL",
    "provider_state": "TEXT",
    "n_requests": "INTEGER NOT NULL",
    "n_succeeded": "INTEGER",
    "n_errored": "INTEGER",
    "n_expired": "INTEGER",
    "n_canceled": "INTEGER",
    "cost_usd": "REAL",
    "submitted_at": "REAL NOT NULL",
    "updated_at": "TEXT",
    "error": "TEXT",
}
# A batch's own states: submitting (stored, the provider's id not yet known), submitted (in the
# provider's hands), collected (results stored), failed (the provider refused or lost the whole
# batch: its requests are errors), abandoned (never reached the provider).
OPEN_BATCH_STATES = ("submitting", "submitted")
_OPEN_BATCH_STATES_SQL = ", ".join(f"'{state}'" for state in OPEN_BATCH_STATES)


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
    cache_write_tokens: int | None = None
    ttft_s: float | None = None
    batch_id: str | None = None
    thinking_tokens: int | None = None
    max_output_tokens: int | None = None
    thinking: str | None = None
    thought_text: str | None = None


COLUMNS = tuple(f.name for f in fields(StoredResponse))
_COLUMN_TYPES = {
    "turn": "INTEGER",
    "input_tokens": "INTEGER",
    "cached_tokens": "INTEGER",
    "output_tokens": "INTEGER",
    "attempts": "INTEGER",
    "latency_s": "REAL",
    "cost_usd": "REAL",
    "cache_write_tokens": "INTEGER",
    "ttft_s": "REAL",
    "thinking_tokens": "INTEGER",
    "max_output_tokens": "INTEGER",
}
# Columns added after the first release, in order: a store that ends before them gains them.
ADDED_COLUMNS = (
    "cache_write_tokens", "ttft_s", "batch_id", "thinking_tokens", "max_output_tokens", "thinking", "thought_text",
)  # fmt: skip


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
        # The busy timeout first: two builds opening one new store at once must wait, not fail.
        self._con = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None, timeout=30.0)
        try:
            _wal_mode(self._con)
            self._con.execute("PRAGMA synchronous=FULL")
            damage = [row[0] for row in self._con.execute("PRAGMA quick_check(3)")]
        except sqlite3.DatabaseError as exc:
            if isinstance(exc, sqlite3.OperationalError):
                raise
            damage = [str(exc)]
        if damage != ["ok"]:
            self._con.close()
            raise ConfigurationError(
                f"response store {self.path} is damaged ({'; '.join(damage)[:300]}); nothing was sent: move it "
                f"aside and salvage its rows into a new file (sqlite3 {self.path.name} .recover)"
            )
        columns = ", ".join(
            f"{name} {_COLUMN_TYPES.get(name, 'TEXT')}" + (" PRIMARY KEY" if name == "request_key" else "")
            for name in COLUMNS
        )
        self._con.execute(f"CREATE TABLE IF NOT EXISTS responses ({columns})")
        self.owner = f"{HOST}:{os.getpid()}:{uuid.uuid4().hex[:12]}"
        self._held: set[str] = set()
        self._closing = threading.Event()
        self._heartbeat: threading.Thread | None = None
        found = tuple(row[1] for row in self._con.execute("PRAGMA table_info(responses)"))
        if found != COLUMNS and COLUMNS[: len(found)] == found and set(COLUMNS[len(found) :]) <= set(ADDED_COLUMNS):
            for name in COLUMNS[len(found) :]:
                self._con.execute(f"ALTER TABLE responses ADD COLUMN {name} {_COLUMN_TYPES.get(name, 'TEXT')}")
            found = COLUMNS
        if found != COLUMNS:
            self._con.close()
            raise ConfigurationError(
                f"response store {self.path} has columns {list(found)}, this code expects {list(COLUMNS)}: "
                "point LOFT_RESPONSE_STORE (or the var response_store) at a new file; nothing was sent"
            )
        self._con.execute(
            "CREATE TABLE IF NOT EXISTS leases "
            "(request_key TEXT PRIMARY KEY, owner TEXT NOT NULL, expires_at REAL NOT NULL)"
        )
        self._con.execute(
            f"CREATE TABLE IF NOT EXISTS batches ({', '.join(f'{c} {t}' for c, t in BATCH_COLUMNS.items())})"
        )
        self._con.execute(
            "CREATE TABLE IF NOT EXISTS batch_requests (batch_id TEXT NOT NULL, request_key TEXT NOT NULL, "
            "row_json TEXT NOT NULL, PRIMARY KEY (batch_id, request_key))"
        )
        self.out_of_space = False  # a commit found the disk full and spent the reserve
        self._kept_in_reserve = 0
        self._reserve = self.path.with_name(f"{self.path.name}.reserve.{HOST}.{os.getpid()}.{uuid.uuid4().hex[:8]}")
        self._reserve_size = 0
        self._room_per_call = 2 * (max_response_bytes() + ROW_FIELDS_BYTES)
        self._set_aside_reserve()

    def _set_aside_reserve(self) -> None:
        """Sweep the reserves of dead owners, then claim this store's own (see the module docstring)."""
        for stale in self.path.parent.glob(f"{self.path.name}.reserve.{HOST}.*"):
            if not _owner_alive(f"{HOST}:{stale.name.split('.')[-2]}"):
                stale.unlink(missing_ok=True)
        size = byte_cap("LOFT_STORE_RESERVE_BYTES", DEFAULT_RESERVE_BYTES)
        try:
            self._grow_reserve(size, os.O_CREAT | os.O_EXCL)
        except OSError as exc:
            self._reserve.unlink(missing_ok=True)
            self._con.close()
            raise OutOfSpaceError(
                f"response store {self.path}: no room for its reserve of {size} bytes ({exc.strerror}); "
                "nothing was sent: free some space (or set LOFT_STORE_RESERVE_BYTES)"
            ) from exc

    def _grow_reserve(self, size: int, flags: int = 0) -> None:
        """Allocate the reserve file's blocks up to `size` (fallocate, so the room is really taken)."""
        descriptor = os.open(self._reserve, os.O_WRONLY | flags, 0o600)
        try:
            os.posix_fallocate(descriptor, 0, size)
            os.fsync(descriptor)
        finally:
            os.close(descriptor)
        self._reserve_size = size

    def _room_for_one_more_call(self) -> None:
        """Grow the reserve to hold the rows of the calls in flight and of one more (caller holds
        self._lock); with no room for it, that call is not sent."""
        needed = (len(self._held) + 1) * self._room_per_call
        if needed <= self._reserve_size:
            return
        try:
            self._grow_reserve(needed)
        except OSError as exc:
            raise OutOfSpaceError(
                f"response store {self.path}: no room to set aside {needed} bytes for the replies of "
                f"{len(self._held) + 1} call(s) in flight ({exc.strerror}); the calls already out are stored "
                f"as they return and nothing more is sent: free space on {self.path.parent} and rerun, "
                "stored responses are not sent again"
            ) from exc

    def _refuse_more(self) -> OutOfSpaceError:
        return OutOfSpaceError(
            f"response store {self.path}: the disk is full; every response returned so far is stored "
            f"({self._kept_in_reserve} in the space its reserve gave back) and nothing more is sent: "
            f"free space on {self.path.parent} and rerun, stored responses are not sent again"
        )

    def close(self) -> None:
        """Give up this store's leases and reserve, and close (everything put() stored is on disk)."""
        self._closing.set()
        if self._heartbeat is not None:
            self._heartbeat.join()
        with self._lock:
            if self._held:
                try:
                    self._con.execute("DELETE FROM leases WHERE owner = ?", [self.owner])
                except sqlite3.OperationalError as exc:
                    if not _is_full(exc):
                        raise  # on a full disk the leases are left to lapse with this process
                self._held.clear()
            self._con.close()
        self._reserve.unlink(missing_ok=True)

    def claim(self, key: str, retry_errors: bool = False) -> tuple[str, StoredResponse | None]:
        """('stored', row) when a final response is there; ('busy', None) while another live
        owner holds the key's lease; else ('mine', None): this store now holds the lease."""
        with self._lock:
            if self.out_of_space:
                raise self._refuse_more()
            self._con.execute("BEGIN IMMEDIATE")
            try:
                values = self._con.execute(
                    f"SELECT {', '.join(COLUMNS)} FROM responses WHERE request_key = ?", [key]
                ).fetchone()
                if values is not None and _is_final(StoredResponse(*values), retry_errors):
                    self._con.execute("COMMIT")
                    return "stored", StoredResponse(*values)
                if self._held_elsewhere(key):
                    self._con.execute("COMMIT")
                    return "busy", None
                self._room_for_one_more_call()
                self._take_lease(key)
                self._con.execute("COMMIT")
            except BaseException as exc:
                if self._con.in_transaction:
                    self._con.execute("ROLLBACK")
                if _is_full(exc):
                    raise self._refuse_more() from exc
                raise
        return "mine", None

    def _held_elsewhere(self, key: str) -> bool:
        """Whether another live owner holds the lease on key (caller holds self._lock)."""
        lease = self._con.execute("SELECT owner, expires_at FROM leases WHERE request_key = ?", [key]).fetchone()
        return lease is not None and lease[0] != self.owner and lease[1] > time.time() and _owner_alive(lease[0])

    def _take_lease(self, key: str) -> None:
        """Hold the lease on key, renewed until released or closed (caller holds self._lock,
        inside a transaction)."""
        self._con.execute(
            "INSERT INTO leases VALUES (?, ?, ?) ON CONFLICT(request_key) DO UPDATE SET "
            "owner = excluded.owner, expires_at = excluded.expires_at",
            [key, self.owner, time.time() + LEASE_TTL_S],
        )
        self._held.add(key)
        if self._heartbeat is None:
            self._heartbeat = threading.Thread(target=self._renew, name="store-leases", daemon=True)
            self._heartbeat.start()

    def release(self, key: str) -> None:
        """Drop this store's lease on a key (its response is stored, or it was not sent)."""
        with self._lock:
            self._con.execute("DELETE FROM leases WHERE request_key = ? AND owner = ?", [key, self.owner])
            self._held.discard(key)

    def _renew(self) -> None:
        while not self._closing.wait(LEASE_RENEW_S):
            with self._lock:
                if self._held:
                    self._con.execute(
                        "UPDATE leases SET expires_at = ? WHERE owner = ?", [time.time() + LEASE_TTL_S, self.owner]
                    )

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
        if self.out_of_space:
            raise self._refuse_more()

    def _commit(self, batch: list[_Pending]) -> None:
        error: BaseException | None = None
        with self._lock:
            for _ in range(2):  # again once, in the room the reserve gives back
                try:
                    self._con.execute("BEGIN IMMEDIATE")
                    self._con.executemany(_UPSERT, [item.values for item in batch])
                    self._con.execute("COMMIT")
                    error = None
                    self._kept_in_reserve += len(batch) if self.out_of_space else 0
                    break
                except BaseException as exc:  # noqa: BLE001 - handed to every waiting caller
                    error = exc
                    if self._con.in_transaction:
                        self._con.execute("ROLLBACK")
                    if not _is_full(exc) or self.out_of_space:
                        break
                    self.out_of_space = True
                    self._reserve.unlink()
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
        return {k: r for k, r in self.get(keys).items() if _is_final(r, retry_errors)}

    def rows(self) -> Iterator[StoredResponse]:
        """Every stored row (for inspection and tests)."""
        with self._lock:
            values = self._con.execute(f"SELECT {', '.join(COLUMNS)} FROM responses").fetchall()
        return (StoredResponse(*v) for v in values)

    def record_batch(self, batch_id: str, system: str, provider: str, entries: list[tuple[str, str]]) -> dict[str, str]:
        """Store a batch about to be submitted (state 'submitting') with its (request_key,
        prompt row JSON) entries, in one commit: from here on no build submits them again.
        This store holds the batch's submit lease until end_submit(), so another build takes
        the batch for one being submitted, not for one whose submit was lost.

        Keys already in an open batch of the system (another build sharing the store just
        recorded them) are left out; returns those keys with the batch that holds them. A batch
        left with no key is not recorded."""
        with self._lock:
            self._con.execute("BEGIN IMMEDIATE")
            try:
                taken = dict(
                    self._con.execute(
                        "SELECT r.request_key, r.batch_id FROM batch_requests AS r JOIN batches AS b USING (batch_id) "
                        f"WHERE b.system = ? AND b.state IN ({_OPEN_BATCH_STATES_SQL})",
                        [system],
                    ).fetchall()
                )
                entries = [(key, row) for key, row in entries if key not in taken]
                if entries:
                    self._con.execute(
                        "INSERT INTO batches (batch_id, system, provider, state, n_requests, submitted_at, updated_at) "
                        "VALUES (?, ?, ?, 'submitting', ?, ?, ?)",
                        [batch_id, system, provider, len(entries), time.time(), now_utc()],
                    )
                    self._con.executemany(
                        "INSERT INTO batch_requests VALUES (?, ?, ?)", [(batch_id, key, row) for key, row in entries]
                    )
                    self._take_lease(_submit_lease(batch_id))
                self._con.execute("COMMIT")
            except BaseException:
                if self._con.in_transaction:
                    self._con.execute("ROLLBACK")
                raise
        return taken

    def end_submit(self, batch_id: str) -> None:
        """This build's submit of a batch returned or failed: its lease goes."""
        self.release(_submit_lease(batch_id))

    def submitting_elsewhere(self, batch_id: str) -> bool:
        """Whether another live build holds the batch's submit lease: it is being submitted
        now, and its provider id comes when the call returns."""
        with self._lock:
            return self._held_elsewhere(_submit_lease(batch_id))

    def update_batch(self, batch_id: str, **values: object) -> None:
        """Set some of a batch's columns (state, provider_batch_id, counts, cost, error)."""
        unknown = set(values) - set(BATCH_COLUMNS)
        if unknown:
            raise ValueError(f"unknown batch column(s) {sorted(unknown)}")
        assignments = ", ".join(f"{name} = ?" for name in [*values, "updated_at"])
        with self._lock:
            self._con.execute(
                f"UPDATE batches SET {assignments} WHERE batch_id = ?", [*values.values(), now_utc(), batch_id]
            )

    def batches(self, system: str | None = None, open_only: bool = False) -> list[dict[str, object]]:
        """Batches as stored, oldest first (open: not yet collected, failed or abandoned)."""
        where, params = [], []
        if system is not None:
            where.append("system = ?")
            params.append(system)
        if open_only:
            where.append(f"state IN ({_OPEN_BATCH_STATES_SQL})")
        clause = f" WHERE {' AND '.join(where)}" if where else ""
        with self._lock:
            rows = self._con.execute(
                f"SELECT {', '.join(BATCH_COLUMNS)} FROM batches{clause} ORDER BY submitted_at, batch_id", params
            ).fetchall()
        return [dict(zip(BATCH_COLUMNS, row, strict=True)) for row in rows]

    def batch(self, batch_id: str) -> dict[str, object]:
        """One batch as stored now."""
        with self._lock:
            row = self._con.execute(
                f"SELECT {', '.join(BATCH_COLUMNS)} FROM batches WHERE batch_id = ?", [batch_id]
            ).fetchone()
        if row is None:
            raise KeyError(f"no batch {batch_id} in {self.path}")
        return dict(zip(BATCH_COLUMNS, row, strict=True))

    def batch_entries(self, batch_id: str) -> list[tuple[str, str]]:
        """(request_key, prompt row JSON) of a batch, in submission order."""
        with self._lock:
            return list(
                self._con.execute(
                    "SELECT request_key, row_json FROM batch_requests WHERE batch_id = ? ORDER BY rowid", [batch_id]
                )
            )

    def count(self) -> int:
        """Number of stored rows."""
        with self._lock:
            return int(self._con.execute("SELECT count(*) FROM responses").fetchone()[0])


def _wal_mode(con: sqlite3.Connection, wait_s: float = 30.0) -> None:
    """Switch to WAL. Changing the journal mode does not wait on the busy handler: while another
    build creates the same new store, SQLite answers 'locked' at once, so this waits itself."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            con.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def _submit_lease(batch_id: str) -> str:
    """The lease key of a batch's submit (request keys are hex digests: no clash)."""
    return f"batch-submit:{batch_id}"


def _is_final(response: StoredResponse, retry_errors: bool) -> bool:
    return response.status in FINAL_STATUSES or (
        not retry_errors and response.status == "error" and response.finish_reason == REJECTED
    )


def _is_full(exc: BaseException) -> bool:
    """Whether SQLite failed for want of disk space (SQLITE_FULL)."""
    return isinstance(exc, sqlite3.OperationalError) and getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL


def _owner_alive(owner: str) -> bool:
    """False only when the lease's owner ran on this host and its process is gone."""
    host, _, rest = owner.partition(":")
    pid = rest.partition(":")[0]
    if host != HOST or not pid.isdigit():
        return True
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
