"""Drive a size's prompts through the selected systems and return the `responses` rows.

Per system: rows outside its scope are left out; without credentials every row is
`skipped_no_credentials` (one warning line); prompts that do not fit its context window (in
its own tokenizer where it has one, see window.py) are `skipped_too_long`; everything else is
looked up in the durable store by request key and only the rest is sent. Before any call, the
estimated cost of the calls this build will make is printed beside the full run's and checked
against max_cost_usd. Multi-turn queries run as one conversation: turn t is sent with the
earlier turns and the model's earlier answers (parsed, as upstream feeds them back).
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import polars as pl

from loft_warehouse import interrupts
from loft_warehouse.answers.parse import loft_feedback
from loft_warehouse.errors import ConfigurationError
from loft_warehouse.inference import cost
from loft_warehouse.inference import media as media_parts
from loft_warehouse.inference.batch_run import BatchWork
from loft_warehouse.inference.executors import executors
from loft_warehouse.inference.flow import (
    Limiter,
    RetryPolicy,
    call_with_retries,
    map_stoppable,
)
from loft_warehouse.inference.messages import build_messages
from loft_warehouse.inference.outcomes import (
    Conversation,
    Outcome,
    completed,
    conversations,
    row_response,
    within_reply_budget,
)
from loft_warehouse.inference.providers.base import (
    Completion,
    PermanentError,
    Provider,
    RejectedError,
    Request,
    RetryableError,
)
from loft_warehouse.inference.store import REJECTED, ResponseStore, StoredResponse, now_utc
from loft_warehouse.inference.systems import Prices, System, scope
from loft_warehouse.inference.window import ContextWindow
from loft_warehouse.progress import Progress, emit_stderr
from loft_warehouse.prompts.store import PROMPT_KEY_SCHEMA

RESPONSE_SCHEMA: dict[str, pl.DataType | type[pl.DataType]] = {
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
    "cache_write_tokens": pl.Int64,
    "ttft_s": pl.Float64,
    "batch_id": pl.String,
    "thinking_tokens": pl.Int64,
    "max_output_tokens": pl.Int64,
    "thinking": pl.String,
    "thought_text": pl.String,
}
PROMPT_COLUMNS = (
    *PROMPT_KEY_SCHEMA, "prefix_id", "head", "segment_ids", "suffix", "n_tokens_prefix", "n_tokens_total",
)  # fmt: skip
# Columns a prompt row keeps when it has them: the stage-2 system, and the gold, payload (a
# verification call's candidate) and document count the planted test system answers from.
OPTIONAL_COLUMNS = ("system", "gold", "gold_shown_ids", "gold_depth", "payload", "n_documents")
OUTCOME_COLUMNS = (
    "request_key", "status", "raw_text", "finish_reason", "input_tokens", "cached_tokens", "output_tokens",
    "latency_s", "attempts", "error", "cost_usd", "created_at", "cache_write_tokens", "ttft_s", "batch_id",
    "thinking_tokens", "max_output_tokens", "thinking", "thought_text",
)  # fmt: skip
# How often a build waiting on another build's lease looks for the response.
LEASE_POLL_S = 0.5
# What is fed back after a turn, from the reply and (retrieval) the shown-ID -> pid mapping.
Feedback = Callable[[str | None, Mapping[str, str] | None], str]


@dataclass
class RunInputs:
    """What a run reads: prompt rows, prefix and segment texts by id, bm25's extra tables, the
    size (the planted test system's effects depend on it) and the media multimodal prompts name.

    Rows with a `system` column (stages after the first) belong to that system alone."""

    prompts: pl.DataFrame
    prefixes: dict[str, str]
    corpus: pl.DataFrame | None = None
    doc_ids: pl.DataFrame | None = None
    queries: pl.DataFrame | None = None
    segments: dict[str, str] = field(default_factory=dict)
    size: str = ""
    media: media_parts.MediaLibrary | None = None

    def after_prefix(self, row: dict[str, Any]) -> str:
        """What follows the prefix in a row's prompt: its segments, then its suffix."""
        ids = row.get("segment_ids") or []
        try:
            return "".join(self.segments[i] for i in ids) + row["suffix"]
        except KeyError as exc:
            raise ConfigurationError(f"prompt_segments has no segment_id {exc.args[0]!r}") from exc


def request_key(system: System, head: str, prefix_sha: str, prefix: str, messages: list[dict[str, str]]) -> str:
    """sha256 of (system, model, generation settings and options, endpoint, prompt messages).

    The messages start with head + prefix; the prefix enters through its own sha256 (hashed
    once per prefix, not once per request), the head and the rest of the text as they are.
    A system sent to another endpoint than its provider's (base_url / base_url_env: a local
    server, the fixture) has that endpoint in its key, so a stand-in's answers can never be
    read back as the real model's; keys of the public endpoints are as they always were.
    """
    first = messages[0]["content"]
    if not first.startswith(head + prefix):
        raise ValueError("the first message must start with the head and the prefix")
    body = [{**messages[0], "content": first[len(head) + len(prefix) :]}, *messages[1:]]
    keyed: dict[str, Any] = {
        "system": system.name,
        "model": system.model,
        "settings": {"generation": system.generation, "options": system.options},
        "head": head,
        "prefix_sha256": prefix_sha,
        "messages": body,
    }
    endpoint = system.endpoint()
    if endpoint:
        keyed["endpoint"] = endpoint.rstrip("/")
    payload = json.dumps(
        keyed,
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class SystemRun:
    """One system's share of a run: conversations to walk, its store lookups and its calls."""

    def __init__(
        self,
        system: System,
        inputs: RunInputs,
        store: ResponseStore,
        prices: Prices,
        feedback: Feedback,
        emit: Callable[[str], None],
        window: ContextWindow,
        recheck: frozenset[str] = frozenset(),
        report_as: str | None = None,
        retry_errors: bool = False,
    ) -> None:
        self.system = system
        self.retry_errors = retry_errors
        self.report_as = report_as or system.name
        self.inputs = inputs
        self.store = store
        self.prices = prices
        self.feedback = feedback
        self.pid_maps: dict[tuple[str, ...], dict[str, str]] = {}
        self.emit = emit
        self.window = window
        self.recheck = recheck
        self.skipped_when_sent = 0
        self.skip_lock = threading.Lock()
        self.prefix_sha: dict[str, str] = {}
        self.known: dict[str, StoredResponse] = {}
        self.inflight: dict[str, threading.Event] = {}
        self.inflight_lock = threading.Lock()
        self.sent_this_run: set[str] = set()
        self.waiting_on_others = False
        self.in_batches: dict[str, str] = {}
        self.n_in_batches = 0
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

    def prefix(self, prefix_id: str) -> tuple[str, str]:
        try:
            text = self.inputs.prefixes[prefix_id]
        except KeyError as exc:
            raise ConfigurationError(f"prompt_prefixes has no prefix_id {prefix_id!r}") from exc
        if prefix_id not in self.prefix_sha:
            self.prefix_sha[prefix_id] = hashlib.sha256(text.encode("utf-8")).hexdigest()
        return text, self.prefix_sha[prefix_id]

    def turn_request(self, row: dict[str, Any], answers: list[str]) -> Request:
        prefix, sha = self.prefix(row["prefix_id"])
        head = row.get("head") or ""
        messages = build_messages(head + prefix, self.inputs.after_prefix(row), answers)
        key = request_key(self.system, head, sha, prefix, messages)
        tokens = int(row["n_tokens_total"] or 0)
        return Request(key, row["prefix_id"], prefix, tuple(messages), tokens, row, head, self.inputs.media)

    def shown_to_pid(self, row: dict[str, Any]) -> dict[str, str] | None:
        """Retrieval: the shown IDs of the row's corpus and variant mapped to pids (what LOFT
        feeds back); None for other tasks or when the run has no doc_ids."""
        if row["task"] != "retrieval" or self.inputs.doc_ids is None:
            return None
        key = (row["task"], row["dataset"], row["corpus_id"], row["variant"])
        if key not in self.pid_maps:
            ids = self.inputs.doc_ids.filter(
                (pl.col("task") == key[0]) & (pl.col("dataset") == key[1])
                & (pl.col("corpus_id") == key[2]) & (pl.col("variant") == key[3])
            )  # fmt: skip
            self.pid_maps[key] = dict(zip(ids["shown_id"].cast(pl.String), ids["pid"], strict=True))
        return self.pid_maps[key]

    def answer_of(self, stored: StoredResponse, row: dict[str, Any]) -> str:
        """The text fed back after a turn: LOFT's `str(answers)`; `[]` after a failed call."""
        return self.feedback(stored.raw_text, self.shown_to_pid(row)) if stored.status == "ok" else "[]"

    def pending(self, conversations: list[Conversation]) -> list[dict[str, Any]]:
        """Rows whose response is not stored yet (walking stored turns to key later ones)."""
        firsts = [self.turn_request(c.rows[0], []).key for c in conversations]
        self.known.update(self.store.final(firsts, self.retry_errors))
        missing: list[dict[str, Any]] = []
        for conversation, key in zip(conversations, firsts, strict=True):
            answers: list[str] = []
            for index, row in enumerate(conversation.rows):
                if index:
                    key = self.turn_request(row, answers).key
                    self.known.update(self.store.final([key], self.retry_errors))
                if key in self.in_batches:
                    self.n_in_batches += len(conversation.rows) - index
                    break
                if key not in self.known:
                    missing.extend(conversation.rows[index:])
                    break
                answers.append(self.answer_of(self.known[key], row))
        return missing

    def call(self, request: Request) -> StoredResponse:
        """Send one request with limits and retries; the outcome is stored before it is used."""
        provider = self.provider
        assert provider is not None
        last_start = time.monotonic()

        def attempt() -> Completion:
            nonlocal last_start
            self.limiter.acquire(request.n_tokens)
            with self.slots:
                last_start = time.monotonic()
                return provider.complete(request)

        response = row_response(request.row, self.system, "error", request.key)
        try:
            completion, attempts = call_with_retries(attempt, self.policy)
            response = within_reply_budget(
                replace(completed(response, completion, self.prices, batch=False), attempts=attempts)
            )
        except (RetryableError, PermanentError) as exc:
            # A call cut off by Ctrl-C (its client closed) is not the request's outcome.
            interrupts.check("inference")
            response = replace(
                response,
                attempts=getattr(exc, "attempts", 1),
                error=self.system.scrub(str(exc))[:2000],
                finish_reason=REJECTED if isinstance(exc, RejectedError) else None,
            )
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
            return row_response(row, self.system, "skipped_too_long")
        return self.call(request)

    def once(self, request: Request) -> StoredResponse:
        """The outcome of a request, sent at most once per run: rows whose messages are the same
        (a prompt two methods or variants share) wait for the first one and reuse its answer."""
        while True:
            with self.inflight_lock:
                if request.key in self.known:
                    if request.key in self.sent_this_run and self.progress is not None:
                        self.progress.tick(self.known[request.key].status, 0.0)
                    return self.known[request.key]
                event = self.inflight.get(request.key)
                if event is None:
                    event = self.inflight[request.key] = threading.Event()
                    break
            event.wait()
        try:
            stored, sent = self.send_once_across_builds(request)
            with self.inflight_lock:
                self.known[request.key] = stored
                if sent:
                    self.sent_this_run.add(request.key)
        finally:
            with self.inflight_lock:
                del self.inflight[request.key]
            event.set()
        return stored

    def send_once_across_builds(self, request: Request) -> tuple[StoredResponse, bool]:
        """Send a paid request under the store's lease on its key; while another build holds
        that lease, wait for the response it stores. Returns (outcome, sent by this run)."""
        if not self.system.kind.calls_api:
            return self.send(request), True
        while True:
            state, stored = self.store.claim(request.key, self.retry_errors)
            if state == "stored" and stored is not None:
                if self.progress is not None:
                    self.progress.tick(stored.status, 0.0)
                return stored, False
            if state == "mine":
                try:
                    return self.send(request), True
                finally:
                    self.store.release(request.key)
            with self.inflight_lock:
                first_wait, self.waiting_on_others = not self.waiting_on_others, True
            if first_wait:
                self.emit(
                    f"{self.system.name}: another build sharing {self.store.path} is sending some of these "
                    "requests; waiting for its responses"
                )
            interrupts.check("inference")
            time.sleep(LEASE_POLL_S)

    def converse(self, conversation: Conversation) -> list[Outcome]:
        """Walk one conversation turn by turn, calling only for turns not stored."""
        answers: list[str] = []
        out: list[Outcome] = []
        for row in conversation.rows:
            interrupts.check("inference")
            request = self.turn_request(row, answers)
            stored = self.once(request)
            out.append(({**row, "system": self.report_as}, stored))
            answers.append(self.answer_of(stored, row))
        return out

    def workers(self) -> int:
        """API systems get twice `concurrency` workers, so that a slot freed by a returned
        response is refilled while that response is being stored; offline providers keep
        exactly `concurrency` (in order, so a local model reuses its prefix KV cache)."""
        concurrency = max(1, self.system.concurrency)
        return 2 * concurrency if self.system.kind.calls_api else concurrency

    def execute(self, conversations: list[Conversation], n_pending: int) -> list[Outcome]:
        """Run all conversations with bounded concurrency; closes the provider (deletes caches)."""
        if not n_pending:
            return [r for c in conversations for r in self.converse(c)]
        self.provider = self.system.kind.make(self.system, self.inputs)
        label = self.system.name if self.report_as == self.system.name else f"{self.system.name} for {self.report_as}"
        self.progress = Progress(f"inference {label}", n_pending, self.emit)
        interrupts.listen()
        try:
            results = map_stoppable(self.converse, conversations, self.workers())
        except interrupts.Interrupted as exc:
            raise interrupts.Interrupted(
                f"{label}: interrupted after {len(self.sent_this_run)} response(s) stored this run; {interrupts.RESUME}"
            ) from exc
        finally:
            self.progress.finish()
            self.provider.close()
        if self.skipped_when_sent:
            self.emit(
                f"{self.system.name}: {self.skipped_when_sent} more prompt(s) skipped_too_long with their earlier "
                f"answers (> {self.window.limit} {self.window.unit} tokens)"
            )
        return [r for result in results for r in result]


def _with_defaults(prompts: pl.DataFrame) -> pl.DataFrame:
    """Prompt rows with every column the runner reads (one-call LOFT rows lack the newer ones)."""
    defaults = {
        "head": pl.lit(""),
        "segment_ids": pl.lit([], pl.List(pl.String)),
        "method": pl.lit("cic"),
        "stage": pl.lit(1, pl.Int64),
        "call_index": pl.lit(0, pl.Int64),
    }
    missing = [value.alias(name) for name, value in defaults.items() if name not in prompts.columns]
    prompts = prompts.with_columns(missing) if missing else prompts
    return prompts.select([*PROMPT_COLUMNS, *(c for c in OPTIONAL_COLUMNS if c in prompts.columns)])


def run(
    inputs: RunInputs,
    systems: list[System],
    store: ResponseStore,
    size: str,
    seed_prices: dict[str, Prices],
    max_cost_usd: float | None = None,
    feedback: Feedback = loft_feedback,
    emit: Callable[[str], None] = emit_stderr,
    data_dir: str | None = None,
    full_runs: Mapping[str, cost.FullRun] | None = None,
    retry_errors: bool = False,
) -> pl.DataFrame:
    """Responses of every in-scope prompt row for every system (the `responses` table rows).

    A request the server refused (RejectedError, stored with finish_reason `rejected`) is not
    sent again on a rerun unless retry_errors; other errors are.

    data_dir locates the tokenizer files of systems with a `tokenizer` (None: the default).
    Rows of a stage that a non-model step answers (bm25 top-k) are run by that step for each
    system in whose scope they are, with no credentials needed and at no cost. Before any call
    it prints what it will send and its estimated cost per system; max_cost_usd bounds that:
    the requests still to send, plus each system's later stages (full_runs: the stage-1 run's
    cost_estimates) in proportion to the share of its prompts still to send.
    """
    prompts = _with_defaults(inputs.prompts)
    out: list[Outcome] = []
    planned: list[tuple[SystemRun, list[Conversation], int, BatchWork | None]] = []
    plans: dict[str, cost.SystemPlan] = {}
    for chosen in systems:
        in_scope = scope(prompts, chosen, size)
        if "system" in in_scope.columns:
            in_scope = in_scope.filter(pl.col("system") == chosen.name).drop("system")
        plan = plans.setdefault(chosen.name, cost.SystemPlan(chosen.name))
        for system, rows in executors(chosen, in_scope):
            if rows.height == 0:
                continue
            missing = system.missing_credentials()
            rows, unsupported = _media_scope(rows, system, inputs, emit)
            if unsupported.height:
                out.extend(_skipped(unsupported.iter_rows(named=True), system, chosen, "skipped_unsupported"))
            window = ContextWindow(system, data_dir)
            split = window.split(rows, inputs.prefixes, inputs.segments)
            if split.counted:
                emit(
                    f"{system.name}: {split.counted} prompt(s) counted in {window.unit} tokens: "
                    f"{split.counted - split.too_long.height} within {window.limit}"
                )
            if split.too_long.height:
                limit = f"{window.limit} {window.unit} tokens"
                emit(f"{system.name}: {split.too_long.height} prompt(s) skipped_too_long (> {limit})")
                out.extend(_skipped(split.too_long.iter_rows(named=True), system, chosen, "skipped_too_long"))
            rows = split.fit
            prices = cost.resolve_prices(system, seed_prices)
            work = SystemRun(
                system, inputs, store, prices, feedback, emit, window, split.recheck, chosen.name, retry_errors
            )
            convs = conversations(rows)
            if missing:
                planned.append((work, _stored_only(work, convs, chosen, missing, out, emit), 0, None))
                plan.prompts += rows.height
                plan.skipped = f"not sent: no key (set {', '.join(missing)})"
                continue
            batch = system.mode == "batch"
            batches = BatchWork(work, emit) if batch else None
            if batches is not None:
                work.in_batches = batches.collect()
            pending = work.pending(convs)
            for row in pending:
                tokens = int(row["n_tokens_total"] or 0)
                plan.add_cost(cost.actual_cost(prices, tokens, 0, system.expected_billed_output_tokens, batch=batch))
            label = system.name if system is chosen else f"{system.name} for {chosen.name}"
            waiting = f", {work.n_in_batches} waiting in batches" if batch else ""
            verb = "to submit in batches" if batch else "to send"
            stored = rows.height - len(pending) - work.n_in_batches
            emit(f"{label}: {rows.height} prompt(s), {stored} stored{waiting}, {len(pending)} {verb}")
            plan.prompts += rows.height
            plan.stored += stored
            plan.in_batches += work.n_in_batches
            plan.to_send += len(pending)
            planned.append((work, convs, len(pending), batches))
    for plan in plans.values():
        if full_runs is not None:
            _add_later_stages(plan, full_runs.get(plan.system))
    shown = [plan for plan in plans.values() if plan.prompts]
    if shown:
        emit(cost.format_plan(shown, size, full_runs is not None))
    if max_cost_usd is not None and (shown or full_runs is not None):
        emit(cost.limit_line(shown, max_cost_usd))
    try:
        cost.check_limit(cost.total_usd(shown), max_cost_usd, "inference run")
        for work, convs, n_pending, batches in planned:
            out.extend(work.execute(convs, n_pending) if batches is None else batches.walk(convs, work.in_batches))
    finally:
        for planned_run in planned:
            if planned_run[3] is not None:
                planned_run[3].close()
    return responses_frame(out)


def _media_scope(
    rows: pl.DataFrame, system: System, inputs: RunInputs, emit: Callable[[str], None]
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """A system's rows it can send (multimodal ones with their media tokens counted) and the
    multimodal ones it cannot (skipped_unsupported), each kind said in one line."""
    scoped = media_parts.scope(rows, system, inputs.prefixes, inputs.media)
    if scoped.unsupported.height:
        emit(
            f"{system.name}: {scoped.unsupported.height} multimodal prompt(s) skipped_unsupported "
            f"({system.provider} takes no {', '.join(scoped.lacking)})"
        )
    if scoped.undocumented:
        emit(
            f"{system.name}: {scoped.undocumented} multimodal prompt(s) with media whose tokens {system.provider} "
            "does not document: their window check and cost count the text alone"
        )
    return scoped.taken, scoped.unsupported


def _add_later_stages(plan: cost.SystemPlan, full_run: cost.FullRun | None) -> None:
    """A stage-1 plan's later stages: their full-run estimate times the share of the system's
    stage-1 prompts still to send (a stored stage-1 answer has, as a rule, its later stages
    stored too; each later stage checks its own requests again before sending them)."""
    if full_run is None:
        return
    plan.full_usd = full_run.full_usd
    if plan.skipped or not plan.prompts:
        return
    later = None if full_run.later_usd is None else full_run.later_usd * plan.to_send / plan.prompts
    plan.add_cost(later)


def _stored_only(
    work: SystemRun,
    convs: list[Conversation],
    reported: System,
    missing: list[str],
    out: list[Outcome],
    emit: Callable[[str], None],
) -> list[Conversation]:
    """A system without its key: the conversations whose every turn is stored are read back
    (a paid run stays in the warehouse when its key is unset later); the others are skipped."""
    unstored = {row["prompt_id"] for row in work.pending(convs)}
    stored = [c for c in convs if not any(row["prompt_id"] in unstored for row in c.rows)]
    skipped = [row for c in convs if any(r["prompt_id"] in unstored for r in c.rows) for row in c.rows]
    if skipped:
        emit(
            f"WARNING: {work.system.name}: {len(skipped)} prompt(s) skipped_no_credentials (set {', '.join(missing)})"
            + (f"; {sum(len(c.rows) for c in stored)} stored response(s) read back" if stored else "")
        )
        out.extend(_skipped(skipped, work.system, reported, "skipped_no_credentials"))
    return stored


def _skipped(rows: Iterable[dict[str, Any]], system: System, reported: System, status: str) -> list[Outcome]:
    return [({**r, "system": reported.name}, row_response(r, system, status)) for r in rows]


def responses_frame(outcomes: Sequence[Outcome]) -> pl.DataFrame:
    """(prompt row, response) pairs as the `responses` table frame (empty request_key -> null):
    the prompt's key columns, the system it is reported under, the response's outcome."""
    records = [
        {
            "system": row["system"],
            **{c: row.get(c) for c in PROMPT_KEY_SCHEMA},
            **{c: getattr(stored, c) for c in OUTCOME_COLUMNS},
        }
        for row, stored in outcomes
    ]
    frame = pl.DataFrame(records, schema=RESPONSE_SCHEMA)
    return frame.with_columns(pl.col("request_key").replace("", None)).sort("system", "prompt_id")
