"""Cost before and after a run: estimates from token counts and prices, actual cost from usage.

Prices are USD per million tokens. A system's own `prices` in systems.yaml win field by field
over the seed table seeds/model_prices.csv (matched by model name). The estimate counts prompt
tokens with the warehouse's SentencePiece counts (a provider's tokenizer differs by some
percent) and `expected_output_tokens` per request, over the prompts that fit the system's
window as the runner decides it (window.py: in the system's own tokenizer where it has one and
the prefix texts are given; for Gemini's countTokens, a call, and a local GGUF vocabulary,
which needs the optional local extra, SentencePiece decides);
"with caching" charges each distinct prefix once at the input price and every other use of it
at the cached-input price (cache storage fees are not included).
"""

from __future__ import annotations

import csv
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import polars as pl

from loft_warehouse.errors import BadInputError, ConfigurationError, CostLimitError
from loft_warehouse.inference.executors import executors
from loft_warehouse.inference.media import MediaLibrary
from loft_warehouse.inference.media import scope as media_scope
from loft_warehouse.inference.systems import Prices, System, scope
from loft_warehouse.inference.window import ContextWindow
from loft_warehouse.settings import PROJECT_ROOT

PRICES_SEED = PROJECT_ROOT / "seeds" / "model_prices.csv"
PRICE_COLUMNS = (
    "input_usd_per_mtok", "cached_input_usd_per_mtok", "output_usd_per_mtok", "cache_write_usd_per_mtok",
    "batch_price_ratio",
)  # fmt: skip
ESTIMATE_SCHEMA = {
    "system": pl.String,
    "model": pl.String,
    "size": pl.String,
    "task": pl.String,
    "dataset": pl.String,
    "method": pl.String,
    "stage": pl.Int64,
    "executor": pl.String,
    "is_estimated_from_settings": pl.Boolean,
    "n_requests": pl.Int64,
    "n_prefixes": pl.Int64,
    "input_tokens": pl.Int64,
    "cacheable_tokens": pl.Int64,
    "cache_write_tokens": pl.Int64,
    "output_tokens": pl.Int64,
    "input_usd_per_mtok": pl.Float64,
    "cached_input_usd_per_mtok": pl.Float64,
    "output_usd_per_mtok": pl.Float64,
    "cache_write_usd_per_mtok": pl.Float64,
    "batch_price_ratio": pl.Float64,
    "mode": pl.String,
    "cost_usd_no_cache": pl.Float64,
    "cost_usd_with_cache": pl.Float64,
    "cost_usd_batch": pl.Float64,
    "cost_usd_batch_with_cache": pl.Float64,
}


def _price(value: str | None, path: Path, row: int, column: str) -> float | None:
    if value is None or value.strip() == "":
        return None
    try:
        price = float(value)
    except ValueError as exc:
        raise BadInputError(path, row, f"{column} {value!r} is not a number") from exc
    if price < 0:
        raise BadInputError(path, row, f"{column} is negative")
    return price


def read_price_rows(rows: list[dict[str, str | None]], path: Path) -> dict[str, Prices]:
    """Prices by model from seed rows (dicts with model and the three price columns)."""
    prices: dict[str, Prices] = {}
    for line, row in enumerate(rows, start=2):
        model = (row.get("model") or "").strip()
        if not model:
            raise BadInputError(path, line, "empty model")
        if model in prices:
            raise BadInputError(path, line, f"model {model!r} listed twice")
        values = [_price(row.get(c), path, line, c) for c in PRICE_COLUMNS]
        prices[model] = Prices(*values)
    return prices


def load_prices(path: Path = PRICES_SEED) -> dict[str, Prices]:
    """The seed price table by model."""
    with open(path, encoding="utf-8", newline="") as handle:
        return read_price_rows([dict(row) for row in csv.DictReader(handle)], path)


def prices_from_frame(frame: pl.DataFrame) -> dict[str, Prices]:
    """The seed price table as dbt hands it over (source('reference', 'model_prices'))."""
    rows = [{k: (None if v is None else str(v)) for k, v in row.items()} for row in frame.iter_rows(named=True)]
    return read_price_rows(rows, Path("seeds/model_prices.csv"))


def resolve_prices(system: System, seed: dict[str, Prices]) -> Prices:
    """The system's own prices, falling back field by field to the seed row of its model.

    Providers that run here (bm25, local, planted) cost nothing. Cached input without a known
    discount is charged at the input price.
    """
    if not system.kind.calls_api:
        return Prices(0.0, 0.0, 0.0, 0.0, 1.0)
    base = seed.get(system.model, Prices())
    own = system.prices
    fields = ("input", "cached_input", "output", "cache_write", "batch_ratio")
    merged = replace(base, **{k: getattr(own, k) for k in fields if getattr(own, k) is not None})
    if merged.cached_input is None and merged.input is not None:
        merged = replace(merged, cached_input=merged.input)
    if merged.cache_write is None and merged.input is not None:
        merged = replace(merged, cache_write=merged.input)
    return merged


def actual_cost(
    prices: Prices,
    input_tokens: int | None,
    cached_tokens: int | None,
    output_tokens: int | None,
    cache_write_tokens: int | None = None,
    batch: bool = False,
) -> float | None:
    """USD of one response from its usage; None when a needed price or count is unknown.

    input_tokens counts every prompt token; of those, cached_tokens were read from a cache and
    cache_write_tokens written to one, each at its own price. A batch response is charged
    every price times the batch ratio."""
    if input_tokens is None and output_tokens is None:
        return None
    cached = cached_tokens or 0
    written = cache_write_tokens or 0
    uncached = max(0, (input_tokens or 0) - cached - written)
    parts = [
        (uncached, prices.input),
        (cached, prices.cached_input),
        (written, prices.cache_write),
        (output_tokens or 0, prices.output),
    ]
    if any(price is None and tokens for tokens, price in parts):
        return None
    full = sum(tokens * (price or 0.0) for tokens, price in parts) / 1e6
    if not batch:
        return full
    return None if prices.batch_ratio is None else full * prices.batch_ratio


def _usd(tokens: int, price: float | None) -> float | None:
    return None if price is None else tokens * price / 1e6


def _row(
    system: System,
    executor: System,
    prices: Prices,
    size: str,
    key: dict[str, Any],
    n_requests: int,
    n_prefixes: int,
    input_tokens: int,
    cacheable_tokens: int,
    from_settings: bool,
    cache_write_tokens: int = 0,
) -> dict[str, Any]:
    """One estimate row: a step (bm25) costs nothing and sends no model tokens.

    With caching, each cached prefix is written once (cache_write_tokens, at the cache-write
    price) and read by every other query that opens with it (cacheable_tokens, at the
    cached-input price). The batch columns are the same times the batch ratio."""
    is_step = executor is not system
    output_tokens = 0 if is_step else n_requests * system.expected_billed_output_tokens
    if is_step:
        input_tokens = cacheable_tokens = cache_write_tokens = 0
        prices = Prices(0.0, 0.0, 0.0, 0.0, 1.0)
    uncached = input_tokens - cacheable_tokens - cache_write_tokens
    no_cache = [_usd(input_tokens, prices.input), _usd(output_tokens, prices.output)]
    with_cache = no_cache[1:] + [
        _usd(uncached, prices.input),
        _usd(cacheable_tokens, prices.cached_input),
        _usd(cache_write_tokens, prices.cache_write),
    ]
    cost_no_cache = None if None in no_cache else sum(no_cache)  # type: ignore[arg-type]
    cost_with_cache = None if None in with_cache else sum(with_cache)  # type: ignore[arg-type]
    return {
        "system": system.name,
        "model": system.model,
        "size": size,
        **key,
        "executor": executor.name,
        "is_estimated_from_settings": from_settings,
        "n_requests": n_requests,
        "n_prefixes": n_prefixes,
        "input_tokens": input_tokens,
        "cacheable_tokens": cacheable_tokens,
        "cache_write_tokens": cache_write_tokens,
        "output_tokens": output_tokens,
        "input_usd_per_mtok": prices.input,
        "cached_input_usd_per_mtok": prices.cached_input,
        "output_usd_per_mtok": prices.output,
        "cache_write_usd_per_mtok": prices.cache_write,
        "batch_price_ratio": prices.batch_ratio,
        "mode": "step" if is_step else system.mode,
        "cost_usd_no_cache": cost_no_cache,
        "cost_usd_with_cache": cost_with_cache,
        "cost_usd_batch": _batch(cost_no_cache, prices.batch_ratio),
        "cost_usd_batch_with_cache": _batch(cost_with_cache, prices.batch_ratio),
    }


def _batch(cost: float | None, ratio: float | None) -> float | None:
    return None if cost is None or ratio is None else cost * ratio


def estimate(
    prompts: pl.DataFrame,
    systems: list[System],
    seed: dict[str, Prices],
    size: str,
    prefixes: Mapping[str, str] | None = None,
    data_dir: str | None = None,
    segments: Mapping[str, str] | None = None,
    media: MediaLibrary | None = None,
) -> pl.DataFrame:
    """Estimated cost per system x size x (task, dataset, method, stage) of sending these prompts.

    prompts needs task, dataset, variant, prefix_id, n_tokens_prefix, n_tokens_total (method and
    stage default to cic / 1); with prefix texts by prefix_id (and prompt_id, head, suffix), a
    system's `tokenizer` decides which prompts fit its window, as in the run. Rows a non-model
    step answers (bm25 top-k) cost nothing. Multimodal rows need the media they send: their
    media tokens count by the provider's rule, and a system that cannot take them leaves them out
    (as the run skips them).
    """
    for name, value in (("method", pl.lit("cic")), ("stage", pl.lit(1, pl.Int64))):
        if name not in prompts.columns:
            prompts = prompts.with_columns(value.alias(name))
    rows: list[dict] = []
    for system in systems:
        for executor, in_scope in executors(system, scope(prompts, system, size)):
            prices = resolve_prices(executor, seed)
            in_scope = media_scope(in_scope, executor, prefixes or {}, media).taken
            window = ContextWindow(executor, data_dir, estimate=True)
            in_scope = window.split(in_scope, prefixes, segments).fit
            if in_scope.height == 0:
                continue
            # A provider caches a prompt's start: only prompts that open with their prefix share it.
            opens = pl.col("head").fill_null("") == "" if "head" in in_scope.columns else pl.lit(True)
            per_prefix = (
                in_scope.with_columns(opens.alias("opens_with_prefix"))
                .group_by("task", "dataset", "method", "stage", "prefix_id")
                .agg(
                    pl.len().alias("n"),
                    pl.col("opens_with_prefix").sum().cast(pl.Int64).alias("n_cacheable"),
                    pl.col("n_tokens_prefix").first().alias("prefix_tokens"),
                    pl.col("n_tokens_total").sum().alias("total_tokens"),
                )
            )
            per_dataset = (
                per_prefix.group_by("task", "dataset", "method", "stage")
                .agg(
                    pl.col("n").sum().alias("n_requests"),
                    pl.len().alias("n_prefixes"),
                    pl.col("total_tokens").sum().alias("input_tokens"),
                    ((pl.col("n_cacheable") - 1).clip(0) * pl.col("prefix_tokens")).sum().alias("cacheable_tokens"),
                    ((pl.col("n_cacheable") > 1).cast(pl.Int64) * pl.col("prefix_tokens")).sum().alias("written"),
                )
                .sort("task", "dataset", "method", "stage")
            )
            for row in per_dataset.iter_rows(named=True):
                key = {k: row[k] for k in ("task", "dataset", "method", "stage")}
                rows.append(
                    _row(system, executor, prices, size, key, row["n_requests"], row["n_prefixes"],
                         row["input_tokens"], row["cacheable_tokens"], False, row["written"])
                )  # fmt: skip
    return pl.DataFrame(rows, schema=ESTIMATE_SCHEMA)


# Tokens of a later stage's fixed text (instructions, question, format lines), per request.
STAGE_OVERHEAD_TOKENS = {"answers": 150, "justified": 500, "verdict": 700}
# Tokens a document adds to a prompt beyond its content (ID, TITLE, tags).
DOCUMENT_OVERHEAD_TOKENS = 12
# Documents a verification call shows (the ones cited for the candidate), as estimated.
CITED_DOCUMENTS = 2


def later_stages(
    prompts: pl.DataFrame,
    corpus: pl.DataFrame,
    design: Any,
    systems: list[System],
    seed: dict[str, Prices],
    size: str,
) -> pl.DataFrame:
    """Estimated cost of every stage after the first, before any call: one request per stage-1
    query and stage (verification: design.verify_candidates per query, each with the cited
    documents; right after bm25, as in rag_top{k}_verify: k per query, each with one document),
    each holding the documents the method's settings let through (rag_top{k}: k passages, and k
    per few-shot example in the shared prefix of LOFT's reader; icr / r_and_r: the method's
    pages; chunked: as many per chunk) at the corpus's mean document size."""
    from loft_warehouse.methods.catalogue import method

    if prompts.height == 0 or "method" not in prompts.columns:
        return pl.DataFrame(schema=ESTIMATE_SCHEMA)
    mean_doc = corpus.group_by("task", "dataset").agg(pl.col("n_tokens").mean().alias("mean_tokens"))
    means = {
        (r["task"], r["dataset"]): r["mean_tokens"] + DOCUMENT_OVERHEAD_TOKENS for r in mean_doc.iter_rows(named=True)
    }
    queries = (
        prompts.filter(pl.col("stage") == 1)
        .group_by("task", "dataset", "method", "variant", "qid", "turn")
        .agg(pl.len().alias("calls"))
    )
    rows: list[dict] = []
    for system in systems:
        prices = resolve_prices(system, seed)
        for (task, dataset, name), group in queries.group_by("task", "dataset", "method", maintain_order=True):
            chosen = method(name)
            if chosen.n_stages < 2 or not system.applies(size, task, dataset, "default"):
                continue
            doc = means.get((task, dataset), DOCUMENT_OVERHEAD_TOKENS)
            for number in range(2, chosen.n_stages + 1):
                stage, after_bm25 = chosen.stage(number), chosen.stage(number - 1).executor == "bm25"
                overhead = STAGE_OVERHEAD_TOKENS.get(stage.parse, 150)
                prefix_tokens = 0
                documents: float
                calls_per_query = 1
                if stage.parse == "verdict":
                    documents = 1 if after_bm25 else CITED_DOCUMENTS
                    calls_per_query = chosen.top_k if after_bm25 and chosen.top_k else design.verify_candidates
                elif chosen.top_k is not None:
                    documents = chosen.top_k
                    if stage.parse == "answers":
                        prefix_tokens = 5 * (chosen.top_k * doc + overhead)
                elif chosen.chunked:
                    documents = chosen.pages(design) * float(group.select(pl.col("calls").mean()).item())
                else:
                    documents = chosen.pages(design)
                n_requests = group.height * calls_per_query
                per_request = int(documents * doc + overhead + prefix_tokens)
                cacheable = max(0, n_requests - 1) * prefix_tokens
                written = prefix_tokens if n_requests > 1 else 0
                key = {"task": task, "dataset": dataset, "method": name, "stage": number}
                total = n_requests * per_request
                rows.append(_row(system, system, prices, size, key, n_requests, 1, total, cacheable, True, written))
    return pl.DataFrame(rows, schema=ESTIMATE_SCHEMA)


def _money(value: object) -> str:
    return "unknown" if value is None else f"{value:,.2f}"


def format_estimate(table: pl.DataFrame) -> str:
    """The estimate as a fixed-width text table with a total line per system (printed before a
    run): streaming without and with caching, then the batch API without and with caching; the
    mode column says which a build will use. Every stage of every method has its line; `~`
    marks stages estimated from the methods' settings (their prompts depend on earlier
    answers), `step` a non-model stage."""
    money_columns = ("cost_usd_no_cache", "cost_usd_with_cache", "cost_usd_batch", "cost_usd_batch_with_cache")
    header = (
        f"{'system':<22} {'mode':<6} {'size':<5} {'dataset':<22} {'method':<30} {'stage':>5} {'requests':>8} "
        f"{'input Mtok':>10} {'stream $':>10} {'cached $':>10} {'batch $':>10} {'batch+cache $':>13}"
    )
    lines = [header, "-" * len(header)]

    def amounts(values: Sequence[object]) -> str:
        widths = (10, 10, 10, 13)
        return " ".join(f"{_money(v):>{w}}" for v, w in zip(values, widths, strict=True))

    for row in table.iter_rows(named=True):
        stage = f"{row['stage']}{'~' if row['is_estimated_from_settings'] else ''}"
        method = row["method"] + (" (step)" if row["executor"] != row["system"] else "")
        lines.append(
            f"{row['system']:<22} {row['mode'] or '':<6} {row['size']:<5} {row['task'] + '/' + row['dataset']:<22} "
            f"{method:<30} {stage:>5} {row['n_requests']:>8} {row['input_tokens'] / 1e6:>10.3f} "
            f"{amounts([row[c] for c in money_columns])}"
        )
    for system, group in table.group_by("system", maintain_order=True):
        totals = [None if group[c].null_count() else group[c].sum() for c in money_columns]
        lines.append(
            f"{'total ' + system[0]:<22} {'':<6} {'':<5} {'':<22} {'':<30} {'':>5} {group['n_requests'].sum():>8} "
            f"{float(group['input_tokens'].sum()) / 1e6:>10.3f} {amounts(totals)}"
        )
    return "\n".join(lines)


@dataclass(frozen=True)
class FullRun:
    """A system's estimate for every prompt of the size, all stages, nothing stored and no
    limit (full_usd), and for its later stages alone (later_usd); None where a price is unknown."""

    full_usd: float | None
    later_usd: float | None


def full_runs(estimate: pl.DataFrame) -> dict[str, FullRun]:
    """FullRun per system of a cost_estimates frame, at the price of the mode the system runs in
    (batch, else streaming without caching: what max_cost_usd is checked against)."""
    price = pl.when(pl.col("mode") == "batch").then(pl.col("cost_usd_batch")).otherwise(pl.col("cost_usd_no_cache"))
    runs = {}
    for (system,), group in estimate.with_columns(price.alias("usd")).group_by("system", maintain_order=True):
        later = group.filter(pl.col("is_estimated_from_settings"))["usd"]
        runs[str(system)] = FullRun(
            None if group["usd"].null_count() else float(group["usd"].sum()),
            None if later.null_count() else float(later.sum()),
        )
    return runs


@dataclass
class SystemPlan:
    """What a build will do for one selected system before any call: prompts in scope (fitting
    its window), already stored, waiting in batches, still to send; the estimated cost of what
    it sends (later stages included, in proportion), its full-run estimate, and why it sends
    nothing (no key)."""

    system: str
    prompts: int = 0
    stored: int = 0
    in_batches: int = 0
    to_send: int = 0
    usd: float | None = 0.0
    full_usd: float | None = None
    skipped: str = ""

    def add_cost(self, usd: float | None) -> None:
        self.usd = None if usd is None or self.usd is None else self.usd + usd


def format_plan(plans: Sequence[SystemPlan], size: str, has_full_run: bool) -> str:
    """The per-system plan printed before any call: this build's requests and estimated cost
    beside the full-run estimate, and a total line."""

    full = f" {'full run $':>12}" if has_full_run else ""
    header = f"{'system':<24} {'prompts':>8} {'stored':>8} {'batches':>8} {'to send':>8} {'this build $':>13}{full}"
    what = "this build, every stage" if has_full_run else "this stage"
    explained = " (full run: every prompt, nothing stored, no limit)" if has_full_run else ""
    lines = [f"cost of {what} at {size}, before any call{explained}:"]
    lines += [header, "-" * len(header)]
    for plan in plans:
        full_cell = f" {_money(plan.full_usd):>12}" if has_full_run else ""
        if plan.skipped:
            lines.append(f"{plan.system:<24} {plan.prompts:>8} {plan.skipped:>42}{full_cell}")
            continue
        lines.append(
            f"{plan.system:<24} {plan.prompts:>8} {plan.stored:>8} {plan.in_batches:>8} {plan.to_send:>8} "
            f"{_money(plan.usd):>13}{full_cell}"
        )
    total = total_usd(plans)
    full_total = None if any(p.full_usd is None for p in plans) else sum(p.full_usd or 0.0 for p in plans)
    full_cell = f" {_money(full_total):>12}" if has_full_run else ""
    lines.append(
        f"{'total':<24} {'':>8} {'':>8} {'':>8} {sum(p.to_send for p in plans):>8} {_money(total):>13}{full_cell}"
    )
    return "\n".join(lines)


def total_usd(plans: Sequence[SystemPlan]) -> float | None:
    """This build's estimated cost over the plans (None when any is unknown)."""
    return None if any(p.usd is None for p in plans) else sum(p.usd or 0.0 for p in plans)


def limit_line(plans: Sequence[SystemPlan], max_cost_usd: float) -> str:
    """What max_cost_usd was checked against, said once, including when it did not apply."""
    total = total_usd(plans)
    if total == 0:
        skipped = [p.system for p in plans if p.skipped]
        why = f" ({', '.join(skipped)}: no key)" if skipped else ""
        return f"max_cost_usd=${max_cost_usd:,.2f} did not apply: this build sends no paid request{why}"
    return f"max_cost_usd=${max_cost_usd:,.2f}: this build's estimate is ${total or 0.0:,.2f}"


def check_limit(estimated_usd: float | None, max_cost_usd: float | None, what: str) -> None:
    """Refuse to start when the estimate is above the limit (or unknown while a limit is set)."""
    if max_cost_usd is None:
        return
    if estimated_usd is None:
        raise CostLimitError(f"{what}: cost is unknown (missing prices) and max_cost_usd={max_cost_usd} is set")
    if estimated_usd > max_cost_usd:
        raise CostLimitError(
            f"{what}: estimated ${estimated_usd:,.2f} exceeds max_cost_usd=${max_cost_usd:,.2f}; "
            "raise the limit or select fewer systems/datasets"
        )


def parse_limit(value: Any) -> float | None:
    """max_cost_usd from a dbt var / env value ('' or None = no limit)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    try:
        limit = float(value)
    except (TypeError, ValueError) as exc:
        raise ConfigurationError(f"max_cost_usd must be a number, got {value!r}") from exc
    if limit < 0:
        raise ConfigurationError("max_cost_usd must not be negative")
    return limit
