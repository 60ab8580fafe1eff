"""Planted vs recovered, per paper-table mart, on a larger slice than the tests use.

A planted system answers each turn right with a probability set by the turn's features (prompt
variant, benchmark size, gold SQL operator, few-shot count, method, retrieval hit), drawn with a
seeded generator, so each cell's planted value is known and its estimate is not exact. Each
mart's macro (the SQL the dbt models render) runs over those scores, and the script prints, per
cell, the planted value, the recovered mean or difference, its 95% interval, and whether the
interval covers the planted value; the last line counts the cells covered (about 95% expected).

    .venv/bin/python benchmarks/planted_effects.py [--turns 2000] [--seed 7]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import duckdb

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.scoring.sqlkit import model_sql, scores_table  # noqa: E402

from loft_warehouse.scoring.duckdb_functions import register  # noqa: E402
from loft_warehouse.settings import PROJECT_ROOT  # noqa: E402

SEEDS = PROJECT_ROOT / "seeds"
Row = tuple[str, str, float, float, float, float, int]


def _draws(rng: random.Random, n: int, p: float) -> list[float]:
    return [1.0 if rng.random() < p else 0.0 for _ in range(n)]


def _turns(rng: random.Random, n: int, p: float, **fields: Any) -> list[dict[str, Any]]:
    return [{**fields, "qid": f"q{q}", "value": v} for q, v in enumerate(_draws(rng, n, p))]


def _paper(con: duckdb.DuckDBPyConnection, name: str) -> None:
    con.execute(
        f"create table {name} as select * from read_csv('{SEEDS / name}.csv', header = true, auto_detect = true)"
    )


def ablations(rng: random.Random, n: int, seed: int) -> Iterable[Row]:
    """LOFT Table 4: default 0.80, no_cot 0.65 (a drop of 0.15), generic_instruction 0.80 (none)."""
    con = register(duckdb.connect())
    planted = {"default": 0.80, "no_cot": 0.65, "generic_instruction": 0.80}
    rows = []
    for variant, p in planted.items():
        rows += _turns(
            rng, n, p, system="planted", task="retrieval", dataset="arguana", variant=variant, metric="recall@1"
        )
    scores_table(con, rows)
    con.execute(f"create table metrics as {model_sql('metrics', seed=seed)}")
    con.execute(f"create table comparisons as {model_sql('paired_comparisons', seed=seed)}")
    _paper(con, "paper_table4")
    con.execute("create table datasets as select 'retrieval' as task, 'arguana' as dataset")
    sql = model_sql("ablations", paired_comparisons="comparisons", stg_datasets="datasets")
    for variant, mean, low, high, diff, dlow, dhigh, count in con.sql(
        f"select ablation, mean, ci_low, ci_high, difference_from_best, difference_ci_low, difference_ci_high, n "
        f"from ({sql}) where dataset = 'arguana' and run_status = 'scored' order by column_order"
    ).fetchall():
        yield "ablations", f"arguana {variant} mean", planted[variant], mean, low, high, count
        if diff is not None:
            yield (
                "ablations",
                f"arguana {variant} - default",
                planted[variant] - planted["default"],
                diff,
                dlow,
                dhigh,
                count,
            )


def operators(rng: random.Random, n: int, seed: int) -> Iterable[Row]:
    """LOFT Figure 6: count 0.9, avg 0.3, equality 0.75, inequality 0.5."""
    con = register(duckdb.connect())
    planted = {
        "count": ("SELECT count(*) FROM t", 0.9),
        "avg": ("SELECT avg(a) FROM t", 0.3),
        "equality": ("SELECT a FROM t WHERE b = 1", 0.75),
        "inequality": ("SELECT a FROM t WHERE b > 1", 0.5),
    }
    rows, queries = [], []
    for operator, (sql, p) in planted.items():
        for q, value in enumerate(_draws(rng, n, p)):
            qid = f"{operator}{q}"
            queries.append(("sql", "spider", "test", qid, 0, sql))
            rows.append({"system": "planted", "task": "sql", "dataset": "spider", "variant": "default", "qid": qid,
                         "metric": "exec_acc", "value": value})  # fmt: skip
    scores_table(con, rows)
    columns = "task varchar, dataset varchar, split varchar, qid varchar, turn bigint, gold_sql varchar"
    con.execute(f"create table queries ({columns})")
    con.executemany("insert into queries values (?, ?, ?, ?, ?, ?)", queries)
    sql = model_sql("sql_operator_accuracy", seed=seed)
    for operator, mean, low, high, count in con.sql(
        f"select operator, mean, ci_low, ci_high, n from ({sql}) where operator <> 'all' order by operator"
    ).fetchall():
        yield "sql_operator_accuracy", operator, planted[operator][1], mean, low, high, count


def scaling(rng: random.Random, n: int, seed: int) -> Iterable[Row]:
    """LOFT Figure 5: 0.90 at 32k, 0.80 at 128k, 0.60 at 1m on the same queries (each turn's
    draws nested, so the per-query changes are the planted ones on average)."""
    con = register(duckdb.connect())
    planted = {"32k": 0.90, "128k": 0.80, "1m": 0.60}
    uniform = [rng.random() for _ in range(n)]
    sized = []
    for size, p in planted.items():
        con.execute(f"create schema s{size}")
        con.execute(f"use s{size}")
        scores_table(con, [
            {"size": size, "system": "planted", "task": "retrieval", "dataset": "nq", "variant": "default",
             "qid": f"q{q}", "metric": "recall@1", "value": 1.0 if u < p else 0.0}
            for q, u in enumerate(uniform)
        ])  # fmt: skip
        sized.append([size, f"s{size}.scores"])
    con.execute("use memory.main")
    con.execute(f"create table scaling_scores as {model_sql('scaling_scores', sized=sized)}")
    previous = {"128k": "32k", "1m": "128k"}
    for size, mean, low, high, diff, dlow, dhigh, count in con.sql(
        f"select size, mean, ci_low, ci_high, difference_from_previous, difference_ci_low, difference_ci_high, n "
        f"from ({model_sql('scaling_curves', seed=seed)}) order by size_order"
    ).fetchall():
        yield "scaling_curves", f"{size} mean", planted[size], mean, low, high, count
        if diff is not None:
            yield (
                "scaling_curves",
                f"{size} - {previous[size]}",
                planted[size] - planted[previous[size]],
                diff,
                dlow,
                dhigh,
                count,
            )


def task_curves(rng: random.Random, n: int, seed: int) -> Iterable[Row]:
    """LOFT Figure 5 per task: RAG's nq 0.90 -> 0.80 and hotpotqa 0.70 -> 0.50 from 32k to 128k,
    so the task averages 0.80 -> 0.65, a change of -0.15."""
    con = register(duckdb.connect())
    planted = {"nq": {"32k": 0.90, "128k": 0.80}, "hotpotqa": {"32k": 0.70, "128k": 0.50}}
    uniform = {dataset: [rng.random() for _ in range(n)] for dataset in planted}
    sized = []
    for size in ("32k", "128k"):
        con.execute(f"create schema s{size}")
        con.execute(f"use s{size}")
        scores_table(con, [
            {"size": size, "system": "planted", "task": "rag", "dataset": dataset, "variant": "default",
             "qid": f"q{q}", "metric": "subspan_em", "value": 1.0 if u < planted[dataset][size] else 0.0}
            for dataset, draws in uniform.items() for q, u in enumerate(draws)
        ])  # fmt: skip
        sized.append([size, f"s{size}.scores"])
    con.execute("use memory.main")
    con.execute(f"create table scaling_scores as {model_sql('scaling_scores', sized=sized)}")
    con.execute(f"create table curves as {model_sql('scaling_curves', seed=seed)}")
    for size, mean, low, high, diff, dlow, dhigh, count in con.sql(
        "select size, mean, ci_low, ci_high, difference_from_previous, difference_ci_low, difference_ci_high, n "
        f"from ({model_sql('scaling_task_curves', scaling_curves='curves')}) order by size_order"
    ).fetchall():
        average = sum(p[size] for p in planted.values()) / len(planted)
        yield "scaling_task_curves", f"rag {size} mean", average, mean, low, high, count
        if diff is not None:
            yield "scaling_task_curves", "rag 128k - 32k", -0.15, diff, dlow, dhigh, count


def sweeps(rng: random.Random, n: int, seed: int) -> Iterable[Row]:
    """R&R Table 5: reprompting every 5k, 10k and 20k tokens right on 0.70, 0.80 and 0.65 of
    the turns at d = 40k (answer positions 0 to 30k)."""
    con = register(duckdb.connect())
    planted = {5000: 0.70, 10000: 0.80, 20000: 0.65}
    rows, variants = [], set()
    for every, p in planted.items():
        for x in range(0, 40000, 10000):
            variants.add((f"d40000_x{x}", "rr_d40000"))
            rows += _turns(rng, n // 4, p, system="planted", method=f"reprompt_r{every}", task="rr", dataset="nq",
                           variant=f"d40000_x{x}", metric="rr_fuzzy_match")  # fmt: skip
    for i, row in enumerate(rows):
        row["qid"] = f"q{i}"
    scores_table(con, rows)
    con.execute("create table variants (task varchar, dataset varchar, variant varchar, experiment varchar)")
    con.executemany("insert into variants values ('rr', 'nq', ?, ?)", sorted(variants))
    _paper(con, "paper_rr_sweeps")
    con.execute("create table datasets as select 'rr' as task, 'nq' as dataset")
    con.execute(
        "create table arms as select 'rr' as task, 'nq' as dataset, 'v' as variant, 'reprompt_r' || r as method, "
        "r::bigint as reprompt_every, null::bigint as icr_pages, null::bigint as chunk_tokens "
        f"from unnest({list(planted)}) t(r)"
    )
    sql = model_sql("rr_sweeps", prompt_variants="variants", stg_datasets="datasets", seed=seed)
    for every, mean, low, high, count in con.sql(
        f"select setting_value, mean, ci_low, ci_high, n from ({sql}) where paper_table = 5 and dataset = 'nq' "
        "order by setting_value"
    ).fetchall():
        yield "rr_sweeps", f"Rep r = {every // 1000}k", planted[every], mean, low, high, count


def placements(rng: random.Random, n: int, seed: int) -> Iterable[Row]:
    """R&R Table 6: Tags only 0.60, At beginning only 0.55, Before answer only 0.85 (d = 40k)."""
    con = register(duckdb.connect())
    planted = {"reprompt_tags_only_r10000": 0.60, "reprompt_at_beginning_r10000": 0.55, "reprompt_before_answer": 0.85}
    rows = []
    for name, p in planted.items():
        rows += _turns(rng, n, p, system="planted", method=name, task="rr", dataset="nq", variant="d40000_x10000",
                       metric="rr_fuzzy_match")  # fmt: skip
    scores_table(con, rows)
    con.execute("create table variants as select 'rr' as task, 'nq' as dataset, 'd40000_x10000' as variant, "
                "'rr_d40000' as experiment")  # fmt: skip
    _paper(con, "paper_rr_sweeps")
    con.execute("create table datasets as select 'rr' as task, 'nq' as dataset")
    con.execute(
        "create table arms as select 'rr' as task, 'nq' as dataset, 'd40000_x10000' as variant, m as method, "
        "case when m like '%_r10000' then 10000 end::bigint as reprompt_every, null::bigint as icr_pages, "
        f"null::bigint as chunk_tokens from unnest({list(planted)}) t(m)"
    )
    sql = model_sql("rr_sweeps", prompt_variants="variants", stg_datasets="datasets", seed=seed)
    for name, mean, low, high, count in con.sql(
        f"select run_method, mean, ci_low, ci_high, n from ({sql}) where paper_table = 6 and dataset = 'nq' "
        "and run_method is not null order by column_order"
    ).fetchall():
        yield "rr_sweeps", name, planted[name], mean, low, high, count


def pages(rng: random.Random, n: int, seed: int) -> Iterable[Row]:
    """R&R Table 4: direct QA right on 0.60 of the questions, ICR's first page the gold one on 0.85."""
    con = register(duckdb.connect())
    scores_table(con, _turns(rng, n, 0.60, system="planted", method="cic", task="rr", dataset="nq",
                             variant="d40000_x10000", metric="rr_fuzzy_match"))  # fmt: skip
    con.execute(
        "create table stage_retrieval (source varchar, system varchar, method varchar, stage bigint, task varchar, "
        "dataset varchar, variant varchar, split varchar, qid varchar, turn bigint, id_kind varchar, "
        "is_answered boolean, retrieved_pids varchar[], gold_pids varchar[], n_gold bigint)"
    )
    con.executemany(
        "insert into stage_retrieval values ('inference', 'planted', 'icr_k1', 1, 'rr', 'nq', 'd40000_x10000', "
        "'test', ?, 0, 'pages', true, ?, ['g'], 1)",
        [(f"q{q}", ["g"] if hit else ["x"]) for q, hit in enumerate(_draws(rng, n, 0.85))],
    )
    con.execute("create table variants as select 'rr' as task, 'nq' as dataset, 'd40000_x10000' as variant, "
                "'rr_d40000' as experiment")  # fmt: skip
    con.execute(
        "create table arms as select 'rr' as task, 'nq' as dataset, 'd40000_x10000' as variant, m as method, "
        "null::bigint as reprompt_every, null::bigint as icr_pages, null::bigint as chunk_tokens "
        "from unnest(['cic', 'icr_k1']) t(m)"
    )
    _paper(con, "paper_rr_pages")
    con.execute("create table datasets as select 'rr' as task, 'nq' as dataset")
    sql = model_sql("rr_pages", prompt_variants="variants", stg_datasets="datasets", seed=seed)
    planted = {"Answer": 0.60, "Page": 0.85}
    for column, mean, low, high, count in con.sql(
        f"select paper_column, mean, ci_low, ci_high, n from ({sql}) where dataset = 'nq' order by column_order"
    ).fetchall():
        yield "rr_pages", f"nq {column}", planted[column], mean, low, high, count


def quest_retrieval(rng: random.Random, n: int, seed: int) -> Iterable[Row]:
    """QUEST-LOFT Table 6: two gold entities a question; cic names both first on 0.6 of the
    questions, one first and the other 30th on 0.3, neither on the rest (MRecall@3 0.6, Recall@20
    0.75, Recall@40 0.9)."""
    con = register(duckdb.connect())
    con.execute(
        "create table corpus as select 'rag' as task, 'quest' as dataset, 'c' as corpus_id, i::bigint as doc_id, "
        f"'p' || i as pid, 'Other ' || i as title from range({n}) t(i)"
    )
    con.execute(
        "create table queries as select 'rag' as task, 'quest' as dataset, 'c' as corpus_id, 'test' as split, "
        f"'q' || i as qid, 0::bigint as turn, 'question ' || i as query_text from range({n}) t(i)"
    )
    con.execute(
        "create table adjudications as select 'quest_loft_revised' as gold_version, 'rag' as task, "
        "'quest' as dataset, 'q' || i as qid, null::varchar as question, 'gold ' || i || x as answer, "
        f"'MATCH' as rating from range({n}) t(i), (values ('a'), ('b')) s(x)"
    )
    lists = []
    for q in range(n):
        draw = rng.random()
        others = [f"Other {i}" for i in range(40)]
        if draw < 0.6:
            ranked = [f"gold {q}a", f"gold {q}b", *others]
        elif draw < 0.9:
            ranked = [f"gold {q}a", *others[:28], f"gold {q}b"]
        else:
            ranked = others
        lists.append(("inference", "planted", "rag", "quest", "cic", 1, "c", "default", "test", f"q{q}", 0, True,
                      ranked))  # fmt: skip
    con.execute(
        "create table predictions (source varchar, system varchar, task varchar, dataset varchar, method varchar, "
        "stage bigint, corpus_id varchar, variant varchar, split varchar, qid varchar, turn bigint, "
        "is_answered boolean, answer_strict varchar[])"
    )
    con.executemany(f"insert into predictions values ({', '.join('?' * 13)})", lists)
    con.execute(
        "create table stage_retrieval (source varchar, system varchar, task varchar, dataset varchar, "
        "method varchar, stage bigint, corpus_id varchar, variant varchar, split varchar, qid varchar, "
        "turn bigint, id_kind varchar, is_answered boolean, retrieved_pids varchar[])"
    )
    _paper(con, "paper_quest_loft")
    con.execute("create table datasets as select 'rag' as task, 'quest' as dataset")
    sql = model_sql("quest_loft_retrieval", stg_gold_adjudications="adjudications", stg_datasets="datasets", seed=seed)
    planted = {"MRecall@3": 0.6, "Recall@20": 0.75, "Recall@40": 0.9}
    for column, mean, low, high, count in con.sql(
        f"select paper_column, mean, ci_low, ci_high, n from ({sql}) where paper_table = 6 and method = 'cic' "
        "and paper_column <> 'Recall@100' order by column_order"
    ).fetchall():
        yield "quest_loft_retrieval", f"CiC Baseline {column}", planted[column], mean, low, high, count


def examples(rng: random.Random, n: int, seed: int) -> Iterable[Row]:
    """LOFT Figure 8: 0.5 + 0.08 k with k few-shot examples."""
    con = register(duckdb.connect())
    planted = {k: 0.5 + 0.08 * k for k in range(6)}
    rows = []
    for k, p in planted.items():
        rows += _turns(
            rng, n, p, system="planted", task="retrieval", dataset="nq", variant=f"few_shot_{k}", metric="recall@1"
        )
    scores_table(con, rows)
    con.execute(f"create table metrics as {model_sql('metrics', seed=seed)}")
    con.execute("create table corpus (task varchar, dataset varchar, min_context varchar)")
    sql = model_sql("example_curves")
    for k, mean, low, high, count in con.sql(f"select x, mean, ci_low, ci_high, n from ({sql}) order by x").fetchall():
        yield "example_curves", f"few_shot_{k}", planted[k], mean, low, high, count


def stages(rng: random.Random, n: int, seed: int) -> Iterable[Row]:
    """Error attribution: bm25 finds the gold for 0.8 of the queries; the reader is right on 0.75
    of those and 0.1 of the rest."""
    con = register(duckdb.connect())
    hits = _draws(rng, n, 0.8)
    predictions, reader = [], []
    for q, hit in enumerate(hits):
        top5 = [str(q), "x1", "x2", "x3", "x4"] if hit else ["x1", "x2", "x3", "x4", "x5"]
        for stage, answer, final in ((1, top5, False), (2, ["an answer"], True)):
            predictions.append(("inference", "planted", "rag_top5", stage, final, "rag", "nq", "nq", "default", "test",
                                f"q{q}", 0, 0, "ok", True, answer, None))  # fmt: skip
        right = rng.random() < (0.75 if hit else 0.1)
        reader.append({"system": "planted", "method": "rag_top5", "task": "rag", "dataset": "nq", "variant": "default",
                       "qid": f"q{q}", "metric": "subspan_em", "value": 1.0 if right else 0.0})  # fmt: skip
    con.execute(
        "create table predictions (source varchar, system varchar, method varchar, stage bigint, is_final boolean, "
        "task varchar, dataset varchar, corpus_id varchar, variant varchar, split varchar, qid varchar, turn bigint, "
        "call_index bigint, status varchar, is_answered boolean, answer_strict varchar[], "
        "answer_payload_strict varchar)"
    )
    con.executemany(f"insert into predictions values ({', '.join('?' * 17)})", predictions)
    con.execute(
        f"create table doc_ids as select 'rag' as task, 'nq' as dataset, 'nq' as corpus_id, 'default' as variant, "
        f"i::bigint as position, i::varchar as shown_id, 'p' || i as pid from range({n}) t(i) "
        "union all select 'rag', 'nq', 'nq', 'default', -1, 'x' || i, 'x' || i from range(1, 6) t(i)"
    )
    con.execute(
        f"create table queries as select 'rag' as task, 'nq' as dataset, 'nq' as corpus_id, 'test' as split, "
        f"'q' || i as qid, 0::bigint as turn, ['p' || i] as gold_pids from range({n}) t(i)"
    )
    scores_table(con, reader)
    retrieval = model_sql("stage_retrieval", prompt_doc_ids="doc_ids")
    con.execute(f"create table stage_retrieval as {retrieval}")
    measures = model_sql("stage_metrics", seed=seed)
    [(mean, low, high, count)] = con.sql(
        f"select mean, ci_low, ci_high, n from ({measures}) where measure = 'found_all_gold'"
    ).fetchall()
    yield "stage_metrics", "rag_top5 found_all_gold", 0.8, mean, low, high, count
    [(mean, low, high, count)] = con.sql(
        "select accuracy_given_hit, accuracy_given_hit_ci_low, accuracy_given_hit_ci_high, n_retrieval_hit "
        f"from ({model_sql('error_attribution', seed=seed)})"
    ).fetchall()
    yield "error_attribution", "rag_top5 accuracy given hit", 0.75, mean, low, high, count


MARTS = (ablations, operators, scaling, task_curves, examples, stages, sweeps, placements, pages, quest_retrieval)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=2000, help="turns per planted cell")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    print(f"{'mart':<22} {'cell':<30} {'n':>6} {'planted':>8} {'recovered':>9} {'95% interval':>17}  covered")
    covered = total = 0
    started = time.perf_counter()
    for mart in MARTS:
        for name, cell, planted, value, low, high, count in mart(rng, args.turns, args.seed):
            hit = low <= planted <= high
            covered += hit
            total += 1
            interval = f"[{low:>7.3f}, {high:>7.3f}]"
            print(
                f"{name:<22} {cell:<30} {count:>6} {planted:>8.3f} {value:>9.3f} {interval}  {'yes' if hit else 'NO'}"
            )
    print(f"{covered} of {total} planted values inside their 95% interval ({time.perf_counter() - started:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
