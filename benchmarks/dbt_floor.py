"""dbt's own floor for a selection on this machine: what building as many nodes costs before any
of the warehouse's work.

For each --select, the script counts the selection's models and data tests (`dbt ls`), writes a
scratch project with as many one-row table models (a chain, as the warehouse's models depend on
one another) and as many data tests on them (not_null, unique, accepted_values), and times
`dbt build` of it --runs times with the same dbt and dbt-duckdb, one thread, as the warehouse
builds. No data, no hook, no Python model, no plugin, no publish: a build of the warehouse's
selection cannot be faster than this, so a target below it is one dbt cannot meet here.

    .venv/bin/python benchmarks/dbt_floor.py --select loft_128k loft_128k__int_imported_queries+ --runs 3
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
DBT = str(Path(sys.executable).with_name("dbt"))
# Each kind of data test as schema.yml lists it under a column.
TESTS = (
    "          - not_null",
    "          - unique",
    "          - accepted_values:\n              arguments:\n                values: [1]",
)
ENV = {**os.environ, "DO_NOT_TRACK": "1"}


def node_counts(selection: str) -> Counter[str]:
    """The selection's models and data tests, by resource type, as dbt lists them."""
    listed = subprocess.run(
        [DBT, "--quiet", "ls", "--select", selection, "--resource-type", "model", "test",
         "--output", "json", "--output-keys", "resource_type"],
        cwd=PROJECT, env=ENV, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return Counter(json.loads(line)["resource_type"] for line in listed.stdout.splitlines() if line.startswith("{"))


def write_project(folder: Path, models: int, tests: int) -> None:
    """A project of `models` chained one-row tables and `tests` data tests spread over them."""
    if tests > models * len(TESTS):
        sys.exit(f"{tests} tests do not fit on {models} models ({len(TESTS)} kinds of test each)")
    (folder / "models").mkdir(parents=True)
    (folder / "dbt_project.yml").write_text(
        "name: floor\nversion: '1.0'\nprofile: floor\nmodels:\n  floor:\n    +materialized: table\n"
    )
    (folder / "profiles.yml").write_text(
        "floor:\n  target: local\n  outputs:\n    local:\n"
        f"      type: duckdb\n      path: {folder / 'floor.duckdb'}\n      threads: 1\n"
    )
    lines = ["version: 2", "models:"]
    for index in range(models):
        body = "select 1 as id" if index == 0 else f"select id from {{{{ ref('m{index - 1}') }}}}"
        (folder / "models" / f"m{index}.sql").write_text(body + "\n")
        kinds = [test for k, test in enumerate(TESTS) if k * models + index < tests]
        lines += [f"  - name: m{index}", "    columns:", "      - name: id"]
        if kinds:
            lines += ["        data_tests:", *kinds]
    (folder / "models" / "schema.yml").write_text("\n".join(lines) + "\n")


def timed_build(folder: Path) -> float:
    """Seconds of one `dbt build` of the scratch project, from the command to its exit."""
    started = time.perf_counter()
    done = subprocess.run(
        [DBT, "build", "--project-dir", str(folder), "--profiles-dir", str(folder)],
        cwd=folder, env=ENV, capture_output=True, text=True,
    )  # fmt: skip
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"the scratch build failed (rc {done.returncode}):\n{done.stdout[-3000:]}")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--select", nargs="+", default=["loft_128k"], help="the warehouse selections to match")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    for selection in args.select:
        counts = node_counts(selection)
        models, tests = counts["model"], counts["test"]
        with tempfile.TemporaryDirectory(prefix="dbt-floor-") as scratch:
            folder = Path(scratch)
            write_project(folder, models, tests)
            timed_build(folder)  # the first build parses the project and creates the file
            runs = [timed_build(folder) for _ in range(args.runs)]
        shown = ", ".join(f"{seconds:.1f}" for seconds in runs)
        print(
            f"{selection}: {models} models + {tests} data tests; a trivial project of as many nodes "
            f"builds in {shown} s (median {statistics.median(runs):.1f} s)"
        )


if __name__ == "__main__":
    main()
