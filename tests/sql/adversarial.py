"""The hostile SQL set (adversarial_sql.yaml) run through the sandbox, with the figures it holds.

Shared by tests/sql/test_sandbox_limits.py (short clock) and benchmarks/sql_sandbox_benchmark.py
(the default clock), so both speak of the same cases."""

from __future__ import annotations

import hashlib
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import yaml

from loft_warehouse.sql import databases
from loft_warehouse.sql.sandbox import FOLDER_PREFIX, GRACE_S, Sandbox, SandboxResult

SET = Path(__file__).with_name("adversarial_sql.yaml")
DATABASE = "concert_singer"
SINGERS = [(6,)]
CHECK_TIMEOUT_S = 120.0  # the side-effect check is not under test: a stalled machine must not fail it
EXPANSIONS = {
    "deep_parens": "(" * 200 + "1" + ")" * 200,
    "very_deep_parens": "(" * 5000 + "1" + ")" * 5000,
    "deep_case": "CASE WHEN 1 = 1 THEN " * 300 + "1" + " END" * 300,
    "deep_subqueries": "(SELECT " * 100 + "1" + ")" * 100,
    "deep_functions": "abs(" * 500 + "1" + ")" * 500,
    "long_sum": " + ".join(["1"] * 12000),
    "long_or": " OR ".join(f"age = {i}" for i in range(3000)),
    "long_string_literal": "'" + "x" * 30000 + "'",
    "medium_sum": " + ".join(["1"] * 4000),
    "long_in_list": ", ".join(str(i) for i in range(3000)),
    "deep_not": "NOT " * 2000 + "TRUE",
    "deep_unary_minus": "- " * 3000 + "1",
}


@dataclass
class Outcome:
    group: str
    sql: str
    expect: str
    status: str
    error: str | None
    wall_s: float

    def as_expected(self) -> bool:
        blocked = self.status in ("rejected", "error")
        return {
            "rejected": self.status == "rejected",
            "error": self.status == "error",
            "blocked": blocked,
            "blocked_or_ok": True,
            "ok": self.status in ("ok", "empty"),
        }[self.expect]


@dataclass
class Report:
    outcomes: list[Outcome]
    timeout_s: float
    peak_rss_kib: int
    workers_started: int
    side_effects: list[str]
    leaks: list[str]

    def summary(self) -> str:
        by_status: dict[str, int] = {}
        for outcome in self.outcomes:
            by_status[outcome.status] = by_status.get(outcome.status, 0) + 1
        worst = max(self.outcomes, key=lambda o: o.wall_s)
        statuses = ", ".join(f"{k} {v}" for k, v in sorted(by_status.items()))
        return (
            f"{len(self.outcomes)} hostile queries, clock {self.timeout_s:g} s: {statuses}; "
            f"unexpected {sum(not o.as_expected() for o in self.outcomes)}; "
            f"max wall {worst.wall_s:.2f} s (limit + 1 s = {self.timeout_s + 1:g}); "
            f"peak worker RSS {self.peak_rss_kib / 1024:.0f} MiB; workers started {self.workers_started}; "
            f"side effects {len(self.side_effects)}; leaks {len(self.leaks)}"
        )


def cases(sentinel: Path) -> list[tuple[str, str, str]]:
    """(group, sql, expect) for every query of the set, templates filled in."""
    out = []
    for group, entries in yaml.safe_load(SET.read_text()).items():
        for entry in entries:
            sql = entry["sql"].replace("{sentinel}", str(sentinel))
            for name, text in EXPANSIONS.items():
                sql = sql.replace("{" + name + "}", text)
            out.append((group, sql, entry["expect"]))
    return out


def _digest(root: Path) -> str:
    digest = hashlib.sha256()
    for dump in sorted(databases.databases(root).values(), key=lambda d: str(d.path)):
        digest.update(dump.path.read_bytes())
    return digest.hexdigest()


def _children() -> list[int]:
    mine = str(os.getpid())
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[1] == mine and fields[0] != "Z":
            found.append(int(stat.parent.name))
    return found


def _count_singers(box: Sandbox) -> SandboxResult:
    """The side-effect check, on the same worker's copies but not on the clock under test."""
    clock, box.timeout_s = box.timeout_s, CHECK_TIMEOUT_S
    try:
        return box.run(DATABASE, "SELECT count(*) FROM singer")
    finally:
        box.timeout_s = clock


def run_set(root: Path, timeout_s: float, scratch: Path) -> Report:
    """Run every case on one Sandbox; check the database, the data files and the machine after."""
    sentinel = scratch / "sentinel.out"
    before = _digest(root)
    outcomes: list[Outcome] = []
    side_effects: list[str] = []
    with Sandbox(root, timeout_s=timeout_s) as box:
        folder = box._folder
        for group, sql, expect in cases(sentinel):
            started = time.monotonic()
            result = box.run(DATABASE, sql)
            outcomes.append(Outcome(group, sql, expect, result.status, result.error, time.monotonic() - started))
            check = _count_singers(box)
            if check.rows != SINGERS:
                side_effects.append(f"singer changed after {sql[:80]!r}: {check.status} {check.rows} {check.error}")
        peak, workers = box.peak_rss_kib, box.workers_started
    peak = max(peak, box.peak_rss_kib)
    if sentinel.exists():
        side_effects.append(f"{sentinel} was written")
    if _digest(root) != before:
        side_effects.append("a database dump changed")
    leaks = [str(p) for p in Path(tempfile.gettempdir()).glob(f"{FOLDER_PREFIX}{os.getpid()}-*")]
    leaks += [f"{folder} left behind"] if folder.exists() else []
    leaks += [f"process {pid} still running" for pid in _children()]
    return Report(outcomes, timeout_s, peak, workers, side_effects, leaks)


__all__ = ["GRACE_S", "Report", "cases", "run_set"]
