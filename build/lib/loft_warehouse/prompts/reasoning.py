"""Hand-written few-shot reasoning (reasoning.yaml) rendered with the variant's shown IDs."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import yaml

from loft_warehouse.errors import BadInputError

REASONING_FILE = Path(__file__).with_name("reasoning.yaml")
_DOC_RE = re.compile(r"\{doc:([^}]+)\}")


@cache
def load_chains(path: str) -> dict[tuple[str, str, str], tuple[str, ...]]:
    """Every chain of a reasoning file, keyed (task, dataset, qid)."""
    with open(path, encoding="utf-8") as handle:
        document = yaml.safe_load(handle) or {}
    chains = {}
    for task, datasets in document.items():
        for dataset, queries in (datasets or {}).items():
            for qid, lines in (queries or {}).items():
                if not isinstance(lines, list) or not all(isinstance(x, str) for x in lines):
                    raise BadInputError(path, f"{task}/{dataset}/{qid}", "expected a list of lines")
                chains[(str(task), str(dataset), str(qid))] = tuple(lines)
    return chains


def chain(task: str, dataset: str, qid: str, shown_of: dict[str, str]) -> list[str]:
    """`reasoning: ...` lines of a few-shot query ([] when none is written), with every
    `{doc:PID}` replaced by the document's shown ID; a PID not in the corpus is an error."""
    lines = load_chains(str(REASONING_FILE)).get((task, dataset, qid), ())

    def shown(match: re.Match[str]) -> str:
        pid = match.group(1)
        if pid not in shown_of:
            raise BadInputError(REASONING_FILE, f"{task}/{dataset}/{qid}", f"document {pid} is not in the corpus")
        return shown_of[pid]

    return [f"reasoning: {_DOC_RE.sub(shown, line)}\n" for line in lines]
