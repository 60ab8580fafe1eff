"""Lost in the Middle prompts (seed 004): multi-document QA and key-value retrieval.

The text of every prompt is the paper's template (prompts/templates.yaml) filled in exactly as
its code fills it; it is stored as a shared prefix (the instruction), segments (one per document
or key-value record, reused wherever the same line recurs) and a suffix (the question), and the
renderer checks that the parts join to the filled template.

A question's corpus (sources.litm_multidoc / litm_kv) holds its gold document first, then the
others in order; a variant keeps the first k - 1 others and inserts the gold at index i, as the
paper's data script does.
"""

from __future__ import annotations

from loft_warehouse.errors import BadInputError
from loft_warehouse.prompts.inputs import Collection, Doc, Query
from loft_warehouse.prompts.render import PromptRow, Rendered
from loft_warehouse.prompts.templates import split_at, template
from loft_warehouse.prompts.variants import Variant


def _query(collection: Collection) -> Query:
    if len(collection.evaluated) != 1 or len(collection.evaluated[0].turns) != 1:
        raise BadInputError(
            f"queries {collection.task}/{collection.dataset}/{collection.corpus_id}",
            None,
            "a study corpus belongs to exactly one single-turn question",
        )
    return collection.evaluated[0]


def arrange(collection: Collection, variant: Variant) -> list[Doc]:
    """The documents the variant shows, in order: the gold at gold_index among the first
    n_documents - 1 others (oracle: the gold alone; closed book: none)."""
    query = _query(collection)
    gold_pids = set(query.turns[0].gold_pids)
    gold = [d for d in collection.docs if d.pid in gold_pids]
    others = [d for d in collection.docs if d.pid not in gold_pids]
    if variant.setting == "closed_book":
        return []
    if variant.setting == "oracle":
        return gold
    assert variant.n_documents is not None and variant.gold_index is not None
    kept = others[: variant.n_documents - len(gold)]
    return kept[: variant.gold_index] + gold + kept[variant.gold_index :]


def _row(query: Query, suffix: str, segments: list[str], shown: list[Doc], first_document: int) -> PromptRow:
    turn = query.turns[0]
    gold = [i for i, d in enumerate(shown) if d.pid in set(turn.gold_pids)]
    return PromptRow(
        qid=query.qid,
        split=query.split,
        turn=0,
        n_turns=1,
        head="",
        suffix=suffix,
        gold_json=turn.gold_json,
        gold_shown_ids=tuple(str(i + 1) for i in gold),
        segments=tuple(segments),
        gold_positions=tuple(gold),
        gold_anchor=("segment", first_document + gold[0], 0) if gold else None,
    )


def _checked(parts: list[str], expected: str, where: str) -> None:
    if "".join(parts) != expected:
        raise AssertionError(f"{where}: the stored prompt parts do not join to the template's text")


def render_multidoc(collection: Collection, variant: Variant) -> Rendered:
    """Multi-document QA: `Document [n](Title: t) text` lines, then the question and `Answer:`."""
    query = _query(collection)
    question = query.turns[0].text
    docs = arrange(collection, variant)
    lines = [
        template("litm_document").format(number=n, title=d.title or "", text=d.text) + "\n"
        for n, d in enumerate(docs, start=1)
    ]
    shown = tuple((str(n), d.pid) for n, d in enumerate(docs, start=1))
    if variant.setting == "closed_book":
        suffix = template("litm_closed_book").format(question=question)
        row = _row(query, suffix, [], docs, 0)
        return Rendered(prefix="", shown=shown, rows=(row,))
    name = "litm_qa_query_aware" if variant.query_aware else "litm_qa"
    instruction, after = split_at(name, "search_results", question=question)
    before_documents = instruction
    opening: list[str] = []
    if variant.query_aware:
        # The instruction is shared; the question line before the documents is this query's.
        cut = instruction.index("Question: ")
        before_documents, opening = instruction[:cut], [instruction[cut:]]
    segments = opening + lines
    # The template joins documents with a newline: the last line's own newline stands for it.
    suffix = after[1:] if after.startswith("\n") else after
    _checked(
        [before_documents, *segments, suffix],
        template(name).format(question=question, search_results="\n".join(line[:-1] for line in lines)),
        f"litm {collection.corpus_id} {variant.name}",
    )
    return Rendered(prefix=before_documents, shown=shown, rows=(_row(query, suffix, segments, docs, len(opening)),))


def kv_records(pairs: list[tuple[str, str]]) -> list[str]:
    """The paper's JSON rendering, one record per line: '{' opens the first, ' ' the others,
    ',' ends all but the last, which ends with '}'."""
    records = []
    for index, (key, value) in enumerate(pairs):
        start = "{" if index == 0 else " "
        end = ",\n" if index != len(pairs) - 1 else "}"
        records.append(start + template("litm_kv_record").format(key=key, value=value) + end)
    return records


def render_kv(collection: Collection, variant: Variant) -> Rendered:
    """Key-value retrieval: the JSON object with the queried key at gold_index, then the key."""
    query = _query(collection)
    key = query.turns[0].text
    docs = arrange(collection, variant)
    records = kv_records([(d.pid, d.text) for d in docs])
    name = "litm_kv_query_aware" if variant.query_aware else "litm_kv"
    before, after = split_at(name, "formatted_kv_records", key=key)
    opening: list[str] = []
    prefix = before
    if variant.query_aware:
        cut = before.index("Key: ")
        prefix, opening = before[:cut], [before[cut:]]
    # Every stored part ends in a newline: the last record's closing brace takes the first
    # newline of what follows the records.
    lines = [*records[:-1], records[-1] + "\n"]
    suffix = after[1:]
    segments = opening + lines
    _checked(
        [prefix, *segments, suffix],
        template(name).format(key=key, formatted_kv_records="".join(records)),
        f"kv {collection.corpus_id} {variant.name}",
    )
    shown = tuple((str(n), d.pid) for n, d in enumerate(docs, start=1))
    return Rendered(prefix=prefix, shown=shown, rows=(_row(query, suffix, segments, docs, len(opening)),))


def render(collection: Collection, variant: Variant) -> Rendered:
    """The Lost in the Middle prompt of one study question in one sweep variant."""
    if variant.family == "litm_kv":
        return render_kv(collection, variant)
    return render_multidoc(collection, variant)
