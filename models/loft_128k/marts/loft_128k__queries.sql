with

query_turns as (select * from {{ ref('loft_128k__stg_queries') }}),
query_splits as (select * from {{ ref('loft_128k__int_query_splits') }}),
sql_gold as (select * from {{ ref('loft_128k__stg_sql_gold') }}),

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
