"""The Lost in the Middle curves of a real local model, measured end to end (prints figures).

Builds loft_32k with the positional studies (dbt, as a user would) and runs the `local`
Gemma-3-270M model (llama-cpp-python, the `local` extra) on a seeded slice: the first N dev and N
test questions (var `limit`), multi-document QA with k documents and the gold at the paper's
positions, and key-value retrieval with the queried key at five positions, plus the closed-book
and oracle references. Prints position_curves (mean and 95% interval per position, per split)
and the timings. Weak model, real numbers: the slice is not tuned.

    .venv/bin/python benchmarks/positional_benchmark.py [--limit 10] [--documents 20] [--work DIR]
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
import yaml

from loft_warehouse.design import Design
from loft_warehouse.inference.systems import DEFAULT_SYSTEMS_FILE
from loft_warehouse.settings import PROJECT_ROOT
from loft_warehouse.studies.sweeps import kv_positions, litm_positions

LOCAL = "gemma3-270m-local"


def local_systems(work: Path, variants: list[str]) -> Path:
    """The shipped local system, scoped to the slice's variants."""
    shipped = yaml.safe_load(DEFAULT_SYSTEMS_FILE.read_text(encoding="utf-8"))
    system = next(s for s in shipped["systems"] if s["name"] == LOCAL)
    path = work / "systems.yaml"
    path.write_text(yaml.safe_dump({"defaults": shipped["defaults"], "systems": [{**system, "variants": variants}]}))
    return path


def build(work: Path, selection: str, variables: dict, systems: Path) -> float:
    """dbt build of loft_32k into work/, returning the wall seconds."""
    env = {
        "LOFT_DUCKDB_PATH": str(work / "loft.duckdb"),
        "LOFT_RESPONSE_STORE": str(work / "store.sqlite"),
        "LOFT_SYSTEMS_FILE": str(systems),
        "DO_NOT_TRACK": "1",
    }
    dbt = str(Path(sys.executable).with_name("dbt"))
    started = time.perf_counter()
    result = subprocess.run(
        [dbt, "build", "--select", selection, "--vars", json.dumps(variables)]
        + ["--target-path", str(work / "target"), "--log-path", str(work / "logs")],
        cwd=PROJECT_ROOT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        print(result.stdout[-4000:], result.stderr[-4000:])
        raise SystemExit("dbt build failed")
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=10, help="first N dev and N test questions")
    parser.add_argument("--documents", type=int, default=20, help="documents per multi-document prompt")
    parser.add_argument("--work", type=Path, default=None, help="folder for the warehouse and the store")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="litm-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    design = Design()
    variants = ["closed_book", "oracle"]
    variants += [f"docs{args.documents}_gold{i}" for i in litm_positions(args.documents, design)]
    variants += [f"keys75_gold{i}" for i in kv_positions(75, design)]
    variables = {"datasets": "litm/*", "litm_documents": [args.documents], "limit": args.limit, "systems": [LOCAL]}
    seconds = build(work, "loft_32k", variables, local_systems(work, variants))
    with duckdb.connect(str(work / "loft.duckdb"), read_only=True) as con:
        calls = con.sql(
            "select count(*), sum(input_tokens), sum(cached_tokens), sum(output_tokens), sum(latency_s) "
            "from loft_32k.responses where status = 'ok'"
        ).fetchone()
        curves = con.sql(
            "select experiment, position, split, n, mean, ci_low, ci_high from loft_32k.position_curves "
            "where system = ? order by experiment, split, position nulls first",
            params=[LOCAL],
        ).fetchall()
    n, input_tokens, cached, output, latency = calls
    print(f"work dir: {work}")
    print(f"dbt build loft_32k (litm/*, limit {args.limit}, {LOCAL}): {seconds:.0f} s")
    print(f"responses ok: {n}; input tokens {input_tokens:,} (cached {cached:,}); output {output:,}; "
          f"model seconds {latency:.0f} ({latency / max(n, 1):.2f} s per call)")  # fmt: skip
    print(f"{'experiment':<28} {'position':>8} {'split':<5} {'n':>3} {'mean':>6}  95% interval")
    for experiment, position, split, count, mean, low, high in curves:
        where = "-" if position is None else f"{position:g}"
        print(f"{experiment:<28} {where:>8} {split:<5} {count:>3} {mean:>6.3f}  [{low:.3f}, {high:.3f}]")


if __name__ == "__main__":
    main()
