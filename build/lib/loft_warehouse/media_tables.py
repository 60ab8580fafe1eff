"""The multimodal tables of one size: LOFT's mm release folders landed and rendered.

Every mm/{dataset}/{size} folder of the data dir (those a `datasets` selection names, by
"mm/{dataset}" or "mm/*", when there is one) is read by sources.loft_mm and rendered by
prompts.multimodal, once per process for the four models that show it:

- media: each media item a dataset sends, as a BLOB of the bytes sent, with its sha256, mime
  type, size, source file and the source's own sha256;
- corpus: the documents in prompt order with the ID shown and their media hashes in order;
- queries: every query with its split, gold pids and the gold IDs the prompt shows;
- prompt_parts: the shared prefix of each dataset (qid null) and each evaluated query's suffix,
  one row per part in order, text or a media hash.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import polars as pl

from loft_warehouse import frame_cache, registry, settings
from loft_warehouse.prompts.multimodal import Part, render
from loft_warehouse.sources import loft_mm

TABLES = ("media", "corpus", "queries", "prompt_parts")


@dataclass(frozen=True)
class MediaTables:
    media: pl.DataFrame
    corpus: pl.DataFrame
    queries: pl.DataFrame
    prompt_parts: pl.DataFrame


MEDIA_SCHEMA = pl.Schema(
    {
        "dataset": pl.String(),
        "sha256": pl.String(),
        "mime_type": pl.String(),
        "byte_size": pl.Int64(),
        "data": pl.Binary(),
        "source_file": pl.String(),
        "source_sha256": pl.String(),
        "width": pl.Int64(),
        "height": pl.Int64(),
        "duration_ms": pl.Int64(),
    }
)
CORPUS_SCHEMA = pl.Schema(
    {
        "dataset": pl.String(),
        "corpus_index": pl.Int64(),
        "shown_id": pl.String(),
        "pid": pl.String(),
        "title": pl.String(),
        "text": pl.String(),
        "media": pl.List(pl.String()),
        "source_file": pl.String(),
        "source_row": pl.Int64(),
    }
)
QUERY_SCHEMA = pl.Schema(
    {
        "dataset": pl.String(),
        "split": pl.String(),
        "qid": pl.String(),
        "query_text": pl.String(),
        "media": pl.List(pl.String()),
        "gold_pids": pl.List(pl.String()),
        "gold_shown_ids": pl.List(pl.String()),
        "source_file": pl.String(),
        "source_row": pl.Int64(),
    }
)
PART_SCHEMA = pl.Schema(
    {
        "dataset": pl.String(),
        "section": pl.String(),
        "split": pl.String(),
        "qid": pl.String(),
        "part_index": pl.Int64(),
        "mime_type": pl.String(),
        "text": pl.String(),
        "media_sha256": pl.String(),
    }
)


def selected_datasets(root: Path, size_label: str, only: tuple[str, ...]) -> list[str]:
    """The mm datasets at this size a selection takes (all of them without one)."""
    present = registry.multimodal_datasets(root, size_label)
    return [name for name in present if not only or registry.is_selected(name, only)]


def _folders(root: Path, size_label: str, only: tuple[str, ...]) -> list[tuple[str, Path]]:
    """(dataset, release folder) of each selected mm dataset at this size."""
    datasets = [name.partition("/")[2] for name in selected_datasets(root, size_label, only)]
    return [(dataset, registry.release_dir(root, "mm", dataset, size_label)) for dataset in datasets]


def _part_rows(dataset: str, section: str, split: str | None, qid: str | None, parts: tuple[Part, ...]) -> list[dict]:
    return [
        {
            "dataset": dataset,
            "section": section,
            "split": split,
            "qid": qid,
            "part_index": index,
            "mime_type": part.mime_type,
            "text": part.text,
            "media_sha256": part.media_sha256,
        }
        for index, part in enumerate(parts)
    ]


def build(root: Path, size_label: str, only: tuple[str, ...] = ()) -> MediaTables:
    """Read and render every selected mm dataset at this size."""
    media: list[dict] = []
    corpus: list[dict] = []
    queries: list[dict] = []
    parts: list[dict] = []
    for dataset, folder in _folders(root, size_label, only):
        data = loft_mm.load(folder, root=root)
        prompt = render(dataset, data.source, data.media)
        shown_of = {pid: shown for shown, pid in prompt.shown}
        media.extend(
            {"dataset": dataset, **{key: getattr(item, key) for key in MEDIA_SCHEMA if key != "dataset"}}
            for item in data.media.values()
        )
        corpus.extend(
            {
                "dataset": dataset,
                "corpus_index": index,
                "shown_id": shown_of[doc.pid],
                "pid": doc.pid,
                "title": doc.title,
                "text": doc.text,
                "media": list(doc.media),
                "source_file": doc.source_file,
                "source_row": doc.source_row,
            }
            for index, doc in enumerate(data.source.documents)
        )
        queries.extend(
            {
                "dataset": dataset,
                "split": query.release_split,
                "qid": query.qid,
                "query_text": query.turns[0],
                "media": list(query.media),
                "gold_pids": query.gold_pids[0],
                "gold_shown_ids": [shown_of[pid] for pid in query.gold_pids[0]],
                "source_file": query.source_file,
                "source_row": query.source_row,
            }
            for query in data.source.queries
        )
        parts.extend(_part_rows(dataset, "prefix", None, None, prompt.prefix))
        for row in prompt.rows:
            parts.extend(_part_rows(dataset, "suffix", row.split, row.qid, row.suffix))
    return MediaTables(
        media=pl.DataFrame(media, schema=MEDIA_SCHEMA),
        corpus=pl.DataFrame(corpus, schema=CORPUS_SCHEMA),
        queries=pl.DataFrame(queries, schema=QUERY_SCHEMA),
        prompt_parts=pl.DataFrame(parts, schema=PART_SCHEMA),
    )


_BUILT: frame_cache.SharedInProcess[MediaTables] = frame_cache.SharedInProcess()


def _fingerprint(root: Path, size_label: str, wanted: tuple[str, ...]) -> str:
    """What decides the tables: the code, the size, the selection, and every file of the
    selected mm folders by path, size and modification time."""
    files = sorted(p for _, folder in _folders(root, size_label, wanted) for p in folder.rglob("*") if p.is_file())
    return frame_cache.key_of("media_tables", [size_label, list(wanted), *map(frame_cache.file_stamp, files)])


def built(data_dir: str | None, size_label: str, only: str | list[str] | tuple[str, ...] | None = None) -> MediaTables:
    """build() with settings resolved, once per process (the models that show it share it) and
    kept across builds while the mm folders' files are unchanged (frame_cache), so a rebuild
    does not decode and encode every image again."""
    root = settings.data_dir(data_dir)
    wanted = registry.parse_selection(only)

    def land_or_reuse() -> MediaTables:
        def land() -> dict[str, pl.DataFrame]:
            tables = build(root, size_label, wanted)
            return {name: getattr(tables, name) for name in TABLES}

        frames, _ = frame_cache.kept("media_tables", _fingerprint(root, size_label, wanted), TABLES, land)
        return MediaTables(**frames)

    return _BUILT.get((str(root), size_label, wanted), land_or_reuse)
