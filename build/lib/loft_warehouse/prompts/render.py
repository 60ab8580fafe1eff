"""Corpus-in-Context rendering for retrieval, RAG and many-shot ICL as LOFT's prompt code builds
it (paper §3, Fig. 3 and 11); SQL prompts come from the SQL track (loft_warehouse.prompts.sql)
and are split here.

The prompt is a sequence of text chunks, each ending in exactly one newline, concatenated with
nothing in between (loft-reference §3): the instruction (and LOFT's answer-format block), one
line per corpus document, one block per few-shot example turn, then the query block.
Everything up to the query is shared by all queries of a corpus and forms the prefix; each
query turn adds only its suffix, which ends where the model continues.

Few-shot reasoning is one `TITLE: t | ID: i` line per gold document (CONTENT for titleless
datasets), as in Fig. 11; with the paper's wording, RAG examples with a hand-written chain in
reasoning.yaml add its `reasoning:` lines (App. D.2, G). Final answers are Python-literal lists.
The wording (instructions.Wording) is LOFT's by default, the paper's for paper_wording.
"""

from __future__ import annotations

import random
import zlib
from dataclasses import dataclass

from loft_warehouse.errors import BadInputError
from loft_warehouse.prompts import instructions, reasoning
from loft_warehouse.prompts import sql as sql_prompt
from loft_warehouse.prompts.inputs import Collection, Doc, Query, Turn
from loft_warehouse.prompts.multiturn import final_answer, placeholder
from loft_warehouse.prompts.variants import Variant, arrange, shown_ids

EXAMPLE_SEPARATOR = "====== Example {n} ======\n"
TEST_SEPARATOR = "====== Now let's start! ======\n"
# query_at_beginning (Fig. 13): after the query comes the context, then the call to answer.
CONTEXT_SEPARATOR = "====== Here is the context to read before answering the query ======\n"
ANSWER_SEPARATOR = "====== Now answer the query! ======\n"
MINI_CORPUS_SIZE = 10
# Stands for the question when finding the question-independent start of a SQL query block.
QUESTION_MARK = "<<QUESTION>>"


# Where the first gold document starts, always at the start of a line: the part holding it
# ("head" | "prefix" | "segment" | "suffix"), the segment's index (0 for the other parts) and
# the character offset within that part.
Anchor = tuple[str, int, int]


@dataclass(frozen=True)
class PromptRow:
    """One query turn's own text: `head` (before the prefix; only query_at_beginning and
    prompts that open with the question), `segments` (stored blocks between the prefix and the
    suffix: the documents of prompts that share no prefix, such as one question's pages) and
    `suffix`, with its gold, the gold documents' shown IDs and positions (indices into
    Rendered.shown), and where the first gold document starts. call_index numbers the calls one
    query turn makes in one stage (chunked ICR: one per chunk); payload is JSON a later stage
    or the parser needs (e.g. the candidate a verification call judges). prefix, when set,
    replaces Rendered.prefix for this row (chunked ICR: each chunk's pages)."""

    qid: str
    split: str
    turn: int
    n_turns: int
    head: str
    suffix: str
    gold_json: str | None
    gold_shown_ids: tuple[str, ...]
    segments: tuple[str, ...] = ()
    gold_positions: tuple[int, ...] = ()
    gold_anchor: Anchor | None = None
    call_index: int = 0
    payload: str | None = None
    prefix: str | None = None


@dataclass(frozen=True)
class Rendered:
    """One (collection, variant, method): the shared prefix, the shown ID of every document of
    the context in prompt order, and one row per evaluated query turn (and call)."""

    prefix: str
    shown: tuple[tuple[str, str], ...]
    rows: tuple[PromptRow, ...]
    method: str = "cic"


@dataclass(frozen=True)
class _Layout:
    """What the corpus lines and few-shot answers look like in one variant."""

    wording: instructions.Wording
    content: bool
    id_echo: bool
    cot: bool

    @property
    def has_title(self) -> bool:
        return self.wording.title_in_corpus


def corpus_line(shown: str, doc: Doc, has_title: bool, content: bool = True, id_echo: bool = True) -> str:
    """`ID: i | TITLE: t | CONTENT: c | END ID: i`; no TITLE field for titleless datasets, an
    empty title as `None`; title_only drops CONTENT and no_id_echo drops END ID."""
    fields = [f"ID: {shown}"]
    if has_title:
        fields.append(f"TITLE: {doc.title or instructions.DEFAULT_TITLE}")
    if content:
        fields.append(f"CONTENT: {doc.text}")
    if id_echo:
        fields.append(f"END ID: {shown}")
    return " | ".join(fields) + "\n"


def _gold_docs(
    collection: Collection,
    query: Query,
    turn_no: int,
    turn: Turn,
    shown_of: dict[str, str],
    by_pid: dict[str, Doc],
) -> list[tuple[str, Doc]]:
    """(shown ID, document) of a turn's gold documents, in gold order; a gold document missing
    from the corpus is an error naming the query."""
    missing = [pid for pid in turn.gold_pids if pid not in shown_of]
    if missing:
        raise BadInputError(
            f"queries {collection.task}/{collection.dataset}/{collection.corpus_id}",
            f"qid={query.qid} turn={turn_no}",
            f"gold document(s) {missing} not in the corpus",
        )
    return [(shown_of[pid], by_pid[pid]) for pid in turn.gold_pids]


def _answer_values(collection: Collection, layout: _Layout, turn: Turn, gold: list[tuple[str, Doc]]) -> list[str]:
    if collection.task == "retrieval":
        return [shown for shown, _ in gold]
    return layout.wording.example_answers(turn.gold)


def _example_id(n: int, turn_no: int, n_turns: int) -> str:
    """LOFT numbers a multi-turn example's turns `n-1`, `n-2`, ..."""
    return f"{n}-{turn_no + 1}" if n_turns > 1 else str(n)


def _example(
    collection: Collection,
    layout: _Layout,
    n: int,
    query: Query,
    shown_of: dict[str, str],
    by_pid: dict[str, Doc],
    own_corpus: str = "",
) -> str:
    """One few-shot example: its own corpus lines (corpus_in_each_few_shot), then per turn the
    example separator and query block, the reasoning lines and the answer."""
    parts = []
    for turn_no, turn in enumerate(query.turns):
        gold = _gold_docs(collection, query, turn_no, turn, shown_of, by_pid)
        parts.append(EXAMPLE_SEPARATOR.format(n=_example_id(n, turn_no, len(query.turns))))
        if turn_no == 0:
            parts.append(own_corpus)
        parts.append(layout.wording.query_block(turn.text, layout.cot))
        if layout.cot:
            parts.extend(layout.wording.reasoning_line(shown, doc.title, doc.text) for shown, doc in gold)
            if layout.wording.chains and collection.task == "rag" and len(query.turns) == 1:
                parts.extend(reasoning.chain(collection.task, collection.dataset, query.qid, shown_of))
        parts.append(final_answer(_answer_values(collection, layout, turn, gold)) + "\n")
    return "".join(parts)


def _mini_corpus(collection: Collection, query: Query, seed: int) -> list[Doc]:
    """corpus_in_each_few_shot: the example's gold documents, then seeded random others in
    corpus order, ten in all (paper §5 and Fig. 17, where the gold documents take IDs 0 and 1)."""
    gold = set(query.gold_pids)
    by_pid = {d.pid: d for d in collection.docs}
    others = [i for i, d in enumerate(collection.docs) if d.pid not in gold]
    key = f"{collection.task}/{collection.dataset}/{query.qid}".encode()
    rng = random.Random(seed * 1_000_003 + zlib.crc32(key))
    drawn = sorted(rng.sample(others, max(0, min(len(others), MINI_CORPUS_SIZE - len(gold)))))
    gold_docs = [by_pid[pid] for pid in query.gold_pids if pid in by_pid]
    return gold_docs + [collection.docs[i] for i in drawn]


def _turn_rows(
    collection: Collection,
    layout: _Layout,
    variant: Variant,
    query: Query,
    shown_of: dict[str, str],
    by_pid: dict[str, Doc],
    line_start: dict[str, tuple[int, int]],
) -> list[PromptRow]:
    """One row per turn; turn t repeats turns 0..t-1 with placeholders for the model's answers.

    line_start gives, per pid, the prefix offset of its corpus line and its position."""
    rows = []
    wording = layout.wording
    for t, turn in enumerate(query.turns):
        gold = _gold_docs(collection, query, t, turn, shown_of, by_pid)
        earlier = "".join(
            TEST_SEPARATOR + wording.query_block(query.turns[s].text, layout.cot) + placeholder(s) for s in range(t)
        )
        if variant.query_at_beginning:
            question, lead_in = wording.split_query_block(turn.text)
            head = earlier + question + CONTEXT_SEPARATOR
            suffix = ANSWER_SEPARATOR + lead_in
        else:
            head = ""
            suffix = earlier + TEST_SEPARATOR + wording.query_block(turn.text, layout.cot)
        shown_gold = [pair for pair in gold if pair[1].pid in line_start]
        positions = tuple(line_start[doc.pid][1] for _, doc in shown_gold)
        first = min(shown_gold, key=lambda pair: line_start[pair[1].pid][1], default=None)
        rows.append(
            PromptRow(
                qid=query.qid,
                split=query.split,
                turn=t,
                n_turns=len(query.turns),
                head=head,
                suffix=suffix,
                gold_json=turn.gold_json,
                gold_shown_ids=tuple(shown for shown, _ in gold),
                gold_positions=positions,
                gold_anchor=("prefix", 0, line_start[first[1].pid][0]) if first else None,
            )
        )
    return rows


def render_documents(collection: Collection, variant: Variant, seed: int) -> Rendered:
    """Retrieval and RAG: instruction, corpus, few-shot examples; the query comes last."""
    wording = instructions.wording(collection.task, collection.dataset, collection.has_title, variant.wording)
    layout = _Layout(wording, variant.content, variant.id_echo, variant.cot)
    docs = arrange(collection, variant)
    ids = shown_ids(collection, variant, len(docs), seed)
    shown_of = {doc.pid: shown for shown, doc in zip(ids, docs, strict=True)}
    by_pid = {doc.pid: doc for doc in docs}
    few_shot = collection.few_shot[: variant.n_few_shot] if variant.n_few_shot is not None else collection.few_shot
    instruction = (instructions.GENERIC_INSTRUCTION if variant.generic_instruction else wording.instruction) + "\n"
    if wording.formatting is not None:
        instruction += wording.formatting + "\n"
    lines = [
        corpus_line(shown, doc, layout.has_title, layout.content, layout.id_echo)
        for shown, doc in zip(ids, docs, strict=True)
        if variant.corpus
    ]
    if variant.corpus_in_each_few_shot:
        examples = []
        for n, query in enumerate(few_shot, start=1):
            mini = _mini_corpus(collection, query, seed)
            mini_ids = [str(i) for i in range(len(mini))]
            own_corpus = "".join(
                corpus_line(s, d, layout.has_title, layout.content, layout.id_echo)
                for s, d in zip(mini_ids, mini, strict=True)
            )
            mini_shown = {d.pid: s for s, d in zip(mini_ids, mini, strict=True)}
            examples.append(_example(collection, layout, n, query, mini_shown, {d.pid: d for d in mini}, own_corpus))
        before_corpus = instruction + "".join(examples)
        after_corpus = ""
    else:
        examples = [
            _example(collection, layout, n, query, shown_of, by_pid) for n, query in enumerate(few_shot, start=1)
        ]
        before_corpus, after_corpus = instruction, "".join(examples)
    prefix = before_corpus + "".join(lines) + after_corpus
    line_start: dict[str, tuple[int, int]] = {}
    offset = len(before_corpus)
    for position, (doc, line) in enumerate(zip(docs, lines, strict=True) if variant.corpus else ()):
        line_start[doc.pid] = (offset, position)
        offset += len(line)
    rows = [
        row
        for query in collection.evaluated
        for row in _turn_rows(collection, layout, variant, query, shown_of, by_pid, line_start)
    ]
    return Rendered(
        prefix=prefix,
        shown=tuple((shown, doc.pid) for shown, doc in zip(ids, docs, strict=True) if variant.corpus),
        rows=tuple(rows),
    )


# ICL sources LOFT's many-shot prompt does not cover: the warehouse's LIB-dialogue framing
# (sources.dialogre) keeps its own instruction and example layout.
OWN_ICL_SOURCES = frozenset({"dialogre"})


def icl_example(doc: Doc) -> str:
    """A many-shot example as LOFT renders BBH (`{input}\\nOutput: {target.split(" ")}`, then a
    blank line): the target's words as a Python list (`Output: ['(A)']`), the form its parser
    reads back."""
    bbh = instructions.loft_prompts()["icl"]["corpus_format"]["bbh"]
    return bbh.format(input=doc.text, target=(doc.answer or "").split(" ")) + "\n"


def render_icl(collection: Collection, variant: Variant) -> Rendered:
    """Many-shot ICL: LOFT's BBH instruction, the examples, then the test input and `Output: `
    with an empty target, as LOFT's prompt ends; LIB-dialogue: the warehouse's instruction and
    examples without blank lines, the query ending at `Output:`."""
    docs = arrange(collection, variant)
    own = collection.source in OWN_ICL_SOURCES
    if own:
        examples = "".join(f"{d.text}\nOutput: {(d.answer or '').split(' ')!r}\n" for d in docs)
        prefix = instructions.ICL_INSTRUCTION + "\n" + examples
    else:
        prefix = instructions.loft_prompts()["icl"]["corpus_instruction"]["bbh"] + "\n"
        prefix += "".join(icl_example(d) for d in docs)
    bbh = instructions.loft_prompts()["icl"]["corpus_format"]["bbh"]
    rows = []
    for query in collection.evaluated:
        if len(query.turns) != 1:
            raise BadInputError(f"queries icl/{collection.dataset}", f"qid={query.qid}", "ICL queries have one turn")
        turn = query.turns[0]
        suffix = f"{turn.text}\nOutput:" if own else bbh.format(input=turn.text, target="") + "\n"
        rows.append(PromptRow(query.qid, query.split, 0, 1, "", suffix, turn.gold_json, ()))
    return Rendered(prefix=prefix, shown=(), rows=tuple(rows))


def _sql_tables(collection: Collection, query: Query) -> list[tuple[str, str]]:
    """The tables a SQL query shows: its candidate tables (gold_pids) in their order, as LOFT
    takes metadata.candidate_pids (none when it names none; staging has checked that each is a
    table of the query's database)."""
    by_pid = {doc.pid: doc for doc in collection.docs}
    return [(by_pid[pid].title or "", by_pid[pid].text) for pid in query.turns[0].gold_pids]


def render_sql(collection: Collection) -> Rendered:
    """Spider / SParC: the SQL track's prompt (loft_warehouse.prompts.sql), one prefix per
    database. Its query block starts with the database's tables, which the queries of a
    database share: that part (what does not depend on the question) joins the prefix, so
    prefix + suffix is exactly sql_prompt(...) while each database is stored once. A query
    whose tables differ (other candidate tables or order) carries its own prefix."""
    instruction = sql_prompt.sql_prefix(collection.dataset)
    shared = _sql_tables(collection, collection.evaluated[0]) if collection.evaluated else []
    probe = sql_prompt.turn_suffixes(shared, [QUESTION_MARK], collection.dataset)[0] if shared else ""
    before_question = probe[: probe.find(QUESTION_MARK)]
    database_block = before_question[: before_question.rfind("\n") + 1]
    rows = []
    for query in collection.evaluated:
        tables = _sql_tables(collection, query)
        suffixes = sql_prompt.turn_suffixes(tables, [turn.text for turn in query.turns], collection.dataset)
        own = tables != shared
        for t, (turn, suffix) in enumerate(zip(query.turns, suffixes, strict=True)):
            rows.append(
                PromptRow(
                    query.qid,
                    query.split,
                    t,
                    len(query.turns),
                    "",
                    suffix if own else suffix[len(database_block) :],
                    turn.gold_json,
                    (),
                    prefix=instruction if own else None,
                )
            )
    return Rendered(prefix=instruction + database_block, shown=(), rows=tuple(rows))


def render(collection: Collection, variant: Variant, seed: int) -> Rendered:
    """Render one collection in one variant (retrieval, RAG, ICL or SQL)."""
    if collection.task == "icl":
        return render_icl(collection, variant)
    if collection.task == "sql":
        return render_sql(collection)
    return render_documents(collection, variant, seed)
