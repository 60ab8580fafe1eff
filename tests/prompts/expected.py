"""Expected text shared by the rendering tests: the hand-written HotPotQA corpus of conftest
rendered in the paper's Figure 11 layout."""

from __future__ import annotations

HOTPOTQA_INSTRUCTION = (
    "You will be given a list of documents. You need to read carefully and understand all of them. "
    "Then you will be given a query that may require you to use 1 or more documents to find the "
    "answer. Your goal is to find all documents from the list that can help answer the query."
)
HOTPOTQA_QUERY = (
    "Which documents are needed to answer the query? Print out the TITLE and ID of each document. "
    "Then format the IDs into a list."
)
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
    HOTPOTQA_QUERY,
    "query: What year was the recipient of the 2016 Best Footballer in Asia born?",
    "The following documents are needed to answer the query:",
    "TITLE: Best Footballer in Asia 2016 | ID: 2",
    "TITLE: Shinji Okazaki | ID: 0",
    "Final Answer: ['2', '0']",
    "====== Example 2 ======",
    HOTPOTQA_QUERY,
    "query: Which film came out in 2009?",
    "The following documents are needed to answer the query:",
    "TITLE: The Lodger (2009 film) | ID: 3",
    "Final Answer: ['3']",
]
HOTPOTQA_TEST = [
    "====== Now let's start! ======",
    HOTPOTQA_QUERY,
    'query: How many records had the team sold before performing "aint thinkin bout you"?',
    "The following documents are needed to answer the query:",
]


def lines(*groups: list[str]) -> str:
    """Chunks joined as upstream sends them: every line ends in exactly one newline."""
    return "".join(line + "\n" for group in groups for line in group)
