"""The process that runs model-written SQL: everything a hostile query can exhaust happens here.

The parent (`sandbox.Sandbox`) starts it with `python -m loft_warehouse.sql.sandbox_worker FD_IN
FD_OUT ROOT FOLDER MEMORY_BYTES` and kills it when a turn overruns its wall clock. Here, before
DuckDB or sqlglot is imported, its private writable memory (heap, anonymous mappings, stacks) is
capped with RLIMIT_DATA, so neither the engine nor the parser can take more than the ceiling
however the query is written. RLIMIT_AS would also count the address space allocators reserve
and never touch, which left too little room to load a database; the process dies with its
parent (PR_SET_PDEATHSIG). Each database copy is built in the parent's folder, opened
read-only and unlinked at once, so no copy outlives the process that reads it.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import resource
import signal
import sys
import threading
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

PR_SET_PDEATHSIG = 1
WARM_UP = {"sql": "SELECT 1", "dialect": "sqlite", "timeout_s": 600.0, "max_rows": 1, "max_result_bytes": 1024}
RECURSION_LIMIT = 3_000


def _confine(memory_bytes: int) -> None:
    """Cap private memory and tie this process's life to the parent's, before any heavy import."""
    resource.setrlimit(resource.RLIMIT_DATA, (memory_bytes, memory_bytes))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    with contextlib.suppress(OSError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    sys.setrecursionlimit(RECURSION_LIMIT)


def peak_rss_kib() -> int:
    """This process's peak resident set, in KiB: VmHWM of its own memory map (getrusage's
    ru_maxrss would also count the parent's resident set copied at fork)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


class Worker:
    """Vets, rewrites and runs one query at a time on locked read-only copies."""

    def __init__(self, root: Path, folder: Path) -> None:
        import duckdb

        from loft_warehouse.sql import databases, rewrite, sandbox
        from loft_warehouse.sql.gold import json_safe, schemas

        self._duckdb = duckdb
        self._databases, self._rewrite, self._sandbox, self._json_safe = databases, rewrite, sandbox, json_safe
        self.root = root
        self.folder = folder
        self.schemas = schemas(root)
        self._connections: dict[str, Any] = {}

    def connection(self, db_id: str) -> Any:
        if db_id not in self._connections:
            databases = self._databases
            path = self.folder / f"{db_id}.{os.getpid()}.duckdb"
            writer = self._duckdb.connect(str(path))
            try:
                databases.load_duckdb(databases.databases(self.root)[db_id], writer)
            finally:
                writer.close()
            try:
                config = self._sandbox.LOCKED_CONFIG
                self._connections[db_id] = self._duckdb.connect(str(path), read_only=True, config=config)
            finally:
                path.unlink(missing_ok=True)
        return self._connections[db_id]

    def run(self, request: dict[str, Any]) -> dict[str, Any]:
        """One turn: the reply the parent turns into a SandboxResult."""
        rewrite, json_safe = self._rewrite, self._json_safe
        rejected, check_query = self._sandbox.Rejected, self._sandbox.check_query
        started = time.monotonic()
        db_id, sql, dialect = request["db_id"], request["sql"], request["dialect"]
        schema = self.schemas.get(db_id)
        if schema is None:
            return {"status": "error", "error": f"unknown database {db_id!r}"}
        tables = set(schema.tables) | set(schema.table_aliases)
        try:
            check_query(sql, tables, dialect)
            duckdb_sql = rewrite.to_duckdb(sql, schema, row_order=True) if dialect == "sqlite" else sql
            check_query(duckdb_sql, set(schema.tables), "duckdb")
        except (rejected, rewrite.RewriteError) as exc:
            return {"status": "rejected", "error": str(exc)}
        except (RecursionError, SystemError, MemoryError, TypeError, ValueError) as exc:
            # sqlglot's parser is not reliable after this; the parent starts a fresh process.
            return {
                "status": "rejected",
                "error": f"SQL too deeply nested to check ({type(exc).__name__})",
                "retire": True,
            }
        remaining = request["timeout_s"] - (time.monotonic() - started)
        if remaining <= 0:
            return {"status": "error", "error": "while checking the SQL", "sql": duckdb_sql, "timed_out": True}
        cursor = self.connection(db_id).cursor()
        timer = threading.Timer(remaining, cursor.interrupt)
        timer.start()
        try:
            cursor.execute(duckdb_sql)
            rows = cursor.fetchmany(request["max_rows"] + 1)
        except (self._duckdb.Error, RuntimeError, MemoryError) as exc:
            message = str(exc).split("\n")[0] or type(exc).__name__
            return {"status": "error", "error": message, "sql": duckdb_sql, "timed_out": "INTERRUPT" in message.upper()}
        finally:
            timer.cancel()
            cursor.close()
        if len(rows) > request["max_rows"]:
            return {"status": "error", "error": f"more than {request['max_rows']} rows", "sql": duckdb_sql}
        cells = [[json_safe(v) for v in row] for row in rows]
        size = len(json.dumps(cells, ensure_ascii=False).encode())
        if size > request["max_result_bytes"]:
            return {"status": "error", "error": f"result of {size} bytes exceeds {request['max_result_bytes']}"}
        return {"status": "ok" if rows else "empty", "rows": cells, "sql": duckdb_sql}


def main(argv: list[str]) -> int:
    fd_in, fd_out, root, folder, memory_bytes = argv
    _confine(int(memory_bytes))
    requests, replies = Connection(int(fd_in), writable=False), Connection(int(fd_out), readable=False)
    worker = Worker(Path(root), Path(folder))
    replies.send({"ready": True, "databases": sorted(worker.schemas), "peak_rss_kib": peak_rss_kib()})
    while True:
        try:
            request = requests.recv()
        except EOFError:
            return 0
        try:
            if request["op"] == "open":
                worker.connection(request["db_id"])
                worker.run({**WARM_UP, "db_id": request["db_id"]})  # first-use costs before any clock
                reply = {"opened": request["db_id"]}
            else:
                reply = worker.run(request)
        except MemoryError:
            reply = {"status": "error", "error": "memory limit exceeded"}
        except Exception as exc:  # noqa: BLE001 - any failure is this turn's error, never the import's
            first_line = str(exc).splitlines()[0] if str(exc) else ""
            reply = {"status": "error", "error": f"{type(exc).__name__}: {first_line}", "retire": True}
        reply["peak_rss_kib"] = peak_rss_kib()
        replies.send(reply)
        if reply.get("retire"):
            return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
