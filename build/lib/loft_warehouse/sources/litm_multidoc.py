"""Lost in the Middle multi-document QA (seed 004, loft-reference §7) over NaturalQuestions-Open.

Questions and their gold passage come from `raw/lost_in_the_middle/nq-open-oracle.jsonl.gz`
(qid `nq-{line}`). Every question reads a corpus of its own: its gold passage, then
`options.max_documents - 1` distractors in a fixed order; the prompt variants take the first
k - 1 of them and put the gold passage at index i, as the paper's data script does.

Distractors: when the data dir holds the paper's own multi-document files
(`nq-open-{k}_total_documents_gold_at_{i}.jsonl.gz`, format in seed 004), those of the file with
the largest k are used in the file's (retrieval) order, so every (k, i) variant reproduces the
paper's inputs. Otherwise each question draws them (sources.distractors) from the other
questions' gold passages that hold none of its answers: seeded, the same at every size.

Gold: the NQ answer aliases (scored with best-subspan EM on the first line of the answer).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from loft_warehouse.errors import BadInputError, ConfigurationError
from loft_warehouse.readers import read_jsonl, require
from loft_warehouse.registry import DatasetSpec
from loft_warehouse.sources.base import CorpusRequest, Document, Query, SourceData
from loft_warehouse.sources.distractors import DistractorPool, in_corpus, take_count
from loft_warehouse.sources.passages import PassagePool, string_list

FOLDER = Path("raw/lost_in_the_middle")
ORACLE = FOLDER / "nq-open-oracle.jsonl.gz"
_ORIGINAL = re.compile(r"nq-open-(\d+)_total_documents_gold_at_(\d+)\.jsonl\.gz$")


def original_file(root: Path) -> Path | None:
    """The paper's multi-document file with the most documents, if the data dir has any."""
    found = []
    for path in (root / FOLDER).glob("nq-open-*_total_documents_gold_at_*.jsonl.gz"):
        match = _ORIGINAL.search(path.name)
        if match:
            found.append((int(match.group(1)), -int(match.group(2)), path))
    return max(found)[2] if found else None


def _contexts(record: dict[str, Any], path: Path, row: int) -> list[dict[str, Any]]:
    contexts = record["ctxs"]
    if not isinstance(contexts, list) or not all(isinstance(c, dict) for c in contexts):
        raise BadInputError(path, row, "ctxs must be a list of objects")
    for context in contexts:
        require(context, ("title", "text", "isgold"), path, row)
    return contexts


def max_documents(spec: DatasetSpec) -> int:
    """Documents per question corpus (options.max_documents, default 30: the paper's largest k)."""
    value = spec.options.get("max_documents", 30)
    if not isinstance(value, int) or value < 2:
        raise ConfigurationError(f"{spec.task}/{spec.dataset}: options.max_documents must be an integer >= 2")
    return value


def load(spec: DatasetSpec, root: Path) -> SourceData:
    """Questions with their gold passage; corpora are built for the questions a size needs."""
    original = original_file(root)
    path = original or root / ORACLE
    pool = PassagePool("nq", path)
    queries: list[Query] = []
    ordered: dict[str, list[str]] = {}
    for row, record in read_jsonl(path):
        require(record, ("question", "answers", "ctxs"), path, row)
        gold: list[str] = []
        distractors: list[str] = []
        for context in _contexts(record, path, row):
            pid = pool.add(str(context["title"]), str(context["text"]), row)
            (gold if context["isgold"] else distractors).append(pid)
        if len(gold) != 1:
            raise BadInputError(path, row, f"expected exactly one gold passage (isgold), found {len(gold)}")
        qid = f"nq-{row}"
        text = str(record["question"]).strip()
        if not text:
            raise BadInputError(path, row, f"query {qid!r} has empty text")
        queries.append(
            Query(
                qid=qid,
                turns=[text],
                gold=[string_list(record["answers"], "answers", path, row)],
                source_file=str(path),
                source_row=row,
                gold_pids=[gold],
                relevant_pids=gold,
                corpus_id=qid,
            )
        )
        ordered[qid] = distractors
    by_pid = {d.pid: d for d in pool.documents}
    limit = max_documents(spec) - 1
    if original is not None:
        short = [q.qid for q in queries if len(ordered[q.qid]) < limit]
        if short:
            raise BadInputError(
                path, None, f"{len(short)} question(s) have fewer than {limit} distractors, e.g. {short[0]}"
            )

    def corpus_for(request: CorpusRequest) -> list[Document]:
        distractor_pool = DistractorPool(pool.documents)
        documents: list[Document] = []
        for query in request.queries:
            gold_pid = query.gold_pids[0][0]
            if original is not None:
                drawn = [by_pid[pid] for pid in ordered[query.qid][:limit]]
            else:
                draw = distractor_pool.draw(request.seed, f"litm:{query.qid}", query.gold[0], {gold_pid})
                drawn = take_count(limit)(draw)
            documents.append(in_corpus(by_pid[gold_pid], query.qid, None))
            documents.extend(in_corpus(d, query.qid, rank) for rank, d in enumerate(drawn))
        return documents

    return SourceData([], queries, corpus_for)
