-- The fingerprint of each run group (source, system, method, task, dataset, variant) of the
-- predictions and scores views: which stored rows of int_predictions and int_turn_scores it holds
-- (each row's run_fingerprint decides its content; counts catch a duplicate or a stale row) and
-- the views' definitions. Read in place of digesting the views' rows; NULL where predictions or
-- scores is not a view (the rows are then digested).
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

final as (
    select
        source,
        system,
        method,
        task,
        dataset,
        variant,
        case when (select n_views from views) = 2 then md5(
            string_agg(concat_ws(' ', relation, split, run_fingerprint, n_rows), ';'
                       order by relation, split, run_fingerprint, n_rows)
            || (select definitions from views)
        ) end as fingerprint
    from stored
    group by all
)

select * from final
