"""Line-numbered readers: every malformed record is reported with its file and line."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from loft_warehouse.errors import BadInputError


def read_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield (1-based line number, object) for each non-blank line; a bad line raises."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        for line_no, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise BadInputError(path, line_no, f"malformed JSON ({exc.msg})") from exc
            if not isinstance(record, dict):
                raise BadInputError(path, line_no, "expected a JSON object")
            yield line_no, record


def read_json(path: Path) -> Any:
    """Parse a whole JSON document; a syntax error names the line."""
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except json.JSONDecodeError as exc:
        raise BadInputError(path, exc.lineno, f"malformed JSON ({exc.msg})") from exc


def require(record: dict[str, Any], keys: tuple[str, ...], path: Path, row: int) -> None:
    """Fail loudly when a record lacks a field the loader depends on."""
    missing = [key for key in keys if key not in record]
    if missing:
        raise BadInputError(path, row, f"missing field(s) {', '.join(missing)}")
