{#
  The leaderboard: paper Table 2 (LOFT 128k test; Gemini 1.5 Pro, GPT-4o, Claude 3 Opus and
  the specialized models) beside this warehouse's default-variant results, per dataset and
  metric. Warehouse rows are the loft-rule, per-turn means of each dataset's primary metric and
  of the metric the paper reports for it (they differ for MS MARCO here: recall@1 in the paper,
  MRecall@5 as built from BEIR qrels). Paper rows, full warehouse runs and quick tries (a run
  sent with var limit N: query_limit N, scored on its first N queries only) are ranked apart
  (rank_group): they come from other corpora, splits or query sets, which corpus_origin names. Runs with
  no answered row (metrics.run_status 'not_run') are left out, and so is the planted-effects test
  system (source 'planted'). source is 'paper', or where warehouse rows came from: 'inference'
  (runs of the systems) or 'import' (prediction files).
#}
with

paper as (
    select
        task::varchar as task,
        dataset::varchar as dataset,
        paper_dataset::varchar as paper_dataset,
        model::varchar as system,
        metric::varchar as metric,
        value::double as value
    from {{ ref('loft_128k__paper_table2') }}
),

paper_metric as (
    select distinct task, dataset, paper_dataset, metric from paper
),

origins as (
    select task, dataset, source as corpus_source from {{ ref('loft_128k__stg_datasets') }}
    union all
    select distinct 'mm', dataset, 'loft_release' from {{ ref('loft_128k__stg_mm_queries') }}
),

warehouse as (
    select
        m.source,
        case
            when m.source = 'dry_run' then 'dry_run'
            when m.query_limit is null then 'warehouse'
            else 'quick_try'
        end as rank_group,
        'this warehouse: ' || m.size || ' ' || m.split || ' split'
            || case when m.source = 'dry_run' then ', a dry run answered by the loft fixture server' else '' end
            || case when m.query_limit is not null
                    then ', quick try of its first ' || m.query_limit || ' queries' else '' end
            || ', corpus built from '
            || case
                when o.corpus_source = 'loft_release' then 'the LOFT release files'
                when o.corpus_source is not null then o.corpus_source
                when m.source = 'import' then 'the imported queries file'
                else 'an unregistered source'
            end
            as corpus_origin,
        m.task,
        m.dataset,
        pm.paper_dataset,
        m.metric,
        m.size,
        m.split,
        m.system,
        m.method,
        m.mean as value,
        m.n,
        m.n_unanswered,
        m.ci_low,
        m.ci_high,
        m.is_primary,
        pm.metric is not null as is_paper_metric,
        m.query_limit,
        m.thinking,
        m.max_output_tokens,
        m.no_answer_share,
        m.is_health_flagged
    from {{ ref('loft_128k__metrics') }} as m
    left join paper_metric as pm using (task, dataset, metric)
    left join origins as o using (task, dataset)
    where m.rule = 'loft'
        and m.grain = 'turn'
        and m.variant = 'default'
        and m.run_status = 'scored'
        and m.source <> 'planted'
        and (m.is_primary or pm.metric is not null)
),

from_paper as (
    select
        'paper' as source,
        'paper' as rank_group,
        'LOFT paper Table 2: 128k release corpus, test split' as corpus_origin,
        paper.task,
        paper.dataset,
        paper.paper_dataset,
        paper.metric,
        '128k' as size,
        'test' as split,
        paper.system,
        null::varchar as method,
        paper.value,
        null::bigint as n,
        null::bigint as n_unanswered,
        null::double as ci_low,
        null::double as ci_high,
        coalesce(paper.metric = {{ scoring_primary_metric('datasets.task', 'datasets.dataset', 'datasets.max_gold') }}, false)
            as is_primary,
        true as is_paper_metric,
        null::bigint as query_limit,
        null::varchar as thinking,
        null::bigint as max_output_tokens,
        null::double as no_answer_share,
        null::boolean as is_health_flagged
    from paper
    left join {{ ref('loft_128k__stg_datasets') }} as datasets using (task, dataset)
),

combined as (
    select * from warehouse
    union all by name
    select * from from_paper
)

select
    task,
    dataset,
    paper_dataset,
    metric,
    size,
    split,
    source,
    rank_group,
    corpus_origin,
    system,
    method,
    value,
    rank() over (partition by rank_group, task, dataset, metric, size, split order by value desc) as rank,
    n,
    n_unanswered,
    ci_low,
    ci_high,
    is_primary,
    is_paper_metric,
    query_limit,
    thinking,
    max_output_tokens,
    no_answer_share,
    is_health_flagged
from combined
