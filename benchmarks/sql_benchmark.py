"""SQL track speed: every distinct Spider/SParC dev gold query executed in DuckDB (rewritten)
and in SQLite over the same tables (total time and ratio; the sqlglot rewrite timed apart),
then 100k synthetic predictions scored with exec_acc_loft and exec_acc_strict.

    .venv/bin/python benchmarks/sql_benchmark.py [--repeats 3] [--predictions 100000]
"""

from __future__ import annotations

import argparse
import random
import time

from loft_warehouse import settings
from loft_warehouse.sql import databases, gold, rewrite
from loft_warehouse.sql.exec_accuracy import exec_acc_loft, exec_acc_strict


def distinct_queries(root) -> list[tuple[str, str]]:
    """(db_id, gold SQL) once each, over databases that have a dump."""
    known = databases.databases(root)
    seen: dict[tuple[str, str], None] = {}
    for query in gold.gold_queries(root):
        if query.db_id in known:
            seen.setdefault((query.db_id, query.gold_sql), None)
    return list(seen)


def time_engines(root, repeats: int) -> None:
    schemas = gold.schemas(root)
    queries = distinct_queries(root)
    start = time.perf_counter()
    prepared = []
    for db_id, sql in queries:
        try:
            duck_sql = rewrite.to_duckdb(sql, schemas[db_id], row_order=True)
        except rewrite.RewriteError:
            continue
        prepared.append((db_id, duck_sql, rewrite.to_sqlite(sql, schemas[db_id])))
    rewrite_s = time.perf_counter() - start
    duck = {db: databases.duckdb_database(root, db).cursor() for db in schemas}
    lite = {db: databases.sqlite_database(root, db) for db in schemas}
    timings = {"duckdb": [], "sqlite": []}
    for _ in range(repeats):
        for engine, run, index in (("duckdb", gold.run_duckdb, 1), ("sqlite", gold.run_sqlite, 2)):
            connections = duck if engine == "duckdb" else lite
            start = time.perf_counter()
            for item in prepared:
                run(connections[item[0]], item[index])
            timings[engine].append(time.perf_counter() - start)
    best = {engine: min(values) for engine, values in timings.items()}
    print(f"distinct gold queries: {len(queries)} ({len(prepared)} rewritten for DuckDB)")
    print(f"sqlglot rewrite (all queries, once): {rewrite_s:.2f} s")
    print(f"execute in DuckDB: {best['duckdb']:.3f} s  ({best['duckdb'] / len(prepared) * 1e3:.2f} ms/query)")
    print(f"execute in SQLite: {best['sqlite']:.3f} s  ({best['sqlite'] / len(prepared) * 1e3:.2f} ms/query)")
    print(f"DuckDB / SQLite time ratio: {best['duckdb'] / best['sqlite']:.1f}  (best of {repeats})")


def synthetic_pair(rng: random.Random) -> tuple[list[list], list[list], bool]:
    """A gold result of 1-10 rows x 1-3 columns and a prediction that is right about half the time."""
    n_rows, n_cols = rng.randint(1, 10), rng.randint(1, 3)
    gold_rows = [
        [
            rng.choice([rng.randint(0, 99), round(rng.random() * 100, 3), f"name {rng.randint(0, 30)}"])
            for _ in range(n_cols)
        ]
        for _ in range(n_rows)
    ]
    predicted = [[str(v) if rng.random() < 0.3 else v for v in row] for row in gold_rows]
    rng.shuffle(predicted)
    if rng.random() < 0.5:
        predicted[0][0] = "wrong"
    return gold_rows, predicted, rng.random() < 0.2


def time_scoring(n: int) -> None:
    rng = random.Random(20240612)
    pairs = [synthetic_pair(rng) for _ in range(n)]
    for name, score in (
        ("exec_acc_loft", lambda g, p, o: exec_acc_loft(g, p)),
        ("exec_acc_strict", lambda g, p, o: exec_acc_strict(g, p, ordered=o)),
    ):
        start = time.perf_counter()
        total = sum(score(g, p, o) for g, p, o in pairs)
        elapsed = time.perf_counter() - start
        print(f"{name}: {n} predictions in {elapsed:.2f} s ({n / elapsed:,.0f}/s), mean {total / n:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--predictions", type=int, default=100_000)
    args = parser.parse_args()
    root = settings.data_dir()
    time_engines(root, args.repeats)
    time_scoring(args.predictions)


if __name__ == "__main__":
    main()
