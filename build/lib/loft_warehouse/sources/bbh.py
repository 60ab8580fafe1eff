"""BIG-Bench Hard tasks for many-shot ICL: raw/bbh/{source_name}.json, 250 examples each.

Every example is both a candidate shot (pid f"{source_name}-{i}", answer and label = target)
and a query (qid = the same id, gold = target.split(" ") as in LOFT). A query lists its own
example as relevant, so an example drawn as a dev/test query is never also a shot in the
context. LOFT keeps 10 dev + 90 test queries; the other 150 examples are the shot pool, of which
as many as fit 32k are used (paper Table 5: date 150, salient 104, tracking7 123, web 150).
Rows (source_row, error positions) are 1-based positions in the "examples" array.
"""

from __future__ import annotations

from pathlib import Path

from loft_warehouse.errors import BadInputError, ConfigurationError
from loft_warehouse.readers import read_json, require
from loft_warehouse.registry import DatasetSpec
from loft_warehouse.sources.base import Document, Query, SourceData

RELATIVE_DIR = Path("raw/bbh")


def load(spec: DatasetSpec, root: Path) -> SourceData:
    """All examples of one BBH task as shots and as queries."""
    if not spec.source_name:
        raise ConfigurationError(f"icl/{spec.dataset}: a bbh dataset needs source_name (the BBH task)")
    path = root / RELATIVE_DIR / f"{spec.source_name}.json"
    content = read_json(path)
    examples = content.get("examples") if isinstance(content, dict) else None
    if not isinstance(examples, list):
        raise BadInputError(path, None, 'expected an object with an "examples" list')
    documents, queries = [], []
    for row, example in enumerate(examples, start=1):
        if not isinstance(example, dict):
            raise BadInputError(path, row, "example is not an object")
        require(example, ("input", "target"), path, row)
        pid = f"{spec.source_name}-{row - 1}"
        text, target = str(example["input"]).strip(), str(example["target"]).strip()
        if not text or not target:
            raise BadInputError(path, row, "example has an empty input or target")
        documents.append(
            Document(
                pid=pid,
                text=text,
                answer=target,
                label=target,
                source_file=str(path),
                source_row=row,
            )
        )
        queries.append(
            Query(
                qid=pid,
                turns=[text],
                gold=[target.split(" ")],
                source_file=str(path),
                source_row=row,
                gold_pids=[[]],
                relevant_pids=[pid],
            )
        )
    return SourceData(documents, queries)
