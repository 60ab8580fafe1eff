"""Corpus-building throughput: every dataset at every size, in one process.

Builds the spine (staging -> draw -> corpus/queries/corpus_stats) of loft_32k, loft_128k and
loft_1m with dbt in-process into a temporary DuckDB file, then prints
- tokens of all built corpora per second of build time,
- raw SentencePiece throughput on the same distinct texts (same process, same model),
- their ratio, how many tokens were encoded versus counted (each text is tokenized once),
- peak resident memory.

Run: .venv/bin/python benchmarks/corpus_benchmark.py
"""

from __future__ import annotations

import os
import resource
import sys
import tempfile
import time
from pathlib import Path

import duckdb
from dbt.cli.main import dbtRunner

from loft_warehouse import settings, staging, tokens
from loft_warehouse.settings import PROJECT_ROOT
from loft_warehouse.sources.base import Document

SEED = 20240612


def build(work: Path) -> float:
    """dbt build of the three sizes' corpora in this process; returns seconds."""
    os.environ["LOFT_DUCKDB_PATH"] = str(work / "loft.duckdb")
    os.chdir(PROJECT_ROOT)
    selection = [f"+loft_{label}__corpus_stats" for label in settings.SIZES]
    started = time.perf_counter()
    result = dbtRunner().invoke(
        [
            "build",
            "--select",
            *selection,
            "--exclude",
            "test_type:data",
            "--quiet",
            "--target-path",
            str(work / "target"),
            "--log-path",
            str(work / "logs"),
        ]
    )
    if not result.success:
        raise SystemExit(f"build failed: {result.exception}")
    return time.perf_counter() - started


def distinct_texts() -> list[str]:
    """Every distinct sized text of every size's pool (memoised frames: nothing re-encoded)."""
    texts: set[str] = set()
    for label in settings.SIZES:
        documents = staging.staged(None, label, None, SEED).documents
        for row in documents.select("task", "title", "text", "answer").iter_rows(named=True):
            document = Document(
                pid="", text=row["text"], title=row["title"], answer=row["answer"], source_file="", source_row=0
            )
            texts.add(staging.sized_text(row["task"], document))
    return sorted(texts)


def main() -> int:
    work = Path(tempfile.mkdtemp(prefix="loft-bench-"))
    build_seconds = build(work)
    with duckdb.connect(str(work / "loft.duckdb")) as con:
        per_size = [con.sql(f"select sum(n_tokens), count(*) from loft_{s}.corpus").fetchone() for s in settings.SIZES]
    corpus_tokens = sum(int(t) for t, _ in per_size)
    corpus_rows = sum(int(n) for _, n in per_size)

    counter = tokens.counter(settings.tokenizer_model())
    encoded_texts, encoded_tokens = counter.encoded_texts, counter.encoded_tokens
    texts = distinct_texts()
    raw_started = time.perf_counter()
    raw_tokens = counter.encode_raw(texts)
    raw_seconds = time.perf_counter() - raw_started

    build_rate = corpus_tokens / build_seconds
    raw_rate = raw_tokens / raw_seconds
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"corpora built: {corpus_rows:,} rows, {corpus_tokens:,} tokens at 3 sizes in {build_seconds:.1f} s")
    print(f"build throughput: {build_rate:,.0f} corpus tokens/s")
    print(
        f"raw SentencePiece: {raw_tokens:,} tokens of {len(texts):,} distinct texts in {raw_seconds:.2f} s "
        f"= {raw_rate:,.0f} tokens/s"
    )
    print(f"ratio build/raw: {build_rate / raw_rate:.3f}")
    print(
        f"encoded during the build: {encoded_texts:,} texts, {encoded_tokens:,} tokens "
        f"(distinct texts: {len(texts):,}, {raw_tokens:,} tokens)"
    )
    print(f"peak RSS: {peak_mib:,.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
