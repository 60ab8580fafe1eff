"""Issue 33 item 1: the memory one hostile SQL prediction file takes to import and score.

Builds loft_128k for one SQL dataset (bm25 only) in a scratch folder, then writes a prediction
file whose every test turn returns one 16 MB string: each result sits just under the sandbox's
per-query cap, so before the per-file budget (import_sql.FileBudget) a file over SParC's test
turns took the import and its build past the machine's memory. The reported attack used
`repeat('x', 16000000)`, which the static check now refuses (not a SQLite function); `printf`
with a width is one, so it still reaches the engine. `--attack wide-result` returns 4,000,000
four-byte characters instead (16 MB, which a budget counted in characters took for 4 MB), and
`--attack long-sql` writes 10 MiB of SQL per turn (over the sandbox's length limit, refused, but
once held and landed whole: issue 60 item 2). It then runs what a
user runs in its two steps, `loft import-sql-predictions` then the dbt build its `--build` runs
(the size's scoring models, then publish), each in a child process, sampling the resident
memory of its whole process tree (the command and the sandbox workers) every 50 ms. Prints each
step's wall time, the tree's sampled peak RSS, the command's own peak (VmHWM), and how the turns
landed.

    .venv/bin/python benchmarks/hostile_import_memory.py [--dataset sparc] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
ATTACKS = {
    "16mb-result": "SELECT printf('%16000000s', 'x')",
    "wide-result": "SELECT replace(printf('%4000000s', ''), ' ', '\U0001f600')",
    "long-sql": "SELECT count(*) FROM singer WHERE " + " OR ".join(["age = 1"] * 1_048_576),
}


def _status(pid: int) -> dict[str, str]:
    try:
        lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    except OSError:
        return {}
    return dict(line.split(":", 1) for line in lines if ":" in line)


def _kib(value: str | None) -> int:
    return int(value.split()[0]) if value else 0


def _tree(root: int) -> list[int]:
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            status = _status(int(entry.name))
            if "PPid" in status:
                parents[int(entry.name)] = int(status["PPid"])
    tree, frontier = [root], [root]
    while frontier:
        frontier = [pid for pid, parent in parents.items() if parent in frontier]
        tree.extend(frontier)
    return tree


def run_sampled(command: list[str], env: dict[str, str]) -> tuple[int, float, int, int, str]:
    """rc, wall seconds, peak tree RSS (KiB, sampled), the command's own VmHWM (KiB), output."""
    started = time.monotonic()
    with tempfile.TemporaryFile("w+") as output:
        child = subprocess.Popen(command, cwd=ROOT, env=env, stdout=output, stderr=subprocess.STDOUT, text=True)
        peak_tree = peak_own = 0
        while child.poll() is None:
            peak_tree = max(peak_tree, sum(_kib(_status(pid).get("VmRSS")) for pid in _tree(child.pid)))
            peak_own = max(peak_own, _kib(_status(child.pid).get("VmHWM")))
            time.sleep(0.05)
        output.seek(0)
        return child.returncode, time.monotonic() - started, peak_tree, peak_own, output.read()


def _step(what: str, command: list[str], env: dict[str, str]) -> bool:
    """Run one step sampled, print its figures (and its output's tail if it failed); whether it passed."""
    rc, wall, tree, own, output = run_sampled(command, env)
    print(f"{what}: rc {rc}, {wall:.0f} s, peak tree RSS {tree / 1024:,.0f} MiB (sampled every 50 ms), "
          f"the command's own peak {own / 1024:,.0f} MiB")  # fmt: skip
    if rc != 0:
        print(output[-3000:])
    return rc == 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", default="sparc", choices=("spider", "sparc"))
    parser.add_argument("--attack", default="16mb-result", choices=list(ATTACKS))
    parser.add_argument("--keep", type=Path, default=None, help="work here and keep it (default: a temp folder)")
    args = parser.parse_args()
    hostile_sql = ATTACKS[args.attack]
    work = args.keep or Path(tempfile.mkdtemp(prefix="loft-hostile-"))
    work.mkdir(parents=True, exist_ok=True)
    database = work / "loft.duckdb"
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT / "python"),
        "LOFT_DUCKDB_PATH": str(database),
        "LOFT_DATASETS": f"sql/{args.dataset}",
        "LOFT_SYSTEMS": "bm25",
        "LOFT_IMPORTS_DIR": str(work / "imports"),
        "LOFT_RESPONSE_STORE": str(work / "store.sqlite"),
        "DO_NOT_TRACK": "1",
    }
    dbt = [str(BIN / "dbt"), "build", "--target-path", str(work / "target"), "--log-path", str(work / "logs"),
           "--select"]  # fmt: skip
    if not _step(f"base build of loft_128k for {args.dataset}", [*dbt, "loft_128k"], env):
        sys.exit(1)
    with duckdb.connect(str(database), read_only=True) as con:
        queries = con.sql(
            f"select qid, n_turns from loft_128k.queries where dataset = '{args.dataset}' and split = 'test' "
            "and turn = 0 order by query_rank"
        ).fetchall()
    predictions = work / "hostile.jsonl"
    predictions.write_text("".join(json.dumps({"qid": q, "num_turns": n, "sql": [hostile_sql] * n}) + "\n"
                                   for q, n in queries))  # fmt: skip
    turns = sum(n for _, n in queries)
    size = predictions.stat().st_size
    print(f"hostile file ({args.attack}): {len(queries)} queries, {turns} turns of {hostile_sql[:60]!r}... "
          f"({size:,} bytes)")  # fmt: skip
    command = [str(BIN / "loft"), "import-sql-predictions", str(predictions), "--system", "hostile", "--size", "128k",
               "--dataset", args.dataset, "--imports-dir", str(work / "imports")]  # fmt: skip
    if not _step("import", command, env):
        return
    if not _step("build (what --build runs)", [*dbt, "loft_128k__int_imported_queries+"], env):
        return
    with duckdb.connect(str(database), read_only=True) as con:
        landed = con.sql(
            "select regexp_extract(raw_text, '-- sandbox (\\w+: .{0,60})', 1) as note, count(*) "
            "from loft_128k.predictions where system = 'hostile' group by all order by 2 desc"
        ).fetchall()
    for note, count in landed:
        print(f"  {count:4d} turn(s): {note}")
    print(f"warehouse file: {database.stat().st_size / 2**20:,.0f} MiB")


if __name__ == "__main__":
    main()
