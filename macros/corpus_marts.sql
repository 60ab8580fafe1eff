{% macro loft_corpus() %}
with

draw as (select * from {{ loft_ref('int_corpus_draw') }}),
datasets as (select * from {{ loft_ref('stg_datasets') }}),

numbered as (
    select
        draw.*,
        row_number() over (
            partition by draw.task, draw.dataset, draw.corpus_id
            order by
                case when draw.is_released or draw.task = 'sql' or datasets.per_query_corpus then draw.pool_rank end,
                md5(concat_ws(':', datasets.seed, '{{ loft_size() }}', draw.dataset, draw.pid))
        ) - 1 as doc_id
    from draw
    inner join datasets using (task, dataset)
),

final as (
    select
        task::varchar as task,
        dataset::varchar as dataset,
        corpus_id::varchar as corpus_id,
        doc_id::bigint as doc_id,
        pid::varchar as pid,
        title::varchar as title,
        text::varchar as text,
        answer::varchar as answer,
        label::varchar as label,
        n_tokens::bigint as n_tokens,
        is_gold::boolean as is_gold,
        draw_rank::bigint as draw_rank,
        min_context::varchar as min_context,
        is_released::boolean as is_released,
        source_file::varchar as source_file,
        source_row::bigint as source_row
    from numbered
)

select * from final
{% endmacro %}


{% macro loft_queries() %}
with

query_turns as (select * from {{ loft_ref('stg_queries') }}),
query_splits as (select * from {{ loft_ref('int_query_splits') }}),
sql_gold as (select * from {{ loft_ref('stg_sql_gold') }}),

in_size as (
    select query_turns.*, query_splits.split
    from query_turns
    inner join query_splits using (task, dataset, corpus_id, qid)
    where query_splits.is_in_size
),

final as (
    select
        in_size.task::varchar as task,
        in_size.dataset::varchar as dataset,
        in_size.corpus_id::varchar as corpus_id,
        in_size.split::varchar as split,
        in_size.qid::varchar as qid,
        in_size.upstream_qid::varchar as upstream_qid,
        in_size.turn::bigint as turn,
        in_size.n_turns::bigint as n_turns,
        in_size.query_text::varchar as query_text,
        coalesce(sql_gold.rows, in_size.gold)::varchar as gold,
        in_size.gold_pids::varchar[] as gold_pids,
        in_size.db_id::varchar as db_id,
        in_size.gold_sql::varchar as gold_sql,
        sql_gold.has_order_by::boolean as gold_is_ordered,
        in_size.query_rank::bigint as query_rank
    from in_size
    left join sql_gold
        on in_size.task = 'sql'
        and sql_gold.dataset = in_size.dataset
        and sql_gold.qid = in_size.qid
        and sql_gold.turn = in_size.turn
)

select * from final
{% endmacro %}


{#- A release corpus is LOFT's own, sized in Gemini's tokens: SentencePiece counts differ by some
    percent, so it is within budget up to this multiple of the budget (1.4 x 0.9 N = 1.26 N);
    a drawn corpus is within budget only up to the budget itself. -#}
{% macro loft_release_budget_tolerance() %}1.4{% endmacro %}

{% macro loft_corpus_stats() %}
with

corpus as (select * from {{ loft_ref('corpus') }}),
queries as (select * from {{ loft_ref('queries') }}),
draw as (select * from {{ loft_ref('int_corpus_draw') }}),
datasets as (select * from {{ loft_ref('stg_datasets') }}),

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
                case when aggregated.is_released then {{ loft_release_budget_tolerance() }} else 1 end
            )
        )::boolean as is_complete,
        (
            aggregated.n_tokens <= aggregated.budget * (
                case when aggregated.is_released then {{ loft_release_budget_tolerance() }} else 1 end
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
{% endmacro %}
