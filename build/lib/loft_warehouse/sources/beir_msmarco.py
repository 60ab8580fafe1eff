"""MS MARCO in BEIR format: corpus.jsonl, queries.jsonl and graded qrels/test.tsv.

Every corpus row is a candidate and keeps its `_id` as pid; a repeated `_id` is passed through
so that staging rejects it (naming both rows) instead of one row silently winning. Relevance is
graded (1-3 in this subset); qrels with score > 0 are relevant. At most spec.max_gold of them
are gold (LOFT: 5), the highest grade first and, within a grade, in qrels file order; all
relevant passages stay out of the random fillers. A query with no positive qrel gets empty gold
and is never selected. A qrel naming an unknown query or passage is bad input.
"""

from __future__ import annotations

from pathlib import Path

from loft_warehouse.errors import BadInputError, ConfigurationError
from loft_warehouse.readers import read_jsonl, read_lines, require
from loft_warehouse.registry import DatasetSpec
from loft_warehouse.sources.base import Document, SourceData, as_loft_loads
from loft_warehouse.sources.passages import passage_query

RELATIVE_DIR = Path("raw/beir_subsets/msmarco")
QRELS_HEADER = ["query-id", "corpus-id", "score"]


def _corpus(path: Path) -> list[Document]:
    documents = []
    for row, record in read_jsonl(path):
        require(record, ("_id", "text"), path, row)
        text = str(record["text"]).strip()
        if not text:
            raise BadInputError(path, row, f"passage {record['_id']!r} has empty text")
        documents.append(
            Document(
                pid=str(record["_id"]),
                title=as_loft_loads(str(record.get("title") or "")),
                text=as_loft_loads(text),
                source_file=str(path),
                source_row=row,
            )
        )
    return documents


def read_qrels(path: Path) -> list[tuple[int, str, str, int]]:
    """(line, query-id, corpus-id, score) for each qrel; an optional BEIR header on line 1."""
    qrels = []
    for line_no, line in read_lines(path):
        if not line.strip():
            continue
        fields = line.rstrip("\r\n").split("\t")
        if line_no == 1 and fields == QRELS_HEADER:
            continue
        if len(fields) != 3:
            raise BadInputError(
                path,
                line_no,
                f"expected 3 tab-separated columns (query-id corpus-id score), got {len(fields)}",
            )
        query_id, corpus_id, score = (f.strip() for f in fields)
        try:
            grade = int(score)
        except ValueError as exc:
            raise BadInputError(path, line_no, f"score {score!r} is not an integer") from exc
        qrels.append((line_no, query_id, corpus_id, grade))
    return qrels


def _relevant(qrels_path: Path, query_ids: set[str], pids: set[str]) -> dict[str, list[str]]:
    """Relevant pids per query, highest grade first, ties in file order."""
    graded: dict[str, list[tuple[int, int, str]]] = {}
    first: dict[tuple[str, str], int] = {}
    for line_no, query_id, corpus_id, grade in read_qrels(qrels_path):
        if query_id not in query_ids:
            raise BadInputError(qrels_path, line_no, f"query-id {query_id!r} is not in queries.jsonl")
        if corpus_id not in pids:
            raise BadInputError(qrels_path, line_no, f"corpus-id {corpus_id!r} is not in corpus.jsonl")
        earlier = first.setdefault((query_id, corpus_id), line_no)
        if earlier != line_no:
            raise BadInputError(
                qrels_path,
                line_no,
                f"repeated qrel {query_id} {corpus_id} (first at line {earlier})",
            )
        if grade > 0:
            graded.setdefault(query_id, []).append((-grade, line_no, corpus_id))
    return {qid: [pid for *_, pid in sorted(items)] for qid, items in graded.items()}


def load(spec: DatasetSpec, root: Path) -> SourceData:
    """Every passage and every query (queries without positive qrels get empty gold)."""
    if spec.task != "retrieval":
        raise ConfigurationError(f"MS MARCO has no answer strings: it builds retrieval only, not {spec.task}")
    folder = root / RELATIVE_DIR
    documents = _corpus(folder / "corpus.jsonl")
    queries_path = folder / "queries.jsonl"
    records = []
    first_row: dict[str, int] = {}
    for row, record in read_jsonl(queries_path):
        require(record, ("_id", "text"), queries_path, row)
        qid = str(record["_id"])
        if qid in first_row:
            raise BadInputError(queries_path, row, f"duplicate query _id {qid!r} (first at line {first_row[qid]})")
        first_row[qid] = row
        records.append((row, qid, str(record["text"])))
    relevant = _relevant(folder / "qrels" / "test.tsv", set(first_row), {d.pid for d in documents})
    queries = [
        passage_query(spec, qid, text, relevant.get(qid, []), [], queries_path, row) for row, qid, text in records
    ]
    return SourceData(documents, queries)
