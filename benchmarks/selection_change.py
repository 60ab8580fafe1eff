"""What a change of selection costs: `loft build --select loft_128k` with nothing changed, against
the same build with another selection (`datasets: [retrieval/nq]`, `limit: 3`, `systems: [bm25]`),
alternating, and whether dbt reused its parse; then `loft import-predictions --build` of an
80-line ArguAna file, and LOFT's own `run_evaluation.py` on the same file when --loft is given.

The selection keys reach the models at run time (loft_warehouse.current_build), not as dbt vars,
so none of these builds should need dbt's full parse ("Unable to do partial parsing").

    .venv/bin/python benchmarks/selection_change.py --database /tmp/bench/loft.duckdb --rounds 3 \
        [--loft LOFT_CHECKOUT --loft-python VENV/bin/python]
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
from pathlib import Path

from loft_warehouse.readers import read_jsonl
from loft_warehouse.settings import data_dir

PROJECT = Path(__file__).resolve().parents[1]
LOFT = str(Path(sys.executable).with_name("loft"))
FULL_PARSE = "Unable to do partial parsing"
SELECTIONS = ["{datasets: [retrieval/nq]}", "{limit: 3}", "{systems: [bm25]}"]


def run(argv: list[str], env: dict[str, str]) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=PROJECT, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed (rc {done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-2000:]}")
    return seconds, done.stdout + done.stderr


def predictions(folder: Path) -> tuple[Path, Path]:
    """The 80-line ArguAna 128k test file (50 right, 30 wrong; each line with the `metadata` mapping
    LOFT's retrieval evaluator reads) and LOFT's answer file: those 80 of the release's test queries."""
    release = data_dir() / "loft/retrieval/arguana/128k/test_queries.jsonl"
    queries = [record for _, record in read_jsonl(release)]
    other = queries[0]["answers"][0][0]
    lines = []
    for i, record in enumerate(queries[:80]):
        gold = record["answers"][0][0]
        answer = [gold, other] if i < 50 else [other if gold != other else queries[1]["answers"][0][0]]
        lines.append(json.dumps({"qid": record["qid"], "num_turns": 1, "model_outputs": [answer], "metadata": {}}))
    path = folder / "arguana_80.jsonl"
    path.write_text("\n".join(lines) + "\n")
    # LOFT's retrieval evaluator fails on a query the file does not answer (its metadata is None).
    answers = folder / "arguana_80_queries.jsonl"
    answers.write_text("".join(json.dumps(record) + "\n" for record in queries[:80]))
    return path, answers


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--loft", type=Path, default=None, help="a google-deepmind/loft checkout")
    parser.add_argument("--loft-python", default=sys.executable)
    parser.add_argument("--import-only", action="store_true", help="time only the import (on a built --database)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="loft-selection-"))
    env = {**os.environ, "LOFT_DUCKDB_PATH": str(args.database.resolve()), "LOFT_IMPORTS_DIR": str(work / "imports"),
           "DO_NOT_TRACK": "1"}  # fmt: skip
    env.pop("LOFT_BUILD_IN_PLACE", None)
    if not args.import_only:
        selection_rounds(args.rounds, env)
    import_rounds(args.rounds, work, env, args.loft, args.loft_python)


def selection_rounds(rounds: int, env: dict[str, str]) -> None:
    """No-change builds alternating with builds of another selection."""
    seconds, _ = run([LOFT, "build", "--select", "loft_128k"], env)
    print(f"first build (not timed): {seconds:.1f} s")
    same, changed, parsed = [], [], 0
    for round_ in range(rounds):
        for selection in SELECTIONS:
            seconds, _ = run([LOFT, "build", "--select", "loft_128k"], env)
            same.append(seconds)
            seconds, out = run([LOFT, "build", "--select", "loft_128k", "--vars", selection], env)
            changed.append(seconds)
            parsed += FULL_PARSE in out
            print(f"round {round_ + 1}: no change {same[-1]:.1f} s, {selection} {changed[-1]:.1f} s"
                  f"{' (full parse)' if FULL_PARSE in out else ''}")  # fmt: skip
    ratio = statistics.median(changed) / statistics.median(same)
    print(f"no-change build: median {statistics.median(same):.1f} s; changed selection: median "
          f"{statistics.median(changed):.1f} s; ratio {ratio:.2f} (target <= 1.3); full parses: {parsed}")  # fmt: skip


def import_rounds(rounds: int, work: Path, env: dict[str, str], loft: Path | None, loft_python: str) -> None:
    """`loft import-predictions --build` of the 80-line file, alternating with LOFT's evaluator."""
    preds, answers = predictions(work)
    imports, loft_times = [], []
    for _ in range(rounds):
        seconds, _ = run([LOFT, "import-predictions", str(preds), "--system", "bench-import", "--size", "128k",
                          "--task", "retrieval", "--dataset", "arguana", "--build"], env)  # fmt: skip
        imports.append(seconds)
        if loft is not None:
            started = time.perf_counter()
            subprocess.run([loft_python, "run_evaluation.py", f"--answer_file_path={answers}",
                            f"--pred_file_path={preds}", "--task_type=retrieval"],
                           cwd=loft, check=True, capture_output=True)  # fmt: skip
            loft_times.append(time.perf_counter() - started)
    line = f"import-predictions --build of 80 lines: median {statistics.median(imports):.1f} s"
    if loft_times:
        line += f"; LOFT run_evaluation.py: median {statistics.median(loft_times):.2f} s; ratio "
        line += f"{statistics.median(imports) / statistics.median(loft_times):.1f} (target <= 10)"
    print(line)


if __name__ == "__main__":
    main()
