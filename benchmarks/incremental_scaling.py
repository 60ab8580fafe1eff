"""What adding one small run costs as a warehouse grows: the user's path (`loft
import-predictions`, then the dbt build of the import's downstream models) for 1,000 predictions
of a new system, into warehouses that already hold N scored rows of another system, and a
rebuild with nothing changed after it.

    .venv/bin/python benchmarks/incremental_scaling.py --base loft.duckdb --stored 0 10000 100000

--base is a built warehouse (`make build`); each point works on its own copy. The stored rows
are an imported retrieval run over a seeded set of N single-turn queries (LOFT's file formats,
as benchmarks/vs_loft.py writes them); the new system answers the first 1,000 of them, imported
as a dataset of its own (a run owes every query of its dataset, so the same dataset would make
the new run N turns long, 1,000 answered and the rest scored as missing). Prints,
per N: the seconds to land and to build the new system's import, that build's ratio to the
one into the warehouse with no stored row, and the no-change rebuild. `--work DIR --again` times
the points an earlier run kept in DIR anew (the new system's files removed and built away first),
without growing them again: a 1M point takes about 25 minutes to grow.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from vs_loft import SEED, write_retrieval  # noqa: E402

BIN = Path(sys.executable).parent
ADDED = 1_000


NODE_TIME = re.compile(r"\d+ of \d+ (?:OK created \S+ \S+ model|PASS) (\S+) .*? in (\d+\.\d+)s\]")
SLOWEST: dict[str, str] = {}


def _run(argv: list[str], env: dict[str, str]) -> float:
    """Seconds one command took (its slowest dbt nodes kept in SLOWEST under the command's
    first words); the script stops with its output if it fails."""
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{' '.join(argv[:3])} failed (rc {done.returncode}):\n{(done.stdout + done.stderr)[-3000:]}")
    nodes = sorted(((float(s), name) for name, s in NODE_TIME.findall(done.stdout)), reverse=True)[:4]
    SLOWEST[Path(argv[0]).name] = ", ".join(f"{name.split('.')[-1]} {s:.1f} s" for s, name in nodes)
    return time.perf_counter() - started


def _import(env: dict[str, str], predictions: Path, queries: Path, system: str, dataset: str) -> float:
    return _run(
        [str(BIN / "loft"), "import-predictions", str(predictions), "--queries", str(queries),
         "--system", system, "--size", "128k", "--task", "retrieval", "--dataset", dataset],
        env,
    )  # fmt: skip


def _build(env: dict[str, str], work: Path, name: str) -> float:
    """One timed build of the import's downstream models (its run_results.json kept as NAME.json
    in the point's folder, for a per-node comparison of two points)."""
    seconds = _run(
        [str(BIN / "dbt"), "build", "--select", "loft_128k__int_imported_queries+",
         "--target-path", str(work / "target"), "--log-path", str(work / "logs")],
        env,
    )  # fmt: skip
    shutil.copy(work / "target" / "run_results.json", work / f"{name}.json")
    return seconds


def node_seconds(work: Path, name: str) -> float:
    """The seconds a kept build spent in its nodes (run_results.json): the part of a build that
    can grow with the store, without dbt's start, parse and artifact writing, which do not."""
    results = json.loads((work / f"{name}.json").read_text(encoding="utf-8"))["results"]
    return sum(result["execution_time"] for result in results)


def _environment(work: Path) -> dict[str, str]:
    env = {
        **os.environ,
        "LOFT_DUCKDB_PATH": str(work / "loft.duckdb"),
        "LOFT_IMPORTS_DIR": str(work / "imports"),
        "DO_NOT_TRACK": "1",
    }
    env.pop("LOFT_BUILD_IN_PLACE", None)
    return env


def point(base: Path, stored: int, folder: Path) -> dict[str, float]:
    """One warehouse holding `stored` scored rows: land and build the new system's 1,000 lines,
    then rebuild with nothing changed."""
    work = folder / f"stored-{stored}"
    work.mkdir()
    shutil.copy(base, work / "loft.duckdb")
    env = _environment(work)
    # dbt parses the project once per target folder; that first parse is not a build's cost.
    _run([str(BIN / "dbt"), "parse", "--target-path", str(work / "target"), "--log-path", str(work / "logs")], env)
    write_retrieval(work, max(stored, ADDED), SEED)
    for name in ("preds", "queries"):
        lines = (work / f"{name}.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
        (work / f"added_{name}.jsonl").write_text("".join(lines[:ADDED]), encoding="utf-8")
    if stored:
        _import(env, work / "preds.jsonl", work / "queries.jsonl", "stored-run", "scaling")
        _build(env, work, "stored")
    return _time_adding(env, work, stored)


def again(stored: int, folder: Path) -> dict[str, float]:
    """A point an earlier run kept (--work): remove the new system's landed files and build
    (not timed), so the warehouse holds the stored rows alone again, then time adding it anew."""
    work = folder / f"stored-{stored}"
    if not (work / "loft.duckdb").is_file():
        sys.exit(f"no kept point at {work}: run without --again first, with the same --work")
    env = _environment(work)
    landed = work / "imports" / "128k"
    for path in [*landed.glob("added-run__*.parquet"), *landed.glob("queries/*__scaling_added__*.parquet")]:
        path.unlink()
    _build(env, work, "removed")
    return _time_adding(env, work, stored)


def _time_adding(env: dict[str, str], work: Path, stored: int) -> dict[str, float]:
    landing = _import(env, work / "added_preds.jsonl", work / "added_queries.jsonl", "added-run", "scaling_added")
    build = _build(env, work, "adding")
    print(f"#   stored {stored:,}, adding: slowest nodes {SLOWEST['dbt']}", flush=True)
    no_change = _build(env, work, "no_change")
    print(f"#   stored {stored:,}, no change: slowest nodes {SLOWEST['dbt']}", flush=True)
    return {"land": landing, "build": build, "nodes": node_seconds(work, "adding"), "no_change": no_change}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", type=Path, default=ROOT / "loft.duckdb", help="a built warehouse (make build)")
    parser.add_argument("--stored", type=int, nargs="+", default=[0, 10_000, 100_000])
    parser.add_argument("--work", type=Path, help="keep each point's warehouse here (default: a temporary folder)")
    parser.add_argument(
        "--again", action="store_true", help="time the points kept in --work anew, without growing them again"
    )
    args = parser.parse_args()
    if args.again and not args.work:
        sys.exit("--again needs --work, the folder an earlier run kept its points in")
    if not args.again and not args.base.is_file():
        sys.exit(f"no built warehouse at {args.base}: run `make build` first, or pass --base")
    sizes = sorted(set(args.stored) | {0})
    results = {}
    with tempfile.TemporaryDirectory(prefix="loft-scaling-") as folder:
        work = args.work.resolve() if args.work else Path(folder)
        work.mkdir(parents=True, exist_ok=True)
        for stored in sizes:
            results[stored] = again(stored, work) if args.again else point(args.base.resolve(), stored, work)
            figures = results[stored]
            print(
                f"stored {stored:>9,}: land {figures['land']:6.1f} s, build {figures['build']:6.1f} s, "
                f"no-change rebuild {figures['no_change']:6.1f} s",
                flush=True,
            )
    empty = results[0]
    print(f"\nadding {ADDED:,} predictions of a new system (dbt build of the import's downstream models;")
    print("nodes: the seconds its nodes took, dbt's own start, parse and artifacts left out):")
    print(f"{'stored scored rows':>20} {'build s':>9} {'/ empty':>8} {'nodes s':>9} {'/ empty':>8} {'no-change s':>12}")
    for stored, figures in results.items():
        print(
            f"{stored:>20,} {figures['build']:>9.1f} {figures['build'] / empty['build']:>7.2f}x "
            f"{figures['nodes']:>9.1f} {figures['nodes'] / empty['nodes']:>7.2f}x {figures['no_change']:>12.1f}"
        )


if __name__ == "__main__":
    main()
