"""Every provider a system can name, registered once: its streaming client, its batch API and
limits, whether it is a paid API, the tokenizer it counts in, and what else it needs.

systems (validation), the runner, batch mode, cost estimates and the warehouse look a provider
up here and never branch on its name. Clients are named by import path and imported only when a
system of that provider runs, so a build imports only the SDKs it uses.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from loft_warehouse.errors import ConfigurationError
from loft_warehouse.inference.providers.base import Provider, RunData


@dataclass(frozen=True)
class BatchAPI:
    """A provider's batch API: its client class and the most requests and bytes one batch takes."""

    client: str
    max_requests: int
    max_bytes: int


@dataclass(frozen=True)
class ProviderKind:
    """One provider.

    client: module whose `provider(system, run)` makes the streaming client of a system.
    calls_api: a paid remote API (prices, API keys, a lease on each request shared across
    builds, twice `concurrency` workers); the others run here and cost nothing.
    tokenizer: what its systems count in when they name no `tokenizer` (None: SentencePiece).
    needs_endpoint: its systems must name a server (base_url or base_url_env).
    reads_corpus: it answers from the size's corpus, shown IDs and queries (bm25, planted).
    planted: the planted-effects test system: its rows are source 'planted', never on the
    leaderboard, and its responses go to a store of their own.
    """

    name: str
    client: str
    calls_api: bool = False
    tokenizer: str | None = None
    needs_endpoint: bool = False
    batch: BatchAPI | None = None
    reads_corpus: bool = False
    planted: bool = False

    def make(self, system: Any, run: RunData) -> Provider:
        """The streaming client of `system` (a systems.System of this provider) for a run."""
        made: Provider = importlib.import_module(self.client).provider(system, run)
        return made

    def batch_client(self, system: Any) -> Any:
        """The batch API client of a batch-mode system (batch_clients.BatchClient)."""
        if self.batch is None:
            raise ConfigurationError(f"system {system.name}: provider {self.name} has no batch API")
        module, _, name = self.batch.client.partition(":")
        factory: Callable[[Any], Any] = getattr(importlib.import_module(module), name)
        return factory(system)


_PACKAGE = "loft_warehouse.inference.providers"
_BATCHES = "loft_warehouse.inference.batch_clients"

PROVIDERS: dict[str, ProviderKind] = {
    kind.name: kind
    for kind in (
        ProviderKind(
            "gemini",
            f"{_PACKAGE}.gemini",
            calls_api=True,
            tokenizer="gemini",
            batch=BatchAPI(f"{_BATCHES}:GeminiBatches", 10_000, 19_000_000),
        ),
        ProviderKind(
            "openai",
            f"{_PACKAGE}.openai_chat",
            calls_api=True,
            batch=BatchAPI(f"{_BATCHES}:OpenAIBatches", 50_000, 190_000_000),
        ),
        ProviderKind("openai_compatible", f"{_PACKAGE}.openai_chat", calls_api=True, needs_endpoint=True),
        ProviderKind(
            "anthropic",
            f"{_PACKAGE}.anthropic_messages",
            calls_api=True,
            batch=BatchAPI(f"{_BATCHES}:AnthropicBatches", 100_000, 250_000_000),
        ),
        ProviderKind("local", f"{_PACKAGE}.local", tokenizer="gguf"),
        ProviderKind("bm25", f"{_PACKAGE}.bm25", reads_corpus=True),
        ProviderKind("planted", f"{_PACKAGE}.planted", reads_corpus=True, planted=True),
    )
}
BATCH_PROVIDERS = tuple(name for name, kind in PROVIDERS.items() if kind.batch is not None)
