"""Stage-1 prompts of every method, and the prompt variants a corpus is built in."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from loft_warehouse.design import Design
from loft_warehouse.methods import paginated
from loft_warehouse.methods.catalogue import Method
from loft_warehouse.methods.stages import builder
from loft_warehouse.prompts.inputs import Collection, Doc
from loft_warehouse.prompts.render import PromptRow, Rendered, render
from loft_warehouse.prompts.variants import Variant, arrange, shown_ids
from loft_warehouse.studies import litm, sweeps


def variants_for(collection: Collection, design: Design) -> list[Variant]:
    """LOFT datasets: the selected LOFT variants that apply; study datasets: their sweep."""
    if collection.task in ("litm", "rr"):
        return sweeps.variants_for(collection, design)
    return [v for v in design.variants if v.applies_to(collection)]


def render_stage1(
    collection: Collection, variant: Variant, method: Method, design: Design, seed: int
) -> Rendered | None:
    """Stage 1 of a method on one (corpus, variant); None when the method does not apply."""
    if not method.applies_to(collection.task, variant.family, variant.name):
        return None
    return builder(method.stage(1).build)(collection, variant, method, design, seed)


def render_cic(collection: Collection, variant: Variant, method: Method, design: Design, seed: int) -> Rendered:
    """The one-call prompt: LOFT's corpus in context, or the study's own (Lost in the Middle,
    R&R's baseline)."""
    if collection.task == "litm":
        return litm.render(collection, variant)
    if collection.task == "rr":
        return paginated.render_qa(collection, variant, method, design, seed)
    return render(collection, variant, seed)


def document_ids(collection: Collection, variant: Variant, seed: int) -> list[tuple[str, str]]:
    """(shown ID, pid) of the documents a variant shows, in prompt order: LOFT's IDs for
    retrieval and RAG corpora (ICL examples and SQL tables carry none), the document or page
    number (from 1) for the studies. Methods that number pages read them back by position."""
    if collection.task == "litm":
        docs = litm.arrange(collection, variant)
    elif collection.task == "rr":
        docs = paginated.document_order(collection, variant)
    elif collection.task in ("retrieval", "rag"):
        docs = arrange(collection, variant)
        return list(zip(shown_ids(collection, variant, len(docs), seed), (d.pid for d in docs), strict=True))
    else:
        return []
    return [(str(position + 1), doc.pid) for position, doc in enumerate(docs)]


def single_turn_rows(
    collection: Collection,
    docs: Sequence[Doc],
    ids: Sequence[str],
    suffix: Callable[[str], str],
    offsets: dict[str, int] | None = None,
) -> tuple[PromptRow, ...]:
    """One row per single-turn query over documents shown in this order with these IDs (methods
    that answer multi-turn conversations do not exist yet): the gold's positions and shown IDs,
    the suffix made from the question, and, given each document's character offset in the
    prefix, the anchor of the first gold document."""
    position = {doc.pid: i for i, doc in enumerate(docs)}
    rows = []
    for query in collection.evaluated:
        if len(query.turns) != 1:
            continue
        turn = query.turns[0]
        gold = sorted(position[p] for p in turn.gold_pids if p in position)
        anchor = ("prefix", 0, offsets[docs[gold[0]].pid]) if gold and offsets is not None else None
        rows.append(
            PromptRow(
                qid=query.qid,
                split=query.split,
                turn=0,
                n_turns=1,
                head="",
                suffix=suffix(turn.text),
                gold_json=turn.gold_json,
                gold_shown_ids=tuple(ids[i] for i in gold),
                gold_positions=tuple(gold),
                gold_anchor=anchor,
            )
        )
    return tuple(rows)
