{#
  leaderboard_wide: the leaderboard shaped like the paper's Table 2, one row per dataset and
  paper metric of the test split, one column per system ("paper: <model>" for the paper's,
  "<system>" for this warehouse's runs, "import: <system>" for imported files; a method other
  than cic is named in brackets, a quick try says so: "bm25 [quick try: 3 queries]").
#}
with

leaderboard as (
    select * from {{ ref('loft_128k__leaderboard') }}
),

cells as (
    select
        task,
        dataset,
        paper_dataset,
        metric,
        case source when 'paper' then 'paper: ' when 'import' then 'import: ' else '' end
            || system
            || case when method is not null and method <> 'cic' then ' (' || method || ')' else '' end
            || case when query_limit is not null then ' [quick try: ' || query_limit || ' queries]' else '' end
            as column_name,
        value
    from leaderboard
    where is_paper_metric and split = 'test'
),

final as (
    pivot cells on column_name using first(value) group by task, dataset, paper_dataset, metric
)

select * from final order by task, dataset
