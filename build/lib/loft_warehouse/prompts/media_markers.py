"""A multimodal prompt as text with one marker per media part, so that it travels through the
runner as a text prompt does (prompt rows, prefixes, request keys, the store) and every
provider turns the markers back into its own media parts when it sends.

A marker names the media item by the sha256 of the bytes sent, so a request key computed over
the text covers the media: another image is another key. LOFT's text never holds a marker
(render() refuses one), so splitting is exact.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from loft_warehouse.prompts.multimodal import TEXT, Part

_MARKER = re.compile(r"<<loft-media (?P<mime>[a-z]+/[a-z0-9.+-]+) sha256:(?P<sha>[0-9a-f]{64})>>")
_OPENING = "<<loft-media "


@dataclass(frozen=True)
class MediaRef:
    """A media part of a marked text."""

    mime_type: str
    sha256: str


def marker(mime_type: str, sha256: str) -> str:
    """The marker of one media item."""
    text = f"{_OPENING}{mime_type} sha256:{sha256}>>"
    if not _MARKER.fullmatch(text):
        raise ValueError(f"not a media type and sha256 a marker can name: {mime_type!r}, {sha256!r}")
    return text


def marked_text(parts: Iterable[Part]) -> str:
    """Parts in order as one text: text parts as they are, media parts as markers."""
    pieces = []
    for part in parts:
        if part.mime_type == TEXT:
            if _OPENING in (part.text or ""):
                raise ValueError(f"a text part holds a media marker's opening: {part.text!r}")
            pieces.append(part.text or "")
        else:
            if part.media_sha256 is None:
                raise ValueError(f"a {part.mime_type} part without its media_sha256")
            pieces.append(marker(part.mime_type, part.media_sha256))
    return "".join(pieces)


def split(text: str) -> list[str | MediaRef]:
    """A marked text as its pieces in order: non-empty texts and media references."""
    pieces: list[str | MediaRef] = []
    start = 0
    for match in _MARKER.finditer(text):
        if match.start() > start:
            pieces.append(text[start : match.start()])
        pieces.append(MediaRef(match["mime"], match["sha"]))
        start = match.end()
    if start < len(text):
        pieces.append(text[start:])
    return pieces


def media_of(text: str) -> list[MediaRef]:
    """The media a marked text sends, in order."""
    return [MediaRef(m["mime"], m["sha"]) for m in _MARKER.finditer(text)]


def text_only(text: str) -> str:
    """A marked text without its markers (what the text tokens are counted on)."""
    return _MARKER.sub("", text)
