with

draw as (select * from {{ ref('loft_128k__int_corpus_draw') }}),
datasets as (select * from {{ ref('loft_128k__stg_datasets') }}),

numbered as (
    select
        draw.*,
        row_number() over (
            partition by draw.task, draw.dataset, draw.corpus_id
            order by
                case when draw.is_released or draw.task = 'sql' or datasets.per_query_corpus then draw.pool_rank end,
                md5(concat_ws(':', datasets.seed, '{{ config.get("loft_size") }}', draw.dataset, draw.pid))
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
