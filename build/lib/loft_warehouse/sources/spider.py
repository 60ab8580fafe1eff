"""Spider dev as a LOFT SQL dataset: the dumped databases' tables and the dev questions.

Each table is one document (title = table name, text = the table as CSV) in the corpus of its
database; a question's corpus is its whole database, so its gold documents are all its tables
(as the release's `candidate_pids`). Questions over a database without a dump (wta_1) are left
out; `dropped_queries` lists them and the gold-execution table records them.
"""

from __future__ import annotations

import logging
from pathlib import Path

from loft_warehouse.readers import read_json, require
from loft_warehouse.registry import DatasetSpec
from loft_warehouse.sources.base import Document, Query, SourceData, as_loft_loads
from loft_warehouse.sql.databases import databases, table_csv

SPIDER_DEV = Path("raw", "spider", "dev.json")
log = logging.getLogger(__name__)


def table_pid(db_id: str, table: str) -> str:
    """The pid of one table: unique across databases."""
    return f"{db_id}.{table}"


def database_documents(root: Path) -> tuple[list[Document], dict[str, list[str]]]:
    """One document per table of every dumped database, and each database's pids in order."""
    documents: list[Document] = []
    pids: dict[str, list[str]] = {}
    for db_id, dump in databases(root).items():
        pids[db_id] = []
        for table in dump.tables:
            pid = table_pid(db_id, table.name)
            documents.append(
                Document(
                    pid=pid,
                    text=as_loft_loads(table_csv(table)),
                    title=as_loft_loads(table.name),
                    corpus_id=db_id,
                    source_file=str(dump.path),
                    source_row=table.create_line,
                )
            )
            pids[db_id].append(pid)
    return documents, pids


def sql_query(qid: str, db_id: str, turns: list[str], sql: list[str], pids: list[str], path: Path, row: int) -> Query:
    return Query(
        qid=qid,
        turns=turns,
        gold=[None] * len(turns),
        source_file=str(path),
        source_row=row,
        gold_pids=[list(pids) for _ in turns],
        relevant_pids=list(pids),
        corpus_id=db_id,
        db_id=db_id,
        gold_sql=sql,
    )


def questions(root: Path) -> list[tuple[str, str, str, str, int]]:
    """(qid, db_id, question, gold SQL, record number) for every Spider dev question."""
    path = root / SPIDER_DEV
    found = []
    for row, record in enumerate(read_json(path), start=1):
        require(record, ("db_id", "question", "query"), path, row)
        found.append(
            (f"spider-dev-{row - 1}", record["db_id"], record["question"].strip(), record["query"].strip(), row)
        )
    return found


def dropped_queries(root: Path) -> list[tuple[str, str]]:
    """(qid, db_id) of questions whose database has no dump."""
    known = databases(root)
    return [(qid, db_id) for qid, db_id, *_ in questions(root) if db_id not in known]


def load(spec: DatasetSpec, root: Path) -> SourceData:
    """Tables of the dumped databases and the Spider dev questions over them."""
    documents, pids = database_documents(root)
    path = root / SPIDER_DEV
    queries = [
        sql_query(qid, db_id, [question], [sql], pids[db_id], path, row)
        for qid, db_id, question, sql, row in questions(root)
        if db_id in pids
    ]
    dropped = dropped_queries(root)
    if dropped:
        missing = sorted({db_id for _, db_id in dropped})
        log.warning("spider: %d questions dropped, no dump for %s", len(dropped), missing)
    return SourceData(documents, queries)
