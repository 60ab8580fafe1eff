"""Expected text shared by the rendering tests: the hand-written HotPotQA corpus of conftest
rendered as LOFT's prompt code renders it (the default), and in the paper's Figure 11 wording
(the paper_wording variant)."""

from __future__ import annotations

HOTPOTQA_INSTRUCTION = (
    "You will be given a list of documents. You need to read carefully and understand all of them. "
    "Then you will be given a query that may require you to use 1 or more documents to find the "
    "answer. Your goal is to find all documents from the list that can help answer the query. "
    "Print out the ID and TITLE of each document."
)
RETRIEVAL_FORMATTING = [
    "",
    "Your final answer should be a list of IDs, in the following format:",
    "Final Answer: [id1, id2, ...]",
    "If there is only one ID, it should be in the format:",
    "Final Answer: [id1]",
    "",
    "If there is no perfect answer output the closest one. Do not give an empty final answer.",
    "",
]
NO_PERFECT_ANSWER = "If there is no perfect answer output the closest one. Do not give an empty final answer."
HOTPOTQA_QUERY = [
    "Which documents can help answer the query? Print out the TITLE and ID of each document. "
    "Then format the IDs into a list.",
    NO_PERFECT_ANSWER,
]
HOTPOTQA_LEAD_IN = "The following documents can help answer the query:"
HOTPOTQA_CORPUS = [
    "ID: 0 | TITLE: Shinji Okazaki | CONTENT: Shinji Okazaki is a Japanese footballer who plays "
    "as a forward. | END ID: 0",
    "ID: 1 | TITLE: Ain't Thinkin' 'Bout You | CONTENT: \"Ain't Thinkin' 'Bout You\" is a song by "
    "the band Rixton. | END ID: 1",
    "ID: 2 | TITLE: Best Footballer in Asia 2016 | CONTENT: The Best Footballer in Asia 2016 was "
    "awarded to Shinji Okazaki. | END ID: 2",
    "ID: 3 | TITLE: The Lodger (2009 film) | CONTENT: The Lodger is a 2009 thriller film. | END ID: 3",
]
HOTPOTQA_EXAMPLES = [
    "====== Example 1 ======",
    *HOTPOTQA_QUERY,
    "query: What year was the recipient of the 2016 Best Footballer in Asia born?",
    HOTPOTQA_LEAD_IN,
    "TITLE: Best Footballer in Asia 2016 | ID: 2",
    "TITLE: Shinji Okazaki | ID: 0",
    "Final Answer: ['2', '0']",
    "====== Example 2 ======",
    *HOTPOTQA_QUERY,
    "query: Which film came out in 2009?",
    HOTPOTQA_LEAD_IN,
    "TITLE: The Lodger (2009 film) | ID: 3",
    "Final Answer: ['3']",
]
HOTPOTQA_TEST = [
    "====== Now let's start! ======",
    *HOTPOTQA_QUERY,
    'query: How many records had the team sold before performing "aint thinkin bout you"?',
    HOTPOTQA_LEAD_IN,
]

# The paper's wording (paper_wording): Table 6 instruction, Figure 11 query text and lead-in.
PAPER_HOTPOTQA_INSTRUCTION = (
    "You will be given a list of documents. You need to read carefully and understand all of them. "
    "Then you will be given a query that may require you to use 1 or more documents to find the "
    "answer. Your goal is to find all documents from the list that can help answer the query."
)
PAPER_HOTPOTQA_QUERY = (
    "Which documents are needed to answer the query? Print out the TITLE and ID of each document. "
    "Then format the IDs into a list."
)
PAPER_LEAD_IN = "The following documents are needed to answer the query:"


def paper(block: list[str]) -> list[str]:
    """A default-wording block in the paper's wording (same documents, reasoning and answers)."""
    out: list[str] = []
    for line in block:
        if line == HOTPOTQA_QUERY[0]:
            out.append(PAPER_HOTPOTQA_QUERY)
        elif line == NO_PERFECT_ANSWER:
            continue
        elif line == HOTPOTQA_LEAD_IN:
            out.append(PAPER_LEAD_IN)
        else:
            out.append(line)
    return out


def lines(*groups: list[str]) -> str:
    """Chunks joined as upstream sends them: every line ends in exactly one newline."""
    return "".join(line + "\n" for group in groups for line in group)
