"""R&R's paginated document prompts (seed 001 §3, App. A), over any corpus.

A document is a sequence of `<PAGE p>` blocks separated by blank lines; page p is the document
at position p - 1 of the prompt's arrangement (so pages map back to pids through prompt_doc_ids).
Reprompting puts an instructions reminder (with the question) between pages every
`reprompt_every` content tokens (or where the method places it, R&R Table 6). The prompts open
with the instructions and the question (the row's `head`) and close with them again (`suffix`);
the pages in between are stored once and shared: as the prefix when no reminder interrupts them
(a LOFT corpus read by every query), as runs of pages between this question's reminders, or one
segment per page when the document is the question's own (the R&R study datasets).

- render_qa: the Baseline / Reprompt prompt (answer the question from the document).
- render_icr: ICR phase 1 (identify up to k pages), with R&R's reminders, or one call per chunk.
- answer_from_pages: ICR phase 2, the QA prompt over the pages phase 1 chose (qa_text).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from loft_warehouse.design import Design
from loft_warehouse.methods.catalogue import Method
from loft_warehouse.methods.stages import Call, Upstream
from loft_warehouse.prompts.inputs import Collection, Doc, Query
from loft_warehouse.prompts.render import Anchor, PromptRow, Rendered
from loft_warehouse.prompts.templates import split_at, template
from loft_warehouse.prompts.variants import Variant, arrange


@dataclass(frozen=True)
class Page:
    """One page of a document: its number (position + 1) and the document it holds."""

    number: int
    doc: Doc

    @property
    def text(self) -> str:
        content = f"{self.doc.title}\n{self.doc.text}" if self.doc.title else self.doc.text
        return template("rr_page").format(number=self.number, content=content)


def arrange_rr(collection: Collection, variant: Variant) -> list[Doc]:
    """An R&R study document: distractors (the corpus after its gold passages, in draw order)
    while the document stays within document_tokens; the answer passage inserted after the
    distractors that fill answer_tokens, or the gold passages spread evenly when no answer
    position is set (HotpotQA)."""
    gold_pids = {pid for query in collection.evaluated for pid in query.gold_pids}
    gold = [d for d in collection.docs if d.pid in gold_pids]
    others = [d for d in collection.docs if d.pid not in gold_pids]
    budget = (variant.document_tokens or 0) - sum(d.n_tokens for d in gold)
    kept, used = [], 0
    for doc in others:
        if used + doc.n_tokens > budget:
            break
        kept.append(doc)
        used += doc.n_tokens
    if variant.answer_tokens is None:
        at = [round((j + 1) * len(kept) / (len(gold) + 1)) for j in range(len(gold))]
        arranged, start = [], 0
        for position, doc in zip(at, gold, strict=True):
            arranged += kept[start:position] + [doc]
            start = position
        return arranged + kept[start:]
    before, used = 0, 0
    while before < len(kept) and used + kept[before].n_tokens <= variant.answer_tokens:
        used += kept[before].n_tokens
        before += 1
    return kept[:before] + gold + kept[before:]


def document_order(collection: Collection, variant: Variant) -> list[Doc]:
    """The documents in page order: the R&R arrangement for study variants, else the variant's."""
    return arrange_rr(collection, variant) if variant.family == "rr" else arrange(collection, variant)


def pages_of(collection: Collection, variant: Variant) -> list[Page]:
    return [Page(position + 1, doc) for position, doc in enumerate(document_order(collection, variant))]


def _blocks(pages: Sequence[Page], reminder: str | None, every: int) -> list[list[str]]:
    """Runs of page texts, a reminder between runs every `every` content tokens."""
    runs: list[list[str]] = [[]]
    since = 0
    for index, page in enumerate(pages):
        runs[-1].append(page.text)
        since += page.doc.n_tokens
        if reminder is not None and since >= every and index < len(pages) - 1:
            runs.append([])
            since = 0
    return runs


def _placed(
    pages: Sequence[Page], reminder: str | None, method: Method, design: Design, gold: set[str]
) -> list[list[str]]:
    """Runs of page texts with a reminder between runs, where the method places them (R&R
    Table 6): every interval; as many, all before the first page (at_beginning); right before
    each gold page (before_answer)."""
    if method.placement == "before_answer":
        runs: list[list[str]] = [[]]
        for page in pages:
            if page.doc.pid in gold:
                runs.append([])
            runs[-1].append(page.text)
        return runs
    runs = _blocks(pages, reminder, method.every(design))
    if method.placement == "at_beginning":
        return [[] for _ in runs[1:]] + [[page.text for page in pages]]
    return runs


@dataclass(frozen=True)
class _Parts:
    """A prompt as stored: head, prefix, segments, suffix (and where each page's text starts)."""

    head: str
    prefix: str
    segments: tuple[str, ...]
    suffix: str


def _assemble(opening: str, closing: str, runs: list[list[str]], reminder: str | None, own_pages: bool) -> _Parts:
    """Blocks (pages and reminders) are joined by a blank line and the document ends with a
    newline before the closing tag: every stored part ends in a newline, the last block's
    taking the one the closing text starts with. A question's own pages are one segment each;
    pages every query shares are stored as runs between the question's reminders."""
    blocks: list[str] = []
    for index, run in enumerate(runs):
        if index and reminder is not None:
            blocks.append(reminder)
        blocks.extend(run)
    if not blocks:
        return _Parts(opening, "", (), closing)
    texts = [block + ("\n\n" if i < len(blocks) - 1 else "\n") for i, block in enumerate(blocks)]
    suffix = closing[1:] if closing.startswith("\n") else closing
    if own_pages:
        return _Parts(opening, "", tuple(texts), suffix)
    parts: list[str] = []
    at = 0
    for index, run in enumerate(runs):
        if index and reminder is not None:
            parts.append(texts[at])
            at += 1
        parts.append("".join(texts[at : at + len(run)]))
        at += len(run)
    return _Parts(opening, parts[0], tuple(part for part in parts[1:] if part), suffix)


def _row(collection: Collection, query: Query, parts: _Parts, pages: Sequence[Page], call_index: int = 0) -> PromptRow:
    turn = query.turns[0]
    gold = set(turn.gold_pids)
    positions = tuple(p.number - 1 for p in pages if p.doc.pid in gold)
    return PromptRow(
        qid=query.qid,
        split=query.split,
        turn=0,
        n_turns=1,
        head=parts.head,
        prefix=parts.prefix,
        suffix=parts.suffix,
        gold_json=turn.gold_json,
        gold_shown_ids=tuple(str(p.number) for p in pages if p.doc.pid in gold),
        segments=parts.segments,
        gold_positions=positions,
        gold_anchor=_anchor(parts, pages, gold),
        call_index=call_index,
    )


def _anchor(parts: _Parts, pages: Sequence[Page], gold: set[str]) -> Anchor | None:
    """Where the first gold page (in document order) starts: the part holding its tag."""
    first = min((p for p in pages if p.doc.pid in gold), key=lambda p: p.number, default=None)
    if first is None:
        return None
    tag = template("rr_page").format(number=first.number, content="\x00").partition("\x00")[0]
    if parts.prefix.startswith(tag) or f"\n{tag}" in parts.prefix:
        return ("prefix", 0, _line_index(parts.prefix, tag))
    for index, segment in enumerate(parts.segments):
        if segment.startswith(tag) or f"\n{tag}" in segment:
            return ("segment", index, _line_index(segment, tag))
    return None


def _line_index(text: str, tag: str) -> int:
    """Offset of the line starting with tag."""
    return 0 if text.startswith(tag) else text.index(f"\n{tag}") + 1


def single_turn(collection: Collection) -> list[Query]:
    """The evaluated queries a page prompt can ask: single-turn ones."""
    return [q for q in collection.evaluated if len(q.turns) == 1]


def render_qa(collection: Collection, variant: Variant, method: Method, design: Design, seed: int = 0) -> Rendered:
    """The document QA prompt (R&R Baseline, asking for the page with the answer; Table 4's
    answer_only without it); with the method's reminders every `every` tokens (Reprompt)."""
    pages = pages_of(collection, variant)
    own = variant.family == "rr"
    fmt = template("rr_qa_page_format" if method.page_with_answer else "rr_qa_format")
    rows = []
    for query in single_turn(collection):
        question = query.turns[0].text
        opening, closing = split_at("rr_qa", "document", question=question, format_instructions=fmt)
        reminder = _qa_reminder(method, question, fmt)
        runs = _placed(pages, reminder, method, design, set(query.turns[0].gold_pids))
        rows.append(_row(collection, query, _assemble(opening, closing, runs, reminder, own), pages))
    return _rendered(rows, pages, method.name)


def _qa_reminder(method: Method, question: str, fmt: str) -> str | None:
    """The QA reminder block: with the question, or (tags_only) alluding to the instructions."""
    if not method.reminders:
        return None
    if method.placement == "tags_only":
        return template("rr_qa_reminder_tags")
    return template("rr_qa_reminder").format(question=question, format_instructions=fmt)


def _chunks(pages: Sequence[Page], tokens: int) -> list[list[Page]]:
    """Consecutive pages in chunks of about `tokens` content tokens (a page never splits)."""
    chunks: list[list[Page]] = [[]]
    used = 0
    for page in pages:
        if chunks[-1] and used + page.doc.n_tokens > tokens:
            chunks.append([])
            used = 0
        chunks[-1].append(page)
        used += page.doc.n_tokens
    return [chunk for chunk in chunks if chunk]


def render_icr(collection: Collection, variant: Variant, method: Method, design: Design, seed: int = 0) -> Rendered:
    """ICR phase 1: identify up to the method's `pages` pages (R&R: with its reminders; chunked:
    one call per chunk of its `chunk` tokens)."""
    pages = pages_of(collection, variant)
    own = variant.family == "rr"
    fmt = template("rr_icr_format")
    k = method.pages(design)
    parts_of_pages = _chunks(pages, method.chunk(design)) if method.chunked else [pages]
    rows = []
    for query in single_turn(collection):
        question = query.turns[0].text
        opening, closing = split_at("rr_icr", "document", question=question, format_instructions=fmt, k=k)
        reminder = (
            template("rr_icr_reminder").format(question=question, format_instructions=fmt, k=k)
            if method.reminders
            else None
        )
        for call_index, chunk in enumerate(parts_of_pages):
            runs = _blocks(chunk, reminder, method.every(design))
            rows.append(_row(collection, query, _assemble(opening, closing, runs, reminder, own), chunk, call_index))
    return _rendered(rows, pages, method.name)


def _rendered(rows: list[PromptRow], pages: Sequence[Page], method: str) -> Rendered:
    """Every row carries its own prefix (chunks differ; store.build stores each text once)."""
    return Rendered(prefix="", shown=tuple((str(p.number), p.doc.pid) for p in pages), rows=tuple(rows), method=method)


def answer_from_pages(upstream: Upstream) -> list[Call]:
    """ICR phase 2: R&R's QA prompt over the pages stage 1 named, the first `pages` valid
    pages of each call (chunked ICR: of every chunk, pooled in chunk order), shown in document
    order with their own numbers; no page named, no prompt."""
    pooled: list[str] = []
    per_call = upstream.method.pages(upstream.design)
    for row in sorted(upstream.rows, key=lambda r: r["call_index"]):
        for pid in upstream.maps.pids(upstream.key, upstream.answers(row), "pages")[:per_call]:
            if pid not in pooled:
                pooled.append(pid)
    if not pooled:
        return []
    position = {pid: p for p, pid in upstream.maps.by_position.get(upstream.key, {}).items()}
    docs = upstream.documents(pooled)
    pages = sorted((Page(position[d.pid] + 1, d) for d in docs), key=lambda p: p.number)
    shown = tuple(str(p.number) for p in pages)
    return [Call(0, "", qa_text(upstream.question, pages), [p.doc for p in pages], shown=shown)]


def qa_text(question: str, pages: Sequence[Page]) -> str:
    """The phase-2 QA prompt over the chosen pages (in document order), as one text: the
    Baseline prompt, which asks for the page with the answer (seed 001 §5.2)."""
    fmt = template("rr_qa_page_format")
    document = "\n\n".join(page.text for page in sorted(pages, key=lambda p: p.number))
    return template("rr_qa").format(question=question, format_instructions=fmt, document=document)
