{#
  A size's corpus draw (paper §2, App. A; loft-reference §2): the gold documents of every split
  query, then fillers: the pool minus every document relevant to any split query, in seeded draw
  order (ICL: first the shortest example of each class, so every class fits the smallest
  context), taken while the running token total fits the budget left after the gold documents.
  Same draw + prefix rule at every size => 32k ⊂ 128k ⊂ 1m.
#}
with

datasets as (select * from {{ ref('loft_128k__stg_datasets') }}),
documents as (select * from {{ ref('loft_128k__stg_documents') }}),
query_turns as (select * from {{ ref('loft_128k__stg_queries') }}),
query_splits as (select * from {{ ref('loft_128k__int_query_splits') }}),
sql_databases as (select * from {{ ref('loft_128k__int_sql_databases') }}),

split_turns as (
    select query_turns.*, query_splits.split, query_splits.is_in_size
    from query_turns
    inner join query_splits using (task, dataset, corpus_id, qid)
    where query_splits.split is not null
),

gold_documents as (
    select distinct task, dataset, corpus_id, unnest(gold_pids) as pid
    from split_turns
    where is_in_size and task in ('retrieval', 'rag')
),

reserved_documents as (
    select distinct task, dataset, corpus_id, unnest(relevant_pids) as pid
    from split_turns
),

gold_budget as (
    select
        documents.task,
        documents.dataset,
        documents.corpus_id,
        sum(documents.n_tokens) as gold_tokens,
        count(*) as n_gold,
        any_value(documents.source_file) as source_file
    from documents
    inner join gold_documents using (task, dataset, corpus_id, pid)
    where not documents.is_released
    group by all
),

contexts as (
    select task, dataset, budget, unnest(contexts) as context_length, unnest(context_budgets) as context_budget
    from datasets
    where not is_released and task <> 'sql' and not per_query_corpus
),

budget_left as (
    select
        contexts.*,
        coalesce(gold_budget.gold_tokens, 0) as gold_tokens,
        case
            when coalesce(gold_budget.gold_tokens, 0) > contexts.context_budget then error(format(
                '{}/{} at {}: the {} gold documents of the selected queries alone need {} tokens, over the {}-token budget (documents from {})',
                contexts.task, contexts.dataset, contexts.context_length, gold_budget.n_gold,
                gold_budget.gold_tokens, contexts.context_budget, gold_budget.source_file
            ))
            else contexts.context_budget - coalesce(gold_budget.gold_tokens, 0)
        end as filler_budget
    from contexts
    left join gold_budget using (task, dataset)
),

filler_pool as (
    select documents.* exclude (draw_rank)
    from documents
    inner join datasets using (task, dataset)
    anti join reserved_documents using (task, dataset, corpus_id, pid)
    where not documents.is_released and documents.task <> 'sql' and not datasets.per_query_corpus
),

class_ranked as (
    select
        *,
        -- each class's shortest example leads the draw, so the smallest contexts hold every class
        row_number() over (partition by task, dataset, corpus_id, label order by n_tokens, pool_rank) as rank_in_class
    from filler_pool
),

drawn as (
    select
        *,
        row_number() over (
            partition by task, dataset, corpus_id
            order by case when task = 'icl' and rank_in_class = 1 then 0 else 1 end, pool_rank
        ) - 1 as draw_rank
    from class_ranked
),

running as (
    select
        *,
        sum(n_tokens) over (
            partition by task, dataset, corpus_id order by draw_rank rows unbounded preceding
        ) as running_tokens,
        count(*) over (partition by task, dataset, corpus_id) as filler_pool_size
    from drawn
),

fillers as (
    select
        running.*,
        arg_min(budget_left.context_length, budget_left.context_budget) as min_context
    from running
    inner join budget_left
        on running.task = budget_left.task
        and running.dataset = budget_left.dataset
        and running.running_tokens <= budget_left.filler_budget
    group by all
),

gold_rows as (
    -- joined with the size's budget row so that a gold set over budget always raises
    select documents.* exclude (draw_rank), null::bigint as draw_rank, null::bigint as filler_pool_size, true as is_gold
    from documents
    semi join gold_documents using (task, dataset, corpus_id, pid)
    inner join budget_left
        on budget_left.task = documents.task
        and budget_left.dataset = documents.dataset
        and budget_left.context_budget = budget_left.budget
    where not documents.is_released and budget_left.filler_budget >= 0
),

sql_rows as (
    select documents.* exclude (draw_rank), null::bigint as draw_rank, null::bigint as filler_pool_size, true as is_gold
    from documents
    semi join (select task, dataset, corpus_id from sql_databases where is_selected) using (task, dataset, corpus_id)
    where not documents.is_released
),

released_gold as (
    select distinct task, dataset, corpus_id, unnest(gold_pids) as pid
    from split_turns
    where is_in_size
),

released_rows as (
    select
        documents.* exclude (draw_rank),
        null::bigint as draw_rank,
        null::bigint as filler_pool_size,
        released_gold.pid is not null as is_gold
    from documents
    left join released_gold using (task, dataset, corpus_id, pid)
    where documents.is_released
),

{#- Positional studies: every split question reads its own corpus, built whole in staging
    (gold passages, then distractors with their draw_rank). #}
per_query_rows as (
    select
        documents.*,
        null::bigint as filler_pool_size,
        released_gold.pid is not null as is_gold
    from documents
    inner join datasets using (task, dataset)
    semi join (select distinct task, dataset, corpus_id from split_turns where is_in_size) using (task, dataset, corpus_id)
    left join released_gold using (task, dataset, corpus_id, pid)
    where datasets.per_query_corpus
),

final as (
    select
        task, dataset, corpus_id, pid, title, text, answer, label, n_tokens, pool_rank,
        draw_rank, filler_pool_size, false as is_gold, min_context, is_released, source_file, source_row
    from fillers
    union all by name
    select *, '{{ config.get("loft_size") }}' as min_context from gold_rows
    union all by name
    select *, '{{ config.get("loft_size") }}' as min_context from sql_rows
    union all by name
    select *, '{{ config.get("loft_size") }}' as min_context from released_rows
    union all by name
    select *, '{{ config.get("loft_size") }}' as min_context from per_query_rows
)

select * from final
