"""Prompt variants: the paper's best prompt and every ablation of §5 / Table 4, the number of
few-shot examples (Fig. 8), gold-document positions (§4.1, Fig. 4 and 9) and, for BBH, one variant
per many-shot context length.

Names (the `variant` column; pick them with dbt `--vars '{prompt_variants: [default, no_cot]}'`):

- default: LOFT's own prompt (its prompt code's few_shot_with_cot / many_shot prompts, the
  paper's Fig. 11 layout), byte for byte (instructions.loft_wording, loft_prompts.json).
- paper_wording: the same layout with the paper's wording (Table 6 instructions, Figs. 11 and
  13 query text; instructions.paper_wording); retrieval and RAG.
- generic_instruction: the task-agnostic instruction of Fig. 12.
- query_at_beginning: the query before the instruction and corpus (Fig. 13); its rows carry the
  query in `head`, so the shared prefix is unchanged but no longer a prompt prefix.
- alphanumeric_ids: seeded unique IDs alternating letters and digits (`D5y2`) (Fig. 14).
- title_only: corpus lines without CONTENT (Fig. 15); datasets with titles only.
- no_id_echo: corpus lines without the trailing `END ID` (Fig. 16).
- corpus_in_each_few_shot: each example brings its own 10-document corpus, IDs 0..9: its gold
  documents first (as in Fig. 17), then seeded random others in corpus order; the full corpus
  follows the examples.
- no_cot: few-shot examples without reasoning lines and LOFT's no-CoT query text (Fig. 18).
- closed_book: RAG without the corpus (§4.4, Table 3: "we remove the corpus from the context"):
  LOFT's prompt with no corpus lines, instruction and few-shot examples as they are; no
  document is shown, so no gold position. LOFT's code has no closed-book prompt; this is the
  paper's sentence taken literally.
- merged_pages: QUEST-LOFT's corpus (seed 002 §3.1): the passages of one page (one title) merged
  into one document, in corpus order and joined by a space, at the place of the page's first
  passage and under its pid, so that there is one document per entity; gold documents map to
  their page. RAG datasets with titles; the methods run on it as on default.
- few_shot_0 .. few_shot_5: only the first k few-shot examples.
- gold_pos_{test,few_shot,both}_p{0,20,40,60,80,100}: the gold documents of the evaluated
  (dev+test) queries, of the few-shot queries, or of both as one group, moved as a block to
  fraction p of the corpus (p0 = before every other document, p100 = after), the other documents
  keeping their order. A document gold for both groups moves with whichever group is moved.
  IDs are renumbered everywhere: corpus, few-shot reasoning and answers, gold_shown_ids.
- context_{2k,4k,8k,16k,32k}: many-shot ICL with the examples of that context only
  (corpus.min_context at most that length), in corpus order; built for datasets with several
  contexts (BBH at 32k: context_32k equals default there, kept so the five contexts plot alike).

Which variants apply: retrieval and RAG take every variant but context_*; ICL takes default
and its own context_* variants; SQL takes default (its prompt comes from loft_warehouse.prompts.sql).
A variant that does not apply to a dataset builds no rows for it.
"""

from __future__ import annotations

import random
import string
import zlib
from collections.abc import Iterable
from dataclasses import dataclass, replace

from loft_warehouse import settings
from loft_warehouse.errors import ConfigurationError, did_you_mean
from loft_warehouse.prompts.inputs import Collection, Doc, Query

GOLD_GROUPS = ("test", "few_shot", "both")
GOLD_POSITIONS = (0, 20, 40, 60, 80, 100)
MAX_FEW_SHOT = 5
ABLATION_TASKS = frozenset({"retrieval", "rag"})


LOFT_TASKS = frozenset({"retrieval", "rag", "icl", "sql"})
# The variants that switch one facet of LOFT's prompt off or change its wording (§5, Tables 3-4).
ABLATIONS = frozenset(
    {
        "paper_wording", "generic_instruction", "query_at_beginning", "alphanumeric_ids", "title_only",
        "no_id_echo", "corpus_in_each_few_shot", "no_cot", "closed_book",
    }
)  # fmt: skip


@dataclass(frozen=True)
class Variant:
    """The switches one prompt variant sets; `default` leaves them all at the paper's choice.

    family is `loft` for LOFT's prompt and its ablations; the positional studies' sweep variants
    (studies.sweeps) set `litm_qa`, `litm_kv` or `rr` with their document count, gold index,
    document length and answer position.
    """

    name: str
    generic_instruction: bool = False
    query_at_beginning: bool = False
    alphanumeric_ids: bool = False
    content: bool = True
    id_echo: bool = True
    corpus_in_each_few_shot: bool = False
    cot: bool = True
    corpus: bool = True
    n_few_shot: int | None = None
    gold_group: str | None = None
    gold_position: int | None = None
    context: str | None = None
    family: str = "loft"
    n_documents: int | None = None
    gold_index: int | None = None
    query_aware: bool = False
    setting: str | None = None
    document_tokens: int | None = None
    answer_tokens: int | None = None
    wording: str = "loft"
    merge_pages: bool = False

    @property
    def experiment(self) -> str | None:
        """The positional experiment this variant is a point of (position_curves), if any."""
        if self.gold_group is not None:
            return f"loft_gold_pos_{self.gold_group}"
        if self.family == "litm_qa":
            if self.setting is not None:
                return f"litm_qa_{self.setting}"
            return f"litm_qa_{self.n_documents}docs" + ("_query_aware" if self.query_aware else "")
        if self.family == "litm_kv":
            return f"litm_kv_{self.n_documents}keys" + ("_query_aware" if self.query_aware else "")
        if self.family == "rr":
            return f"rr_d{self.document_tokens}"
        return None

    @property
    def designed_position(self) -> tuple[float | None, str | None]:
        """Where the variant puts the gold (value, unit): percent of the corpus, document index
        or tokens into the document; (None, None) when it does not place it."""
        if self.gold_position is not None:
            return float(self.gold_position), "percent"
        if self.gold_index is not None:
            return float(self.gold_index), "document_index"
        if self.answer_tokens is not None:
            return float(self.answer_tokens), "tokens"
        return None, None

    def applies_to(self, collection: Collection) -> bool:
        """Whether this variant is built for a collection (see the module docstring)."""
        if self.family != "loft" or collection.task not in LOFT_TASKS:
            return False
        if self.name == "default":
            return True
        if self.merge_pages:
            return collection.task == "rag" and collection.has_title
        if self.context is not None:
            return collection.task == "icl" and len(collection.contexts) > 1 and self.context in collection.contexts
        if collection.task not in ABLATION_TASKS:
            return False
        if not self.corpus:
            return collection.task == "rag"
        return self.content or collection.has_title


def _catalogue() -> dict[str, Variant]:
    base = Variant("default")
    variants = [
        base,
        replace(base, name="paper_wording", wording="paper"),
        replace(base, name="generic_instruction", generic_instruction=True),
        replace(base, name="query_at_beginning", query_at_beginning=True),
        replace(base, name="alphanumeric_ids", alphanumeric_ids=True),
        replace(base, name="title_only", content=False),
        replace(base, name="no_id_echo", id_echo=False),
        replace(base, name="corpus_in_each_few_shot", corpus_in_each_few_shot=True),
        replace(base, name="no_cot", cot=False),
        replace(base, name="closed_book", corpus=False),
        replace(base, name="merged_pages", merge_pages=True),
    ]
    variants += [replace(base, name=f"few_shot_{k}", n_few_shot=k) for k in range(MAX_FEW_SHOT + 1)]
    variants += [
        replace(base, name=f"gold_pos_{group}_p{p}", gold_group=group, gold_position=p)
        for group in GOLD_GROUPS
        for p in GOLD_POSITIONS
    ]
    variants += [replace(base, name=f"context_{c}", context=c) for c in settings.ICL_CONTEXTS]
    return {v.name: v for v in variants}


VARIANTS: dict[str, Variant] = _catalogue()


def resolve(names: Iterable[str] | str | None) -> list[Variant]:
    """Variants from a list of names or a comma-separated string; 'all' means every variant.

    An unknown name is an error listing the known ones (a typo must not build nothing).
    """
    if names is None:
        names = ["default"]
    if isinstance(names, str):
        names = [n for n in names.split(",")]
    wanted = [n.strip() for n in names if n and n.strip()]
    if not wanted:
        wanted = ["default"]
    if "all" in wanted:
        return list(VARIANTS.values())
    unknown = [n for n in wanted if n not in VARIANTS]
    if unknown:
        hints = "".join(did_you_mean(name, VARIANTS) for name in unknown)
        raise ConfigurationError(
            f"unknown prompt variant(s) {unknown}{hints}; `loft list variants` prints them (all, {', '.join(VARIANTS)})"
        )
    return [VARIANTS[n] for n in dict.fromkeys(wanted)]


def _move_block(docs: list[Doc], moved: set[str], position: int) -> list[Doc]:
    """The documents in `moved` as one block at fraction position/100 of the rest (rounded half
    up: the block goes after round(p x n) of the n other documents)."""
    block = [d for d in docs if d.pid in moved]
    rest = [d for d in docs if d.pid not in moved]
    at = (position * len(rest) + 50) // 100
    return rest[:at] + block + rest[at:]


# What joins the passages of one page (an untitled passage is a page of its own).
PAGE_SEPARATOR = " "


def merged_pages(collection: Collection) -> Collection:
    """The collection with one document per page (title): its passages' texts joined by a space
    in corpus order, at the first passage's place and under its pid; every query's gold
    documents mapped to their page's pid (QUEST-LOFT §3.1)."""
    pages: dict[str, list[Doc]] = {}
    for doc in collection.docs:
        pages.setdefault(doc.title or doc.pid, []).append(doc)
    docs = [
        replace(
            passages[0],
            text=PAGE_SEPARATOR.join(p.text for p in passages),
            n_tokens=sum(p.n_tokens for p in passages),
        )
        for passages in pages.values()
    ]
    page_of = {p.pid: passages[0].pid for passages in pages.values() for p in passages}

    def mapped(queries: list[Query]) -> list[Query]:
        return [
            replace(
                query,
                turns=tuple(
                    replace(turn, gold_pids=tuple(dict.fromkeys(page_of.get(pid, pid) for pid in turn.gold_pids)))
                    for turn in query.turns
                ),
            )
            for query in queries
        ]

    return replace(collection, docs=docs, few_shot=mapped(collection.few_shot), evaluated=mapped(collection.evaluated))


def for_variant(collection: Collection, variant: Variant | None) -> Collection:
    """The collection as a variant shows it: its pages merged for merged_pages, else as it is."""
    return merged_pages(collection) if variant is not None and variant.merge_pages else collection


def arrange(collection: Collection, variant: Variant) -> list[Doc]:
    """The corpus in the order this variant shows it (shown ID i = position i)."""
    docs = collection.docs
    if variant.context is not None:
        limit = settings.context(variant.context).tokens
        return [d for d in docs if d.min_context is None or settings.context(d.min_context).tokens <= limit]
    if variant.gold_group is None or variant.gold_position is None:
        return list(docs)
    few_shot = {pid for q in collection.few_shot for pid in q.gold_pids}
    evaluated = {pid for q in collection.evaluated for pid in q.gold_pids}
    moved = {
        "test": evaluated,
        "few_shot": few_shot,
        "both": few_shot | evaluated,
    }[variant.gold_group]
    return _move_block(list(docs), moved, variant.gold_position)


def alphanumeric_ids(n: int, seed: int, key: str) -> list[str]:
    """n distinct seeded IDs alternating a letter and a digit ('D5y2'), 4 characters while
    that gives ample room (520**2 = 270,400 IDs), longer for larger corpora."""
    pairs = 2
    while 520**pairs < 4 * n:
        pairs += 1
    rng = random.Random(seed * 1_000_003 + zlib.crc32(key.encode("utf-8")))
    seen: set[str] = set()
    ids: list[str] = []
    while len(ids) < n:
        shown = "".join(rng.choice(string.ascii_letters) + rng.choice(string.digits) for _ in range(pairs))
        if shown not in seen:
            seen.add(shown)
            ids.append(shown)
    return ids


def shown_ids(collection: Collection, variant: Variant, n: int, seed: int) -> list[str]:
    """The IDs shown for positions 0..n-1: the position itself, or seeded alphanumeric IDs."""
    if variant.alphanumeric_ids:
        key = f"{collection.task}/{collection.dataset}/{collection.corpus_id}"
        return alphanumeric_ids(n, seed, key)
    return [str(i) for i in range(n)]
