"""Run SQL written by a model (the text-to-SQL baseline) without letting it do harm.

Four layers, each enough on its own for the cases tested:
1. a static check (sqlglot): one statement, a query (SELECT / set operation, CTEs allowed),
   every table one of the database's tables or a CTE in scope where it is read, no table
   functions, and every function one SQLite has (an allow-list, sql.sqlite_functions: DuckDB's
   own, such as query() that runs SQL given as a string, never reach the engine); the DuckDB
   rewrite is checked again against file, SQL-string and settings functions; SQL over a length
   cap is refused unparsed;
2. the engine: each database is a DuckDB file opened read-only, with external access disabled
   (no files, no ATTACH/INSTALL/LOAD/COPY), extension autoloading off and the configuration
   locked, one thread and a memory cap;
3. a separate process (`sandbox_worker`) parses, checks and runs every query under a hard
   ceiling on its private memory (768 MiB, so its resident set stays under 1 GiB with the
   libraries' pages), and is killed when a turn overruns its wall clock, which starts when the
   SQL is sent, so parsing and planning count as well as execution;
4. a cap on the rows fetched and on the bytes they take.

Bad or hostile SQL yields a result with status 'rejected' (static check) or 'error' (engine,
time limit, memory, size), never an exception or a side effect. Model SQL is read as SQLite
(Spider's dialect) and rewritten with the gold rewrites, so it gets the same semantics as the gold.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import sqlglot
from sqlglot import exp

from loft_warehouse.errors import ConfigurationError
from loft_warehouse.sql import rewrite, sqlite_functions
from loft_warehouse.sql.gold import json_safe

TIMEOUT_S = 5.0
GRACE_S = 0.5
MAX_ROWS = 10_000
MAX_RESULT_BYTES = 16 * 2**20
MAX_SQL_CHARS = 20_000
MEMORY_CEILING_BYTES = 768 * 2**20
MEMORY_LIMIT = "512MB"
WORKER_START_S = 120.0
FOLDER_PREFIX = "loft-sql-sandbox-"
WORKER_ENV = ("PATH", "PYTHONPATH", "LANG", "LC_ALL", "TMPDIR", "HOME")
LOCKED_CONFIG: dict[str, str | bool | int | float | list[str]] = {
    "enable_external_access": False,
    "autoload_known_extensions": False,
    "autoinstall_known_extensions": False,
    "allow_community_extensions": False,
    "threads": 1,
    "memory_limit": MEMORY_LIMIT,
    "lock_configuration": True,
}
_FORBIDDEN_NODES = (
    exp.DDL,
    exp.DML,
    exp.Command,
    exp.Copy,
    exp.Pragma,
    exp.Set,
    exp.Attach,
    exp.Detach,
    exp.Use,
    exp.Transaction,
    exp.Commit,
    exp.Rollback,
    exp.Describe,
    exp.Export,
)
_QUERY_ROOTS = (exp.Select, exp.SetOperation, exp.Subquery)
_FILE_FUNCTIONS = (
    "read_", "glob", "sniff_csv", "parquet_", "load", "install", "import", "export",
    "query", "duckdb_", "current_setting", "getenv", "pragma_", "which_secret",
)  # fmt: skip


class Rejected(ValueError):
    """SQL refused by the static check."""


@dataclass
class SandboxResult:
    """Outcome of one model query: status 'ok' | 'empty' | 'error' | 'rejected'."""

    status: str
    rows: list[tuple] = field(default_factory=list)
    error: str | None = None
    sql: str | None = None
    peak_rss_kib: int = 0

    def rows_json(self) -> str | None:
        if self.status not in ("ok", "empty"):
            return None
        return json.dumps([[json_safe(v) for v in row] for row in self.rows], ensure_ascii=False)


def ctes_in_scope(table: exp.Table) -> set[str]:
    """CTE names a table reference can see: those of enclosing WITHs, earlier siblings only.

    The engine resolves a name to a CTE only inside the query that defines it; elsewhere the
    same name means a real table or system view, so it must not pass as a CTE there."""
    names: set[str] = set()
    child: exp.Expr = table
    parent = table.parent
    while parent is not None:
        if isinstance(parent, exp.With):
            recursive = bool(parent.args.get("recursive"))
            for cte in parent.expressions:
                if cte is child and not recursive:
                    break
                names.add(cte.alias_or_name.lower())
                if cte is child:
                    break
        elif isinstance(parent, exp.Query):
            with_ = next((v for v in parent.args.values() if isinstance(v, exp.With)), None)
            if with_ is not None and child is not with_:
                names.update(cte.alias_or_name.lower() for cte in with_.expressions)
        child, parent = parent, parent.parent
    return names


def too_long(n_chars: int) -> str:
    return f"SQL of {n_chars} characters is over the {MAX_SQL_CHARS}-character limit"


def check_query(sql: str, tables: set[str], dialect: str = "sqlite") -> exp.Expr:
    """Parse and vet one statement; Rejected says why it may not run."""
    if len(sql) > MAX_SQL_CHARS:
        raise Rejected(too_long(len(sql)))
    try:
        trees = [t for t in sqlglot.parse(sql, read=dialect) if t is not None]
    except sqlglot.errors.SqlglotError as exc:
        raise Rejected(f"unparseable SQL: {rewrite.plain(str(exc))}") from exc
    if len(trees) != 1:
        raise Rejected(f"expected one statement, found {len(trees)}")
    tree = trees[0]
    if not isinstance(tree, _QUERY_ROOTS):
        raise Rejected(f"only queries may run, not {type(tree).__name__.upper()}")
    for node in tree.walk():
        if isinstance(node, _FORBIDDEN_NODES):
            raise Rejected(f"{type(node).__name__.upper()} is not allowed")
        if isinstance(node, exp.Table):
            if not isinstance(node.this, exp.Identifier) or node.args.get("db") or node.args.get("catalog"):
                raise Rejected(f"table {node.sql(dialect=dialect)!r} is not a table of the database")
            if node.name.lower() not in tables and node.name.lower() not in ctes_in_scope(node):
                raise Rejected(f"unknown table {node.name!r}")
        if isinstance(node, exp.Func):
            if dialect == "sqlite" and (missing := sqlite_functions.disallowed(node)):
                raise Rejected(f"function {missing} is not a SQLite function")
            name = (node.sql_name() if not isinstance(node, exp.Anonymous) else node.name).lower()
            if name.startswith(_FILE_FUNCTIONS):
                raise Rejected(f"function {name} is not allowed")
    return tree


def sweep_stale_folders() -> int:
    """Delete sandbox folders whose owning process is gone (a killed import); returns how many."""
    removed = 0
    for folder in Path(tempfile.gettempdir()).glob(f"{FOLDER_PREFIX}*"):
        try:
            pid = int(folder.name[len(FOLDER_PREFIX) :].split("-")[0])
            os.kill(pid, 0)
        except ProcessLookupError:
            shutil.rmtree(folder, ignore_errors=True)
            removed += 1
        except (ValueError, PermissionError):
            continue
    return removed


def _vm_hwm_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


class _WorkerProcess:
    """One sandbox_worker process and the two pipes to it."""

    def __init__(self, root: Path, folder: Path, memory_bytes: int) -> None:
        request_read, request_write = os.pipe()
        reply_read, reply_write = os.pipe()
        self.stderr = folder / "worker.stderr"
        with self.stderr.open("wb") as err:
            self.process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "loft_warehouse.sql.sandbox_worker",
                    str(request_read),
                    str(reply_write),
                    str(root),
                    str(folder),
                    str(memory_bytes),
                ],
                pass_fds=(request_read, reply_write),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=err,
                env={k: v for k, v in os.environ.items() if k in WORKER_ENV},
            )
        os.close(request_read)
        os.close(reply_write)
        self.requests = Connection(request_write, readable=False)
        self.replies = Connection(reply_read, writable=False)
        self.opened: set[str] = set()
        self.overran = False
        ready = self.call({"op": "ready"}, WORKER_START_S)
        if ready is None or not ready.get("ready"):
            tail = self.stderr.read_text(errors="replace")[-2000:]
            self.kill()
            raise ConfigurationError(f"the SQL sandbox process did not start: {tail.strip() or 'no output'}")
        self.databases: set[str] = set(ready["databases"])

    def call(self, request: dict[str, Any] | None, timeout_s: float) -> dict[str, Any] | None:
        """Send (unless None) and wait for one reply; None when the worker overran or died."""
        try:
            if request is not None and request.get("op") != "ready":
                self.requests.send(request)
            if not self.replies.poll(timeout_s):
                self.overran = True
                return None
            return self.replies.recv()
        except (EOFError, OSError):
            return None

    def peak_rss_kib(self) -> int:
        return _vm_hwm_kib(self.process.pid)

    def death(self) -> str:
        """Why a worker stopped answering before its time was up."""
        try:
            code: int | None = self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            code = None
        if code is not None and code < 0:
            return f"the sandbox process died (signal {-code})"
        if code is None:
            return "the sandbox process stopped answering"
        said = self.stderr.read_text(errors="replace").strip().splitlines()
        return f"the sandbox process exited ({code}){': ' + said[-1] if said else ''}"

    def kill(self) -> None:
        self.requests.close()
        self.replies.close()
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()


class Sandbox:
    """Model SQL run in a confined worker process on read-only, locked copies of the databases."""

    def __init__(
        self,
        root: Path,
        timeout_s: float = TIMEOUT_S,
        max_rows: int = MAX_ROWS,
        memory_bytes: int = MEMORY_CEILING_BYTES,
    ) -> None:
        self.root = root
        self.timeout_s = timeout_s
        self.max_rows = max_rows
        self.memory_bytes = memory_bytes
        self.peak_rss_kib = 0
        self.workers_started = 0
        sweep_stale_folders()
        self._folder = Path(tempfile.mkdtemp(prefix=f"{FOLDER_PREFIX}{os.getpid()}-"))
        self._worker: _WorkerProcess | None = None
        self._lock = threading.Lock()

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop the worker and delete the folder its database copies were built in."""
        with self._lock:
            self._stop_worker()
        shutil.rmtree(self._folder, ignore_errors=True)

    def _stop_worker(self) -> None:
        if self._worker is not None:
            if self._worker.process.poll() is None:  # still running, so its pid is still its own
                self.peak_rss_kib = max(self.peak_rss_kib, self._worker.peak_rss_kib())
            self._worker.kill()
            self._worker = None

    def _ready_worker(self, db_id: str) -> _WorkerProcess:
        if self._worker is None or self._worker.process.poll() is not None:
            self._stop_worker()
            self._worker = _WorkerProcess(self.root, self._folder, self.memory_bytes)
            self.workers_started += 1
        worker = self._worker
        if db_id in worker.databases and db_id not in worker.opened:
            reply = worker.call({"op": "open", "db_id": db_id}, WORKER_START_S)
            if reply is None or reply.get("error"):
                detail = reply["error"] if reply else worker.death()
                self._stop_worker()
                raise ConfigurationError(f"the SQL sandbox could not load database {db_id!r}: {detail}")
            worker.opened.add(db_id)
        return worker

    def run(self, db_id: str, sql: str, dialect: str = "sqlite") -> SandboxResult:
        """Vet, rewrite (SQLite semantics) and run one query; never raises for bad SQL."""
        if len(sql) > MAX_SQL_CHARS:
            return SandboxResult("rejected", error=too_long(len(sql)))
        request = {
            "op": "run",
            "db_id": db_id,
            "sql": sql,
            "dialect": dialect,
            "timeout_s": self.timeout_s,
            "max_rows": self.max_rows,
            "max_result_bytes": MAX_RESULT_BYTES,
        }
        with self._lock:
            for _attempt in (1, 2):
                worker = self._ready_worker(db_id)
                reply = worker.call(request, self.timeout_s + GRACE_S)
                if reply is None:
                    if worker.overran:
                        self._stop_worker()
                        return SandboxResult(
                            "error", error=f"time limit of {self.timeout_s:g} s exceeded (process killed)"
                        )
                    detail = worker.death()
                    self._stop_worker()
                    ceiling = self.memory_bytes / 2**20
                    return SandboxResult("error", error=f"{detail}; memory ceiling {ceiling:g} MiB")
                if not reply.get("retire"):
                    break
                # The parser failed inside itself: once more in a fresh process, in case it was not the SQL.
                self._stop_worker()
        assert reply is not None
        self.peak_rss_kib = max(self.peak_rss_kib, reply.get("peak_rss_kib", 0))
        if reply.get("timed_out"):
            reply["error"] = f"time limit of {self.timeout_s:g} s exceeded ({reply['error']})"
        return SandboxResult(
            reply["status"],
            [tuple(row) for row in reply.get("rows", [])],
            error=reply.get("error"),
            sql=reply.get("sql"),
            peak_rss_kib=reply.get("peak_rss_kib", 0),
        )
