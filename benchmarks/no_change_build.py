"""How long `dbt build --select loft_128k` takes when nothing changed, and what the warehouse
holds on disk: the figure the README quotes.

Builds the selection once into --database if it does not exist yet (not timed), then runs the
same build --runs times and prints each run's wall time and dbt's own count of nodes, then the
sizes of the published file, the working copy beside it (`<file>.build`) and the step cache.

    .venv/bin/python benchmarks/no_change_build.py --database /tmp/bench/loft.duckdb --runs 3
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

from loft_warehouse import frame_cache

PROJECT = Path(__file__).resolve().parents[1]
DBT = str(Path(sys.executable).with_name("dbt"))
SUMMARY = re.compile(r"Done\. (PASS=\d+ .*)")


def build(selection: str, database: Path) -> tuple[float, str]:
    """One `dbt build` of the selection into `database` (published as a user's build is): seconds, dbt's summary."""
    env = {**os.environ, "LOFT_DUCKDB_PATH": str(database), "DO_NOT_TRACK": "1"}
    env.pop("LOFT_BUILD_IN_PLACE", None)
    started = time.perf_counter()
    done = subprocess.run([DBT, "build", "--select", selection], cwd=PROJECT, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"dbt build failed (rc {done.returncode}):\n{done.stdout[-3000:]}")
    found = SUMMARY.search(done.stdout)
    return seconds, found.group(1) if found else "?"


def mib(path: Path) -> float:
    """Size of a file, or of every file under a folder, in MiB (0 when absent)."""
    if path.is_dir():
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 2**20
    return path.stat().st_size / 2**20 if path.exists() else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database", type=Path, default=PROJECT / "loft.duckdb")
    parser.add_argument("--select", default="loft_128k")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    database = args.database.resolve()
    if not database.exists():
        seconds, summary = build(args.select, database)
        print(f"first build (not timed as a rebuild): {seconds:.1f} s, {summary}")
    times = []
    for run in range(1, args.runs + 1):
        seconds, summary = build(args.select, database)
        times.append(seconds)
        print(f"no-change build {run}: {seconds:.1f} s, {summary}")
    print(f"median {statistics.median(times):.1f} s over {len(times)} run(s)")
    cache = frame_cache.cache_dir()
    working = database.with_name(database.name + ".build")
    print(f"disk: published {database} {mib(database):.1f} MiB; working copy {working.name} {mib(working):.1f} MiB")
    print(f"      step cache {cache} {mib(cache):.1f} MiB")


if __name__ == "__main__":
    main()
