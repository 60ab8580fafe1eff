"""The prompt tables of one size, built from the `corpus`, `queries` and `stg_datasets` marts.

- prompt_prefixes: the shared texts, stored once (a corpus with its instruction and few-shot
  examples per dataset x variant x method; a chunk of pages; possibly the empty text).
- prompt_segments: stored blocks that prompts list between the prefix and the suffix (a study
  question's documents or pages, a reminder), each stored once however many prompts use it.
- prompts: one row per (variant, method, query, turn, call) of stage 1: only its own head,
  segment list and suffix, so storage grows with corpus + queries, never corpus x queries.
  prompt text = head || prefix.text || segments (in order) || suffix.
- prompt_doc_ids: shown ID -> pid per (task, dataset, corpus_id, variant), in prompt order.
- prompt_variants: what each built variant is (its experiment and the position it puts the
  gold at), for position curves.

Token counts are SentencePiece counts of the whole prompt, computed without materialising it:
no SentencePiece piece contains a newline, so a text that follows a newline tokenizes the same
on its own once preceded by a newline (count("\\n" + s) - count("\\n")); heads, prefixes and
segments end in a newline, so n_tokens_total = count(first part) + continuation of every later
part. The same sum up to the line where the first gold document starts is gold_token_offset.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl
import sentencepiece as spm

from loft_warehouse import frame_cache, settings
from loft_warehouse.prompts.inputs import Collection, collections
from loft_warehouse.prompts.render import Anchor, PromptRow, Rendered
from loft_warehouse.prompts.variants import Variant, for_variant
from loft_warehouse.tokens import TokenCounter, counter

if TYPE_CHECKING:
    from loft_warehouse.design import Design

PREFIX_SCHEMA: dict[str, pl.DataType | type[pl.DataType]] = {
    "prefix_id": pl.String,
    "task": pl.String,
    "dataset": pl.String,
    "corpus_id": pl.String,
    "variant": pl.String,
    "method": pl.String,
    "text": pl.String,
    "content_hash": pl.String,
    "n_tokens": pl.Int64,
    "n_chars": pl.Int64,
}
# The key of a prompt row; responses, imports and predictions carry it too.
PROMPT_KEY_SCHEMA: dict[str, pl.DataType | type[pl.DataType]] = {
    "prompt_id": pl.String,
    "task": pl.String,
    "dataset": pl.String,
    "corpus_id": pl.String,
    "variant": pl.String,
    "method": pl.String,
    "stage": pl.Int64,
    "split": pl.String,
    "qid": pl.String,
    "turn": pl.Int64,
    "call_index": pl.Int64,
}
POSITION_SCHEMA: dict[str, pl.DataType | type[pl.DataType]] = {
    "gold_positions": pl.List(pl.Int64),
    "gold_depth": pl.Float64,
    "gold_token_offset": pl.Int64,
    "n_documents": pl.Int64,
}
PROMPT_SCHEMA: dict[str, pl.DataType | type[pl.DataType]] = {
    **PROMPT_KEY_SCHEMA,
    "n_turns": pl.Int64,
    "prefix_id": pl.String,
    "head": pl.String,
    "segment_ids": pl.List(pl.String),
    "suffix": pl.String,
    "n_tokens_prefix": pl.Int64,
    "n_tokens_total": pl.Int64,
    "gold": pl.String,
    "gold_shown_ids": pl.String,
    "targets": pl.String,
    **POSITION_SCHEMA,
    "payload": pl.String,
}
SEGMENT_SCHEMA: dict[str, pl.DataType | type[pl.DataType]] = {
    "segment_id": pl.String,
    "text": pl.String,
    "n_tokens": pl.Int64,
    "n_chars": pl.Int64,
}
VARIANT_SCHEMA: dict[str, pl.DataType | type[pl.DataType]] = {
    "task": pl.String,
    "dataset": pl.String,
    "variant": pl.String,
    "family": pl.String,
    "experiment": pl.String,
    "position": pl.Float64,
    "position_unit": pl.String,
    "n_documents": pl.Int64,
    "query_aware": pl.Boolean,
    "setting": pl.String,
    "document_tokens": pl.Int64,
    "answer_tokens": pl.Int64,
}
DOC_ID_SCHEMA: dict[str, pl.DataType | type[pl.DataType]] = {
    "task": pl.String,
    "dataset": pl.String,
    "corpus_id": pl.String,
    "variant": pl.String,
    "position": pl.Int64,
    "shown_id": pl.String,
    "pid": pl.String,
}


@dataclass(frozen=True)
class PromptTables:
    """The prompt tables of one size as polars frames."""

    prefixes: pl.DataFrame
    prompts: pl.DataFrame
    doc_ids: pl.DataFrame
    segments: pl.DataFrame
    variants: pl.DataFrame


def prefix_id(task: str, dataset: str, corpus_id: str, variant: str, text: str, method: str = "cic") -> str:
    """First 16 hex digits of sha256 over the key and the text: unique per (dataset, variant,
    method) even where two of them share a text (few_shot_5 and default); content_hash is the
    text's."""
    scope = f"{task}/{dataset}/{corpus_id}/{variant}" + ("" if method == "cic" else f"/{method}")
    return hashlib.sha256(f"{scope}\0{text}".encode()).hexdigest()[:16]


def segment_id(text: str) -> str:
    """A segment's key: the first 16 hex digits of its text's sha256 (equal texts are one row)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def prompt_id(
    task: str,
    dataset: str,
    corpus_id: str,
    variant: str,
    qid: str,
    turn: int,
    method: str = "cic",
    stage: int = 1,
    call_index: int = 0,
) -> str:
    """The stable key of one prompt row: task/dataset/corpus_id/variant/qid/turn for LOFT's
    one-call prompt, with /method/s{stage}/c{call} after it for every other method or stage."""
    base = f"{task}/{dataset}/{corpus_id}/{variant}/{qid}/{turn}"
    if (method, stage, call_index) == ("cic", 1, 0):
        return base
    return f"{base}/{method}/s{stage}/c{call_index}"


def prompt_text(head: str, prefix: str, suffix: str, segments: Sequence[str] = ()) -> str:
    """The full prompt sent to a model: head, the shared prefix, the segments, the suffix."""
    return head + prefix + "".join(segments) + suffix


class PromptTokens:
    """Exact token counts of whole prompts from counts of their lines.

    When no piece of the model contains a newline, a newline splits the encoding: a text is
    its first line's tokens plus, for every later line L, count("\\n" + L) - d, where d is the
    dummy-prefix token a text starting with a newline gets. Lines repeat across variants and
    are short, so this is fast (batched, memoised by TokenCounter) where encoding a 500 kB
    prefix at once is slow. A model for which the identity does not hold on a probe text is
    counted whole instead.
    """

    _PROBE = "ID: 0 | x  y \n\n  z\t|\nEND \n"

    def __init__(self, tokens: TokenCounter) -> None:
        self.tokens = tokens
        one, two = tokens.count(["\n", "\n\n"])
        self._newline = two - one
        self._dummy = one - self._newline
        processor = spm.SentencePieceProcessor(model_file=str(tokens.model_file))
        pieces_split = not any("\n" in processor.id_to_piece(i) for i in range(len(processor)))
        self.by_line = pieces_split and self._probe_holds()

    def _probe_holds(self) -> bool:
        whole = self.tokens.count([self._PROBE, "x\n" + self._PROBE])
        after_x = self._lines_count(["x\n"])[0] + self._lines_continuation([self._PROBE])[0]
        return whole == [self._lines_count([self._PROBE])[0], after_x]

    @property
    def newline(self) -> int:
        """Tokens a newline adds after a newline."""
        return self._newline

    def line_terms(self, lines: list[str]) -> tuple[int, list[int]]:
        """For a text's lines (text.split("\\n")): the first line's count on its own, and
        count("\\n" + line) - d of every line: a text's count is the first plus the later lines'
        terms, a continuation's the sum of all of them less one newline."""
        return self.tokens.count([lines[0]])[0], self._terms(lines)

    def _terms(self, lines: list[str]) -> list[int]:
        """count("\n" + line) - d of each line."""
        return [n - self._dummy for n in self.tokens.count(["\n" + line for line in lines])]

    def _line_sums(self, texts: Sequence[list[str]]) -> list[int]:
        terms = iter(self._terms([line for lines in texts for line in lines]))
        return [sum(next(terms) for _ in lines) for lines in texts]

    def _lines_count(self, texts: Sequence[str]) -> list[int]:
        split = [t.split("\n") for t in texts]
        firsts = self.tokens.count([lines[0] for lines in split])
        rests = self._line_sums([lines[1:] for lines in split])
        return [first + rest for first, rest in zip(firsts, rests, strict=True)]

    def _lines_continuation(self, texts: Sequence[str]) -> list[int]:
        return [n - self._newline for n in self._line_sums([t.split("\n") for t in texts])]

    def count(self, texts: Sequence[str]) -> list[int]:
        """Counts of texts standing at the start of a prompt."""
        if self.by_line and not any(t.startswith("\n") for t in texts):
            return self._lines_count(texts)
        return self.tokens.count(list(texts))

    def continuation(self, texts: Sequence[str]) -> list[int]:
        """Counts of texts that follow a newline in the prompt."""
        if self.by_line:
            return self._lines_continuation(texts)
        newline = self.tokens.count(["\n"])[0]
        return [n - newline for n in self.tokens.count(["\n" + t for t in texts])]


def _gold_targets(task: str, gold_json: str | None, gold_shown_ids: Sequence[str]) -> str:
    """What scoring compares with: shown IDs for retrieval, queries.gold for the rest."""
    if task == "retrieval":
        return json.dumps(list(gold_shown_ids), ensure_ascii=False)
    return gold_json if gold_json is not None else "null"


class PartCounts:
    """Token counts of prompt parts within one build, each distinct text counted once as a
    prompt's start and once as a continuation (after a newline).

    Counted by line, a text keeps its cumulative line counts, so a cut of it at a line start
    (the prompt up to the first gold document) costs a lookup instead of a recount."""

    def __init__(self, counts: PromptTokens) -> None:
        self.counts = counts
        self._start: dict[str, int] = {}
        self._continuation: dict[str, int] = {}
        self._lines: dict[str, tuple[int, np.ndarray, np.ndarray]] = {}

    def _by_line(self, text: str) -> tuple[int, np.ndarray, np.ndarray] | None:
        """(first line's count, cumulative line terms, offsets where each line's successor
        starts) of a text counted by line, else None."""
        if not self.counts.by_line or text.startswith("\n"):
            return None
        if text not in self._lines:
            lines = text.split("\n")
            first, terms = self.counts.line_terms(lines)
            ends = np.cumsum([len(line) + 1 for line in lines], dtype=np.int64)
            self._lines[text] = (first, np.concatenate([[0], np.cumsum(terms, dtype=np.int64)]), ends)
        return self._lines[text]

    def start(self, text: str) -> int:
        return self._upto(text, len(text), at_start=True)

    def continuation(self, text: str) -> int:
        return self._upto(text, len(text), at_start=False)

    def start_upto(self, text: str, offset: int) -> int:
        """Tokens of text[:offset] at the start of a prompt."""
        return self._upto(text, offset, at_start=True)

    def continuation_upto(self, text: str, offset: int) -> int:
        """Tokens of text[:offset] after a newline in a prompt."""
        return self._upto(text, offset, at_start=False)

    def _upto(self, text: str, offset: int, at_start: bool) -> int:
        if not offset:
            return 0
        lines = self._by_line(text)
        if lines is None or not self._cuts_at_line(text, offset):
            part = text[:offset]
            memo = self._start if at_start else self._continuation
            if part not in memo:
                memo[part] = (self.counts.count if at_start else self.counts.continuation)([part])[0]
            return memo[part]
        first, cumulative, ends = lines
        k = self._lines_before(ends, offset)
        whole = offset == len(text)
        if at_start:
            return first + int(cumulative[k] - cumulative[1]) + (0 if whole else self.counts.newline)
        return int(cumulative[k]) - (self.counts.newline if whole else 0)

    @staticmethod
    def _cuts_at_line(text: str, offset: int) -> bool:
        return offset == len(text) or text[offset - 1] == "\n"

    @staticmethod
    def _lines_before(ends: np.ndarray, offset: int) -> int:
        """Lines of text[:offset] for a cut at a line start (all of them for the whole text)."""
        return len(ends) if offset == int(ends[-1]) - 1 else int(np.searchsorted(ends, offset, side="right"))

    def total(self, parts: Sequence[str]) -> int:
        """Tokens of the joined parts (all but the last end in a newline)."""
        present = [p for p in parts if p]
        for part in present[:-1]:
            if not part.endswith("\n"):
                raise ValueError(f"a prompt part must end in a newline: {part[-40:]!r}")
        if not present:
            return 0
        return self.start(present[0]) + sum(self.continuation(p) for p in present[1:])


def _gold_token_offset(counts: PartCounts, row: PromptRow, prefix: str, anchor: Anchor) -> int:
    """Tokens of the prompt before the line where the first gold document starts."""
    part, index, offset = anchor
    if part == "prefix":
        if not row.head:
            return counts.start_upto(prefix, offset)
        return counts.start(row.head) + counts.continuation_upto(prefix, offset)
    if part == "head":
        parts = [row.head[:offset]]
    elif part == "segment":
        parts = [row.head, prefix, *row.segments[:index], row.segments[index][:offset]]
    else:
        parts = [row.head, prefix, *row.segments, row.suffix[:offset]]
    return counts.total(parts)


def _variant_row(collection: Collection, variant: Variant) -> dict[str, Any]:
    position, unit = variant.designed_position
    return {
        "task": collection.task,
        "dataset": collection.dataset,
        "variant": variant.name,
        "family": variant.family,
        "experiment": variant.experiment,
        "position": position,
        "position_unit": unit,
        "n_documents": variant.n_documents,
        "query_aware": variant.query_aware,
        "setting": variant.setting,
        "document_tokens": variant.document_tokens,
        "answer_tokens": variant.answer_tokens,
    }


def build(
    corpus: pl.DataFrame,
    queries: pl.DataFrame,
    datasets: pl.DataFrame,
    design: Design,
    tokens: TokenCounter,
    seed: int,
) -> PromptTables:
    """Render stage 1 of every selected method on every applicable (corpus, variant) and count
    its tokens."""
    from loft_warehouse.methods.stage1 import document_ids, render_stage1, variants_for

    counts = PartCounts(PromptTokens(tokens))
    prefix_rows: dict[str, dict[str, Any]] = {}
    segment_rows: dict[str, dict[str, Any]] = {}
    variant_rows: dict[tuple[str, str, str], dict[str, Any]] = {}
    prompt_rows: list[dict[str, Any]] = []
    doc_rows: list[dict[str, Any]] = []
    for collection in collections(corpus, queries, datasets):
        key = (collection.task, collection.dataset, collection.corpus_id)
        for variant in variants_for(collection, design):
            variant_rows.setdefault((*key[:2], variant.name), _variant_row(collection, variant))
            shown = for_variant(collection, variant)
            doc_rows.extend(
                {"task": key[0], "dataset": key[1], "corpus_id": key[2], "variant": variant.name,
                 "position": position, "shown_id": shown_id, "pid": pid}
                for position, (shown_id, pid) in enumerate(document_ids(shown, variant, seed))
            )  # fmt: skip
            for method in design.methods:
                rendered = render_stage1(shown, variant, method, design, seed)
                if rendered is not None:
                    prompt_rows.extend(_rows(key, variant.name, rendered, counts, prefix_rows, segment_rows))
    return PromptTables(
        prefixes=pl.DataFrame(list(prefix_rows.values()), schema=PREFIX_SCHEMA),
        prompts=pl.DataFrame(prompt_rows, schema=PROMPT_SCHEMA),
        doc_ids=pl.DataFrame(doc_rows, schema=DOC_ID_SCHEMA),
        segments=pl.DataFrame(list(segment_rows.values()), schema=SEGMENT_SCHEMA),
        variants=pl.DataFrame(list(variant_rows.values()), schema=VARIANT_SCHEMA),
    )


def _rows(
    key: tuple[str, str, str],
    variant: str,
    rendered: Rendered,
    counts: PartCounts,
    prefix_rows: dict[str, dict[str, Any]],
    segment_rows: dict[str, dict[str, Any]],
) -> list[dict[str, Any]]:
    """The prompt rows of one rendering; its prefixes and segments go into the shared tables."""
    rows = []
    n_documents = len(rendered.shown)
    prefix_ids: dict[str, str] = {}
    for row in rendered.rows:
        prefix = row.prefix if row.prefix is not None else rendered.prefix
        for what, text in (("head", row.head), ("prefix", prefix)):
            if text and not text.endswith("\n"):
                raise ValueError(f"a prompt {what} must end in a newline: {text[-40:]!r}")
        if prefix not in prefix_ids:
            prefix_ids[prefix] = prefix_id(*key, variant, prefix, rendered.method)
        pid = prefix_ids[prefix]
        if pid not in prefix_rows:
            prefix_rows[pid] = {
                "prefix_id": pid,
                "task": key[0],
                "dataset": key[1],
                "corpus_id": key[2],
                "variant": variant,
                "method": rendered.method,
                "text": prefix,
                "content_hash": hashlib.sha256(prefix.encode("utf-8")).hexdigest(),
                "n_tokens": counts.start(prefix),
                "n_chars": len(prefix),
            }
        segment_ids = []
        for text in row.segments:
            sid = segment_id(text)
            if sid not in segment_rows:
                segment_rows[sid] = {
                    "segment_id": sid,
                    "text": text,
                    "n_tokens": counts.continuation(text),
                    "n_chars": len(text),
                }
            segment_ids.append(sid)
        positions = list(row.gold_positions)
        depth = None
        if positions:
            depth = min(positions) / (n_documents - 1) if n_documents > 1 else 0.0
        rows.append(
            {
                "prompt_id": prompt_id(*key, variant, row.qid, row.turn, rendered.method, 1, row.call_index),
                "task": key[0],
                "dataset": key[1],
                "corpus_id": key[2],
                "variant": variant,
                "method": rendered.method,
                "stage": 1,
                "split": row.split,
                "qid": row.qid,
                "turn": row.turn,
                "call_index": row.call_index,
                "n_turns": row.n_turns,
                "prefix_id": pid,
                "head": row.head,
                "segment_ids": segment_ids,
                "suffix": row.suffix,
                "n_tokens_prefix": prefix_rows[pid]["n_tokens"],
                "n_tokens_total": counts.total([row.head, prefix, *row.segments, row.suffix]),
                "gold": row.gold_json,
                "gold_shown_ids": json.dumps(list(row.gold_shown_ids), ensure_ascii=False),
                "targets": _gold_targets(key[0], row.gold_json, row.gold_shown_ids),
                "gold_positions": positions or None,
                "gold_depth": depth,
                "gold_token_offset": (
                    _gold_token_offset(counts, row, prefix, row.gold_anchor) if row.gold_anchor else None
                ),
                "n_documents": n_documents or None,
                "payload": row.payload,
            }
        )
    return rows


PROMPT_FRAMES = ("prefixes", "prompts", "doc_ids", "segments", "variants")
# The prompt tables of one size at a time: the five prompt models of a size read the same ones.
_BUILT: frame_cache.SharedInProcess[PromptTables] = frame_cache.SharedInProcess(keep=1)


def built(
    corpus: pl.DataFrame,
    queries: pl.DataFrame,
    datasets: pl.DataFrame,
    design: Design,
    tokenizer_model: str | None,
    data_dir: str | None,
    seed: int | str,
) -> PromptTables:
    """build() with settings resolved, made once per process on the inputs' content so that the
    prompt models of a size render once, and kept across builds (frame_cache)."""
    model = settings.build_tokenizer_model(tokenizer_model, data_dir)
    key = frame_cache.key_of("prompts", [frame_cache.file_stamp(model), int(seed), design, corpus, queries, datasets])

    def render_or_reuse() -> PromptTables:
        def render() -> dict[str, pl.DataFrame]:
            tables = build(corpus, queries, datasets, design, counter(model), int(seed))
            return {name: getattr(tables, name) for name in PROMPT_FRAMES}

        return PromptTables(**frame_cache.kept("prompts", key, PROMPT_FRAMES, render)[0])

    return _BUILT.get(key, render_or_reuse)
