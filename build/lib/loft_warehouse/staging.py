"""Land every dataset of one size as three frames: datasets, documents (the candidate pool)
and query turns, with token counts and seeded draw ranks.

Selection (splits, gold, filling the budget, nesting) happens downstream in SQL; this module
only reads, validates, tokenizes and assigns each document and query its rank in the seeded
draw, so the draw is identical at every size and smaller corpora are prefixes of larger ones.
"""

from __future__ import annotations

import importlib
import json
import os
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl

from loft_warehouse import frame_cache, registry, settings
from loft_warehouse.errors import BadInputError
from loft_warehouse.progress import Progress
from loft_warehouse.readers import max_text_bytes, utf8_size
from loft_warehouse.registry import DatasetSpec
from loft_warehouse.sources import loft_release
from loft_warehouse.sources.base import CorpusRequest, Document, Query, SourceData
from loft_warehouse.tokens import TokenCounter, counter

LANDING_CHUNK = 65_536
LANDED_FRAMES = ("datasets", "documents", "queries")
DOCUMENT_SCHEMA: dict[str, pl.DataType | type[pl.DataType]] = {
    "task": pl.String,
    "dataset": pl.String,
    "corpus_id": pl.String,
    "pid": pl.String,
    "title": pl.String,
    "text": pl.String,
    "answer": pl.String,
    "label": pl.String,
    "n_tokens": pl.Int64,
    "pool_rank": pl.Int64,
    "draw_rank": pl.Int64,
    "is_released": pl.Boolean,
    "source_file": pl.String,
    "source_row": pl.Int64,
}
QUERY_SCHEMA: dict[str, pl.DataType | type[pl.DataType]] = {
    "task": pl.String,
    "dataset": pl.String,
    "corpus_id": pl.String,
    "qid": pl.String,
    "upstream_qid": pl.String,
    "turn": pl.Int64,
    "n_turns": pl.Int64,
    "query_text": pl.String,
    "gold": pl.String,
    "gold_pids": pl.List(pl.String),
    "relevant_pids": pl.List(pl.String),
    "db_id": pl.String,
    "gold_sql": pl.String,
    "release_split": pl.String,
    "query_rank": pl.Int64,
    "source_file": pl.String,
    "source_row": pl.Int64,
}
DATASET_SCHEMA: dict[str, pl.DataType | type[pl.DataType]] = {
    "task": pl.String,
    "dataset": pl.String,
    "source": pl.String,
    "is_released": pl.Boolean,
    "has_title": pl.Boolean,
    "max_gold": pl.Int64,
    "n_few_shot": pl.Int64,
    "n_dev": pl.Int64,
    "n_test": pl.Int64,
    "n_test_largest": pl.Int64,
    "size_tokens": pl.Int64,
    "budget": pl.Int64,
    "contexts": pl.List(pl.String),
    "context_budgets": pl.List(pl.Int64),
    "per_query_corpus": pl.Boolean,
    "is_multi_answer": pl.Boolean,
    "tokenizer": pl.String,
    "seed": pl.Int64,
}


@dataclass(frozen=True)
class Staged:
    """The landed frames of one size."""

    datasets: pl.DataFrame
    documents: pl.DataFrame
    queries: pl.DataFrame


def sized_text(task: str, document: Document) -> str:
    """The text whose tokens count against the budget: the document's content (title and text,
    an ICL example with its output, a table with its name), as LOFT sizes corpora. The released
    corpora confirm it: ArguAna 128k holds 113,948 content tokens against a 115,200 budget. The
    prompt's formatting (IDs, field names) comes on top and is counted in the prompt tables."""
    if task == "icl":
        return f"{document.text}\nOutput: {(document.answer or '').split(' ')!r}"
    if task == "sql":
        return f"Table: {document.title}\n{document.text}"
    return f"{document.title} | {document.text}" if document.title else document.text


def draw_ranks(n: int, seed: int, key: str) -> np.ndarray:
    """Rank of each of n items in a seeded uniform permutation (same key -> same draw)."""
    rng = np.random.default_rng([seed, zlib.crc32(key.encode("utf-8"))])
    ranks = np.empty(n, dtype=np.int64)
    ranks[rng.permutation(n)] = np.arange(n, dtype=np.int64)
    return ranks


def _load(spec: DatasetSpec, root: Path, size_label: str) -> SourceData:
    if spec.source == "loft_release":
        folder = registry.release_dir(root, spec.task, spec.dataset, size_label)
        splits = tuple(split for split, n in spec.split_sizes(size_label).items() if n > 0)
        return loft_release.load(spec.task, folder, splits)
    module = importlib.import_module(f"loft_warehouse.sources.{spec.source}")
    return module.load(spec, root)


def _utf8_bytes(text: str | None, cap: int) -> int:
    """The UTF-8 size of text, measured only when it could be over cap (4 bytes a character)."""
    return utf8_size(text) if text and 4 * len(text) > cap else 0


def _within_text_budget(spec: DatasetSpec, data: SourceData) -> None:
    """Every passage, title and query turn is at most readers.max_text_bytes(), before anything
    tokenizes or renders it (a 50 MiB passage, shown in every prompt, took a build past 3 GiB)."""
    cap = max_text_bytes()
    named: list[tuple[str, int, str, tuple[str | None, ...]]] = [
        (doc.source_file, doc.source_row, f"pid {doc.pid!r}", (doc.text, doc.title)) for doc in data.documents
    ]
    named += [(query.source_file, query.source_row, f"qid {query.qid!r}", tuple(query.turns)) for query in data.queries]
    for source_file, source_row, which, texts in named:
        size = max(_utf8_bytes(text, cap) for text in texts) if texts else 0
        if size > cap:
            raise BadInputError(
                source_file,
                source_row,
                f"{which} of {spec.task}/{spec.dataset}: a text of {size} bytes, over LOFT_MAX_TEXT_BYTES ({cap})",
            )


def _validate(spec: DatasetSpec, data: SourceData) -> None:
    """Duplicate pids or qids, and gold pointing at missing documents, stop the build."""
    if not data.documents and not spec.study:
        raise BadInputError(f"{spec.source}:{spec.task}/{spec.dataset}", None, "empty corpus: no documents")
    queries: dict[str, Query] = {}
    for query in data.queries:
        first_query = queries.setdefault(query.qid, query)
        if first_query is not query:
            raise BadInputError(
                query.source_file,
                query.source_row,
                f"duplicate qid {query.qid!r} in {spec.task}/{spec.dataset} "
                f"(first at {first_query.source_file}:{first_query.source_row})",
            )
    seen: dict[tuple[str | None, str], Document] = {}
    for doc in data.documents:
        key = (doc.corpus_id, doc.pid)
        if key in seen:
            first = seen[key]
            raise BadInputError(
                doc.source_file,
                doc.source_row,
                f"duplicate pid {doc.pid!r} in {spec.task}/{spec.dataset} "
                f"(first at {first.source_file}:{first.source_row})",
            )
        seen[key] = doc
    built_corpora = {corpus_id for corpus_id, _ in seen}
    for query in data.queries:
        corpus_id = query.corpus_id
        if spec.study and corpus_id not in built_corpora:
            continue  # a study question outside this size's splits: no corpus was built for it
        for pid in {p for pids in query.gold_pids for p in pids} | set(query.relevant_pids):
            if (corpus_id, pid) not in seen:
                raise BadInputError(
                    query.source_file,
                    query.source_row,
                    f"query {query.qid!r} of {spec.task}/{spec.dataset} points at pid {pid!r}, "
                    "which is not in the corpus",
                )


def _per_query_corpora(
    spec: DatasetSpec, data: SourceData, size_label: str, tokens: TokenCounter, seed: int
) -> SourceData:
    """A study's question corpora: built for the questions this size's splits take (every study
    question is eligible, so they are the first ones of the seeded query draw)."""
    assert data.corpus_for is not None
    wanted = sum(spec.split_sizes(size_label).values())
    ranks = draw_ranks(len(data.queries), seed, _query_draw_key(spec))
    needed = [query for _, query in sorted(zip(ranks, data.queries, strict=True), key=lambda pair: pair[0])][:wanted]
    request = CorpusRequest(
        queries=needed,
        budget=settings.size(size_label).budget,
        seed=seed,
        n_tokens=lambda document: tokens.count([sized_text(spec.task, document)])[0],
    )
    return SourceData(data.corpus_for(request), data.queries)


def _query_draw_key(spec: DatasetSpec) -> str:
    return f"{spec.source}:{spec.source_name or spec.dataset}:queries"


def _documents_frame(
    spec: DatasetSpec, data: SourceData, released: bool, tokens: TokenCounter, seed: int
) -> pl.DataFrame:
    """The pool's documents as a frame. They land LANDING_CHUNK at a time, from the end, and leave
    data.documents as they land, so a large corpus is never held twice (as Python objects and
    as the frame): the list is empty afterwards."""
    docs = data.documents
    draw_key = f"{spec.source}:{spec.source_name or spec.dataset}:documents"
    if released or spec.task == "sql" or spec.study:
        ranks = np.arange(len(docs), dtype=np.int64)
    else:
        ranks = draw_ranks(len(docs), seed, draw_key)
    chunks = []
    while docs:
        start = max(0, len(docs) - LANDING_CHUNK)
        chunk = docs[start:]
        del docs[start:]
        chunks.append(
            pl.DataFrame(
                {
                    "task": [spec.task] * len(chunk),
                    "dataset": [spec.dataset] * len(chunk),
                    "corpus_id": [d.corpus_id or spec.dataset for d in chunk],
                    "pid": [d.pid for d in chunk],
                    "title": [d.title for d in chunk],
                    "text": [d.text for d in chunk],
                    "answer": [d.answer for d in chunk],
                    "label": [d.label for d in chunk],
                    "n_tokens": tokens.count([sized_text(spec.task, d) for d in chunk]),
                    "pool_rank": ranks[start : start + len(chunk)],
                    "draw_rank": [d.draw_rank for d in chunk],
                    "is_released": [released] * len(chunk),
                    "source_file": [d.source_file for d in chunk],
                    "source_row": [d.source_row for d in chunk],
                },
                schema=DOCUMENT_SCHEMA,
            )
        )
    return pl.concat(chunks[::-1], rechunk=False) if chunks else pl.DataFrame(schema=DOCUMENT_SCHEMA)


def queries_frame(spec: DatasetSpec, data: SourceData, released: bool, seed: int) -> pl.DataFrame:
    """One row per query turn (QUERY_SCHEMA); released queries keep file order as their rank."""
    queries = data.queries
    if released:
        ranks = np.arange(len(queries), dtype=np.int64)
    else:
        ranks = draw_ranks(len(queries), seed, _query_draw_key(spec))
    rows: list[dict] = []
    for query, rank in zip(queries, ranks, strict=True):
        for turn, text in enumerate(query.turns):
            gold_pids = query.gold_pids[turn] if turn < len(query.gold_pids) else []
            rows.append(
                {
                    "task": spec.task,
                    "dataset": spec.dataset,
                    "corpus_id": query.corpus_id or spec.dataset,
                    "qid": query.qid,
                    "upstream_qid": query.upstream_qid or query.qid,
                    "turn": turn,
                    "n_turns": len(query.turns),
                    "query_text": text,
                    "gold": json.dumps(query.gold[turn], ensure_ascii=False),
                    "gold_pids": list(gold_pids),
                    "relevant_pids": list(query.relevant_pids),
                    "db_id": query.db_id,
                    "gold_sql": query.gold_sql[turn] if query.gold_sql else None,
                    "release_split": query.release_split,
                    "query_rank": int(rank),
                    "source_file": query.source_file,
                    "source_row": query.source_row,
                }
            )
    return pl.DataFrame(rows, schema=QUERY_SCHEMA)


def _dataset_row(spec: DatasetSpec, size_label: str, released: bool, tokenizer: str, seed: int) -> dict:
    size = settings.size(size_label)
    splits = spec.split_sizes(size_label)
    contexts = list(spec.contexts) if spec.contexts else [size_label]
    return {
        "task": spec.task,
        "dataset": spec.dataset,
        "source": spec.source,
        "is_released": released,
        "has_title": spec.has_title,
        "max_gold": spec.max_gold,
        "n_few_shot": splits["few_shot"],
        "n_dev": splits["dev"],
        "n_test": splits["test"],
        "n_test_largest": spec.splits["test"],
        "size_tokens": size.tokens,
        "budget": size.budget,
        "contexts": contexts,
        "context_budgets": [settings.context(c).budget for c in contexts],
        "per_query_corpus": spec.study,
        "is_multi_answer": spec.multi_answer,
        "tokenizer": tokenizer,
        "seed": seed,
    }


def stage_size(root: Path, size_label: str, tokenizer_model: Path, seed: int, only: tuple[str, ...] = ()) -> Staged:
    """Load, validate and tokenize every dataset of one size (or those named in `only`)."""
    tokens = counter(tokenizer_model)
    dataset_rows, document_frames, query_frames = [], [], []
    specs = registry.specs_for_size(root, size_label, only)
    progress = Progress(f"staging {size_label} (read, validate, tokenize)", len(specs), unit="dataset", costs=False)
    for spec in specs:
        released = spec.source == "loft_release"
        data = _load(spec, root, size_label)
        _within_text_budget(spec, data)
        if data.corpus_for is not None:
            data = _per_query_corpora(spec, data, size_label, tokens, seed)
        _validate(spec, data)
        dataset_rows.append(_dataset_row(spec, size_label, released, tokens.name, seed))
        document_frames.append(_documents_frame(spec, data, released, tokens, seed))
        query_frames.append(queries_frame(spec, data, released, seed))
        progress.tick()
    progress.finish()
    return Staged(
        datasets=pl.DataFrame(dataset_rows, schema=DATASET_SCHEMA),
        documents=pl.concat(document_frames) if document_frames else pl.DataFrame(schema=DOCUMENT_SCHEMA),
        queries=pl.concat(query_frames) if query_frames else pl.DataFrame(schema=QUERY_SCHEMA),
    )


_STAGED: frame_cache.SharedInProcess[Staged] = frame_cache.SharedInProcess()


def staged(
    data_dir: str | None,
    size_label: str,
    tokenizer_model: str | None,
    seed: int | str,
    only: str | list[str] | tuple[str, ...] | None = None,
) -> Staged:
    """stage_size with settings resolved, made once per process (the three staging models share
    it) and kept across builds (frame_cache).

    `only` lists "task/dataset" names (a comma-separated string or a list); empty means all.
    """
    root = settings.data_dir(data_dir)
    model = settings.tokenizer_model(tokenizer_model, root)
    wanted = registry.parse_selection(only)
    key = (str(root), size_label, str(model), int(seed), wanted)

    def land_or_reuse() -> Staged:
        fingerprint = _inputs_fingerprint(root, model, key)

        def land() -> dict[str, pl.DataFrame]:
            landed = stage_size(root, size_label, model, int(seed), wanted)
            return {name: getattr(landed, name) for name in LANDED_FRAMES}

        frames, reused = frame_cache.kept("staging", fingerprint, LANDED_FRAMES, land)
        if reused:
            print(f"staging {size_label}: reused the frames of unchanged inputs ({fingerprint[:12]})")
        return Staged(**frames)

    return _STAGED.get(key, land_or_reuse)


def _inputs_fingerprint(root: Path, model: Path, key: tuple) -> str:
    """What decides a size's landed frames: the code, the settings, and every file under the data
    directory and the tokenizer model by path, size and modification time."""
    files = sorted([*(p for p in root.rglob("*") if p.is_file()), Path(model)])
    return frame_cache.key_of(
        "staging",
        [
            [str(k) for k in key],
            *(os.environ.get(name, "") for name in ("LOFT_MAX_LINE_BYTES", "LOFT_MAX_TEXT_BYTES")),
            *map(frame_cache.file_stamp, files),
        ],
    )
