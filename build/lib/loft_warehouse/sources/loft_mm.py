"""LOFT's multimodal release: mm/{dataset}/{size}/corpus.jsonl, *_queries.jsonl and resources/.

A corpus row or a query names its media in `metadata`, paths relative to the folder's
resources/ (absolute paths are taken as they are, as upstream's loader does when there is no
resources/ folder): `img_path` a list of images (several for a video's frames), `audio_path`
one WAV file for a corpus row and a one-path list for a query. A path must lead, once `..` and
symbolic links are followed, to a regular file inside the data folder, no larger than
$LOFT_MAX_MEDIA_BYTES: a release cannot have a file from elsewhere stored and sent to a
provider, nor hang a build on a FIFO or a device. The media land as the bytes LOFT
sends (utils.ContentChunk.data): an image resized to 512x512 and saved as JPEG, a WAV file as
it is, each known by the sha256 of those bytes; the source file's own hash stays beside it.
A WAV's duration, which prices it, is that of the samples the file holds, whatever its header
claims.

A query's media are used as LOFT's prompt code uses them: its image always, its audio only when
it has no text (speech-to-text). A corpus row's audio is sent only when it has no passage
(text-to-speech); with a passage the row is text alone. Anything LOFT could not send (a missing
or unreadable file, an image mode JPEG cannot hold, a WAV that is not one, a query with two
images) stops the load with the file and row that name it.
"""

from __future__ import annotations

import hashlib
import io
import os
import stat
import wave
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PIL import Image, UnidentifiedImageError

from loft_warehouse.errors import BadInputError
from loft_warehouse.readers import max_media_bytes, read_jsonl, require
from loft_warehouse.sources.base import Document, Query, SourceData, as_loft_loads
from loft_warehouse.sources.loft_release import EVALUATED_SPLIT, check_corpus_row, pid_list, query_files, typed_field

IMAGE_JPEG = "image/jpeg"
AUDIO_WAV = "audio/wav"
# What LOFT sends for an image, whatever its source size (utils._resize_image_bytes_to_512x512).
SENT_IMAGE_SIZE = (512, 512)
RESOURCES = "resources"


@dataclass(frozen=True)
class Media:
    """One media item as sent: its bytes, mime type and sha256, the source file and its sha256,
    and what a provider's token accounting needs (pixels of the source image, audio duration)."""

    sha256: str
    mime_type: str
    data: bytes
    source_file: str
    source_sha256: str
    width: int | None = None
    height: int | None = None
    duration_ms: int | None = None

    @property
    def byte_size(self) -> int:
        return len(self.data)


@dataclass
class MultimodalData:
    """A loaded mm dataset: documents and queries carry their media's hashes in order (Document
    .media, Query.media); `media` holds each distinct item once."""

    source: SourceData
    media: dict[str, Media]


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _image(raw: bytes, path: Path, where: Path, row: int) -> tuple[bytes, int, int]:
    """LOFT's image bytes: the image resized to 512x512, saved as JPEG with Pillow's defaults."""
    try:
        with Image.open(io.BytesIO(raw)) as image:
            width, height = image.size
            resized = image.resize(SENT_IMAGE_SIZE)
            out = io.BytesIO()
            resized.save(out, format="JPEG")
    except UnidentifiedImageError as exc:
        raise BadInputError(where, row, f"{path}: not an image Pillow can read") from exc
    except (OSError, ValueError, Image.DecompressionBombError) as exc:
        raise BadInputError(where, row, f"{path}: image cannot be sent as JPEG as LOFT sends it ({exc})") from exc
    return out.getvalue(), width, height


def _audio(raw: bytes, path: Path, where: Path, row: int) -> int:
    """The duration in ms of a WAV file (sent as it is) from the sample bytes after its data
    chunk's header, not the frame count the header declares; anything else is refused."""
    buffer = io.BytesIO(raw)
    try:
        with wave.open(buffer) as audio:
            samples_start = buffer.tell()
            rate, frame_bytes = audio.getframerate(), audio.getsampwidth() * audio.getnchannels()
    except (wave.Error, EOFError) as exc:
        raise BadInputError(where, row, f"{path}: not a WAV file ({exc})") from exc
    frames = (len(raw) - samples_start) // frame_bytes
    return round(1000 * frames / rate) if rate else 0


def _read_media(resolved: Path, path: Path, where: Path, row: int) -> bytes:
    """A regular file's bytes, refused past the cap while reading; never waits on a FIFO."""
    cap = max_media_bytes()
    try:
        with open(resolved, "rb", opener=lambda name, flags: os.open(name, flags | os.O_NONBLOCK)) as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                raise BadInputError(where, row, f"{path}: not a regular file")
            raw = handle.read(cap + 1)
    except OSError as exc:
        raise BadInputError(where, row, f"{path}: cannot read media file ({exc.strerror})") from exc
    if len(raw) > cap:
        raise BadInputError(where, row, f"{path}: media file larger than {cap} bytes (LOFT_MAX_MEDIA_BYTES)")
    return raw


class _MediaReader:
    """Reads each media file once, in the folder's resources/, keyed by the bytes sent; every
    path resolves inside `root`."""

    def __init__(self, folder: Path, root: Path) -> None:
        resources = folder / RESOURCES
        self.resources = resources if resources.is_dir() else None
        self.root = root.resolve()
        self.media: dict[str, Media] = {}
        self.sent_of: dict[tuple[Path, str], str] = {}

    def _path(self, name: Any, where: Path, row: int) -> Path:
        if not isinstance(name, str) or not name:
            raise BadInputError(where, row, f"a media path must be a non-empty string, got {name!r:.60}")
        path = Path(name)
        if not path.is_absolute():
            if self.resources is None:
                raise BadInputError(where, row, f"{name}: a relative media path needs the folder's {RESOURCES}/")
            path = self.resources / path
        return path

    def read(self, name: Any, mime_type: str, where: Path, row: int) -> str:
        path = self._path(name, where, row)
        if (path, mime_type) in self.sent_of:
            return self.sent_of[path, mime_type]
        try:
            resolved = path.resolve()
        except (OSError, RuntimeError) as exc:
            raise BadInputError(where, row, f"{path}: cannot resolve media path ({exc})") from exc
        if not resolved.is_relative_to(self.root):
            raise BadInputError(where, row, f"{path}: media path leads outside the data folder {self.root}")
        raw = _read_media(resolved, path, where, row)
        width = height = duration_ms = None
        if mime_type == IMAGE_JPEG:
            data, width, height = _image(raw, path, where, row)
        else:
            duration_ms = _audio(raw, path, where, row)
            data = raw
        digest = _sha256(data)
        if digest not in self.media:
            self.media[digest] = Media(digest, mime_type, data, str(path), _sha256(raw), width, height, duration_ms)
        self.sent_of[path, mime_type] = digest
        return digest


def _path_list(metadata: dict[str, Any], field: str, where: Path, row: int) -> list[Any]:
    value = metadata[field]
    if not isinstance(value, list) or not value:
        raise BadInputError(where, row, f"metadata.{field} must be a non-empty list of paths, got {value!r:.60}")
    return value


def _document(record: dict[str, Any], reader: _MediaReader, path: Path, row: int) -> Document:
    check_corpus_row(record, path, row)
    metadata = record.get("metadata") or {}
    text = as_loft_loads(record["passage_text"])
    media: list[str] = []
    if "audio_path" in metadata:
        if not text:
            media.append(reader.read(metadata["audio_path"], AUDIO_WAV, path, row))
    elif "img_path" in metadata:
        media.extend(reader.read(name, IMAGE_JPEG, path, row) for name in _path_list(metadata, "img_path", path, row))
    return Document(
        pid=record["pid"],
        title=as_loft_loads(record.get("title_text") or ""),
        text=text,
        source_file=str(path),
        source_row=row,
        media=tuple(media),
    )


def _query(record: dict[str, Any], reader: _MediaReader, split: str, path: Path, row: int) -> Query:
    require(record, ("qid", "query_text", "answers"), path, row)
    typed_field(record, "qid", (str, int), path, row)
    typed_field(record, "query_text", (str,), path, row)
    qid = str(record["qid"])
    metadata = record.get("metadata") or {}
    text = record["query_text"].strip()
    media: list[str] = []
    for field, mime_type, used in (("img_path", IMAGE_JPEG, True), ("audio_path", AUDIO_WAV, not text)):
        if field in metadata and used:
            names = _path_list(metadata, field, path, row)
            if len(names) != 1:
                raise BadInputError(path, row, f"qid {qid!r}: a query turn takes one {field} (LOFT), got {len(names)}")
            media.append(reader.read(names[0], mime_type, path, row))
    if not text and not media:
        raise BadInputError(path, row, f"qid {qid!r}: no query text and no query media")
    pids = pid_list(record["answers"], path, row)
    return Query(
        qid=qid,
        turns=[text],
        gold=[pids],
        gold_pids=[pids],
        relevant_pids=sorted(set(pids)),
        source_file=str(path),
        source_row=row,
        release_split=split,
        metadata=metadata,
        media=tuple(media),
    )


def load(folder: Path, splits: tuple[str, ...] | None = None, root: Path | None = None) -> MultimodalData:
    """Read one released mm dataset at one size, its media with it, from inside `root` (the data
    folder; by default the release folder itself)."""
    corpus_path = folder / "corpus.jsonl"
    if not corpus_path.exists():
        raise BadInputError(folder, None, "release folder has no corpus.jsonl")
    split_files = query_files(folder, splits, ".jsonl")
    reader = _MediaReader(folder, folder if root is None else root)
    documents = [_document(record, reader, corpus_path, row) for row, record in read_jsonl(corpus_path)]
    if not documents:
        raise BadInputError(corpus_path, None, "empty corpus: no documents")
    known = {doc.pid for doc in documents}
    queries: list[Query] = []
    for split, path in split_files:
        read = [_query(record, reader, split, path, row) for row, record in read_jsonl(path)]
        if split == EVALUATED_SPLIT and not read:
            raise BadInputError(path, None, "empty test split: the dataset would have no query to score")
        for query in read:
            missing = [pid for pid in query.gold_pids[0] if pid not in known]
            if missing:
                raise BadInputError(
                    path, query.source_row, f"qid {query.qid!r}: gold pid(s) not in the corpus: {missing}"
                )
        queries.extend(read)
    return MultimodalData(SourceData(documents, queries), reader.media)
