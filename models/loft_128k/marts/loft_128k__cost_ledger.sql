{#
  cost_ledger: per system, dataset and method, what the estimate said before any call (streamed
  and through the batch API, without and with caching) and what the responses cost: tokens
  (cached, written to a cache, neither; output tokens with the thinking among them), cost per correct answer (primary metric, loft rule,
  summed over the runs' dev and test turns), what prefix caching saved at the system's prices
  (cache reads below the input price, less cache writes above it; at the batch ratio for batch
  results), how many rows a batch answered or still holds, and median / p95 latency. A dry run's
  responses (source dry_run: the loft fixture server's answers) count as nothing spent.
#}
with

estimated as (
    select
        system,
        task,
        dataset,
        method,
        sum(n_requests) as n_requests_estimated,
        sum(cost_usd_no_cache) as estimated_usd_no_cache,
        sum(cost_usd_with_cache) as estimated_usd_with_cache,
        sum(cost_usd_batch) as estimated_usd_batch,
        sum(cost_usd_batch_with_cache) as estimated_usd_batch_with_cache
    from {{ ref('loft_128k__cost_estimates') }}
    group by all
),

prices as (
    select
        system,
        max(input_usd_per_mtok) as input_usd_per_mtok,
        max(cached_input_usd_per_mtok) as cached_input_usd_per_mtok,
        max(cache_write_usd_per_mtok) as cache_write_usd_per_mtok,
        max(batch_price_ratio) as batch_price_ratio
    from {{ ref('loft_128k__cost_estimates') }}
    where executor = system
    group by all
),

spent as (
    select
        responses.system,
        responses.task,
        responses.dataset,
        responses.method,
        count(*) as n_responses,
        count(*) filter (where responses.status = 'ok') as n_ok,
        count(*) filter (where responses.batch_id is not null and responses.status <> 'batch_pending') as n_batch,
        count(*) filter (where responses.status = 'batch_pending') as n_pending,
        coalesce(sum(responses.input_tokens), 0) as input_tokens,
        coalesce(sum(responses.cached_tokens), 0) as cached_tokens,
        coalesce(sum(responses.cache_write_tokens), 0) as cache_write_tokens,
        coalesce(sum(responses.input_tokens), 0) - coalesce(sum(responses.cached_tokens), 0)
            - coalesce(sum(responses.cache_write_tokens), 0) as uncached_input_tokens,
        coalesce(sum(responses.output_tokens), 0) as output_tokens,
        sum(responses.thinking_tokens) as thinking_tokens,
        sum(case when responses.source = 'dry_run' then 0 else responses.cost_usd end) as actual_usd,
        sum(
            (coalesce(responses.cached_tokens, 0) * (prices.input_usd_per_mtok - prices.cached_input_usd_per_mtok)
             - coalesce(responses.cache_write_tokens, 0) * (prices.cache_write_usd_per_mtok - prices.input_usd_per_mtok))
            / 1e6 * case when responses.batch_id is not null then prices.batch_price_ratio else 1 end
        ) as caching_saved_usd,
        median(responses.latency_s) filter (where responses.status = 'ok' and responses.batch_id is null)
            as latency_p50_s,
        quantile_cont(responses.latency_s, 0.95) filter (where responses.status = 'ok' and responses.batch_id is null)
            as latency_p95_s
    from {{ ref('loft_128k__responses') }} as responses
    left join prices using (system)
    group by all
),

correct as (
    select system, task, dataset, method, sum(value) as n_correct
    from ({{ scoring_primary_loft_turns(ref('loft_128k__int_turn_scores')) }})
    where source = 'inference'
    group by all
),

final as (
    select
        system,
        task,
        dataset,
        method,
        estimated.n_requests_estimated,
        estimated.estimated_usd_no_cache,
        estimated.estimated_usd_with_cache,
        estimated.estimated_usd_batch,
        estimated.estimated_usd_batch_with_cache,
        spent.n_responses,
        spent.n_ok,
        spent.n_batch,
        spent.n_pending,
        spent.input_tokens,
        spent.cached_tokens,
        spent.cache_write_tokens,
        spent.uncached_input_tokens,
        spent.output_tokens,
        spent.thinking_tokens,
        spent.actual_usd,
        correct.n_correct,
        spent.actual_usd / nullif(correct.n_correct, 0) as usd_per_correct,
        spent.caching_saved_usd,
        spent.latency_p50_s,
        spent.latency_p95_s
    from estimated
    full outer join spent using (system, task, dataset, method)
    left join correct using (system, task, dataset, method)
)

select * from final order by system, task, dataset, method
