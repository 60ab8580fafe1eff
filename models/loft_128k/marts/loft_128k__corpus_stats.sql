{#- A release corpus is LOFT's own, sized in Gemini's tokens: SentencePiece counts differ by some
    percent, so it is within budget up to this multiple of the budget (1.4 x 0.9 N = 1.26 N);
    a drawn corpus is within budget only up to the budget itself. -#}
{%- set release_budget_tolerance = 1.4 -%}
with

corpus as (select * from {{ ref('loft_128k__corpus') }}),
queries as (select * from {{ ref('loft_128k__queries') }}),
draw as (select * from {{ ref('loft_128k__int_corpus_draw') }}),
datasets as (select * from {{ ref('loft_128k__stg_datasets') }}),

contexts as (
    select task, dataset, unnest(contexts) as context_length, unnest(context_budgets) as context_budget
    from datasets
),

pool_sizes as (
    select task, dataset, corpus_id, max(filler_pool_size) as filler_pool_size
    from draw
    group by all
),

members as (
    select
        corpus.*,
        contexts.context_length,
        contexts.context_budget
    from corpus
    inner join contexts using (task, dataset)
    left join contexts as drawn_at
        on drawn_at.task = corpus.task
        and drawn_at.dataset = corpus.dataset
        and drawn_at.context_length = corpus.min_context
    where corpus.draw_rank is null or drawn_at.context_budget <= contexts.context_budget
),

query_counts as (
    select
        task,
        dataset,
        corpus_id,
        count(distinct qid) filter (where split = 'few_shot') as n_few_shot,
        count(distinct qid) filter (where split = 'dev') as n_dev,
        count(distinct qid) filter (where split = 'test') as n_test
    from queries
    group by all
),

aggregated as (
    select
        members.task,
        members.dataset,
        members.corpus_id,
        members.context_length,
        any_value(members.context_budget) as budget,
        count(*) as n_candidates,
        count(*) filter (where members.is_gold) as n_gold,
        count(*) filter (where members.draw_rank is not null) as n_fillers,
        sum(members.n_tokens) as n_tokens,
        bool_or(members.is_released) as is_released
    from members
    group by all
),

final as (
    select
        aggregated.task::varchar as task,
        aggregated.dataset::varchar as dataset,
        aggregated.corpus_id::varchar as corpus_id,
        aggregated.context_length::varchar as context_length,
        aggregated.n_candidates::bigint as n_candidates,
        aggregated.n_gold::bigint as n_gold,
        aggregated.n_fillers::bigint as n_fillers,
        aggregated.n_tokens::bigint as n_tokens,
        aggregated.budget::bigint as budget,
        (
            (
                aggregated.is_released
                or aggregated.task = 'sql'
                or datasets.per_query_corpus
                or aggregated.n_fillers < coalesce(pool_sizes.filler_pool_size, 0)
            )
            and aggregated.n_tokens <= aggregated.budget * (
                case when aggregated.is_released then {{ release_budget_tolerance }} else 1 end
            )
        )::boolean as is_complete,
        (
            aggregated.n_tokens <= aggregated.budget * (
                case when aggregated.is_released then {{ release_budget_tolerance }} else 1 end
            )
        )::boolean as within_budget,
        coalesce(pool_sizes.filler_pool_size, 0)::bigint as filler_pool_size,
        datasets.source::varchar as source,
        datasets.tokenizer::varchar as tokenizer,
        datasets.seed::bigint as seed,
        coalesce(query_counts.n_few_shot, 0)::bigint as n_few_shot,
        coalesce(query_counts.n_dev, 0)::bigint as n_dev,
        coalesce(query_counts.n_test, 0)::bigint as n_test
    from aggregated
    inner join datasets using (task, dataset)
    left join pool_sizes using (task, dataset, corpus_id)
    left join query_counts using (task, dataset, corpus_id)
)

select * from final
