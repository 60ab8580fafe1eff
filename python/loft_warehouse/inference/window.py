"""Which prompts fit a system's context window (minus max_output_tokens).

prompts.n_tokens_total is a SentencePiece count. A prompt within the window in it is sent
without further work. Over the window, a system without a `tokenizer` skips it
(skipped_too_long); a system with one counts the prompt again as it is sent (head + prefix +
suffix as chat messages) in its own tokens, and only that count decides. A multi-turn prompt
depends on the model's earlier answers: before the run it is counted with empty answers (the
shortest fill), and one that fits then is counted again with the real answers when sent.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import polars as pl

from loft_warehouse.errors import ConfigurationError
from loft_warehouse.inference.messages import build_messages
from loft_warehouse.inference.systems import System
from loft_warehouse.model_tokens import ModelTokens, model_tokens
from loft_warehouse.prompts.multiturn import placeholder_turns


@dataclass(frozen=True)
class WindowSplit:
    """Prompt rows that go on (fit), rows skipped_too_long, and what decided it.

    recheck: prompt_ids of multi-turn rows to count again with the real answers when sent;
    counted: rows counted in the system's tokenizer (over the window in SentencePiece).
    """

    fit: pl.DataFrame
    too_long: pl.DataFrame
    recheck: frozenset[str] = frozenset()
    counted: int = 0


class ContextWindow:
    """The window check of one system; its tokenizer is loaded only when a prompt needs it."""

    def __init__(self, system: System, data_dir: str | None = None) -> None:
        self.system = system
        self.data_dir = data_dir
        self.limit = system.context_window - system.max_output_tokens if system.context_window else None
        self._tokens: ModelTokens | None = None

    @property
    def unit(self) -> str:
        """The tokens the skip decisions are counted in (for log lines)."""
        return self.system.tokenizer.partition(":")[2] if self.system.tokenizer else "SentencePiece"

    def tokens(self) -> ModelTokens:
        if self._tokens is None:
            where = f"system {self.system.name} (systems.yaml `tokenizer`)"
            self._tokens = model_tokens(self.system.tokenizer or "", self.data_dir, where)
        return self._tokens

    def over(self, head: str, prefix: str, messages: Sequence[Mapping[str, str]]) -> bool:
        """Whether messages (the first starting with head + prefix) overflow the window in the
        system's tokens; head and prefix are counted as parts so a prefix is encoded once."""
        first = messages[0]["content"]
        if not first.startswith(head + prefix):
            raise ValueError("the first message must start with the head and the prefix")
        parts = [(messages[0]["role"], (head, prefix, first[len(head) + len(prefix) :]))]
        parts += [(m["role"], (m["content"],)) for m in messages[1:]]
        return self.limit is not None and self.tokens().count_chat(parts) > self.limit

    def split(
        self, rows: pl.DataFrame, prefixes: Mapping[str, str] | None, segments: Mapping[str, str] | None = None
    ) -> WindowSplit:
        """Rows (prompt_id, prefix_id, head, segment_ids, suffix, n_tokens_total) split at the window.

        Without prefix texts the SentencePiece count decides even for a system with a
        tokenizer.
        """
        if self.limit is None:
            return WindowSplit(rows, rows.clear())
        over = pl.col("n_tokens_total") > self.limit
        suspects = rows.filter(over)
        if suspects.height == 0 or not self.system.tokenizer or prefixes is None:
            return WindowSplit(rows.filter(~over), suspects)
        too_long: list[str] = []
        recheck: set[str] = set()
        for row in suspects.iter_rows(named=True):
            try:
                prefix = prefixes[row["prefix_id"]]
            except KeyError as exc:
                raise ConfigurationError(f"prompt_prefixes has no prefix_id {row['prefix_id']!r}") from exc
            head = row.get("head") or ""
            after = "".join((segments or {})[i] for i in row.get("segment_ids") or []) + row["suffix"]
            turns = placeholder_turns(after)
            messages = build_messages(head + prefix, after, [[]] * (max(turns, default=-1) + 1))
            if self.over(head, prefix, messages):
                too_long.append(row["prompt_id"])
            elif turns:
                recheck.add(row["prompt_id"])
        skipped = pl.col("prompt_id").is_in(too_long)
        return WindowSplit(rows.filter(~skipped), rows.filter(skipped), frozenset(recheck), suspects.height)
