"""Which prompts fit a system's context window (minus max_output_tokens).

prompts.n_tokens_total is a SentencePiece count. A system without a `tokenizer` is decided on
it. A system with one (tiktoken for OpenAI models, `gguf` for a local model, set by default,
`gemini` for Gemini when its key is set, also by default) counts every prompt again as it is
sent (head + prefix + suffix, as chat messages or one completion text) in its own tokens, and
only that count decides; Gemini's countTokens is an API call, so only prompts over
GEMINI_RECOUNT_SHARE of the window in SentencePiece are counted with it (no LOFT prompt is
that far apart in the two vocabularies). A multi-turn prompt depends on the model's earlier
answers: before the run it is counted with empty answers (the shortest fill), and one that
fits then is counted again with the real answers when sent. A multimodal prompt is decided on
its text tokens plus its media tokens by the provider's rule (media.scope adds them).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import polars as pl

from loft_warehouse.errors import ConfigurationError
from loft_warehouse.inference.media import MM_TASK
from loft_warehouse.inference.messages import build_messages
from loft_warehouse.inference.systems import System
from loft_warehouse.model_tokens import (
    GeminiTokens,
    TokenCounter,
    TokenizerSpec,
    gguf_tokens,
    model_tokens,
    parse_spec,
)
from loft_warehouse.prompts.multiturn import placeholder_turns


@dataclass(frozen=True)
class WindowSplit:
    """Prompt rows that go on (fit), rows skipped_too_long, and what decided it.

    recheck: prompt_ids of multi-turn rows to count again with the real answers when sent;
    counted: rows counted in the system's tokenizer.
    """

    fit: pl.DataFrame
    too_long: pl.DataFrame
    recheck: frozenset[str] = frozenset()
    counted: int = 0


GEMINI_RECOUNT_SHARE = 0.9


def system_counter(system: System, data_dir: str | None = None) -> TokenCounter:
    """The counter of a system's `tokenizer` setting (loaded once per process where it can be)."""
    where = f"system {system.name} (systems.yaml `tokenizer`)"
    spec = parse_spec(system.tokenizer or "", where)
    if spec.kind == "gguf":
        from loft_warehouse.inference.providers.local import llama_available, weights_path

        if not llama_available():
            raise ConfigurationError(f"{where}: gguf needs llama-cpp-python: make setup-local")
        return gguf_tokens(weights_path(system.options))
    if spec.kind == "gemini":
        from loft_warehouse.inference.providers.gemini import token_counter

        return GeminiTokens(token_counter(system))
    return model_tokens(str(spec), data_dir, where)


def _for_estimate(spec: TokenizerSpec) -> TokenizerSpec | None:
    """The tokenizer a cost estimate uses: tiktoken; not Gemini's (an API call) or a GGUF
    vocabulary (the optional local extra; local calls cost nothing anyway)."""
    return spec if spec.kind == "tiktoken" else None


class ContextWindow:
    """The window check of one system; its tokenizer is loaded only when a prompt needs it."""

    def __init__(self, system: System, data_dir: str | None = None, estimate: bool = False) -> None:
        """estimate=True: for a cost estimate (see _for_estimate); SentencePiece decides otherwise."""
        self.system = system
        self.data_dir = data_dir
        spec = parse_spec(system.tokenizer) if system.tokenizer else None
        self.spec = _for_estimate(spec) if estimate and spec else spec
        self.limit = system.context_window - system.max_output_tokens if system.context_window else None
        self._tokens: TokenCounter | None = None

    @property
    def unit(self) -> str:
        """The tokens the skip decisions are counted in (for log lines)."""
        if self.spec is None:
            return "SentencePiece"
        return {"gguf": "GGUF", "gemini": "Gemini"}.get(self.spec.kind, self.spec.name)

    def tokens(self) -> TokenCounter:
        if self._tokens is None:
            self._tokens = system_counter(self.system, self.data_dir)
        return self._tokens

    def over(self, head: str, prefix: str, messages: Sequence[Mapping[str, str]]) -> bool:
        """Whether messages (the first starting with head + prefix) overflow the window in the
        system's tokens; head and prefix are counted as parts so a prefix is encoded once."""
        if not messages[0]["content"].startswith(head + prefix):
            raise ValueError("the first message must start with the head and the prefix")
        if self.limit is None:
            return False
        return self.tokens().prompt_tokens(head, prefix, messages, self.limit) > self.limit

    def _to_count(self, rows: pl.DataFrame) -> pl.DataFrame:
        """The rows the system's tokenizer decides (all of them but for Gemini, see above)."""
        assert self.limit is not None and self.spec is not None
        if self.spec.kind == "gemini":
            return rows.filter(pl.col("n_tokens_total") > GEMINI_RECOUNT_SHARE * self.limit)
        return rows

    def _split_multimodal(
        self, rows: pl.DataFrame, prefixes: Mapping[str, str] | None, segments: Mapping[str, str] | None
    ) -> WindowSplit:
        """Multimodal rows decided on their counts (text and media tokens, media.scope): a
        tokenizer would count their media markers as text. The other rows as split() does."""
        is_mm = pl.col("task") == MM_TASK
        split = self.split(rows.filter(~is_mm), prefixes, segments)
        mm = rows.filter(is_mm)
        over = pl.col("n_tokens_total") > (self.limit or 0)
        return replace(
            split,
            fit=pl.concat([split.fit, mm.filter(~over)]),
            too_long=pl.concat([split.too_long, mm.filter(over)]),
        )

    def split(
        self, rows: pl.DataFrame, prefixes: Mapping[str, str] | None, segments: Mapping[str, str] | None = None
    ) -> WindowSplit:
        """Rows (prompt_id, prefix_id, head, segment_ids, suffix, n_tokens_total) split at the window.

        Without prefix texts the SentencePiece count decides even for a system with a
        tokenizer.
        """
        if self.limit is None:
            return WindowSplit(rows, rows.clear())
        if "task" in rows.columns and (rows["task"] == MM_TASK).any():
            return self._split_multimodal(rows, prefixes, segments)
        if self.spec is None or prefixes is None:
            over = pl.col("n_tokens_total") > self.limit
            return WindowSplit(rows.filter(~over), rows.filter(over))
        counted = self._to_count(rows)
        too_long: set[str] = set()
        recheck: set[str] = set()
        for row in counted.iter_rows(named=True):
            try:
                prefix = prefixes[row["prefix_id"]]
            except KeyError as exc:
                raise ConfigurationError(f"prompt_prefixes has no prefix_id {row['prefix_id']!r}") from exc
            head = row.get("head") or ""
            after = "".join((segments or {})[i] for i in row.get("segment_ids") or []) + row["suffix"]
            turns = placeholder_turns(after)
            messages = build_messages(head + prefix, after, ["[]"] * (max(turns, default=-1) + 1))
            if self.over(head, prefix, messages):
                too_long.add(row["prompt_id"])
            elif turns:
                recheck.add(row["prompt_id"])
        skipped = pl.col("prompt_id").is_in(list(too_long))
        return WindowSplit(rows.filter(~skipped), rows.filter(skipped), frozenset(recheck), counted.height)
