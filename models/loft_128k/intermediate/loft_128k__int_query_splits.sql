{#
  Query splits, the same at every size (paper §2, App. A; loft-reference §2): eligible queries in
  seeded rank order -> first n_few_shot few-shot, next n_dev dev, next n_test test (test computed
  at every size so that the filler draw is the same everywhere).
#}

with

datasets as (select * from {{ ref('loft_128k__stg_datasets') }}),
query_turns as (select * from {{ ref('loft_128k__stg_queries') }}),
sql_databases as (select * from {{ ref('loft_128k__int_sql_databases') }}),
sql_gold as (select * from {{ ref('loft_128k__stg_sql_gold') }}),

sql_conversations as (
    select dataset, qid, bool_and(eligible) as eligible, string_agg(distinct exclusion_reason, '; ' order by exclusion_reason) as exclusion_reason
    from sql_gold
    group by all
),

conversations as (
    select
        task,
        dataset,
        corpus_id,
        qid,
        min(query_rank) as query_rank,
        any_value(release_split) as release_split,
        bool_and(len(gold_pids) > 0) as every_turn_has_gold
    from query_turns
    group by all
),

eligibility as (
    select
        conversations.*,
        datasets.is_released,
        datasets.n_few_shot,
        datasets.n_dev,
        datasets.n_test,
        datasets.n_test_largest,
        case
            when datasets.is_released then null
            when conversations.task in ('retrieval', 'rag') and not every_turn_has_gold
                then 'no gold document'
            when conversations.task = 'sql' and not coalesce(sql_conversations.eligible, false)
                then coalesce(sql_conversations.exclusion_reason, 'gold not executed')
            when conversations.task = 'sql' and not coalesce(sql_databases.is_selected, false)
                then 'database not selected at this size'
        end as exclusion_reason
    from conversations
    inner join datasets using (task, dataset)
    left join sql_conversations
        on conversations.task = 'sql'
        and sql_conversations.dataset = conversations.dataset
        and sql_conversations.qid = conversations.qid
    left join sql_databases
        on sql_databases.task = conversations.task
        and sql_databases.dataset = conversations.dataset
        and sql_databases.corpus_id = conversations.corpus_id
),

positioned as (
    select
        *,
        row_number() over (
            partition by task, dataset, exclusion_reason is null order by query_rank, qid
        ) - 1 as position
    from eligibility
),

final as (
    select
        task,
        dataset,
        corpus_id,
        qid,
        query_rank,
        position,
        exclusion_reason,
        case
            when is_released then release_split
            when exclusion_reason is not null then null
            when position < n_few_shot then 'few_shot'
            when position < n_few_shot + n_dev then 'dev'
            when position < n_few_shot + n_dev + n_test_largest then 'test'
        end as split,
        case
            when is_released then true
            when exclusion_reason is not null then false
            else position < n_few_shot + n_dev + n_test
        end as is_in_size
    from positioned
)

select * from final
