"""Multi-stage methods with a real local model, end to end (prints figures; not a test).

Builds loft_32k and runs the `local` Gemma-3-270M model (llama-cpp-python, the `local` extra) on
a small seeded slice (var `limit`: the first N dev and N test questions) of
- retrieve-then-read on NQ RAG (bm25's top-k passages, then the reader prompt), and
- in-context retrieval on R&R NQ documents of 10k tokens (call 1 picks pages, call 2 answers),
then prints each method's scores and, per stage, the calls, tokens (cached among them), model
seconds and cost from `responses`. Weak model, real numbers.

    .venv/bin/python benchmarks/methods_benchmark.py [--limit 3] [--k 5] [--work DIR]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import duckdb
from positional_benchmark import LOCAL, build, local_systems


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=3, help="first N dev and N test questions")
    parser.add_argument("--k", type=int, default=5, help="passages retrieve-then-read reads")
    parser.add_argument("--work", type=Path, default=None, help="folder for the warehouse and the store")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="methods-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    variables = {
        "datasets": "rag/nq,rr/nq",
        "methods": ["cic", f"rag_top{args.k}", "icr"],
        "rr_lengths": [10000],
        "limit": args.limit,
        "systems": [LOCAL],
    }
    # The CiC prompts of NQ at 32k overflow the model's 32k window in its own tokens; the slice
    # is the two methods, read on the default variant of NQ RAG and on R&R's d=10k documents.
    seconds = build(work, "loft_32k", variables, local_systems(work, ["default", "d10k_x0k", "d10k_x10k"]))
    with duckdb.connect(str(work / "loft.duckdb"), read_only=True) as con:
        stages = con.sql(
            "select task || '/' || dataset, method, stage, count(*) filter (where status = 'ok'), count(*), "
            "sum(input_tokens), sum(cached_tokens), sum(output_tokens), sum(latency_s), sum(cost_usd) "
            "from loft_32k.responses group by all order by all"
        ).fetchall()
        statuses = con.sql(
            "select task || '/' || dataset, method, stage, status, count(*) from loft_32k.predictions "
            "group by all order by all"
        ).fetchall()
        scores = con.sql(
            "select task || '/' || dataset, method, variant, split, metric_name, n, n_unanswered, mean "
            "from loft_32k.metrics where is_primary order by all"
        ).fetchall()
    print(f"work dir: {work}")
    print(f"dbt build loft_32k ({', '.join(variables['methods'])}, limit {args.limit}, {LOCAL}): {seconds:.0f} s")
    columns = f"{'ok/calls':>9} {'input tok':>10} {'cached':>8} {'output':>7} {'model s':>8} {'cost $':>7}"
    print(f"{'dataset':<12} {'method':<10} {'stage':>5} {columns}")
    for dataset, method, stage, ok, calls, tokens, cached, output, latency, cost in stages:
        print(
            f"{dataset:<12} {method:<10} {stage:>5} {f'{ok}/{calls}':>9} {tokens or 0:>10,} {cached or 0:>8,} "
            f"{output or 0:>7,} {latency or 0:>8.1f} {cost or 0:>7.4f}"
        )
    print(f"{'dataset':<12} {'method':<10} {'stage':>5} {'status':<18} {'predictions':>11}")
    for dataset, method, stage, status, count in statuses:
        print(f"{dataset:<12} {method:<10} {stage:>5} {status:<18} {count:>11}")
    header = f"{'dataset':<12} {'method':<10} {'variant':<10} {'split':<5} {'metric':<22}"
    print(f"{header} {'n':>3} {'unans':>5} {'mean':>6}")
    for dataset, method, variant, split, metric, n, unanswered, mean in scores:
        print(f"{dataset:<12} {method:<10} {variant:<10} {split:<5} {metric:<22} {n:>3} {unanswered:>5} {mean:>6.3f}")


if __name__ == "__main__":
    main()
