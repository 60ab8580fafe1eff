"""SParC dev as a LOFT SQL dataset: multi-turn conversations over the Spider dev databases.

A conversation is one query whose turns are its utterances, each with its own gold SQL. The
corpus is the same set of database tables as Spider's. Conversations over a database without
a dump (wta_1) are left out; `dropped_queries` lists them.
"""

from __future__ import annotations

import logging
from pathlib import Path

from loft_warehouse.errors import BadInputError
from loft_warehouse.readers import read_json, require
from loft_warehouse.registry import DatasetSpec
from loft_warehouse.sources.base import SourceData
from loft_warehouse.sources.spider import database_documents, sql_query
from loft_warehouse.sql.databases import databases

SPARC_DEV = Path("raw", "sparc", "dev.json")
log = logging.getLogger(__name__)


def conversations(root: Path) -> list[tuple[str, str, list[str], list[str], int]]:
    """(qid, db_id, utterances, gold SQL per turn, record number) for every SParC dev dialogue."""
    path = root / SPARC_DEV
    found = []
    for row, record in enumerate(read_json(path), start=1):
        require(record, ("database_id", "interaction"), path, row)
        turns = record["interaction"]
        if not turns:
            raise BadInputError(path, row, "conversation without turns")
        for turn in turns:
            require(turn, ("utterance", "query"), path, row)
        found.append(
            (
                f"sparc-dev-{row - 1}",
                record["database_id"],
                [t["utterance"].strip() for t in turns],
                [t["query"].strip() for t in turns],
                row,
            )
        )
    return found


def dropped_queries(root: Path) -> list[tuple[str, str]]:
    """(qid, db_id) of conversations whose database has no dump."""
    known = databases(root)
    return [(qid, db_id) for qid, db_id, *_ in conversations(root) if db_id not in known]


def load(spec: DatasetSpec, root: Path) -> SourceData:
    """Tables of the dumped databases and the SParC dev conversations over them."""
    documents, pids = database_documents(root)
    path = root / SPARC_DEV
    queries = [
        sql_query(qid, db_id, utterances, sql, pids[db_id], path, row)
        for qid, db_id, utterances, sql, row in conversations(root)
        if db_id in pids
    ]
    dropped = dropped_queries(root)
    if dropped:
        missing = sorted({db_id for _, db_id in dropped})
        log.warning("sparc: %d conversations dropped, no dump for %s", len(dropped), missing)
    return SourceData(documents, queries)
