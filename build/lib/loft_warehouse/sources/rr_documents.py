"""R&R document QA (seed 001 §4.1, loft-reference §8): one long paginated document per question.

`source_name` picks the questions: `nq` (NQ-Open oracle, one gold passage per question) or
`hotpotqa` (IRCoT HotpotQA, the supporting paragraphs are the gold). A question's corpus holds its
gold passage(s), then distractors in a seeded per-question order (sources.distractors) while the
content tokens of the whole corpus stay within the size's budget: the longest document the size
can hold. Prompt variants take a prefix of the distractors for a document length d and place
the answer passage about x tokens in (NQ) or spread the gold passages evenly (HotpotQA, as the
paper does). Distractors are other questions' passages that hold none of the question's answers
(for HotpotQA also none of its own context paragraphs).

Gold: the answer strings (scored with R&R's symmetric fuzzy match).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from loft_warehouse.errors import ConfigurationError
from loft_warehouse.readers import read_jsonl
from loft_warehouse.registry import DatasetSpec
from loft_warehouse.sources import hotpotqa_ircot, nq_open_oracle
from loft_warehouse.sources.base import CorpusRequest, Document, Query, SourceData
from loft_warehouse.sources.distractors import DistractorPool, in_corpus, take_tokens
from loft_warehouse.sources.passages import content_pid

SOURCES = {"nq": nq_open_oracle, "hotpotqa": hotpotqa_ircot}


def load(spec: DatasetSpec, root: Path) -> SourceData:
    """The source's questions and passage pool; corpora are built for the questions a size needs."""
    module = SOURCES.get(spec.source_name or "")
    if module is None:
        raise ConfigurationError(f"{spec.task}/{spec.dataset}: source_name must be one of {sorted(SOURCES)}")
    # Loaded as a RAG dataset: gold = answer strings, gold_pids = the passages that hold them.
    data = module.load(replace(spec, task="rag"), root)
    by_pid = {d.pid: d for d in data.documents}
    own_passages = _own_passages(spec, root) if spec.source_name == "hotpotqa" else {}
    queries = [
        Query(
            qid=q.qid,
            turns=q.turns,
            gold=q.gold,
            source_file=q.source_file,
            source_row=q.source_row,
            gold_pids=q.gold_pids,
            relevant_pids=q.relevant_pids,
            corpus_id=q.qid,
        )
        for q in data.queries
    ]

    def corpus_for(request: CorpusRequest) -> list[Document]:
        pool = DistractorPool(data.documents)
        documents: list[Document] = []
        for query in request.queries:
            gold = [by_pid[pid] for pid in query.gold_pids[0]]
            room = request.budget - sum(request.n_tokens(d) for d in gold)
            if room < 0:
                raise ConfigurationError(
                    f"{spec.task}/{spec.dataset}: the gold passages of {query.qid} alone exceed "
                    f"the {request.budget}-token budget"
                )
            exclude = set(query.gold_pids[0]) | own_passages.get(query.qid, set())
            draw = pool.draw(request.seed, f"rr:{spec.source_name}:{query.qid}", query.gold[0], exclude)
            drawn = take_tokens(room, request.n_tokens)(draw)
            documents.extend(in_corpus(d, query.qid, None) for d in gold)
            documents.extend(in_corpus(d, query.qid, rank) for rank, d in enumerate(drawn))
        return documents

    return SourceData([], queries, corpus_for)


def _own_passages(spec: DatasetSpec, root: Path) -> dict[str, set[str]]:
    """HotpotQA: every paragraph listed with a question (its supporting and its own distractors)."""
    path = root / hotpotqa_ircot.RELATIVE_PATH
    own: dict[str, set[str]] = {}
    for _, record in read_jsonl(path):
        own[str(record["question_id"])] = {
            content_pid("hotpotqa", str(c["title"]).strip(), str(c["paragraph_text"]).strip())
            for c in record["contexts"]
        }
    return own
