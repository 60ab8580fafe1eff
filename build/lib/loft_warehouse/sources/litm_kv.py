"""Lost in the Middle key-value retrieval (seed 004, loft-reference §7).

Every `raw/lost_in_the_middle/kv-retrieval-{n}_keys.jsonl.gz` present is read (the shared data
has the 75-key file; 140- and 300-key files are read when a user's data dir has them). Each line
is one item: `ordered_kv_records` ([key, value] pairs), the queried `key` and its `value`. An item
is a question (qid `kv{n}-{line}`) whose corpus is its own pairs: one document per pair (pid =
the key, text = the value), in the file's order with the queried pair taken out and put first, as
the paper's script pops it before inserting it at the position under test.

Gold: the value (correct iff it appears in the answer).
"""

from __future__ import annotations

import re
from pathlib import Path

from loft_warehouse.errors import BadInputError
from loft_warehouse.readers import read_jsonl, require
from loft_warehouse.registry import DatasetSpec
from loft_warehouse.sources.base import CorpusRequest, Document, Query, SourceData

FOLDER = Path("raw/lost_in_the_middle")
_FILE = re.compile(r"kv-retrieval-(\d+)_keys\.jsonl\.gz$")


def files(root: Path) -> list[tuple[int, Path]]:
    """(number of keys, path) of every key-value file in the data dir, fewest keys first."""
    found = [
        (int(m.group(1)), p)
        for p in (root / FOLDER).glob("kv-retrieval-*_keys.jsonl.gz")
        if (m := _FILE.search(p.name))
    ]
    return sorted(found)


def _pairs(value: object, path: Path, row: int) -> list[tuple[str, str]]:
    if not isinstance(value, list) or not all(
        isinstance(p, list) and len(p) == 2 and all(isinstance(x, str) for x in p) for p in value
    ):
        raise BadInputError(path, row, "ordered_kv_records must be a list of [key, value] string pairs")
    keys = [k for k, _ in value]
    if len(set(keys)) != len(keys):
        raise BadInputError(path, row, "ordered_kv_records has duplicate keys")
    return [(k, v) for k, v in value]


def load(spec: DatasetSpec, root: Path) -> SourceData:
    """Every item of every key-value file; an item's pairs are its corpus."""
    found = files(root)
    if not found:
        raise BadInputError(root / FOLDER, None, "no kv-retrieval-{n}_keys.jsonl.gz file")
    queries: list[Query] = []
    corpora: dict[str, list[Document]] = {}
    for n_keys, path in found:
        for row, record in read_jsonl(path):
            require(record, ("ordered_kv_records", "key", "value"), path, row)
            pairs = _pairs(record["ordered_kv_records"], path, row)
            key, value = str(record["key"]), str(record["value"])
            if (key, value) not in pairs:
                raise BadInputError(path, row, f"the queried pair ({key!r}, {value!r}) is not in ordered_kv_records")
            if len(pairs) != n_keys:
                raise BadInputError(path, row, f"{len(pairs)} pairs in a {n_keys}-key file")
            qid = f"kv{n_keys}-{row}"
            ordered = [(key, value)] + [p for p in pairs if p[0] != key]
            corpora[qid] = [
                Document(
                    pid=k,
                    text=v,
                    title=None,
                    source_file=str(path),
                    source_row=row,
                    corpus_id=qid,
                    draw_rank=None if index == 0 else index - 1,
                )
                for index, (k, v) in enumerate(ordered)
            ]
            queries.append(
                Query(
                    qid=qid,
                    turns=[key],
                    gold=[[value]],
                    source_file=str(path),
                    source_row=row,
                    gold_pids=[[key]],
                    relevant_pids=[key],
                    corpus_id=qid,
                )
            )

    def corpus_for(request: CorpusRequest) -> list[Document]:
        return [document for query in request.queries for document in corpora[query.qid]]

    return SourceData([], queries, corpus_for)
