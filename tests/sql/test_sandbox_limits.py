"""Issue 12, item 1: the sandbox holds its limits against hostile SQL of our own."""

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from loft_warehouse.sql.sandbox import Rejected, Sandbox, check_query, sweep_stale_folders
from tests.sql.adversarial import cases, run_set

TIMEOUT_S = 5.0  # the import's default: room for a loaded CI machine; the bombs still overrun it
CEILING_KIB = 2**20
KILL_SLACK_S = 3.0  # the watchdog's kill and the reap, on a machine running other tests beside


def test_the_hostile_set_is_large_and_our_own():
    own = cases(Path("/nonexistent"))
    existing = Path(__file__).with_name("test_sandbox.py").read_text()
    assert len(own) >= 60
    assert not [sql for _, sql, _ in own if sql in existing]


def test_every_hostile_query_is_stopped_within_limits(root, tmp_path):
    report = run_set(root, TIMEOUT_S, tmp_path)
    print(report.summary())
    unexpected = [(o.expect, o.status, o.error, o.sql[:80]) for o in report.outcomes if not o.as_expected()]
    assert unexpected == []
    assert max(o.wall_s for o in report.outcomes) <= TIMEOUT_S + KILL_SLACK_S
    assert 0 < report.peak_rss_kib <= CEILING_KIB
    assert report.side_effects == []
    assert report.leaks == []


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM (WITH duckdb_databases AS (SELECT 1 AS x) SELECT x FROM duckdb_databases) AS t, "
        "duckdb_databases",
        "WITH a AS (SELECT * FROM sqlite_master), sqlite_master AS (SELECT 1) SELECT * FROM a",
        "SELECT (SELECT 1 FROM pragma_database_list), (WITH pragma_database_list AS (SELECT 1) SELECT 1)",
    ],
)
def test_a_cte_does_not_unlock_a_system_table_outside_its_scope(sql):
    with pytest.raises(Rejected, match="unknown table"):
        check_query(sql, {"singer"})


def test_ctes_resolve_where_the_engine_resolves_them():
    check_query("WITH a AS (SELECT 1 AS x), b AS (SELECT x FROM a) SELECT * FROM b", set())
    check_query("WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 3) SELECT * FROM r", set())
    check_query("SELECT * FROM (WITH a AS (SELECT 1 AS x) SELECT * FROM a) AS t", set())
    with pytest.raises(Rejected, match="unknown table 'b'"):
        check_query("WITH a AS (SELECT * FROM b), b AS (SELECT 1) SELECT * FROM a", set())


def test_a_worker_that_dies_mid_query_is_a_turn_error_and_the_next_turn_runs(root):
    slow = "SELECT count(*) FROM " + ", ".join(f"singer AS s{i}" for i in range(13))
    with Sandbox(root, timeout_s=30) as box:
        assert box.run("concert_singer", "SELECT count(*) FROM singer").rows == [(6,)]
        pid = box._worker.process.pid
        threading.Timer(1.0, os.kill, (pid, signal.SIGKILL)).start()
        started = time.monotonic()
        result = box.run("concert_singer", slow)
        assert time.monotonic() - started < 10
        assert result.status == "error" and "signal 9" in result.error
        assert box.run("concert_singer", "SELECT count(*) FROM singer").rows == [(6,)]
        assert box.workers_started == 2


def test_a_killed_import_leaves_no_database_copy_and_its_folder_is_swept(root):
    script = (
        "import os, signal, sys\n"
        "from pathlib import Path\n"
        "from loft_warehouse.sql.sandbox import Sandbox\n"
        f"box = Sandbox(Path({str(root)!r}))\n"
        "assert box.run('concert_singer', 'SELECT 1').status == 'ok'\n"
        "print(box._folder, box._worker.process.pid, flush=True)\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == -signal.SIGKILL, done.stderr
    folder, worker = done.stdout.split()
    deadline = time.monotonic() + 10
    while Path(f"/proc/{worker}").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not Path(f"/proc/{worker}").exists(), "the worker outlived its parent"
    assert list(Path(folder).glob("*.duckdb")) == []
    assert sweep_stale_folders() >= 1
    assert not Path(folder).exists()


def test_the_worker_environment_carries_no_secrets(root, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-should-not-reach-the-sandbox")
    with Sandbox(root) as box:
        box.run("concert_singer", "SELECT 1")
        environ = Path(f"/proc/{box._worker.process.pid}/environ").read_bytes()
    assert b"sk-should-not-reach-the-sandbox" not in environ
