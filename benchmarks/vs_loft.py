"""The warehouse against LOFT's own code, side by side, on the same seeded inputs in LOFT's formats.

    .venv/bin/python benchmarks/vs_loft.py --loft /path/to/loft --loft-python /path/to/venv/bin/python

LOFT (google-deepmind/loft) is fetched and given its own virtual environment by the user
(absl-py, numpy, scipy, pandas from its requirements.txt); nothing of it is in this project.
The script writes seeded sets into a work folder:
- retrieval: 1,000,000 single-turn queries ([pid, score] golds) and one prediction line each;
- multi_value_rag: 100,000 QUEST-style queries (3-5 gold names) and answer lists;
- sql: 100,000 queries with result-row golds and predicted rows (numbers, case, order);
- prompts: an ArguAna-style release folder whose corpus is about 1M SentencePiece tokens,
  with 110 test queries.
Each set is run alternately (LOFT, warehouse, LOFT, ...) for --rounds rounds, each run in a
fresh process whose wall time and peak resident memory are taken from the kernel (wait4).

What is timed on each side:
- scoring: LOFT's run_evaluation.py (reads both files, scores, writes its two metric files);
  the warehouse's import and scoring path (the answer file's queries and the prediction file
  landed as `loft import-predictions --queries` lands them, then the scoring macros the dbt
  models render, run in DuckDB: prediction rows, parsing, predictions, scores, metrics).
  Both aggregates are printed, and the script stops if they disagree.
- prompts: LOFT's dump_prompts.py (text chunks per query, as its README runs it) against the
  warehouse's prompt store (staging of the release folder, then the shared prefix and per-query
  suffixes of the default variant, token-counted).

With --base (a built warehouse, `make build`) each scoring set is also timed on the path a user
runs: `loft import-predictions preds.jsonl --queries queries.jsonl ... --build` (landing, dbt's
start and parse, the build of the import's downstream models and their quality suites) into a
fresh copy of --base per run (the copy is not timed), against the same run_evaluation.py.

The ratio column is warehouse time / LOFT time per pair (median, min-max). Without --loft only
the warehouse side runs. --memory-limit caps DuckDB's memory in the warehouse runs as
$LOFT_DUCKDB_MEMORY_LIMIT does in builds and imports (it spills to disk beyond that); without it
the warehouse's default applies, a quarter of the machine's memory (settings.duckdb_memory_limit).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SEED = 20240612
ROOT = Path(__file__).resolve().parents[1]
TASK_TYPE = {"retrieval": "retrieval", "multi_value_rag": "multi_value_rag", "sql": "sql"}
WORDS = [
    "river",
    "stone",
    "garden",
    "night",
    "winter",
    "city",
    "harbour",
    "letter",
    "silver",
    "engine",
    "valley",
    "forest",
    "mirror",
    "bridge",
    "signal",
    "market",
    "lantern",
    "orchard",
    "thunder",
    "canvas",
    "meadow",
    "compass",
    "velvet",
    "summit",
]


# ---------------------------------------------------------------- seeded inputs (LOFT formats)


def _write_lines(path: Path, records: Any) -> None:
    with path.open("w", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")


def write_retrieval(folder: Path, n: int, seed: int) -> None:
    """Single-turn retrieval over a 10,000-pid corpus: 1-3 golds, 1-10 predicted pids (golds
    among them at random ranks, duplicates and pids outside the golds)."""
    rng = random.Random(seed)
    corpus = 10_000
    golds = [[f"doc{rng.randrange(corpus)}" for _ in range(rng.randint(1, 3))] for _ in range(n)]
    _write_lines(
        folder / "queries.jsonl",
        ({"qid": f"q{i}", "query_text": f"query {i}", "answers": [[pid, 1] for pid in gold],
          "metadata": {"qrels": [[pid, 1] for pid in gold]}} for i, gold in enumerate(golds)),
    )  # fmt: skip

    def predicted(gold: list[str]) -> list[str]:
        ids = [f"doc{rng.randrange(corpus)}" for _ in range(rng.randint(1, 10))]
        for pid in gold:
            if rng.random() < 0.6:
                ids.insert(rng.randrange(len(ids) + 1), pid)
        return ids

    _write_lines(
        folder / "preds.jsonl",
        ({"qid": f"q{i}", "num_turns": 1, "model_outputs": [predicted(gold)], "metadata": {}}
         for i, gold in enumerate(golds)),
    )  # fmt: skip


def _name(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS).title() for _ in range(rng.randint(1, 3))) + f" {rng.randrange(400)}"


def _variant(rng: random.Random, name: str) -> str:
    """The same entity as a model might write it: case, articles, punctuation, extra words."""
    choice = rng.random()
    if choice < 0.25:
        return name.lower()
    if choice < 0.4:
        return f"The {name}."
    if choice < 0.5:
        return f"{name} (film)"
    if choice < 0.6:
        return name.split()[0]
    return name


def write_multi_value_rag(folder: Path, n: int, seed: int) -> None:
    """QUEST-style questions: 3-5 gold names; 2-6 predicted names, most written differently."""
    rng = random.Random(seed + 1)
    golds = [[_name(rng) for _ in range(rng.randint(3, 5))] for _ in range(n)]
    _write_lines(
        folder / "queries.jsonl",
        ({"qid": f"m{i}", "query_text": f"question {i}", "answers": gold,
          "metadata": {"qrels": [[f"quest_{i}_{j}", 1] for j in range(len(gold))]}} for i, gold in enumerate(golds)),
    )  # fmt: skip

    def predicted(gold: list[str]) -> list[str]:
        names = [_variant(rng, g) for g in gold if rng.random() < 0.8] + [_name(rng) for _ in range(rng.randint(0, 2))]
        rng.shuffle(names)
        return names[:6] or [_name(rng)]

    _write_lines(
        folder / "preds.jsonl",
        ({"qid": f"m{i}", "num_turns": 1, "model_outputs": [predicted(gold)]}
         for i, gold in enumerate(golds) if i % 50 != 49),
    )  # fmt: skip


def _cell(rng: random.Random) -> Any:
    kind = rng.random()
    if kind < 0.4:
        return rng.choice(WORDS).title()
    if kind < 0.7:
        return rng.randrange(1000)
    if kind < 0.9:
        return round(rng.uniform(0, 1000), rng.randint(1, 4))
    return None


def write_sql(folder: Path, n: int, seed: int) -> None:
    """Spider-style result rows (1-8 rows of 1-3 cells: names, integers, floats, NULL); predictions
    are the gold reordered, reformatted (case, '3' for 3, more decimals), or wrong."""
    rng = random.Random(seed + 2)
    golds = []
    for _ in range(n):
        width = rng.randint(1, 3)
        golds.append([[_cell(rng) for _ in range(width)] for _ in range(rng.randint(1, 8))])
    _write_lines(
        folder / "queries.jsonl",
        ({"qid": f"s{i}", "query_text": f"question {i}", "answers": gold,
          "metadata": {"db_id": f"db{i % 20}", "sql_query": "SELECT 1", "candidate_pids": []}}
         for i, gold in enumerate(golds)),
    )  # fmt: skip

    def reformat(cell: Any) -> Any:
        if isinstance(cell, str) and rng.random() < 0.3:
            return cell.upper()
        if isinstance(cell, int) and rng.random() < 0.3:
            return str(cell)
        if isinstance(cell, float) and rng.random() < 0.3:
            return round(cell, 1)
        return cell

    def predicted(gold: list[list[Any]]) -> list[list[Any]]:
        rows = [[reformat(cell) for cell in row] for row in gold]
        rng.shuffle(rows)
        if rng.random() < 0.2:
            rows = rows[1:] + [[_cell(rng)]]
        return rows

    _write_lines(
        folder / "preds.jsonl",
        ({"qid": f"s{i}", "num_turns": 1, "model_outputs": [predicted(gold)]}
         for i, gold in enumerate(golds) if i % 50 != 49),
    )  # fmt: skip


def write_prompts(folder: Path, tokens: int, seed: int) -> Path:
    """An ArguAna-style release folder (retrieval/arguana/1m under folder/data, LOFT's base_dir
    layout; the warehouse reads the same files as folder/warehouse_root/loft) whose corpus is
    about `tokens` SentencePiece tokens (untitled argument passages, as ArguAna's), with 5 few-shot, 5 dev
    and 110 test queries whose gold is one passage each."""
    from loft_warehouse import settings
    from loft_warehouse.tokens import TokenCounter

    rng = random.Random(seed + 3)
    release = folder / "data" / "retrieval" / "arguana" / "1m"
    release.mkdir(parents=True, exist_ok=True)
    counter = TokenCounter(settings.tokenizer_model(None, settings.data_dir(None)))
    documents: list[dict[str, Any]] = []
    total = 0
    while total < tokens:
        sentences = [
            " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 20))).capitalize() + "."
            for _ in range(rng.randint(6, 12))
        ]
        record = {"pid": f"arg{len(documents)}", "title_text": "", "passage_text": " ".join(sentences), "metadata": {}}
        total += counter.count([record["passage_text"]])[0]
        documents.append(record)
    _write_lines(release / "corpus.jsonl", documents)
    picks = rng.sample(range(len(documents)), 120)
    queries = [
        {"qid": f"q{k}", "query_text": documents[i]["passage_text"][:300], "answers": [[documents[i]["pid"], 1]],
         "metadata": {"qrels": [[documents[i]["pid"], 1]]}} for k, i in enumerate(picks)
    ]  # fmt: skip
    _write_lines(release / "few_shot_queries.jsonl", queries[:5])
    _write_lines(release / "dev_queries.jsonl", queries[5:10])
    _write_lines(release / "test_queries.jsonl", queries[10:])
    (folder / "warehouse_root").mkdir(exist_ok=True)
    link = folder / "warehouse_root" / "loft"
    if not link.exists():
        link.symlink_to(folder / "data")
    return folder


# ---------------------------------------------------------------- one measured run


@dataclass(frozen=True)
class Run:
    seconds: float
    peak_mib: float
    stdout: str


def measured(command: list[str], cwd: Path, env: dict[str, str] | None = None) -> Run:
    """Run a command in a fresh process: wall time and that process's own peak RSS (wait4)."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        started = time.perf_counter()
        process = subprocess.Popen(command, cwd=cwd, env=env, stdout=out, stderr=err, text=True)
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if process.returncode:
        raise SystemExit(f"{' '.join(command)} failed ({process.returncode}):\n{stderr[-3000:]}")
    return Run(seconds, usage.ru_maxrss / 1024, stdout)


# ---------------------------------------------------------------- the two sides


def warehouse_scoring(folder: Path, task_type: str) -> dict[str, float]:
    """The warehouse's import + scoring path on one set; its metrics by name/rule. Phase times go
    to stderr."""
    sys.path.insert(0, str(ROOT))
    from tests.scoring import sqlkit

    from loft_warehouse import settings
    from loft_warehouse.scoring.importer import imported_queries_relation, imported_relation, land_with_answer_file

    clock = time.perf_counter()

    def peak_mib() -> float:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    def phase(name: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        print(f"#   {name:<24} {now - clock:7.2f} s   peak so far {peak_mib():,.0f} MiB", file=sys.stderr)
        clock = now

    landing = folder / "warehouse"
    shutil.rmtree(landing, ignore_errors=True)
    landing.mkdir()
    # As `loft import-predictions --queries`: the answer file's queries are landed by DuckDB and
    # the prediction file is read against them; no frame of the answer file is held after.
    land_with_answer_file(folder / "preds.jsonl", folder / "queries.jsonl", system="bench", size="128k",
                          task_type=task_type, dataset="bench", directory=landing)  # fmt: skip
    phase("answer and prediction files")
    # A database file, as dbt builds: its tables are compressed and spill instead of growing RSS,
    # under $LOFT_DUCKDB_MEMORY_LIMIT when set, as the dbt plugin applies it.
    con = settings.limit_memory(sqlkit.connect(str(landing / "scoring.duckdb")))
    con.register("landed_queries", imported_queries_relation(con, landing, "128k"))
    con.execute("insert into imported_queries by name select * from landed_queries")
    con.register("landed", imported_relation(con, landing, "128k", con.table("imported_queries")))
    con.execute("insert into imports by name select * from landed")
    phase("imported models")
    for name, seconds in sqlkit.build(con).items():
        print(f"#   {name:<24} {seconds:7.2f} s", file=sys.stderr)
    print(f"#   peak after the scoring models {peak_mib():,.0f} MiB", file=sys.stderr)
    rows = con.execute("select metric_name || '/' || rule, mean from metrics where source = 'import'").fetchall()
    return {name: value for name, value in rows}


def user_path(folder: Path, task_type: str) -> list[str]:
    """What a user runs to score LOFT's files in the warehouse: import, then build."""
    loft = str(Path(sys.executable).with_name("loft"))
    return [loft, "import-predictions", str(folder / "preds.jsonl"), "--queries", str(folder / "queries.jsonl"),
            "--system", "bench", "--size", "128k", "--task", task_type, "--dataset", "bench", "--build"]  # fmt: skip


def fresh_copy(base: Path, database: Path) -> None:
    """A copy of the built warehouse for one user-path run, with no import landed before it."""
    shutil.rmtree(database.parent, ignore_errors=True)
    database.parent.mkdir(parents=True)
    shutil.copy(base, database)


def loft_scoring(folder: Path, task_type: str, loft: Path, python: str) -> list[str]:
    return [python, str(loft / "run_evaluation.py"), f"--answer_file_path={folder / 'queries.jsonl'}",
            f"--pred_file_path={folder / 'preds.jsonl'}", f"--task_type={task_type}"]  # fmt: skip


def warehouse_prompts(folder: Path) -> dict[str, float]:
    """The warehouse's prompt store for the set: staging of the release folder (read, validate,
    token counts), then the default variant's shared prefix and per-query suffixes with exact
    token counts, in process. Returns the prompt count, stored text bytes and the seconds of each
    step in the process (staging, prompt building)."""
    import polars as pl

    from loft_warehouse import settings, staging
    from loft_warehouse.design import Design
    from loft_warehouse.prompts.store import build
    from loft_warehouse.prompts.variants import resolve
    from loft_warehouse.tokens import TokenCounter

    model = settings.tokenizer_model(None, settings.data_dir(None))
    started = time.perf_counter()
    staged = staging.stage_size(folder / "warehouse_root", "1m", model, SEED, ("retrieval/arguana",))
    staged_at = time.perf_counter()
    corpus = staged.documents.with_columns(doc_id=pl.col("pool_rank"), min_context=pl.lit(None, pl.String))
    queries = staged.queries.rename({"release_split": "split"})
    design = Design(variants=tuple(resolve("default")))
    tables = build(corpus, queries, staged.datasets, design, TokenCounter(model), SEED)
    built_at = time.perf_counter()
    stored = tables.prefixes["text"].str.len_bytes().sum() + tables.prompts["suffix"].str.len_bytes().sum()
    return {
        "prompts": tables.prompts.filter(pl.col("split") == "test").height,
        "stored_bytes": int(stored),
        "staging_s": staged_at - started,
        "build_s": built_at - staged_at,
    }


def loft_prompts(folder: Path, loft: Path, python: str) -> list[str]:
    output = folder / "loft_dump"
    shutil.rmtree(output, ignore_errors=True)
    return [python, str(loft / "dump_prompts.py"), "--prompt_name=retrieval_arguana_1m_test:few_shot_with_cot",
            f"--base_dir={folder}", f"--output_dir={output}", "--output_format=text"]  # fmt: skip


# ---------------------------------------------------------------- side by side


def _loft_quality(stdout: str) -> dict[str, float]:
    """The aggregate run_evaluation.py prints (a JSON object before its 'Two files' line)."""
    start = stdout.index("{")
    end = stdout.index("Two files written")
    return json.loads(stdout[start:end])["quality"]


def _agreement(loft: dict[str, float], warehouse: dict[str, Any]) -> str:
    """LOFT's keys against the warehouse's loft-rule metrics of the same name."""
    compared, differing, without = 0, [], []
    for key, value in loft.items():
        mine = warehouse.get(f"{key}_loft/loft")
        if mine is None:
            without.append(key)
            continue
        compared += 1
        if abs(mine - value) > 1e-9:
            differing.append(f"{key} {value} vs {mine}")
    if differing:
        raise SystemExit("the warehouse and LOFT disagree: " + "; ".join(differing))
    note = f" ({', '.join(without)}: no answered row carries it in the warehouse)" if without else ""
    return f"{compared} aggregate(s) equal{note}"


def _span(values: list[float], digits: int = 2) -> str:
    return f"{statistics.median(values):.{digits}f} ({min(values):.{digits}f}-{max(values):.{digits}f})"


@dataclass
class Pairs:
    label: str
    loft: list[Run]
    warehouse: list[Run]

    def row(self) -> str:
        seconds = _span([r.seconds for r in self.warehouse])
        peak = f"{max(r.peak_mib for r in self.warehouse):,.0f}"
        if not self.loft:
            return f"{self.label:<34} {'-':>20} {'-':>9} {seconds:>20} {peak:>9} {'-':>20}"
        ratios = [w.seconds / lo.seconds for w, lo in zip(self.warehouse, self.loft, strict=True)]
        loft_seconds = _span([r.seconds for r in self.loft])
        loft_peak = f"{max(r.peak_mib for r in self.loft):,.0f}"
        return f"{self.label:<34} {loft_seconds:>20} {loft_peak:>9} {seconds:>20} {peak:>9} {_span(ratios, 3):>20}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--loft", type=Path, default=None, help="a checkout of google-deepmind/loft")
    parser.add_argument("--loft-python", default=None, help="the interpreter of LOFT's virtual environment")
    parser.add_argument("--retrieval", type=int, default=1_000_000)
    parser.add_argument("--rag", type=int, default=100_000, help="multi_value_rag queries")
    parser.add_argument("--sql", type=int, default=100_000)
    parser.add_argument("--prompt-tokens", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--work", type=Path, default=None, help="where the sets are written (default: a temp dir)")
    parser.add_argument("--memory-limit", default=None, help="LOFT_DUCKDB_MEMORY_LIMIT for the warehouse runs")
    parser.add_argument("--base", type=Path, default=None, help="a built warehouse: also time the user's path")
    parser.add_argument("--sets", nargs="+", default=["retrieval", "multi_value_rag", "sql", "prompts"],
                        help="which sets to run (default: all)")  # fmt: skip
    args = parser.parse_args()
    if args.base and not args.base.is_file():
        parser.error(f"--base {args.base}: no such warehouse file (make build writes loft.duckdb)")
    if args.loft and not args.loft_python:
        parser.error("--loft needs --loft-python")
    work = args.work or Path(tempfile.mkdtemp(prefix="vs-loft-"))
    sets = [("retrieval", write_retrieval, args.retrieval), ("multi_value_rag", write_multi_value_rag, args.rag),
            ("sql", write_sql, args.sql)]  # fmt: skip
    sets = [entry for entry in sets if entry[0] in args.sets]
    started = time.perf_counter()
    for name, write, n in sets:
        (work / name).mkdir(parents=True, exist_ok=True)
        write(work / name, n, SEED)
    if "prompts" in args.sets:
        write_prompts(work / "prompts", args.prompt_tokens, SEED)
    print(f"seeded sets written to {work} in {time.perf_counter() - started:.0f} s (seed {SEED})")
    if args.loft:
        commit = subprocess.run(["git", "-C", str(args.loft), "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, check=False).stdout.strip() or "unknown commit"  # fmt: skip
        print(f"LOFT: {args.loft} @ {commit}, {args.loft_python}")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "python")}
    if args.memory_limit:
        env["LOFT_DUCKDB_MEMORY_LIMIT"] = args.memory_limit
    limit = env.get("LOFT_DUCKDB_MEMORY_LIMIT") or "unset: the warehouse default, a quarter of this machine's memory"
    print(f"warehouse DuckDB memory limit: {limit}")
    results: list[Pairs] = []
    jobs: list[tuple[str, list[str] | None, list[str], dict[str, str]]] = []
    for name, _, n in sets:
        folder = work / name
        loft_command = loft_scoring(folder, name, args.loft, args.loft_python) if args.loft else None
        warehouse = [sys.executable, str(Path(__file__).resolve()), "--warehouse-scoring", str(folder), name]
        jobs.append((f"{name} {n:,} (score)", loft_command, warehouse, env))
        if args.base:
            user_env = {**env, "LOFT_DUCKDB_PATH": str(folder / "user" / "loft.duckdb"),
                        "LOFT_IMPORTS_DIR": str(folder / "user" / "imports"), "DO_NOT_TRACK": "1"}  # fmt: skip
            jobs.append((f"{name} {n:,} (user path)", loft_command, user_path(folder, name), user_env))
    prompts = work / "prompts"
    if "prompts" in args.sets:
        jobs.append((
            f"arguana-style {args.prompt_tokens / 1e6:g}M tokens (prompts)",
            loft_prompts(prompts, args.loft, args.loft_python) if args.loft else None,
            [sys.executable, str(Path(__file__).resolve()), "--warehouse-prompts", str(prompts)],
            env,
        ))  # fmt: skip
    for label, loft_command, warehouse, warehouse_env in jobs:
        pairs = Pairs(label, [], [])
        for round_ in range(args.rounds):
            order = ["loft", "warehouse"] if round_ % 2 == 0 else ["warehouse", "loft"]
            for side in order:
                if side == "loft" and loft_command:
                    if "--output_dir" in " ".join(loft_command):
                        shutil.rmtree(prompts / "loft_dump", ignore_errors=True)
                    pairs.loft.append(measured(loft_command, args.loft or ROOT))
                elif side == "warehouse":
                    if "(user path)" in label:
                        fresh_copy(args.base, Path(warehouse_env["LOFT_DUCKDB_PATH"]))
                    pairs.warehouse.append(measured(warehouse, ROOT, warehouse_env))
        if "(user path)" in label:
            results.append(pairs)
            continue
        last = json.loads(pairs.warehouse[-1].stdout.strip().splitlines()[-1])
        if loft_command and "(score)" in label:
            print(f"{label}: {_agreement(_loft_quality(pairs.loft[-1].stdout), last)}")
        elif "(prompts)" in label:
            files = (prompts / "loft_dump").rglob("*") if loft_command else iter(())
            dumped = sum(f.stat().st_size for f in files if f.is_file())
            corpus = (prompts / "data" / "retrieval" / "arguana" / "1m" / "corpus.jsonl").stat().st_size
            print(f"{label}: {last['prompts']} test prompts; stored text {last['stored_bytes'] / corpus:.2f}x the "
                  f"corpus file" + (f", LOFT's dump {dumped / corpus:.1f}x" if loft_command else ""))  # fmt: skip
            steps = [json.loads(run.stdout.strip().splitlines()[-1]) for run in pairs.warehouse]
            for step in ("staging_s", "build_s"):
                print(f"{label}: warehouse {step[:-2]} in process {_span([s[step] for s in steps])} s")
        results.append(pairs)
    print()
    header = f"{'set':<34} {'LOFT s med (min-max)':>20} {'LOFT MiB':>9} {'warehouse s':>20} {'wh MiB':>9}"
    print(f"{header} {'ratio wh/LOFT':>20}")
    for pairs in results:
        print(pairs.row())
    print(f"\n{args.rounds} alternating round(s) per set; peak MiB is the largest resident set of one run (wait4).")


def child(mode: str, folder: Path, task_type: str | None) -> None:
    """One warehouse run in its own process (what main() measures): its result on stdout."""
    started = time.perf_counter()
    result = warehouse_scoring(folder, task_type or "") if mode == "--warehouse-scoring" else warehouse_prompts(folder)
    print(json.dumps(result))
    print(f"# {time.perf_counter() - started:.2f} s", file=sys.stderr)


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] in ("--warehouse-scoring", "--warehouse-prompts"):
        child(sys.argv[1], Path(sys.argv[2]), sys.argv[3] if len(sys.argv) > 3 else None)
    else:
        main()
