"""A release corpus far larger than LOFT's: staging time and peak memory against raw SentencePiece.

    .venv/bin/python benchmarks/release_scale_benchmark.py --tokens 100000000 [--work DIR]

Writes an ArguAna-style release folder (loft/retrieval/arguana/1m: untitled passages of sentences
drawn, seeded, from the real ArguAna 128k corpus in the data directory, every passage distinct,
120 queries) of about --tokens SentencePiece
tokens, then, each in a fresh process whose peak resident memory comes from the kernel (wait4):
- the warehouse's staging of it (read, validate, token-count every passage: stage_size, what the
  stg_* models run);
- raw SentencePiece on the same passage texts (the same model, encoded in the same batches).
Prints both times, their ratio and both peaks.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SEED = 20240612
CHARS_PER_TOKEN = 4.5  # of these passages; the staging run reports the exact count


def write_release(root: Path, tokens: int, seed: int) -> Path:
    """The release folder under root/loft (returned), about `tokens` tokens of passages."""
    from loft_warehouse import settings

    rng = random.Random(seed)
    arguana = settings.data_dir(None) / "loft" / "retrieval" / "arguana" / "128k" / "corpus.jsonl"
    with arguana.open(encoding="utf-8") as handle:
        passages = [json.loads(line)["passage_text"] for line in handle]
    sentences = [s.strip() + "." for text in passages for s in text.split(". ") if len(s.strip()) > 20]
    folder = root / "loft" / "retrieval" / "arguana" / "1m"
    folder.mkdir(parents=True, exist_ok=True)
    budget = tokens * CHARS_PER_TOKEN
    written = 0
    pids = []
    with (folder / "corpus.jsonl").open("w", encoding="utf-8") as handle:
        while written < budget:
            pid = f"arg{len(pids)}"
            text = f"{len(pids)} " + " ".join(rng.choices(sentences, k=rng.randint(5, 14)))
            handle.write(json.dumps({"pid": pid, "title_text": "", "passage_text": text, "metadata": {}}) + "\n")
            written += len(text)
            pids.append(pid)
    picks = rng.sample(pids, 120)
    for split, chosen in (("few_shot", picks[:5]), ("dev", picks[5:10]), ("test", picks[10:])):
        with (folder / f"{split}_queries.jsonl").open("w", encoding="utf-8") as handle:
            for pid in chosen:
                record = {"qid": f"q-{pid}", "query_text": f"about {pid}", "answers": [[pid, 1]],
                          "metadata": {"qrels": [[pid, 1]]}}  # fmt: skip
                handle.write(json.dumps(record) + "\n")
    return folder


def stage(root: Path) -> dict[str, object]:
    """Child: the warehouse's staging of the folder."""
    from loft_warehouse import settings, staging

    model = settings.tokenizer_model(None, settings.data_dir(None))
    started = time.perf_counter()
    staged = staging.stage_size(root, "1m", model, SEED, ("retrieval/arguana",))
    seconds = time.perf_counter() - started
    total = int(staged.documents["n_tokens"].sum())
    budget = settings.size("1m").budget
    return {"seconds": seconds, "documents": staged.documents.height, "tokens": total, "budget": budget}


def raw(root: Path) -> dict[str, object]:
    """Child: raw SentencePiece over the same passage texts (read first, not timed)."""
    from loft_warehouse import settings
    from loft_warehouse.tokens import TokenCounter

    folder = root / "loft" / "retrieval" / "arguana" / "1m"
    with (folder / "corpus.jsonl").open(encoding="utf-8") as handle:
        texts = [json.loads(line)["passage_text"].strip() for line in handle]
    counter = TokenCounter(settings.tokenizer_model(None, settings.data_dir(None)))
    started = time.perf_counter()
    total = counter.encode_raw(texts)
    return {"seconds": time.perf_counter() - started, "tokens": total}


def measured(mode: str, root: Path) -> tuple[dict[str, object], float, float]:
    """(result, wall seconds, peak MiB) of one child process."""
    with tempfile.TemporaryFile("w+") as out:
        started = time.perf_counter()
        process = subprocess.Popen([sys.executable, __file__, mode, str(root)], stdout=out, text=True)
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        lines = out.read().strip().splitlines()
    if process.returncode or not lines:
        raise SystemExit(f"{mode} failed with exit status {process.returncode}")
    return json.loads(lines[-1]), wall, usage.ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tokens", type=int, default=100_000_000)
    parser.add_argument("--work", type=Path, default=None)
    parser.add_argument("--staging-only", action="store_true", help="skip the raw SentencePiece run")
    args = parser.parse_args()
    root = args.work or Path(tempfile.mkdtemp(prefix="release-scale-"))
    started = time.perf_counter()
    folder = write_release(root, args.tokens, SEED)
    size = (folder / "corpus.jsonl").stat().st_size
    print(f"release folder {folder}: {size / 2**20:,.0f} MiB written in {time.perf_counter() - started:.0f} s")
    staged, staged_wall, staged_peak = measured("--stage", root)
    tokens, budget = int(staged["tokens"]), int(staged["budget"])
    print(f"staging: {staged['documents']:,} passages, {tokens:,} tokens in {staged['seconds']:.1f} s "
          f"(process {staged_wall:.1f} s), peak RSS {staged_peak:,.0f} MiB")  # fmt: skip
    if args.staging_only:
        return
    encoded, raw_wall, raw_peak = measured("--raw", root)
    print(
        f"raw SentencePiece: {encoded['tokens']:,} tokens in {encoded['seconds']:.1f} s, peak RSS {raw_peak:,.0f} MiB"
    )
    print(f"staging / raw SentencePiece: {float(staged['seconds']) / float(encoded['seconds']):.2f}x")
    print(
        f"{tokens / budget:.0f}x the 1m budget of {budget:,} tokens (corpus_stats marks a release corpus over "
        "1.4x its budget within_budget = false and warns)"
    )


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] in ("--stage", "--raw"):
        result = stage(Path(sys.argv[2])) if sys.argv[1] == "--stage" else raw(Path(sys.argv[2]))
        print(json.dumps(result))
    else:
        main()
