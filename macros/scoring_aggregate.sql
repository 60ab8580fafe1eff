{#
  Aggregates over the scores table and the leaderboard beside the paper.
#}

{#
  metrics: one row per (source, system, dataset, variant, split, metric, rule, grain): the mean
  over turn rows (conversation rows for grain 'conversation'), n, how many were unanswered
  (status not 'ok', scored 0) or answered but empty under the rule, and a 95% interval:
  Wilson when every value is 0 or 1, else a seeded percentile bootstrap of the mean.
#}
{% macro scoring_metrics(scores=none, seed=none) %}
{%- set scores = scores or loft_ref('scores') -%}
{%- set seed = seed if seed is not none else var('seed', 20240612) -%}
with

grouped as (
    select
        size,
        source,
        system,
        task,
        dataset,
        variant,
        split,
        metric,
        rule,
        metric_name,
        grain,
        bool_or(is_primary) as is_primary,
        count(*) as n,
        count(*) filter (where not is_answered) as n_unanswered,
        count(*) filter (where is_empty_answer) as n_empty_answer,
        avg(value) as mean,
        bool_and(value in (0, 1)) as is_binary
    from {{ scores }}
    group by all
),

{# The bootstrap needs the values themselves, in a fixed order: only for non-binary groups. #}
continuous as (
    select
        scores.source,
        scores.system,
        scores.task,
        scores.dataset,
        scores.variant,
        scores.split,
        scores.metric_name,
        scores.grain,
        list(scores.value order by scores.qid, scores.turn) as values
    from {{ scores }} as scores
    semi join (select * from grouped where not is_binary) as g
        using (source, system, task, dataset, variant, split, metric_name, grain)
    group by all
),

z as (select 1.959963984540054 as z),

intervals as (
    select
        grouped.*,
        case
            when is_binary then {
                'low': greatest(0.0, (mean + z * z / (2 * n) - z * sqrt(mean * (1 - mean) / n + z * z / (4 * n * n)))
                                     / (1 + z * z / n)),
                'high': least(1.0, (mean + z * z / (2 * n) + z * sqrt(mean * (1 - mean) / n + z * z / (4 * n * n)))
                                   / (1 + z * z / n)),
                'method': 'wilson'
            }
            else loft_bootstrap_interval(continuous.values, {{ seed }})
        end as interval
    from grouped
    left join continuous using (source, system, task, dataset, variant, split, metric_name, grain)
    cross join z
)

select
    size,
    source,
    system,
    task,
    dataset,
    variant,
    split,
    metric,
    rule,
    metric_name,
    grain,
    is_primary,
    n,
    n_unanswered,
    n_empty_answer,
    mean,
    interval.low as ci_low,
    interval.high as ci_high,
    interval.method as ci_method
from intervals
{% endmacro %}


{#
  The leaderboard: paper Table 2 (LOFT 128k test; Gemini 1.5 Pro, GPT-4o, Claude 3 Opus and
  the specialized models) beside this warehouse's default-variant results, per dataset and
  metric. Warehouse rows are the loft-rule, per-turn means of each dataset's primary metric and
  of the metric the paper reports for it (they differ for MS MARCO here: recall@1 in the paper,
  MRecall@5 as built from BEIR qrels). rank orders all rows of one (dataset, metric, size,
  split), paper rows included. Runs with no answered row (e.g. API systems skipped for lack of
  credentials) are left out here; metrics keeps them. source is 'paper', or where warehouse
  rows came from: 'inference' (runs of the systems) or 'import' (prediction files).
#}
{% macro scoring_leaderboard(metrics=none, paper=none, datasets=none) %}
{%- set metrics = metrics or loft_ref('metrics') -%}
{%- set paper = paper or source('reference', 'paper_table2') -%}
{%- set datasets = datasets or loft_ref('stg_datasets') -%}
with

paper as (
    select
        task::varchar as task,
        dataset::varchar as dataset,
        paper_dataset::varchar as paper_dataset,
        model::varchar as system,
        metric::varchar as metric,
        value::double as value
    from {{ paper }}
),

paper_metric as (
    select distinct task, dataset, paper_dataset, metric from paper
),

warehouse as (
    select
        m.source,
        m.task,
        m.dataset,
        pm.paper_dataset,
        m.metric,
        m.size,
        m.split,
        m.system,
        m.mean as value,
        m.n,
        m.n_unanswered,
        m.ci_low,
        m.ci_high,
        m.is_primary,
        pm.metric is not null as is_paper_metric
    from {{ metrics }} as m
    left join paper_metric as pm using (task, dataset, metric)
    where m.rule = 'loft'
        and m.grain = 'turn'
        and m.variant = 'default'
        and m.n_unanswered < m.n
        and (m.is_primary or pm.metric is not null)
),

from_paper as (
    select
        'paper' as source,
        paper.task,
        paper.dataset,
        paper.paper_dataset,
        paper.metric,
        '128k' as size,
        'test' as split,
        paper.system,
        paper.value,
        null::bigint as n,
        null::bigint as n_unanswered,
        null::double as ci_low,
        null::double as ci_high,
        coalesce(paper.metric = {{ scoring_primary_metric('datasets.task', 'datasets.max_gold') }}, false)
            as is_primary,
        true as is_paper_metric
    from paper
    left join {{ datasets }} as datasets using (task, dataset)
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
    system,
    value,
    rank() over (partition by task, dataset, metric, size, split order by value desc) as rank,
    n,
    n_unanswered,
    ci_low,
    ci_high,
    is_primary,
    is_paper_metric
from combined
{% endmacro %}
