"""Drive a size's prompts through the selected systems and return the `responses` rows.

Per system: rows outside its scope are left out; without credentials every row is
`skipped_no_credentials` (one warning line); prompts that do not fit its context window (in
its own tokenizer where it has one, see window.py) are `skipped_too_long`; everything else is
looked up in the durable store by request key and only the rest is sent. Before any call, the
estimated cost of all calls still to make is checked against max_cost_usd. Multi-turn queries
run as one conversation: turn t is sent with the earlier turns and the model's earlier answers
(parsed, as upstream feeds them back).
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any

import polars as pl

from loft_warehouse.errors import ConfigurationError
from loft_warehouse.inference import cost
from loft_warehouse.inference.flow import (
    Limiter,
    Progress,
    RetryPolicy,
    call_with_retries,
    emit_stderr,
)
from loft_warehouse.inference.messages import build_messages
from loft_warehouse.inference.providers.base import (
    Completion,
    PermanentError,
    Provider,
    Request,
    RetryableError,
)
from loft_warehouse.inference.store import ResponseStore, StoredResponse, now_utc
from loft_warehouse.inference.systems import API_PROVIDERS, Prices, System, scope
from loft_warehouse.inference.window import ContextWindow
from loft_warehouse.prompts.store import PROMPT_KEY_SCHEMA

RESPONSE_SCHEMA = {
    "system": pl.String,
    **PROMPT_KEY_SCHEMA,
    "request_key": pl.String,
    "status": pl.String,
    "raw_text": pl.String,
    "finish_reason": pl.String,
    "input_tokens": pl.Int64,
    "cached_tokens": pl.Int64,
    "output_tokens": pl.Int64,
    "latency_s": pl.Float64,
    "attempts": pl.Int64,
    "error": pl.String,
    "cost_usd": pl.Float64,
    "created_at": pl.String,
}
PROMPT_COLUMNS = (
    "prompt_id", "task", "dataset", "corpus_id", "variant", "split", "qid", "turn",
    "prefix_id", "head", "suffix", "n_tokens_prefix", "n_tokens_total",
)  # fmt: skip
Parser = Callable[[str | None, str], list[Any]]


@dataclass
class RunInputs:
    """What a run reads: prompt rows, prefix texts by prefix_id, and bm25's extra tables."""

    prompts: pl.DataFrame
    prefixes: dict[str, str]
    corpus: pl.DataFrame | None = None
    doc_ids: pl.DataFrame | None = None
    queries: pl.DataFrame | None = None


@dataclass
class Conversation:
    """The prompt rows of one query for one system, in turn order (one row if single-turn)."""

    rows: list[dict[str, Any]]


def request_key(system: System, head: str, prefix_sha: str, prefix: str, messages: list[dict[str, str]]) -> str:
    """sha256 of (system, model, generation settings and options, prompt messages).

    The messages start with head + prefix; the prefix enters through its own sha256 (hashed
    once per prefix, not once per request), the head and the rest of the text as they are.
    """
    first = messages[0]["content"]
    if not first.startswith(head + prefix):
        raise ValueError("the first message must start with the head and the prefix")
    body = [{**messages[0], "content": first[len(head) + len(prefix) :]}, *messages[1:]]
    payload = json.dumps(
        {
            "system": system.name,
            "model": system.model,
            "settings": {"generation": system.generation, "options": system.options},
            "head": head,
            "prefix_sha256": prefix_sha,
            "messages": body,
        },
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def default_parser(text: str | None, task: str) -> list[Any]:
    """Upstream's answer extraction (scoring's parse_loft), fed back for earlier turns.

    Multi-turn datasets (SParC, TopiOCQA) read `Final Answer:` lists, so the task does not
    change the rule; it is passed for parsers that need it.
    """
    from loft_warehouse.scoring.parse import parse_loft

    return list(parse_loft(text) or [])


def make_provider(system: System, inputs: RunInputs) -> Provider:
    """The provider client for a system (imports only what that provider needs)."""
    if system.provider in ("openai", "openai_compatible"):
        from loft_warehouse.inference.providers.openai_chat import OpenAIChatProvider

        return OpenAIChatProvider(system)
    if system.provider == "gemini":
        from loft_warehouse.inference.providers.gemini import GeminiProvider

        return GeminiProvider(system)
    if system.provider == "bm25":
        from loft_warehouse.inference.providers.bm25 import BM25Provider

        if inputs.corpus is None or inputs.doc_ids is None or inputs.queries is None:
            raise ConfigurationError("bm25 needs the size's corpus, prompt_doc_ids and queries")
        return BM25Provider(system, inputs.corpus, inputs.doc_ids, inputs.queries)
    if system.provider == "local":
        from loft_warehouse.inference.providers.local import LocalProvider

        return LocalProvider(system)
    raise ConfigurationError(f"system {system.name}: unknown provider {system.provider!r}")


def _row_response(row: dict[str, Any], system: System, status: str, key: str | None = None) -> StoredResponse:
    return StoredResponse(
        request_key=key or "",
        system=system.name,
        prompt_id=row["prompt_id"],
        task=row["task"],
        dataset=row["dataset"],
        corpus_id=row["corpus_id"],
        variant=row["variant"],
        split=row["split"],
        qid=row["qid"],
        turn=int(row["turn"]),
        status=status,
        attempts=0,
        created_at=now_utc(),
    )


def _as_row(stored: StoredResponse, row: dict[str, Any], system: System) -> StoredResponse:
    """A stored outcome shown under the current prompt row (the same text may have several)."""
    meta = _row_response(row, system, stored.status, stored.request_key)
    outcome = {k: getattr(stored, k) for k in (
        "raw_text", "finish_reason", "input_tokens", "cached_tokens", "output_tokens",
        "latency_s", "attempts", "error", "cost_usd", "created_at",
    )}  # fmt: skip
    return replace(meta, **outcome)


class SystemRun:
    """One system's share of a run: conversations to walk, its store lookups and its calls."""

    def __init__(
        self,
        system: System,
        inputs: RunInputs,
        store: ResponseStore,
        prices: Prices,
        parse: Parser,
        emit: Callable[[str], None],
        window: ContextWindow,
        recheck: frozenset[str] = frozenset(),
    ) -> None:
        self.system = system
        self.inputs = inputs
        self.store = store
        self.prices = prices
        self.parse = parse
        self.emit = emit
        self.window = window
        self.recheck = recheck
        self.skipped_when_sent = 0
        self.skip_lock = threading.Lock()
        self.prefix_sha: dict[str, str] = {}
        self.known: dict[str, StoredResponse] = {}
        self.provider: Provider | None = None
        self.limiter = Limiter(system.requests_per_minute, system.tokens_per_minute)
        self.policy = RetryPolicy(
            system.max_attempts,
            system.backoff_initial_s,
            system.backoff_max_s,
            min(1.0, system.backoff_initial_s),
        )
        self.progress: Progress | None = None
        # At most `concurrency` requests in flight; a worker storing its response holds no slot.
        self.slots = threading.BoundedSemaphore(max(1, system.concurrency))

    def scrub(self, text: str) -> str:
        """Error text with the system's API key masked (some servers echo what they were sent)."""
        key = self.system.api_key()
        return text.replace(key, "***") if key else text

    def prefix(self, prefix_id: str) -> tuple[str, str]:
        try:
            text = self.inputs.prefixes[prefix_id]
        except KeyError as exc:
            raise ConfigurationError(f"prompt_prefixes has no prefix_id {prefix_id!r}") from exc
        if prefix_id not in self.prefix_sha:
            self.prefix_sha[prefix_id] = hashlib.sha256(text.encode("utf-8")).hexdigest()
        return text, self.prefix_sha[prefix_id]

    def turn_request(self, row: dict[str, Any], answers: list[list[Any]]) -> Request:
        prefix, sha = self.prefix(row["prefix_id"])
        head = row.get("head") or ""
        messages = build_messages(head + prefix, row["suffix"], answers)
        key = request_key(self.system, head, sha, prefix, messages)
        tokens = int(row["n_tokens_total"] or 0)
        return Request(key, row["prefix_id"], prefix, tuple(messages), tokens, row, head)

    def answer_of(self, stored: StoredResponse, task: str) -> list[Any]:
        return self.parse(stored.raw_text, task) if stored.status == "ok" else []

    def pending(self, conversations: list[Conversation]) -> list[dict[str, Any]]:
        """Rows whose response is not stored yet (walking stored turns to key later ones)."""
        firsts = [self.turn_request(c.rows[0], []).key for c in conversations]
        self.known.update(self.store.final(firsts))
        missing: list[dict[str, Any]] = []
        for conversation, key in zip(conversations, firsts, strict=True):
            answers: list[list[Any]] = []
            for index, row in enumerate(conversation.rows):
                if index:
                    key = self.turn_request(row, answers).key
                    self.known.update(self.store.final([key]))
                if key not in self.known:
                    missing.extend(conversation.rows[index:])
                    break
                answers.append(self.answer_of(self.known[key], row["task"]))
        return missing

    def call(self, request: Request) -> StoredResponse:
        """Send one request with limits and retries; the outcome is stored before it is used."""
        assert self.provider is not None
        last_start = time.monotonic()

        def attempt() -> Completion:
            nonlocal last_start
            self.limiter.acquire(request.n_tokens)
            with self.slots:
                last_start = time.monotonic()
                return self.provider.complete(request)

        response = _row_response(request.row, self.system, "error", request.key)
        try:
            completion, attempts = call_with_retries(attempt, self.policy)
            input_tokens, cached, output = (
                completion.input_tokens,
                completion.cached_tokens,
                completion.output_tokens,
            )
            response = replace(
                response,
                status=completion.status,
                raw_text=completion.raw_text,
                finish_reason=completion.finish_reason,
                input_tokens=input_tokens,
                cached_tokens=cached,
                output_tokens=output,
                attempts=attempts,
                cost_usd=cost.actual_cost(self.prices, input_tokens, cached, output),
            )
        except (RetryableError, PermanentError) as exc:
            response = replace(response, attempts=getattr(exc, "attempts", 1), error=self.scrub(str(exc))[:2000])
        response = replace(response, latency_s=round(time.monotonic() - last_start, 6), created_at=now_utc())
        self.store.put(response)
        if self.progress is not None:
            self.progress.tick(response.status, response.cost_usd)
        return response

    def send(self, request: Request) -> StoredResponse:
        """Call, unless a multi-turn prompt over the window in SentencePiece tokens turns out
        too long in the system's tokens now that its earlier answers are filled in."""
        row = request.row
        if row["prompt_id"] in self.recheck and self.window.over(request.head, request.prefix, request.messages):
            with self.skip_lock:
                self.skipped_when_sent += 1
            if self.progress is not None:
                self.progress.tick("skipped_too_long", None)
            return _row_response(row, self.system, "skipped_too_long")
        return self.call(request)

    def converse(self, conversation: Conversation) -> list[StoredResponse]:
        """Walk one conversation turn by turn, calling only for turns not stored."""
        answers: list[list[Any]] = []
        out: list[StoredResponse] = []
        for row in conversation.rows:
            request = self.turn_request(row, answers)
            stored = self.known.get(request.key) or self.send(request)
            out.append(_as_row(stored, row, self.system))
            answers.append(self.answer_of(stored, row["task"]))
        return out

    def workers(self) -> int:
        """API systems get twice `concurrency` workers, so that a slot freed by a returned
        response is refilled while that response is being stored; offline providers keep
        exactly `concurrency` (in order, so a local model reuses its prefix KV cache)."""
        concurrency = max(1, self.system.concurrency)
        return 2 * concurrency if self.system.provider in API_PROVIDERS else concurrency

    def execute(self, conversations: list[Conversation], n_pending: int) -> list[StoredResponse]:
        """Run all conversations with bounded concurrency; closes the provider (deletes caches)."""
        if not n_pending:
            return [r for c in conversations for r in self.converse(c)]
        self.provider = make_provider(self.system, self.inputs)
        self.progress = Progress(f"inference {self.system.name}", n_pending, self.emit)
        try:
            with ThreadPoolExecutor(max_workers=self.workers()) as pool:
                results = list(pool.map(self.converse, conversations))
        finally:
            self.provider.close()
            self.progress.finish()
        if self.skipped_when_sent:
            self.emit(
                f"{self.system.name}: {self.skipped_when_sent} more prompt(s) skipped_too_long with their earlier "
                f"answers (> {self.window.limit} {self.window.unit} tokens)"
            )
        return [r for result in results for r in result]


def conversations(rows: pl.DataFrame) -> list[Conversation]:
    """Group prompt rows into conversations, ordered by prefix so caches are reused in order."""
    grouped: dict[tuple, list[dict[str, Any]]] = {}
    for row in rows.sort("prefix_id", "qid", "turn").iter_rows(named=True):
        grouped.setdefault((row["task"], row["dataset"], row["corpus_id"], row["variant"], row["qid"]), []).append(row)
    return [Conversation(group) for group in grouped.values()]


def run(
    inputs: RunInputs,
    systems: list[System],
    store: ResponseStore,
    size: str,
    seed_prices: dict[str, Prices],
    max_cost_usd: float | None = None,
    parse: Parser = default_parser,
    emit: Callable[[str], None] = emit_stderr,
    data_dir: str | None = None,
) -> pl.DataFrame:
    """Responses of every in-scope prompt row for every system (the `responses` table rows).

    data_dir locates the tokenizer files of systems with a `tokenizer` (None: the default).
    """
    prompts = inputs.prompts
    if "head" not in prompts.columns:
        prompts = prompts.with_columns(pl.lit("").alias("head"))
    prompts = prompts.select(PROMPT_COLUMNS)
    out: list[StoredResponse] = []
    planned: list[tuple[SystemRun, list[Conversation], int]] = []
    to_spend = 0.0
    unknown_cost = False
    for system in systems:
        rows = scope(prompts, system, size)
        if rows.height == 0:
            continue
        missing = system.missing_credentials()
        if missing:
            emit(f"WARNING: {system.name}: {rows.height} prompt(s) skipped_no_credentials (set {', '.join(missing)})")
            out.extend(_row_response(r, system, "skipped_no_credentials") for r in rows.iter_rows(named=True))
            continue
        window = ContextWindow(system, data_dir)
        split = window.split(rows, inputs.prefixes)
        if split.counted:
            emit(
                f"{system.name}: {split.counted} prompt(s) over {window.limit} SentencePiece tokens counted in "
                f"{window.unit}: {split.counted - split.too_long.height} fit"
            )
        if split.too_long.height:
            limit = f"{window.limit} {window.unit} tokens"
            emit(f"{system.name}: {split.too_long.height} prompt(s) skipped_too_long (> {limit})")
            out.extend(_row_response(r, system, "skipped_too_long") for r in split.too_long.iter_rows(named=True))
        rows = split.fit
        prices = cost.resolve_prices(system, seed_prices)
        work = SystemRun(system, inputs, store, prices, parse, emit, window, split.recheck)
        convs = conversations(rows)
        pending = work.pending(convs)
        for row in pending:
            spend = cost.actual_cost(prices, int(row["n_tokens_total"] or 0), 0, system.expected_output_tokens)
            unknown_cost |= spend is None
            to_spend += spend or 0.0
        emit(f"{system.name}: {rows.height} prompt(s), {rows.height - len(pending)} stored, {len(pending)} to send")
        planned.append((work, convs, len(pending)))
    cost.check_limit(None if unknown_cost else to_spend, max_cost_usd, "inference run")
    for work, convs, n_pending in planned:
        out.extend(work.execute(convs, n_pending))
    return responses_frame(out)


def responses_frame(responses: Sequence[StoredResponse]) -> pl.DataFrame:
    """StoredResponse rows as the `responses` table frame (empty request_key -> null)."""
    records = [{c: getattr(r, c) for c in RESPONSE_SCHEMA} for r in responses]
    frame = pl.DataFrame(records, schema=RESPONSE_SCHEMA)
    return frame.with_columns(pl.col("request_key").replace("", None)).sort("system", "prompt_id")
