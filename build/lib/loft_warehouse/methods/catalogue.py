"""The methods a size can run: how many calls a query takes and how each stage is built.

A method is a chain of up to three stages. Stage 1 prompts are rendered with the size's other
prompts (the `prompts` table); stage s+1 prompts are a dbt model over the parsed answers of
stage s (methods.stage2). Every stage's calls go through the same runner, store, flow control and cost
accounting; a stage may instead be a non-model step (`executor: bm25`). The last stage's answers
are the method's predictions and are what is scored.

Names (dbt var `methods`, default `[cic]`; `all` builds every one):

- cic: LOFT's corpus-in-context prompt (one call); on the study datasets, their own one-call
  prompt (Lost in the Middle, R&R Baseline, which asks for the page with the answer).
- answer_only: R&R Table 4's direct QA (seed 001 §5.2): the Baseline prompt asking for the answer
  alone, not the page that holds it (the only difference between the two prompts). R&R datasets.
- reprompt: R&R's reprompting: the document QA prompt with an instructions reminder (with the
  question) every `reprompt_every` tokens between pages (seed 001 §3.2). One call.
- reprompt_tags_only, reprompt_at_beginning, reprompt_before_answer: R&R Table 6's placements
  (seed 001 §5): the reminder only alludes to the `<INSTRUCTIONS>` tag; the same reminders all
  at the beginning of the document; one reminder right before each gold page (no interval).
- rag_top{k} (any k >= 1, e.g. rag_top5 .. rag_top40): retrieve-then-read, LOFT's specialised
  RAG baseline (seed 000 §4.4) with BM25 as the retriever: stage 1 ranks the size's corpus with
  bm25 (no model call), stage 2 sends the top-k passages to the system in a reader prompt.
- rag_top{k}_justified (and _cot, _quest, _cot_quest): QUEST-LOFT's RAG Justified QA (seed 002
  §3.5): the same bm25 step, then the justified QA prompt over the top-k passages.
- rag_top{k}_justified[_cot][_quest]_verify: QUEST-LOFT's RAG Justified QA + Verification, three
  stages: bm25's top k, the justified QA prompt over them, then one verification call per
  candidate over the documents it cites (as *_verify below).
- rag_top{k}_verify (and _cot, _quest, _cot_quest): QUEST-LOFT's RAG + Verification (seed 002
  Table 2): the same bm25 step, then one verification call per retrieved document, its entity
  (the document's title; its text when untitled) as the candidate and that document alone as
  evidence; the final answer is the entities judged TRUE.
- icr: in-context retrieval (seed 001 §3.3): call 1 asks for up to `icr_pages` page numbers of the
  `<PAGE p>` document, call 2 answers from only those pages.
- r_and_r: R&R, ICR with the retrieval reminder every `reprompt_every` tokens in call 1.
- chunked_icr: ICR per chunk of `chunk_tokens` tokens (several calls), pooled pages, one final
  QA call (seed 001 §3.4); chunked_r_and_r: the same with R&R's reminders in every chunk
  (chunkwise R&R, seed 001 Table 2).
- settings in the name: reprompt (and its tags_only and at_beginning placements), icr, r_and_r,
  chunked_icr and chunked_r_and_r take their sweep settings as suffixes, written once each in
  the order r, k, c: `_r{tokens}` the reminder interval (methods with reminders at an interval),
  `_k{pages}` the pages ICR asks for (ICR methods), `_c{tokens}` the chunk size (chunked
  methods), e.g. reprompt_r5000, r_and_r_r20000_k3, chunked_icr_c40000. A setting the name
  leaves out is the build's var (reprompt_every, icr_pages, chunk_tokens), so two sweeps of one
  method coexist in one build and one warehouse as two methods, each row saying which.
- justified, justified_cot, justified_quest, justified_cot_quest: QUEST-LOFT justified QA
  (seed 002 §3.5, App. C.3): a JSON answer with candidates, evidence and judgments; `_cot` asks
  for notes first, `_quest` adds the QUEST-specific instruction. One call.
- the same names + `_verify`: then one verification call per candidate answer, seeing only the
  documents cited for it (seed 002 §3.6, App. D: the verifier matches the QA variant); the
  final answer is the candidates judged TRUE.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Protocol

from loft_warehouse.errors import ConfigurationError, did_you_mean


class MethodSettings(Protocol):
    """The build's method settings a method's name may leave open (design.Design holds them)."""

    @property
    def reprompt_every(self) -> int: ...

    @property
    def icr_pages(self) -> int: ...

    @property
    def chunk_tokens(self) -> int: ...


RAG_SWEEP = (5, 10, 20, 40)
# The LOFT prompt variants every method runs on (the others are cic's ablations and sweeps).
METHOD_VARIANTS = ("default", "merged_pages")
REMINDER_PLACEMENTS = ("tags_only", "at_beginning", "before_answer")
JUSTIFIED_VARIANTS = ("justified", "justified_cot", "justified_quest", "justified_cot_quest")


@dataclass(frozen=True)
class Stage:
    """One stage of a method.

    executor: `system` (the system under test answers) or `bm25` (a non-model step run for it).
    parse: how its answers are read: `answers` (the answer list, as every LOFT prompt),
    `justified` (QUEST-LOFT JSON), `verdict` (a verification judgment).
    ids: what the parsed items of a non-final stage name: `shown` IDs of the prompt's documents,
    `pages` (page p = document position p - 1), or None.
    build: the "module:function" that builds the stage's prompts (methods.stages).
    """

    number: int
    build: str
    executor: str = "system"
    parse: str = "answers"
    ids: str | None = None


@dataclass(frozen=True)
class Method:
    """A named method: the tasks it runs on and its stages (the last one is scored)."""

    name: str
    tasks: frozenset[str]
    stages: tuple[Stage, ...]
    top_k: int | None = None
    reminders: bool = False
    placement: str = "every"
    chunked: bool = False
    cot: bool = False
    quest: bool = False
    page_with_answer: bool = True
    reprompt_every: int | None = None
    icr_pages: int | None = None
    chunk_tokens: int | None = None

    @property
    def n_stages(self) -> int:
        return len(self.stages)

    @property
    def uses_interval(self) -> bool:
        """Reminders come every `reprompt_every` tokens (or, at_beginning, as many as would)."""
        return self.reminders and self.placement != "before_answer"

    @property
    def uses_pages(self) -> bool:
        """A stage names pages (ICR, R&R, chunked ICR)."""
        return any(stage.ids == "pages" for stage in self.stages)

    def every(self, design: MethodSettings) -> int:
        """Tokens between reminders: the name's `_r`, else the build's reprompt_every."""
        return self.reprompt_every or design.reprompt_every

    def pages(self, design: MethodSettings) -> int:
        """Pages ICR asks for: the name's `_k`, else the build's icr_pages."""
        return self.icr_pages or design.icr_pages

    def chunk(self, design: MethodSettings) -> int:
        """Chunk size in tokens: the name's `_c`, else the build's chunk_tokens."""
        return self.chunk_tokens or design.chunk_tokens

    def stage(self, number: int) -> Stage:
        return self.stages[number - 1]

    def applies_to(self, task: str, variant_family: str, variant_name: str) -> bool:
        """Whether stage 1 of this method is built for a (task, variant): on LOFT datasets only
        with the default prompt variant (and merged_pages, QUEST-LOFT's corpus), on the R&R
        datasets with every document variant."""
        if task not in self.tasks:
            return False
        if self.name == "cic":
            return True
        return variant_name in METHOD_VARIANTS if variant_family == "loft" else variant_family == "rr"


PACKAGE = "loft_warehouse.methods"
_PAGES = (
    Stage(1, f"{PACKAGE}.paginated:render_icr", ids="pages"),
    Stage(2, f"{PACKAGE}.paginated:answer_from_pages"),
)


def _catalogue() -> dict[str, Method]:
    methods = [
        Method(
            "cic",
            frozenset({"retrieval", "rag", "icl", "sql", "litm", "rr"}),
            (Stage(1, f"{PACKAGE}.stage1:render_cic"),),
        ),
        Method("answer_only", frozenset({"rr"}), (Stage(1, f"{PACKAGE}.paginated:render_qa"),), page_with_answer=False),
        Method("reprompt", frozenset({"rag", "rr"}), (Stage(1, f"{PACKAGE}.paginated:render_qa"),), reminders=True),
        *(
            Method(
                f"reprompt_{placement}",
                frozenset({"rag", "rr"}),
                (Stage(1, f"{PACKAGE}.paginated:render_qa"),),
                reminders=True,
                placement=placement,
            )
            for placement in REMINDER_PLACEMENTS
        ),
        Method("icr", frozenset({"rag", "rr"}), _PAGES),
        Method("r_and_r", frozenset({"rag", "rr"}), _PAGES, reminders=True),
        Method("chunked_icr", frozenset({"rag", "rr"}), _PAGES, chunked=True),
        Method("chunked_r_and_r", frozenset({"rag", "rr"}), _PAGES, chunked=True, reminders=True),
    ]
    answer = Stage(1, f"{PACKAGE}.justified:render_stage1", parse="justified", ids="shown")
    verify = Stage(2, f"{PACKAGE}.justified:verification_calls", parse="verdict")
    for name in JUSTIFIED_VARIANTS:
        cot, quest = "_cot" in name, "_quest" in name
        methods.append(Method(name, frozenset({"rag"}), (answer,), cot=cot, quest=quest))
        methods.append(Method(f"{name}_verify", frozenset({"rag"}), (answer, verify), cot=cot, quest=quest))
    return {m.name: m for m in methods}


METHODS: dict[str, Method] = _catalogue()
_RAG_TOP = re.compile(
    r"rag_top([1-9][0-9]*)(?:_(justified(?:_cot)?(?:_quest)?(?:_verify)?|verify(?:_cot)?(?:_quest)?))?$"
)
_WITH_SETTINGS = re.compile(
    r"(reprompt(?:_tags_only|_at_beginning)?|icr|r_and_r|chunked_icr|chunked_r_and_r)((?:_[rkc][1-9][0-9]*)+)"
)
_SETTING = re.compile(r"_([rkc])([1-9][0-9]*)")


def with_settings(base: Method, suffix: str) -> Method:
    """`base` with the sweep settings its name's suffix gives (see the module docstring)."""
    values: dict[str, int] = {}
    for letter, number in _SETTING.findall(suffix):
        allowed = {"r": base.uses_interval, "k": base.uses_pages, "c": base.chunked}[letter]
        if not allowed:
            raise ConfigurationError(f"method {base.name}{suffix!s}: {base.name} takes no _{letter} setting")
        if letter in values:
            raise ConfigurationError(f"method {base.name}{suffix!s}: _{letter} is given twice")
        values[letter] = int(number)
    canonical = base.name + "".join(f"_{letter}{values[letter]}" for letter in "rkc" if letter in values)
    if canonical != base.name + suffix:
        raise ConfigurationError(f"method {base.name}{suffix!s}: write its settings in the order r, k, c: {canonical}")
    return replace(
        base, name=canonical, reprompt_every=values.get("r"), icr_pages=values.get("k"), chunk_tokens=values.get("c")
    )


def rag_top(k: int, reader: str | None = None) -> Method:
    """Retrieve-then-read with the top k bm25 passages; `reader` a justified QA variant (with
    `_verify`: then a verification per candidate), a verification variant (`verify...`: one
    verification per retrieved entity), or LOFT's RAG prompt when None."""
    retrieve = Stage(1, f"{PACKAGE}.retrieve_read:render_stage1", executor="bm25", ids="shown")
    if reader is None:
        read_loft = Stage(2, f"{PACKAGE}.retrieve_read:reader")
        return Method(f"rag_top{k}", frozenset({"rag"}), (retrieve, read_loft), top_k=k)
    cot, quest = "_cot" in reader, "_quest" in reader
    stages: tuple[Stage, ...]
    if reader.startswith("verify"):
        stages = (retrieve, Stage(2, f"{PACKAGE}.justified:verify_retrieved", parse="verdict"))
    else:
        read = Stage(2, f"{PACKAGE}.justified:retrieved_reader", parse="justified", ids="shown")
        verify = Stage(3, f"{PACKAGE}.justified:verification_calls", parse="verdict")
        stages = (retrieve, read, verify) if reader.endswith("_verify") else (retrieve, read)
    return Method(f"rag_top{k}_{reader}", frozenset({"rag"}), stages, top_k=k, cot=cot, quest=quest)


def method(name: str) -> Method:
    """A method by name; an unknown name is an error listing the known ones."""
    if name in METHODS:
        return METHODS[name]
    match = _RAG_TOP.match(name)
    if match:
        return rag_top(int(match.group(1)), match.group(2))
    settings = _WITH_SETTINGS.fullmatch(name)
    if settings:
        return with_settings(METHODS[settings.group(1)], settings.group(2))
    raise ConfigurationError(
        f"unknown method {name!r}{did_you_mean(name, METHODS)}; `loft list methods` prints them; "
        f"known: all, {', '.join(METHODS)}, rag_top{{k}}, "
        "rag_top{k}_justified[_cot][_quest][_verify], rag_top{k}_verify[_cot][_quest], "
        "and reprompt, reprompt_tags_only, reprompt_at_beginning, icr, r_and_r, chunked_icr, chunked_r_and_r "
        "with settings "
        "(_r{tokens}, _k{pages}, _c{tokens})"
    )


def resolve(names: Iterable[str] | str | None) -> list[Method]:
    """Methods from a list or comma-separated string; `all` is every named one plus rag_top5/10/20/40."""
    if names is None:
        names = ["cic"]
    if isinstance(names, str):
        names = names.split(",")
    wanted = [n.strip() for n in names if n and n.strip()] or ["cic"]
    if "all" in wanted:
        wanted = [*METHODS, *(f"rag_top{k}" for k in RAG_SWEEP)]
    return [method(n) for n in dict.fromkeys(wanted)]
