with

datasets as (select * from {{ ref('loft_128k__stg_datasets') }}),
documents as (select * from {{ ref('loft_128k__stg_documents') }}),
query_turns as (select * from {{ ref('loft_128k__stg_queries') }}),
sql_gold as (select * from {{ ref('loft_128k__stg_sql_gold') }}),

database_sizes as (
    select task, dataset, corpus_id, count(*) as n_tables, sum(n_tokens) as n_tokens
    from documents
    where task = 'sql' and not is_released
    group by all
),

eligible_conversations as (
    select dataset, qid
    from sql_gold
    group by all
    having bool_and(eligible)
),

database_queries as (
    select query_turns.task, query_turns.dataset, query_turns.corpus_id, count(distinct query_turns.qid) as n_eligible_queries
    from query_turns
    inner join eligible_conversations using (dataset, qid)
    where query_turns.task = 'sql'
    group by all
),

sized as (
    select
        database_sizes.*,
        coalesce(database_queries.n_eligible_queries, 0) as n_eligible_queries,
        datasets.budget,
        datasets.n_few_shot + datasets.n_dev + datasets.n_test as n_queries_wanted,
        database_sizes.n_tokens <= datasets.budget as fits_budget
    from database_sizes
    inner join datasets using (task, dataset)
    left join database_queries using (task, dataset, corpus_id)
),

ranked as (
    select
        *,
        coalesce(sum(n_eligible_queries) filter (where fits_budget) over (
            partition by task, dataset
            order by fits_budget desc, n_tokens desc, corpus_id
            rows between unbounded preceding and 1 preceding
        ), 0) as eligible_queries_before
    from sized
),

final as (
    select
        task,
        dataset,
        corpus_id,
        n_tables,
        n_tokens,
        budget,
        n_eligible_queries,
        fits_budget,
        fits_budget and n_eligible_queries > 0 and eligible_queries_before < n_queries_wanted as is_selected
    from ranked
)

select * from final
