"""The media a multimodal request sends, looked up by the hashes its marked text names.

A request's messages are text with one marker per media part (prompts/media_markers.py); each
provider turns them into its own parts with `pieces`. The library holds the bytes of
stg_mm_media, as landed: a marker whose hash or type the library does not hold is an error
naming it, never a part silently left out.
"""

from __future__ import annotations

import base64
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import polars as pl

from loft_warehouse.errors import ConfigurationError
from loft_warehouse.inference import media_tokens
from loft_warehouse.prompts import media_markers

if TYPE_CHECKING:
    from loft_warehouse.inference.systems import System

MEDIA_COLUMNS = ("sha256", "mime_type", "data", "duration_ms")
MM_TASK = "mm"


@dataclass(frozen=True)
class MediaItem:
    """One media item as sent: its bytes, type and (audio) duration."""

    sha256: str
    mime_type: str
    data: bytes
    duration_ms: int | None = None

    def base64(self) -> str:
        return base64.b64encode(self.data).decode("ascii")


class MediaLibrary:
    """Media items by sha256 (stg_mm_media's rows; one item however many datasets send it)."""

    def __init__(self, items: Iterable[MediaItem]) -> None:
        self.items = {item.sha256: item for item in items}

    @classmethod
    def from_frame(cls, frame: pl.DataFrame) -> MediaLibrary:
        return cls(
            MediaItem(row["sha256"], row["mime_type"], bytes(row["data"]), row["duration_ms"])
            for row in frame.select(MEDIA_COLUMNS).unique("sha256").iter_rows(named=True)
        )

    def item(self, ref: media_markers.MediaRef) -> MediaItem:
        found = self.items.get(ref.sha256)
        if found is None:
            raise ConfigurationError(f"stg_mm_media has no media item sha256:{ref.sha256} ({ref.mime_type})")
        if found.mime_type != ref.mime_type:
            raise ConfigurationError(
                f"media sha256:{ref.sha256} is {found.mime_type} in stg_mm_media, the prompt names {ref.mime_type}"
            )
        return found

    def pieces(self, text: str) -> list[str | MediaItem]:
        """A marked text as text pieces and media items, in order."""
        return [p if isinstance(p, str) else self.item(p) for p in media_markers.split(text)]


def has_media(text: str) -> bool:
    return bool(media_markers.media_of(text))


def unsupported_types(provider: str, texts: Iterable[str], extra: frozenset[str] = frozenset()) -> list[str]:
    """The media types the texts send that the provider (with a system's extra modalities)
    does not take (media_tokens.yaml)."""
    types = {ref.mime_type for text in texts for ref in media_markers.media_of(text)}
    return sorted(t for t in types if not media_tokens.supported(provider, t, extra))


def tokens(provider: str, text: str, library: MediaLibrary) -> int | None:
    """The provider's input tokens for the media a text sends (None: not documented for it)."""
    items = [library.item(ref) for ref in media_markers.media_of(text)]
    return media_tokens.sent_tokens(provider, ((item.mime_type, item.duration_ms) for item in items))


def encoded_size(text: str, library: MediaLibrary | None) -> int:
    """Bytes the media of a text take in a JSON body (base64)."""
    pieces = pieces_of(text, library)
    return sum(4 * math.ceil(len(p.data) / 3) for p in pieces if isinstance(p, MediaItem))


def pieces_of(text: str, library: MediaLibrary | None) -> list[str | MediaItem]:
    """A message's content as pieces: [text] when it names no media."""
    if not has_media(text):
        return [text]
    if library is None:
        raise ConfigurationError("a prompt names media, but the run was given no stg_mm_media")
    return library.pieces(text)


@dataclass(frozen=True)
class MediaScope:
    """Prompt rows split by what a provider takes: `taken` (every text row, and the multimodal
    rows with their media tokens added to n_tokens_prefix and n_tokens_total), `unsupported`
    (multimodal rows sending a type in `lacking`), and how many taken rows have media whose
    tokens the provider does not document (counted as text alone)."""

    taken: pl.DataFrame
    unsupported: pl.DataFrame
    lacking: tuple[str, ...] = ()
    undocumented: int = 0


def scope(rows: pl.DataFrame, system: System, prefixes: Mapping[str, str], library: MediaLibrary | None) -> MediaScope:
    """What a system can be sent of these rows (its provider's media types, and those its
    `options.input_media` adds), with its provider's count of their media tokens."""
    mm = rows.filter(pl.col("task") == MM_TASK)
    if not mm.height:
        return MediaScope(rows, rows.clear())
    if library is None:
        raise ConfigurationError("multimodal prompt rows, but the run was given no stg_mm_media")
    extra = media_tokens.extra_modalities(system.name, system.options)
    lacking: set[str] = set()
    undocumented = 0
    taken: list[dict[str, Any]] = []
    unsupported: list[dict[str, Any]] = []
    prefix_types: dict[str, list[str]] = {}
    prefix_tokens: dict[str, int | None] = {}
    for row in mm.iter_rows(named=True):
        prefix = prefixes.get(row["prefix_id"], "")
        if row["prefix_id"] not in prefix_types:
            prefix_types[row["prefix_id"]] = unsupported_types(system.provider, [prefix], extra)
        types = sorted({*prefix_types[row["prefix_id"]], *unsupported_types(system.provider, [row["suffix"]], extra)})
        if types:
            lacking.update(types)
            unsupported.append(row)
            continue
        if row["prefix_id"] not in prefix_tokens:
            prefix_tokens[row["prefix_id"]] = tokens(system.provider, prefix, library)
        in_prefix = prefix_tokens[row["prefix_id"]]
        in_suffix = tokens(system.provider, row["suffix"], library)
        if in_prefix is None or in_suffix is None:
            undocumented += 1
            in_prefix = in_suffix = 0
        taken.append(
            {
                **row,
                "n_tokens_prefix": int(row["n_tokens_prefix"] or 0) + in_prefix,
                "n_tokens_total": int(row["n_tokens_total"] or 0) + in_prefix + in_suffix,
            }
        )
    return MediaScope(
        pl.concat([rows.filter(pl.col("task") != MM_TASK), pl.DataFrame(taken, schema=rows.schema)]),
        pl.DataFrame(unsupported, schema=rows.schema),
        tuple(sorted(lacking)),
        undocumented,
    )
