"""How fast the scoring SQL is: parse + score + aggregate synthetic predictions, and peak memory.

Builds upstream-shaped tables in an in-memory DuckDB (responses with raw generations, prompts,
shown-ID maps, queries), then runs the same macros the dbt models render, step by step as the
tests build them (tests/scoring/sqlkit.build): prediction rows, parsing with the registered
Python functions, predictions (ID mapping), turn scores, the scores view, metrics. Defaults: 1,000,000
retrieval predictions (100 systems x 10,000 queries, 5 IDs each over a 1,000-document corpus)
and 100,000 multi-answer RAG predictions (QUEST-style, 3-5 golds, 2-6 answers, scored with the
one-to-one assignment).

    .venv/bin/python benchmarks/scoring_benchmark.py [--retrieval N] [--rag N] [--threads T]
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

import duckdb

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.scoring.sqlkit import build, connect  # noqa: E402

SYSTEMS = 100
CORPUS = 1_000
VOCABULARY = 400


def _retrieval(con: duckdb.DuckDBPyConnection, n: int) -> None:
    n_queries = max(1, n // SYSTEMS)
    con.execute(f"""
        insert into prompt_doc_ids (task, dataset, corpus_id, variant, shown_id, pid)
        select 'retrieval', 'synth', 'synth', 'default', i::varchar, 'doc' || i from range({CORPUS}) t(i);
        insert into corpus (task, dataset, corpus_id, doc_id, pid)
        select 'retrieval', 'synth', 'synth', i, 'doc' || i from range({CORPUS}) t(i);
        insert into stg_datasets (task, dataset, max_gold) values ('retrieval', 'synth', 2);
        insert into queries (task, dataset, corpus_id, split, qid, turn, n_turns, gold, gold_pids)
        select 'retrieval', 'synth', 'synth', 'test', 'q' || q, 0, 1, '[]',
               ['doc' || (q * 7 % {CORPUS}), 'doc' || (q * 13 % {CORPUS})]
        from range({n_queries}) t(q);
        insert into prompts (prompt_id, task, dataset, corpus_id, variant, split, qid, turn, n_turns)
        select 'retrieval/synth/synth/default/q' || q || '/0', 'retrieval', 'synth', 'synth', 'default',
               'test', 'q' || q, 0, 1
        from range({n_queries}) t(q);
        insert into responses (system, prompt_id, task, dataset, corpus_id, variant, split, qid, turn, status,
                               raw_text)
        select 's' || s, 'retrieval/synth/synth/default/q' || q || '/0', 'retrieval', 'synth', 'synth',
               'default', 'test', 'q' || q, 0, 'ok',
               'TITLE: x | ID: ' || (q * 7 % {CORPUS}) || chr(10) || 'Final Answer: ['
               || list_aggregate(list_transform(range(5), lambda j: '''' || ((q * 7 + s * j * 3) % ({CORPUS} + 20))
                                                                   || ''''), 'string_agg', ', ')
               || ']'
        from range({n_queries}) t(q), range({SYSTEMS}) u(s);
    """)


def _rag(con: duckdb.DuckDBPyConnection, n: int) -> None:
    systems = 10
    n_queries = max(1, n // systems)
    con.execute(f"""
        insert into stg_datasets (task, dataset, is_multi_answer) values ('rag', 'quest', true);
        insert into queries (task, dataset, corpus_id, split, qid, turn, n_turns, gold)
        select 'rag', 'quest', 'quest', 'test', 'm' || q, 0, 1,
               to_json(list_transform(range(3 + q % 3), lambda j: 'Entity ' || ((q + j * 37) % {VOCABULARY})))
        from range({n_queries}) t(q);
        insert into prompts (prompt_id, task, dataset, corpus_id, variant, split, qid, turn, n_turns)
        select 'rag/quest/quest/default/m' || q || '/0', 'rag', 'quest', 'quest', 'default', 'test', 'm' || q, 0, 1
        from range({n_queries}) t(q);
        insert into responses (system, prompt_id, task, dataset, corpus_id, variant, split, qid, turn, status,
                               raw_text)
        select 'r' || s, 'rag/quest/quest/default/m' || q || '/0', 'rag', 'quest', 'quest', 'default', 'test',
               'm' || q, 0, 'ok',
               'Final Answer: [' || list_aggregate(list_transform(range(2 + (q + s) % 5),
                   lambda j: '''the entity ' || ((q + j * 37 + s * (j % 2)) % {VOCABULARY}) || ''''),
                   'string_agg', ', ') || ']'
        from range({n_queries}) t(q), range({systems}) u(s);
    """)


def run(label: str, con: duckdb.DuckDBPyConnection) -> None:
    timings = build(con, seed=1, size="bench")
    n_predictions = con.sql("select count(*) from predictions").fetchone()[0]
    n_scores = con.sql("select count(*) from scores").fetchone()[0]
    total = sum(timings.values())
    print(
        f"{label}: {n_predictions:,} predictions -> {n_scores:,} score rows in {total:.1f} s "
        f"({n_predictions / total:,.0f} predictions/s)"
    )
    for step, seconds in timings.items():
        print(f"    {step:<20} {seconds:8.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--retrieval", type=int, default=1_000_000)
    parser.add_argument("--rag", type=int, default=100_000)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    for label, fill, n in (("retrieval", _retrieval, args.retrieval), ("rag multi-answer", _rag, args.rag)):
        con = connect()
        con.execute(f"set threads = {args.threads}")
        start = time.perf_counter()
        fill(con, n)
        print(f"[{label}] synthetic tables built in {time.perf_counter() - start:.1f} s")
        run(label, con)
        con.close()
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak resident memory of the process: {peak_mib:,.0f} MiB (DuckDB runs in-process)")


if __name__ == "__main__":
    main()
