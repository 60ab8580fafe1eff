"""Corpus-in-Context rendering for retrieval, RAG and many-shot ICL (paper §3, Fig. 3 and 11);
SQL prompts come from the SQL track (loft_warehouse.sql.prompt) and are split here.

The prompt is a sequence of text chunks, each ending in exactly one newline, concatenated with
nothing in between (loft-reference §3): the instruction, one line per corpus document, one block
per few-shot example, then the query block. Everything up to the query is shared by all queries
of a corpus and forms the prefix; each query turn adds only its suffix, which ends where the
model continues (after the answer lead-in line, or after `Output:` for ICL).

Few-shot reasoning is one `TITLE: t | ID: i` line per gold document (CONTENT for titleless
datasets), as in Fig. 11; RAG examples with a hand-written chain in reasoning.yaml add its
`reasoning:` lines (App. D.2, G). Final answers are Python-literal lists of strings.
"""

from __future__ import annotations

import random
import zlib
from dataclasses import dataclass

from loft_warehouse.errors import BadInputError
from loft_warehouse.prompts import instructions, reasoning
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
    has_title: bool
    content: bool
    id_echo: bool
    cot: bool


def corpus_line(shown: str, doc: Doc, has_title: bool, content: bool = True, id_echo: bool = True) -> str:
    """`ID: i | TITLE: t | CONTENT: c | END ID: i`; no TITLE field for titleless datasets, an
    empty title as `None`; title_only drops CONTENT and no_id_echo drops END ID."""
    fields = [f"ID: {shown}"]
    if has_title:
        fields.append(f"TITLE: {doc.title or 'None'}")
    if content:
        fields.append(f"CONTENT: {doc.text}")
    if id_echo:
        fields.append(f"END ID: {shown}")
    return " | ".join(fields) + "\n"


def reasoning_line(shown: str, doc: Doc, has_title: bool) -> str:
    """The few-shot chain of thought for one gold document: its title (or content) and ID."""
    quoted = f"TITLE: {doc.title or 'None'}" if has_title else f"CONTENT: {doc.text}"
    return f"{quoted} | ID: {shown}\n"


def _query_block(wording: instructions.Wording, text: str, lead_in: bool = True) -> str:
    block = f"{wording.query_instruction}\nquery: {text}\n"
    return block + f"{wording.lead_in}\n" if lead_in else block


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
    answers = [str(a) for a in (turn.gold or [])]
    return answers if layout.wording.multi_answer else answers[:1]


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
    query block, the reasoning lines and the answer."""
    parts = [EXAMPLE_SEPARATOR.format(n=n), own_corpus]
    for turn_no, turn in enumerate(query.turns):
        gold = _gold_docs(collection, query, turn_no, turn, shown_of, by_pid)
        parts.append(_query_block(layout.wording, turn.text))
        if layout.cot:
            parts.extend(reasoning_line(shown, doc, layout.has_title) for shown, doc in gold)
            if collection.task == "rag" and len(query.turns) == 1:
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
    for t, turn in enumerate(query.turns):
        gold = _gold_docs(collection, query, t, turn, shown_of, by_pid)
        earlier = "".join(_query_block(layout.wording, query.turns[s].text) + placeholder(s) + "\n" for s in range(t))
        if variant.query_at_beginning:
            head = earlier + _query_block(layout.wording, turn.text, lead_in=False) + CONTEXT_SEPARATOR
            suffix = ANSWER_SEPARATOR + f"{layout.wording.lead_in}\n"
        else:
            head = ""
            suffix = TEST_SEPARATOR + earlier + _query_block(layout.wording, turn.text)
        positions = tuple(line_start[doc.pid][1] for _, doc in gold)
        first = min(gold, key=lambda pair: line_start[pair[1].pid][1], default=None)
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
    wording = instructions.wording(collection.task, collection.dataset, collection.has_title)
    layout = _Layout(wording, collection.has_title, variant.content, variant.id_echo, variant.cot)
    docs = arrange(collection, variant)
    ids = shown_ids(collection, variant, len(docs), seed)
    shown_of = {doc.pid: shown for shown, doc in zip(ids, docs, strict=True)}
    by_pid = {doc.pid: doc for doc in docs}
    few_shot = collection.few_shot[: variant.n_few_shot] if variant.n_few_shot is not None else collection.few_shot
    instruction = instructions.GENERIC_INSTRUCTION if variant.generic_instruction else wording.instruction
    lines = [
        corpus_line(shown, doc, layout.has_title, layout.content, layout.id_echo)
        for shown, doc in zip(ids, docs, strict=True)
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
        before_corpus = instruction + "\n" + "".join(examples)
        after_corpus = ""
    else:
        examples = [
            _example(collection, layout, n, query, shown_of, by_pid) for n, query in enumerate(few_shot, start=1)
        ]
        before_corpus, after_corpus = instruction + "\n", "".join(examples)
    prefix = before_corpus + "".join(lines) + after_corpus
    line_start: dict[str, tuple[int, int]] = {}
    offset = len(before_corpus)
    for position, (doc, line) in enumerate(zip(docs, lines, strict=True)):
        line_start[doc.pid] = (offset, position)
        offset += len(line)
    rows = [
        row
        for query in collection.evaluated
        for row in _turn_rows(collection, layout, variant, query, shown_of, by_pid, line_start)
    ]
    return Rendered(
        prefix=prefix,
        shown=tuple((shown, doc.pid) for shown, doc in zip(ids, docs, strict=True)),
        rows=tuple(rows),
    )


def icl_example(doc: Doc) -> str:
    """A many-shot example: its input, then `Output:` and the target's words as a Python list
    (`Output: ['(A)']`), the form upstream shows and its parser reads back."""
    return f"{doc.text}\nOutput: {(doc.answer or '').split(' ')!r}\n"


def render_icl(collection: Collection, variant: Variant) -> Rendered:
    """Many-shot ICL: the answer-format line, the examples, then the test input and `Output:`."""
    docs = arrange(collection, variant)
    prefix = instructions.ICL_INSTRUCTION + "\n" + "".join(icl_example(d) for d in docs)
    rows = []
    for query in collection.evaluated:
        if len(query.turns) != 1:
            raise BadInputError(f"queries icl/{collection.dataset}", f"qid={query.qid}", "ICL queries have one turn")
        turn = query.turns[0]
        rows.append(PromptRow(query.qid, query.split, 0, 1, "", f"{turn.text}\nOutput:", turn.gold_json, ()))
    return Rendered(prefix=prefix, shown=(), rows=tuple(rows))


def render_sql(collection: Collection) -> Rendered:
    """Spider / SParC: the SQL track's prompt (loft_warehouse.sql.prompt), one prefix per
    database. Its query block starts with the database's tables, which every query of the
    database shares: that part (what does not depend on the question) joins the prefix, so
    prefix + suffix is exactly sql_prompt(...) while each database is stored once."""
    # Imported here: loft_warehouse.sql.prompt itself imports this package's multiturn module.
    from loft_warehouse.sql import prompt as sql_prompt

    tables = [(doc.title or "", doc.text) for doc in collection.docs]
    probe = sql_prompt.turn_suffixes(tables, [QUESTION_MARK])[0]
    before_question = probe[: probe.index(QUESTION_MARK)]
    database_block = before_question[: before_question.rfind("\n") + 1]
    prefix = sql_prompt.sql_prefix(collection.dataset) + database_block
    rows = []
    for query in collection.evaluated:
        suffixes = sql_prompt.turn_suffixes(tables, [turn.text for turn in query.turns])
        for t, (turn, suffix) in enumerate(zip(query.turns, suffixes, strict=True)):
            if not suffix.startswith(database_block):
                raise BadInputError(
                    f"queries sql/{collection.dataset}/{collection.corpus_id}",
                    f"qid={query.qid} turn={t}",
                    "the SQL prompt of this query does not start with its database's tables",
                )
            rows.append(
                PromptRow(
                    query.qid,
                    query.split,
                    t,
                    len(query.turns),
                    "",
                    suffix[len(database_block) :],
                    turn.gold_json,
                    (),
                )
            )
    return Rendered(prefix=prefix, shown=(), rows=tuple(rows))


def render(collection: Collection, variant: Variant, seed: int) -> Rendered:
    """Render one collection in one variant (retrieval, RAG, ICL or SQL)."""
    if collection.task == "icl":
        return render_icl(collection, variant)
    if collection.task == "sql":
        return render_sql(collection)
    return render_documents(collection, variant, seed)
