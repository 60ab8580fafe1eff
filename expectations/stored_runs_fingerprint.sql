-- The fingerprint of each run group (source, system, method, task, dataset, variant) of the
-- results suites: which stored rows of int_predictions and int_turn_scores it holds (each row's
-- run_fingerprint decides its content; counts catch a duplicate or a stale row), the views'
-- definitions, and digests of the other rows the suites read for it (its metrics and responses
-- rows, its datasets' prompts and queries: the columns read). Read in place of digesting the
-- suites' rows; NULL where predictions or scores is not a view (the rows are then digested).
with

stored as (
    select 'predictions' as relation, source, system, method, task, dataset, variant, split, run_fingerprint,
           count(*) as n_rows
    from {schema}_internal.int_predictions
    group by all
    union all
    select 'scores' as relation, source, system, method, task, dataset, variant, split, run_fingerprint,
           count(*) as n_rows
    from {schema}_internal.int_turn_scores
    group by all
),

views as (
    select count(*) as n_views, string_agg(sql, ';' order by view_name) as definitions
    from duckdb_views()
    where schema_name = '{schema}' and view_name in ('predictions', 'scores')
),

group_metrics as (
    select source, system, method, task, dataset, variant, loft_rows_digest(m) as digest
    from {schema}.metrics as m
    group by all
),

group_responses as (
    select source, system, method, task, dataset, variant, loft_rows_digest(r) as digest
    from (select source, system, method, task, dataset, variant, split, stage, prompt_id, status
          from {schema}.responses) as r
    group by all
),

dataset_prompts as (
    select task, dataset, variant, method, loft_rows_digest(p) as digest
    from (select task, dataset, variant, method, split, qid, turn, prompt_id from {schema}.prompts) as p
    group by all
),

dataset_queries as (
    select task, dataset, loft_rows_digest(q) as digest
    from (
        select task, dataset, split, qid, query_rank from {schema}.queries
        union all
        select 'mm' as task, dataset, split, qid, source_row as query_rank from {schema}_internal.stg_mm_queries
    ) as q
    group by all
),

stored_groups as (
    select
        source,
        system,
        method,
        task,
        dataset,
        variant,
        string_agg(concat_ws(' ', relation, split, run_fingerprint, n_rows), ';'
                   order by relation, split, run_fingerprint, n_rows) as runs
    from stored
    group by all
),

final as (
    select
        source,
        system,
        method,
        task,
        dataset,
        variant,
        case when (select n_views from views) = 2 then md5(
            to_json([runs, group_metrics.digest, group_responses.digest, dataset_prompts.digest,
                     dataset_queries.digest])::varchar
            || (select definitions from views)
        ) end as fingerprint
    from stored_groups
    left join group_metrics using (source, system, method, task, dataset, variant)
    left join group_responses using (source, system, method, task, dataset, variant)
    left join dataset_prompts using (task, dataset, variant, method)
    left join dataset_queries using (task, dataset)
)

select * from final
