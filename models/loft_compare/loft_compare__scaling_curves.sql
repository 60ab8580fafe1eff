{#
  scaling_curves: LOFT Figure 5 per dataset. One row per run (source, system, method, variant),
  dataset, split and size: n, mean and 95% interval of the primary metric (as in metrics), and
  the change from the run's next smaller built size over the query turns both sizes scored,
  with a seeded paired bootstrap interval (the per-query differences resampled together), or no
  interval and difference_note when every paired difference is the same. Runs with no answered
  row at a size are left out at that size. Incremental by cross-size run, as
  scaling_scores (its fingerprint also takes the seed).
#}
{%- set seed = var('seed', 20240612) -%}
{%- set fingerprints = compare_run_fingerprints(compare_built_sizes('int_run_fingerprints', '_internal'), local_md5(model.raw_code) ~ seed) -%}
{{ config(
    materialized='incremental',
    incremental_strategy='append',
    on_schema_change='append_new_columns',
    post_hook="{{ incremental_drop_stale_runs(compare_run_fingerprints(compare_built_sizes('int_run_fingerprints', '_internal'), local_md5(model.raw_code) ~ var('seed', 20240612)), 'compare_fingerprint') }}"
) }}
{%- set run = ['source', 'system', 'method', 'variant', 'task', 'dataset', 'split', 'metric_name'] -%}
with

runs as ({{ incremental_runs_to_compute(fingerprints, 'compare_fingerprint') }}),

answered as (
    select *
    from {{ ref('loft_compare__scaling_scores') }}
    semi join runs using (source, system, method, task, dataset, variant, split)
    qualify bool_or(is_answered) over (partition by {{ run | join(', ') }}, size)
),

means as (
    {{ scoring_means('answered', run + ['size', 'size_order'],
                     [scoring_order_free_standard_error('value') ~ ' as standard_error'], seed) }}
),

previous as (
    select
        {{ run | join(', ') }},
        size,
        lag(size) over (partition by {{ run | join(', ') }} order by size_order) as previous_size
    from means
),

differences as (
    select
        {% for key in run %}previous.{{ key }}, {% endfor %}
        previous.size,
        count(*) as n_common,
        {{ scoring_order_free_mean('larger.value - smaller.value') }} as difference,
        loft_bootstrap_interval(list(larger.value - smaller.value order by larger.qid, larger.turn), {{ seed }}) as interval,
        min(larger.value - smaller.value) < max(larger.value - smaller.value) as has_spread,
        {{ scoring_order_free_standard_error('larger.value - smaller.value') }} as standard_error
    from previous
    inner join answered as larger
        on {% for key in run %}larger.{{ key }} = previous.{{ key }} and {% endfor %}larger.size = previous.size
    inner join answered as smaller
        on {% for key in run %}smaller.{{ key }} = previous.{{ key }} and {% endfor %}smaller.size = previous.previous_size
        and smaller.qid = larger.qid and smaller.turn = larger.turn
    group by all
),

final as (
    select
        {% for key in run %}means.{{ key }}, {% endfor %}
        means.size,
        means.size_order,
        means.n,
        means.mean::double as mean,
        means.ci_low,
        means.ci_high,
        means.ci_method,
        means.standard_error::double as standard_error,
        previous.previous_size,
        differences.n_common as n_common_with_previous,
        differences.difference::double as difference_from_previous,
        case when differences.has_spread then differences.interval.low end as difference_ci_low,
        case when differences.has_spread then differences.interval.high end as difference_ci_high,
        differences.standard_error::double as difference_standard_error,
        {{ scoring_no_information_note('differences.has_spread', 'differences.n_common', 'differences.difference') }} as difference_note,
        runs.run_fingerprint
    from means
    inner join previous
        on {% for key in run %}previous.{{ key }} = means.{{ key }} and {% endfor %}previous.size = means.size
    left join differences
        on {% for key in run %}differences.{{ key }} = means.{{ key }} and {% endfor %}differences.size = means.size
    inner join runs
        on runs.source = means.source and runs.system = means.system and runs.method = means.method
        and runs.task = means.task and runs.dataset = means.dataset and runs.variant = means.variant
        and runs.split = means.split
)

select * from final
