"""Multimodal retrieval prompts as ordered parts, as LOFT's prompt code builds them (prompts_mm.py).

A prompt is a sequence of parts, each text or one media item, sent in order (LOFT sends each of
its content chunks as one part). Text parts end in one newline. The shared prefix is the
dataset's corpus instruction, then per corpus document its ID line (the dataset's corpus
format) followed by its images (a video: its frames) or, for an audio corpus, the ID line and
the audio, then the few-shot examples. Each evaluated query adds its suffix: the start line,
the query's media (an image, or the audio of a speech-to-text query), then its text. A few-shot
example is the same block under "Example n" with its answer lines and final answer after it.

Documents are shown by their index in the corpus file, as LOFT's pid mapper shows them; gold
answers are the shown indices, mapped back to pids by the scorer. Wording comes from
loft_prompts.json (LOFT's prompts/constants/mm.py) through LOFT's PROMPT_MAPPER.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from loft_warehouse.errors import ConfigurationError
from loft_warehouse.prompts.inputs import EVALUATED_SPLITS
from loft_warehouse.prompts.instructions import loft_prompts
from loft_warehouse.sources.base import Document, Query, SourceData
from loft_warehouse.sources.loft_mm import IMAGE_JPEG, Media

TEXT = "text/plain"


@dataclass(frozen=True)
class Part:
    """One part of a prompt: text, or a media item named by the sha256 of the bytes sent."""

    mime_type: str
    text: str | None = None
    media_sha256: str | None = None


@dataclass(frozen=True)
class MultimodalRow:
    """One evaluated query: its own parts after the shared prefix, and its gold as the IDs the
    prompt shows."""

    qid: str
    split: str
    suffix: tuple[Part, ...]
    gold_shown_ids: tuple[str, ...]


@dataclass(frozen=True)
class MultimodalPrompt:
    """One dataset at one size: the shared prefix, (shown ID, pid) in corpus order, the rows."""

    prefix: tuple[Part, ...]
    shown: tuple[tuple[str, str], ...]
    rows: tuple[MultimodalRow, ...]


@dataclass(frozen=True)
class _Wording:
    corpus_instruction: str
    corpus_format: str
    query_prefix: str
    query_suffix: str
    few_shot_prefix: str
    few_shot_suffix: str
    answer_format: str
    final_answer: str
    default_title: str


@cache
def wording(dataset: str) -> _Wording:
    """LOFT's strings for one mm dataset (its PROMPT_MAPPER maps e.g. fleurs_en_tts to fleurs_tts)."""
    constants: dict[str, Any] = loft_prompts()
    mm = constants["mm"]
    key = mm["prompt_mapper"].get(dataset, dataset)
    if key not in mm["corpus_instruction"]:
        known = ", ".join(sorted(mm["corpus_instruction"]))
        raise ConfigurationError(f"mm/{dataset}: LOFT's prompt code has no multimodal wording for it (it has {known})")
    return _Wording(
        corpus_instruction=mm["corpus_instruction"][key],
        corpus_format=mm["corpus_format"][key],
        query_prefix=mm["query_prefix"][key],
        query_suffix=mm["query_suffix"][key],
        few_shot_prefix=mm["few_shot_query_prefix"][key],
        few_shot_suffix=mm["few_shot_query_suffix"][key],
        answer_format=mm["few_shot_answer_format"][key],
        final_answer=constants["common"]["final_answer_format"],
        default_title=constants["common"]["default_title"],
    )


def _text(text: str) -> Part:
    return Part(TEXT, text=text + "\n")


def _media_parts(hashes: tuple[str, ...], media: dict[str, Media]) -> list[Part]:
    return [Part(media[digest].mime_type, media_sha256=digest) for digest in hashes]


def _document_parts(doc: Document, shown: str, words: _Wording, media: dict[str, Media]) -> list[Part]:
    parts = _media_parts(doc.media, media)
    if parts and parts[0].mime_type != IMAGE_JPEG:
        return [_text(words.corpus_format.format(pid=shown)), *parts]
    line = words.corpus_format.format(pid=shown, title=doc.title or words.default_title, passage=doc.text)
    return ([_text(line)] if line else []) + parts


def _query_parts(query: Query, opening: str, closing: str, media: dict[str, Media]) -> list[Part]:
    text = query.turns[0]
    return [_text(opening), *_media_parts(query.media, media)] + ([_text(closing.format(query=text))] if text else [])


def _few_shot_parts(
    n: int,
    query: Query,
    by_pid: dict[str, Document],
    shown_of: dict[str, str],
    words: _Wording,
    media: dict[str, Media],
) -> list[Part]:
    parts = _query_parts(query, words.few_shot_prefix.format(example_id=n), words.few_shot_suffix, media)
    for pid in query.gold_pids[0]:
        doc = by_pid[pid]
        title = doc.title or words.default_title
        parts.append(_text(words.answer_format.format(pid=shown_of[pid], title=title, passage=doc.text)))
    parts.append(_text(words.final_answer.format(final_answer=[shown_of[pid] for pid in query.gold_pids[0]])))
    return parts


def render(dataset: str, data: SourceData, media: dict[str, Media]) -> MultimodalPrompt:
    """The prompt of one mm dataset: corpus in file order, few-shot examples in file order."""
    words = wording(dataset)
    shown_of = {doc.pid: str(index) for index, doc in enumerate(data.documents)}
    by_pid = {doc.pid: doc for doc in data.documents}
    prefix = [_text(words.corpus_instruction)]
    for doc in data.documents:
        prefix.extend(_document_parts(doc, shown_of[doc.pid], words, media))
    few_shot = [query for query in data.queries if query.release_split == "few_shot"]
    for n, query in enumerate(few_shot, start=1):
        prefix.extend(_few_shot_parts(n, query, by_pid, shown_of, words, media))
    rows = tuple(
        MultimodalRow(
            qid=query.qid,
            split=query.release_split or "test",
            suffix=tuple(_query_parts(query, words.query_prefix, words.query_suffix, media)),
            gold_shown_ids=tuple(shown_of[pid] for pid in query.gold_pids[0]),
        )
        for query in data.queries
        if query.release_split in EVALUATED_SPLITS
    )
    shown = tuple((shown_of[doc.pid], doc.pid) for doc in data.documents)
    return MultimodalPrompt(tuple(prefix), shown, rows)
