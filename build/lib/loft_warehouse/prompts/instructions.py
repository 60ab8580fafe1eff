"""What the prompt says, per task family and dataset, in two wordings.

- loft, the default: LOFT's own prompt code (google-deepmind/loft, prompts/), its strings read
  from loft_prompts.json with the constant each comes from. Retrieval and RAG open with the
  dataset's corpus instruction and then LOFT's answer-format block; each query block is its
  QUERY_FORMAT_SIMPLE_REVERSE (the query line, then for retrieval the lead-in line), few-shot
  reasoning quotes TITLE (or CONTENT) and ID, and a few-shot RAG answer lists every gold answer.
  Datasets map to LOFT's keys through its PROMPT_MAPPER; a name LOFT's constants do not know
  takes its family's wording (nq) and says so once in a warning line. ICL and SQL wording is in
  loft_prompts.json too (render.render_icl, sql.prompt).
- paper (the paper_wording variant): retrieval instructions of paper Table 6, the query text and
  lead-in lines of Figures 11 and 13, the generic instruction of Figure 12; RAG wording written
  in the same style (the paper omits it: "almost identical to text retrieval"), a few-shot RAG
  answer lists the first gold answer (all of them for multi-answer datasets) and examples with
  a hand-written chain (reasoning.yaml) add it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

LOFT_PROMPTS_FILE = Path(__file__).with_name("loft_prompts.json")
FAMILY_DEFAULT = "nq"

_TABLE6_DOCUMENTS = (
    "You will be given a list of documents. You need to read carefully and understand all of "
    "them. Then you will be given a query, and your goal is to find all documents from the list "
    "that can help answer the query."
)
_TABLE6_MULTI_HOP = (
    "You will be given a list of documents. You need to read carefully and understand all of "
    "them. Then you will be given a query that may require you to use 1 or more documents to "
    "find the answer. Your goal is to find all documents from the list that can help answer the "
    "query."
)
_TABLE6_CLAIM_PASSAGES = (
    "You will be given a list of passages. You need to read carefully and understand all of "
    "them. Then you will be given a claim, and your goal is to find all passages from the list "
    "that can help verify the claim as true or false."
)
RETRIEVAL_INSTRUCTIONS: dict[str, str] = {
    "arguana": (
        "You will be given a list of statements. You need to read carefully and understand all "
        "of them. Then you will be given a claim, and your goal is to find all statements from "
        "the list that can counterargue the claim."
    ),
    "fever": _TABLE6_CLAIM_PASSAGES,
    "scifact": _TABLE6_CLAIM_PASSAGES,
    "fiqa": _TABLE6_DOCUMENTS,
    "msmarco": _TABLE6_DOCUMENTS,
    "nq": _TABLE6_DOCUMENTS,
    "topiocqa": _TABLE6_DOCUMENTS,
    "quora": (
        "You will be given a list of questions. You need to read carefully and understand all "
        "of them. Then you will be given a new question, and your goal is to find all questions "
        "from the list that are near duplicates of the new question."
    ),
    "touche2020": (
        "You will be given a list of arguments. You need to read carefully and understand all "
        "of them. Then you will be given a controversial debating topic, and your goal is to "
        "find arguments from the list that's relevant to the topic."
    ),
    "hotpotqa": _TABLE6_MULTI_HOP,
    "musique": _TABLE6_MULTI_HOP,
    "qampari": _TABLE6_MULTI_HOP,
    "quest": _TABLE6_MULTI_HOP,
}
RETRIEVAL_INSTRUCTIONS["webis_touche2020"] = RETRIEVAL_INSTRUCTIONS["touche2020"]

_RAG_SINGLE = (
    "You will be given a list of documents. You need to read carefully and understand all of "
    "them. Then you will be given a query, and your goal is to answer the query using the "
    "documents from the list."
)
_RAG_MULTI_HOP = (
    "You will be given a list of documents. You need to read carefully and understand all of "
    "them. Then you will be given a query that may require you to use 1 or more documents to "
    "find the answer. Your goal is to answer the query using the documents from the list."
)
_RAG_MULTI_ANSWER = (
    "You will be given a list of documents. You need to read carefully and understand all of "
    "them. Then you will be given a query that has one or more answers, and your goal is to find "
    "every answer to the query in the documents from the list."
)
RAG_INSTRUCTIONS: dict[str, str] = {
    "nq": _RAG_SINGLE,
    "topiocqa": _RAG_SINGLE,
    "hotpotqa": _RAG_MULTI_HOP,
    "musique": _RAG_MULTI_HOP,
    "qampari": _RAG_MULTI_ANSWER,
    "quest": _RAG_MULTI_ANSWER,
}

# The ICL instruction of datasets LOFT's prompts do not cover (the warehouse's LIB-dialogue framing).
ICL_INSTRUCTION = (
    "Answer each input below in the same format as the examples: your final answer must always "
    "be written as `Output: ['your_answer']`."
)

# Retrieval datasets whose queries need several documents (paper App. A: MRecall@k).
MULTI_DOCUMENT = frozenset({"hotpotqa", "musique", "qampari", "quest"})
# RAG datasets whose gold is a set of answers that must all be given (QAMPARI, QUEST).
MULTI_ANSWER = frozenset({"qampari", "quest"})


@dataclass(frozen=True)
class Wording:
    """The fixed text of one dataset's prompt.

    instruction opens the prompt and formatting (LOFT only) follows it as a chunk of its own;
    query_format is a query block with `{query}` where the question goes (no final newline),
    query_format_no_cot the same for the no_cot variant. title_in_corpus: corpus lines carry a
    TITLE field; reasoning_format is a few-shot reasoning line (`{title}`, `{passage}`, `{pid}`).
    all_answers: a few-shot RAG example's final answer lists every gold answer (else the first,
    or all for multi_answer datasets); chains: add reasoning.yaml's hand-written RAG chains.
    """

    instruction: str
    query_format: str
    query_format_no_cot: str
    title_in_corpus: bool
    reasoning_format: str
    formatting: str | None = None
    multi_answer: bool = False
    all_answers: bool = False
    chains: bool = False

    def query_block(self, question: str, cot: bool = True) -> str:
        """The query block of a question, ending in one newline."""
        return (self.query_format if cot else self.query_format_no_cot).format(query=question) + "\n"

    def split_query_block(self, question: str) -> tuple[str, str]:
        """query_at_beginning: (the block up to and including the query line, its lead-in lines),
        each ending in a newline; the lead-in is "" when the block ends with the query."""
        template = self.query_format
        cut = template.index("{query}")
        end = template.find("\n", cut)
        if end < 0:
            return template.format(query=question) + "\n", ""
        return template[:end].format(query=question) + "\n", template[end + 1 :] + "\n"

    def example_answers(self, gold: Any) -> list[str]:
        """A few-shot RAG example's final answer: its gold answers, as text."""
        answers = [str(a) for a in (gold or [])]
        return answers if self.all_answers or self.multi_answer else answers[:1]

    def reasoning_line(self, shown: str, title: str | None, passage: str) -> str:
        return self.reasoning_format.format(pid=shown, title=title or DEFAULT_TITLE, passage=passage) + "\n"


@cache
def loft_prompts() -> dict[str, Any]:
    """LOFT's prompt strings by task and constant (loft_prompts.json, values only)."""
    document = json.loads(LOFT_PROMPTS_FILE.read_text(encoding="utf-8"))
    return {
        task: {name: entry["value"] for name, entry in constants.items()}
        for task, constants in document.items()
        if task != "provenance"
    }


DEFAULT_TITLE: str = loft_prompts()["common"]["default_title"]
GENERIC_INSTRUCTION: str = loft_prompts()["common"]["generic_corpus_instruction"]
_warned: set[tuple[str, str]] = set()


def _loft_key(task: str, dataset: str) -> str:
    """LOFT's constant key of a dataset (its PROMPT_MAPPER), or the family's with a warning."""
    constants = loft_prompts()[task]
    key = constants["prompt_mapper"].get(dataset, dataset)
    if key in constants["corpus_instruction"]:
        return key
    if (task, dataset) not in _warned:
        _warned.add((task, dataset))
        print(f"WARNING: LOFT's prompts have no {task}/{dataset} wording; using {task}/{FAMILY_DEFAULT}'s")
    return FAMILY_DEFAULT


def loft_wording(task: str, dataset: str) -> Wording:
    """LOFT's few_shot_with_cot wording of a retrieval or RAG dataset."""
    constants = loft_prompts()[task]
    key = _loft_key(task, dataset)
    return Wording(
        instruction=constants["corpus_instruction"][key],
        query_format=constants["query_format"][key],
        query_format_no_cot=constants["query_format_no_cot"][key],
        title_in_corpus="{title}" in constants["corpus_format"][key],
        reasoning_format=constants["reasoning_format"][key],
        formatting=constants["formatting_instruction"],
        multi_answer=task == "rag" and dataset in MULTI_ANSWER,
        all_answers=True,
    )


def _paper_lookup(table: dict[str, str], task: str, dataset: str) -> str:
    if dataset in table:
        return table[dataset]
    if (task, dataset) not in _warned:
        _warned.add((task, dataset))
        print(f"WARNING: the paper names no {task} instruction for {dataset!r}; using the {task} family's")
    return table[FAMILY_DEFAULT]


def paper_wording(task: str, dataset: str, has_title: bool) -> Wording:
    """Table 6 instruction + the Figure 11 (several documents) or Figure 13 (one) query text;
    RAG: the retrieval layout, but the final answer lists answer strings, not IDs."""
    field = "TITLE" if has_title else "CONTENT"
    reasoning_format = "TITLE: {title} | ID: {pid}" if has_title else "CONTENT: {passage} | ID: {pid}"
    if task == "retrieval":
        instruction = _paper_lookup(RETRIEVAL_INSTRUCTIONS, task, dataset)
        several = dataset in MULTI_DOCUMENT
        ask = "Which documents are needed" if several else "Which document is most relevant"
        what = "of each document" if several else "of the document"
        lead_in = (
            "The following documents are needed to answer the query:"
            if several
            else "The following documents can help answer the query:"
        )
        query = f"{ask} to answer the query? Print out the {field} and ID {what}. Then format the IDs into a list."
        multi = False
    else:
        instruction = _paper_lookup(RAG_INSTRUCTIONS, task, dataset)
        multi = dataset in MULTI_ANSWER
        what = "all the answers" if multi else "the answer"
        query = (
            f"Which documents can answer the query? Print out the {field} and ID of each document you "
            f"use. Then format {what} into a list."
        )
        lead_in = "The following documents can help answer the query:"
    return Wording(
        instruction=instruction,
        query_format=f"{query}\nquery: {{query}}\n{lead_in}",
        query_format_no_cot=f"{query}\nquery: {{query}}\n{lead_in}",
        title_in_corpus=has_title,
        reasoning_format=reasoning_format,
        multi_answer=multi,
        chains=task == "rag",
    )


def wording(task: str, dataset: str, has_title: bool, style: str = "loft") -> Wording:
    """The wording of a retrieval or RAG dataset in a style (loft or paper); ICL and SQL prompts
    are rendered by render.render_icl and prompts.sql."""
    if task not in ("retrieval", "rag"):
        raise ValueError(f"no retrieval/RAG wording for task {task!r} (dataset {dataset!r})")
    return loft_wording(task, dataset) if style == "loft" else paper_wording(task, dataset, has_title)
