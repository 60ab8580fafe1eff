"""Where data lives, how big each benchmark size is, and how much memory DuckDB may take.

The data root is one setting: the dbt var ``data_dir`` or ``$LOFT_DATA_DIR``; when neither is
set, ``../shared/data`` beside the project is used if it exists.
"""

from __future__ import annotations

import contextlib
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

from loft_warehouse.errors import ConfigurationError

PROJECT_ROOT = Path(__file__).resolve().parents[2]
BUDGET_FRACTION = 0.9
_MEMORY = re.compile(r"\d+(\.\d+)?\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)", re.IGNORECASE)


@dataclass(frozen=True)
class Size:
    """A LOFT context length: its label, N in tokens, and the split sizes it carries."""

    label: str
    tokens: int

    @property
    def budget(self) -> int:
        """Corpus token budget: 0.9 x N leaves room for instructions and tokenizer drift."""
        return int(BUDGET_FRACTION * self.tokens)


SIZES: dict[str, Size] = {
    "32k": Size("32k", 32_000),
    "128k": Size("128k", 128_000),
    "1m": Size("1m", 1_000_000),
}
ICL_CONTEXTS: dict[str, Size] = {
    label: Size(label, n)
    for label, n in [("2k", 2_000), ("4k", 4_000), ("8k", 8_000), ("16k", 16_000), ("32k", 32_000)]
}


def size(label: str) -> Size:
    """The Size for a label such as '128k'; unknown labels are a configuration error."""
    try:
        return SIZES[label]
    except KeyError as exc:
        raise ConfigurationError(f"unknown LOFT size {label!r}; expected one of {list(SIZES)}") from exc


def context(label: str) -> Size:
    """A context length by label: a benchmark size ('128k') or a many-shot context ('2k')."""
    found = ICL_CONTEXTS.get(label) or SIZES.get(label)
    if found is None:
        raise ConfigurationError(f"unknown context length {label!r}; expected one of {[*ICL_CONTEXTS, *SIZES]}")
    return found


def data_dir(configured: str | None = None) -> Path:
    """Resolve the data root: explicit setting, then $LOFT_DATA_DIR, then ../shared/data."""
    value = (configured or "").strip() or os.environ.get("LOFT_DATA_DIR", "").strip()
    if value:
        path = Path(value).expanduser()
        if not path.is_absolute():
            path = PROJECT_ROOT / path
        if not path.is_dir():
            raise ConfigurationError(f"data directory {path} (from data_dir/LOFT_DATA_DIR) does not exist")
        return path
    default = PROJECT_ROOT.parent / "shared" / "data"
    if default.is_dir():
        return default
    raise ConfigurationError(
        "no data directory: set LOFT_DATA_DIR (or dbt --vars '{data_dir: ...}') to the folder "
        f"holding loft/, raw/ and tokenizers/ (looked for {default})"
    )


def tokenizer_model(configured: str | None = None, root: Path | None = None) -> Path:
    """The SentencePiece .model used to size corpora; default: the shared Mistral v1 model."""
    value = (configured or "").strip() or os.environ.get("LOFT_TOKENIZER_MODEL", "").strip()
    if value:
        path = Path(value).expanduser()
    else:
        path = (root or data_dir()) / "tokenizers" / "sentencepiece" / "mistral_tokenizer.model.v1"
    if not path.is_file():
        raise ConfigurationError(f"tokenizer model {path} not found (set LOFT_TOKENIZER_MODEL)")
    return path


def build_tokenizer_model(tokenizer_setting: str | None, data_dir_setting: str | None) -> Path:
    """The tokenizer model a build's settings name: `tokenizer_model`, else the one of the data
    dir (`data_dir`), which is only looked up then."""
    root = None if tokenizer_setting else data_dir(data_dir_setting)
    return tokenizer_model(tokenizer_setting, root)


def flag(value: Any, name: str) -> bool:
    """A yes/no setting as dbt hands it over (a bool, or the text of a var / env value)."""
    if isinstance(value, bool):
        return value
    text = str(value or "").strip().lower()
    if text in ("", "false", "0", "no", "none"):
        return False
    if text in ("true", "1", "yes"):
        return True
    raise ConfigurationError(f"{name} must be true or false, got {value!r}")


def share(value: Any, name: str) -> float | None:
    """A share between 0 and 1 as dbt hands it over (None: not given); checked before a build so
    a typo is not compared in SQL as text or as an impossible threshold."""
    if value is None:
        return None
    try:
        number = float(str(value).strip())
    except ValueError as exc:
        raise ConfigurationError(f"{name} must be a number between 0 and 1, got {value!r}") from exc
    if not 0 <= number <= 1:
        raise ConfigurationError(f"{name} must be a number between 0 and 1, got {value!r}")
    return number


def machine_memory_bytes() -> int:
    """The memory this process may use: physical RAM, or a container's smaller cgroup limit."""
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    for limit_file in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        with contextlib.suppress(OSError):
            value = Path(limit_file).read_text().strip()
            if value.isdigit():
                total = min(total, int(value))
    return total


def duckdb_memory_limit() -> str:
    """$LOFT_DUCKDB_MEMORY_LIMIT (e.g. 2GB): the most memory DuckDB may hold in a build or an
    import before it spills to disk. Unset: a quarter of the machine's memory (at least 1 GiB),
    because DuckDB's own default, 80% of RAM, fills with cached pages on a large run whether it
    needs them or not, and a build's Python models need memory beside it."""
    value = os.environ.get("LOFT_DUCKDB_MEMORY_LIMIT", "").strip()
    if not value:
        return f"{max(1024, machine_memory_bytes() // 4 // 2**20)}MiB"
    if not _MEMORY.fullmatch(value):
        raise ConfigurationError(f"LOFT_DUCKDB_MEMORY_LIMIT must be a size such as 2GB or 1500MB, got {value!r}")
    return value


def limit_memory(con: duckdb.DuckDBPyConnection, spill_dir: Path | None = None) -> duckdb.DuckDBPyConnection:
    """Apply duckdb_memory_limit() to a connection. An in-memory connection spills to spill_dir
    (DuckDB's default for it is .tmp in the working directory); a database file spills beside
    itself."""
    con.execute(f"set memory_limit = '{duckdb_memory_limit()}'")
    if spill_dir is not None:
        con.execute("set temp_directory = ?", [str(spill_dir)])
    return con
