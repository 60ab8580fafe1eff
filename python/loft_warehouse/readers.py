"""Line-numbered readers: every malformed record is reported with its file and line.

Bytes that are not UTF-8, a gzip file cut short, and a line longer than the cap
($LOFT_MAX_LINE_BYTES, default 64 MiB; checked before a line is decoded, parsed or tokenized)
are errors naming the file and line, like malformed JSON. A media file has its own cap
($LOFT_MAX_MEDIA_BYTES, default 64 MiB), checked while it is read; a passage, title or query turn
has $LOFT_MAX_TEXT_BYTES (default 8 MiB), checked before it is tokenized. A model's reply carries at most
$LOFT_MAX_RESPONSE_BYTES of text (default 4 MiB), counted as it streams in. A setting given as
YAML on a command line is at most MAX_SETTINGS_BYTES and holds no alias.
"""

from __future__ import annotations

import gzip
import json
import math
import os
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from loft_warehouse.errors import BadInputError, ConfigurationError

DEFAULT_MAX_LINE_BYTES = 64 * 2**20
DEFAULT_MAX_MEDIA_BYTES = 64 * 2**20
DEFAULT_MAX_RESPONSE_BYTES = 4 * 2**20
DEFAULT_MAX_TEXT_BYTES = 8 * 2**20
MAX_SETTINGS_BYTES = 64 * 2**10
TOO_DEEP = "JSON nested too deeply to read (Python's recursion limit)"


def byte_cap(variable: str, default: int) -> int:
    value = os.environ.get(variable, "").strip()
    if not value:
        return default
    try:
        cap = int(value)
    except ValueError as exc:
        raise ConfigurationError(f"{variable} must be a number of bytes, got {value!r}") from exc
    if cap < 1:
        raise ConfigurationError(f"{variable} must be positive, got {cap}")
    return cap


def utf8_size(text: str) -> int:
    """The bytes text takes in UTF-8, which every budget here counts (a lone surrogate, which
    JSON can escape but UTF-8 cannot hold, as the three bytes it would take)."""
    return len(text.encode("utf-8", "surrogatepass"))


def max_line_bytes() -> int:
    """The longest line a reader accepts ($LOFT_MAX_LINE_BYTES)."""
    return byte_cap("LOFT_MAX_LINE_BYTES", DEFAULT_MAX_LINE_BYTES)


def max_media_bytes() -> int:
    """The largest media file a release may name ($LOFT_MAX_MEDIA_BYTES)."""
    return byte_cap("LOFT_MAX_MEDIA_BYTES", DEFAULT_MAX_MEDIA_BYTES)


def max_text_bytes() -> int:
    """The longest passage, title or query turn ($LOFT_MAX_TEXT_BYTES): 8 MiB is some twice the
    text a 1m context holds, so a longer one could never be shown whole."""
    return byte_cap("LOFT_MAX_TEXT_BYTES", DEFAULT_MAX_TEXT_BYTES)


def max_response_bytes() -> int:
    """The most text one model reply may carry, answer and thinking together
    ($LOFT_MAX_RESPONSE_BYTES): 4 MiB is some 20 times the longest output any configured model
    may give."""
    return byte_cap("LOFT_MAX_RESPONSE_BYTES", DEFAULT_MAX_RESPONSE_BYTES)


def decode_utf8(raw: bytes, path: Path, line_no: int = 1) -> str:
    """Text of bytes read from `path` (starting at line_no); bytes that are not UTF-8 name their line."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        line = line_no + raw.count(b"\n", 0, exc.start)
        raise BadInputError(path, line, f"not UTF-8: byte 0x{raw[exc.start]:02x} at column {column}") from exc


def lines_within(path: Path, cap: int, block_bytes: int = 8 * 2**20) -> bool:
    """Whether no line of the plain file at `path` is longer than `cap` bytes (its newline aside),
    told by reading it in blocks and stopping at the first line over the cap: a reader that takes
    a whole file at once checks this first, so a file with no line breaks is never held whole."""
    block = bytearray(min(cap, block_bytes))
    line_start = offset = 0
    with path.open("rb", buffering=0) as handle:
        while filled := handle.readinto(block):
            first = block.find(b"\n", 0, filled)
            if first == -1:
                if offset + filled - line_start > cap:
                    return False
            else:
                if offset + first - line_start > cap:
                    return False
                line_start = offset + block.rfind(b"\n", 0, filled) + 1
            offset += filled
    return offset - line_start <= cap


def read_lines(path: Path) -> Iterator[tuple[int, str]]:
    """Yield (1-based line number, text) of a text or .gz file, checked as the module says.
    Lines end as Python's text files end them, and so as LOFT's readers see them: at "\n", "\r\n"
    or a lone "\r" (a file written with CR line endings is one line per record, as there)."""
    cap = max_line_bytes()
    opener = gzip.open if path.suffix == ".gz" else open
    line_no = 0
    try:
        with opener(path, "rb") as handle:
            while raw := handle.readline(cap + 1):
                if len(raw) > cap and not (len(raw) == cap + 1 and raw.endswith(b"\n")):
                    raise BadInputError(path, line_no + 1, f"line longer than {cap} bytes (LOFT_MAX_LINE_BYTES)")
                pieces = raw.replace(b"\r\n", b"\n").replace(b"\r", b"\n").splitlines() if b"\r" in raw else [raw]
                for piece in pieces:
                    line_no += 1
                    yield line_no, decode_utf8(piece, path, line_no)
    except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
        raise BadInputError(path, line_no + 1, f"truncated or corrupt gzip data ({exc})") from exc


def settings_yaml(text: str, what: str) -> Any:
    """The value of YAML given as a setting (`what` names it). An alias is refused before anything
    is built from the text: a few hundred bytes of nested aliases expand to billions of items
    wherever the value is walked (a message's repr, a JSON copy), and a setting never needs one."""
    size = utf8_size(text)
    if size > MAX_SETTINGS_BYTES:
        raise ConfigurationError(f"{what} is {size} bytes; a setting is at most {MAX_SETTINGS_BYTES}")
    try:
        for event in yaml.parse(text, Loader=yaml.SafeLoader):
            if isinstance(event, yaml.AliasEvent):
                mark = event.start_mark
                where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
                raise ConfigurationError(
                    f"{what}: YAML alias{where}: a setting is written out in full (aliases are not read)"
                )
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigurationError(f"{what} is not YAML: {exc}") from exc
    except RecursionError as exc:
        raise ConfigurationError(f"{what} is nested too deeply to read (Python's recursion limit)") from exc


class NotJSONError(ValueError):
    """NaN, Infinity or -Infinity: Python's json reads them, JSON has no such value."""


def _refuse_constant(name: str) -> Any:
    raise NotJSONError(f"{name} is not a JSON value")


def loads(text: str) -> Any:
    """json.loads that refuses NaN and Infinity (a score or gold that is no number would be
    carried on silently, and written back as invalid JSON)."""
    return json.loads(text, parse_constant=_refuse_constant)


def read_jsonl(
    path: Path, *, allow_nan: bool = False, refused: list[BadInputError] | None = None
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield (1-based line number, object) for each non-blank line; a bad line raises, or with
    `refused` is added to it and skipped. allow_nan reads NaN and Infinity as Python does (a
    model's outputs, which LOFT's evaluator reads so); data and gold refuse them."""
    for line_no, line in read_lines(path):
        if not line.strip():
            continue
        try:
            record = _json_object(line, allow_nan, path, line_no)
        except BadInputError as exc:
            if refused is None:
                raise
            refused.append(exc)
            continue
        yield line_no, record


def holds_non_finite(value: Any) -> bool:
    """Whether a value json.loads made holds NaN or an infinity anywhere."""
    if isinstance(value, float):
        return not math.isfinite(value)
    if isinstance(value, list):
        return any(holds_non_finite(item) for item in value)
    if isinstance(value, dict):
        return any(holds_non_finite(item) for item in value.values())
    return False


def _json_object(line: str, allow_nan: bool, path: Path, line_no: int) -> dict[str, Any]:
    try:
        record = json.loads(line) if allow_nan else loads(line)
    except json.JSONDecodeError as exc:
        raise BadInputError(path, line_no, f"malformed JSON ({exc.msg})") from exc
    except NotJSONError as exc:
        raise BadInputError(path, line_no, f"malformed JSON ({exc})") from exc
    except RecursionError as exc:
        raise BadInputError(path, line_no, TOO_DEEP) from exc
    if not isinstance(record, dict):
        raise BadInputError(path, line_no, "expected a JSON object")
    return record


def read_json(path: Path) -> Any:
    """Parse a whole JSON document; a syntax error names the line."""
    text = decode_utf8(path.read_bytes(), path, 1)
    try:
        return loads(text)
    except json.JSONDecodeError as exc:
        raise BadInputError(path, exc.lineno, f"malformed JSON ({exc.msg})") from exc
    except NotJSONError as exc:
        raise BadInputError(path, None, f"malformed JSON ({exc})") from exc
    except RecursionError as exc:
        raise BadInputError(path, None, TOO_DEEP) from exc


def require(record: dict[str, Any], keys: tuple[str, ...], path: Path, row: int) -> None:
    """Fail loudly when a record lacks a field the loader depends on."""
    missing = [key for key in keys if key not in record]
    if missing:
        raise BadInputError(path, row, f"missing field(s) {', '.join(missing)}")
