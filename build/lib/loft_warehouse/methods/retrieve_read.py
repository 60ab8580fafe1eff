"""Retrieve-then-read (LOFT's specialised RAG baseline, seed 000 §4.4; QUEST-LOFT's RaR, seed 002
§3.5) with BM25 as the retriever.

Stage 1 is no model call: bm25 ranks the prompt variant's corpus for the query (its "prompt" is
the query text) and answers with the top k shown IDs. Stage 2 is the reader prompt: the dataset's
RAG instruction, the few-shot examples each with its own top-k passages (ranked by the same
bm25 at build time) and its answer, then the query's top-k passages in rank order and the query.
Passages are numbered 0..k-1 within each context, in the corpus line format of the CiC prompt.
"""

from __future__ import annotations

from collections.abc import Sequence

from loft_warehouse.bm25 import BM25Index, document_text
from loft_warehouse.design import Design
from loft_warehouse.methods.catalogue import Method
from loft_warehouse.methods.stage1 import single_turn_rows
from loft_warehouse.methods.stages import Call, Upstream
from loft_warehouse.prompts import instructions
from loft_warehouse.prompts.inputs import Collection, Doc, Query
from loft_warehouse.prompts.multiturn import final_answer
from loft_warehouse.prompts.render import (
    EXAMPLE_SEPARATOR,
    TEST_SEPARATOR,
    Rendered,
    corpus_line,
)
from loft_warehouse.prompts.variants import Variant, arrange, shown_ids


def render_stage1(collection: Collection, variant: Variant, method: Method, design: Design, seed: int) -> Rendered:
    """One retrieval step per single-turn query: the query text is all bm25 reads."""
    docs = arrange(collection, variant)
    ids = shown_ids(collection, variant, len(docs), seed)
    rows = single_turn_rows(collection, docs, ids, lambda question: question)
    return Rendered(
        prefix="", shown=tuple((s, d.pid) for s, d in zip(ids, docs, strict=True)), rows=rows, method=method.name
    )


def _context(docs: Sequence[Doc], has_title: bool) -> tuple[str, dict[str, str]]:
    """The passages as corpus lines numbered 0..k-1, and each pid's number."""
    numbers = {doc.pid: str(i) for i, doc in enumerate(docs)}
    return "".join(corpus_line(numbers[d.pid], d, has_title) for d in docs), numbers


def reader_prefix(collection: Collection, method: Method) -> str:
    """Instruction and few-shot examples, each with its own top-k bm25 passages and its answer."""
    assert method.top_k is not None
    wording = instructions.wording(collection.task, collection.dataset, collection.has_title)
    index = BM25Index([document_text(d.title, d.text) for d in collection.docs])
    parts = [wording.instruction + "\n"]
    if wording.formatting is not None:
        parts.append(wording.formatting + "\n")
    for n, example in enumerate(collection.few_shot, start=1):
        turn = example.turns[0]
        retrieved = [collection.docs[i] for i in index.top(turn.text, method.top_k)]
        context, numbers = _context(retrieved, wording.title_in_corpus)
        parts.append(EXAMPLE_SEPARATOR.format(n=n) + context + wording.query_block(turn.text))
        gold = [d for d in retrieved if d.pid in turn.gold_pids]
        parts.extend(wording.reasoning_line(numbers[d.pid], d.title, d.text) for d in gold)
        parts.append(final_answer(wording.example_answers(turn.gold)) + "\n")
    return "".join(parts)


def reader_suffix(collection: Collection, query: Query, retrieved: Sequence[Doc]) -> str:
    """The query's passages (rank order) and the query block, ending where the answer starts."""
    wording = instructions.wording(collection.task, collection.dataset, collection.has_title)
    context, _ = _context(retrieved, wording.title_in_corpus)
    return TEST_SEPARATOR + context + wording.query_block(query.turns[0].text)


def reader(upstream: Upstream) -> list[Call]:
    """Stage 2: the reader prompt over bm25's top k (its answer's first k shown IDs)."""
    method = upstream.method
    pids = upstream.retrieved()
    if not pids:
        return []
    cache_key = (*upstream.key, method.name)
    if cache_key not in upstream.cache:
        upstream.cache[cache_key] = reader_prefix(upstream.collection, method)
    docs = upstream.documents(pids)
    suffix = reader_suffix(upstream.collection, upstream.query, docs)
    return [Call(0, upstream.cache[cache_key], suffix, docs, shown=tuple(str(i) for i in range(len(docs))))]
