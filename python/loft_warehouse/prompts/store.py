"""The prompt tables of one size, built from the `corpus`, `queries` and `stg_datasets` marts.

- prompt_prefixes: one row per (task, dataset, corpus_id, variant): the shared text.
- prompts: one row per (variant, query, turn): only its own head/suffix, so storage grows with
  corpus + queries, never corpus x queries. prompt text = head || prefix.text || suffix.
- prompt_doc_ids: shown ID -> pid per (task, dataset, corpus_id, variant), in prompt order.

Token counts are SentencePiece counts of the whole prompt, computed without materialising it:
no SentencePiece piece contains a newline, so a text that follows a newline tokenizes the same
on its own once preceded by a newline (count("\\n" + s) - count("\\n")); prefixes and heads end in
a newline, so n_tokens_total = count(head) + continuation(prefix) + continuation(suffix).
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import polars as pl
import sentencepiece as spm

from loft_warehouse import settings
from loft_warehouse.prompts import variants as variant_catalogue
from loft_warehouse.prompts.inputs import collections
from loft_warehouse.prompts.render import render
from loft_warehouse.prompts.variants import Variant
from loft_warehouse.tokens import TokenCounter, counter

PREFIX_SCHEMA = {
    "prefix_id": pl.String,
    "task": pl.String,
    "dataset": pl.String,
    "corpus_id": pl.String,
    "variant": pl.String,
    "text": pl.String,
    "content_hash": pl.String,
    "n_tokens": pl.Int64,
    "n_chars": pl.Int64,
}
# The key of a prompt row; responses, imports and predictions carry it too.
PROMPT_KEY_SCHEMA = {
    "prompt_id": pl.String,
    "task": pl.String,
    "dataset": pl.String,
    "corpus_id": pl.String,
    "variant": pl.String,
    "split": pl.String,
    "qid": pl.String,
    "turn": pl.Int64,
}
PROMPT_SCHEMA = {
    **PROMPT_KEY_SCHEMA,
    "n_turns": pl.Int64,
    "prefix_id": pl.String,
    "head": pl.String,
    "suffix": pl.String,
    "n_tokens_prefix": pl.Int64,
    "n_tokens_total": pl.Int64,
    "gold": pl.String,
    "gold_shown_ids": pl.String,
    "targets": pl.String,
}
DOC_ID_SCHEMA = {
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
    """The three prompt tables of one size as polars frames."""

    prefixes: pl.DataFrame
    prompts: pl.DataFrame
    doc_ids: pl.DataFrame


def prefix_id(task: str, dataset: str, corpus_id: str, variant: str, text: str) -> str:
    """First 16 hex digits of sha256 over the key and the text: unique per (dataset, variant)
    even where two variants share a text (few_shot_5 and default); content_hash is the text's."""
    key = f"{task}/{dataset}/{corpus_id}/{variant}\0{text}"
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]


def prompt_id(task: str, dataset: str, corpus_id: str, variant: str, qid: str, turn: int) -> str:
    """The stable key of one prompt row."""
    return f"{task}/{dataset}/{corpus_id}/{variant}/{qid}/{turn}"


def prompt_text(head: str, prefix: str, suffix: str) -> str:
    """The full prompt sent to a model (head is '' except for query_at_beginning)."""
    return head + prefix + suffix


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

    def _line_sums(self, texts: Sequence[list[str]]) -> list[int]:
        flat = ["\n" + line for lines in texts for line in lines]
        counts = iter(self.tokens.count(flat))
        return [sum(next(counts) - self._dummy for _ in lines) for lines in texts]

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

    def totals(self, prefix: str, parts: Sequence[tuple[str, str]]) -> tuple[int, list[int]]:
        """n_tokens of the prefix, and of head + prefix + suffix for each (head, suffix)."""
        for text, what in [(prefix, "prefix"), *((h, "head") for h, _ in parts if h)]:
            if not text.endswith("\n"):
                raise ValueError(f"a prompt {what} must end in a newline: {text[-40:]!r}")
        n_prefix = self.count([prefix])[0]
        n_suffixes = self.continuation([s for _, s in parts])
        heads = [h for h, _ in parts if h]
        if not heads:
            return n_prefix, [n_prefix + n for n in n_suffixes]
        n_heads = iter(self.count(heads))
        inner_prefix = self.continuation([prefix])[0]
        totals = [
            (next(n_heads) + inner_prefix if head else n_prefix) + n_suffix
            for (head, _), n_suffix in zip(parts, n_suffixes, strict=True)
        ]
        return n_prefix, totals


def _gold_targets(task: str, gold_json: str | None, gold_shown_ids: Sequence[str]) -> str:
    """What scoring compares with: shown IDs for retrieval, queries.gold for the rest."""
    if task == "retrieval":
        return json.dumps(list(gold_shown_ids), ensure_ascii=False)
    return gold_json if gold_json is not None else "null"


def build(
    corpus: pl.DataFrame,
    queries: pl.DataFrame,
    datasets: pl.DataFrame,
    variants: Iterable[Variant],
    tokens: TokenCounter,
    seed: int,
) -> PromptTables:
    """Render every applicable (collection, variant) and count its tokens."""
    counts = PromptTokens(tokens)
    variants = list(variants)
    prefix_rows, prompt_rows, doc_rows = [], [], []
    for collection in collections(corpus, queries, datasets):
        for variant in variants:
            if not variant.applies_to(collection):
                continue
            rendered = render(collection, variant, seed)
            key = (collection.task, collection.dataset, collection.corpus_id, variant.name)
            pid = prefix_id(*key, rendered.prefix)
            n_prefix, totals = counts.totals(rendered.prefix, [(row.head, row.suffix) for row in rendered.rows])
            prefix_rows.append(
                {
                    "prefix_id": pid,
                    "task": key[0],
                    "dataset": key[1],
                    "corpus_id": key[2],
                    "variant": key[3],
                    "text": rendered.prefix,
                    "content_hash": hashlib.sha256(rendered.prefix.encode("utf-8")).hexdigest(),
                    "n_tokens": n_prefix,
                    "n_chars": len(rendered.prefix),
                }
            )
            for row, total in zip(rendered.rows, totals, strict=True):
                prompt_rows.append(
                    {
                        "prompt_id": prompt_id(*key, row.qid, row.turn),
                        "task": key[0],
                        "dataset": key[1],
                        "corpus_id": key[2],
                        "variant": key[3],
                        "split": row.split,
                        "qid": row.qid,
                        "turn": row.turn,
                        "n_turns": row.n_turns,
                        "prefix_id": pid,
                        "head": row.head,
                        "suffix": row.suffix,
                        "n_tokens_prefix": n_prefix,
                        "n_tokens_total": total,
                        "gold": row.gold_json,
                        "gold_shown_ids": json.dumps(list(row.gold_shown_ids), ensure_ascii=False),
                        "targets": _gold_targets(key[0], row.gold_json, row.gold_shown_ids),
                    }
                )
            doc_rows.extend(
                {
                    "task": key[0],
                    "dataset": key[1],
                    "corpus_id": key[2],
                    "variant": key[3],
                    "position": position,
                    "shown_id": shown,
                    "pid": doc_pid,
                }
                for position, (shown, doc_pid) in enumerate(rendered.shown)
            )
    return PromptTables(
        prefixes=pl.DataFrame(prefix_rows, schema=PREFIX_SCHEMA),
        prompts=pl.DataFrame(prompt_rows, schema=PROMPT_SCHEMA),
        doc_ids=pl.DataFrame(doc_rows, schema=DOC_ID_SCHEMA),
    )


def _fingerprint(*frames: pl.DataFrame) -> tuple[int, ...]:
    return tuple(int(f.hash_rows(seed=7).sum()) if f.height else 0 for f in frames)


_BUILT: dict[tuple, PromptTables] = {}
_BUILT_LOCK = threading.Lock()


def built(
    corpus: pl.DataFrame,
    queries: pl.DataFrame,
    datasets: pl.DataFrame,
    variant_names: Iterable[str] | str | None,
    tokenizer_model: str | None,
    data_dir: str | None,
    seed: int | str,
) -> PromptTables:
    """build() with settings resolved, memoised on the inputs' content so that the three dbt
    models of a size render once per process."""
    chosen = variant_catalogue.resolve(variant_names)
    root = None if tokenizer_model else settings.data_dir(data_dir)
    model = settings.tokenizer_model(tokenizer_model, root)
    key = (
        str(model),
        int(seed),
        tuple(v.name for v in chosen),
        _fingerprint(corpus, queries, datasets),
    )
    with _BUILT_LOCK:
        if key not in _BUILT:
            _BUILT.clear()
            _BUILT[key] = build(corpus, queries, datasets, chosen, counter(model), int(seed))
        return _BUILT[key]


def parse_variant_setting(value: object) -> list[str]:
    """The dbt `prompt_variants` var as the model config renders it: a list, a rendered list
    ("['default', 'no_cot']") or a comma-separated string."""
    if value is None:
        return ["default"]
    if isinstance(value, list | tuple):
        return [str(v) for v in value]
    text = str(value).strip()
    if text.startswith("["):
        return [v.strip().strip("'\"") for v in text.strip("[]").split(",") if v.strip()]
    return [v.strip() for v in text.split(",") if v.strip()]


def table_for_model(dbt, table: str, corpus, queries, datasets) -> pl.DataFrame:
    """One prompt table for a dbt Python model; inputs are the dbt.ref relations of its size.

    The model file itself reads `loft` and `prompt_variants` from its config (dbt hands a
    Python model only the config keys its own file reads).
    """
    config = dbt.config.get("loft") or {}
    tables = built(
        corpus.pl(),
        queries.pl(),
        datasets.pl(),
        parse_variant_setting(dbt.config.get("prompt_variants")),
        config.get("tokenizer_model"),
        config.get("data_dir"),
        config.get("seed") or 0,
    )
    return getattr(tables, table)
