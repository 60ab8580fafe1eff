"""What the prompt says, per task family and dataset: the instruction opening the prompt and the
query template repeated in every few-shot example and the test query.

Retrieval instructions are paper Table 6; the retrieval query template and the lead-in lines are
those of paper Figures 11 and 13; the generic instruction is Figure 12. The paper omits the RAG
and ICL wording (Table 6: "almost identical to text retrieval"; ICL has no instruction beyond the
answer format), so those are written here in the same style.
"""

from __future__ import annotations

from dataclasses import dataclass

from loft_warehouse.errors import ConfigurationError

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

GENERIC_INSTRUCTION = (
    "You will be given a list of candidates such as documents, images, videos, audios, etc. You "
    "need to check them carefully and understand all of them. Then you will be given a query, "
    "and your goal is to find all candidates from the list that can help answer the query. Print "
    "out the ID of each candidate."
)

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

    instruction opens the prompt; query_instruction heads every query block (few-shot and test);
    lead_in is the line the answer starts after; field names the part of a gold document the
    reasoning lines quote (TITLE, or CONTENT for datasets without titles).
    """

    instruction: str
    query_instruction: str
    lead_in: str
    field: str
    multi_answer: bool = False


def retrieval_wording(dataset: str, has_title: bool) -> Wording:
    """Table 6 instruction + the Figure 11 (several documents) or Figure 13 (one) query text."""
    instruction = _lookup(RETRIEVAL_INSTRUCTIONS, "retrieval", dataset)
    field = "TITLE" if has_title else "CONTENT"
    if dataset in MULTI_DOCUMENT:
        query = (
            f"Which documents are needed to answer the query? Print out the {field} and ID of "
            "each document. Then format the IDs into a list."
        )
        lead_in = "The following documents are needed to answer the query:"
    else:
        query = (
            f"Which document is most relevant to answer the query? Print out the {field} and ID "
            "of the document. Then format the IDs into a list."
        )
        lead_in = "The following documents can help answer the query:"
    return Wording(instruction, query, lead_in, field)


def rag_wording(dataset: str, has_title: bool) -> Wording:
    """RAG: the retrieval layout, but the final answer lists answer strings, not IDs."""
    instruction = _lookup(RAG_INSTRUCTIONS, "rag", dataset)
    field = "TITLE" if has_title else "CONTENT"
    multi = dataset in MULTI_ANSWER
    what = "all the answers" if multi else "the answer"
    query = (
        f"Which documents can answer the query? Print out the {field} and ID of each document you "
        f"use. Then format {what} into a list."
    )
    return Wording(instruction, query, "The following documents can help answer the query:", field, multi)


def wording(task: str, dataset: str, has_title: bool) -> Wording:
    """The wording of a retrieval or RAG dataset (ICL uses ICL_INSTRUCTION alone; SQL prompts
    come from loft_warehouse.sql.prompt)."""
    if task == "retrieval":
        return retrieval_wording(dataset, has_title)
    if task == "rag":
        return rag_wording(dataset, has_title)
    raise ConfigurationError(f"no prompt wording for task {task!r} (dataset {dataset!r})")


def _lookup(table: dict[str, str], task: str, dataset: str) -> str:
    try:
        return table[dataset]
    except KeyError as exc:
        raise ConfigurationError(
            f"no {task} instruction for dataset {dataset!r}: add one to "
            f"loft_warehouse/prompts/instructions.py (known: {sorted(table)})"
        ) from exc
