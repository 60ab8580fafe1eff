"""SQL sandbox limits: the hostile set of tests/sql/adversarial_sql.yaml (66 queries of our own:
memory and time bombs, deep nesting, long expressions, system names behind CTEs, files and
engine commands) run on Spider's concert_singer under the import's default clock; prints each
query's status and wall time, then peak worker RSS, side effects and leaks.

    .venv/bin/python benchmarks/sandbox_benchmark.py [--timeout-s 5] [--quiet]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from loft_warehouse import settings
from loft_warehouse.sql.sandbox import MEMORY_CEILING_BYTES, TIMEOUT_S

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the hostile set lives beside its tests
from tests.sql.adversarial import run_set  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--timeout-s", type=float, default=TIMEOUT_S)
    parser.add_argument("--quiet", action="store_true", help="only the summary line")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        report = run_set(settings.data_dir(), args.timeout_s, Path(scratch))
    if not args.quiet:
        for o in report.outcomes:
            flag = "" if o.as_expected() else "  UNEXPECTED"
            print(f"{o.group:<19} {o.status:<9} {o.wall_s:6.2f} s  {o.sql[:60]!r}{flag}")
    print(f"private-memory ceiling {MEMORY_CEILING_BYTES / 2**20:g} MiB per worker (RLIMIT_DATA)")
    print(report.summary())
    for problem in report.side_effects + report.leaks:
        print("PROBLEM:", problem)


if __name__ == "__main__":
    main()
