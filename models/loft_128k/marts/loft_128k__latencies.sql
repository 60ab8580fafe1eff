{#
  latencies: per system of this size, how long its streamed requests took (every attempt's
  last try, ok responses only: errors and batch results have no comparable time): n, median
  and p95 of latency_s and of ttft_s (time to first token), median prompt tokens, and the
  paper's reported median for the system's model at this size where the seed gives one.
#}
with

responses as (select * from {{ ref('loft_128k__responses') }}),
models as (select distinct system, model from {{ ref('loft_128k__cost_estimates') }}),
paper as (select * from {{ source('reference', 'paper_latencies') }}),

timed as (
    select
        system,
        count(*) as n_timed,
        count(ttft_s) as n_streamed,
        median(latency_s) as latency_p50_s,
        quantile_cont(latency_s, 0.95) as latency_p95_s,
        median(ttft_s) as ttft_p50_s,
        quantile_cont(ttft_s, 0.95) as ttft_p95_s,
        median(input_tokens) as input_tokens_p50
    from responses
    where status = 'ok' and latency_s is not null and batch_id is null
    group by system
),

final as (
    select
        '{{ config.get("loft_size") }}' as size,
        timed.system,
        models.model,
        timed.n_timed,
        timed.n_streamed,
        timed.latency_p50_s,
        timed.latency_p95_s,
        timed.ttft_p50_s,
        timed.ttft_p95_s,
        timed.input_tokens_p50::double as input_tokens_p50,
        paper.median_latency_s::double as paper_latency_p50_s,
        paper.source as paper_source
    from timed
    left join models using (system)
    left join paper
        on starts_with(models.model, paper.model_family)
        and paper.size = '{{ config.get("loft_size") }}'
)

select * from final order by system
